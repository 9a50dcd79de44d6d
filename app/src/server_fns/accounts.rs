//! Shoppers' accounts with passkeys: thin calls into `services::passkeys`. The
//! storefront's passkey buttons run the browser's half of each ceremony between a
//! `*_begin` and its `*_finish`; the recovery code's form posts with or without
//! JavaScript.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::{NewAccount, PasskeyCeremony};

#[cfg(feature = "ssr")]
use super::call::Call;

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
    call.start_session(account.caller.key_id).await?;
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
    let caller = crate::services::passkeys::finish_sign_in(
        &call.db,
        &call.access,
        &call.passkeys,
        call.now(),
        call.client,
        &token,
        &credential,
    )
    .await?;
    call.start_session(caller.key_id).await
}

/// Signs in with a recovery code (each works once) and goes on to `next`, as `sign_in`.
#[server(prefix = "/_app", endpoint = "recover")]
pub async fn recover(code: String, next: Option<String>) -> Result<(), AppError> {
    let call = Call::admit_for_sign_in().await?;
    let caller = crate::services::passkeys::recover(&call.db, &call.access, call.now(), call.client, &code).await?;
    call.start_session(caller.key_id).await?;
    leptos_axum::redirect(crate::paths::return_path(next.as_deref()));
    Ok(())
}
