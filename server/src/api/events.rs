//! `/events`: the outbox as a server-sent event stream, for any key.

use app::error::{AppError, AppResult, ErrorCode};
use app::services::events::{self, Viewer};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;

use super::AuthErrors;
use super::auth::Customer;
use crate::AppState;

/// Open streams a key may have at once (on each server).
pub const STREAMS_PER_KEY: usize = 5;

/// Stream events
///
/// A `text/event-stream` of the store's events as they happen, each as the envelope
/// webhooks receive (`{id, type, createdAt, data}`), with `id:` the event's id. A
/// customer key receives the catalog's and the stock's events and its own orders'; an
/// admin key every event. Send `Last-Event-ID` to resume after that event (within 24
/// hours; otherwise the stream starts with what happens next). The stream opens with a
/// frame of only `id:`, the event it starts after (`evt_000000000000000000000000`
/// before the store's first), so that a client that reconnects before any event came
/// resumes from there. A comment every 15 s keeps the connection open. Opening a
/// stream counts as one request; a key may have 5 open at once on each server (429
/// `rate_limited` beyond).
#[utoipa::path(get, path = "/events", tag = "Store", operation_id = "streamEvents",
    params(("Last-Event-ID" = Option<String>, Header, description = "Resume after this event (its `id:`)")),
    responses(
        (status = 200, description = "The stream (`text/event-stream`), open until the client or the server ends it",
            content_type = "text/event-stream", body = String),
        AuthErrors,
    ))]
pub async fn stream_events(
    Customer(caller): Customer,
    State(state): State<AppState>,
    headers: HeaderMap,
) -> AppResult<Response> {
    let ticket = state.feed.open(format!("key:{}", caller.key_id), STREAMS_PER_KEY).ok_or_else(|| {
        let mut refused = AppError::new(
            ErrorCode::RateLimited,
            format!("this key has {STREAMS_PER_KEY} event streams open already; close one first"),
        );
        refused.retry_after = Some(1);
        refused
    })?;
    let start = events::resume_after(&state.db, crate::streams::last_event_id(&headers)).await?;
    Ok(crate::streams::respond(state.db.clone(), state.feed.clone(), Viewer::Key(caller), start, vec![ticket]))
}
