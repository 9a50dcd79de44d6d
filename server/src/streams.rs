//! Server-sent event streams of the outbox (`app::services::events`): the API's
//! `GET /api/v1/events` for a key, and the storefront's own `/live` for its visitors
//! (the catalog and stock, for the pages' live stock). Each starts after an event (a
//! resumed stream's `Last-Event-ID`, else the latest), names that event first (a frame
//! with only `id:`, so that a client that reconnects before any event resumes from
//! there), sends what its viewer may see as it comes (`id:` the event's id, `data:`
//! its envelope), a comment every 15 s to keep the connection open, and ends when the
//! server shuts down.
//!
//! Each holds a place (`slots`): bounded per key, per client at three widths and in
//! all, and given back to a newcomer from another network when all are taken (the
//! stream then ends; the client reconnects). A key's stream also ends when its key is
//! revoked or its browser session ends, as every other request of theirs is refused:
//! the credentials it was opened with are checked again before each batch of events
//! it sends and every [`RECHECK`] while it is quiet.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use app::db::Db;

use app::services::access::{Access, Credentials};
use app::services::events::{self, Feed, Start, StoredEvent, Viewer};
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;

use crate::slots::{Budget, Slot};

/// How often a comment keeps an idle stream open (proxies close silent connections).
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Events read from the feed at a time.
const BATCH: usize = 100;
/// How often a quiet key's stream checks that its key or session still works: with the
/// authenticator's half-second belief in a key, a revocation by another process ends it
/// within a second.
pub const RECHECK: Duration = Duration::from_millis(250);

/// What a key's stream was opened with (its own copy: the request is gone).
pub enum Opener {
    Key(String),
    Session(String),
}

impl Opener {
    fn credentials(&self) -> Credentials<'_> {
        match self {
            Opener::Key(key) => Credentials::Key(key),
            Opener::Session(token) => Credentials::Session(token),
        }
    }
}

/// A key's stream's check that its opener still works, made before each batch of
/// events it sends and at least every [`RECHECK`] (also while events it may not see
/// keep waking it).
pub struct Recheck {
    access: Access,
    opener: Opener,
    /// When the next check is due.
    due: tokio::time::Instant,
}

impl Recheck {
    pub fn new(access: Access, opener: Opener) -> Recheck {
        Recheck { access, opener, due: tokio::time::Instant::now() + RECHECK }
    }

    fn is_due(&self) -> bool {
        self.due <= tokio::time::Instant::now()
    }

    /// Whether the stream may go on: not when its key was revoked or its session ended.
    /// A check that cannot be made now (the store is unreachable) lets it go on; no
    /// event can be read then either.
    async fn still_valid(&mut self) -> bool {
        self.due = tokio::time::Instant::now() + RECHECK;
        self.access.still_valid(self.opener.credentials()).await.unwrap_or(true)
    }
}

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
    /// Its place, given back when the stream ends (and taken back for a newcomer).
    slot: Slot,
    /// For a key's stream: its key or session, checked again while it is open.
    recheck: Option<Recheck>,
}

/// The answer that streams `viewer`'s events from `start`, in `slot`.
pub fn respond(
    db: Db,
    feed: Arc<Feed>,
    viewer: Viewer,
    start: Start,
    slot: Slot,
    recheck: Option<Recheck>,
) -> Response {
    let cursor = Cursor {
        woken: feed.watch(),
        closing: feed.closing(),
        db,
        feed,
        viewer,
        after: start.after,
        opening: Some(start.id),
        ready: VecDeque::new(),
        slot,
        recheck,
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
            if let Some(recheck) = &mut cursor.recheck
                && recheck.is_due()
                && !recheck.still_valid().await
            {
                return None;
            }
            match cursor.feed.after(&cursor.db, cursor.after, BATCH).await {
                Ok(batch) if !batch.is_empty() => {
                    cursor.after = batch.last().map_or(cursor.after, |event| event.seq);
                    let viewer = cursor.viewer;
                    cursor.ready.extend(batch.into_iter().filter(|event| viewer.sees(event)));
                    // Nothing more for a key that no longer works, however recent.
                    if !cursor.ready.is_empty()
                        && let Some(recheck) = &mut cursor.recheck
                        && !recheck.still_valid().await
                    {
                        return None;
                    }
                    continue;
                }
                Ok(_) => {}
                // The store is unreachable for now: try again when woken.
                Err(err) => tracing::debug!(error = %err, "a stream could not read its events"),
            }
            let recheck_due = cursor.recheck.as_ref().map(|recheck| recheck.due);
            let recheck_due = async move {
                match recheck_due {
                    Some(due) => tokio::time::sleep_until(due).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                changed = cursor.woken.changed() => if changed.is_err() { return None },
                _ = cursor.closing.changed() => {}
                () = cursor.slot.taken_back() => return None,
                // Checked at the top of the loop.
                () = recheck_due => {}
            }
        }
    })
}

/// The `Last-Event-ID` a resuming client sends.
pub fn last_event_id(headers: &HeaderMap) -> Option<&str> {
    headers.get("last-event-id").and_then(|value| value.to_str().ok())
}

/// Places for the storefront's streams (`/live`): a family's or an office's tabs fit
/// in an address's (a page holds one), a /16 or /48 holds an eighth of all, and
/// when all are taken the network holding most gives way (`slots`).
pub const LIVE: Budget = Budget { in_all: 2_000, per_address: 16, per_block: 64, per_network: 256, per_key: None };

/// Places for the API's streams (`GET /api/v1/events`): five a key (contract.md), and
/// the same bounds per client and in all as the storefront's, apart from them (free
/// sign-ups cannot give one client more).
pub const API: Budget = Budget { per_key: Some(5), ..LIVE };

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
    let Ok(slot) = state.live_streams.take(client.ip(), None) else {
        let busy = (axum::http::StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, "5")], "too many live streams");
        return busy.into_response();
    };
    // A new stream: only what happens from now on, since the page around it was just
    // drawn. A browser reconnecting after a drop sends the last id it had (the opening
    // one if no event came), and gets what happened in between, from what the feed holds.
    match state.feed.resume_recent(&state.db, last_event_id(request.headers())).await {
        Ok(start) => respond(state.db.clone(), state.feed.clone(), Viewer::Visitor, start, slot, None),
        Err(err) => err.into_response(),
    }
}
