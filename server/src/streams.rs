//! Server-sent event streams of the outbox (`app::services::events`): the API's
//! `GET /api/v1/events` for a key, and the storefront's own `/live` for its visitors
//! (the catalog and stock, for the pages' live stock). Each starts after an event (a
//! resumed stream's `Last-Event-ID`, else the latest), names that event first (a frame
//! with only `id:`, so that a client that reconnects before any event resumes from
//! there), sends what its viewer may see as it comes (`id:` the event's id, `data:`
//! its envelope), a comment every 15 s to keep the connection open, and ends when the
//! server shuts down.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use app::db::Db;

use app::services::events::{self, Feed, Start, StoredEvent, StreamTicket, Viewer};
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;

/// How often a comment keeps an idle stream open (proxies close silent connections).
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Events read from the feed at a time.
const BATCH: usize = 100;

/// A stream's state between the events it sends.
struct Cursor {
    db: Db,
    feed: Arc<Feed>,
    viewer: Viewer,
    after: i64,
    /// The id of the event it starts after, sent first.
    opening: Option<String>,
    ready: VecDeque<Arc<StoredEvent>>,
    woken: tokio::sync::watch::Receiver<i64>,
    closing: tokio::sync::watch::Receiver<bool>,
    /// Its places among its holders' open streams, given back when the stream ends.
    _tickets: Vec<StreamTicket>,
}

/// The answer that streams `viewer`'s events from `start`.
pub fn respond(db: Db, feed: Arc<Feed>, viewer: Viewer, start: Start, tickets: Vec<StreamTicket>) -> Response {
    let cursor = Cursor {
        woken: feed.watch(),
        closing: feed.closing(),
        db,
        feed,
        viewer,
        after: start.after,
        opening: Some(start.id),
        ready: VecDeque::new(),
        _tickets: tickets,
    };
    let mut response =
        Sse::new(stream(cursor)).keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive")).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Proxies that buffer answers (nginx) pass this one on as it comes.
    headers.insert(HeaderName::from_static("x-accel-buffering"), HeaderValue::from_static("no"));
    response
}

fn stream(cursor: Cursor) -> impl Stream<Item = Result<Event, Infallible>> {
    futures_util::stream::unfold(cursor, |mut cursor| async move {
        if let Some(id) = cursor.opening.take() {
            return Some((Ok(Event::default().id(id)), cursor));
        }
        loop {
            if let Some(event) = cursor.ready.pop_front() {
                let sent = Event::default().id(event.id.clone()).data(events::envelope_json(&event));
                return Some((Ok(sent), cursor));
            }
            if *cursor.closing.borrow() {
                return None;
            }
            match cursor.feed.after(&cursor.db, cursor.after, BATCH).await {
                Ok(batch) if !batch.is_empty() => {
                    cursor.after = batch.last().map_or(cursor.after, |event| event.seq);
                    let viewer = cursor.viewer;
                    cursor.ready.extend(batch.into_iter().filter(|event| viewer.sees(event)));
                    continue;
                }
                Ok(_) => {}
                // The store is unreachable for now: try again when woken.
                Err(err) => tracing::debug!(error = %err, "a stream could not read its events"),
            }
            tokio::select! {
                changed = cursor.woken.changed() => if changed.is_err() { return None },
                _ = cursor.closing.changed() => {}
            }
        }
    })
}

/// The `Last-Event-ID` a resuming client sends.
pub fn last_event_id(headers: &HeaderMap) -> Option<&str> {
    headers.get("last-event-id").and_then(|value| value.to_str().ok())
}

/// Streams of the storefront's visitors each address may have open, and in all.
pub const LIVE_PER_ADDRESS: usize = 4;
pub const LIVE_IN_ALL: usize = 2_000;

/// The storefront's own stream, `/live`: the catalog's and the stock's events for the
/// pages' live stock, to visitors with or without a key. Outside the API, so it counts
/// against no key's limits; bounded per address and in all instead.
pub fn routes<S>(state: crate::AppState) -> axum::Router<S> {
    axum::Router::new().route("/live", axum::routing::get(live)).with_state(state)
}

async fn live(
    axum::extract::State(state): axum::extract::State<crate::AppState>,
    request: axum::extract::Request,
) -> Response {
    let client = state.access.client(request.extensions(), request.headers());
    let tickets = state
        .feed
        .open("live".to_owned(), LIVE_IN_ALL)
        .and_then(|all| state.feed.open(format!("live:{client}"), LIVE_PER_ADDRESS).map(|own| vec![all, own]));
    let Some(tickets) = tickets else {
        let busy = (axum::http::StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, "5")], "too many live streams");
        return busy.into_response();
    };
    // A new stream: only what happens from now on, since the page around it was just
    // drawn. A browser reconnecting after a drop sends the last id it had (the opening
    // one if no event came), and gets what happened in between, from what the feed holds.
    match state.feed.resume_recent(&state.db, last_event_id(request.headers())).await {
        Ok(start) => respond(state.db.clone(), state.feed.clone(), Viewer::Visitor, start, tickets),
        Err(err) => err.into_response(),
    }
}
