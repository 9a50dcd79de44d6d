//! Signing up (an account with a passkey, or a Free key shown once), signing in (with a
//! passkey, a recovery code, or by pasting a key) and out. No secret goes into browser
//! storage: the browser keeps only an HttpOnly session cookie.

use crate::ui::widgets::PageTitle;
use leptos::prelude::*;

use super::note::{Done, Note, from_flash};
use super::passkeys::{PasskeySignIn, PasskeySignUp, RecoveryForm};
use super::widgets::{ErrorNotice, FormFields, post_form};
use crate::model::Caller;
use crate::server_fns::{SignIn, SignOut, SignUp, viewer};
use crate::ui::data;

#[component]
pub fn SignInPage() -> impl IntoView {
    let (next, signed_out, code) = leptos_router::hooks::use_query_map()
        .with_untracked(|query| (query.get("next"), query.get("signed_out").is_some(), query.get("code")));
    // A sign-in link from staff (`services::passkeys::issue_sign_in_link`): its code,
    // filled in for the shopper to send (opening the link spends nothing, so a link
    // preview cannot), and the page kept by no cache.
    if code.is_some() {
        crate::ui::widgets::keep_out_of_caches();
    }
    // Only a refusal comes back here: a sign-in sends the browser on to `next`.
    let note = from_flash(|flash| flash.note::<SignIn>(|(), _| Done::default())).filter(Note::is_refusal);
    let onward = crate::paths::return_path(next.as_deref()).to_owned();
    let sign_up = crate::paths::sign_up_href(&onward);
    view! {
        <PageTitle text="Sign in"/>
        // (`signed_out`: the visitor just signed out of a private page, `paths::signed_out_path`.)
        {signed_out.then(|| view! { <p class="notice notice-success" role="status" tabindex="-1" autofocus>"You are signed out. Sign in again to go back."</p> })}
        <section class="panel narrow passkeys">
            <h1>"Sign in"</h1>
            <p>"With the passkey of your account: your phone's or computer's screen lock, no password to type."</p>
            <PasskeySignIn next=onward/>
            <RecoveryForm next=next.clone() code/>
            <p>"No account yet? " <a href=sign_up>"Create one"</a></p>
        </section>
        <SignInForm next note/>
    }
}

/// For developers (and staff): signing in with an API key. Once signed in, the server
/// function sends the browser back to `next` (the page the visitor came from), or to
/// the catalog. `note` is a refusal of the form sent without JavaScript.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn SignInForm(next: Option<String>, note: Option<Note>) -> impl IntoView {
    let sign_in = ServerAction::<SignIn>::new();
    let result = move || sign_in.value().get();
    let sign_up = crate::paths::sign_up_href(crate::paths::return_path(next.as_deref()));
    view! {
        <section class="panel narrow">
            <h2>"With an API key"</h2>
            <p>"For developers and staff: paste your key. The browser keeps only a session cookie, never the key."</p>
            <ActionForm action=sign_in attr:class="stacked">
                {next.map(|next| view! { <input type="hidden" name="next" value=next/> })}
                <label>
                    "API key"
                    <input type="password" name="key" autocomplete="off" required placeholder="psk_…"/>
                </label>
                <button type="submit">"Sign in"</button>
            </ActionForm>
            {move || match result() {
                Some(Err(error)) => view! { <ErrorNotice error/> }.into_any(),
                Some(Ok(())) => ().into_any(),
                // (Focused, as a `NoteView` is: the page was opened again by the form.)
                None => note.clone().map(|note| view! {
                    <div class="notice notice-error" role="alert" tabindex="-1" autofocus>{note.text}</div>
                }).into_any(),
            }}
            <p>"No key yet? " <a href=sign_up>"Get a free one"</a> " (a passkey account has one too)"</p>
        </section>
    }
}

#[component]
pub fn SignUpPage() -> impl IntoView {
    let who = data::resource(|| (), |_| viewer());
    // The page the visitor came from, to go back to once the key is shown.
    let back = leptos_router::hooks::use_query_map()
        .with_untracked(|query| query.get("next"))
        .map(|next| crate::paths::return_path(Some(&next)).to_owned())
        .filter(|path| path != "/");
    // Sent without JavaScript, the form's answer is this page, drawn with the new key
    // (handed to it by the server, never through a cookie: `server::ops::forms`).
    let made =
        from_flash(|flash| flash.note::<SignUp>(|created, _| Done { secret: Some(created.key), ..Done::default() }))
            .and_then(|note| note.secret);
    view! {
        <PageTitle text="Sign up"/>
        <Suspense fallback=|| ()>
            {move || {
                let (made, back) = (made.clone(), back.clone());
                Suspend::new(async move {
                    let current = who.await.ok().flatten().map(|caller| caller.key_id);
                    view! {
                        <section class="panel narrow passkeys">
                            <h1>"Create an account"</h1>
                            <p>
                                "Your account is signed in with a passkey: your phone's or computer's screen "
                                "lock, no password and no email. Orders, like everything else, stay with the account."
                            </p>
                            {current.map(|_| view! {
                                <p><strong>"You are signed in already:"</strong>" a new account signs this browser in to it instead."</p>
                            })}
                            <PasskeySignUp back=back.clone()/>
                        </section>
                        <SignUpForm current made back/>
                    }
                })
            }}
        </Suspense>
    }
}

