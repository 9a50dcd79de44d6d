//! The rate limiter's saved counters and bans.

use super::{Conn, on_conn, on_pool};
use crate::db::Db;
use crate::error::AppResult;
use crate::model::Limits;
use crate::services::limits::{BanPolicy, DAY, Outcome, Usage};

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

/// Counts `count` requests of `subject` in a row in the shared counters (several
/// servers over PostgreSQL): the database's `rate_limit_steps` (migration
/// `20261125000003_rate_limit_steps.sql`, [`Usage::step`] in PL/pgSQL) decides with the
/// subject's row locked while it runs, so that the servers' requests of one subject
/// are decided one after another. Not the store's write lock: counting never waits
/// for a catalog write. Returns, per request in order, the outcome and the counters
/// after it.
pub async fn steps(
    pool: &sqlx::PgPool,
    subject: &str,
    now: i64,
    limits: Limits,
    bans: BanPolicy,
    count: usize,
) -> AppResult<Vec<(Outcome, Usage)>> {
    let rows: Vec<Answer> = sqlx::query_as("SELECT * FROM rate_limit_steps($1, $2, $3, $4, $5, $6, $7)")
        .bind(subject)
        .bind(now)
        .bind(i64::from(limits.per_minute))
        .bind(i64::from(limits.per_day))
        .bind(i64::from(bans.after_refusals))
        .bind(bans.seconds)
        .bind(i32::try_from(count).unwrap_or(i32::MAX))
        .fetch_all(pool)
        .await?;
    Ok(rows.into_iter().map(counted).collect())
}

/// A row of the rule's answer: the outcome (0 allowed, 1 limited, 2 banned, 3 banned
/// now) and the counters after it.
type Answer = (i64, i64, i64, i64, i64, i64, i64, i64);

fn counted(answer: Answer) -> (Outcome, Usage) {
    let (outcome, minute_start, minute_count, day_start, day_count, refusals, refusals_until, banned_until) = answer;
    let usage =
        Usage::counted(minute_start, minute_count, day_start, day_count, refusals, refusals_until, banned_until);
    (Outcome::from_code(outcome), usage)
}

/// Replaces a subject's counters by `after` if they still are `before` (the counters
/// after this server's last round): the rule ran in this server (the same
/// [`Usage::step`]) on exactly the counters the row holds when it is changed, which is
/// all a decision depends on (with the time, limits and bans), so it is exact whatever
/// other servers did meanwhile. `false`: the row holds other counters (another server
/// counted meanwhile) or none yet; count with [`steps`] instead.
pub async fn swap(pool: &sqlx::PgPool, subject: &str, before: &Usage, after: &Usage) -> AppResult<bool> {
    let swapped = sqlx::query(
        "UPDATE rate_limit_usage SET minute_start = $9, minute_count = $10, day_start = $11, day_count = $12,
                refusals = $13, refusals_until = $14, banned_until = $15
         WHERE subject = $1 AND (minute_start, minute_count, day_start, day_count, refusals, refusals_until,
                banned_until) = ($2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(subject)
    .bind(before.minute_start)
    .bind(before.minute_count)
    .bind(before.day_start)
    .bind(before.day_count)
    .bind(before.refusals)
    .bind(before.refusals_until)
    .bind(before.banned_until)
    .bind(after.minute_start)
    .bind(after.minute_count)
    .bind(after.day_start)
    .bind(after.day_count)
    .bind(after.refusals)
    .bind(after.refusals_until)
    .bind(after.banned_until)
    .execute(pool)
    .await?;
    Ok(swapped.rows_affected() == 1)
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

/// The store's name for its shared counters in Redis (PostgreSQL stores only: made by
/// migration `20261129000001_store_identity`).
pub async fn store_identity(pool: &sqlx::PgPool) -> AppResult<String> {
    Ok(sqlx::query_scalar("SELECT id FROM store_identity").fetch_one(pool).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PostgreSQL's `rate_limit_steps` and the Rust rule ([`Usage::step`]) decide alike
    /// and leave the same counters; so does `rate_limit_step` (the previous release's
    /// function, a round of one), which answers the rounds of one request.
    #[tokio::test]
    async fn the_sql_rule_is_the_rust_rule() {
        let db = Db::connect(&crate::db::testing::new_postgres_database().await).await.unwrap();
        let crate::db::Pool::Postgres(pool) = db.pool() else { unreachable!("a PostgreSQL database") };
        crate::services::limits::assert_transcribes_the_rule(1_795_428_000, |subject, now, limits, bans, count| {
            let pool = pool.clone();
            async move {
                if count > 1 {
                    return steps(&pool, &subject, now, limits, bans, count).await.unwrap();
                }
                let answer: Answer = sqlx::query_as("SELECT * FROM rate_limit_step($1, $2, $3, $4, $5, $6)")
                    .bind(&subject)
                    .bind(now)
                    .bind(i64::from(limits.per_minute))
                    .bind(i64::from(limits.per_day))
                    .bind(i64::from(bans.after_refusals))
                    .bind(bans.seconds)
                    .fetch_one(&pool)
                    .await
                    .unwrap();
                vec![counted(answer)]
            }
        })
        .await;
    }
}
