//! Events (contract.md, "Events"). Each is written to the outbox (`events`) by the very
//! transaction whose change it reports ([`record`]): a change that commits has its
//! events, one that is refused or rolled back has none, and a `kill -9` after the
//! commit loses none. They are read back in the order the changes committed in: by
//! the streams (`GET /api/v1/events`, the storefront's live stock), through this
//! process's [`Feed`], and by the webhooks (`services::webhooks`). Kept 30 days.

use std::collections::VecDeque;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde::Serialize;

use crate::db::outbox::{self, NewEvent};
pub use crate::db::sql::events::StoredEvent;
use crate::db::{Conn, Db, sql};
use crate::error::{AppError, AppResult};
use crate::model::{Caller, EventType, Role};

/// How long events are kept (and a stream can resume after one).
pub const KEPT_FOR_MS: i64 = 30 * 24 * 3_600_000;
/// How far back a stream resumes from its `Last-Event-ID`.
pub const RESUMABLE_FOR_MS: i64 = 24 * 3_600_000;

/// Who sees an event on a stream: everyone (the catalog and stock), the key whose order
/// it is (and admins), or admins only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Audience {
    Everyone,
    Owner(i64),
    Admins,
}

/// Stores an event of the change `conn`'s transaction makes (see `db::outbox`: in a
/// batch of orders, at the batch's end); `data` is the resource as the REST API shows
/// it. Returns its id.
pub async fn record(conn: &mut Conn, kind: EventType, data: &impl Serialize, audience: Audience) -> AppResult<String> {
    let created_at = now_ms();
    let id = event_id(created_at, crate::services::keys::random_bytes::<6>()?);
    let data = serde_json::to_string(data).map_err(|err| AppError::internal("an event's data", err))?;
    let (owner_key_id, admin_only) = match audience {
        Audience::Everyone => (None, false),
        Audience::Owner(key_id) => (Some(key_id), false),
        Audience::Admins => (None, true),
    };
    let event = NewEvent { id: id.clone(), kind: kind.as_str(), created_at, data, owner_key_id, admin_only };
    outbox::add(conn, event).await?;
    Ok(id)
}

/// `evt_`, the time in milliseconds (12 hex digits), then 48 random bits: unique
/// (also between two copies of one store, as after a restore), and in time order, so
/// that the unique index on it grows at one end; random ids land on a page of their
/// own each, and a batch of orders then writes a page per event.
fn event_id(now_ms: i64, random: [u8; 6]) -> String {
    use std::fmt::Write;
    let mut id = String::with_capacity(28);
    let _ = write!(id, "evt_{:012x}", now_ms.clamp(0, 0xffff_ffff_ffff));
    for byte in random {
        let _ = write!(id, "{byte:02x}");
    }
    id
}

/// The wall clock in Unix milliseconds: when a change committed, as events say it.
pub fn now_ms() -> i64 {
    let now = time::OffsetDateTime::now_utc();
    i64::try_from(now.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

/// Unix milliseconds as RFC 3339 in UTC with milliseconds (`2026-11-25T10:00:00.123Z`).
pub fn rfc3339_ms(ms: i64) -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|at| at.format(&format).ok())
        .unwrap_or_default()
}

/// The envelope exactly as it is sent, `{"id","type","createdAt","data"}`, written
/// around the stored data without reading it again (a webhook's signature is over
/// these bytes).
pub fn envelope_json(event: &StoredEvent) -> String {
    // The id, type and time hold no character JSON escapes (`evt_` and hex, a type's
    // name, digits).
    format!(
        r#"{{"id":"{}","type":"{}","createdAt":"{}","data":{}}}"#,
        event.id,
        event.kind,
        rfc3339_ms(event.created_at),
        event.data
    )
}

/// The types of the storefront's own stream (visitors without a key): the catalog and
/// stock.
fn is_public_kind(kind: &str) -> bool {
    kind.starts_with("pet.") || kind.starts_with("inventory.")
}

/// Who a stream is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Viewer {
    /// A key: its own orders' events besides the catalog and stock; an admin's, all.
    Key(Caller),
    /// The storefront's visitors: the catalog and stock only.
    Visitor,
}

impl Viewer {
    pub fn sees(self, event: &StoredEvent) -> bool {
        // A webhook's test goes to that endpoint alone.
        if event.kind == "ping" {
            return false;
        }
        match self {
            Viewer::Key(caller) if caller.role == Role::Admin => true,
            Viewer::Key(caller) => !event.admin_only && event.owner_key_id.is_none_or(|owner| owner == caller.key_id),
            Viewer::Visitor => !event.admin_only && event.owner_key_id.is_none() && is_public_kind(&event.kind),
        }
    }
}

/// How many events the feed keeps in memory for its streams.
const RECENT: usize = 2_048;
/// How often the feed looks for new events.
pub const FEED_INTERVAL: Duration = Duration::from_millis(100);

