//! The counters several servers share (PostgreSQL, or Redis in front of it), counted in
//! rounds: while a server's round trip for a subject runs, that subject's next requests
//! wait together, and the next round counts them all in one statement (one Lua script
//! or one `rate_limit_steps` call), one after another as if they had come one at a
//! time. A busy key thus costs a round trip per round, not per request, and stays
//! exact: every decision is taken with the subject's counters locked in the shared
//! store, or on counters the store confirms unchanged.
//!
//! In PostgreSQL a round after another of the same server applies the rule here, to
//! the counters the last round left, and stores the result only if they are still
//! those (`sql::rate_limits::swap`, one plain UPDATE, a third of the database's work
//! of the rule in PL/pgSQL); if another server counted meanwhile, the round is
//! counted by `rate_limit_steps` instead.

use std::sync::Arc;
use std::time::Duration;

use dashmap::DashMap;
use tokio::sync::oneshot;

use super::{BanPolicy, Outcome, Usage, redis};
use crate::db::{Db, sql};
use crate::error::{AppError, AppResult};
use crate::model::Limits;
use crate::services::clock::Clock;

/// The most requests one round counts (the rest wait for the next): bounds a statement.
const MOST_PER_ROUND: usize = 512;

/// How long a round may take before its requests, and those waiting behind it, are
/// told 503 (as long as a writer waits for the store's lock; Redis gives up sooner, in
/// favour of PostgreSQL): a connection stuck on a dead peer must not hold a key's
/// requests until the operating system gives up on it.
const ROUND_TIMEOUT: Duration = Duration::from_secs(5);

/// What one request is told.
pub(super) type Counted = AppResult<Decided>;

pub(super) struct Decided {
    pub(super) outcome: Outcome,
    /// The counters after this request.
    pub(super) usage: Usage,
    /// The time and the limits it was counted at (the round's).
    pub(super) now: i64,
    pub(super) limits: Limits,
}

pub(super) struct Shared {
    pub(super) db: Db,
    /// The connections that count ([`crate::db::postgres::counters_pool`]).
    counting: sqlx::PgPool,
    pub(super) redis: Option<redis::Counters>,
    /// Per subject with a round running: the requests waiting for the next one. A
    /// subject is here exactly while its rounds run.
    waiting: DashMap<String, Waiting>,
}

struct Waiting {
    /// The newest request's limits (a plan changed a moment ago applies to the round).
    limits: Limits,
    requests: Vec<oneshot::Sender<Counted>>,
}

impl Shared {
    pub(super) fn new(db: Db, counting: sqlx::PgPool, redis: Option<redis::Counters>) -> Shared {
        Shared { db, counting, redis, waiting: DashMap::new() }
    }

    /// Counts one request of `subject`, in the next round for it.
    pub(super) async fn count(
        self: &Arc<Self>,
        subject: &str,
        limits: Limits,
        clock: &Clock,
        bans: BanPolicy,
    ) -> Counted {
        let (answer, told) = oneshot::channel();
        let first = match self.waiting.get_mut(subject) {
            Some(mut waiting) => {
                waiting.limits = limits;
                waiting.requests.push(answer);
                false
            }
            None => {
                // Two first requests at once: the entry API decides which one runs.
                let mut fresh = false;
                self.waiting
                    .entry(subject.to_owned())
                    .and_modify(|waiting| {
                        waiting.limits = limits;
                    })
                    .or_insert_with(|| {
                        fresh = true;
                        Waiting { limits, requests: Vec::new() }
                    })
                    .requests
                    .push(answer);
                fresh
            }
        };
        if first {
            // A task of its own: a request that goes away (its client hung up) must not
            // take the round of the others with it.
            let rounds = Rounds { shared: self.clone(), subject: subject.to_owned(), done: false };
            tokio::spawn(rounds.run(clock.clone(), bans));
        }
        told.await.unwrap_or_else(|_| Err(AppError::internal("rate limits", "the counting round ended early")))
    }

    /// `count` requests of `subject` in a row, in Redis if it answers, else in
    /// PostgreSQL. `known`: the counters this server's last round of the subject left
    /// in PostgreSQL, if any; updated to those this round leaves there.
    async fn steps(
        &self,
        subject: &str,
        now: i64,
        limits: Limits,
        bans: BanPolicy,
        count: usize,
        known: &mut Option<Usage>,
    ) -> AppResult<Vec<(Outcome, Usage)>> {
        if let Some(redis) = &self.redis
            && let Some(counted) = redis.steps(subject, now, limits, bans, count).await
        {
            *known = None;
            metrics::counter!("petstore_rate_limit_rounds_total", "how" => "redis").increment(1);
            return Ok(counted);
        }
        if let Some(before) = known.take() {
            let mut after = before;
            let counted: Vec<_> = (0..count).map(|_| (after.step(now, limits, bans), after)).collect();
            if sql::rate_limits::swap(&self.counting, subject, &before, &after).await? {
                *known = Some(after);
                metrics::counter!("petstore_rate_limit_rounds_total", "how" => "swap").increment(1);
                return Ok(counted);
            }
        }
        metrics::counter!("petstore_rate_limit_rounds_total", "how" => "locked").increment(1);
        let counted = sql::rate_limits::steps(&self.counting, subject, now, limits, bans, count).await?;
        *known = counted.last().map(|(_, usage)| *usage);
        Ok(counted)
    }
}

/// The rounds of one subject, until none is waiting. Dropped before that (a panic, the
/// runtime shutting down), it lets the subject go, so the waiting requests are told
/// and the next one starts rounds again.
struct Rounds {
    shared: Arc<Shared>,
    subject: String,
    done: bool,
}

