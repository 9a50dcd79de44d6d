//! A webhook receiver on loopback for the tests: it records every request and answers
//! with the statuses it is given in turn: "thanks" with a 2xx, [`REFUSAL`] with any other (`refusal`).

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;

/// The body of a receiver's answer that is not 2xx: longer than the 2 KiB the store
/// keeps of it.
pub fn refusal() -> String {
    format!("refused: {}", "x".repeat(3_000))
}

/// What a receiver was sent.
#[derive(Clone, Debug)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

/// A webhook receiver on loopback: records every request and answers with the statuses
/// given in turn (then 200).
#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    seen: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub async fn start(answers: Vec<u16>) -> Receiver {
        Receiver::start_slow(answers, Duration::ZERO).await
    }

    /// As [`Receiver::start`], taking `delay` to answer each request.
    pub async fn start_slow(answers: Vec<u16>, delay: Duration) -> Receiver {
        let seen: Arc<Mutex<Vec<Received>>> = Arc::default();
        let answers = Arc::new(Mutex::new(answers));
        let (seen_in, answers_in) = (seen.clone(), answers);
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| {
                let (seen, answers) = (seen_in.clone(), answers_in.clone());
                async move {
                    tokio::time::sleep(delay).await;
                    seen.lock().unwrap().push(Received { headers, body: body.to_vec() });
                    let mut answers = answers.lock().unwrap();
                    let status = if answers.is_empty() { 200 } else { answers.remove(0) };
                    let body = if (200..300).contains(&status) { "thanks".to_owned() } else { refusal() };
                    (StatusCode::from_u16(status).unwrap(), body)
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver { url, seen }
    }

    pub fn received(&self) -> Vec<Received> {
        self.seen.lock().unwrap().clone()
    }

    /// The envelopes received, each checked against `secret` first.
    pub fn events(&self, secret: &str) -> Vec<Value> {
        let key = standardwebhooks::Webhook::new(secret).unwrap();
        self.received()
            .iter()
            .map(|got| {
                key.verify(&got.body, &got.headers).expect("a valid Standard Webhooks signature");
                let envelope: Value = serde_json::from_slice(&got.body).unwrap();
                assert_eq!(got.headers["webhook-id"].to_str().unwrap(), envelope["id"].as_str().unwrap());
                envelope
            })
            .collect()
    }

    /// Waits (up to `within`) until `done` holds of what was received.
    pub async fn wait_for(&self, within: Duration, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let got = self.received();
            if done(&got) {
                return got;
            }
            assert!(tokio::time::Instant::now() < deadline, "not received within {within:?}: {} requests", got.len());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The ids of the envelopes received (one per request, repeats included).
pub fn ids(received: &[Received]) -> Vec<String> {
    received.iter().map(|got| got.headers["webhook-id"].to_str().unwrap().to_owned()).collect()
}

/// The envelopes received, unverified.
pub fn envelopes(received: &[Received]) -> Vec<Value> {
    received.iter().map(|got| serde_json::from_slice(&got.body).unwrap()).collect()
}
