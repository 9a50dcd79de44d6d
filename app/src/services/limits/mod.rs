//! Rate limits (contract.md, "Limits"): two fixed windows, the UTC minute and the UTC
//! day, per subject (a key, or a client IP where no key is needed).
//!
//! Where the counters live depends on how many servers share the store:
//! - One server (SQLite): in memory, one small critical section per subject (a DashMap
//!   shard lock), never behind one global lock or a database write. A flusher writes
//!   changed counters back every second, so a restart keeps the day's usage and the
//!   bans, and a crash loses at most the last second of counts.
//! - Several servers (PostgreSQL): shared, so that the limits are exact across them: in
//!   Redis when one is configured (a Lua script: `redis`), else in PostgreSQL (the
//!   subject's row locked for the decision, or changed only if it still holds what
//!   this server last saw there). While Redis is unreachable the servers
//!   count in PostgreSQL, and go back to Redis once it answers again. A busy subject's
//!   requests are counted in rounds, many in one round trip (`shared`).
//!
//! The rule itself ([`Usage::step`]) is the same code everywhere; Redis runs a Lua
//! transcription of it, which a test holds to this one.

pub mod redis;
mod shared;

use std::sync::Arc;
use std::time::Duration;

use dashmap::DashMap;

pub use crate::db::sql::rate_limits::{BanPolicy, DAY, Outcome, Usage};
use crate::db::{Db, Engine, sql};
use crate::error::{AppError, AppResult};
use crate::model::Limits;
use crate::services::clock::Clock;

const MINUTE: i64 = 60;

/// What the `X-RateLimit-*` headers say: the window with fewer requests remaining.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowState {
    pub limit: u32,
    pub remaining: u32,
    /// Unix time at which this window ends.
    pub reset: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Allowed(WindowState),
    /// 429 `rate_limited`.
    Limited {
        window: WindowState,
        retry_after: i64,
    },
    /// 429 `temporarily_banned`.
    Banned {
        window: WindowState,
        retry_after: i64,
    },
}

impl Verdict {
    pub fn window(&self) -> WindowState {
        match *self {
            Verdict::Allowed(w) | Verdict::Limited { window: w, .. } | Verdict::Banned { window: w, .. } => w,
        }
    }
}

impl Usage {
    /// The rule: counts one request at `now` if both windows have room; otherwise
    /// counts a refusal, and bans once a window has seen `bans.after_refusals` of them.
    /// (`redis::STEP` is this function in Lua and the PostgreSQL migration
    /// `20261125000003_rate_limit_steps.sql` in PL/pgSQL: change all three.)
    pub fn step(&mut self, now: i64, limits: Limits, bans: BanPolicy) -> Outcome {
        self.roll(now);
        if self.banned_until > now {
            return Outcome::Banned { new: false };
        }
        self.dirty = true;
        let (minute_left, day_left) = self.remaining(limits);
        if minute_left > 0 && day_left > 0 {
            self.minute_count += 1;
            self.day_count += 1;
            return Outcome::Allowed;
        }
        // Blocked until every exhausted window has ended.
        let mut blocked_until = 0;
        if minute_left == 0 {
            blocked_until = self.minute_start + MINUTE;
        }
        if day_left == 0 {
            blocked_until = blocked_until.max(self.day_start + DAY);
        }
        if self.refusals_until != blocked_until {
            self.refusals = 0;
            self.refusals_until = blocked_until;
        }
        if self.refusals >= i64::from(bans.after_refusals) {
            self.banned_until = now + bans.seconds;
            Outcome::Banned { new: true }
        } else {
            self.refusals += 1;
            Outcome::Limited
        }
    }

    /// Whether the counters are the same (whether or not either is to be flushed).
    #[cfg(test)]
    pub(crate) fn same_counts(&self, other: &Usage) -> bool {
        Usage { dirty: false, ..*self } == Usage { dirty: false, ..*other }
    }