/// This process's view of the outbox, for its streams: a task reads new events a few
/// times a second (whoever wrote them: this server, another over the same database, the
/// CLI), keeps the latest in memory and wakes the streams, which each take the events
/// after the last one they sent. A stream that fell behind what is kept reads the
/// rest from the database.
pub struct Feed {
    recent: RwLock<Window>,
    latest: tokio::sync::watch::Sender<i64>,
    /// Set when the server shuts down: every stream ends.
    closing: tokio::sync::watch::Sender<bool>,
}

impl Feed {
    /// A feed starting after the store's latest event, and the task that keeps it
    /// (ending when the store is closed).
    pub async fn start(db: &Db) -> AppResult<Arc<Feed>> {
        let latest = sql::events::latest_seq(db).await?;
        let feed = Arc::new(Feed {
            recent: RwLock::new(Window { floor: latest, events: VecDeque::with_capacity(RECENT) }),
            latest: tokio::sync::watch::Sender::new(latest),
            closing: tokio::sync::watch::Sender::new(false),
        });
        tokio::spawn(feed.clone().follow(db.clone()));
        Ok(feed)
    }

    async fn follow(self: Arc<Feed>, db: Db) {
        let mut tick = tokio::time::interval(FEED_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut warned = false;
        loop {
            tick.tick().await;
            let last = *self.latest.borrow();
            match sql::events::after(&db, last, RECENT as i64).await {
                Ok(events) if events.is_empty() => warned = false,
                Ok(events) => {
                    warned = false;
                    let newest = events.last().map_or(last, |event| event.seq);
                    {
                        let mut recent = self.recent.write().unwrap_or_else(std::sync::PoisonError::into_inner);
                        events.into_iter().for_each(|event| recent.push(event));
                    }
                    self.latest.send_replace(newest);
                }
                Err(sqlx::Error::PoolClosed) => return,
                Err(err) => {
                    if !warned {
                        tracing::warn!(error = %err, "reading new events failed; retrying every 100 ms");
                        warned = true;
                    }
                }
            }
        }
    }

    /// Woken whenever newer events are in (its value: the latest `seq`).
    pub fn watch(&self) -> tokio::sync::watch::Receiver<i64> {
        self.latest.subscribe()
    }

    /// Becomes `true` when the server shuts down.
    pub fn closing(&self) -> tokio::sync::watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// Ends every stream (the server is shutting down: a stream would keep it waiting).
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Up to `limit` events after `seq`, from memory when it holds them all, else
    /// from the database.
    pub async fn after(&self, db: &Db, seq: i64, limit: usize) -> AppResult<Vec<Arc<StoredEvent>>> {
        {
            let recent = self.recent.read().unwrap_or_else(std::sync::PoisonError::into_inner);
            if recent.covers(seq) {
                return Ok(recent.events.iter().filter(|event| event.seq > seq).take(limit).cloned().collect());
            }
        }
        let events = sql::events::after(db, seq, limit as i64).await?;
        Ok(events.into_iter().map(Arc::new).collect())
    }

    /// Where a stream that anyone may open (`/live`) starts: as [`resume_after`], but
    /// only from a point the feed's memory still covers (its latest 2,048 events, none
    /// just after a restart); from further back, from now. Such a stream costs no key
    /// anything, so a reconnect must never send the store to its database for a long
    /// replay. A page away that long shows what it had until the next change.
    pub async fn resume_recent(&self, db: &Db, last_event_id: Option<&str>) -> AppResult<Start> {
        let start = resume_after(db, last_event_id).await?;
        let covered = self.recent.read().unwrap_or_else(std::sync::PoisonError::into_inner).covers(start.after);
        if covered { Ok(start) } else { resume_after(db, None).await }
    }
}

/// The events the feed keeps in memory: every one it has seen after `floor`.
struct Window {
    /// The feed's latest event when it started, then the last event let go.
    floor: i64,
    events: VecDeque<Arc<StoredEvent>>,
}

impl Window {
    /// Keeps `event` (the newest), letting the oldest go beyond `RECENT`.
    fn push(&mut self, event: StoredEvent) {
        if self.events.len() == RECENT
            && let Some(gone) = self.events.pop_front()
        {
            self.floor = gone.seq;
        }
        self.events.push_back(Arc::new(event));
    }

