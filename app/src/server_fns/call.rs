//! What a server function needs from its request, read once, before its first `.await`.
//!
//! Leptos finds contexts through the current reactive owner, and a server function's
//! future is not always polled under it once it has awaited (the data of a lazily
//! loaded route, when the app had them, was one such case: a context looked up after a
//! database query came back missing). So every server function starts with
//! `Call::new()`, which reads them all.

use axum::http::{HeaderValue, header, request::Parts};
use leptos::prelude::*;
use leptos_axum::ResponseOptions;

use crate::db::Pool;
use crate::error::AppError;
use crate::model::{Caller, Role};
use crate::services::clock::Clock;
use crate::services::{auth, sessions};

pub struct Call {
    pub pool: Pool,
    pub clock: Clock,
    /// The browser's session token, if it sent one.
    token: Option<String>,
    /// The TCP peer's address (no proxy headers are trusted).
    pub ip: String,
    response: Option<ResponseOptions>,
}

/// A shared service the server put in the context (the limiter, the authenticator, …).
pub fn service<T: Clone + Send + Sync + 'static>(what: &str) -> Result<T, AppError> {
    use_context::<T>().ok_or_else(|| AppError::internal("server function", format!("no {what} in context")))
}

impl Call {
    pub fn new() -> Result<Call, AppError> {
        let parts = use_context::<Parts>();
        let token = parts
            .as_ref()
            .and_then(|parts| parts.headers.get(header::COOKIE)?.to_str().ok())
            .and_then(sessions::token_from_cookie_header)
            .map(str::to_owned);
        let ip = parts
            .as_ref()
            .and_then(|parts| parts.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>())
            .map_or_else(|| "unknown".to_owned(), |info| info.0.ip().to_string());
        Ok(Call {
            pool: service::<Pool>("database pool")?,
            clock: use_context::<Clock>().unwrap_or_default(),
            token,
            ip,
            response: use_context::<ResponseOptions>(),
        })
    }

    pub fn now(&self) -> i64 {
        self.clock.now()
    }

    /// The signed-in caller, from the session cookie.
    pub async fn caller(&self) -> Result<Option<Caller>, AppError> {
        match &self.token {
            Some(token) => sessions::caller(&self.pool, self.now(), token).await,
            None => Ok(None),
        }
    }

    /// The signed-in caller if it has `role` (the REST API's rule), else 401 or 403.
    pub async fn require(&self, role: Role) -> Result<Caller, AppError> {
        auth::require(self.caller().await?, role)
    }

    pub async fn start_session(&self, key_id: i64) -> Result<(), AppError> {
        let token = sessions::start(&self.pool, self.now(), key_id).await?;
        self.set_cookie(&sessions::cookie(Some(&token)));
        Ok(())
    }

    pub async fn end_session(&self) -> Result<(), AppError> {
        if let Some(token) = &self.token {
            sessions::end(&self.pool, token).await?;
        }
        self.set_cookie(&sessions::cookie(None));
        Ok(())
    }

    fn set_cookie(&self, value: &str) {
        if let (Some(response), Ok(value)) = (&self.response, HeaderValue::from_str(value)) {
            response.append_header(header::SET_COOKIE, value);
        }
    }
}
