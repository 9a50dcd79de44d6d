//! API keys: issuing, listing, revoking, and recognising a presented key.
//!
//! A key reads `psk_<prefix>_<secret>`: 40 random bits of prefix (stored, to find the
//! row) and 128 random bits of secret, both from the OS generator. Only the SHA-256 of
//! the whole key is stored; it is compared in constant time.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::db::{Db, sql};
use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::{ApiKey, Caller, CreatedApiKey, EventType, Limits, NewApiKey, Page, Plan, Role, SignUp};
use crate::services::access::{self, ClientAddr, Subject};
use crate::services::clock::rfc3339;
use crate::services::events::{self, Audience};
use crate::services::limits::{RateLimiter, WindowState};
use crate::services::paging::PageRequest;
use crate::services::validate;

const KEY_TAG: &str = "psk";

pub use crate::db::sql::keys::KeyRow;

impl KeyRow {
    pub fn limits(&self) -> Limits {
        Limits { per_minute: self.per_minute as u32, per_day: self.per_day as u32 }
    }

    pub fn caller(&self) -> Caller {
        Caller { key_id: self.id, role: self.role, limits: self.limits() }
    }

    pub fn to_api(&self) -> ApiKey {
        ApiKey {
            id: self.id,
            name: self.name.clone(),
            role: self.role,
            plan: self.plan,
            limits: self.limits(),
            created_at: rfc3339(self.created_at),
            revoked_at: self.revoked_at.map(rfc3339),
        }
    }

    /// Whether `presented` is this key (constant time in the secret).
    pub fn matches(&self, presented: &str) -> bool {
        let presented = hash(presented);
        if self.key_hash.len() != presented.len() {
            return false;
        }
        // Eight bytes at a time with no branch on them, and subtle's barrier once at the
        // end (its slice comparison puts one after every byte: 0.6 % of a pet read's
        // samples).
        let (words, stored) = (presented.as_chunks::<8>().0, self.key_hash.as_chunks::<8>().0);
        let differ = words
            .iter()
            .zip(stored)
            .fold(0u64, |differ, (a, b)| differ | (u64::from_ne_bytes(*a) ^ u64::from_ne_bytes(*b)));
        bool::from(differ.ct_eq(&0))
    }
}

pub fn hash(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// The prefix of a presented key, if it has the shape of one of ours.
pub fn prefix_of(presented: &str) -> Option<&str> {
    let rest = presented.strip_prefix(KEY_TAG)?.strip_prefix('_')?;
    let bytes = rest.as_bytes();
    // One to 32 hex digits, as `insert` makes them, then `_` and the secret: anything
    // else (a NUL, which PostgreSQL refuses in text) is no key of this store, without a
    // look-up. Read byte by byte, once (`split_once` then a check of the prefix was 350
    // of a read's instructions, by callgrind).
    let end = bytes.iter().take(33).position(|b| !b.is_ascii_hexdigit())?;
    // Only ASCII before `end`, so slicing there cannot split a character.
    (end > 0 && bytes[end] == b'_' && end + 1 < bytes.len()).then(|| &rest[..end])
}

pub fn random_bytes<const N: usize>() -> AppResult<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| AppError::internal("OS random generator", e))?;
    Ok(bytes)
}

/// A random token for sessions and keys: `N` bytes from the OS, base64url.
pub fn random_token<const N: usize>() -> AppResult<String> {
    Ok(URL_SAFE_NO_PAD.encode(random_bytes::<N>()?))
}

/// Admin creation (API, console, CLI): any role and plan; Enterprise needs limits.
pub async fn create(db: &Db, now: i64, new: NewApiKey) -> AppResult<CreatedApiKey> {
    let name = validate::name("name", &new.name)?;
    let limits = match (new.plan.limits(), new.limits) {
        (Some(fixed), None) => fixed,
        (Some(_), Some(_)) => {
            return Err(AppError::validation("limits", "only Enterprise keys take custom limits"));
        }
        (None, Some(custom)) => {
            if custom.per_minute == 0 || custom.per_day == 0 {
                return Err(AppError::validation("limits", "perMinute and perDay must be at least 1"));
            }
            custom
        }
        (None, None) => return Err(AppError::validation("limits", "an Enterprise key needs perMinute and perDay")),
    };
    insert(db, now, &name.text, new.role, new.plan, limits).await
}

/// Sign-ups one client IP may make: 5 a minute, 20 a day.
pub const SIGN_UPS_PER_IP: Limits = Limits { per_minute: 5, per_day: 20 };

