//! `/healthz` (the process answers) and `/readyz` (it can reach its database), for load
//! balancers and orchestrators. Neither needs a key or counts against a limit.

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
    match tokio::time::timeout(READY_TIMEOUT, state.db.ping()).await {
        Ok(Ok(_)) => Ok(Json(json!({ "status": "ready" }))),
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "readiness probe failed");
            Err(AppError::new(ErrorCode::Unavailable, "the database is not reachable"))
        }
        Err(_) => Err(AppError::new(ErrorCode::Unavailable, "the database did not answer within 2 s")),
    }
}
