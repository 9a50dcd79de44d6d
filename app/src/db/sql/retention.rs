//! Deleting rows past keeping, a batch at a time (neither engine has `DELETE … LIMIT`:
//! each batch is the rows a limited select names by their primary key).

use super::{Conn, on_conn};
use crate::error::AppResult;

/// Passkey ceremonies expired at `now` (never answered); how many went (at most `batch`).
pub async fn expired_passkey_ceremonies(conn: &mut Conn, now: i64, batch: i64) -> AppResult<u64> {
    let sql = "DELETE FROM passkey_ceremonies WHERE token_hash IN
         (SELECT token_hash FROM passkey_ceremonies WHERE expires_at <= $1 LIMIT $2)";
    delete(conn, sql, now, batch, None).await
}

/// Sessions expired at `now`; returns how many went (at most `batch`).
pub async fn expired_sessions(conn: &mut Conn, now: i64, batch: i64) -> AppResult<u64> {
    let sql = "DELETE FROM sessions WHERE token_hash IN
         (SELECT token_hash FROM sessions WHERE expires_at <= $1 LIMIT $2)";
    delete(conn, sql, now, batch, None).await
}

/// Idempotency records older than `age` seconds at `now`.
pub async fn idempotency_records(conn: &mut Conn, now: i64, batch: i64, age: i64) -> AppResult<u64> {
    let sql = "DELETE FROM idempotency_records WHERE (key_id, idem_key) IN
         (SELECT key_id, idem_key FROM idempotency_records WHERE created_at <= $1 - $3 LIMIT $2)";
    delete(conn, sql, now, batch, Some(age)).await
}

/// Rate-limit rows whose day ended more than `age` seconds ago and whose ban, if any,
/// is over (the rows the rate limiter would no longer load).
pub async fn rate_limit_rows(conn: &mut Conn, now: i64, batch: i64, age: i64) -> AppResult<u64> {
    let sql = "DELETE FROM rate_limit_usage WHERE subject IN
         (SELECT subject FROM rate_limit_usage WHERE day_start <= $1 - $3 AND banned_until <= $1 LIMIT $2)";
    delete(conn, sql, now, batch, Some(age)).await
}

/// Events older than `age` milliseconds at `now` (Unix milliseconds), their deliveries
/// with them. (Events carry milliseconds; the other rows seconds.)
pub async fn events(conn: &mut Conn, now_ms: i64, batch: i64, age_ms: i64) -> AppResult<u64> {
    let sql = "DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE created_at <= $1 - $3 LIMIT $2)";
    delete(conn, sql, now_ms, batch, Some(age_ms)).await
}

/// Runs a batch delete (PostgreSQL wants every parameter a statement names bound, and
/// no more: `age` only where `$3` is used).
async fn delete(conn: &mut Conn, sql: &'static str, now: i64, batch: i64, age: Option<i64>) -> AppResult<u64> {
    Ok(on_conn!(conn, |c| {
        let query = sqlx::query(sql).bind(now).bind(batch);
        match age {
            Some(age) => query.bind(age),
            None => query,
        }
        .execute(c)
        .await
        .map(|done| done.rows_affected())
    })?)
}
