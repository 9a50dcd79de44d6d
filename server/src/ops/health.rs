//! `/healthz` (the process answers) and `/readyz` (it can reach its database, and its
//! writes commit), for load balancers and orchestrators. Neither needs a key or counts
//! against a limit.

use std::time::Duration;

use app::error::{AppError, ErrorCode};
use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use crate::AppState;

/// Longest `/readyz` waits for the database before calling it unavailable.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

pub async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

pub async fn readyz(State(state): State<AppState>) -> Result<Json<Value>, AppError> {
    if state.db.writes_failing() {
        // Which dependency, not why in detail (that is in the log).
        let message = "the database's storage refuses writes (full, read-only or failing); reads still work";
        // The store tries a write of its own twice a second: ask again in a second.
        return Err(AppError { retry_after: Some(1), ..AppError::new(ErrorCode::Unavailable, message) });
    }
    match tokio::time::timeout(READY_TIMEOUT, state.db.ping()).await {
        Ok(Ok(_)) => Ok(Json(json!({ "status": "ready" }))),
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "readiness probe failed");
            Err(AppError::new(ErrorCode::Unavailable, "the database is not reachable"))
        }
        Err(_) => Err(AppError::new(ErrorCode::Unavailable, "the database did not answer within 2 s")),
    }
}
