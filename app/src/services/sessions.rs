//! Browser sessions: after signing in with a key, the browser holds a random token in
//! an HttpOnly cookie; only the token's hash is stored. The key itself never reaches
//! browser storage.

use crate::db::{Db, sql};
use crate::error::{AppError, AppResult, ErrorCode, PASSKEY_REFUSED};
use crate::model::Caller;
use crate::services::keys;

/// How long a session lasts: 30 days.
pub const SESSION_SECONDS: i64 = 30 * 86_400;
/// Sessions a key may have at once; signing in once more ends the oldest.
pub const SESSIONS_PER_KEY: i64 = 10;

/// What signed a browser in; each session remembers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opened<'a> {
    /// The API key's secret, as presented: checked again as the session is stored, so
    /// that a secret replaced meanwhile (`keys::new_secret`) opens none.
    Key(&'a str),
    /// A passkey: removing it ends the session, and one removed meanwhile opens none.
    Passkey(i64),
    /// A recovery code or a staff sign-in link (spent by now).
    Code,
    /// A key just made by signing up.
    SignUp,
}

impl Opened<'_> {
    fn stored(self) -> &'static str {
        match self {
            Opened::Key(_) => "key",
            Opened::Passkey(_) => "passkey",
            Opened::Code => "code",
            Opened::SignUp => "sign_up",
        }
    }
}

/// How a live session was opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opening {
    /// By the API key's secret (`Opened::Key`).
    pub by_key: bool,
    pub passkey: Option<i64>,
}

/// Starts a session for a key (already authenticated by the caller) and returns the
/// token. `opened` says how it signed in (a key's secret or a passkey is checked once
/// more in the session's own transaction: replaced or removed meanwhile, it opens no
/// session). `replacing` is the browser's current session, if it had one: it ends in the
/// same transaction, so signing in again leaves one session per browser. Beyond
/// [`SESSIONS_PER_KEY`] live sessions the oldest of the key's end.
pub async fn start(db: &Db, now: i64, key_id: i64, opened: Opened<'_>, replacing: Option<&str>) -> AppResult<String> {
    let token = keys::random_token::<32>()?;
    let token_hash = keys::hash(&token);
    let replaced = replacing.map(keys::hash);
    let secret = match opened {
        Opened::Key(key) => Some(keys::hash(key)),
        _ => None,
    };
    let passkey = match opened {
        Opened::Passkey(id) => Some(id),
        _ => None,
    };
    let opened_by = opened.stored();
    db.write(move |conn| {
        Box::pin(async move {
            if let Some(secret) = secret
                && !sql::keys::secret_is(conn, key_id, &secret).await?
            {
                return Err(crate::services::auth::invalid_key());
            }
            if let Some(passkey) = passkey
                && !sql::accounts::passkey_exists(conn, passkey).await?
            {
                return Err(AppError::new(ErrorCode::InvalidApiKey, PASSKEY_REFUSED));
            }
            if let Some(replaced) = replaced {
                sql::keys::delete_session(conn, &replaced).await?;
            }
            let expires_at = now + SESSION_SECONDS;
            sql::keys::insert_session(conn, &token_hash, key_id, passkey, opened_by, now, expires_at, SESSIONS_PER_KEY)
                .await
        })
    })
    .await?;
    Ok(token)
}

/// The caller behind a session token, if the session is live and its key not revoked.
pub async fn caller(db: &Db, now: i64, token: &str) -> AppResult<Option<Caller>> {
    let row = sql::keys::by_session(db, &keys::hash(token), now).await?;
    Ok(row.map(|row| row.caller()))
}

/// How the session of `token` was opened (`None`: there is no such session).
pub async fn opening(db: &Db, token: &str) -> AppResult<Option<Opening>> {
    let found = sql::keys::session_opening(db, &keys::hash(token)).await?;
    Ok(found.map(|(by, passkey)| Opening { by_key: by == "key", passkey }))
}

pub async fn end(db: &Db, token: &str) -> AppResult<()> {
    let token_hash = keys::hash(token);
    db.write(move |conn| Box::pin(async move { sql::keys::delete_session(conn, &token_hash).await })).await
}

/// The session cookie, as the store is served: over HTTPS (the `--public-url` setting
/// says so) it is `Secure` and named with the `__Host-` prefix, which a browser accepts
/// only from this exact origin over HTTPS, so that a sibling subdomain or a plain-HTTP
/// page cannot plant a session of its choosing. Over plain HTTP (a developer's
/// machine) neither would let the browser keep it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionCookie {
    pub secure: bool,
}

impl SessionCookie {
    pub fn name(self) -> &'static str {
        if self.secure { "__Host-petstore_session" } else { "petstore_session" }
    }

    /// `Set-Cookie` for a new session (`token`) or for signing out (`None`).
    pub fn set(self, token: Option<&str>) -> String {
        let (value, max_age) = match token {
            Some(token) => (token, SESSION_SECONDS),
            None => ("", 0),
        };
        let secure = if self.secure { "; Secure" } else { "" };
        format!("{}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}", self.name())
    }

    /// The session token in a `Cookie` header, if any.
    pub fn token_in(self, header: &str) -> Option<&str> {
        cookie_value(header, self.name())
    }

    /// The session token among a request's `Cookie` headers, if any.
    pub fn token_in_headers(self, headers: &axum::http::HeaderMap) -> Option<&str> {
        headers
            .get_all(axum::http::header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .find_map(|cookies| self.token_in(cookies))
    }
}

/// A cookie's value in a `Cookie` header (`None` when absent or empty).
pub fn cookie_value<'h>(header: &'h str, name: &str) -> Option<&'h str> {
    header
        .split(';')
        .map(str::trim)
        .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
        .filter(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_round_trip() {
        let plain = SessionCookie::default();
        let set = plain.set(Some("abc"));
        assert!(set.starts_with("petstore_session=abc;") && set.contains("HttpOnly") && set.contains("SameSite=Lax"));
        assert!(!set.contains("Secure"));
        assert_eq!(plain.token_in("a=1; petstore_session=abc; b=2"), Some("abc"));
        assert_eq!(plain.token_in("petstore_session="), None);
        assert_eq!(plain.token_in("other=1"), None);
        assert!(plain.set(None).contains("Max-Age=0"));
    }

    #[test]
    fn over_https_the_cookie_is_host_prefixed_and_secure() {
        let secure = SessionCookie { secure: true };
        let set = secure.set(Some("abc"));
        assert!(set.starts_with("__Host-petstore_session=abc;") && set.ends_with("; Secure"), "{set}");
        assert!(set.contains("Path=/") && !set.contains("Domain"), "the prefix's rules: {set}");
        // The unprefixed name (which a sibling subdomain could set) is not read.
        assert_eq!(secure.token_in("petstore_session=planted"), None);
        assert_eq!(secure.token_in("petstore_session=planted; __Host-petstore_session=mine"), Some("mine"));
    }
}
