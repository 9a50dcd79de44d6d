//! The scheduled snapshots' one row (`backup_schedule`, SQLite stores only: a
//! PostgreSQL store is backed up with PostgreSQL's tools).

use super::{Conn, Db, on_conn};
use crate::error::AppResult;

/// How the scheduled snapshots went, as the row says.
#[derive(Clone, Debug, Default, sqlx::FromRow)]
pub struct ScheduleRow {
    pub every_seconds: Option<i64>,
    pub last_attempt_at: Option<i64>,
    pub last_success_at: Option<i64>,
    pub last_file: Option<String>,
    pub last_failure_at: Option<i64>,
    pub last_error: Option<String>,
}

/// Takes or renews the lease for `holder` until `until`: it succeeds when nobody holds
/// it, when `holder` does, or when its holder's lease ran out at `now`. Whether
/// `holder` has it.
pub async fn take_lease(conn: &mut Conn, holder: &str, now: i64, until: i64) -> AppResult<bool> {
    let sql = "UPDATE backup_schedule SET holder = $1, lease_until = $3
               WHERE id = 1 AND (holder IS NULL OR holder = $1 OR lease_until < $2)";
    Ok(on_conn!(conn, |c| sqlx::query(sql)
        .bind(holder)
        .bind(now)
        .bind(until)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?
        == 1)
}

/// Gives the lease up (a server stopping), so that another may take it at once.
pub async fn give_up_lease(conn: &mut Conn, holder: &str) -> AppResult<()> {
    let sql = "UPDATE backup_schedule SET holder = NULL, lease_until = 0 WHERE id = 1 AND holder = $1";
    on_conn!(conn, |c| sqlx::query(sql).bind(holder).execute(c).await.map(|_| ()))?;
    Ok(())
}

/// Notes that a snapshot is being taken at `now`, every `every` seconds.
pub async fn note_attempt(conn: &mut Conn, now: i64, every: i64) -> AppResult<()> {
    let sql = "UPDATE backup_schedule SET last_attempt_at = $1, every_seconds = $2 WHERE id = 1";
    on_conn!(conn, |c| sqlx::query(sql).bind(now).bind(every).execute(c).await.map(|_| ()))?;
    Ok(())
}

/// Notes that no schedule runs, unless a server holds a live lease at `now` (another
/// server of the store may take them while this one does not).
pub async fn note_off(conn: &mut Conn, now: i64) -> AppResult<()> {
    let sql = "UPDATE backup_schedule SET every_seconds = NULL WHERE id = 1 AND (holder IS NULL OR lease_until < $1)";
    on_conn!(conn, |c| sqlx::query(sql).bind(now).execute(c).await.map(|_| ()))?;
    Ok(())
}

/// Notes a snapshot written at `at` to `file`.
pub async fn note_success(conn: &mut Conn, at: i64, file: &str) -> AppResult<()> {
    let sql = "UPDATE backup_schedule SET last_success_at = $1, last_file = $2, last_failure_at = NULL,
               last_error = NULL WHERE id = 1";
    on_conn!(conn, |c| sqlx::query(sql).bind(at).bind(file).execute(c).await.map(|_| ()))?;
    Ok(())
}

/// Notes a snapshot that failed at `at`, and why.
pub async fn note_failure(conn: &mut Conn, at: i64, error: &str) -> AppResult<()> {
    let sql = "UPDATE backup_schedule SET last_failure_at = $1, last_error = $2 WHERE id = 1";
    on_conn!(conn, |c| sqlx::query(sql).bind(at).bind(error).execute(c).await.map(|_| ()))?;
    Ok(())
}

/// The row, on a SQLite store; `None` on PostgreSQL, which has none.
pub async fn read(db: &Db) -> AppResult<Option<ScheduleRow>> {
    let Some(pool) = db.sqlite_pool() else { return Ok(None) };
    let sql = "SELECT every_seconds, last_attempt_at, last_success_at, last_file, last_failure_at, last_error
               FROM backup_schedule WHERE id = 1";
    Ok(sqlx::query_as(sql).fetch_optional(pool).await?)
}
