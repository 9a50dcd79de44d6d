//! Drives the real router in-process (no sockets) over a throwaway store: a SQLite
//! file, or a PostgreSQL database when `PETSTORE_TEST_POSTGRES` is set
//! (`app::db::testing`).

#![allow(dead_code)]

pub mod live;
pub mod postgres;
pub mod receiver;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use app::model::{Limits, NewApiKey, Plan, Role};
use app::services::clock::Clock;
use app::services::keys;
use axum::extract::ConnectInfo;

use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use leptos::prelude::LeptosOptions;
use serde_json::{Value, json};
use server::{AppState, Config};
use tower::ServiceExt;

pub struct TestApp {
    pub router: server::ops::App,
    pub db: app::db::Db,
    pub state: AppState,
    /// An admin key with limits high enough never to get in a test's way.
    pub admin: String,
    /// The clock the app sees: starts at the beginning of a UTC minute.
    pub now: Arc<AtomicI64>,
    pub dir: tempfile::TempDir,
}

/// 2026-11-23T10:00:00Z, the start of a minute.
pub const T0: i64 = 1_795_428_000;

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

    /// A server function's 422: the Error object and the field it is about, which the
    /// storefront's forms mark (REST answers carry no `field`: `assert_error`).
    pub fn assert_field_error(&self, field: &str) -> &str {
        assert_eq!(self.status.as_u16(), 422, "body: {}", self.text);
        assert_eq!(self.body["code"], "validation_failed", "body: {}", self.text);
        assert_eq!(self.body["field"], field, "body: {}", self.text);
        assert_eq!(self.body.as_object().map(|o| o.len()), Some(4), "code, message, status, field: {}", self.text);
        self.body["message"].as_str().expect("a message")
    }
}

impl TestApp {
    pub async fn new() -> TestApp {
        TestApp::with_config(Config::default()).await
    }

    pub async fn with_config(config: Config) -> TestApp {
        let dir = tempfile::tempdir().expect("a temp dir");
        TestApp::open(dir, config, Arc::new(AtomicI64::new(T0))).await
    }

    /// The app over the database in `dir` (a restart when that database has data).
    pub async fn open(dir: tempfile::TempDir, config: Config, now: Arc<AtomicI64>) -> TestApp {
        let url = app::db::testing::scratch_url(dir.path()).await;
        let db = app::db::Db::connect(&url).await.expect("the database opens");
        let clock = Clock::manual(now.clone());
        let state = AppState::new(db.clone(), config.over(url), clock).await.unwrap();
        let options = LeptosOptions::builder().output_name("petstore").build();
        let admin = match app::on_pool!(db, |pool| sqlx::query_scalar::<_, String>(
            "SELECT name FROM api_keys WHERE name = 'test admin'"
        )
        .fetch_optional(pool)
        .await)
        .unwrap()
        {
            Some(_) => std::fs::read_to_string(dir.path().join("admin.key")).unwrap(),
            None => {
                let limits = Some(Limits { per_minute: 1_000_000, per_day: 1_000_000 });
                let new = NewApiKey { name: "test admin".into(), role: Role::Admin, plan: Plan::Enterprise, limits };
                let key = keys::create(&db, T0, new).await.unwrap().key;
                std::fs::write(dir.path().join("admin.key"), &key).unwrap();
                key
            }
        };
        TestApp { router: server::app(state.clone(), options), db, state, admin, now, dir }
    }

    pub fn set_time(&self, unix: i64) {
        self.now.store(unix, Ordering::SeqCst);
    }

    /// A new key of this role and plan (through the service, as the CLI does).
    pub async fn key(&self, role: Role, plan: Plan, limits: Option<Limits>) -> (i64, String) {
        let new = NewApiKey { name: format!("{} key", role.as_str()), role, plan, limits };
        let created = keys::create(&self.db, T0, new).await.unwrap();
        (created.key_info.id, created.key)
    }