/// `current` is the key this browser is signed in with, if any: a new key would switch
/// the browser to it, so the page says so first and asks. `made` is the key a form sent
/// without JavaScript just made. `back` is the page the visitor came from.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn SignUpForm(current: Option<i64>, made: Option<String>, back: Option<String>) -> impl IntoView {
    let onward = move || {
        back.clone().map(|href| view! { <p class="onward"><a href=href>"Back to the page you came from →"</a></p> })
    };
    let sign_up = ServerAction::<SignUp>::new();
    let result = sign_up.value();
    // The header follows at once; the page stays, with the key on it.
    Effect::new(move |_| {
        if let Some(Ok(created)) = result.get() {
            let key = &created.key_info;
            super::session::signed_in(Caller { key_id: key.id, role: key.role, limits: key.limits });
        }
    });
    view! {
        <section class="panel narrow">
            <h2>"Or get a free API key"</h2>
            <p>
                "For developers calling the REST API: a Free key allows 60 requests a minute and 1,000 a day. "
                "This browser is signed in with it at once."
            </p>
            {move || match (result.get(), made.clone()) {
                (Some(Ok(created)), _) => view! { <NewKey key=created.key/>{onward()} }.into_any(),
                (None, Some(key)) => view! { <NewKey key/>{onward()} }.into_any(),
                (other, _) => {
                    let error = match other {
                        Some(Err(error)) => Some(error),
                        _ => None,
                    };
                    view! {
                        {current.map(|key_id| view! {
                            <div class="notice" role="note">
                                <p><strong>{format!("You are signed in (key #{key_id}).")}</strong></p>
                                <p>"A new key signs this browser in with it instead. Your orders stay with your current key: "
                                   "to see them again, sign in with that key. Keep it if you still need it."</p>
                            </div>
                        })}
                        <ActionForm action=sign_up attr:class="stacked">
                            {current.map(|_| view! {
                                <label class="check">
                                    <input type="checkbox" name="switch" value="yes" required/>
                                    "Yes, make a new key and switch this browser to it"
                                </label>
                            })}
                            <label>
                                "Name (optional)"
                                <input type="text" name="name" maxlength="100" placeholder="my app"/>
                            </label>
                            <button type="submit">"Create my key"</button>
                        </ActionForm>
                        {error.map(|error| view! { <ErrorNotice error/> })}
                    }
                        .into_any()
                }
            }}
        </section>
    }
}

/// The secret on a page drawn on the server (the staff console), with its copy button.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
pub fn NewKeyIsland(key: String) -> impl IntoView {
    view! { <NewKey key/> }
}

/// A one-time sign-in link staff issue for a shopper's account, shown this once.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
pub fn SignInLinkIsland(link: String) -> impl IntoView {
    view! {
        <ShownOnce secret=link id="sign-in-link" title="A one-time sign-in link (shown only this once: copy it now):">
            <p>"Send it to the shopper by a way you trust. It signs in once, within 24 hours; their account page then offers adding a passkey."</p>
        </ShownOnce>
    }
}

/// A new key, shown this once, with a copy button.
#[component]
pub fn NewKey(key: String) -> impl IntoView {
    view! {
        <ShownOnce secret=key id="new-key" title="Your key (shown only this once: copy it now):">
            <p>"Send it as " <code>"X-API-Key"</code> " to " <code>"/api/v1"</code> "."</p>
        </ShownOnce>
    }
}

/// A secret (a key, a webhook's signing secret), shown this once, with a copy button.
#[component]
pub fn ShownOnce(secret: String, id: &'static str, title: &'static str, children: Children) -> impl IntoView {
    let copied = RwSignal::new(false);
    let to_copy = secret.clone();
    let copy = move |_| {
        #[cfg(feature = "hydrate")]
        {
            let _ = window().navigator().clipboard().write_text(&to_copy);
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = &to_copy;
        copied.set(true);
    };
    view! {
        <div class="notice notice-success" role="status">
            <p><strong>{title}</strong></p>
            <p class="secret"><code id=id>{secret}</code></p>
            <button type="button" on:click=copy>{move || if copied.get() { "Copied" } else { "Copy" }}</button>
            {children()}
        </div>
    }
}

/// The header's sign-out button (a form, so it works without JavaScript too); the
/// browser comes back to `path`, the page it was on.
#[component]
pub fn SignOutButton(path: String) -> impl IntoView {
    let sign_out = ServerAction::<SignOut>::new();
    let args = |fields: &FormFields| SignOut { next: fields.text("next") };
    post_form(
        sign_out,
        "inline",
        args,
        view! {
            <input type="hidden" name="next" value=path/>
            <button type="submit" class="link">"Sign out"</button>
        },
    )
}
