//! Browser sessions: after signing in with a key, the browser holds a random token in
//! an HttpOnly cookie; only the token's hash is stored. The key itself never reaches
//! browser storage.

use crate::db::{Pool, write};
use crate::error::AppResult;
use crate::model::Caller;
use crate::services::keys::{self, KeyRow};

/// How long a session lasts: 30 days.
pub const SESSION_SECONDS: i64 = 30 * 86_400;
pub const COOKIE: &str = "petstore_session";

/// Starts a session for a key (already authenticated by the caller); returns the token.
pub async fn start(pool: &Pool, now: i64, key_id: i64) -> AppResult<String> {
    let token = keys::random_token::<32>()?;
    let token_hash = keys::hash(&token);
    write(pool, move |conn| {
        Box::pin(async move {
            sqlx::query("INSERT INTO sessions (token_hash, key_id, created_at, expires_at) VALUES (?, ?, ?, ?)")
                .bind(token_hash.as_slice())
                .bind(key_id)
                .bind(now)
                .bind(now + SESSION_SECONDS)
                .execute(&mut *conn)
                .await?;
            Ok(())
        })
    })
    .await?;
    Ok(token)
}

/// The caller behind a session token, if the session is live and its key not revoked.
pub async fn caller(pool: &Pool, now: i64, token: &str) -> AppResult<Option<Caller>> {
    let row: Option<KeyRow> = sqlx::query_as(
        "SELECT k.id, k.prefix, k.key_hash, k.name, k.role, k.plan, k.per_minute, k.per_day, k.created_at, k.revoked_at
         FROM sessions s JOIN api_keys k ON k.id = s.key_id
         WHERE s.token_hash = ? AND s.expires_at > ? AND k.revoked_at IS NULL",
    )
    .bind(keys::hash(token).as_slice())
    .bind(now)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|row| row.caller()))
}

pub async fn end(pool: &Pool, token: &str) -> AppResult<()> {
    let token_hash = keys::hash(token);
    write(pool, move |conn| {
        Box::pin(async move {
            sqlx::query("DELETE FROM sessions WHERE token_hash = ?")
                .bind(token_hash.as_slice())
                .execute(&mut *conn)
                .await?;
            Ok(())
        })
    })
    .await
}

/// `Set-Cookie` for a new session (`token`) or for signing out (`None`).
pub fn cookie(token: Option<&str>) -> String {
    match token {
        Some(token) => format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax; Max-Age={SESSION_SECONDS}"),
        None => format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0"),
    }
}

/// The session token in a `Cookie` header, if any.
pub fn token_from_cookie_header(header: &str) -> Option<&str> {
    header
        .split(';')
        .map(str::trim)
        .find_map(|pair| pair.strip_prefix(COOKIE)?.strip_prefix('='))
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_round_trip() {
        let set = cookie(Some("abc"));
        assert!(set.contains("HttpOnly") && set.contains("SameSite=Lax"));
        assert_eq!(token_from_cookie_header("a=1; petstore_session=abc; b=2"), Some("abc"));
        assert_eq!(token_from_cookie_header("petstore_session="), None);
        assert_eq!(token_from_cookie_header("other=1"), None);
    }
}