impl Rounds {
    async fn run(mut self, clock: Clock, bans: BanPolicy) {
        let mut known = None;
        loop {
            // None waiting: the subject's rounds end (atomically with the check, so a
            // request arriving now starts new ones).
            if self.shared.waiting.remove_if(&self.subject, |_, waiting| waiting.requests.is_empty()).is_some() {
                self.done = true;
                return;
            }
            let (limits, requests) = {
                let Some(mut waiting) = self.shared.waiting.get_mut(&self.subject) else { return };
                let take = waiting.requests.len().min(MOST_PER_ROUND);
                (waiting.limits, waiting.requests.drain(..take).collect::<Vec<_>>())
            };
            let now = clock.now();
            let round = self.shared.steps(&self.subject, now, limits, bans, requests.len(), &mut known);
            let counted = tokio::time::timeout(ROUND_TIMEOUT, round)
                .await
                .unwrap_or_else(|_| Err(AppError::unavailable("the rate-limit counters do not answer; retry shortly")));
            match counted {
                Ok(counted) if counted.len() == requests.len() => {
                    for (answer, (outcome, usage)) in requests.into_iter().zip(counted) {
                        let _gone = answer.send(Ok(Decided { outcome, usage, now, limits }));
                    }
                }
                Ok(counted) => {
                    let err = AppError::internal(
                        "rate limits",
                        format!("{} requests counted, {} answers", requests.len(), counted.len()),
                    );
                    self.fail(requests, &err);
                }
                Err(err) => self.fail(requests, &err),
            }
        }
    }

    /// Tells a failed round's requests, and those that queued behind it meanwhile (they
    /// would most likely fail alike, after waiting as long again), what went wrong.
    fn fail(&mut self, requests: Vec<oneshot::Sender<Counted>>, err: &AppError) {
        tell_all(requests, err);
        if let Some(mut waiting) = self.shared.waiting.get_mut(&self.subject) {
            tell_all(std::mem::take(&mut waiting.requests), err);
        }
    }
}

fn tell_all(requests: Vec<oneshot::Sender<Counted>>, err: &AppError) {
    for answer in requests {
        let _gone = answer.send(Err(err.clone()));
    }
}

impl Drop for Rounds {
    fn drop(&mut self) {
        if !self.done {
            self.shared.waiting.remove(&self.subject);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::atomic::AtomicI64;

    use super::super::{RateLimiter, Verdict};
    use super::*;

    /// Sends `per_server` requests of one subject at once through each limiter, and
    /// checks that exactly the minute's 60 were allowed, each told its own place
    /// (remaining 59 down to 0, once each), then the 10 refusals before the ban, then
    /// the ban.
    async fn assert_exact(limiters: &[Arc<RateLimiter>], per_server: usize, context: &str) {
        let subject = format!("rounds:{}:{context}", std::process::id());
        let free = Limits { per_minute: 60, per_day: 1_000 };
        let requests: Vec<_> = (0..per_server)
            .flat_map(|_| limiters.iter().cloned())
            .map(|limiter| {
                let subject = subject.clone();
                tokio::spawn(async move { limiter.check(&subject, free).await.unwrap() })
            })
            .collect();
        let mut allowed_remaining = BTreeMap::new();
        let (mut limited, mut banned) = (0, 0);
        for request in requests {
            match request.await.unwrap() {
                Verdict::Allowed(window) => *allowed_remaining.entry(window.remaining).or_insert(0) += 1,
                Verdict::Limited { .. } => limited += 1,
                Verdict::Banned { .. } => banned += 1,
            }
        }
        let once_each: BTreeMap<u32, i32> = (0..60).map(|remaining| (remaining, 1)).collect();
        assert_eq!(allowed_remaining, once_each, "{context}");
        assert_eq!((limited, banned), (10, per_server * limiters.len() - 70), "{context}");
        // The last round lets the subject go just after its answers.
        for limiter in limiters {
            let waiting = &limiter.shared.as_ref().unwrap().waiting;
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while !waiting.is_empty() {
                assert!(std::time::Instant::now() < deadline, "{context}: the subject's rounds ended");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }

    /// Limiters as `servers` servers of one store have, counting in Redis if given.
    async fn servers(db: &Db, servers: usize, redis: Option<&str>) -> Vec<Arc<RateLimiter>> {
        // The real time: Redis expires counters by it. A fixed one, so that the requests
        // share a minute.
        let real = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let now = Arc::new(AtomicI64::new(real as i64));
        let mut limiters = Vec::new();
        for _ in 0..servers {
            let clock = Clock::manual(now.clone());
            limiters.push(Arc::new(RateLimiter::open(clock, BanPolicy::default(), db, redis).await.unwrap()));
        }
        limiters
    }

    /// 200 requests of one subject at once through one server, then 300 spread over
    /// three (whose rounds interleave: in PostgreSQL, most find the counters changed by
    /// another server and are counted again, locked), in PostgreSQL and in Redis.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rounds_decide_their_requests_one_after_another() {
        let redis = std::env::var("PETSTORE_TEST_REDIS")
            .unwrap_or_else(|_| panic!("PETSTORE_TEST_REDIS is not set: run through scripts/with-databases.sh"));
        let db = Db::connect(&crate::db::testing::new_postgres_database().await).await.unwrap();
        for redis in [None, Some(redis.as_str())] {
            let place = if redis.is_some() { "redis" } else { "postgres" };
            assert_exact(&servers(&db, 1, redis).await, 200, &format!("{place}, one server")).await;
            assert_exact(&servers(&db, 3, redis).await, 100, &format!("{place}, three servers")).await;
        }
    }
}
