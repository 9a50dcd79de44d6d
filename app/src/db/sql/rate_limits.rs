//! The rate limiter's saved counters and bans.

use super::{Conn, on_conn, on_pool};
use crate::db::Db;
use crate::error::{AppError, AppResult};
use crate::services::limits::{DAY, Usage};

#[derive(sqlx::FromRow)]
struct Saved {
    subject: String,
    #[sqlx(flatten)]
    usage: Usage,
}

/// The counters still of use at `now`: today's, and running bans.
pub async fn load(db: &Db, now: i64) -> AppResult<Vec<(String, Usage)>> {
    let rows: Vec<Saved> = on_pool!(db, |pool| sqlx::query_as(
        "SELECT subject, minute_start, minute_count, day_start, day_count, refusals, refusals_until, banned_until
         FROM rate_limit_usage WHERE day_start + $2 > $1 OR banned_until > $1",
    )
    .bind(now)
    .bind(DAY)
    .fetch_all(pool)
    .await)?;
    Ok(rows.into_iter().map(|row| (row.subject, row.usage)).collect())
}

pub async fn save(conn: &mut Conn, subject: &str, u: &Usage) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query(
        "INSERT INTO rate_limit_usage
           (subject, minute_start, minute_count, day_start, day_count, refusals, refusals_until, banned_until)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (subject) DO UPDATE SET
           minute_start = excluded.minute_start, minute_count = excluded.minute_count,
           day_start = excluded.day_start, day_count = excluded.day_count,
           refusals = excluded.refusals, refusals_until = excluded.refusals_until,
           banned_until = excluded.banned_until",
    )
    .bind(subject)
    .bind(u.minute_start)
    .bind(u.minute_count)
    .bind(u.day_start)
    .bind(u.day_count)
    .bind(u.refusals)
    .bind(u.refusals_until)
    .bind(u.banned_until)
    .execute(c)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(())
}

const USAGE_COLUMNS: &str = "minute_start, minute_count, day_start, day_count, refusals, refusals_until, banned_until";

/// Counts one request of `subject` in the shared counters (several servers over
/// PostgreSQL): `change` decides on the subject's row, locked meanwhile, so that the
/// servers' requests of one subject are decided one after another. Not the store's
/// write lock: counting never waits for a catalog write. Returns what `change` decided
/// and the counters after it.
pub async fn step<T>(db: &Db, subject: &str, change: impl FnOnce(&mut Usage) -> T) -> AppResult<(T, Usage)> {
    let crate::db::Pool::Postgres(pool) = db.pool() else {
        return Err(AppError::internal("rate limits", "shared counters are PostgreSQL's"));
    };
    let mut tx = pool.begin().await?;
    let locked = format!("SELECT {USAGE_COLUMNS} FROM rate_limit_usage WHERE subject = $1 FOR UPDATE");
    let mut row: Option<Usage> =
        sqlx::query_as(sqlx::AssertSqlSafe(locked.clone())).bind(subject).fetch_optional(&mut *tx).await?;
    if row.is_none() {
        // A subject's first request (on any server): the row, then its lock.
        sqlx::query(
            "INSERT INTO rate_limit_usage
               (subject, minute_start, minute_count, day_start, day_count, refusals, refusals_until, banned_until)
             VALUES ($1, 0, 0, 0, 0, 0, 0, 0) ON CONFLICT (subject) DO NOTHING",
        )
        .bind(subject)
        .execute(&mut *tx)
        .await?;
        row = sqlx::query_as(sqlx::AssertSqlSafe(locked)).bind(subject).fetch_optional(&mut *tx).await?;
    }
    let before = row.unwrap_or_default();
    let mut usage = before;
    let decided = change(&mut usage);
    if !usage.same_counts(&before) {
        sqlx::query(
            "UPDATE rate_limit_usage SET minute_start = $2, minute_count = $3, day_start = $4, day_count = $5,
               refusals = $6, refusals_until = $7, banned_until = $8
             WHERE subject = $1",
        )
        .bind(subject)
        .bind(usage.minute_start)
        .bind(usage.minute_count)
        .bind(usage.day_start)
        .bind(usage.day_count)
        .bind(usage.refusals)
        .bind(usage.refusals_until)
        .bind(usage.banned_until)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok((decided, usage))
}

/// A subject's counters as saved, if any.
pub async fn read(db: &Db, subject: &str) -> AppResult<Option<Usage>> {
    let sql = format!("SELECT {USAGE_COLUMNS} FROM rate_limit_usage WHERE subject = $1");
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(subject).fetch_optional(pool).await)?)
}

/// How many subjects are banned at `now`.
pub async fn banned_now(db: &Db, now: i64) -> AppResult<usize> {
    let banned: i64 =
        on_pool!(db, |pool| sqlx::query_scalar("SELECT COUNT(*) FROM rate_limit_usage WHERE banned_until > $1")
            .bind(now)
            .fetch_one(pool)
            .await)?;
    Ok(usize::try_from(banned).unwrap_or(0))
}
