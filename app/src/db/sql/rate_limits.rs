//! The rate limiter's saved counters and bans.

use super::{Conn, on_conn, on_pool};
use crate::db::Db;
use crate::error::AppResult;
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
