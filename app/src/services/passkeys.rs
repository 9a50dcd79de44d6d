//! Shoppers' accounts, signed in with passkeys (WebAuthn, checked by `webauthn-rs`).
//!
//! An account owns exactly one key. Signing up makes both (a Free customer key, counted
//! as a sign-up from the address, and ten recovery codes); a key made otherwise (from
//! the API, or an admin's for the console) gets its account with its first passkey,
//! without recovery codes (the key itself is its way back in). Orders, limits, bans,
//! idempotency and events stay the key's, so everything after signing in is what
//! signing in with the key gives.
//!
//! Each ceremony has two halves. `begin_*` stores webauthn-rs's state (the challenge)
//! in the database under the hash of a random token, and hands the browser the token
//! and the options for `navigator.credentials`; `finish_*` takes that state out (once:
//! a second answer to one challenge finds nothing) and checks the browser's answer
//! against it. The state lives in the database, not in one server's memory, so the
//! second half may reach another server. A ceremony expires after
//! [`CEREMONY_SECONDS`].
//!
//! Signing in needs no user name (discoverable credentials: the passkey names its
//! account by the user handle), and every refusal reads the same whether an account
//! exists or not. Each failed sign-in, with a passkey or a recovery code, counts as a
//! failed attempt from the address (throttled, then banned, as a wrong key is).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use webauthn_rs::prelude::{
    DiscoverableAuthentication, DiscoverableKey, Passkey, PasskeyRegistration, PublicKeyCredential,
    RegisterPublicKeyCredential, Url, Uuid, Webauthn, WebauthnBuilder,
};

use crate::db::{Db, sql};
use crate::error::{AppError, AppResult, ErrorCode, PASSKEY_REFUSED, RECOVERY_CODE_REFUSED};
use crate::model::{AccountView, Caller, NewAccount, PasskeyView, Plan, RemovedPasskey, Role};
use crate::services::access::{Access, ClientAddr};
use crate::services::keys::{self, NewKey};

/// How long a ceremony may take, from its options to the browser's answer: 5 minutes.
pub const CEREMONY_SECONDS: i64 = 300;
/// Recovery codes made with an account.
pub const RECOVERY_CODES: usize = 10;
/// The letters of a recovery code: no 0/o, 1/l look-alikes; 32 of them, 5 bits each.
const CODE_ALPHABET: &[u8; 32] = b"23456789abcdefghijkmnpqrstuvwxyz";
/// A recovery code's letters (60 bits), shown in groups of four.
const CODE_LETTERS: usize = 12;

/// The store as a WebAuthn relying party.
pub struct RelyingParty {
    webauthn: Webauthn,
}

impl RelyingParty {
    /// From the store's origin (`--public-url`, else the address it listens on). A
    /// relying party is a domain, never an IP address: a store served on an address
    /// (a developer's `make run` on 127.0.0.1) is `localhost` on the same port, the
    /// name passkeys must be used with there.
    pub fn new(origin: &str) -> AppResult<RelyingParty> {
        let refused = |problem: String| AppError::internal("passkeys", format!("origin {origin}: {problem}"));
        let mut url = Url::parse(origin).map_err(|err| refused(err.to_string()))?;
        let rp_id = match url.host() {
            Some(url::Host::Domain(name)) => name.to_owned(),
            _ => {
                url.set_host(Some("localhost")).map_err(|err| refused(err.to_string()))?;
                "localhost".to_owned()
            }
        };
        let webauthn = WebauthnBuilder::new(&rp_id, &url)
            .and_then(|builder| {
                builder
                    .rp_name("Pet Store")
                    .timeout(std::time::Duration::from_secs(crate::model::PASSKEY_WAIT_SECONDS))
                    .build()
            })
            .map_err(|err| refused(err.to_string()))?;
        Ok(RelyingParty { webauthn })
    }

    /// The origin passkeys are used from (`http://localhost:3000` for a store on 127.0.0.1:3000).
    pub fn origin(&self) -> String {
        self.webauthn.get_allowed_origins().first().map(|url| url.origin().ascii_serialization()).unwrap_or_default()
    }
}

