//! Authentication and rate limits for every API request, as one layer (`guard`), and
//! the role extractors handlers ask for (`Customer`, `Admin`).
//!
//! The guard reads the key, counts the request against its subject (the key, or the
//! client IP when there is no valid key) and answers 429 itself when the subject is over
//! its limit or banned. Every response it passes, errors included, gets the
//! `X-RateLimit-*` headers. Whether a route needs a key is the handler's business: it
//! names `Customer` or `Admin` among its arguments, or neither for public routes.

use std::net::SocketAddr;

use app::error::{AppError, ErrorCode};
use app::model::{Caller, Limits, Plan, Role};
use app::services::auth::{self, Presented};
use app::services::limits::{Verdict, WindowState};
use app::services::sessions;
use axum::extract::{ConnectInfo, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::AppState;

/// The outcome of reading the request's key, for the extractors.
#[derive(Clone)]
struct Authenticated(Result<Option<Caller>, AppError>);

/// The client's address (the TCP peer; no proxy headers are trusted).
pub fn client_ip(parts_extensions: &axum::http::Extensions) -> String {
    parts_extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map_or_else(|| "unknown".to_owned(), |ConnectInfo(addr)| addr.ip().to_string())
}

/// The key a request presents, in `X-API-Key` or as a bearer token.
pub fn presented_key(headers: &HeaderMap) -> Presented<'_> {
    // An `X-API-Key` header is the key, even when `Authorization` is sent too: a bad one
    // is never rescued by the other header. An empty header is no key at all (401
    // missing_api_key, not invalid_api_key).
    // A constant name: looked up by a name given as text, it is parsed on every request.
    const X_API_KEY: HeaderName = HeaderName::from_static("x-api-key");
    if let Some(header) = headers.get(X_API_KEY) {
        return match header.to_str().map(str::trim) {
            Ok("") => Presented::Nothing,
            Ok(key) => Presented::Key(key),
            Err(_) => Presented::Key("not visible ASCII"),
        };
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")));
    match bearer.map(str::trim).filter(|k| !k.is_empty()) {
        Some(key) => Presented::Key(key),
        None => Presented::Nothing,
    }
}

/// The storefront's session token, when a request with no key comes from one of this
/// site's own pages (the docs page's try-it panel uses the signed-in user's key so).
/// Only a browser's own `Sec-Fetch-Site: same-origin` counts: another site's page can
/// neither set nor forge it, so it cannot spend a shopper's session.
fn browser_session(headers: &HeaderMap) -> Option<&str> {
    const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");
    let same_origin = headers.get(SEC_FETCH_SITE).is_some_and(|v| v.as_bytes() == b"same-origin");
    let cookie = headers.get(header::COOKIE)?.to_str().ok()?;
    same_origin.then(|| sessions::token_from_cookie_header(cookie)).flatten()
}

/// In front of every API route (fallbacks included): `inner` is the rest of the stack.
pub async fn guard<F, Fut>(state: &AppState, mut request: Request, inner: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    let authenticated = match presented_key(request.headers()) {
        Presented::Nothing => match browser_session(request.headers()) {
            // Boxed: a session is read from the database, whose (large) future would
            // otherwise be part of every request's.
            Some(token) => Box::pin(sessions::caller(&state.pool, state.clock.now(), token)).await,
            None => Ok(None),
        },
        key => state.auth.authenticate(key).await,
    };
    state.traffic.record(authenticated.as_ref().ok().and_then(|c| c.map(|c| c.key_id)));
    let (subject, limits) = match &authenticated {
        Ok(Some(caller)) => (format!("key:{}", caller.key_id), caller.limits),
        // No key, or one that does not work: the client IP, at the Free plan's numbers.
        _ => (format!("ip:{}", client_ip(request.extensions())), free_limits()),
    };
    let verdict = state.limiter.check(&subject, limits);
    let mut response = match verdict {
        Verdict::Allowed(_) => {
            request.extensions_mut().insert(Authenticated(authenticated));
            inner(request).await
        }
        Verdict::Limited { retry_after, window } => AppError::too_many(
            ErrorCode::RateLimited,
            format!("rate limit of {} requests reached; retry in {retry_after} s", window.limit),
            retry_after,
        )
        .into_response(),
        Verdict::Banned { retry_after, .. } => AppError::too_many(
            ErrorCode::TemporarilyBanned,
            format!("too many requests after being limited; banned for another {retry_after} s"),
            retry_after,
        )
        .into_response(),
    };
    // Room for these and what the layers outside add (CORS, security headers, request
    // id) at once, rather than the map growing (and rehashing) three times on the way.
    response.headers_mut().reserve(16);
    rate_limit_headers(response.headers_mut(), verdict.window());
    response
}

/// Stands in for `guard` when measuring it: every request is `caller`, nothing counted.
pub async fn trust(caller: Caller, mut request: Request, next: Next) -> Response {
    request.extensions_mut().insert(Authenticated(Ok(Some(caller))));
    next.run(request).await
}

pub fn free_limits() -> Limits {
    Plan::Free.limits().expect("Free has fixed limits")
}

pub fn rate_limit_headers(headers: &mut HeaderMap, window: WindowState) {
    const LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
    const REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
    const RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");
    headers.insert(LIMIT, HeaderValue::from(window.limit));
    headers.insert(REMAINING, HeaderValue::from(window.remaining));
    headers.insert(RESET, HeaderValue::from(window.reset));
}

fn caller_for(parts: &Parts, role: Role) -> Result<Caller, AppError> {
    match parts.extensions.get::<Authenticated>() {
        Some(Authenticated(Ok(caller))) => auth::require(*caller, role),
        Some(Authenticated(Err(err))) => Err(err.clone()),
        None => Err(AppError::internal("auth", "route is not behind the guard layer")),
    }
}

fn unauthorized(err: AppError) -> Response {
    let mut response = err.clone().into_response();
    if err.status == 401 {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("ApiKey"));
    }
    response
}

/// Any valid key (the contract's "customer" role; admins may do all customers may).
pub struct Customer(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for Customer {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        caller_for(parts, Role::Customer).map(Customer).map_err(unauthorized)
    }
}

/// An admin key.
pub struct Admin(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for Admin {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        caller_for(parts, Role::Admin).map(Admin).map_err(unauthorized)
    }
}

/// The caller if a valid key came with the request, for routes that work either way.
pub struct MaybeCaller(pub Option<Caller>);

impl<S: Send + Sync> FromRequestParts<S> for MaybeCaller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        match parts.extensions.get::<Authenticated>() {
            Some(Authenticated(Ok(caller))) => Ok(MaybeCaller(*caller)),
            Some(Authenticated(Err(err))) => Err(unauthorized(err.clone())),
            None => Ok(MaybeCaller(None)),
        }
    }
}
