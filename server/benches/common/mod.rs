//! A small HTTP load generator for the benchmarks: keep-alive connections on loopback,
//! each sending requests back to back for a fixed time.

#![allow(dead_code)]

pub mod external;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// Serves `router` on a free loopback port (with client addresses, like `main`).
pub async fn spawn(router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>()).await.unwrap();
    });
    addr
}

#[derive(Debug, Default, Clone, Copy)]
pub struct Outcome {
    pub seconds: f64,
    /// 2xx answers.
    pub ok: u64,
    /// 409 answers (expected refusals, such as insufficient stock).
    pub conflicts: u64,
    /// Anything else: errors.
    pub other: u64,
    /// 5xx answers (counted in `other` too).
    pub server_errors: u64,
    /// Latency percentiles of every answer, in microseconds.
    pub p50_us: u32,
    pub p99_us: u32,
}

impl Outcome {
    pub fn per_second(&self) -> f64 {
        self.ok as f64 / self.seconds
    }
}

/// What one or more runs of [`run`] saw: counts and every answer's latency, so that
/// runs of the same requests can be pooled before their percentiles are taken.
#[derive(Debug, Default)]
pub struct Sample {
    seconds: f64,
    /// 2xx, 409, others, 5xx (as in [`Outcome`]).
    counts: [u64; 4],
    /// Microseconds, in no order.
    latencies: Vec<u32>,
}

impl Sample {
    pub fn add(&mut self, other: Sample) {
        self.seconds += other.seconds;
        for (count, more) in self.counts.iter_mut().zip(other.counts) {
            *count += more;
        }
        self.latencies.extend(other.latencies);
    }

    pub fn outcome(mut self) -> Outcome {
        self.latencies.sort_unstable();
        let latencies = &self.latencies;
        let percentile =
            |p: usize| latencies.get((latencies.len() * p / 100).min(latencies.len().saturating_sub(1))).copied();
        Outcome {
            seconds: self.seconds,
            ok: self.counts[0],
            conflicts: self.counts[1],
            other: self.counts[2],
            server_errors: self.counts[3],
            p50_us: percentile(50).unwrap_or(0),
            p99_us: percentile(99).unwrap_or(0),
        }
    }
}

/// Sends requests from `connections` workers for `duration`; `request(worker, n)` makes
/// the n-th request of a worker.
pub async fn load<F>(connections: usize, duration: Duration, request: F) -> Outcome
where
    F: Fn(usize, u64) -> hyper::Request<Full<Bytes>> + Send + Sync + 'static,
{
    run(connections, duration, Arc::new(request)).await.outcome()
}

/// [`load`], keeping every latency.
pub async fn run<F>(connections: usize, duration: Duration, request: Arc<F>) -> Sample
where
    F: ?Sized + Fn(usize, u64) -> hyper::Request<Full<Bytes>> + Send + Sync + 'static,
{
    let client: Client<_, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).pool_max_idle_per_host(connections).build_http();
    let counts = Arc::new([AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)]);
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let workers: Vec<_> = (0..connections)
        .map(|worker| {
            let (client, request, counts, stop) = (client.clone(), request.clone(), counts.clone(), stop.clone());
            tokio::spawn(async move {
                let mut n = 0;
                let mut latencies = Vec::with_capacity(1 << 16);
                while !stop.load(Ordering::Relaxed) {
                    let sent = Instant::now();
                    let response = client.request(request(worker, n)).await.expect("the server answers");
                    let status = response.status().as_u16();
                    let slot = match status {
                        200..=299 => 0,
                        409 => 1,
                        _ => 2,
                    };
                    response.into_body().collect().await.unwrap();
                    latencies.push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
                    counts[slot].fetch_add(1, Ordering::Relaxed);
                    if status >= 500 {
                        counts[3].fetch_add(1, Ordering::Relaxed);
                    }
                    n += 1;
                }
                latencies
            })
        })
        .collect();
    tokio::time::sleep(duration).await;
    stop.store(true, Ordering::Relaxed);
    let mut latencies = Vec::new();
    for worker in workers {
        latencies.extend(worker.await.unwrap());
    }
    Sample {
        seconds: start.elapsed().as_secs_f64(),
        counts: std::array::from_fn(|i| counts[i].load(Ordering::Relaxed)),
        latencies,
    }
}
