//! API traffic per minute over the last hour, as a whole and per key, for the staff
//! dashboard. Kept in memory only: it is a picture of the recent past, not a record
//! (a restart starts it again, and each server of a cluster sees its own requests).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::model::TrafficSeries as Series;
use crate::services::clock::Clock;

/// Minutes kept (one hour).
pub const MINUTES: usize = 60;

#[derive(Default)]
struct Minute {
    /// Unix minute (seconds / 60).
    at: i64,
    total: u32,
    per_key: HashMap<i64, u32>,
}

/// The last hour's request counts, kept in a few shards: each thread counts into its
/// own (one lock per request, which two threads rarely want at once: a single lock was
/// bounced between the cores on every API request), and `last_hour` adds them up.
pub struct Traffic {
    clock: Clock,
    shards: [Mutex<VecDeque<Minute>>; SHARDS],
}

const SHARDS: usize = 8;

/// The shard of the calling thread.
fn shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    SHARD.with(|shard| *shard)
}

impl Traffic {
    pub fn new(clock: Clock) -> Traffic {
        Traffic { clock, shards: std::array::from_fn(|_| Mutex::new(VecDeque::with_capacity(MINUTES + 1))) }
    }

    /// Counts one API request, by the key that made it when it had a valid one.
    pub fn record(&self, key_id: Option<i64>) {
        let now = self.clock.now().div_euclid(60);
        let mut minutes = self.shards[shard()].lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if minutes.back().is_none_or(|last| last.at != now) {
            minutes.push_back(Minute { at: now, ..Minute::default() });
            while minutes.front().is_some_and(|first| first.at <= now - MINUTES as i64) {
                minutes.pop_front();
            }
        }
        let minute = minutes.back_mut().expect("pushed above");
        minute.total += 1;
        if let Some(key_id) = key_id {
            *minute.per_key.entry(key_id).or_default() += 1;
        }
    }

    /// The whole API's series, then the `busiest` keys' series (most requests first).
    pub fn last_hour(&self, busiest: usize) -> (Series, Vec<Series>) {
        let now = self.clock.now().div_euclid(60);
        let first = now - MINUTES as i64 + 1;
        let slot = |at: i64| usize::try_from(at - first).ok().filter(|&i| i < MINUTES);

        let mut total = vec![0; MINUTES];
        let mut per_key: HashMap<i64, Vec<u32>> = HashMap::new();
        for shard in &self.shards {
            let minutes = shard.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            for minute in minutes.iter() {
                let Some(i) = slot(minute.at) else { continue };
                total[i] += minute.total;
                for (&key_id, &count) in &minute.per_key {
                    per_key.entry(key_id).or_insert_with(|| vec![0; MINUTES])[i] += count;
                }
            }
        }
        let mut keys: Vec<Series> = per_key
            .into_iter()
            .map(|(key_id, per_minute)| Series { key_id: Some(key_id), label: String::new(), per_minute })
            .collect();
        keys.sort_by(|a, b| b.total().cmp(&a.total()).then(a.key_id.cmp(&b.key_id)));
        keys.truncate(busiest);
        (Series { key_id: None, label: "All requests".into(), per_minute: total }, keys)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};

    use super::*;

    #[test]
    fn counts_from_many_threads_add_up() {
        let now = Arc::new(AtomicI64::new(1_800_000_000));
        let traffic = Arc::new(Traffic::new(Clock::manual(now)));
        let threads: Vec<_> = (0..12)
            .map(|n| {
                let traffic = traffic.clone();
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        traffic.record(Some(n % 3));
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let (all, keys) = traffic.last_hour(5);
        assert_eq!(all.per_minute[MINUTES - 1], 1_200);
        assert_eq!(keys.iter().map(|s| s.total()).collect::<Vec<_>>(), [400, 400, 400]);
    }

    #[test]
    fn counts_per_minute_and_forgets_after_an_hour() {
        let now = Arc::new(AtomicI64::new(1_800_000_000));
        let traffic = Traffic::new(Clock::manual(now.clone()));
        traffic.record(Some(1));
        traffic.record(Some(1));
        traffic.record(None);
        now.fetch_add(60, Ordering::SeqCst);
        traffic.record(Some(2));

        let (all, keys) = traffic.last_hour(5);
        assert_eq!(all.per_minute.len(), MINUTES);
        assert_eq!(&all.per_minute[MINUTES - 2..], &[3, 1]);
        assert_eq!(keys.iter().map(|s| (s.key_id, s.total())).collect::<Vec<_>>(), [(Some(1), 2), (Some(2), 1)]);
        assert_eq!(traffic.last_hour(1).1.len(), 1, "only the busiest keys");

        now.fetch_add(60 * 60, Ordering::SeqCst);
        let (all, keys) = traffic.last_hour(5);
        assert_eq!(all.total(), 0, "an hour later nothing is left");
        assert!(keys.is_empty());
    }
}