    /// What the client is told of `outcome` (and the metrics counted).
    fn verdict(&self, outcome: Outcome, now: i64, limits: Limits) -> Verdict {
        let window = self.window(limits, now);
        match outcome {
            Outcome::Allowed => Verdict::Allowed(window),
            Outcome::Limited => {
                metrics::counter!("petstore_rate_limited_total", "code" => "rate_limited").increment(1);
                Verdict::Limited { window, retry_after: (self.refusals_until - now).max(1) }
            }
            Outcome::Banned { new } => {
                if new {
                    metrics::counter!("petstore_bans_total").increment(1);
                }
                metrics::counter!("petstore_rate_limited_total", "code" => "temporarily_banned").increment(1);
                Verdict::Banned { window, retry_after: (self.banned_until - now).max(1) }
            }
        }
    }

    /// As [`Usage::verdict`] of a request not counted: refused only during a ban.
    fn peeked(&self, now: i64, limits: Limits) -> Verdict {
        let mut usage = *self;
        usage.roll(now);
        if usage.banned_until > now {
            return Verdict::Banned { window: usage.window(limits, now), retry_after: usage.banned_until - now };
        }
        Verdict::Allowed(usage.window(limits, now))
    }

    /// Windows only move forward: a request stamped earlier than the window in
    /// progress (a server whose clock is behind another's, sharing the counters) counts
    /// in that window rather than resetting it.
    fn roll(&mut self, now: i64) {
        let minute = now - now.rem_euclid(MINUTE);
        if self.minute_start < minute {
            self.minute_start = minute;
            self.minute_count = 0;
        }
        let day = now - now.rem_euclid(DAY);
        if self.day_start < day {
            self.day_start = day;
            self.day_count = 0;
        }
    }

    fn remaining(&self, limits: Limits) -> (i64, i64) {
        ((i64::from(limits.per_minute) - self.minute_count).max(0), (i64::from(limits.per_day) - self.day_count).max(0))
    }

    /// The binding window: fewer remaining wins, ties go to the minute. During a ban,
    /// none remain until the ban ends (so that a client waiting for `X-RateLimit-Reset`
    /// waits as long as `Retry-After` says).
    fn window(&self, limits: Limits, now: i64) -> WindowState {
        if self.banned_until > now {
            let limit = if self.day_count >= i64::from(limits.per_day) { limits.per_day } else { limits.per_minute };
            return WindowState { limit, remaining: 0, reset: self.banned_until };
        }
        let (minute_left, day_left) = self.remaining(limits);
        if day_left < minute_left {
            WindowState { limit: limits.per_day, remaining: day_left as u32, reset: self.day_start + DAY }
        } else {
            WindowState { limit: limits.per_minute, remaining: minute_left as u32, reset: self.minute_start + MINUTE }
        }
    }
}

pub struct RateLimiter {
    /// The counters of a server alone on its store (unused with `shared`).
    usage: DashMap<String, Usage>,
    clock: Clock,
    bans: BanPolicy,
    /// Where several servers keep their counters together; `None` on SQLite.
    shared: Option<Arc<shared::Shared>>,
    /// One flush at a time: the last one at shutdown waits for a running one to finish.
    flushing: tokio::sync::Mutex<()>,
}

impl RateLimiter {
    /// A limiter counting in this process's memory only.
    pub fn new(clock: Clock, bans: BanPolicy) -> RateLimiter {
        RateLimiter { usage: DashMap::new(), clock, bans, shared: None, flushing: tokio::sync::Mutex::new(()) }
    }

    /// The limiter for `db`'s store: on SQLite, in memory with the counters a previous
    /// run left (today's usage and running bans); on PostgreSQL, shared with every
    /// server of the store, in Redis at `redis_url` if given (it need not answer yet),
    /// else in PostgreSQL.
    pub async fn open(clock: Clock, bans: BanPolicy, db: &Db, redis_url: Option<&str>) -> AppResult<RateLimiter> {
        let mut limiter = RateLimiter::new(clock, bans);
        match (db.engine(), redis_url) {
            (Engine::Sqlite, None) => {
                let now = limiter.clock.now();
                for (subject, usage) in sql::rate_limits::load(db, now).await? {
                    limiter.usage.insert(subject, usage);
                }
            }
            (Engine::Sqlite, Some(_)) => {
                return Err(AppError::internal(
                    "configuration",
                    "PETSTORE_REDIS_URL shares rate-limit counters between servers over PostgreSQL; \
                     a SQLite store is served by one server, which counts in memory: unset it",
                ));
            }
            (Engine::Postgres, redis_url) => {
                let crate::db::Pool::Postgres(store) = db.pool() else { unreachable!("a PostgreSQL store") };
                let redis = match redis_url {
                    Some(url) => {
                        let store_id = sql::rate_limits::store_identity(store).await?;
                        let counters = redis::Counters::open(url, &store_id)?;
                        tokio::spawn(counters.clone().adopt_unnamed());
                        Some(counters)
                    }
                    None => None,
                };
                let counting = crate::db::postgres::counters_pool(store);
                limiter.shared = Some(Arc::new(shared::Shared::new(db.clone(), counting, redis)));
            }
        }
        Ok(limiter)
    }

