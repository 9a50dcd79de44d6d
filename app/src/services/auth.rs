//! Who is calling, and may they: one place for REST handlers and server functions.
//!
//! Recognised keys are cached for a second, so that authentication costs no database
//! read on a busy key. A revocation through this service drops the cache entry at
//! once; one made by another process (the CLI) is seen within that second.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use dashmap::DashMap;

use crate::db::Pool;
use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::{Caller, Role};
use crate::services::clock::Clock;
use crate::services::keys::{self, KeyRow};

const CACHE_SECONDS: i64 = 1;

#[derive(Clone)]
pub struct Authenticator {
    pool: Pool,
    clock: Clock,
    /// prefix → (the row, when it was read)
    cache: Arc<DashMap<String, (Arc<KeyRow>, i64)>>,
    /// Prefixes revoked by this process: a lookup that read the row just before the
    /// revocation committed must not bring it back.
    revoked: Arc<DashMap<String, ()>>,
    /// Whether `revoked` has any entry (most processes never revoke a key, and then
    /// skip that look-up).
    any_revoked: Arc<AtomicBool>,
}

/// What a request presented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presented<'a> {
    Nothing,
    Key(&'a str),
}

impl Authenticator {
    pub fn new(pool: Pool, clock: Clock) -> Authenticator {
        Authenticator {
            pool,
            clock,
            cache: Arc::new(DashMap::new()),
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
        let now = self.clock.now();
        if let Some(entry) = self.cache.get(prefix) {
            if now - entry.1 < CACHE_SECONDS {
                return Ok(Some(entry.0.clone()));
            }
        }
        // Unknown prefixes are not cached: random guesses must not fill memory. (Boxed:
        // sqlx's future is large, and only a miss needs it; see `cache`.)
        let row = Box::pin(keys::find_by_prefix(&self.pool, prefix)).await?.map(Arc::new);
        match &row {
            Some(row) => self.cache.insert(prefix.to_owned(), (row.clone(), now)),
            None => self.cache.remove(prefix).map(|(_, v)| v),
        };
        Ok(row)
    }

    /// Revokes a key; it stops working with the next request.
    pub async fn revoke(&self, id: i64) -> AppResult<KeyRow> {
        let row = keys::revoke(&self.pool, self.clock.now(), id).await?;
        self.revoked.insert(row.prefix.clone(), ());
        self.any_revoked.store(true, Ordering::Release);
        self.cache.remove(&row.prefix);
        Ok(row)
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