/// The first half of a ceremony, for the browser: its options are for
/// `PublicKeyCredential.parseCreationOptionsFromJSON` / `parseRequestOptionsFromJSON`.
pub type Ceremony = crate::model::PasskeyCeremony;

#[derive(Serialize, Deserialize)]
struct SignUpState {
    user_handle: Uuid,
    registration: PasskeyRegistration,
}

#[derive(Serialize, Deserialize)]
struct AddState {
    key_id: i64,
    user_handle: Uuid,
    registration: PasskeyRegistration,
}

/// Starts creating an account with a passkey, if `client` may sign up now (checked
/// first, counting nothing: refused only at the end, the device would keep a passkey
/// that signs in nowhere).
pub async fn begin_sign_up(
    db: &Db,
    access: &Access,
    rp: &RelyingParty,
    now: i64,
    client: ClientAddr,
) -> AppResult<Ceremony> {
    keys::may_sign_up(&access.limiter, client).await?;
    let user_handle = Uuid::from_bytes(keys::random_bytes::<16>()?);
    let (user_name, display_name) = names(user_handle, now);
    let (options, registration) = rp
        .webauthn
        .start_passkey_registration(user_handle, &user_name, &display_name, None)
        .map_err(|err| AppError::internal("passkey registration", err.to_string()))?;
    let state = SignUpState { user_handle, registration };
    store(db, now, sql::accounts::SIGN_UP, &state, creation_options(&options)?).await
}

/// Finishes creating an account: checks the browser's new passkey against the
/// ceremony, counts a sign-up from `client`, and stores a Free customer key, the
/// account, the passkey and its recovery codes in one transaction.
pub async fn finish_sign_up(
    db: &Db,
    access: &Access,
    rp: &RelyingParty,
    now: i64,
    client: ClientAddr,
    token: &str,
    credential: &str,
) -> AppResult<NewAccount> {
    let state: SignUpState = take(db, now, sql::accounts::SIGN_UP, token).await?.ok_or_else(ceremony_over)?;
    let credential: RegisterPublicKeyCredential = parse_credential(credential)?;
    let passkey = rp.webauthn.finish_passkey_registration(&credential, &state.registration).map_err(unchecked)?;
    keys::count_sign_up(&access.limiter, client).await.map_err(|(err, _)| err)?;
    let codes: Vec<String> = (0..RECOVERY_CODES).map(|_| recovery_code()).collect::<AppResult<_>>()?;
    let code_hashes: Vec<[u8; 32]> = codes.iter().map(|code| keys::hash(code)).collect();
    // The key's secret is not shown: the account signs in with its passkey.
    let new_key = NewKey::generate()?;
    let passkey_json = to_json(&passkey)?;
    let credential_id = passkey.cred_id().to_vec();
    let user_handle = state.user_handle.as_bytes().to_vec();
    let limits = keys::free_limits();
    let (key_id, passkey_id) = db
        .write(move |conn| {
            let (prefix, key_hash, passkey_json, credential_id, user_handle, code_hashes) = (
                new_key.prefix.clone(),
                new_key.key_hash,
                passkey_json.clone(),
                credential_id.clone(),
                user_handle.clone(),
                code_hashes.clone(),
            );
            Box::pin(async move {
                let row = sql::keys::NewKeyRow {
                    prefix: &prefix,
                    key_hash: &key_hash,
                    name: "Account",
                    role: Role::Customer,
                    plan: Plan::Free,
                    limits,
                    created_at: now,
                };
                let key_id = sql::keys::insert(conn, &row).await?;
                let account_id = sql::accounts::insert_account(conn, key_id, &user_handle, now).await?;
                let passkey = sql::accounts::NewPasskeyRow {
                    account_id,
                    credential_id: &credential_id,
                    passkey: &passkey_json,
                    name: FIRST_PASSKEY,
                    created_at: now,
                };
                let passkey_id = sql::accounts::insert_passkey(conn, &passkey).await?;
                // It signs this browser in at once: used now.
                sql::accounts::passkey_used(conn, passkey_id, &passkey_json, now).await?;
                sql::accounts::insert_recovery_codes(conn, account_id, &code_hashes).await?;
                Ok((key_id, passkey_id))
            })
        })
        .await?;
    let caller = Caller { key_id, role: Role::Customer, limits };
    Ok(NewAccount { caller, recovery_codes: codes, passkey_id })
}

