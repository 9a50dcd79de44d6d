//! `/events`: the outbox as a server-sent event stream, for any key.

use app::error::{AppError, AppResult, ErrorCode};
use app::services::auth::Presented;
use app::services::events::{self, Viewer};
use axum::extract::State;
use axum::response::Response;

use super::AuthErrors;
use super::auth::Customer;
use crate::AppState;
use crate::slots::Refusal;
use crate::streams::{Opener, Recheck, respond};

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
/// stream counts as one request; a key may have 5 open at once on each server, and an
/// address 16 (429 `rate_limited` beyond). The stream ends when its key is revoked (or
/// the browser session it was opened with ends), within a second.
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
    request: axum::extract::Request,
) -> AppResult<Response> {
    let (headers, extensions) = (request.headers(), request.extensions());
    let client = state.access.client(extensions, headers);
    let slot = state.api_streams.take(client.ip(), Some(caller.key_id)).map_err(|refusal| {
        let per_key = crate::streams::API.per_key.unwrap_or_default();
        let why = match refusal {
            Refusal::Key => format!("this key has {per_key} event streams open already; close one first"),
            Refusal::Client => "this address has as many event streams open as it may; close one first".to_owned(),
            Refusal::InAll => "the server has as many event streams open as it can; retry shortly".to_owned(),
        };
        let mut refused = AppError::new(ErrorCode::RateLimited, why);
        refused.retry_after = Some(1);
        refused
    })?;
    // What it was opened with, checked again while it is open (a revoked key's or an
    // ended session's stream ends).
    let opener = match super::auth::presented_key(headers) {
        Presented::Key(key) => Opener::Key(key.to_owned()),
        Presented::Nothing => match super::auth::browser_session(&state, headers) {
            Some(token) => Opener::Session(token.to_owned()),
            None => return Err(app::services::auth::missing_key()),
        },
    };
    let recheck = Recheck::new(state.access.clone(), opener);
    let start = events::resume_after(&state.db, crate::streams::last_event_id(headers)).await?;
    Ok(respond(state.db.clone(), state.feed.clone(), Viewer::Key(caller), start, slot, Some(recheck)))
}