/// Self-service sign-up (REST and storefront): a Free customer key, limited per client
/// address (`SIGN_UPS_PER_IP`, besides the limits of the request itself).
pub async fn sign_up(
    db: &Db,
    limiter: &RateLimiter,
    now: i64,
    client: ClientAddr,
    request: SignUp,
) -> AppResult<CreatedApiKey> {
    sign_up_counted(db, limiter, now, client, request).await.0
}

/// [`sign_up`], and the window of the address's sign-ups it was counted in (what the
/// API's rate-limit headers say on its answer, a refusal's included), once counted.
pub async fn sign_up_counted(
    db: &Db,
    limiter: &RateLimiter,
    now: i64,
    client: ClientAddr,
    request: SignUp,
) -> (AppResult<CreatedApiKey>, Option<WindowState>) {
    let name = match validate::name("name", request.name.as_deref().unwrap_or("Free key")) {
        Ok(name) => name,
        Err(err) => return (Err(err), None),
    };
    let window = match count_sign_up(limiter, client).await {
        Ok(window) => window,
        Err((err, window)) => return (Err(err), window),
    };
    (insert(db, now, &name.text, Role::Customer, Plan::Free, free_limits()).await, Some(window))
}

/// The limits of a self-service key.
pub fn free_limits() -> Limits {
    Plan::Free.limits().expect("Free has fixed limits")
}

/// Whether `client` may sign up now, counting nothing (`Err` with the refusal if not).
pub async fn may_sign_up(limiter: &RateLimiter, client: ClientAddr) -> AppResult<()> {
    let verdict = limiter.peek(&Subject::SignUp(client).id(), SIGN_UPS_PER_IP).await?;
    access::decide(verdict, "sign-ups from this address").map(|_| ()).map_err(|refused| refused.error)
}

/// Counts a sign-up from `client` (a key, or an account with its key), refused beyond
/// [`SIGN_UPS_PER_IP`]; the window it was counted in, also with a refusal.
pub async fn count_sign_up(
    limiter: &RateLimiter,
    client: ClientAddr,
) -> Result<WindowState, (AppError, Option<WindowState>)> {
    let verdict = limiter.check(&Subject::SignUp(client).id(), SIGN_UPS_PER_IP).await.map_err(|err| (err, None))?;
    access::decide(verdict, "sign-ups from this address").map_err(|refused| (refused.error, refused.window))
}

/// A new key: the secret, shown once, and what is stored of it.
pub struct NewKey {
    pub prefix: String,
    pub key: String,
    pub key_hash: [u8; 32],
}

impl NewKey {
    pub fn generate() -> AppResult<NewKey> {
        let prefix = hex(&random_bytes::<5>()?);
        let key = format!("{KEY_TAG}_{prefix}_{}", URL_SAFE_NO_PAD.encode(random_bytes::<16>()?));
        Ok(NewKey { key_hash: hash(&key), prefix, key })
    }
}