/// How the device's passkey list names the account (no user name is asked for): the
/// store, when the account was made and a few letters of its user handle, so that two
/// accounts on one device can be told apart.
fn names(user_handle: Uuid, now: i64) -> (String, String) {
    let day = crate::services::clock::rfc3339(now).chars().take(10).collect::<String>();
    let short: String = user_handle.simple().to_string().chars().take(6).collect();
    (format!("shopper-{short}"), format!("Pet Store shopper since {day} ({short})"))
}

/// The name of the passkey an account is made with.
const FIRST_PASSKEY: &str = "The passkey this account was made with";

/// Starts signing in with a passkey: no user name, the browser offers the passkeys it
/// has for this store.
pub async fn begin_sign_in(db: &Db, rp: &RelyingParty, now: i64) -> AppResult<Ceremony> {
    let (options, authentication) = rp
        .webauthn
        .start_discoverable_authentication()
        .map_err(|err| AppError::internal("passkey sign-in", err.to_string()))?;
    store(db, now, sql::accounts::SIGN_IN, &authentication, request_options(&options.public_key)?).await
}

/// Finishes signing in: the caller of the account's key and the passkey's id, once the
/// passkey's answer is checked against the ceremony and the key is admitted (not
/// revoked, not banned). Any failure is one answer, and a failed attempt from `client`.
pub async fn finish_sign_in(
    db: &Db,
    access: &Access,
    rp: &RelyingParty,
    now: i64,
    client: ClientAddr,
    token: &str,
    credential: &str,
) -> AppResult<(Caller, i64)> {
    match check_sign_in(db, rp, now, token, credential).await {
        Ok(Some((key_id, passkey_id))) => {
            admit_key(db, access, client, key_id, passkey_refused).await.map(|caller| (caller, passkey_id))
        }
        Ok(None) => {
            access.failed_sign_in(client).await?;
            Err(passkey_refused())
        }
        Err(err) => Err(err),
    }
}

/// The key a passkey signs in to and the passkey, or `None` when the answer does not
/// check.
async fn check_sign_in(
    db: &Db,
    rp: &RelyingParty,
    now: i64,
    token: &str,
    credential: &str,
) -> AppResult<Option<(i64, i64)>> {
    let Some(state) = take::<DiscoverableAuthentication>(db, now, sql::accounts::SIGN_IN, token).await? else {
        return Ok(None);
    };
    let Ok(credential) = serde_json::from_str::<PublicKeyCredential>(credential) else { return Ok(None) };
    let Ok((user_handle, credential_id)) = rp.webauthn.identify_discoverable_authentication(&credential) else {
        return Ok(None);
    };
    let Some(row) = sql::accounts::passkey_by_credential(db, credential_id).await? else { return Ok(None) };
    if row.user_handle != user_handle.as_bytes() {
        return Ok(None);
    }
    let mut passkey: Passkey = from_json(&row.passkey)?;
    let Ok(result) =
        rp.webauthn.finish_discoverable_authentication(&credential, state, &[DiscoverableKey::from(&passkey)])
    else {
        return Ok(None);
    };
    passkey.update_credential(&result);
    let passkey_json = to_json(&passkey)?;
    db.write(move |conn| {
        let passkey_json = passkey_json.clone();
        Box::pin(async move { sql::accounts::passkey_used(conn, row.id, &passkey_json, now).await })
    })
    .await?;
    Ok(Some((row.key_id, row.id)))
}

