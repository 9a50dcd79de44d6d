//! API keys, and the browser sessions signed in with them.

use super::{Conn, on_conn, on_pool};
use crate::db::paging::PageRequest;
use crate::db::{Db, Engine};
use crate::error::AppResult;
use crate::model::{Limits, Plan, Role};

/// A stored key as the authenticator needs it.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct KeyRow {
    pub id: i64,
    pub prefix: String,
    pub key_hash: Vec<u8>,
    pub name: String,
    pub role: Role,
    pub plan: Plan,
    pub per_minute: i64,
    pub per_day: i64,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

const COLUMNS: &str =
    "SELECT id, prefix, key_hash, name, role, plan, per_minute, per_day, created_at, revoked_at FROM api_keys";

/// A key to store: its hash only, never the key.
pub struct NewKeyRow<'a> {
    pub prefix: &'a str,
    pub key_hash: &'a [u8],
    pub name: &'a str,
    pub role: Role,
    pub plan: Plan,
    pub limits: Limits,
    pub created_at: i64,
}

pub async fn insert(conn: &mut Conn, key: &NewKeyRow<'_>) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar(
        "INSERT INTO api_keys (prefix, key_hash, name, role, plan, per_minute, per_day, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
    )
    .bind(key.prefix)
    .bind(key.key_hash)
    .bind(key.name)
    .bind(key.role)
    .bind(key.plan)
    .bind(i64::from(key.limits.per_minute))
    .bind(i64::from(key.limits.per_day))
    .bind(key.created_at)
    .fetch_one(c)
    .await)?)
}

pub async fn by_prefix(db: &Db, prefix: &str) -> AppResult<Option<KeyRow>> {
    let sql = format!("{COLUMNS} WHERE prefix = $1");
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(prefix).fetch_optional(pool).await)?)
}

pub async fn get(db: &Db, id: i64) -> AppResult<Option<KeyRow>> {
    let sql = format!("{COLUMNS} WHERE id = $1");
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(pool).await)?)
}

/// The key as a write transaction has left it.
pub async fn get_in(conn: &mut Conn, id: i64) -> AppResult<Option<KeyRow>> {
    let sql = format!("{COLUMNS} WHERE id = $1");
    Ok(on_conn!(conn, |c| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(c).await)?)
}

pub async fn list(db: &Db, page: PageRequest) -> AppResult<Vec<KeyRow>> {
    let sql = format!("{COLUMNS} WHERE id > $1 ORDER BY id LIMIT $2");
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(page.after)
        .bind(page.fetch_limit())
        .fetch_all(pool)
        .await)?)
}

pub async fn list_all(db: &Db) -> AppResult<Vec<KeyRow>> {
    let sql = format!("{COLUMNS} ORDER BY id");
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql)).fetch_all(pool).await)?)
}

pub async fn count(db: &Db) -> AppResult<i64> {
    Ok(on_pool!(db, |pool| sqlx::query_scalar("SELECT COUNT(*) FROM api_keys").fetch_one(pool).await)?)
}

/// A key's role and revocation time, inside a write transaction.
pub async fn role_and_revocation(conn: &mut Conn, id: i64) -> AppResult<Option<(Role, Option<i64>)>> {
    Ok(on_conn!(conn, |c| sqlx::query_as("SELECT role, revoked_at FROM api_keys WHERE id = $1")
        .bind(id)
        .fetch_optional(c)
        .await)?)
}

/// Active admin keys other than `id`.
pub async fn other_active_admins(conn: &mut Conn, id: i64) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar(
        "SELECT COUNT(*) FROM api_keys WHERE role = 'admin' AND revoked_at IS NULL AND id != $1"
    )
    .bind(id)
    .fetch_one(c)
    .await)?)
}

/// Revokes the key (a revoked key keeps its first revocation time) and ends its
/// sessions.
pub async fn revoke(conn: &mut Conn, id: i64, now: i64) -> AppResult<()> {
    on_conn!(conn, |c| {
        sqlx::query("UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2")
            .bind(now)
            .bind(id)
            .execute(&mut *c)
            .await?;
        sqlx::query("DELETE FROM sessions WHERE key_id = $1").bind(id).execute(c).await.map(|done| done.rows_affected())
    })?;
    Ok(())
}

