//! Rate limits (contract.md, "Limits"): two fixed windows, the UTC minute and the UTC
//! day, per subject (a key, or a client IP where no key is needed).
//!
//! Counting happens in memory, one small critical section per subject (a DashMap shard
//! lock), never behind one global lock or a database write. A flusher writes changed
//! counters back every second, so a restart keeps the day's usage and the bans, and a
//! crash loses at most the last second of counts.

use std::sync::Arc;
use std::time::Duration;

use dashmap::DashMap;

use crate::db::{Db, sql};
use crate::error::AppResult;
use crate::model::Limits;
use crate::services::clock::Clock;

const MINUTE: i64 = 60;
pub const DAY: i64 = 86_400;

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

/// One subject's counters, as kept in memory and saved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, sqlx::FromRow)]
pub(crate) struct Usage {
    pub minute_start: i64,
    pub minute_count: i64,
    pub day_start: i64,
    pub day_count: i64,
    pub refusals: i64,
    pub refusals_until: i64,
    pub banned_until: i64,
    /// Changed since the last flush.
    #[sqlx(skip)]
    dirty: bool,
}

impl Usage {
    fn roll(&mut self, now: i64) {
        let minute = now - now.rem_euclid(MINUTE);
        if self.minute_start != minute {
            self.minute_start = minute;
            self.minute_count = 0;
        }
        let day = now - now.rem_euclid(DAY);
        if self.day_start != day {
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
    usage: DashMap<String, Usage>,
    clock: Clock,
    bans: BanPolicy,
    /// One flush at a time: the last one at shutdown waits for a running one to finish.
    flushing: tokio::sync::Mutex<()>,
}

impl RateLimiter {
    pub fn new(clock: Clock, bans: BanPolicy) -> RateLimiter {
        RateLimiter { usage: DashMap::new(), clock, bans, flushing: tokio::sync::Mutex::new(()) }
    }

    /// Loads the counters a previous run left (today's usage and running bans).
    pub async fn load(clock: Clock, bans: BanPolicy, db: &Db) -> AppResult<RateLimiter> {
        let limiter = RateLimiter::new(clock, bans);
        let now = limiter.clock.now();
        for (subject, usage) in sql::rate_limits::load(db, now).await? {
            limiter.usage.insert(subject, usage);
        }
        Ok(limiter)
    }

    /// Counts one request of `subject` if both windows have room.
    pub fn check(&self, subject: &str, limits: Limits) -> Verdict {
        let now = self.clock.now();
        // The common case, a subject seen before, allocates nothing.
        if let Some(mut usage) = self.usage.get_mut(subject) {
            return self.decide(&mut usage, now, limits);
        }
        let mut usage = self.usage.entry(subject.to_owned()).or_default();
        self.decide(&mut usage, now, limits)
    }

    fn decide(&self, usage: &mut Usage, now: i64, limits: Limits) -> Verdict {
        usage.roll(now);
        if usage.banned_until > now {
            metrics::counter!("petstore_rate_limited_total", "code" => "temporarily_banned").increment(1);
            return Verdict::Banned { window: usage.window(limits, now), retry_after: usage.banned_until - now };
        }
        usage.dirty = true;
        let (minute_left, day_left) = usage.remaining(limits);
        if minute_left > 0 && day_left > 0 {
            usage.minute_count += 1;
            usage.day_count += 1;
            return Verdict::Allowed(usage.window(limits, now));
        }
        // Blocked until every exhausted window has ended.
        let mut blocked_until = 0;
        if minute_left == 0 {
            blocked_until = usage.minute_start + MINUTE;
        }
        if day_left == 0 {
            blocked_until = blocked_until.max(usage.day_start + DAY);
        }
        if usage.refusals_until != blocked_until {
            usage.refusals = 0;
            usage.refusals_until = blocked_until;
        }
        if usage.refusals >= i64::from(self.bans.after_refusals) {
            usage.banned_until = now + self.bans.seconds;
            metrics::counter!("petstore_bans_total").increment(1);
            metrics::counter!("petstore_rate_limited_total", "code" => "temporarily_banned").increment(1);
            Verdict::Banned { window: usage.window(limits, now), retry_after: self.bans.seconds.max(1) }
        } else {
            usage.refusals += 1;
            metrics::counter!("petstore_rate_limited_total", "code" => "rate_limited").increment(1);
            Verdict::Limited { window: usage.window(limits, now), retry_after: (blocked_until - now).max(1) }
        }
    }

    /// What [`check`](Self::check) would say of a banned subject, without counting
    /// anything: for requests that only a ban refuses (rendering a page, a scrape).
    pub fn peek(&self, subject: &str, limits: Limits) -> Verdict {
        let now = self.clock.now();
        let mut usage = self.usage.get(subject).map(|usage| *usage).unwrap_or_default();
        usage.roll(now);
        if usage.banned_until > now {
            return Verdict::Banned { window: usage.window(limits, now), retry_after: usage.banned_until - now };
        }
        Verdict::Allowed(usage.window(limits, now))
    }

    /// How many subjects are banned right now (a scan: for the metrics, not hot paths).
    pub fn banned_now(&self) -> usize {
        let now = self.clock.now();
        self.usage.iter().filter(|u| u.banned_until > now).count()
    }

    /// Today's count for a subject (for the console's usage column).
    pub fn used_today(&self, subject: &str) -> i64 {
        let today = self.clock.now().div_euclid(DAY) * DAY;
        self.usage.get(subject).filter(|u| u.day_start == today).map_or(0, |u| u.day_count)
    }

    /// Writes the counters changed since the last flush, in one transaction.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, Ordering};

    const FREE: Limits = Limits { per_minute: 60, per_day: 1_000 };
    /// 2026-11-23T10:00:00Z: the start of a minute.
    const T0: i64 = 1_795_428_000;

    fn limiter() -> (RateLimiter, Arc<AtomicI64>) {
        let now = Arc::new(AtomicI64::new(T0));
        (RateLimiter::new(Clock::manual(now.clone()), BanPolicy::default()), now)
    }

    #[test]
    fn remaining_counts_down_and_reset_is_the_window_end() {
        let (limiter, _) = limiter();
        assert_eq!(
            limiter.check("k", FREE),
            Verdict::Allowed(WindowState { limit: 60, remaining: 59, reset: T0 + 60 })
        );
        assert_eq!(limiter.check("k", FREE).window().remaining, 58);
        // Another subject has its own counters.
        assert_eq!(limiter.check("other", FREE).window().remaining, 59);
    }

    #[test]
    fn the_61st_request_in_a_minute_is_refused_until_the_minute_ends() {
        let (limiter, now) = limiter();
        for _ in 0..60 {
            assert!(matches!(limiter.check("k", FREE), Verdict::Allowed(_)));
        }
        now.store(T0 + 45, Ordering::SeqCst);
        let verdict = limiter.check("k", FREE);
        assert_eq!(
            verdict,
            Verdict::Limited { window: WindowState { limit: 60, remaining: 0, reset: T0 + 60 }, retry_after: 15 }
        );
        // Refusals do not count: the next minute starts fresh.
        now.store(T0 + 60, Ordering::SeqCst);
        assert_eq!(limiter.check("k", FREE).window(), WindowState { limit: 60, remaining: 59, reset: T0 + 120 });
    }

    #[test]
    fn the_day_binds_when_it_has_fewer_left() {
        let (limiter, now) = limiter();
        let tight = Limits { per_minute: 10, per_day: 12 };
        for _ in 0..10 {
            limiter.check("k", tight);
        }
        now.store(T0 + 60, Ordering::SeqCst);
        let day_end = T0 - T0.rem_euclid(DAY) + DAY;
        assert_eq!(
            limiter.check("k", tight),
            Verdict::Allowed(WindowState { limit: 12, remaining: 1, reset: day_end })
        );
        limiter.check("k", tight);
        let verdict = limiter.check("k", tight);
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
        assert!(matches!(limiter.check("k", one), Verdict::Allowed(_)));
        for _ in 0..10 {
            assert!(matches!(limiter.check("k", one), Verdict::Limited { .. }));
        }
        assert!(matches!(limiter.check("k", one), Verdict::Banned { retry_after: 900, .. }));
        // The ban outlasts the minute.
        now.store(T0 + 600, Ordering::SeqCst);
        assert!(matches!(limiter.check("k", one), Verdict::Banned { retry_after: 300, .. }));
        now.store(T0 + 900, Ordering::SeqCst);
        assert!(matches!(limiter.check("k", one), Verdict::Allowed(_)));
    }

    #[test]
    fn refusals_spread_over_windows_do_not_ban() {
        let (limiter, now) = limiter();
        let one = Limits { per_minute: 1, per_day: 100 };
        for minute in 0..3 {
            now.store(T0 + minute * 60, Ordering::SeqCst);
            limiter.check("k", one);
            for _ in 0..6 {
                assert!(matches!(limiter.check("k", one), Verdict::Limited { .. }));
            }
        }
    }
}