async fn insert(db: &Db, now: i64, name: &str, role: Role, plan: Plan, limits: Limits) -> AppResult<CreatedApiKey> {
    let NewKey { prefix, key, key_hash } = NewKey::generate()?;
    let owned_name = name.to_owned();
    let id: i64 = db
        .write(move |conn| {
            let (prefix, owned_name) = (prefix.clone(), owned_name.clone());
            Box::pin(async move {
                let row = sql::keys::NewKeyRow {
                    prefix: &prefix,
                    key_hash: &key_hash,
                    name: &owned_name,
                    role,
                    plan,
                    limits,
                    created_at: now,
                };
                sql::keys::insert(conn, &row).await
            })
        })
        .await?;
    let key_info = ApiKey { id, name: name.to_owned(), role, plan, limits, created_at: rfc3339(now), revoked_at: None };
    Ok(CreatedApiKey { key_info, key })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub async fn find_by_prefix(db: &Db, prefix: &str) -> AppResult<Option<KeyRow>> {
    sql::keys::by_prefix(db, prefix).await
}

pub async fn get(db: &Db, id: i64) -> AppResult<KeyRow> {
    sql::keys::get(db, id).await?.ok_or_else(|| AppError::not_found("key", id))
}

pub async fn list(db: &Db, page: PageRequest) -> AppResult<Page<KeyRow>> {
    let rows = sql::keys::list(db, page).await?;
    Ok(page.finish(rows, |row| row.id))
}

/// Every key, in id order (the CLI's list and the staff page).
pub async fn list_all(db: &Db) -> AppResult<Vec<KeyRow>> {
    sql::keys::list_all(db).await
}

/// Revokes a key (idempotent: a revoked key keeps its first revocation time) and ends
/// its browser sessions. The last active admin key is never revoked (409
/// `last_admin_key`): the staff would be locked out of the console and the API's admin
/// operations, with only the CLI on the server's machine to let them back in.
pub async fn revoke(db: &Db, now: i64, id: i64) -> AppResult<KeyRow> {
    let mut tx = db.begin_write().await?;
    let found = sql::keys::role_and_revocation(&mut tx, id).await?;
    let Some((role, revoked_at)) = found else { return Err(AppError::not_found("key", id)) };
    if role == Role::Admin && revoked_at.is_none() && sql::keys::other_active_admins(&mut tx, id).await? == 0 {
        return Err(AppError::conflict(
            ErrorCode::LastAdminKey,
            format!("key {id} is the last active admin key; create another admin key before revoking it"),
        ));
    }
    sql::keys::revoke(&mut tx, id, now).await?;
    let row = sql::keys::get_in(&mut tx, id).await?.ok_or_else(|| AppError::not_found("key", id))?;
    // Once, when it is revoked (revoking again changes nothing).
    if revoked_at.is_none() {
        events::record(&mut tx, EventType::KeyRevoked, &row.to_api(), Audience::Admins).await?;
    }
    tx.commit().await?;
    Ok(row)
}

/// What can be shown of a key from what is stored of it: `psk_<prefix>_`.
pub fn shown_start(prefix: &str) -> String {
    format!("{KEY_TAG}_{prefix}_")
}

/// A key's new secret (its owner's, from the account page: the old one is stored only
/// as a hash, so it cannot be shown again): the new key, shown once, and the old
/// prefix. The old secret stops working, and the sessions no passkey opened end (it may
/// have opened them), but `keep`, the owner's own. Orders, limits and bans stay the
/// key's: its id is the same.
pub async fn new_secret(db: &Db, id: i64, keep: Option<&str>) -> AppResult<(String, String)> {
    let NewKey { prefix, key, key_hash } = NewKey::generate()?;
    let keep = keep.map(hash).unwrap_or_default();
    let mut tx = db.begin_write().await?;
    let row = sql::keys::get_in(&mut tx, id).await?.filter(|row| row.revoked_at.is_none());
    let Some(row) = row else { return Err(AppError::not_found("key", id)) };
    sql::keys::replace_secret(&mut tx, id, &prefix, &key_hash).await?;
    sql::keys::end_sessions_opened_without_passkey(&mut tx, id, &keep).await?;
    tx.commit().await?;
    Ok((key, row.prefix))
}

pub async fn count(db: &Db) -> AppResult<i64> {
    sql::keys::count(db).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_matches_only_its_own_hash() {
        let key = "psk_0a1b2c3d4e_secret";
        let row = |key_hash: Vec<u8>| KeyRow {
            id: 1,
            prefix: "0a1b2c3d4e".into(),
            key_hash,
            name: "test".into(),
            role: Role::Admin,
            plan: Plan::Pro,
            per_minute: 1,
            per_day: 1,
            created_at: 0,
            revoked_at: None,
        };
        assert!(row(hash(key).to_vec()).matches(key));
        // A difference in any of the hash's four words, or a stored hash of another length.
        for byte in [0, 9, 18, 31] {
            let mut other = hash(key);
            other[byte] ^= 1;
            assert!(!row(other.to_vec()).matches(key), "byte {byte}");
        }
        assert!(!row(hash(key)[..31].to_vec()).matches(key));
        assert!(!row(Vec::new()).matches(key));
        assert!(!row(hash(key).to_vec()).matches("psk_0a1b2c3d4e_secreT"));
    }

    #[test]
    fn prefixes_are_read_only_from_well_formed_keys() {
        assert_eq!(prefix_of("psk_0a1b2c3d4e_secret"), Some("0a1b2c3d4e"));
        assert_eq!(prefix_of("psk_0a1b2c3d4e_se_cret"), Some("0a1b2c3d4e"));
        let longest = format!("psk_{}_secret", "F".repeat(32));
        assert_eq!(prefix_of(&longest), Some(&longest[4..36]));
        let long = format!("psk_{}_secret", "a".repeat(33));
        for bad in ["", "psk_", "psk__x", "psk_abc_", "xsk_abc_def", "psk_abc", "psk_abcg_x", "psk_ab\0c_x", &long] {
            assert_eq!(prefix_of(bad), None, "{bad}");
        }
    }

    #[test]
    fn tokens_are_random_and_long_enough() {
        let a = random_token::<16>().unwrap();
        let b = random_token::<16>().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 22, "16 bytes = 128 bits in base64url");
    }
}