    /// A browser session for a new key of this role: its id and the `Cookie` header value.
    pub async fn session(&self, role: Role) -> (i64, String) {
        let (id, _) = self.key(role, Plan::Pro, None).await;
        let token = app::services::sessions::start(&self.db, T0, id, app::services::sessions::Opened::SignUp, None)
            .await
            .unwrap();
        (id, format!("{}={token}", self.state.session_cookie.name()))
    }

    /// Calls a server function as the app's WASM does (form-encoded, JSON back), with
    /// this session cookie (or none).
    pub async fn call_fn(&self, cookie: Option<&str>, endpoint: &str, form: &str) -> Reply {
        let mut request = Request::post(format!("/_app/{endpoint}"))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json");
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        self.send(request.body(Body::from(form.to_owned())).unwrap()).await
    }

    pub async fn send(&self, mut request: Request<Body>) -> Reply {
        if request.extensions().get::<ConnectInfo<SocketAddr>>().is_none() {
            request.extensions_mut().insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40000))));
        }
        let response = self.router.clone().oneshot(request).await.expect("the router answers");
        let status = response.status();
        let headers = response.headers().clone();
        // An event stream does not end: its body is for the tests that read it.
        if headers.get(header::CONTENT_TYPE).is_some_and(|value| value == "text/event-stream") {
            return Reply { status, headers, body: Value::Null, text: String::new() };
        }
        let bytes = response.into_body().collect().await.expect("a body").to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Reply { status, headers, body, text }
    }

    pub async fn request(&self, method: Method, path: &str, body: Option<Value>) -> Reply {
        self.request_as(Some(&self.admin.clone()), method, path, body).await
    }

    /// A request with this key (or none), from 127.0.0.1.
    pub async fn request_as(&self, key: Option<&str>, method: Method, path: &str, body: Option<Value>) -> Reply {
        let mut builder = Request::builder().method(method).uri(path);
        if let Some(key) = key {
            builder = builder.header("x-api-key", key);
        }
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
        let mut builder = Request::builder().method(method).uri(path).header("x-api-key", &self.admin);
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

    /// Renames a pet with SQL on the pool, behind the services (as another server over
    /// the same database would write): this process learns of it from the catalog
    /// watcher, not from a write of its own.
    pub async fn rename_pet_behind_the_services(&self, pet_id: i64, name: &str) {
        app::on_pool!(self.db, |pool| sqlx::query("UPDATE pets SET name = $1, name_key = $2 WHERE id = $3")
            .bind(name)
            .bind(name.to_lowercase())
            .bind(pet_id)
            .execute(pool)
            .await
            .map(|_| ()))
        .unwrap();
    }

    pub async fn count(&self, table: &str) -> i64 {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        app::on_pool!(self.db, |pool| sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_one(pool).await).unwrap()
    }
}

/// Asks `check` every 50 ms until it gives a value, for what the server does a moment
/// after it answers; fails after 5 s with what the last try saw (`check`'s `Err`).
pub async fn eventually<T>(check: impl AsyncFnMut() -> Result<T, String>) -> T {
    within(std::time::Duration::from_secs(5), check).await
}

/// As [`eventually`], for what takes several of the server's own intervals (room
/// left for a loaded machine): fails after `limit`.
pub async fn within<T>(limit: std::time::Duration, mut check: impl AsyncFnMut() -> Result<T, String>) -> T {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match check().await {
            Ok(value) => return value,
            Err(seen) => {
                assert!(tokio::time::Instant::now() < deadline, "still not so after {limit:?}; last seen: {seen}")
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The target of a `Link: <…>; rel="next"` header.
pub fn next_link(reply: &Reply) -> Option<String> {
    let link = reply.header("link")?;
    let (target, rel) = link.split_once(';')?;
    assert_eq!(rel.trim(), "rel=\"next\"");
    Some(target.trim().trim_start_matches('<').trim_end_matches('>').to_owned())
}
