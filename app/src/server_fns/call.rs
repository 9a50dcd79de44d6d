//! How a server function begins: `Call::admit()` reads what it needs from the request
//! and passes it through the same gate as a REST request (`services::access`): the
//! session's key (or, signed out, the client's address) is counted against its limits,
//! and a ban refuses it. Then the function is a thin call into `services`.
//!
//! Called over HTTP (`/_app/…`, by the WASM or a plain form), a server function counts
//! as one request. Called while the server renders a page (the page's data), it counts
//! nothing, since loading a page is free; only a ban refuses it.
//!
//! Leptos finds contexts through the current reactive owner, and a server function's
//! future is not always polled under it once it has awaited (the data of a lazily
//! loaded route, when the app had them, was one such case: a context looked up after a
//! database query came back missing). So `admit` reads them all before its first
//! `.await`.

use axum::http::{HeaderValue, header, request::Parts};
use leptos::prelude::*;
use leptos_axum::ResponseOptions;

use crate::error::AppError;
use crate::model::{Caller, Role};
use crate::services::Services;
use crate::services::access::{ClientAddr, Counting, Credentials};
use crate::services::{auth, sessions};

use super::PREFIX;

pub struct Call {
    pub services: Services,
    /// The signed-in caller, from the session cookie.
    pub caller: Option<Caller>,
    /// Where the request came from (see `access::TrustedProxies`).
    pub client: ClientAddr,
    /// The browser's session token, if it sent one that is live.
    token: Option<String>,
    /// The page the call came from (its `Referer`, when a path of this site).
    page: Option<String>,
    response: Option<ResponseOptions>,
}

impl std::ops::Deref for Call {
    type Target = Services;
    fn deref(&self) -> &Services {
        &self.services
    }
}

impl Call {
    /// The request's caller, admitted by its limits (429 when over them or banned).
    pub async fn admit() -> Result<Call, AppError> {
        Call::admit_counted(true).await
    }

    /// As [`Call::admit`], for signing in: the call itself counts nowhere (a ban still
    /// refuses it). The key it checks is counted as that key's request, or, when it
    /// does not work, as a failed attempt from this address in a bucket of its own
    /// (`Access::sign_in`): mistyped keys must not spend the allowance the address's
    /// public reads and sign-ups share.
    pub async fn admit_for_sign_in() -> Result<Call, AppError> {
        Call::admit_counted(false).await
    }

    async fn admit_counted(counted: bool) -> Result<Call, AppError> {
        let services = use_context::<Services>()
            .ok_or_else(|| AppError::internal("server function", "no services in the context"))?;
        let response = use_context::<ResponseOptions>();
        let Some(parts) = use_context::<Parts>() else {
            return Err(AppError::internal("server function", "no request in the context"));
        };
        let token = services.session_cookie.token_in_headers(&parts.headers).map(str::to_owned);
        let client = services.access.client(&parts.extensions, &parts.headers);
        let over_http = parts.uri.path().starts_with(PREFIX);
        let counting = if counted && over_http { Counting::Counted } else { Counting::BansOnly };
        let credentials = token.as_deref().map_or(Credentials::Nothing, Credentials::Session);
        let admitted = services.access.admit(credentials, client, counting).await.map_err(|refused| refused.error)?;
        let caller = admitted.caller?;
        let page = crate::paths::referring_page(&parts.headers).map(str::to_owned);
        Ok(Call { token: token.filter(|_| caller.is_some()), caller, client, services, page, response })
    }

    pub fn now(&self) -> i64 {
        self.clock.now()
    }

    /// The signed-in caller if it has `role` (the REST API's rule), else 401 or 403.
    pub fn require(&self, role: Role) -> Result<Caller, AppError> {
        auth::require(self.caller, role)
    }

    /// Signs this browser in as `key_id` (`opened`: how it proved it), ending the
    /// session it had.
    pub async fn start_session(&self, key_id: i64, opened: sessions::Opened<'_>) -> Result<(), AppError> {
        let token = sessions::start(&self.db, self.now(), key_id, opened, self.token.as_deref()).await?;
        self.set_cookie(&self.session_cookie.set(Some(&token)));
        Ok(())
    }

    /// This browser's session token, if it is signed in.
    pub fn session_token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// How this browser's session was opened (`None` when it has none).
    pub async fn session_opening(&self) -> Result<Option<sessions::Opening>, AppError> {
        match &self.token {
            Some(token) => sessions::opening(&self.db, token).await,
            None => Ok(None),
        }
    }

    pub async fn end_session(&self) -> Result<(), AppError> {
        if let Some(token) = &self.token {
            sessions::end(&self.db, token).await?;
        }
        self.set_cookie(&self.session_cookie.set(None));
        Ok(())
    }

    /// Sends the browser back to the page the call came from, to show it again with the
    /// change made (and, through the flash, what was done), or else to `fallback`.
    /// A console page's lists are drawn on the server, so this is how they follow.
    pub fn back_to_page(&self, fallback: &str) {
        leptos_axum::redirect(self.page.as_deref().unwrap_or(fallback));
    }

    /// The answer carries a secret (a new key): no cache may keep it.
    pub fn no_store(&self) {
        if let Some(response) = &self.response {
            response.insert_header(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        }
    }

    fn set_cookie(&self, value: &str) {
        if let (Some(response), Ok(value)) = (&self.response, HeaderValue::from_str(value)) {
            response.append_header(header::SET_COOKIE, value);
        }
    }
}
