//! `/healthz` (the process answers) and `/readyz` (it can reach its database, and its
//! writes commit), for load balancers and orchestrators. Neither needs a key or counts
//! against a limit.

use std::time::Duration;

use app::error::AppError;
use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::AppState;

/// Longest `/readyz` waits for the database before calling it unavailable.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

pub async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

pub async fn readyz(State(state): State<AppState>) -> Response {
    if state.stopping.load(std::sync::atomic::Ordering::Relaxed) {
        return not_ready("shutdown", "the server is stopping: it serves for a few seconds more, then exits");
    }
    if state.db.writes_failing() {
        // Which dependency, not why in detail (that is in the log).
        let message = "the database's storage refuses writes (full, read-only or failing); reads still work";
        return not_ready("database", message);
    }
    match tokio::time::timeout(READY_TIMEOUT, state.db.ping()).await {
        // Redis down is no reason to take a server out of rotation: the counters are
        // kept in PostgreSQL meanwhile (contract.md, "Several servers").
        Ok(Ok(_)) => match state.access.limiter.redis_up() {
            Some(false) => Json(json!({ "status": "ready", "degraded": ["redis"] })).into_response(),
            _ => Json(json!({ "status": "ready" })).into_response(),
        },
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "readiness probe failed");
            not_ready("database", "the database is not reachable")
        }
        Err(_) => not_ready("database", "the database did not answer within 2 s"),
    }
}

/// 503 `unavailable` as every one is answered (the Error object, its status and
/// `Retry-After`), the body also naming the `dependency` that failed.
fn not_ready(dependency: &'static str, message: &str) -> Response {
    let error = AppError::unavailable(message);
    let body =
        json!({ "code": error.code, "message": error.message, "status": error.status, "dependency": dependency });
    let (parts, _) = error.into_response().into_parts();
    (parts, Json(body)).into_response()
}
