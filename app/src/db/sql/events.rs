//! The outbox: events written by the transactions whose changes they report, read by
//! `seq` (the order the changes committed in).

use super::{Conn, on_conn, on_pool};
use crate::db::Db;
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

/// Stores an event in the writing transaction; returns its `seq`.
pub async fn insert(
    conn: &mut Conn,
    id: &str,
    kind: &str,
    created_at: i64,
    data: &str,
    owner_key_id: Option<i64>,
    admin_only: bool,
) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar(
        "INSERT INTO events (id, type, created_at, data, owner_key_id, admin_only)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING seq"
    )
    .bind(id)
    .bind(kind)
    .bind(created_at)
    .bind(data)
    .bind(owner_key_id)
    .bind(admin_only)
    .fetch_one(c)
    .await)?)
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

/// The latest event's `seq` (0 when there is none).
pub async fn latest_seq(db: &Db) -> AppResult<i64> {
    Ok(on_pool!(db, |pool| sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0) FROM events").fetch_one(pool).await)?)
}
