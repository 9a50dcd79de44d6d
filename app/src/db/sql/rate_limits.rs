//! The rate limiter's saved counters and bans.

use super::{Conn, on_conn, on_pool};
use crate::db::Db;
use crate::error::AppResult;
use crate::model::Limits;

/// A day, in seconds: the longer of the two windows.
pub const DAY: i64 = 86_400;

/// When a key or address is banned, and for how long (the rule is `services::limits`').
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BanPolicy {
    /// Refusals in one window after which the next request bans (default 10).
    pub after_refusals: u32,
    /// How long a ban lasts, in seconds (default 15 minutes).
    pub seconds: i64,
}

impl Default for BanPolicy {
    fn default() -> Self {
        BanPolicy { after_refusals: 10, seconds: 15 * 60 }
    }
}

/// What [`Usage::step`] decided of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Allowed,
    Limited,
    /// `new`: this request started the ban.
    Banned {
        new: bool,
    },
}

/// One subject's counters, as kept in memory and saved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct Usage {
    pub minute_start: i64,
    pub minute_count: i64,
    pub day_start: i64,
    pub day_count: i64,
    pub refusals: i64,
    pub refusals_until: i64,
    pub banned_until: i64,
    /// Changed since the last flush.
    #[sqlx(skip)]
    pub(crate) dirty: bool,
}

impl Outcome {
    /// From the code the Lua and SQL transcriptions of the rule answer (0 allowed, 1
    /// limited, 2 banned, 3 banned now).
    pub fn from_code(code: i64) -> Outcome {
        match code {
            0 => Outcome::Allowed,
            1 => Outcome::Limited,
            2 => Outcome::Banned { new: false },
            _ => Outcome::Banned { new: true },
        }
    }
}

impl Usage {
    /// Counters as another store of them holds them (not to be flushed).
    pub fn counted(
        minute_start: i64,
        minute_count: i64,
        day_start: i64,
        day_count: i64,
        refusals: i64,
        refusals_until: i64,
        banned_until: i64,
    ) -> Usage {
        Usage { minute_start, minute_count, day_start, day_count, refusals, refusals_until, banned_until, dirty: false }
    }
}

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
pub(crate) type Answer = (i64, i64, i64, i64, i64, i64, i64, i64);

pub(crate) fn counted(answer: Answer) -> (Outcome, Usage) {
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