    /// Whether every event after `seq` the feed has seen is here. Exact with gaps in
    /// `seq` too (PostgreSQL's identity skips the numbers of rolled-back inserts).
    fn covers(&self, seq: i64) -> bool {
        seq >= self.floor
    }
}

/// Where a stream starts: after the event `after` (its `seq`; 0 before the first),
/// whose id is `id`. A stream sends that id first, with no data, so that a client that
/// reconnects before any event came resumes from there and misses nothing.
#[derive(Debug)]
pub struct Start {
    pub after: i64,
    pub id: String,
}

/// The id a stream starts after when the store has no event yet: no event's id (its
/// time is 0), and a client that names it resumes from the first event.
pub const BEFORE_THE_FIRST: &str = "evt_000000000000000000000000";

/// Where a stream starts: after the event a client names in `Last-Event-ID` when the
/// store still has it and it is under 24 hours old, else after the latest committed
/// (only what happens from now on; read from the store, which the feed may not have
/// caught up with yet).
pub async fn resume_after(db: &Db, last_event_id: Option<&str>) -> AppResult<Start> {
    // Named by a stream that opened on a store with no event yet: it resumes from the
    // first event, but, like any id, no further back than the resumable window (a
    // client that sends it a month later gets the last 24 hours, not the outbox).
    if last_event_id == Some(BEFORE_THE_FIRST) {
        let after = sql::events::before_events_since(db, now_ms() - RESUMABLE_FOR_MS).await?;
        return Ok(Start { after, id: BEFORE_THE_FIRST.to_owned() });
    }
    if let Some(id) = last_event_id.filter(|id| id.starts_with("evt_") && id.len() <= 64)
        && let Some((seq, created_at)) = sql::events::seq_of(db, id).await?
        && created_at >= now_ms() - RESUMABLE_FOR_MS
    {
        return Ok(Start { after: seq, id: id.to_owned() });
    }
    Ok(match sql::events::latest(db).await? {
        Some((after, id)) => Start { after, id },
        None => Start { after: 0, id: BEFORE_THE_FIRST.to_owned() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Limits, Role};

    fn event(kind: &str, owner: Option<i64>, admin_only: bool) -> StoredEvent {
        StoredEvent {
            seq: 1,
            id: "evt_00".into(),
            kind: kind.into(),
            created_at: 1_795_428_000_123,
            data: "{\"petId\":3}".into(),
            owner_key_id: owner,
            admin_only,
        }
    }

    #[test]
    fn ids_are_unique_and_in_time_order() {
        let early = event_id(1_764_000_000_000, [0xff; 6]);
        let later = event_id(1_764_000_000_001, [0; 6]);
        assert_eq!(early, "evt_019ab697e800ffffffffffff");
        assert!(early < later, "a later event's id sorts after");
        assert_ne!(event_id(1, [1, 2, 3, 4, 5, 6]), event_id(1, [1, 2, 3, 4, 5, 7]));
    }

    #[test]
    fn who_sees_what() {
        let limits = Limits { per_minute: 1, per_day: 1 };
        let shopper = Viewer::Key(Caller { key_id: 7, role: Role::Customer, limits });
        let staff = Viewer::Key(Caller { key_id: 1, role: Role::Admin, limits });
        let stock = event("inventory.updated", None, false);
        let own = event("order.created", Some(7), false);
        let other = event("order.created", Some(8), false);
        let revoked = event("key.revoked", None, true);
        assert!(shopper.sees(&stock) && shopper.sees(&own));
        assert!(!shopper.sees(&other) && !shopper.sees(&revoked));
        assert!([&stock, &own, &other, &revoked].iter().all(|event| staff.sees(event)));
        assert!(Viewer::Visitor.sees(&stock));
        assert!(![&own, &other, &revoked].iter().any(|event| Viewer::Visitor.sees(event)));
    }

    fn window(floor: i64, seqs: impl IntoIterator<Item = i64>) -> Window {
        let mut window = Window { floor, events: VecDeque::new() };
        seqs.into_iter().for_each(|seq| window.push(StoredEvent { seq, ..event("inventory.updated", None, false) }));
        window
    }

    #[test]
    fn the_window_covers_what_it_has_seen_since_its_floor_gaps_and_all() {
        // Started after 10; 11 and 12 were never committed (PostgreSQL skips them).
        let started = window(10, [13, 14]);
        assert!(started.covers(10) && started.covers(13) && started.covers(20));
        assert!(!started.covers(9), "before the feed started");
        // Full: letting the oldest go moves the floor to it, exactly.
        let full = window(10, (0..RECENT as i64 + 2).map(|n| 13 + 2 * n));
        assert_eq!(full.events.len(), RECENT);
        assert_eq!(full.floor, 15, "13 and 15 are gone");
        assert!(full.covers(15) && full.covers(16) && !full.covers(14) && !full.covers(10));
    }

    #[test]
    fn the_id_before_the_first_event_is_no_event_s() {
        assert!(BEFORE_THE_FIRST < event_id(0, [0, 0, 0, 0, 0, 1]).as_str());
        assert_eq!(BEFORE_THE_FIRST.len(), event_id(1_795_428_000_123, [7; 6]).len());
    }

    #[test]
    fn the_envelope_is_written_around_the_stored_data() {
        let json = envelope_json(&event("inventory.updated", None, false));
        assert_eq!(
            json,
            r#"{"id":"evt_00","type":"inventory.updated","createdAt":"2026-11-23T10:00:00.123Z","data":{"petId":3}}"#
        );
        let parsed: crate::model::Event = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed.kind, EventType::InventoryUpdated);
    }
}