    /// Counts one request of `subject` if both windows have room. Fails only when the
    /// shared counters cannot be reached (the database is down).
    pub async fn check(&self, subject: &str, limits: Limits) -> AppResult<Verdict> {
        let Some(shared) = &self.shared else { return Ok(self.check_here(subject, limits, self.clock.now())) };
        // Boxed: the shared counters' (large) future would otherwise be part of every
        // request's, on every engine; the round trip it makes dwarfs the allocation.
        let decided = Box::pin(shared.count(subject, limits, &self.clock, self.bans)).await?;
        Ok(decided.usage.verdict(decided.outcome, decided.now, decided.limits))
    }

    fn check_here(&self, subject: &str, limits: Limits, now: i64) -> Verdict {
        // The common case, a subject seen before, allocates nothing.
        let mut usage = match self.usage.get_mut(subject) {
            Some(usage) => usage,
            None => self.usage.entry(subject.to_owned()).or_default(),
        };
        let outcome = usage.step(now, limits, self.bans);
        usage.verdict(outcome, now, limits)
    }

    /// What [`check`](Self::check) would say of a banned subject, without counting
    /// anything: for requests that only a ban refuses (rendering a page, a scrape).
    pub async fn peek(&self, subject: &str, limits: Limits) -> AppResult<Verdict> {
        let now = self.clock.now();
        if self.shared.is_none() {
            return Ok(self.local_usage(subject).peeked(now, limits));
        }
        // Boxed, as in `check`.
        Ok(Box::pin(self.usage_of(subject)).await?.peeked(now, limits))
    }

    /// A subject's counters as they stand (zero for one never seen).
    async fn usage_of(&self, subject: &str) -> AppResult<Usage> {
        let Some(shared) = &self.shared else {
            return Ok(self.local_usage(subject));
        };
        if let Some(redis) = &shared.redis
            && let Some(usage) = redis.read(subject).await
        {
            return Ok(usage);
        }
        Ok(sql::rate_limits::read(&shared.db, subject).await?.unwrap_or_default())
    }

    /// The subject's counters in this process (a store whose counters are not shared).
    fn local_usage(&self, subject: &str) -> Usage {
        self.usage.get(subject).map(|usage| *usage).unwrap_or_default()
    }

    /// How many subjects are banned right now (for the metrics, not hot paths).
    pub async fn banned_now(&self) -> AppResult<usize> {
        let now = self.clock.now();
        let Some(shared) = &self.shared else {
            return Ok(self.usage.iter().filter(|u| u.banned_until > now).count());
        };
        if let Some(redis) = &shared.redis
            && let Some(banned) = redis.banned_now(now).await
        {
            return Ok(banned);
        }
        sql::rate_limits::banned_now(&shared.db, now).await
    }

    /// Today's count for a subject (for the console's usage column).
    pub async fn used_today(&self, subject: &str) -> AppResult<i64> {
        let today = self.clock.now().div_euclid(DAY) * DAY;
        let usage = self.usage_of(subject).await?;
        Ok(if usage.day_start == today { usage.day_count } else { 0 })
    }

    /// Whether the shared counters' Redis answers: `None` without one.
    pub fn redis_up(&self) -> Option<bool> {
        self.shared.as_ref()?.redis.as_ref().map(redis::Counters::is_up)
    }

    /// Writes the counters changed since the last flush, in one transaction (a server
    /// alone on its store; shared counters are written as they change).
    pub async fn flush(&self, db: &Db) -> AppResult<usize> {
        let _one_at_a_time = self.flushing.lock().await;
        let mut rows = Vec::new();
        for mut entry in self.usage.iter_mut() {
            if entry.dirty {
                entry.dirty = false;
                rows.push((entry.key().clone(), *entry.value()));
            }
        }
        if rows.is_empty() {
            return Ok(0);
        }
        let written = self.write(db, &rows).await;
        if written.is_err() {
            // Try these again next time.
            for (subject, _) in &rows {
                if let Some(mut usage) = self.usage.get_mut(subject) {
                    usage.dirty = true;
                }
            }
        }
        written.map(|()| rows.len())
    }