/// Stores a session (its token's hash; the passkey that opened it, if one did) and ends
/// the key's oldest beyond `keep` live ones.
#[allow(clippy::too_many_arguments)]
pub async fn insert_session(
    conn: &mut Conn,
    token_hash: &[u8],
    key_id: i64,
    passkey_id: Option<i64>,
    opened_by: &str,
    now: i64,
    expires_at: i64,
    keep: i64,
) -> AppResult<()> {
    // The newest sessions stay (ties: the last started, by SQLite's rowid or
    // PostgreSQL's `seq`).
    let keep_newest = match conn.engine() {
        Engine::Sqlite => {
            "DELETE FROM sessions WHERE key_id = $1 AND rowid NOT IN
               (SELECT rowid FROM sessions WHERE key_id = $1 AND expires_at > $2
                ORDER BY created_at DESC, rowid DESC LIMIT $3)"
        }
        Engine::Postgres => {
            "DELETE FROM sessions WHERE key_id = $1 AND seq NOT IN
               (SELECT seq FROM sessions WHERE key_id = $1 AND expires_at > $2
                ORDER BY created_at DESC, seq DESC LIMIT $3)"
        }
    };
    on_conn!(conn, |c| {
        sqlx::query(
            "INSERT INTO sessions (token_hash, key_id, passkey_id, opened_by, created_at, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(token_hash)
        .bind(key_id)
        .bind(passkey_id)
        .bind(opened_by)
        .bind(now)
        .bind(expires_at)
        .execute(&mut *c)
        .await?;
        sqlx::query(keep_newest).bind(key_id).bind(now).bind(keep).execute(c).await.map(|done| done.rows_affected())
    })?;
    Ok(())
}

pub async fn delete_session(conn: &mut Conn, token_hash: &[u8]) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query("DELETE FROM sessions WHERE token_hash = $1")
        .bind(token_hash)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(())
}

/// Gives a key a new secret (`prefix` and `key_hash`): the old one stops working.
pub async fn replace_secret(conn: &mut Conn, id: i64, prefix: &str, key_hash: &[u8]) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query("UPDATE api_keys SET prefix = $1, key_hash = $2 WHERE id = $3")
        .bind(prefix)
        .bind(key_hash)
        .bind(id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(())
}

/// Ends the key's sessions that no passkey opened (its secret or a recovery code did),
/// but `keep`'s: how many ended.
pub async fn end_sessions_opened_without_passkey(conn: &mut Conn, key_id: i64, keep: &[u8]) -> AppResult<u64> {
    Ok(on_conn!(conn, |c| sqlx::query(
        "DELETE FROM sessions WHERE key_id = $1 AND passkey_id IS NULL AND token_hash != $2"
    )
    .bind(key_id)
    .bind(keep)
    .execute(c)
    .await
    .map(|done| done.rows_affected()))?)
}

/// What opened a session (`opened_by`) and the passkey, if one did.
pub async fn session_opening(db: &Db, token_hash: &[u8]) -> AppResult<Option<(String, Option<i64>)>> {
    Ok(on_pool!(db, |pool| sqlx::query_as("SELECT opened_by, passkey_id FROM sessions WHERE token_hash = $1")
        .bind(token_hash)
        .fetch_optional(pool)
        .await)?)
}

/// Whether key `id` is active and its secret's hash is still `key_hash` (not replaced).
pub async fn secret_is(conn: &mut Conn, id: i64, key_hash: &[u8]) -> AppResult<bool> {
    let found: i64 = on_conn!(conn, |c| sqlx::query_scalar(
        "SELECT COUNT(*) FROM api_keys WHERE id = $1 AND key_hash = $2 AND revoked_at IS NULL"
    )
    .bind(id)
    .bind(key_hash)
    .fetch_one(c)
    .await)?;
    Ok(found == 1)
}

/// The key of a live session whose key is not revoked.
pub async fn by_session(db: &Db, token_hash: &[u8], now: i64) -> AppResult<Option<KeyRow>> {
    Ok(on_pool!(db, |pool| sqlx::query_as(
        "SELECT k.id, k.prefix, k.key_hash, k.name, k.role, k.plan, k.per_minute, k.per_day, k.created_at, k.revoked_at
         FROM sessions s JOIN api_keys k ON k.id = s.key_id
         WHERE s.token_hash = $1 AND s.expires_at > $2 AND k.revoked_at IS NULL",
    )
    .bind(token_hash)
    .bind(now)
    .fetch_optional(pool)
    .await)?)
}
