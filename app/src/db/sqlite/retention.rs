//! Deleting rows past keeping, a batch at a time. The deletes go by rowid: SQLite has
//! no `DELETE … LIMIT` unless built with it.

use super::Conn;
use crate::error::AppResult;

/// Sessions expired at `now`; returns how many went (at most `batch`).
pub async fn expired_sessions(conn: &mut Conn, now: i64, batch: i64) -> AppResult<u64> {
    delete(
        conn,
        "DELETE FROM sessions WHERE rowid IN (SELECT rowid FROM sessions WHERE expires_at <= ?1 LIMIT ?2)",
        now,
        batch,
        0,
    )
    .await
}

/// Idempotency records older than `age` seconds at `now`.
pub async fn idempotency_records(conn: &mut Conn, now: i64, batch: i64, age: i64) -> AppResult<u64> {
    let sql = "DELETE FROM idempotency_records WHERE rowid IN
         (SELECT rowid FROM idempotency_records WHERE created_at <= ?1 - ?3 LIMIT ?2)";
    delete(conn, sql, now, batch, age).await
}

/// Rate-limit rows whose day ended more than `age` seconds ago and whose ban, if any,
/// is over (the rows the rate limiter would no longer load).
pub async fn rate_limit_rows(conn: &mut Conn, now: i64, batch: i64, age: i64) -> AppResult<u64> {
    let sql = "DELETE FROM rate_limit_usage WHERE rowid IN
         (SELECT rowid FROM rate_limit_usage WHERE day_start <= ?1 - ?3 AND banned_until <= ?1 LIMIT ?2)";
    delete(conn, sql, now, batch, age).await
}

async fn delete(conn: &mut Conn, sql: &'static str, now: i64, batch: i64, age: i64) -> AppResult<u64> {
    Ok(sqlx::query(sql).bind(now).bind(batch).bind(age).execute(&mut *conn).await?.rows_affected())
}