    async fn write(&self, db: &Db, rows: &[(String, Usage)]) -> AppResult<()> {
        // The counters are no catalog data: saving them must not empty the read caches
        // every second.
        let mut tx = db.begin_write_outside_catalog().await?;
        for (subject, u) in rows {
            sql::rate_limits::save(&mut tx, subject, u).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Forgets subjects whose day is over and who are not banned (memory stays bounded
    /// by one day's callers).
    pub fn sweep(&self) {
        let now = self.clock.now();
        self.usage.retain(|_, u| u.day_start + DAY > now || u.banned_until > now);
    }

    /// Flushes every second until the process ends. On shutdown, call `flush` once more
    /// (it waits for a running flush) before stopping this task.
    pub fn spawn_flusher(self: Arc<Self>, db: Db) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            let mut ticks: u64 = 0;
            // A failure is said once when it starts and once when it ends (a fault of
            // the storage may last minutes), not once a second.
            let mut failing = false;
            loop {
                tick.tick().await;
                match self.flush(&db).await {
                    Err(err) if !failing => {
                        failing = true;
                        tracing::warn!(error = %err, "writing rate-limit counters failed; retrying every second");
                    }
                    Ok(_) if failing => {
                        failing = false;
                        tracing::warn!("rate-limit counters are written again");
                    }
                    _ => {}
                }
                ticks += 1;
                if ticks.is_multiple_of(60) {
                    self.sweep();
                }
            }
        })
    }
}

