//! Small pieces the pages share.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::PetStatus;
use crate::ui::messages::sentence;
use crate::ui::note::{Note, NoteView};

/// The page's `<title>`. leptos_meta (0.8.7) writes a title's text into the `<head>`
/// as it is, unescaped, so a pet named `</title><meta http-equiv="refresh" …>` would
/// close the title and add its own markup to every visitor's page. Every title goes
/// through here, escaped. (Titles are rendered on the server only, in islands mode, so
/// the escaped text never goes through `document.title`.)
#[component]
pub fn PageTitle(#[prop(into)] text: String) -> impl IntoView {
    #[cfg(feature = "ssr")]
    let text = html_escape::encode_text(&text).into_owned();
    view! { <leptos_meta::Title text/> }
}

#[component]
pub fn StatusBadge(status: PetStatus) -> impl IntoView {
    view! { <span class=format!("badge badge-{status}")>{status.label()}</span> }
}

/// A destructive action behind a question: `summary` opens it, and `form` (the form
/// that does it) sits beside the question, away from where the pointer was. A
/// disclosure, so it works without JavaScript and by keyboard. (A function, not a
/// component with children: those cost the WASM a boxed closure per use.) Once its
/// island runs, Escape and a "No, keep it" button close the question and give the
/// focus back to its first button (without JavaScript a second click on it closes it).
pub fn confirm(summary: String, question: String, form: impl IntoView) -> AnyView {
    let label = question.clone();
    // Effects run in the browser only: the keep button is drawn once it works.
    let scripted = RwSignal::new(false);
    Effect::new(move |_| scripted.set(true));
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        #[cfg(feature = "hydrate")]
        if ev.key() == "Escape" {
            close_question(ev.current_target());
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = ev;
    };
    let keep = move |ev: leptos::ev::MouseEvent| {
        #[cfg(feature = "hydrate")]
        close_question(ev.current_target());
        #[cfg(not(feature = "hydrate"))]
        let _ = ev;
    };
    view! {
        <details class="confirm" on:keydown=on_key>
            <summary class="button secondary">{summary}</summary>
            <div class="confirm-box" role="group" aria-label=label>
                <p>{question}</p>
                <div class="confirm-choices">
                    {form}
                    {move || scripted.get().then(|| view! {
                        <button type="button" class="secondary keep" on:click=keep>"No, keep it"</button>
                    })}
                </div>
            </div>
        </details>
    }
    // Erased: nested in a table row's type, it stops the compiler (the recursion limit).
    .into_any()
}

/// Closes the confirmation holding `from` (an element in it) and focuses its summary.
#[cfg(feature = "hydrate")]
fn close_question(from: Option<web_sys::EventTarget>) {
    use wasm_bindgen::JsCast;
    let details = from
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
        .and_then(|element| element.closest("details.confirm").ok().flatten());
    if let Some(details) = details.filter(|details| details.has_attribute("open")) {
        let _ = details.remove_attribute("open");
        let summary = details.query_selector("summary").ok().flatten();
        if let Some(summary) = summary.and_then(|summary| summary.dyn_into::<web_sys::HtmlElement>().ok()) {
            let _ = summary.focus();
        }
    }
}

/// A form that sends `action`'s server function: without JavaScript a plain HTML form
/// posted to it (the server reads its fields as the arguments); in the browser, sent, it
/// dispatches `action` with `args`, given the form's fields as they are then. It stands
/// in for leptos's `ActionForm` in the islands every page loads: that one reads the
/// fields back into arguments through `serde_qs`, a reader the WASM would carry for four
/// forms whose arguments their islands already hold. (A function, as `confirm`.)
pub fn post_form<S>(
    action: ServerAction<S>,
    class: &'static str,
    args: impl Fn(&FormFields) -> S + 'static,
    fields: impl IntoView,
) -> AnyView
where
    S: leptos::server_fn::ServerFn + Clone + Send + Sync + 'static,
    S::Output: Send + Sync + 'static,
    S::Error: Send + Sync + 'static,
{
    let send = move |ev: leptos::ev::SubmitEvent| {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            if ev.default_prevented() {
                return;
            }
            // A form that cannot be read (never seen) is posted by the browser, as it
            // would be without JavaScript.
            let form = ev.target().and_then(|target| target.dyn_into::<web_sys::HtmlFormElement>().ok());
            let Some(data) = form.and_then(|form| web_sys::FormData::new_with_form(&form).ok()) else { return };
            ev.prevent_default();
            action.dispatch(args(&FormFields(data)));
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (ev, &args, action);
    };
    // Erased: nested in a table row's type, it stops the compiler (as `confirm`).
    view! { <form action=S::url() method="post" class=class on:submit=send>{fields}</form> }.into_any()
}

