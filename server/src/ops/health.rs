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
    match readiness(&state).await {
        Ok(Readiness { redis_away: true }) => Json(json!({ "status": "ready", "degraded": ["redis"] })).into_response(),
        Ok(Readiness { redis_away: false }) => Json(json!({ "status": "ready" })).into_response(),
        Err(NotReady { dependency, message }) => not_ready(dependency, message),
    }
}

/// Ready to serve, perhaps with Redis away.
pub struct Readiness {
    pub redis_away: bool,
}

/// Why not: the dependency that failed, and what to tell the prober.
pub struct NotReady {
    pub dependency: &'static str,
    pub message: &'static str,
}

/// What `/readyz` answers, and `petstore_ready` says to Prometheus.
pub async fn readiness(state: &AppState) -> Result<Readiness, NotReady> {
    let not_ready = |dependency, message| Err(NotReady { dependency, message });
    if state.stopping.load(std::sync::atomic::Ordering::Relaxed) {
        return not_ready("shutdown", "the server is stopping: it serves for a few seconds more, then exits");
    }
    if state.db.writes_failing() {
        // Which dependency, not why in detail (that is in the log).
        return not_ready(
            "database",
            "the database's storage refuses writes (full, read-only or failing); reads still work",
        );
    }
    match tokio::time::timeout(READY_TIMEOUT, state.db.ping()).await {
        // Redis down is no reason to take a server out of rotation: the counters are
        // kept in PostgreSQL meanwhile (contract.md, "Several servers").
        Ok(Ok(_)) => Ok(Readiness { redis_away: state.access.limiter.redis_up() == Some(false) }),
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
