//! Drives the real router in-process (no sockets) over a temporary SQLite file.

#![allow(dead_code)]

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use leptos::prelude::LeptosOptions;
use serde_json::{Value, json};
use server::{AppState, Config};
use tower::ServiceExt;

pub struct TestApp {
    pub router: Router,
    pub pool: app::db::Pool,
    _dir: tempfile::TempDir,
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the response is the contract's Error object with this status and code.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) -> &str {
        assert_eq!(self.status.as_u16(), status, "body: {}", self.text);
        assert_eq!(self.header("content-type"), Some("application/json"), "body: {}", self.text);
        assert_eq!(self.body["code"], code, "body: {}", self.text);
        assert_eq!(self.body["status"], status, "body: {}", self.text);
        assert_eq!(self.body.as_object().map(|o| o.len()), Some(3), "only code, message, status: {}", self.text);
        self.body["message"].as_str().expect("a message")
    }
}

impl TestApp {
    pub async fn new() -> TestApp {
        TestApp::with_config(Config::default()).await
    }

    pub async fn with_config(config: Config) -> TestApp {
        let dir = tempfile::tempdir().expect("a temp dir");
        let url = format!("sqlite://{}", dir.path().join("test.db").display());
        let pool = app::db::connect(&url).await.expect("the database opens");
        let state = AppState { pool: pool.clone(), config: Arc::new(Config { database_url: url, ..config }) };
        let options = LeptosOptions::builder().output_name("petstore").build();
        TestApp { router: server::app(state, options), pool, _dir: dir }
    }

    pub async fn send(&self, request: Request<Body>) -> Reply {
        let response = self.router.clone().oneshot(request).await.expect("the router answers");
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.expect("a body").to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Reply { status, headers, body, text }
    }

    pub async fn request(&self, method: Method, path: &str, body: Option<Value>) -> Reply {
        let mut builder = Request::builder().method(method).uri(path);
        let body = match body {
            Some(value) => {
                builder = builder.header(header::CONTENT_TYPE, "application/json");
                Body::from(value.to_string())
            }
            None => Body::empty(),
        };
        self.send(builder.body(body).unwrap()).await
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.request(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.request(Method::POST, path, Some(body)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Reply {
        self.request(Method::PUT, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        self.request(Method::DELETE, path, None).await
    }

    /// Sends a raw body with the given content type.
    pub async fn raw(&self, method: Method, path: &str, content_type: Option<&str>, body: impl Into<Body>) -> Reply {
        let mut builder = Request::builder().method(method).uri(path);
        if let Some(content_type) = content_type {
            builder = builder.header(header::CONTENT_TYPE, content_type);
        }
        self.send(builder.body(body.into()).unwrap()).await
    }

    pub async fn category(&self, name: &str) -> i64 {
        let reply = self.post("/api/v1/categories", json!({ "name": name })).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
        reply.body["id"].as_i64().unwrap()
    }

    pub async fn pet(&self, name: &str, category_id: i64, status: Option<&str>) -> i64 {
        let mut body = json!({ "name": name, "categoryId": category_id });
        if let Some(status) = status {
            body["status"] = json!(status);
        }
        let reply = self.post("/api/v1/pets", body).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
        reply.body["id"].as_i64().unwrap()
    }

    pub async fn stock(&self, pet_id: i64) -> (i64, String) {
        let reply = self.get(&format!("/api/v1/store/inventory/{pet_id}")).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        (reply.body["quantity"].as_i64().unwrap(), reply.body["status"].as_str().unwrap().to_owned())
    }

    pub async fn count(&self, table: &str) -> i64 {
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
            .fetch_one(&self.pool)
            .await
            .unwrap()
    }
}

/// The target of a `Link: <…>; rel="next"` header.
pub fn next_link(reply: &Reply) -> Option<String> {
    let link = reply.header("link")?;
    let (target, rel) = link.split_once(';')?;
    assert_eq!(rel.trim(), "rel=\"next\"");
    Some(target.trim().trim_start_matches('<').trim_end_matches('>').to_owned())
}