/// A sent form's fields, as `post_form`'s `args` reads them.
pub struct FormFields(#[cfg(feature = "hydrate")] web_sys::FormData);

impl FormFields {
    /// The named field's text (its first, if there are several), if the form has it.
    pub fn text(&self, name: &str) -> Option<String> {
        #[cfg(feature = "hydrate")]
        return self.0.get(name).as_string();
        #[cfg(not(feature = "hydrate"))]
        {
            // Never called: forms are sent in the browser only.
            let _ = (self, name);
            None
        }
    }
}

/// An error, in the store's words (`messages`). Drawn on the server, the page is
/// answered with the error's status (and `Retry-After`, when it has one): a page whose
/// data failed is not a 200, so the page cache never keeps one visitor's ban or a
/// passing fault for everyone.
#[component]
pub fn ErrorNotice(error: AppError) -> impl IntoView {
    // The code's own status, never the number an error object carried (an error read
    // from elsewhere must not choose the page's status).
    set_status(error.code.status());
    #[cfg(feature = "ssr")]
    if let (Some(response), Some(retry_after)) = (rendered_response(), error.retry_after_header()) {
        response.insert_header(axum::http::header::RETRY_AFTER, retry_after);
    }
    view! { <div class="notice notice-error" role="alert">{super::messages::sentence(&error)}</div> }
}

/// A moment as people read it: on the server (and without JavaScript) in UTC, then in
/// the browser's own locale and time zone; the exact time on hover. An island of its
/// own, so that pages drawn on the server get it too.
#[island]
pub fn LocalTime(iso: String) -> impl IntoView {
    let text = RwSignal::new(crate::model::utc_text(&iso));
    #[cfg(feature = "hydrate")]
    {
        let iso = iso.clone();
        Effect::new(move |_| {
            let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_str(&iso));
            if !date.get_time().is_nan() {
                let options = js_sys::Object::new();
                for (key, value) in [("dateStyle", "medium"), ("timeStyle", "short")] {
                    let _ = js_sys::Reflect::set(&options, &key.into(), &value.into());
                }
                text.set(String::from(date.to_locale_string("default", &options)));
            }
        });
    }
    view! { <time datetime=iso.clone() title=iso>{text}</time> }
}

/// A form's outcome under it: with JavaScript its action's last answer (a refusal in
/// the store's words, with its code for staff, or `done` unless empty), else what the
/// form did when sent without JavaScript (`note`).
#[component]
pub fn FormOutcome<T: Clone + Send + Sync + 'static>(
    result: Signal<Option<Result<T, AppError>>>,
    #[prop(into)] done: String,
    #[prop(default = None)] note: Option<Note>,
) -> impl IntoView {
    move || match result.get() {
        Some(Err(error)) => view! {
            <p class="form-error" role="alert">
                {sentence(&error)}" "
                <small class="error-code" title=error.message.clone()>{error.code.as_str()}</small>
            </p>
        }
        .into_any(),
        Some(Ok(_)) if !done.is_empty() => view! { <p class="form-done" role="status">{done.clone()}</p> }.into_any(),
        Some(Ok(_)) => ().into_any(),
        None => note.clone().map(|note| view! { <NoteView note/> }).into_any(),
    }
}

/// What a form of this page sent without JavaScript did (the flash, see
/// `server_fns::flash`): read while the server renders the page, and handed to the
/// page's islands as a prop (in the browser there is none to read).
pub fn flash() -> Option<crate::server_fns::flash::Flash> {
    #[cfg(feature = "ssr")]
    return use_context::<crate::server_fns::flash::Flash>();
    #[cfg(not(feature = "ssr"))]
    None
}

/// Marks this page as drawn without part of its data (a failure shown as less, not as
/// an error): `Cache-Control: no-store`, so that neither the page cache
/// (`server::pages`) nor a browser keeps it. During SSR; a no-op in the browser.
pub fn keep_out_of_caches() {
    #[cfg(feature = "ssr")]
    if let Some(response) = rendered_response() {
        response.insert_header(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("no-store"));
    }
}

/// Makes the server answer this page with 404 (during SSR; a no-op in the browser).
pub fn set_status_404() {
    set_status(404);
}

/// Makes the server answer this page with `status` (during SSR; a no-op in the browser).
pub fn set_status(status: u16) {
    #[cfg(feature = "ssr")]
    if let (Some(response), Ok(status)) = (rendered_response(), axum::http::StatusCode::from_u16(status)) {
        response.set_status(status);
    }
    #[cfg(not(feature = "ssr"))]
    let _ = status;
}

/// The answer of the page being rendered on the server, if any.
#[cfg(feature = "ssr")]
fn rendered_response() -> Option<leptos_axum::ResponseOptions> {
    use_context::<leptos_axum::ResponseOptions>()
}

/// A form-urlencoded query string from pairs, skipping empty values.
pub fn query_string<'a>(pairs: impl IntoIterator<Item = (&'a str, Option<String>)>) -> String {
    let encoded: Vec<String> = pairs
        .into_iter()
        .filter_map(|(key, value)| {
            value.filter(|v| !v.is_empty()).map(|v| format!("{key}={}", crate::paths::encode(&v)))
        })
        .collect();
    if encoded.is_empty() { String::new() } else { format!("?{}", encoded.join("&")) }
}

/// The store's currency (`--currency`), as the server was started with it. Pages are
/// drawn on the server (islands get it as a prop), so the browser never asks for it.
pub fn store_currency() -> crate::model::Currency {
    #[cfg(feature = "ssr")]
    if let Some(services) = use_context::<crate::services::Services>() {
        return services.currency.clone();
    }
    crate::model::Currency::default()
}

/// A pet's price as the shop shows it, or that it has none yet.
pub fn price_text(currency: &crate::model::Currency, price: Option<i64>) -> String {
    price.map_or_else(|| "Price on request".to_owned(), |price| currency.format(price))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_string_encodes_and_skips_empty_values() {
        assert_eq!(query_string([("a", None), ("b", Some(String::new()))]), "");
        assert_eq!(
            query_string([("q", Some("big dog&cat".into())), ("status", Some("sold".into()))]),
            "?q=big+dog%26cat&status=sold"
        );
        assert_eq!(query_string([("q", Some("é".into()))]), "?q=%C3%A9");
    }
}