/// Signs in with a recovery code: each works once, spent once its key is admitted (a
/// key over its limits keeps the code for later). A code that does not work is a failed
/// attempt from `client`.
pub async fn recover(db: &Db, access: &Access, now: i64, client: ClientAddr, code: &str) -> AppResult<Caller> {
    let code_hash = keys::hash(&normalized_code(code));
    let Some(key_id) = sql::accounts::recovery_code_key(db, &code_hash, now).await? else {
        access.failed_sign_in(client).await?;
        return Err(recovery_refused());
    };
    let caller = admit_key(db, access, client, key_id, recovery_refused).await?;
    let spent = db
        .write(move |conn| Box::pin(async move { sql::accounts::spend_recovery_code(conn, &code_hash, now).await }))
        .await?;
    // Spent meanwhile by another attempt with the same code: that one signed in.
    if spent { Ok(caller) } else { Err(recovery_refused()) }
}

/// How long a sign-in link staff issue works: a day.
pub const LINK_SECONDS: i64 = 86_400;
/// A sign-in link's code: twenty letters (100 bits), in groups of four.
const LINK_LETTERS: usize = 20;

/// A one-time sign-in link for key `key_id`'s account (made now for a key that has
/// none), for staff to send a shopper who lost every way in: its address on the
/// store's passkey origin, shown once. It is a recovery code that expires after
/// [`LINK_SECONDS`] (stored as its hash), so it signs in once, on the account page,
/// which offers adding a passkey; it is not counted among the account's codes.
pub async fn issue_sign_in_link(db: &Db, rp: &RelyingParty, now: i64, key_id: i64) -> AppResult<String> {
    let row = keys::get(db, key_id).await?;
    if row.revoked_at.is_some() {
        return Err(AppError::validation("id", format!("key {key_id} is revoked: a link would not sign in")));
    }
    let code = random_code(LINK_LETTERS)?;
    let code_hash = keys::hash(&code);
    let new_handle = keys::random_bytes::<16>()?.to_vec();
    db.write(move |conn| {
        let new_handle = new_handle.clone();
        Box::pin(async move {
            let account_id = match sql::accounts::account_of_key_in(conn, key_id).await? {
                Some((id, _)) => id,
                None => sql::accounts::insert_account(conn, key_id, &new_handle, now).await?,
            };
            sql::accounts::delete_expired_links(conn, account_id, now).await?;
            sql::accounts::insert_link_code(conn, account_id, &code_hash, now + LINK_SECONDS).await
        })
    })
    .await?;
    Ok(format!("{}/sign-in?code={code}", rp.origin()))
}

/// Starts adding a passkey to the signed-in caller's account (made now for a key that
/// has none: an admin's key for the console, a key from the API).
pub async fn begin_adding(db: &Db, rp: &RelyingParty, now: i64, caller: Caller) -> AppResult<Ceremony> {
    let account = sql::accounts::account_of_key(db, caller.key_id).await?;
    let user_handle = match &account {
        Some((_, handle)) => Uuid::from_slice(handle).map_err(|err| AppError::internal("account", err.to_string()))?,
        None => Uuid::from_bytes(keys::random_bytes::<16>()?),
    };
    let existing = match account {
        Some((account_id, _)) => sql::accounts::passkeys_of(db, account_id).await?,
        None => Vec::new(),
    };
    let exclude = existing
        .iter()
        .map(|row| from_json::<Passkey>(&row.passkey).map(|passkey| passkey.cred_id().clone()))
        .collect::<AppResult<Vec<_>>>()?;
    let (user_name, display_name) = names(user_handle, now);
    let (options, registration) = rp
        .webauthn
        .start_passkey_registration(user_handle, &user_name, &display_name, Some(exclude))
        .map_err(|err| AppError::internal("passkey registration", err.to_string()))?;
    let state = AddState { key_id: caller.key_id, user_handle, registration };
    store(db, now, sql::accounts::ADD, &state, creation_options(&options)?).await
}

