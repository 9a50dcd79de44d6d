//! The browser's half of a passkey ceremony: the store's options (JSON, from
//! `services::passkeys`) read by `PublicKeyCredential.parseCreationOptionsFromJSON` /
//! `parseRequestOptionsFromJSON`, `navigator.credentials.create()` / `get()`, and the
//! answer as JSON (`PublicKeyCredential.toJSON()`, through `JSON.stringify`) for the
//! server to check. Through `js_sys::Reflect`, so that no `web-sys` feature is added to
//! the WASM for a few calls.

use js_sys::{Function, JSON, Object, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};

/// Makes a passkey with the creation options `options`; the answer as JSON.
pub async fn create(options: &str) -> Result<String, String> {
    ceremony("create", "parseCreationOptionsFromJSON", options, None).await
}

/// Signs the request options `options` with a passkey the browser offers; the answer as JSON.
pub async fn get(options: &str) -> Result<String, String> {
    ceremony("get", "parseRequestOptionsFromJSON", options, None).await
}

/// Whether the browser offers passkeys in the autofill of a field marked `webauthn`
/// (conditional mediation).
pub async fn autofill_available() -> bool {
    let Ok(credential_type) = member(&js_sys::global(), "PublicKeyCredential") else { return false };
    let check = member(&credential_type, "isConditionalMediationAvailable")
        .and_then(|check| check.dyn_into::<Function>().map_err(in_words));
    let Ok(promise) = check.and_then(|check| check.call0(&credential_type).map_err(in_words)) else { return false };
    let Ok(promise) = promise.dyn_into::<Promise>() else { return false };
    wasm_bindgen_futures::JsFuture::from(promise).await.is_ok_and(|available| available.as_bool() == Some(true))
}

/// Signs the request options `options` with the passkey the shopper picks from the
/// autofill of a field marked `webauthn`, whenever that is; ended early by `stop`.
pub async fn get_from_autofill(options: &str, stop: &Stopper) -> Result<String, String> {
    ceremony("get", "parseRequestOptionsFromJSON", options, Some(stop)).await
}

/// Ends a waiting request (an `AbortController`): a browser takes one request at a
/// time, so the autofill's is ended before the button's starts.
#[derive(Clone)]
pub struct Stopper(JsValue);

impl Stopper {
    pub fn new() -> Result<Stopper, String> {
        let class = member(&js_sys::global(), "AbortController")?.dyn_into::<Function>().map_err(in_words)?;
        Reflect::construct(&class, &js_sys::Array::new()).map(Stopper).map_err(in_words)
    }

    pub fn stop(&self) {
        if let Ok(abort) = member(&self.0, "abort").and_then(|abort| abort.dyn_into::<Function>().map_err(in_words)) {
            let _ = abort.call0(&self.0);
        }
    }
}

/// Calls `then` once after `seconds`.
pub fn after(seconds: u64, then: impl FnOnce() + 'static) {
    let then = wasm_bindgen::closure::Closure::once_into_js(then);
    if let Ok(set_timeout) =
        member(&js_sys::global(), "setTimeout").and_then(|f| f.dyn_into::<Function>().map_err(in_words))
    {
        let _ = set_timeout.call2(&JsValue::NULL, &then, &JsValue::from_f64(seconds as f64 * 1000.0));
    }
}

/// Sends the browser to `path` (a path of this site).
pub fn go_to(path: &str) {
    let assign =
        member(&js_sys::global(), "location").and_then(|location| Ok((member(&location, "assign")?, location)));
    if let Ok((assign, location)) = assign
        && let Ok(assign) = assign.dyn_into::<Function>()
    {
        let _ = assign.call1(&location, &JsValue::from_str(path));
    }
}

async fn ceremony(method: &str, parse: &str, options: &str, autofill: Option<&Stopper>) -> Result<String, String> {
    let global = js_sys::global();
    let unable = || "This browser cannot use passkeys here. Update it, or sign in with an API key.".to_owned();
    // Missing on a page that is not a secure context (plain HTTP but at localhost) too.
    let credential_type = member(&global, "PublicKeyCredential")?;
    if credential_type.is_undefined() {
        return Err(unable());
    }
    let parse = member(&credential_type, parse)?.dyn_into::<Function>().map_err(|_| unable())?;
    let options = JSON::parse(options).map_err(in_words)?;
    let public_key = parse.call1(&credential_type, &options).map_err(in_words)?;
    let request = Object::new();
    Reflect::set(&request, &JsValue::from_str("publicKey"), &public_key).map_err(in_words)?;
    if let Some(stop) = autofill {
        Reflect::set(&request, &JsValue::from_str("mediation"), &JsValue::from_str("conditional")).map_err(in_words)?;
        Reflect::set(&request, &JsValue::from_str("signal"), &member(&stop.0, "signal")?).map_err(in_words)?;
    }
    let credentials = member(&member(&global, "navigator")?, "credentials")?;
    let call = member(&credentials, method)?.dyn_into::<Function>().map_err(in_words)?;
    let promise = call.call1(&credentials, &request).map_err(in_words)?.dyn_into::<Promise>().map_err(in_words)?;
    let credential = wasm_bindgen_futures::JsFuture::from(promise).await.map_err(in_words)?;
    JSON::stringify(&credential).map(String::from).map_err(in_words)
}

fn member(target: &JsValue, name: &str) -> Result<JsValue, String> {
    Reflect::get(target, &JsValue::from_str(name)).map_err(in_words)
}

/// What went wrong, for people: the browser's `DOMException` by its name.
fn in_words(error: JsValue) -> String {
    let name = Reflect::get(&error, &JsValue::from_str("name")).ok().and_then(|name| name.as_string());
    match name.as_deref() {
        Some("NotAllowedError" | "AbortError") => {
            "No passkey was used: the request was cancelled, or took too long. Try again.".into()
        }
        Some("InvalidStateError") => "This device already has a passkey for this account.".into(),
        Some("SecurityError") => {
            "Passkeys work only at this store's own address (on your own machine: http://localhost, not 127.0.0.1)."
                .into()
        }
        _ => format!("The browser could not use a passkey ({}).", name.unwrap_or_else(|| "unknown error".into())),
    }
}
