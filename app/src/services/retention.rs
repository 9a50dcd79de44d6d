//! Data that would otherwise never shrink: expired sessions and passkey ceremonies, idempotency records past
//! their 24 hours, rate-limit rows whose day is over (and whose ban, if any, has
//! ended), and events past their 30 days (with their webhook deliveries). Swept at start and then every [`EVERY`], in batches of [`BATCH`] rows, each
//! its own short write transaction, so that the sweep never holds the write lock for
//! long and orders queue behind it for a batch at most.

use std::time::Duration;

use crate::db::{Conn, Db, Work, sql};
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
    pub events: u64,
    /// Passkey ceremonies past their 5 minutes, never answered.
    pub passkey_ceremonies: u64,
}

/// Deletes every row past keeping at `now`.
pub async fn sweep(db: &Db, now: i64) -> AppResult<Swept> {
    use sql::retention::{events, expired_passkey_ceremonies, expired_sessions, idempotency_records, rate_limit_rows};
    Ok(Swept {
        sessions: in_batches(db, |conn| Box::pin(expired_sessions(conn, now, BATCH))).await?,
        idempotency_records: in_batches(db, |conn| {
            Box::pin(idempotency_records(conn, now, BATCH, IDEMPOTENCY_SECONDS))
        })
        .await?,
        // The rows the rate limiter would no longer load (`RateLimiter::load`).
        rate_limit_rows: in_batches(db, |conn| Box::pin(rate_limit_rows(conn, now, BATCH, DAY))).await?,
        events: in_batches(db, |conn| Box::pin(events(conn, now * 1_000, BATCH, crate::services::events::KEPT_FOR_MS)))
            .await?,
        passkey_ceremonies: in_batches(db, |conn| Box::pin(expired_passkey_ceremonies(conn, now, BATCH))).await?,
    })
}

/// Runs `delete` (which deletes at most [`BATCH`] rows and says how many) in
/// transactions of its own until a batch comes back short.
async fn in_batches<F>(db: &Db, delete: F) -> AppResult<u64>
where
    F: for<'c> Fn(&'c mut Conn) -> Work<'c, u64>,
{
    let mut deleted = 0;
    loop {
        // None of these rows is catalog data: the read caches stay as they are.
        let mut tx = db.begin_write_outside_catalog().await?;
        let batch = delete(&mut tx).await?;
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
            if db.is_closed() {
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
        let sql = format!("SELECT COUNT(*) FROM {table}");
        crate::on_pool!(db, |pool| sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_one(pool).await).unwrap()
    }

    #[tokio::test]
    async fn old_rows_go_in_batches_and_live_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::connect(&crate::db::testing::scratch_url(dir.path()).await).await.unwrap();
        crate::on_pool!(db, |pool| sqlx::query(
            "INSERT INTO api_keys (id, prefix, key_hash, name, role, plan, per_minute, per_day, created_at)
             VALUES (1, 'p', $1, 'k', 'customer', 'free', 60, 1000, 0)",
        )
        .bind(vec![0u8])
        .execute(pool)
        .await
        .map(|_| ()))
        .unwrap();
        // More old sessions than a batch holds, so the sweep takes several transactions.
        let old_sessions = BATCH * 2 + 7;
        for n in 0..old_sessions + 3 {
            let expires = if n < old_sessions { NOW - 1 } else { NOW + 3600 };
            crate::on_pool!(db, |pool| sqlx::query(
                "INSERT INTO sessions (token_hash, key_id, created_at, expires_at) VALUES ($1, 1, 0, $2)"
            )
            .bind(n.to_be_bytes().to_vec())
            .bind(expires)
            .execute(pool)
            .await
            .map(|_| ()))
            .unwrap();
        }
        for (key, created) in [("old", NOW - DAY - 1), ("edge", NOW - DAY), ("live", NOW - DAY + 1)] {
            crate::on_pool!(db, |pool| sqlx::query(
                "INSERT INTO idempotency_records (key_id, idem_key, request_hash, status, body, created_at)
                 VALUES (1, $1, $2, 201, '{}', $3)",
            )
            .bind(key)
            .bind(vec![0u8])
            .bind(created)
            .execute(pool)
            .await
            .map(|_| ()))
            .unwrap();
        }
        let yesterday = (NOW / DAY - 1) * DAY;
        let today = yesterday + DAY;
        for (subject, day_start, banned_until) in
            [("key:old", yesterday, 0), ("key:today", today, 0), ("ip:banned", yesterday, NOW + 60)]
        {
            crate::on_pool!(db, |pool| sqlx::query(
                "INSERT INTO rate_limit_usage
                   (subject, minute_start, minute_count, day_start, day_count, refusals, refusals_until, banned_until)
                 VALUES ($1, $2, 1, $3, 1, 0, 0, $4)",
            )
            .bind(subject)
            .bind(day_start)
            .bind(day_start)
            .bind(banned_until)
            .execute(pool)
            .await
            .map(|_| ()))
            .unwrap();
        }
        // Passkey ceremonies: one past its time, one still open.
        for (token, expires) in [(1_u8, NOW), (2, NOW + 1)] {
            crate::on_pool!(db, |pool| sqlx::query(
                "INSERT INTO passkey_ceremonies (token_hash, kind, state, expires_at) VALUES ($1, 'sign_in', '{}', $2)",
            )
            .bind(vec![token])
            .bind(expires)
            .execute(pool)
            .await
            .map(|_| ()))
            .unwrap();
        }
        let generation = db.generation();

        let swept = sweep(&db, NOW).await.unwrap();
        assert_eq!(
            swept,
            Swept {
                sessions: old_sessions as u64,
                idempotency_records: 2,
                rate_limit_rows: 1,
                events: 0,
                passkey_ceremonies: 1
            }
        );
        assert_eq!(count(&db, "sessions").await, 3);
        assert_eq!(count(&db, "passkey_ceremonies").await, 1);
        let kept: Vec<String> =
            crate::on_pool!(db, |pool| sqlx::query_scalar("SELECT idem_key FROM idempotency_records")
                .fetch_all(pool)
                .await)
            .unwrap();
        assert_eq!(kept, ["live"]);
        let subjects: Vec<String> =
            crate::on_pool!(db, |pool| sqlx::query_scalar("SELECT subject FROM rate_limit_usage ORDER BY subject")
                .fetch_all(pool)
                .await)
            .unwrap();
        assert_eq!(subjects, ["ip:banned", "key:today"]);
        assert_eq!(db.generation(), generation, "no catalog data changed: the read caches stay");

        assert_eq!(sweep(&db, NOW).await.unwrap(), Swept::default(), "nothing left to delete");
    }
}
