//! The time the limiter and the key service see: the system's, or in tests one that
//! is set by hand (window rollovers and ban expiry without sleeping).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// Unix seconds, UTC.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> i64 + Send + Sync>);

impl Clock {
    pub fn system() -> Clock {
        // Straight from the system time: every API request reads it three times, and going
        // through a calendar date and back was a measurable part of that.
        Clock(Arc::new(|| {
            let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            since_epoch.map_or(0, |elapsed| elapsed.as_secs() as i64)
        }))
    }

    /// A clock that reads `now`; move it with `now.store(..)` / `fetch_add(..)`.
    pub fn manual(now: Arc<AtomicI64>) -> Clock {
        Clock(Arc::new(move || now.load(Ordering::SeqCst)))
    }

    pub fn now(&self) -> i64 {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::system()
    }
}

/// A Unix time as file names carry it: `20261127T201500Z` (UTC; sorted by name, sorted
/// by time).
pub fn compact_utc(unix: i64) -> String {
    let at = time::OffsetDateTime::from_unix_timestamp(unix).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let (year, month, day) = (at.year(), u8::from(at.month()), at.day());
    format!("{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z", at.hour(), at.minute(), at.second())
}

/// RFC 3339 text of a Unix time, as the API shows times.
pub fn rfc3339(unix: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default()
}
