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
/// button): the ceremony, then on to `next`. Where the browser offers passkeys in a
/// field's autofill (conditional mediation), the "Account" field does: a request waits
/// from the page's load for the shopper to pick one there, and a press of the button
/// ends it before its own ceremony starts (a browser takes one request at a time). The
/// field is no required part of the form: the passkey names the account.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
pub fn PasskeySignIn(next: String) -> impl IntoView {
    let step = RwSignal::new(Step::Ready);
    // Hidden where the browser has no such autofill: the field would do nothing there.
    let autofill = RwSignal::new(true);
    // While the autofill's request waits (the form says so, for the tests to see).
    let waiting = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    {
        let next = next.clone();
        Effect::new(move |_| browser::offer_in_autofill(next.clone(), step, autofill, waiting));
    }
    // Sent without JavaScript (no ceremony can run then), the form asks for this page
    // again, still going on to `next` afterwards.
    let onward = next.clone();
    let start = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        step.set(Step::Working);
        #[cfg(feature = "hydrate")]
        {
            let next = next.clone();
            leptos::task::spawn_local(async move {
                match browser::sign_in(waiting).await {
                    Ok(()) => super::webauthn::go_to(&next),
                    Err(problem) => step.set(Step::Failed(problem)),
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = &next;
    };
    view! {
        <form class="stacked passkey-sign-in" on:submit=start data-autofill=move || waiting.get().then_some("waiting")>
            <input type="hidden" name="next" value=onward/>
            <div class="autofill" hidden=move || !autofill.get()>
                <label>
                    "Account"
                    <input type="text" name="username" autocomplete="username webauthn" autocapitalize="none"
                        spellcheck="false" aria-describedby="autofill-hint"/>
                </label>
                <small id="autofill-hint">"Your browser offers your passkey in this field, or press the button."</small>
            </div>
            <button type="submit" class="passkey" disabled=move || step.get() == Step::Working>
                "Continue with a passkey"
            </button>
        </form>
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
    use std::cell::{Cell, RefCell};

    use leptos::prelude::*;

    use super::Step;
    use crate::error::AppError;
    use crate::model::{NewAccount, PASSKEY_WAIT_SECONDS};
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

    /// The button's ceremony, once the autofill's request is ended.
    pub async fn sign_in(waiting: RwSignal<bool>) -> Result<(), String> {
        stop_autofill();
        waiting.set(false);
        let ceremony = passkey_sign_in_begin().await.map_err(|e| words(&e))?;
        let credential = webauthn::get(&ceremony.options).await?;
        passkey_sign_in_finish(ceremony.token, credential).await.map_err(|e| words(&e))
    }

    thread_local! {
        /// The autofill's waiting request, to end it.
        static AUTOFILL: RefCell<Option<webauthn::Stopper>> = const { RefCell::new(None) };
        /// Counts the autofill's requests: a request whose number is no longer the
        /// latest was ended (by the button, or made anew) and does nothing more.
        static ROUND: Cell<u32> = const { Cell::new(0) };
    }

    fn stop_autofill() -> u32 {
        if let Some(stop) = AUTOFILL.take() {
            stop.stop();
        }
        ROUND.with(|round| {
            round.set(round.get().wrapping_add(1));
            round.get()
        })
    }

    /// Lets the browser offer this store's passkeys in the autofill of the sign-in
    /// page's field: a request that waits for the shopper to pick one, then signs in
    /// and goes on to `next`. Made anew before its ceremony expires on the server. A
    /// refusal is shown and ends it (the button is the way to try again); a request
    /// ended or cancelled shows nothing. `field` is cleared where the browser has no
    /// such autofill; `waiting` is set while the request waits.
    pub fn offer_in_autofill(next: String, step: RwSignal<Step>, field: RwSignal<bool>, waiting: RwSignal<bool>) {
        leptos::task::spawn_local(async move {
            if !webauthn::autofill_available().await {
                field.set(false);
                return;
            }
            let round = stop_autofill();
            let (Ok(ceremony), Ok(stop)) = (passkey_sign_in_begin().await, webauthn::Stopper::new()) else { return };
            if ROUND.get() != round {
                return;
            }
            AUTOFILL.set(Some(stop.clone()));
            let again = next.clone();
            webauthn::after(PASSKEY_WAIT_SECONDS, move || {
                if ROUND.get() == round {
                    offer_in_autofill(again, step, field, waiting);
                }
            });
            waiting.set(true);
            let picked = webauthn::get_from_autofill(&ceremony.options, &stop).await;
            if ROUND.get() != round {
                return;
            }
            waiting.set(false);
            let Ok(credential) = picked else { return };
            stop_autofill();
            step.set(Step::Working);
            match passkey_sign_in_finish(ceremony.token, credential).await {
                Ok(()) => webauthn::go_to(&next),
                Err(error) => step.set(Step::Failed(words(&error))),
            }
        });
    }
}
