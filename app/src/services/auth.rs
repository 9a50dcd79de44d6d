//! Who is calling, and may they: one place for REST handlers and server functions.
//!
//! Recognised keys are cached for half a second (the time each was read is kept with
//! it), so that authentication costs no database read on a busy key, and concurrent
//! first requests of one key read it once (quick_cache's placeholder, as in
//! `db::cache`). A revocation through this service drops the cache entry at
//! once; one made by another process (the CLI, another server) is seen within that time
//! (contract.md promises a second).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use std::time::{Duration, Instant};

use dashmap::DashMap;

use crate::db::Db;
use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::{Caller, Role};
use crate::services::clock::Clock;
use crate::services::keys::{self, KeyRow};

/// How long a key read from the database is believed.
const CACHE_FOR: Duration = Duration::from_millis(500);
/// Keys kept at most (a row is under 200 bytes).
const CACHE_MAX: usize = 100_000;

#[derive(Clone)]
pub struct Authenticator {
    db: Db,
    clock: Clock,
    /// prefix → the row and when it was read, believed for [`CACHE_FOR`].
    cache: Arc<quick_cache::sync::Cache<String, Looked>>,
    /// Prefixes revoked by this process: a lookup that read the row just before the
    /// revocation committed must not bring it back.
    revoked: Arc<DashMap<String, ()>>,
    /// Whether `revoked` has any entry (most processes never revoke a key, and then
    /// skip that look-up).
    any_revoked: Arc<AtomicBool>,
}

/// What the look-up of a key's prefix found.
#[derive(Clone)]
enum Looked {
    Known(Instant, Arc<KeyRow>),
    Unknown,
    Failed(AppError),
}

impl Looked {
    /// Whether it may answer a request without a look-up.
    fn is_believed(&self) -> bool {
        matches!(self, Looked::Known(read_at, _) if read_at.elapsed() < CACHE_FOR)
    }

    fn into_row(self) -> AppResult<Option<Arc<KeyRow>>> {
        match self {
            Looked::Known(_, row) => Ok(Some(row)),
            Looked::Unknown => Ok(None),
            Looked::Failed(err) => Err(err),
        }
    }
}

/// What a request presented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presented<'a> {
    Nothing,
    Key(&'a str),
}

impl Authenticator {
    pub fn new(db: Db, clock: Clock) -> Authenticator {
        Authenticator {
            db,
            clock,
            cache: Arc::new(quick_cache::sync::Cache::new(CACHE_MAX)),
            revoked: Arc::new(DashMap::new()),
            any_revoked: Arc::new(AtomicBool::new(false)),
        }
    }

    /// `Ok(None)` for no key; 401 `invalid_api_key` for a key that is unknown or revoked.
    pub async fn authenticate(&self, presented: Presented<'_>) -> AppResult<Option<Caller>> {
        let Presented::Key(key) = presented else { return Ok(None) };
        let row = self.row(key).await?.filter(|row| row.revoked_at.is_none() && row.matches(key));
        match row {
            Some(row) => Ok(Some(row.caller())),
            None => Err(invalid_key()),
        }
    }

    async fn row(&self, key: &str) -> AppResult<Option<Arc<KeyRow>>> {
        let Some(prefix) = keys::prefix_of(key) else { return Ok(None) };
        if self.any_revoked.load(Ordering::Acquire) && self.revoked.contains_key(prefix) {
            return Ok(None);
        }
        if let Some(Looked::Known(read_at, row)) = self.cache.get(prefix)
            && read_at.elapsed() < CACHE_FOR
        {
            return Ok(Some(row));
        }
        // Boxed: sqlx's futures are large, and only a miss needs them (see `cache`).
        Box::pin(self.read_row(prefix)).await
    }

    async fn read_row(&self, prefix: &str) -> AppResult<Option<Arc<KeyRow>>> {
        // A row too old to believe, or a look-up's outcome on its way out: gone, so that
        // this caller reads under a placeholder that callers of the same key wait for.
        // A placeholder another caller holds is left alone (`remove_if` sees only values).
        self.cache.remove_if(prefix, |looked| !looked.is_believed());
        let placeholder = match self.cache.get_value_or_guard_async(prefix).await {
            // What the caller this one waited for found.
            Ok(looked) => return looked.into_row(),
            Err(placeholder) => placeholder,
        };
        // Taken before the read: the row is believed for `CACHE_FOR` from then.
        let read_at = Instant::now();
        let looked = match keys::find_by_prefix(&self.db, prefix).await {
            Ok(Some(row)) => Looked::Known(read_at, Arc::new(row)),
            Ok(None) => Looked::Unknown,
            Err(err) => Looked::Failed(err),
        };
        // Handed to the callers waiting for this look-up. Only a known key stays:
        // random guesses must not fill memory, and errors are not kept. (Err: removed
        // meanwhile, by a revocation; this caller still answers with its read.)
        if placeholder.insert(looked.clone()).is_ok() && !matches!(looked, Looked::Known(..)) {
            self.cache.remove_if(prefix, |looked| !matches!(looked, Looked::Known(..)));
        }
        looked.into_row()
    }

    /// Revokes a key; it stops working with the next request.
    pub async fn revoke(&self, id: i64) -> AppResult<KeyRow> {
        let row = keys::revoke(&self.db, self.clock.now(), id).await?;
        self.forget(&row.prefix);
        Ok(row)
    }

    /// Gives a key a new secret (`keys::new_secret`, keeping the session `keep`); the
    /// old one stops working with the next request. The new key, shown once.
    pub async fn new_secret(&self, id: i64, keep: Option<&str>) -> AppResult<String> {
        let (key, old_prefix) = keys::new_secret(&self.db, id, keep).await?;
        self.forget(&old_prefix);
        Ok(key)
    }

    /// A prefix that no longer works: never believed again by this process (another
    /// sees it within [`CACHE_FOR`]).
    fn forget(&self, prefix: &str) {
        self.revoked.insert(prefix.to_owned(), ());
        self.any_revoked.store(true, Ordering::Release);
        self.cache.remove(prefix);
    }
}

pub fn invalid_key() -> AppError {
    AppError::new(ErrorCode::InvalidApiKey, "the API key is unknown or has been revoked")
}

pub fn missing_key() -> AppError {
    AppError::new(
        ErrorCode::MissingApiKey,
        "this request needs an API key: send it as X-API-Key (or Authorization: Bearer)",
    )
}

/// The role rule of contract.md: any valid key for customer operations, an admin key
/// for admin ones.
pub fn require(caller: Option<Caller>, role: Role) -> AppResult<Caller> {
    let caller = caller.ok_or_else(missing_key)?;
    match (role, caller.role) {
        (Role::Customer, _) | (Role::Admin, Role::Admin) => Ok(caller),
        (Role::Admin, Role::Customer) => Err(AppError::new(ErrorCode::Forbidden, "this needs an admin key")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Limits;

    fn caller(role: Role) -> Option<Caller> {
        Some(Caller { key_id: 1, role, limits: Limits { per_minute: 1, per_day: 1 } })
    }

    #[test]
    fn roles() {
        assert_eq!(require(None, Role::Customer).unwrap_err().code, ErrorCode::MissingApiKey);
        assert!(require(caller(Role::Customer), Role::Customer).is_ok());
        assert!(require(caller(Role::Admin), Role::Customer).is_ok());
        assert!(require(caller(Role::Admin), Role::Admin).is_ok());
        assert_eq!(require(caller(Role::Customer), Role::Admin).unwrap_err().code, ErrorCode::Forbidden);
    }
}
