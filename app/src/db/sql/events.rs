//! The outbox: events written by the transactions whose changes they report, read by
//! `seq` (the order the changes committed in).

use sqlx::QueryBuilder;

use super::{Conn, on_conn, on_pool};
use crate::db::Db;
use crate::db::outbox::NewEvent;
use crate::error::AppResult;

/// An event as stored.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub struct StoredEvent {
    pub seq: i64,
    pub id: String,
    #[sqlx(rename = "type")]
    pub kind: String,
    /// Unix milliseconds.
    pub created_at: i64,
    /// JSON.
    pub data: String,
    pub owner_key_id: Option<i64>,
    pub admin_only: bool,
}

const COLUMNS: &str = "SELECT seq, id, type, created_at, data, owner_key_id, admin_only FROM events";

/// Stores `events` in the writing transaction, in their order (their `seq`s rising),
/// a few hundred to a statement (well under either engine's limit on parameters).
/// (The database's own error: the write queue tells the store's health what failed.)
pub async fn insert_all(conn: &mut Conn, events: &[NewEvent]) -> Result<(), sqlx::Error> {
    for chunk in events.chunks(500) {
        on_conn!(conn, |c| {
            let mut sql =
                QueryBuilder::new("INSERT INTO events (id, type, created_at, data, owner_key_id, admin_only) ");
            sql.push_values(chunk, |mut row, event| {
                row.push_bind(&event.id)
                    .push_bind(event.kind)
                    .push_bind(event.created_at)
                    .push_bind(&event.data)
                    .push_bind(event.owner_key_id)
                    .push_bind(event.admin_only);
            });
            sql.build().execute(c).await.map(|_| ())
        })?;
    }
    Ok(())
}

/// Up to `limit` events after `seq`, in order. (The database's own error: the feed
/// tells a closed store from a failed read.)
pub async fn after(db: &Db, seq: i64, limit: i64) -> Result<Vec<StoredEvent>, sqlx::Error> {
    let sql = format!("{COLUMNS} WHERE seq > $1 ORDER BY seq LIMIT $2");
    on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(seq).bind(limit).fetch_all(pool).await)
}

/// The same inside a write transaction.
pub async fn after_in(conn: &mut Conn, seq: i64, limit: i64) -> AppResult<Vec<StoredEvent>> {
    let sql = format!("{COLUMNS} WHERE seq > $1 ORDER BY seq LIMIT $2");
    Ok(on_conn!(conn, |c| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(seq).bind(limit).fetch_all(c).await)?)
}

/// The `seq` of the event with this id, if it is still kept.
pub async fn seq_of(db: &Db, id: &str) -> AppResult<Option<(i64, i64)>> {
    Ok(on_pool!(db, |pool| sqlx::query_as("SELECT seq, created_at FROM events WHERE id = $1")
        .bind(id)
        .fetch_optional(pool)
        .await)?)
}

/// The `seq` of the event with this id, stored by the writing transaction.
pub async fn seq_in(conn: &mut Conn, id: &str) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar("SELECT seq FROM events WHERE id = $1").bind(id).fetch_one(c).await)?)
}

/// The latest event's `seq` and id (`None` when there is none).
pub async fn latest(db: &Db) -> AppResult<Option<(i64, String)>> {
    Ok(on_pool!(db, |pool| sqlx::query_as("SELECT seq, id FROM events ORDER BY seq DESC LIMIT 1")
        .fetch_optional(pool)
        .await)?)
}

/// The `seq` just before the first event created at or after `since_ms` (Unix
/// milliseconds): a stream that resumes from before the store's first event starts
/// there, so that it replays no more than the resumable window (the latest event's
/// `seq` when none is that recent).
pub async fn before_events_since(db: &Db, since_ms: i64) -> AppResult<i64> {
    let first: Option<i64> =
        on_pool!(db, |pool| sqlx::query_scalar("SELECT MIN(seq) FROM events WHERE created_at >= $1")
            .bind(since_ms)
            .fetch_one(pool)
            .await)?;
    Ok(match first {
        Some(seq) => seq - 1,
        None => latest_seq(db).await?,
    })
}

/// The latest event's `seq` (0 when there is none).
pub async fn latest_seq(db: &Db) -> AppResult<i64> {
    Ok(latest(db).await?.map_or(0, |(seq, _)| seq))
}

/// The latest event's `seq` (0 when there is none), in a write transaction.
pub async fn latest_seq_in(conn: &mut Conn) -> AppResult<i64> {
    let latest: Option<i64> = on_conn!(conn, |c| sqlx::query_scalar("SELECT MAX(seq) FROM events").fetch_one(c).await)?;
    Ok(latest.unwrap_or(0))
}
