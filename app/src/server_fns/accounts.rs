//! Shoppers' accounts with passkeys: thin calls into `services::passkeys`. The
//! storefront's passkey buttons run the browser's half of each ceremony between a
//! `*_begin` and its `*_finish`; the recovery code's form posts with or without
//! JavaScript.

use leptos::prelude::*;

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::model::Role;
use crate::model::{AccountView, NewAccount, PasskeyCeremony, RemovedPasskey};

#[cfg(feature = "ssr")]
use super::call::Call;
#[cfg(feature = "ssr")]
use crate::services::sessions::Opened;

/// Starts making an account with a passkey.
#[server(prefix = "/_app", endpoint = "passkey_sign_up_begin")]
pub async fn passkey_sign_up_begin() -> Result<PasskeyCeremony, AppError> {
    let call = Call::admit().await?;
    crate::services::passkeys::begin_sign_up(&call.db, &call.access, &call.passkeys, call.now(), call.client).await
}

/// Makes the account with the browser's new passkey (counted as a sign-up from this
/// address) and signs this browser in with it; the answer carries the recovery codes,
/// shown this once (`no-store`).
#[server(prefix = "/_app", endpoint = "passkey_sign_up_finish")]
pub async fn passkey_sign_up_finish(token: String, credential: String) -> Result<NewAccount, AppError> {
    let call = Call::admit().await?;
    let account = crate::services::passkeys::finish_sign_up(
        &call.db,
        &call.access,
        &call.passkeys,
        call.now(),
        call.client,
        &token,
        &credential,
    )
    .await?;
    call.start_session(account.caller.key_id, Opened::Passkey(account.passkey_id)).await?;
    call.no_store();
    Ok(account)
}

/// Starts signing in with a passkey (no user name: the browser offers its passkeys).
#[server(prefix = "/_app", endpoint = "passkey_sign_in_begin")]
pub async fn passkey_sign_in_begin() -> Result<PasskeyCeremony, AppError> {
    let call = Call::admit().await?;
    crate::services::passkeys::begin_sign_in(&call.db, &call.passkeys, call.now()).await
}

/// Signs this browser in with the passkey's answer. A refusal counts as a failed
/// sign-in from this address, as a wrong key does.
#[server(prefix = "/_app", endpoint = "passkey_sign_in_finish")]
pub async fn passkey_sign_in_finish(token: String, credential: String) -> Result<(), AppError> {
    let call = Call::admit_for_sign_in().await?;
    let (caller, passkey) = crate::services::passkeys::finish_sign_in(
        &call.db,
        &call.access,
        &call.passkeys,
        call.now(),
        call.client,
        &token,
        &credential,
    )
    .await?;
    call.start_session(caller.key_id, Opened::Passkey(passkey)).await
}

/// Signs in with a recovery code (each works once) and goes on to the account page,
/// which offers adding a passkey for this device, then a way on to `next`.
#[server(prefix = "/_app", endpoint = "recover")]
pub async fn recover(code: String, next: Option<String>) -> Result<(), AppError> {
    let call = Call::admit_for_sign_in().await?;
    let caller = crate::services::passkeys::recover(&call.db, &call.access, call.now(), call.client, &code).await?;
    call.start_session(caller.key_id, Opened::Code).await?;
    leptos_axum::redirect(&crate::paths::account_href(crate::paths::return_path(next.as_deref())));
    Ok(())
}

/// The signed-in caller's account: passkeys, recovery codes left, the key's start.
#[server(prefix = "/_app", endpoint = "my_account")]
pub async fn my_account() -> Result<AccountView, AppError> {
    let call = Call::admit().await?;
    let caller = call.require(Role::Customer)?;
    crate::services::passkeys::account(&call.db, caller, call.session_opening().await?).await
}

/// Starts adding a passkey to the signed-in caller's account.
#[server(prefix = "/_app", endpoint = "add_passkey_begin")]
pub async fn add_passkey_begin() -> Result<PasskeyCeremony, AppError> {
    let (call, caller) = changing_the_account().await?;
    crate::services::passkeys::begin_adding(&call.db, &call.passkeys, call.now(), caller).await
}

/// Adds the browser's new passkey, named `name`, to the signed-in caller's account.
#[server(prefix = "/_app", endpoint = "add_passkey_finish")]
pub async fn add_passkey_finish(token: String, credential: String, name: String) -> Result<(), AppError> {
    let (call, caller) = changing_the_account().await?;
    crate::services::passkeys::finish_adding(&call.db, &call.passkeys, call.now(), caller, &token, &credential, &name)
        .await
}

/// Removes one of the account's passkeys, ending the sessions it opened. When this
/// browser's was one of them, it is signed out (and goes to the sign-in page);
/// otherwise it comes back to the account page.
#[server(prefix = "/_app", endpoint = "remove_passkey")]
pub async fn remove_passkey(id: i64) -> Result<RemovedPasskey, AppError> {
    let (call, caller) = changing_the_account().await?;
    let this_browser = call.session_opening().await?.and_then(|opening| opening.passkey) == Some(id);
    let removed = crate::services::passkeys::remove(&call.db, caller, id).await?;
    if this_browser {
        call.end_session().await?;
        leptos_axum::redirect(&crate::paths::signed_out_path(Some("/account")));
    } else {
        call.back_to_page("/account");
    }
    Ok(removed)
}

/// A new secret for the signed-in caller's key, shown this once (`no-store`): the old
/// one stops working, and the sessions it may have opened end, but this browser's.
#[server(prefix = "/_app", endpoint = "new_api_key")]
pub async fn new_api_key(confirm: Option<String>) -> Result<String, AppError> {
    let (call, caller) = changing_the_account().await?;
    if confirm.as_deref() != Some("yes") {
        return Err(AppError::validation("confirm", "must be yes: the current key stops working"));
    }
    let key = call.access.auth.new_secret(caller.key_id, call.session_token()).await?;
    call.no_store();
    Ok(key)
}

/// The call of a change to the signed-in caller's passkeys or key: refused from a
/// session the key's secret opened once the account has a passkey
/// (`services::passkeys::may_change`).
#[cfg(feature = "ssr")]
async fn changing_the_account() -> Result<(Call, crate::model::Caller), AppError> {
    let call = Call::admit().await?;
    let caller = call.require(Role::Customer)?;
    let by_key = call.session_opening().await?.is_none_or(|opening| opening.by_key);
    crate::services::passkeys::may_change(&call.db, caller, by_key).await?;
    Ok((call, caller))
}