/// Finishes adding a passkey named `name` to the caller's account.
pub async fn finish_adding(
    db: &Db,
    rp: &RelyingParty,
    now: i64,
    caller: Caller,
    token: &str,
    credential: &str,
    name: &str,
) -> AppResult<()> {
    let name = crate::services::validate::name("name", name)?.text;
    let state: AddState = take(db, now, sql::accounts::ADD, token).await?.ok_or_else(ceremony_over)?;
    if state.key_id != caller.key_id {
        return Err(ceremony_over());
    }
    let credential: RegisterPublicKeyCredential = parse_credential(credential)?;
    let passkey = rp.webauthn.finish_passkey_registration(&credential, &state.registration).map_err(unchecked)?;
    let passkey_json = to_json(&passkey)?;
    let credential_id = passkey.cred_id().to_vec();
    let user_handle = state.user_handle.as_bytes().to_vec();
    db.write(move |conn| {
        let (passkey_json, credential_id, user_handle, name) =
            (passkey_json.clone(), credential_id.clone(), user_handle.clone(), name.clone());
        Box::pin(async move {
            let account_id = match sql::accounts::account_of_key_in(conn, caller.key_id).await? {
                // Another ceremony made the account meanwhile, with a user handle of its
                // own, which this passkey does not carry: it would never sign in.
                Some((_, handle)) if handle != user_handle => return Err(ceremony_over()),
                Some((id, _)) => id,
                None => sql::accounts::insert_account(conn, caller.key_id, &user_handle, now).await?,
            };
            let row = sql::accounts::NewPasskeyRow {
                account_id,
                credential_id: &credential_id,
                passkey: &passkey_json,
                name: &name,
                created_at: now,
            };
            sql::accounts::insert_passkey(conn, &row).await.map(|_| ())
        })
    })
    .await
}

/// Whether a session `by_key` (opened with the API key's secret) is kept from changing
/// an account with `passkeys` passkeys: once it has one, changing its passkeys or its
/// key needs a session a passkey or a recovery code opened, so that a leaked API key,
/// which signs in, cannot lock the owner out. (A key's account without a passkey has
/// only its key to prove who owns it.)
fn locked(by_key: bool, passkeys: usize) -> bool {
    by_key && passkeys > 0
}

/// Whether a passkey may be removed from an account with `passkeys` passkeys and
/// `codes` unused recovery codes: never the last one without a way back in.
fn removable(passkeys: usize, codes: i64) -> bool {
    passkeys > 1 || codes > 0
}

/// Refuses (403) a change to the caller's passkeys or key from a session `by_key`
/// once the account has a passkey ([`locked`]).
pub async fn may_change(db: &Db, caller: Caller, by_key: bool) -> AppResult<()> {
    let passkeys = match sql::accounts::account_of_key(db, caller.key_id).await? {
        Some((account_id, _)) => sql::accounts::passkeys_of(db, account_id).await?.len(),
        None => 0,
    };
    if locked(by_key, passkeys) {
        return Err(AppError::new(
            ErrorCode::Forbidden,
            "sign in with a passkey or a recovery code to change this account's passkeys or key",
        ));
    }
    Ok(())
}

/// The caller's account as its owner sees it: `session` is how this browser's session
/// was opened (to mark the passkey it was opened with, and whether it may change it).
pub async fn account(
    db: &Db,
    caller: Caller,
    session: Option<crate::services::sessions::Opening>,
) -> AppResult<AccountView> {
    let key = keys::get(db, caller.key_id).await?;
    let (passkeys, recovery_codes_left) = match sql::accounts::account_of_key(db, caller.key_id).await? {
        Some((account_id, _)) => (
            sql::accounts::passkeys_of(db, account_id).await?,
            sql::accounts::unused_recovery_codes_of(db, account_id).await?,
        ),
        None => (Vec::new(), 0),
    };
    let this_browser = session.and_then(|opening| opening.passkey);
    let by_key = session.is_none_or(|opening| opening.by_key);
    let rfc3339 = crate::services::clock::rfc3339;
    let removable = removable(passkeys.len(), recovery_codes_left);
    Ok(AccountView {
        locked: locked(by_key, passkeys.len()),
        key_id: key.id,
        role: key.role,
        key_start: keys::shown_start(&key.prefix),
        passkeys: passkeys
            .into_iter()
            .map(|row| PasskeyView {
                this_browser: this_browser == Some(row.id),
                removable,
                id: row.id,
                name: row.name,
                created_at: rfc3339(row.created_at),
                last_used_at: row.last_used_at.map(rfc3339),
            })
            .collect(),
        recovery_codes_left,
    })
}

