//! What a form sent without JavaScript did, carried to the page it came from.
//!
//! Without the WASM, a form of an island (`ActionForm`, `ui::widgets::post_form`) posts to its server function as a plain HTML form,
//! and the browser must be sent back to a page. The server (`server::ops::forms`)
//! answers with a redirect and this "flash": a cookie that lives for a minute and is
//! read by the next page, which shows the outcome under the one form that was sent
//! (and fills in again what was typed, after a refusal) and clears it. A cookie rather
//! than the page's address: a link cannot put words in the store's mouth, and what was
//! typed stays out of logs and histories.

//!
//! The staff console's forms and the order list's actions show their page again with
//! JavaScript too (their lists are drawn on the server): a call whose function sends
//! the browser elsewhere gets the flash as well. A page turns it into a `ui::note::Note`
//! of plain words for the island that shows the form.

use leptos::server_fn::ServerFn;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Flash {
    /// The server function's path (`/_app/place_order`).
    pub path: String,
    /// Its answer: the JSON it returned (as text), or its error.
    pub outcome: Result<String, AppError>,
    /// The form's fields as sent: which record it was about (`id`, `pet_id`) and, after
    /// a refusal, what to fill in again. Empty when too long for a cookie.
    pub values: Vec<(String, String)>,
}

/// Form fields no flash keeps, whatever the outcome: secrets (the sign-in form's key, a
/// recovery code).
/// The flash is a cookie, which the browser stores.
const SECRET_FIELDS: &[&str] = &["key", "code"];

impl Flash {
    /// The flash of a form sent to the function at `path` (`/_app/…`): its fields as
    /// sent (which record it was about, what it asked for, and after a refusal what to
    /// fill in again), but never a secret. (An answer that carries a secret never
    /// becomes a flash: `server::ops::forms` shows it in its own answer.)
    pub fn new(path: String, outcome: Result<String, AppError>, mut values: Vec<(String, String)>) -> Flash {
        values.retain(|(field, _)| !SECRET_FIELDS.contains(&field.as_str()));
        Flash { path, outcome, values }
    }

    /// Which record the form was about: its `id` (or `pet_id`) field.
    pub fn record(&self) -> Option<&str> {
        self.value("id").or_else(|| self.value("pet_id"))
    }

    pub fn value(&self, name: &str) -> Option<&str> {
        self.values.iter().find(|(field, _)| field == name).map(|(_, value)| value.as_str())
    }

    /// The outcome of the form of server function `S` about `record` (`None` for a
    /// form about no record, such as a create form), when this flash is that form's.
    pub fn outcome_of<S>(&self, record: Option<i64>) -> Option<Result<S::Output, AppError>>
    where
        S: ServerFn,
        S::Output: DeserializeOwned,
    {
        if !self.is_of::<S>(record) {
            return None;
        }
        Some(match &self.outcome {
            Ok(json) => serde_json::from_slice(json.as_bytes()).map_err(|e| {
                AppError::new(crate::error::ErrorCode::InternalError, format!("{}'s answer: {e}", self.path))
            }),
            Err(error) => Err(error.clone()),
        })
    }

    fn is_of<S: ServerFn>(&self, record: Option<i64>) -> bool {
        self.path == S::PATH && self.record() == record.map(|id| id.to_string()).as_deref()
    }

    /// The cookie's value.
    #[cfg(feature = "ssr")]
    pub fn encode(&self) -> String {
        use base64::Engine;
        let json = serde_json::to_vec(self).unwrap_or_default();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    #[cfg(feature = "ssr")]
    pub fn decode(value: &str) -> Option<Flash> {
        use base64::Engine;
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(value).ok()?).ok()
    }
}

/// How long a flash waits for its page.
#[cfg(feature = "ssr")]
const FLASH_SECONDS: u32 = 60;

/// The flash's cookie, named and flagged like the session's (see `SessionCookie`).
#[cfg(feature = "ssr")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlashCookie {
    pub secure: bool,
}

#[cfg(feature = "ssr")]
impl FlashCookie {
    /// Cookies a browser keeps are at most 4 KB, name and attributes included.
    pub const MAX_VALUE: usize = 3_500;

    pub fn name(self) -> &'static str {
        if self.secure { "__Host-petstore_flash" } else { "petstore_flash" }
    }

    /// `Set-Cookie` for a flash, or to clear it (`None`).
    pub fn set(self, value: Option<&str>) -> String {
        let secure = if self.secure { "; Secure" } else { "" };
        let max_age = if value.is_some() { FLASH_SECONDS } else { 0 };
        format!("{}={}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}", self.name(), value.unwrap_or(""))
    }

    /// The flash a request carries, if any.
    pub fn read(self, headers: &axum::http::HeaderMap) -> Option<Flash> {
        headers
            .get_all(axum::http::header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .find_map(|cookies| crate::services::sessions::cookie_value(cookies, self.name()))
            .and_then(Flash::decode)
    }

    /// Whether a request carries one (the page for it is the visitor's own).
    pub fn is_in(self, headers: &axum::http::HeaderMap) -> bool {
        headers
            .get_all(axum::http::header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .any(|cookies| crate::services::sessions::cookie_value(cookies, self.name()).is_some())
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn a_flash_keeps_no_secret() {
        let typed = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let refused = Flash::new(
            "/_app/sign_in".into(),
            Err(AppError::new(ErrorCode::InvalidApiKey, "no")),
            typed(&[("key", "psk_abc_secret"), ("next", "/orders")]),
        );
        assert_eq!(refused.values, typed(&[("next", "/orders")]));
        assert!(!String::from_utf8_lossy(&base64_of(&refused)).contains("psk_"), "the cookie holds no key");
        let signed_in = Flash::new("/_app/sign_in".into(), Ok("null".into()), typed(&[("key", "psk_abc_secret")]));
        assert!(signed_in.values.is_empty());
        // Other fields stay: which record, which action (a note says what was done by
        // them), what to fill in again.
        let tested = typed(&[("id", "3"), ("action", "test")]);
        assert_eq!(Flash::new("/_app/staff_webhook_action".into(), Ok("{}".into()), tested.clone()).values, tested);
        let refused = Flash::new(
            "/_app/staff_save_pet".into(),
            Err(AppError::new(ErrorCode::DuplicateName, "taken")),
            typed(&[("id", "3"), ("name", "Rex")]),
        );
        assert_eq!(refused.values, typed(&[("id", "3"), ("name", "Rex")]), "a refusal gives it back");
    }

    /// The cookie's bytes as the browser keeps them, decoded.
    fn base64_of(flash: &Flash) -> Vec<u8> {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(flash.encode()).unwrap()
    }
}
