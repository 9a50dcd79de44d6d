//! Passkeys on the storefront: a button that makes an account with one, a button that
//! signs in with one (islands: the browser's half of each ceremony runs in the WASM,
//! `ui::webauthn`), and the recovery code's form (a plain form: no script needed).
//! The islands are lazy in release builds, so the pages that do not have them load
//! none of their code.

use leptos::prelude::*;

use super::note::{Done, Note, from_flash};
use crate::server_fns::Recover;

/// Where a passkey button is. (On the server a button is only ever drawn ready.)
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
enum Step {
    Ready,
    Working,
    Failed(String),
}

/// "Create an account with a passkey": the ceremony, then the recovery codes, shown this
/// once, with the way `back` to the page the visitor came from.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
pub fn PasskeySignUp(back: Option<String>) -> impl IntoView {
    let step = RwSignal::new(Step::Ready);
    let codes = RwSignal::new(None::<Vec<String>>);
    let start = move |_| {
        step.set(Step::Working);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            match browser::sign_up().await {
                Ok(account) => {
                    super::session::signed_in(account.caller);
                    codes.set(Some(account.recovery_codes));
                    step.set(Step::Ready);
                }
                Err(problem) => step.set(Step::Failed(problem)),
            }
        });
    };
    view! {
        {move || match codes.get() {
            Some(codes) => {
                let back = back.clone().unwrap_or_else(|| "/".into());
                view! {
                    <RecoveryCodes codes/>
                    <p class="onward"><a href=back>"Continue shopping →"</a></p>
                }
                    .into_any()
            }
            None => view! {
                <button type="button" class="passkey" on:click=start disabled=move || step.get() == Step::Working>
                    "Create an account with a passkey"
                </button>
                <StepNote step/>
            }
                .into_any(),
        }}
    }
}

/// "Sign in with a passkey" (the button's words avoid "Sign in", the API-key form's
/// button): the ceremony, then on to `next`.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
pub fn PasskeySignIn(next: String) -> impl IntoView {
    let step = RwSignal::new(Step::Ready);
    let start = move |_| {
        step.set(Step::Working);
        #[cfg(feature = "hydrate")]
        {
            let next = next.clone();
            leptos::task::spawn_local(async move {
                match browser::sign_in().await {
                    Ok(()) => super::webauthn::go_to(&next),
                    Err(problem) => step.set(Step::Failed(problem)),
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = &next;
    };
    view! {
        <button type="button" class="passkey" on:click=start disabled=move || step.get() == Step::Working>
            "Continue with a passkey"
        </button>
        <StepNote step/>
    }
}

/// "Add a passkey" on the account page: a name for it (the device, as its owner would
/// tell them apart), the ceremony, then the page again with it listed.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
pub fn AddPasskey() -> impl IntoView {
    let step = RwSignal::new(Step::Ready);
    let name = RwSignal::new(String::new());
    let start = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        step.set(Step::Working);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            match browser::add(name.get_untracked()).await {
                Ok(()) => super::webauthn::go_to("/account?added=1"),
                Err(problem) => step.set(Step::Failed(problem)),
            }
        });
    };
    view! {
        <form class="stacked add-passkey" on:submit=start>
            <label>
                "Name of the new passkey"
                <input type="text" name="name" maxlength="100" required placeholder="My laptop"
                    on:input=move |ev| name.set(event_target_value(&ev))/>
            </label>
            <button type="submit" class="passkey" disabled=move || step.get() == Step::Working>"Add a passkey"</button>
        </form>
        <StepNote step/>
    }
}

#[component]
fn StepNote(step: RwSignal<Step>) -> impl IntoView {
    move || match step.get() {
        Step::Ready => ().into_any(),
        Step::Working => view! { <p class="muted" role="status">"Waiting for your passkey…"</p> }.into_any(),
        Step::Failed(problem) => view! { <div class="notice notice-error" role="alert">{problem}</div> }.into_any(),
    }
}

/// The recovery codes of a new account, shown this once.
#[component]
fn RecoveryCodes(codes: Vec<String>) -> impl IntoView {
    view! {
        <div class="notice notice-success" role="status">
            <p><strong>"Your account is ready, and this browser is signed in."</strong></p>
            <p>
                "Keep these recovery codes somewhere safe: they are shown only this once. If you lose "
                "your passkey, each one signs you in once (on the sign-in page)."
            </p>
            <ol class="recovery-codes">
                {codes.into_iter().map(|code| view! { <li><code>{code}</code></li> }).collect_view()}
            </ol>
        </div>
    }
}

/// Signing in with a recovery code: a plain form, refused in words (the flash) when the
/// code does not work. `code` is a staff sign-in link's, filled in.
#[component]
pub fn RecoveryForm(next: Option<String>, code: Option<String>) -> impl IntoView {
    let recover = ServerAction::<Recover>::new();
    let note = from_flash(|flash| flash.note::<Recover>(|(), _| Done::default())).filter(Note::is_refusal);
    let open = note.is_some() || code.is_some();
    let from_link = code.is_some().then(|| {
        view! { <p class="notice" role="status">"The store sent you a sign-in link: use its code below to sign in once, then add a passkey."</p> }
    });
    view! {
        {from_link}
        <details class="recovery" open=open>
            <summary>"Lost your passkey? Use a recovery code"</summary>
            <ActionForm action=recover attr:class="stacked">
                {next.map(|next| view! { <input type="hidden" name="next" value=next/> })}
                <label>
                    "Recovery code"
                    <input type="text" name="code" autocomplete="off" autocapitalize="none" spellcheck="false"
                        required placeholder="xxxx-xxxx-xxxx" value=code/>
                </label>
                <button type="submit">"Use the code"</button>
            </ActionForm>
            {note.map(|note| view! { <div class="notice notice-error" role="alert" tabindex="-1" autofocus>{note.text}</div> })}
        </details>
    }
}

/// Each ceremony from the browser: its options from the server, the passkey's answer
/// back.
#[cfg(feature = "hydrate")]
mod browser {
    use crate::error::AppError;
    use crate::model::NewAccount;
    use crate::server_fns::{
        add_passkey_begin, add_passkey_finish, passkey_sign_in_begin, passkey_sign_in_finish, passkey_sign_up_begin,
        passkey_sign_up_finish,
    };
    use crate::ui::{messages, webauthn};

    fn words(error: &AppError) -> String {
        messages::sentence(error)
    }

    pub async fn sign_up() -> Result<NewAccount, String> {
        let ceremony = passkey_sign_up_begin().await.map_err(|e| words(&e))?;
        let credential = webauthn::create(&ceremony.options).await?;
        passkey_sign_up_finish(ceremony.token, credential).await.map_err(|e| words(&e))
    }

    pub async fn add(name: String) -> Result<(), String> {
        let ceremony = add_passkey_begin().await.map_err(|e| words(&e))?;
        let credential = webauthn::create(&ceremony.options).await?;
        add_passkey_finish(ceremony.token, credential, name).await.map_err(|e| words(&e))
    }

    pub async fn sign_in() -> Result<(), String> {
        let ceremony = passkey_sign_in_begin().await.map_err(|e| words(&e))?;
        let credential = webauthn::get(&ceremony.options).await?;
        passkey_sign_in_finish(ceremony.token, credential).await.map_err(|e| words(&e))
    }
}