/// Removes one of the caller's passkeys and ends the browser sessions it opened. The
/// last passkey goes only while a recovery code is left: an account is never left
/// without a way back in.
pub async fn remove(db: &Db, caller: Caller, passkey_id: i64) -> AppResult<RemovedPasskey> {
    let mut tx = db.begin_write().await?;
    let missing = || AppError::not_found("passkey", passkey_id);
    let (account_id, _) = sql::accounts::account_of_key_in(&mut tx, caller.key_id).await?.ok_or_else(missing)?;
    let name = sql::accounts::passkey_name(&mut tx, account_id, passkey_id).await?.ok_or_else(missing)?;
    let passkeys = usize::try_from(sql::accounts::passkey_count(&mut tx, account_id).await?).unwrap_or(usize::MAX);
    if !removable(passkeys, sql::accounts::unused_recovery_codes(&mut tx, account_id).await?) {
        return Err(AppError::validation(
            "passkey",
            "this is the account's last passkey and no recovery code is left: add another passkey first",
        ));
    }
    let sessions_ended = sql::accounts::delete_passkey(&mut tx, passkey_id).await?;
    tx.commit().await?;
    Ok(RemovedPasskey { name, sessions_ended })
}

/// The caller of `key_id` once admitted: not revoked (else `refused`, and a failed
/// attempt from `client`), nor banned, nor over its limits.
async fn admit_key(
    db: &Db,
    access: &Access,
    client: ClientAddr,
    key_id: i64,
    refused: fn() -> AppError,
) -> AppResult<Caller> {
    match keys::get(db, key_id).await {
        Ok(row) if row.revoked_at.is_none() => access.sign_in_as(row.caller()).await,
        Ok(_) => {
            access.failed_sign_in(client).await?;
            Err(refused())
        }
        Err(err) => Err(err),
    }
}

/// Stores a ceremony's state and returns what the browser needs.
async fn store<S: Serialize>(db: &Db, now: i64, kind: &'static str, state: &S, options: String) -> AppResult<Ceremony> {
    let token = keys::random_token::<32>()?;
    let token_hash = keys::hash(&token);
    let state = to_json(state)?;
    db.write(move |conn| {
        let state = state.clone();
        Box::pin(async move {
            sql::accounts::insert_ceremony(conn, &token_hash, kind, &state, now + CEREMONY_SECONDS).await
        })
    })
    .await?;
    Ok(Ceremony { token, options })
}

/// Takes the ceremony of `kind` under `token` out of the store: `None` when there is
/// none (never begun, answered already) or it expired.
async fn take<S: for<'de> Deserialize<'de>>(
    db: &Db,
    now: i64,
    kind: &'static str,
    token: &str,
) -> AppResult<Option<S>> {
    let token_hash = keys::hash(token);
    let taken = db
        .write(move |conn| Box::pin(async move { sql::accounts::take_ceremony(conn, &token_hash, kind).await }))
        .await?;
    match taken {
        Some(taken) if taken.expires_at > now => Ok(Some(from_json(&taken.state)?)),
        _ => Ok(None),
    }
}

fn ceremony_over() -> AppError {
    AppError::new(
        ErrorCode::ValidationFailed,
        "this passkey request is over (answered already, or older than 5 minutes); start again",
    )
}

