//! Shoppers' accounts: their passkeys, recovery codes, and passkey ceremonies between
//! their two halves (`services::passkeys`).

use super::{Conn, on_conn, on_pool};
use crate::db::Db;
use crate::error::AppResult;

/// A ceremony's kind, as stored.
pub const SIGN_UP: &str = "sign_up";
pub const SIGN_IN: &str = "sign_in";
pub const ADD: &str = "add";

/// Stores a ceremony's state under its token's hash (the retention sweep drops those
/// never answered).
pub async fn insert_ceremony(
    conn: &mut Conn,
    token_hash: &[u8],
    kind: &str,
    state: &str,
    expires_at: i64,
) -> AppResult<()> {
    on_conn!(conn, |c| {
        sqlx::query("INSERT INTO passkey_ceremonies (token_hash, kind, state, expires_at) VALUES ($1, $2, $3, $4)")
            .bind(token_hash)
            .bind(kind)
            .bind(state)
            .bind(expires_at)
            .execute(c)
            .await
            .map(|done| done.rows_affected())
    })?;
    Ok(())
}

/// A ceremony taken out of the store: gone once read, whatever comes of it.
#[derive(sqlx::FromRow)]
pub struct TakenCeremony {
    pub state: String,
    pub expires_at: i64,
}

/// Takes (deletes and returns) the ceremony of `kind` under `token_hash`, if there is one.
pub async fn take_ceremony(conn: &mut Conn, token_hash: &[u8], kind: &str) -> AppResult<Option<TakenCeremony>> {
    Ok(on_conn!(conn, |c| sqlx::query_as(
        "DELETE FROM passkey_ceremonies WHERE token_hash = $1 AND kind = $2 RETURNING state, expires_at"
    )
    .bind(token_hash)
    .bind(kind)
    .fetch_optional(c)
    .await)?)
}

pub async fn insert_account(conn: &mut Conn, key_id: i64, user_handle: &[u8], now: i64) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar(
        "INSERT INTO accounts (key_id, user_handle, created_at) VALUES ($1, $2, $3) RETURNING id"
    )
    .bind(key_id)
    .bind(user_handle)
    .bind(now)
    .fetch_one(c)
    .await)?)
}

/// A passkey to store.
pub struct NewPasskeyRow<'a> {
    pub account_id: i64,
    pub credential_id: &'a [u8],
    pub passkey: &'a str,
    pub name: &'a str,
    pub created_at: i64,
}

pub async fn insert_passkey(conn: &mut Conn, row: &NewPasskeyRow<'_>) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar(
        "INSERT INTO passkeys (account_id, credential_id, passkey, name, created_at)
         VALUES ($1, $2, $3, $4, $5) RETURNING id"
    )
    .bind(row.account_id)
    .bind(row.credential_id)
    .bind(row.passkey)
    .bind(row.name)
    .bind(row.created_at)
    .fetch_one(c)
    .await)?)
}

pub async fn insert_recovery_codes(conn: &mut Conn, account_id: i64, code_hashes: &[[u8; 32]]) -> AppResult<()> {
    for code_hash in code_hashes {
        on_conn!(conn, |c| sqlx::query("INSERT INTO recovery_codes (code_hash, account_id) VALUES ($1, $2)")
            .bind(&code_hash[..])
            .bind(account_id)
            .execute(c)
            .await
            .map(|done| done.rows_affected()))?;
    }
    Ok(())
}

/// A stored passkey with the account and key it signs in to.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct PasskeyRow {
    pub id: i64,
    pub key_id: i64,
    pub user_handle: Vec<u8>,
    pub passkey: String,
    pub name: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
}

const PASSKEY_COLUMNS: &str = "SELECT p.id, a.key_id, a.user_handle, p.passkey, p.name, p.created_at, \
     p.last_used_at FROM passkeys p JOIN accounts a ON a.id = p.account_id";

pub async fn passkey_by_credential(db: &Db, credential_id: &[u8]) -> AppResult<Option<PasskeyRow>> {
    let sql = format!("{PASSKEY_COLUMNS} WHERE p.credential_id = $1");
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(credential_id).fetch_optional(pool).await)?)
}

/// An account's passkeys, oldest first.
pub async fn passkeys_of(db: &Db, account_id: i64) -> AppResult<Vec<PasskeyRow>> {
    let sql = format!("{PASSKEY_COLUMNS} WHERE p.account_id = $1 ORDER BY p.id");
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(account_id).fetch_all(pool).await)?)
}

/// Records a sign-in with a passkey: its state as the ceremony left it (the signature
/// counter) and when.
pub async fn passkey_used(conn: &mut Conn, id: i64, passkey: &str, now: i64) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query("UPDATE passkeys SET passkey = $1, last_used_at = $2 WHERE id = $3")
        .bind(passkey)
        .bind(now)
        .bind(id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(())
}

