//! The shared counters in Redis: one round trip a round (the requests of a subject that
//! arrived together: `shared`), the rule run by Redis itself
//! (a Lua script, atomic), so that servers counting the same subject at once never
//! both take the last unit of a window.
//!
//! Redis may go away. The first request that fails marks it down (said once in the
//! log); the servers then count in PostgreSQL, and a probe tries Redis every second
//! and marks it up again once it answers. Each server does so on its own, so for the
//! window in progress a subject may be allowed up to twice its limit: once in each
//! place (contract.md, "Several servers").

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::{BanPolicy, DAY, Outcome, Usage};
use crate::error::{AppError, AppResult};
use crate::model::Limits;

/// [`Usage::step`] in Lua, applied ARGV[6] times in a row (the requests of a subject
/// that arrived while the server's previous round trip for it ran): change it with the
/// Rust rule and the SQL one (`the_lua_rule_is_the_rust_rule` holds them to each
/// other). KEYS[1] is the subject's hash, KEYS[2] the set of bans (scored by their end);
/// ARGV: now, per minute, per day, refusals before a ban, ban seconds, requests.
/// Answers, per request in order, the outcome (0 allowed, 1 limited, 2 banned, 3 banned
/// now) and the counters after it: eight numbers each.
const STEP: &str = r"
local now = tonumber(ARGV[1])
local per_minute, per_day = tonumber(ARGV[2]), tonumber(ARGV[3])
local after_refusals, ban_seconds = tonumber(ARGV[4]), tonumber(ARGV[5])
local count = tonumber(ARGV[6])
local f = redis.call('HMGET', KEYS[1], 'ms', 'mc', 'ds', 'dc', 'r', 'ru', 'bu')
local ms, mc, ds, dc = tonumber(f[1]) or 0, tonumber(f[2]) or 0, tonumber(f[3]) or 0, tonumber(f[4]) or 0
local r, ru, bu = tonumber(f[5]) or 0, tonumber(f[6]) or 0, tonumber(f[7]) or 0
local answers = {}
local changed = false
for _ = 1, count do
  local minute = now - now % 60
  if ms < minute then ms = minute; mc = 0 end
  local day = now - now % 86400
  if ds < day then ds = day; dc = 0 end
  local outcome
  if bu > now then
    outcome = 2
  else
    changed = true
    local minute_left = math.max(per_minute - mc, 0)
    local day_left = math.max(per_day - dc, 0)
    if minute_left > 0 and day_left > 0 then
      mc = mc + 1
      dc = dc + 1
      outcome = 0
    else
      local blocked_until = 0
      if minute_left == 0 then blocked_until = ms + 60 end
      if day_left == 0 then blocked_until = math.max(blocked_until, ds + 86400) end
      if ru ~= blocked_until then r = 0; ru = blocked_until end
      if r >= after_refusals then
        bu = now + ban_seconds
        redis.call('ZADD', KEYS[2], bu, KEYS[1])
        outcome = 3
      else
        r = r + 1
        outcome = 1
      end
    end
  end
  for _, v in ipairs({outcome, ms, mc, ds, dc, r, ru, bu}) do answers[#answers + 1] = v end
end
if changed then
  redis.call('HSET', KEYS[1], 'ms', ms, 'mc', mc, 'ds', ds, 'dc', dc, 'r', r, 'ru', ru, 'bu', bu)
  redis.call('EXPIREAT', KEYS[1], math.max(ds + 86400, bu) + 60)
end
return answers
";

/// How long a request waits for Redis before counting in PostgreSQL instead.
const TIMEOUT: Duration = Duration::from_millis(500);

#[derive(Clone)]
pub struct Counters {
    connection: ConnectionManager,
    script: Arc<::redis::Script>,
    up: Arc<AtomicBool>,
    /// `petstore:<the store's identity>:`, before every name: two stores sharing one
    /// Redis count apart.
    namespace: Arc<str>,
}

impl Counters {
    /// Counters in the Redis at `url`, connected at the first use (a server starts
    /// whether or not Redis answers yet).
    pub fn open(url: &str, store: &str) -> AppResult<Counters> {
        Counters::open_waiting(url, store, TIMEOUT)
    }

    /// [`Counters::open`], waiting up to `timeout` for each answer. The tests that hold
    /// Redis to a rule wait longer than a server would: on a loaded test machine one
    /// answer in hundreds can take over `TIMEOUT`, and the server's way out (counting in
    /// PostgreSQL) is not what they test.
    fn open_waiting(url: &str, store: &str, timeout: Duration) -> AppResult<Counters> {
        let bad_url = |err: ::redis::RedisError| AppError::internal("PETSTORE_REDIS_URL", err);
        let client = ::redis::Client::open(url).map_err(bad_url)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            .set_number_of_retries(1);
        let connection = ConnectionManager::new_lazy_with_config(client, config).map_err(bad_url)?;
        Ok(Counters {
            connection,
            script: Arc::new(::redis::Script::new(STEP)),
            up: Arc::new(AtomicBool::new(true)),
            namespace: format!("petstore:{store}:").into(),
        })
    }

    /// The hash holding a subject's counters.
    fn key(&self, subject: &str) -> String {
        format!("{}limits:{subject}", self.namespace)
    }

    /// The set of running bans (members: the subjects' hashes).
    fn bans(&self) -> String {
        format!("{}bans", self.namespace)
    }

    /// Takes the counters a release before the namespace left (`petstore:limits:…`,
    /// named for no store) as this store's, once, so that an upgrade keeps today's
    /// usage and running bans; a name this store already counts under is left alone.
    /// Run beside the server at start: Redis may not answer yet, and then they are
    /// left to expire (counted from zero again for the windows in progress).
    pub async fn adopt_unnamed(self) {
        const UNNAMED: &str = "petstore:limits:";
        let mut connection = self.connection.clone();
        let mut cursor = 0_u64;
        let mut adopted = 0_usize;
        loop {
            let scanned: Result<(u64, Vec<String>), _> = ::redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(format!("{UNNAMED}*"))
                .arg("COUNT")
                .arg(1_000)
                .query_async(&mut connection)
                .await;
            let Ok((next, names)) = scanned else { return };
            for name in names {
                let subject = &name[UNNAMED.len()..];
                let renamed: Result<bool, _> =
                    ::redis::cmd("RENAMENX").arg(&name).arg(self.key(subject)).query_async(&mut connection).await;
                adopted += usize::from(renamed.unwrap_or(false));
            }
            if next == 0 {
                break;
            }
            cursor = next;
        }
        let _: Result<bool, _> =
            ::redis::cmd("RENAMENX").arg("petstore:bans").arg(self.bans()).query_async(&mut connection).await;
        if adopted > 0 {
            tracing::info!(adopted, "took the rate-limit counters of the previous release as this store's");
        }
    }

    /// Whether the last use of Redis worked (the counters are in Redis).
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Acquire)
    }

    /// Counts `count` requests of `subject` in a row (see `STEP`): per request, what
    /// the rule decided and the counters after it; `None` while Redis is down.
    pub async fn steps(
        &self,
        subject: &str,
        now: i64,
        limits: Limits,
        bans: BanPolicy,
        count: usize,
    ) -> Option<Vec<(Outcome, Usage)>> {
        if !self.is_up() {
            return None;
        }
        let started = Instant::now();
        let mut connection = self.connection.clone();
        let answer: Result<Vec<i64>, _> = self
            .script
            .key(self.key(subject))
            .key(self.bans())
            .arg(now)
            .arg(limits.per_minute)
            .arg(limits.per_day)
            .arg(bans.after_refusals)
            .arg(bans.seconds)
            .arg(count)
            .invoke_async(&mut connection)
            .await;
        metrics::histogram!("petstore_redis_seconds").record(started.elapsed().as_secs_f64());
        match answer {
            Ok(numbers) if numbers.len() == 8 * count => Some(
                numbers
                    .as_chunks::<8>()
                    .0
                    .iter()
                    .map(|[outcome, counters @ ..]| (Outcome::from_code(*outcome), usage(counters)))
                    .collect(),
            ),
            Ok(other) => {
                self.went_down(&format!("the script answered {other:?}"));
                None
            }
            Err(err) => {
                self.went_down(&err);
                None
            }
        }
    }

    /// A subject's counters as Redis has them; `None` while Redis is down.
    pub async fn read(&self, subject: &str) -> Option<Usage> {
        if !self.is_up() {
            return None;
        }
        let mut connection = self.connection.clone();
        let fields: Result<Vec<Option<i64>>, _> = ::redis::cmd("HMGET")
            .arg(self.key(subject))
            .arg(&["ms", "mc", "ds", "dc", "r", "ru", "bu"])
            .query_async(&mut connection)
            .await;
        match fields {
            Ok(fields) if fields.len() == 7 => Some(usage(&fields.iter().map(|f| f.unwrap_or(0)).collect::<Vec<_>>())),
            Ok(_) => Some(Usage::default()),
            Err(err) => {
                self.went_down(&err);
                None
            }
        }
    }

    /// How many subjects are banned at `now`; `None` while Redis is down.
    pub async fn banned_now(&self, now: i64) -> Option<usize> {
        if !self.is_up() {
            return None;
        }
        let mut connection = self.connection.clone();
        let counted: Result<(i64, usize), _> = ::redis::pipe()
            .cmd("ZREMRANGEBYSCORE")
            .arg(self.bans())
            .arg("-inf")
            .arg(now)
            .cmd("ZCARD")
            .arg(self.bans())
            .query_async(&mut connection)
            .await;
        match counted {
            Ok((_, banned)) => Some(banned),
            Err(err) => {
                self.went_down(&err);
                None
            }
        }
    }

    /// Redis failed: count in PostgreSQL until a probe finds it answering again.
    fn went_down(&self, err: &dyn std::fmt::Display) {
        if !self.up.swap(false, Ordering::AcqRel) {
            return;
        }
        metrics::gauge!("petstore_redis_up").set(0.0);
        tracing::error!(error = %err, "Redis does not answer: rate limits are counted in PostgreSQL until it does");
        let counters = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let mut connection = counters.connection.clone();
                let pong: Result<String, _> = ::redis::cmd("PING").query_async(&mut connection).await;
                if pong.is_ok() {
                    counters.up.store(true, Ordering::Release);
                    metrics::gauge!("petstore_redis_up").set(1.0);
                    tracing::warn!("Redis answers again: rate limits are counted there again");
                    return;
                }
            }
        });
    }
}