/// A new passkey that does not check (another origin or relying party, no user
/// verification, a bad attestation): what webauthn-rs found goes to the log, not to
/// the page.
fn unchecked(err: webauthn_rs::prelude::WebauthnError) -> AppError {
    tracing::info!(error = %err, "a new passkey did not check");
    AppError::new(ErrorCode::ValidationFailed, "the browser's passkey could not be checked; try again")
}

fn recovery_refused() -> AppError {
    AppError::new(ErrorCode::InvalidApiKey, RECOVERY_CODE_REFUSED)
}

fn passkey_refused() -> AppError {
    AppError::new(ErrorCode::InvalidApiKey, PASSKEY_REFUSED)
}

fn parse_credential<T: for<'de> Deserialize<'de>>(credential: &str) -> AppResult<T> {
    serde_json::from_str(credential)
        .map_err(|err| AppError::validation("credential", format!("must be a passkey's answer as JSON ({err})")))
}

fn to_json<T: Serialize>(value: &T) -> AppResult<String> {
    serde_json::to_string(value).map_err(|err| AppError::internal("passkey state", err))
}

fn from_json<T: for<'de> Deserialize<'de>>(text: &str) -> AppResult<T> {
    serde_json::from_str(text).map_err(|err| AppError::internal("passkey state", err))
}

/// The creation options as the browser reads them (`parseCreationOptionsFromJSON`):
/// a discoverable credential required (webauthn-rs leaves it to the authenticator;
/// signing in without a user name needs one), and no `null` members, which the
/// browser refuses where it expects a list.
fn creation_options(options: &webauthn_rs::prelude::CreationChallengeResponse) -> AppResult<String> {
    let mut json =
        serde_json::to_value(&options.public_key).map_err(|err| AppError::internal("passkey options", err))?;
    if let Some(selection) = json.get_mut("authenticatorSelection").and_then(Value::as_object_mut) {
        selection.insert("residentKey".into(), "required".into());
        selection.insert("requireResidentKey".into(), true.into());
    }
    Ok(without_nulls(json).to_string())
}

/// The request options as the browser reads them (`parseRequestOptionsFromJSON`).
fn request_options<T: Serialize>(public_key: &T) -> AppResult<String> {
    let json = serde_json::to_value(public_key).map_err(|err| AppError::internal("passkey options", err))?;
    Ok(without_nulls(json).to_string())
}

fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, without_nulls(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// A new recovery code: twelve letters of [`CODE_ALPHABET`] in groups of four.
fn recovery_code() -> AppResult<String> {
    random_code(CODE_LETTERS)
}

/// `letters` random letters of [`CODE_ALPHABET`] (5 bits each: 256 is a multiple of
/// 32, so each is as likely), in groups of four.
fn random_code(letters: usize) -> AppResult<String> {
    let bytes = keys::random_bytes::<32>()?;
    let letters: Vec<char> =
        bytes.iter().take(letters).map(|byte| char::from(CODE_ALPHABET[usize::from(byte % 32)])).collect();
    Ok(letters.chunks(4).map(|group| group.iter().collect::<String>()).collect::<Vec<_>>().join("-"))
}

/// A recovery code as typed (any case, spaces, with or without its dashes) in the form
/// it was made.
fn normalized_code(typed: &str) -> String {
    let letters: Vec<char> =
        typed.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_lowercase()).collect();
    letters.chunks(4).map(|group| group.iter().collect::<String>()).collect::<Vec<_>>().join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_codes_read_back_however_they_are_typed() {
        let code = recovery_code().unwrap();
        assert_eq!(code.len(), 14, "{code}");
        assert_eq!(normalized_code(&code), code);
        assert_eq!(normalized_code(&format!(" {} ", code.to_uppercase().replace('-', " "))), code);
        assert_ne!(recovery_code().unwrap(), code);
    }

    #[test]
    fn a_store_on_an_address_is_a_relying_party_on_localhost() {
        assert_eq!(RelyingParty::new("http://127.0.0.1:3000").unwrap().origin(), "http://localhost:3000");
        assert_eq!(RelyingParty::new("https://shop.example").unwrap().origin(), "https://shop.example");
    }
}
