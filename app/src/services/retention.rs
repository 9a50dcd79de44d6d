//! Data that would otherwise never shrink: expired sessions, idempotency records past
//! their 24 hours, and rate-limit rows whose day is over (and whose ban, if any, has
//! ended). Swept at start and then every [`EVERY`], in batches of [`BATCH`] rows, each
//! its own short write transaction, so that the sweep never holds the write lock for
//! long and orders queue behind it for a batch at most.

use std::time::Duration;

use crate::db::Db;
use crate::error::AppResult;
use crate::services::clock::Clock;
use crate::services::limits::DAY;
use crate::services::orders::IDEMPOTENCY_SECONDS;

/// How often the sweep runs after the first.
pub const EVERY: Duration = Duration::from_secs(5 * 60);
/// Rows deleted per transaction.
pub const BATCH: i64 = 500;

/// What one sweep deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    pub sessions: u64,
    pub idempotency_records: u64,
    pub rate_limit_rows: u64,
}

/// Each table's rows past keeping at `now` (a `?` bound to it). The deletes go by
/// rowid, in batches: SQLite has no `DELETE … LIMIT` unless built with it.
const SESSIONS: &str = "DELETE FROM sessions WHERE rowid IN
     (SELECT rowid FROM sessions WHERE expires_at <= ?1 LIMIT ?2)";
const IDEMPOTENCY_RECORDS: &str = "DELETE FROM idempotency_records WHERE rowid IN
     (SELECT rowid FROM idempotency_records WHERE created_at <= ?1 - ?3 LIMIT ?2)";
/// The rows the rate limiter would no longer load (`RateLimiter::load`).
const RATE_LIMIT_ROWS: &str = "DELETE FROM rate_limit_usage WHERE rowid IN
     (SELECT rowid FROM rate_limit_usage WHERE day_start <= ?1 - ?3 AND banned_until <= ?1 LIMIT ?2)";

/// Deletes every row past keeping at `now`.
pub async fn sweep(db: &Db, now: i64) -> AppResult<Swept> {
    Ok(Swept {
        sessions: delete_in_batches(db, SESSIONS, now, 0).await?,
        idempotency_records: delete_in_batches(db, IDEMPOTENCY_RECORDS, now, IDEMPOTENCY_SECONDS).await?,
        rate_limit_rows: delete_in_batches(db, RATE_LIMIT_ROWS, now, DAY).await?,
    })
}

async fn delete_in_batches(db: &Db, sql: &'static str, now: i64, age: i64) -> AppResult<u64> {
    let mut deleted = 0;
    loop {
        // None of these rows is catalog data: the read caches stay as they are.
        let mut tx = db.begin_write_outside_catalog().await?;
        let batch = sqlx::query(sql).bind(now).bind(BATCH).bind(age).execute(&mut *tx).await?.rows_affected();
        tx.commit().await?;
        deleted += batch;
        if batch < BATCH as u64 {
            return Ok(deleted);
        }
        // Let the writers queued meanwhile go first.
        tokio::task::yield_now().await;
    }
}

/// Sweeps now and then every [`EVERY`] until the store is closed. A failed sweep is
/// logged and tried again at the next tick.
pub fn spawn(db: Db, clock: Clock) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if db.pool().is_closed() {
                return;
            }
            match sweep(&db, clock.now()).await {
                Ok(swept) if swept != Swept::default() => tracing::info!(?swept, "deleted rows past keeping"),
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "the retention sweep failed; trying again later"),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000;

    async fn count(db: &Db, table: &str) -> i64 {
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
            .fetch_one(db.pool())
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn old_rows_go_in_batches_and_live_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::connect(&format!("sqlite://{}", dir.path().join("t.db").display())).await.unwrap();
        sqlx::query(
            "INSERT INTO api_keys (id, prefix, key_hash, name, role, plan, per_minute, per_day, created_at)
             VALUES (1, 'p', x'00', 'k', 'customer', 'free', 60, 1000, 0)",
        )
        .execute(db.pool())
        .await
        .unwrap();
        // More old sessions than a batch holds, so the sweep takes several transactions.
        let old_sessions = BATCH * 2 + 7;
        for n in 0..old_sessions + 3 {
            let expires = if n < old_sessions { NOW - 1 } else { NOW + 3600 };
            sqlx::query("INSERT INTO sessions (token_hash, key_id, created_at, expires_at) VALUES (?, 1, 0, ?)")
                .bind(n.to_be_bytes().to_vec())
                .bind(expires)
                .execute(db.pool())
                .await
                .unwrap();
        }
        for (key, created) in [("old", NOW - DAY - 1), ("edge", NOW - DAY), ("live", NOW - DAY + 1)] {
            sqlx::query(
                "INSERT INTO idempotency_records (key_id, idem_key, request_hash, status, body, created_at)
                 VALUES (1, ?, x'00', 201, '{}', ?)",
            )
            .bind(key)
            .bind(created)
            .execute(db.pool())
            .await
            .unwrap();
        }
        let yesterday = (NOW / DAY - 1) * DAY;
        let today = yesterday + DAY;
        for (subject, day_start, banned_until) in
            [("key:old", yesterday, 0), ("key:today", today, 0), ("ip:banned", yesterday, NOW + 60)]
        {
            sqlx::query(
                "INSERT INTO rate_limit_usage
                   (subject, minute_start, minute_count, day_start, day_count, refusals, refusals_until, banned_until)
                 VALUES (?, ?, 1, ?, 1, 0, 0, ?)",
            )
            .bind(subject)
            .bind(day_start)
            .bind(day_start)
            .bind(banned_until)
            .execute(db.pool())
            .await
            .unwrap();
        }
        let generation = db.generation();

        let swept = sweep(&db, NOW).await.unwrap();
        assert_eq!(swept, Swept { sessions: old_sessions as u64, idempotency_records: 2, rate_limit_rows: 1 });
        assert_eq!(count(&db, "sessions").await, 3);
        let kept: Vec<String> =
            sqlx::query_scalar("SELECT idem_key FROM idempotency_records").fetch_all(db.pool()).await.unwrap();
        assert_eq!(kept, ["live"]);
        let subjects: Vec<String> = sqlx::query_scalar("SELECT subject FROM rate_limit_usage ORDER BY subject")
            .fetch_all(db.pool())
            .await
            .unwrap();
        assert_eq!(subjects, ["ip:banned", "key:today"]);
        assert_eq!(db.generation(), generation, "no catalog data changed: the read caches stay");

        assert_eq!(sweep(&db, NOW).await.unwrap(), Swept::default(), "nothing left to delete");
    }
}