/// Holds a transcription of the rule (Redis's Lua, PostgreSQL's PL/pgSQL) to
/// [`Usage::step`]: random limits, bans and times, step after step, the same outcome
/// and the same counters. `steps` counts a number of requests of a subject in a row in
/// the transcription (a round: `shared`); `start` is the first time (Redis expires
/// counters by the real clock).
#[cfg(test)]
pub(crate) async fn assert_transcribes_the_rule<F, Fut>(start: i64, mut steps: F)
where
    F: FnMut(String, i64, Limits, BanPolicy, usize) -> Fut,
    Fut: std::future::Future<Output = Vec<(Outcome, Usage)>>,
{
    // xorshift: a failing seed can be replayed.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut below = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for run in 0..20 {
        let subject = format!("rule-test:{}:{run}", std::process::id());
        let limits = Limits { per_minute: 1 + below(4) as u32, per_day: 2 + below(12) as u32 };
        let bans = BanPolicy { after_refusals: 1 + below(3) as u32, seconds: 30 + below(600) as i64 };
        let mut now = start + below(86_400) as i64;
        let mut rust = Usage::default();
        for n in 0..40 {
            now += [0, 0, 1, 7, 45, 61, 900, 40_000][below(8) as usize];
            let count = [1, 1, 2, 3, 8][below(5) as usize];
            let answers = steps(subject.clone(), now, limits, bans, count).await;
            assert_eq!(answers.len(), count, "run {run} round {n}: one answer per request");
            for (i, (outcome, usage)) in answers.into_iter().enumerate() {
                let expected = rust.step(now, limits, bans);
                let context = format!("run {run} round {n} request {i} of {count}: {limits:?} {bans:?} at {now}");
                assert_eq!(outcome, expected, "{context}");
                if expected != (Outcome::Banned { new: false }) {
                    assert!(usage.same_counts(&rust), "{context}: {usage:?} against {rust:?}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, Ordering};

    /// PostgreSQL's `rate_limit_steps` and the Rust rule ([`Usage::step`]) decide alike
    /// and leave the same counters; so does `rate_limit_step` (the previous release's
    /// function, a round of one), which answers the rounds of one request.
    #[tokio::test]
    async fn the_sql_rule_is_the_rust_rule() {
        use crate::db::sql::rate_limits::{Answer, counted, steps};
        let db = Db::connect(&crate::db::testing::new_postgres_database().await).await.unwrap();
        let crate::db::Pool::Postgres(pool) = db.pool() else { unreachable!("a PostgreSQL database") };
        assert_transcribes_the_rule(1_795_428_000, |subject, now, limits, bans, count| {
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

    const FREE: Limits = Limits { per_minute: 60, per_day: 1_000 };
    /// 2026-11-23T10:00:00Z: the start of a minute.
    const T0: i64 = 1_795_428_000;

    fn limiter() -> (RateLimiter, Arc<AtomicI64>) {
        let now = Arc::new(AtomicI64::new(T0));
        (RateLimiter::new(Clock::manual(now.clone()), BanPolicy::default()), now)
    }

    impl RateLimiter {
        /// `check` of a limiter counting in memory, which never waits.
        fn count(&self, subject: &str, limits: Limits) -> Verdict {
            self.check_here(subject, limits, self.clock.now())
        }
    }

    #[test]
    fn remaining_counts_down_and_reset_is_the_window_end() {
        let (limiter, _) = limiter();
        assert_eq!(
            limiter.count("k", FREE),
            Verdict::Allowed(WindowState { limit: 60, remaining: 59, reset: T0 + 60 })
        );
        assert_eq!(limiter.count("k", FREE).window().remaining, 58);
        // Another subject has its own counters.
        assert_eq!(limiter.count("other", FREE).window().remaining, 59);
    }

    #[test]
    fn the_61st_request_in_a_minute_is_refused_until_the_minute_ends() {
        let (limiter, now) = limiter();
        for _ in 0..60 {
            assert!(matches!(limiter.count("k", FREE), Verdict::Allowed(_)));
        }
        now.store(T0 + 45, Ordering::SeqCst);
        let verdict = limiter.count("k", FREE);
        assert_eq!(
            verdict,
            Verdict::Limited { window: WindowState { limit: 60, remaining: 0, reset: T0 + 60 }, retry_after: 15 }
        );
        // Refusals do not count: the next minute starts fresh.
        now.store(T0 + 60, Ordering::SeqCst);
        assert_eq!(limiter.count("k", FREE).window(), WindowState { limit: 60, remaining: 59, reset: T0 + 120 });
    }

    #[test]
    fn the_day_binds_when_it_has_fewer_left() {
        let (limiter, now) = limiter();
        let tight = Limits { per_minute: 10, per_day: 12 };
        for _ in 0..10 {
            limiter.count("k", tight);
        }
        now.store(T0 + 60, Ordering::SeqCst);
        let day_end = T0 - T0.rem_euclid(DAY) + DAY;
        assert_eq!(
            limiter.count("k", tight),
            Verdict::Allowed(WindowState { limit: 12, remaining: 1, reset: day_end })
        );
        limiter.count("k", tight);
        let verdict = limiter.count("k", tight);
        assert_eq!(
            verdict,
            Verdict::Limited {
                window: WindowState { limit: 12, remaining: 0, reset: day_end },
                retry_after: day_end - T0 - 60
            }
        );
    }

    #[test]
    fn ten_refusals_then_one_more_bans_for_fifteen_minutes() {
        let (limiter, now) = limiter();
        let one = Limits { per_minute: 1, per_day: 100 };
        assert!(matches!(limiter.count("k", one), Verdict::Allowed(_)));
        for _ in 0..10 {
            assert!(matches!(limiter.count("k", one), Verdict::Limited { .. }));
        }
        assert!(matches!(limiter.count("k", one), Verdict::Banned { retry_after: 900, .. }));
        // The ban outlasts the minute.
        now.store(T0 + 600, Ordering::SeqCst);
        assert!(matches!(limiter.count("k", one), Verdict::Banned { retry_after: 300, .. }));
        now.store(T0 + 900, Ordering::SeqCst);
        assert!(matches!(limiter.count("k", one), Verdict::Allowed(_)));
    }

    #[test]
    fn refusals_spread_over_windows_do_not_ban() {
        let (limiter, now) = limiter();
        let one = Limits { per_minute: 1, per_day: 100 };
        for minute in 0..3 {
            now.store(T0 + minute * 60, Ordering::SeqCst);
            limiter.count("k", one);
            for _ in 0..6 {
                assert!(matches!(limiter.count("k", one), Verdict::Limited { .. }));
            }
        }
    }
}