/// An account by the key it owns: its id and user handle.
pub async fn account_of_key(db: &Db, key_id: i64) -> AppResult<Option<(i64, Vec<u8>)>> {
    Ok(on_pool!(db, |pool| sqlx::query_as("SELECT id, user_handle FROM accounts WHERE key_id = $1")
        .bind(key_id)
        .fetch_optional(pool)
        .await)?)
}

/// The account of a key (its id and user handle), inside a write transaction.
pub async fn account_of_key_in(conn: &mut Conn, key_id: i64) -> AppResult<Option<(i64, Vec<u8>)>> {
    Ok(on_conn!(conn, |c| sqlx::query_as("SELECT id, user_handle FROM accounts WHERE key_id = $1")
        .bind(key_id)
        .fetch_optional(c)
        .await)?)
}

/// The key of the account an unused recovery code (or a sign-in link's, not expired at
/// `now`) belongs to.
pub async fn recovery_code_key(db: &Db, code_hash: &[u8], now: i64) -> AppResult<Option<i64>> {
    Ok(on_pool!(db, |pool| sqlx::query_scalar(
        "SELECT a.key_id FROM recovery_codes r JOIN accounts a ON a.id = r.account_id
         WHERE r.code_hash = $1 AND r.used_at IS NULL AND (r.expires_at IS NULL OR r.expires_at > $2)"
    )
    .bind(code_hash)
    .bind(now)
    .fetch_optional(pool)
    .await)?)
}

/// Spends a recovery code: whether it was there and unused (of two spending it at
/// once, one).
pub async fn spend_recovery_code(conn: &mut Conn, code_hash: &[u8], now: i64) -> AppResult<bool> {
    Ok(on_conn!(conn, |c| sqlx::query(
        "UPDATE recovery_codes SET used_at = $1
         WHERE code_hash = $2 AND used_at IS NULL AND (expires_at IS NULL OR expires_at > $1)"
    )
    .bind(now)
    .bind(code_hash)
    .execute(c)
    .await
    .map(|done| done.rows_affected() == 1))?)
}

/// Whether passkey `id` is still there (not removed).
pub async fn passkey_exists(conn: &mut Conn, id: i64) -> AppResult<bool> {
    let found: i64 = on_conn!(conn, |c| sqlx::query_scalar("SELECT COUNT(*) FROM passkeys WHERE id = $1")
        .bind(id)
        .fetch_one(c)
        .await)?;
    Ok(found == 1)
}

/// How many passkeys an account has.
pub async fn passkey_count(conn: &mut Conn, account_id: i64) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar("SELECT COUNT(*) FROM passkeys WHERE account_id = $1")
        .bind(account_id)
        .fetch_one(c)
        .await)?)
}

/// The name of an account's passkey, if the account has it.
pub async fn passkey_name(conn: &mut Conn, account_id: i64, passkey_id: i64) -> AppResult<Option<String>> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar("SELECT name FROM passkeys WHERE id = $1 AND account_id = $2")
        .bind(passkey_id)
        .bind(account_id)
        .fetch_optional(c)
        .await)?)
}

/// Deletes a passkey and ends the sessions it opened: how many ended.
pub async fn delete_passkey(conn: &mut Conn, passkey_id: i64) -> AppResult<u64> {
    let ended = on_conn!(conn, |c| sqlx::query("DELETE FROM sessions WHERE passkey_id = $1")
        .bind(passkey_id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    on_conn!(conn, |c| sqlx::query("DELETE FROM passkeys WHERE id = $1")
        .bind(passkey_id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(ended)
}

/// The account's own codes: a sign-in link's expires, and is no way back in to count on.
const UNUSED_CODES: &str =
    "SELECT COUNT(*) FROM recovery_codes WHERE account_id = $1 AND used_at IS NULL AND expires_at IS NULL";

/// Deletes an account's sign-in links' codes that expired before `now`.
pub async fn delete_expired_links(conn: &mut Conn, account_id: i64, now: i64) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query("DELETE FROM recovery_codes WHERE account_id = $1 AND expires_at <= $2")
        .bind(account_id)
        .bind(now)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(())
}

/// Stores a sign-in link's code (a recovery code that expires at `expires_at`).
pub async fn insert_link_code(conn: &mut Conn, account_id: i64, code_hash: &[u8], expires_at: i64) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query(
        "INSERT INTO recovery_codes (code_hash, account_id, expires_at) VALUES ($1, $2, $3)"
    )
    .bind(code_hash)
    .bind(account_id)
    .bind(expires_at)
    .execute(c)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(())
}

/// How many of an account's recovery codes are unused.
pub async fn unused_recovery_codes(conn: &mut Conn, account_id: i64) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar(UNUSED_CODES).bind(account_id).fetch_one(c).await)?)
}

/// How many of an account's recovery codes are unused (outside a transaction).
pub async fn unused_recovery_codes_of(db: &Db, account_id: i64) -> AppResult<i64> {
    Ok(on_pool!(db, |pool| sqlx::query_scalar(UNUSED_CODES).bind(account_id).fetch_one(pool).await)?)
}