fn usage(counters: &[i64]) -> Usage {
    let [minute_start, minute_count, day_start, day_count, refusals, refusals_until, banned_until] =
        <[i64; 7]>::try_from(counters).unwrap_or_default();
    Usage::counted(minute_start, minute_count, day_start, day_count, refusals, refusals_until, banned_until)
}

/// The counters' day is `DAY` long in the script too.
const _: () = assert!(DAY == 86_400);

#[cfg(test)]
mod tests {
    use super::*;

    /// Counters for a test: as a server's, but patient (see [`Counters::open_waiting`]).
    fn open(url: &str, store: &str) -> Counters {
        Counters::open_waiting(url, store, Duration::from_secs(30)).unwrap()
    }

    /// Counters a release before the namespace left are taken as this store's once; a
    /// subject this store already counts is left as it is.
    #[tokio::test]
    async fn the_previous_release_s_counters_are_adopted_once() {
        let url = std::env::var("PETSTORE_TEST_REDIS")
            .unwrap_or_else(|_| panic!("PETSTORE_TEST_REDIS is not set: run through scripts/with-databases.sh"));
        let store = format!("adopt-{}", std::process::id());
        let redis = open(&url, &store);
        let mut connection = redis.connection.clone();
        let (old, counted) = (format!("old-{store}"), format!("counted-{store}"));
        for (name, count) in [(format!("petstore:limits:{old}"), 7), (format!("petstore:limits:{counted}"), 9)] {
            let _: () = ::redis::cmd("HSET")
                .arg(&name)
                .arg("ds")
                .arg(86_400)
                .arg("dc")
                .arg(count)
                .query_async(&mut connection)
                .await
                .unwrap();
        }
        let _: () = ::redis::cmd("HSET")
            .arg(redis.key(&counted))
            .arg("ds")
            .arg(86_400)
            .arg("dc")
            .arg(2)
            .query_async(&mut connection)
            .await
            .unwrap();
        redis.clone().adopt_unnamed().await;
        assert_eq!(redis.read(&old).await.unwrap().day_count, 7, "adopted");
        assert_eq!(redis.read(&counted).await.unwrap().day_count, 2, "its own count stays");
        let other = open(&url, "another-store");
        assert_eq!(other.read(&old).await.unwrap().day_count, 0, "another store's names are apart");
    }

    /// The Lua rule and the Rust rule ([`Usage::step`]) decide alike and leave the same
    /// counters (a real Redis: the test run's, `PETSTORE_TEST_REDIS`).
    #[tokio::test]
    async fn the_lua_rule_is_the_rust_rule() {
        let url = std::env::var("PETSTORE_TEST_REDIS")
            .unwrap_or_else(|_| panic!("PETSTORE_TEST_REDIS is not set: run through scripts/with-databases.sh"));
        let redis = open(&url, "lua-rule-test");
        // From the real time on: Redis expires the counters by it.
        let real = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        super::super::assert_transcribes_the_rule(real as i64, |subject, now, limits, bans, count| {
            let redis = redis.clone();
            async move { redis.steps(&subject, now, limits, bans, count).await.expect("Redis answers") }
        })
        .await;
    }
}
