//! "Your account" (`/account`): the passkeys that sign it in (named, with their last
//! use; another one added, one removed), the recovery codes left, and its API key for
//! developers. Drawn on the server; its forms work without JavaScript (adding a passkey
//! needs the browser's WebAuthn, so it is an island).
//!
//! The key's secret is stored only as a hash, so it cannot be shown again: the page
//! shows the key's start and offers a new secret instead, shown once.

use leptos::prelude::*;

use super::account::NewKeyIsland;
use super::note::{Done, NoteView, from_flash};
use super::passkeys::AddPasskey;
use super::widgets::{ErrorNotice, LocalTime, PageTitle, set_status};
use crate::error::ErrorCode;
use crate::model::{AccountView, PasskeyView};
use crate::server_fns::{NewApiKey, Recover, RemovePasskey, my_account};
use crate::ui::data;

#[component]
pub fn AccountPage() -> impl IntoView {
    let (next, added) = leptos_router::hooks::use_query_map().with_untracked(|query| {
        let next = query.get("next").map(|next| crate::paths::return_path(Some(&next)).to_owned());
        (next.filter(|path| path != "/"), query.get("added").is_some())
    });
    let account = data::resource(|| (), |_| my_account());
    let note = from_flash(|flash| {
        flash
            .note::<Recover>(|(), _| {
                Done::new("You are signed in with a recovery code. Add a passkey for this device below, so that you need no code next time.")
            })
            .or_else(|| flash.note::<RemovePasskey>(|removed, _| Done::new(removed_text(&removed))))
            // A new key is shown in its own place (below); a refusal is said here.
            .or_else(|| flash.note::<NewApiKey>(|_, _| Done::default()).filter(|note| note.is_refusal()))
    });
    let made = from_flash(|flash| flash.note::<NewApiKey>(|key, _| Done { secret: Some(key), ..Done::default() }))
        .and_then(|note| note.secret);
    view! {
        <PageTitle text="Your account"/>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let (next, note, made) = (next.clone(), note.clone(), made.clone());
                Suspend::new(async move {
                    match account.await {
                        Ok(account) => view! {
                            <h1>"Your account"</h1>
                            <div aria-live="polite">
                                {note.map(|note| view! { <div class="notice-line"><NoteView note/></div> })}
                                {added.then(|| view! { <p class="notice notice-success" role="status">"Passkey added."</p> })}
                            </div>
                            {next.map(|href| view! { <p class="onward"><a href=href>"Continue to the page you were on →"</a></p> })}
                            {account.locked.then(|| view! {
                                <p class="notice" role="note">
                                    "You signed in with your API key. To add or remove passkeys or to make a new key, "
                                    <a href=crate::paths::sign_in_href("/account")>"sign in with a passkey or a recovery code"</a>
                                    ": whoever holds the key must not be able to lock you out."
                                </p>
                            })}
                            <Passkeys account=account.clone()/>
                            <ApiKey account made/>
                        }
                        .into_any(),
                        Err(error) if error.code == ErrorCode::MissingApiKey => {
                            set_status(401);
                            view! {
                                <h1>"Your account"</h1>
                                <p class="notice">"Sign in to see your account. "
                                    <a href=crate::paths::sign_in_href("/account")>"Sign in"</a></p>
                            }
                            .into_any()
                        }
                        Err(error) => view! { <ErrorNotice error/> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

fn removed_text(removed: &crate::model::RemovedPasskey) -> String {
    match removed.sessions_ended {
        0 => format!("Removed the passkey “{}”.", removed.name),
        1 => format!("Removed the passkey “{}”; the browser it signed in is signed out.", removed.name),
        n => format!("Removed the passkey “{}”; the {n} browsers it signed in are signed out.", removed.name),
    }
}

#[component]
fn Passkeys(account: AccountView) -> impl IntoView {
    let codes = account.recovery_codes_left;
    let locked = account.locked;
    // A key that signs in with its secret (no passkey, no codes) has nothing to count.
    let counted = !account.passkeys.is_empty() || codes > 0;
    view! {
        <section class="panel passkeys" aria-labelledby="passkeys-title">
            <h2 id="passkeys-title">"Passkeys"</h2>
            <p>
                "A passkey signs you in with your phone's or computer's screen lock. Add one for each device "
                "you shop from; remove one you no longer have, and the browsers it signed in are signed out."
            </p>
            {if account.passkeys.is_empty() {
                view! { <p class="empty">"No passkey yet: add one to sign in on this device without your key."</p> }.into_any()
            } else {
                view! {
                    <ul class="passkey-list">
                        {account.passkeys.into_iter().map(|passkey| view! { <PasskeyRow passkey locked/> }).collect_view()}
                    </ul>
                }
                .into_any()
            }}
            {(!locked).then(|| view! { <AddPasskey/> })}
            {counted.then(|| view! {
                <p class="muted recovery-left">{match codes {
                    0 => "No recovery code left: keep a second passkey, so that losing one device does not lock you out.".to_owned(),
                    1 => "1 recovery code left.".to_owned(),
                    n => format!("{n} recovery codes left."),
                }}</p>
            })}
        </section>
    }
}

/// A passkey with its remove button (a plain form). The last one is removable only
/// while a recovery code is left (`removable`, the service's rule); the page says why
/// before anyone tries. `locked`: this session may not change passkeys.
#[component]
fn PasskeyRow(passkey: PasskeyView, locked: bool) -> impl IntoView {
    let remove = ServerAction::<RemovePasskey>::new();
    let label = format!("Remove “{}”", passkey.name);
    view! {
        <li data-passkey-id=passkey.id>
            <p>
                <strong>{passkey.name.clone()}</strong>
                {passkey.this_browser.then(|| view! { " " <span class="badge">"This browser"</span> })}
            </p>
            <p class="muted">
                "Added " <LocalTime iso=passkey.created_at/> " · Last used "
                {match passkey.last_used_at {
                    Some(iso) => view! { <LocalTime iso/> }.into_any(),
                    None => "never".into_any(),
                }}
            </p>
            {if locked {
                ().into_any()
            } else if !passkey.removable {
                view! { <p class="muted">"Your only way in: add another passkey before removing it."</p> }.into_any()
            } else {
                view! {
                    <ActionForm action=remove attr:class="inline">
                        <input type="hidden" name="id" value=passkey.id/>
                        <button type="submit" class="danger small" aria-label=label>"Remove"</button>
                    </ActionForm>
                }
                .into_any()
            }}
        </li>
    }
}

/// The account's key: what it is for, its start, and a new secret on request (shown
/// once: `made`, when the form was just sent).
#[component]
fn ApiKey(account: AccountView, made: Option<String>) -> impl IntoView {
    let renew = ServerAction::<NewApiKey>::new();
    view! {
        <section class="panel" aria-labelledby="api-key-title">
            <h2 id="api-key-title">"API key"</h2>
            <p>
                "Your orders, limits and everything else you do here belong to your account's API key. "
                "Developers send it as " <code>"X-API-Key"</code> " to the REST API: see "
                <a href="/docs">"the API documentation"</a> "."
            </p>
            <p>"Your key is " <strong class="key-id">{format!("#{}", account.key_id)}</strong> " (the number staff know it by) and begins "
                <code class="key-start">{account.key_start}</code>
                " (the rest is kept only as a hash, so it cannot be shown again)."</p>
            {match made {
                Some(key) => view! { <NewKeyIsland key/> }.into_any(),
                None if account.locked => ().into_any(),
                None => view! {
                    <ActionForm action=renew attr:class="stacked">
                        <label class="check">
                            <input type="checkbox" name="confirm" value="yes" required/>
                            "Yes, make a new key: the current one stops working, and the browsers it signed in are signed out"
                        </label>
                        <button type="submit">"Show a new key"</button>
                    </ActionForm>
                }
                .into_any(),
            }}
        </section>
    }
}
