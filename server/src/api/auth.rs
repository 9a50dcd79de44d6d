//! Authentication and rate limits for every API request, as one layer (`guard`), and
//! the role extractors handlers ask for (`Customer`, `Admin`).
//!
//! The guard reads the key (or the same-origin session) and passes the request through
//! the gate every surface shares (`app::services::access`), which counts it against its
//! subject; the guard answers 429 itself when the subject is over its limit or banned. Every response it passes, errors included, gets the
//! `X-RateLimit-*` headers. Whether a route needs a key is the handler's business: it
//! names `Customer` or `Admin` among its arguments, or neither for public routes.

use app::error::AppError;
use app::model::{Caller, Role};
use app::services::access::{Admitted, Counting, Credentials, Refused};
use app::services::auth::{self, Presented};
use app::services::limits::WindowState;
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::AppState;

/// The outcome of reading the request's key, for the extractors.
#[derive(Clone)]
struct Authenticated(Result<Option<Caller>, AppError>);

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
pub(crate) fn browser_session<'h>(state: &AppState, headers: &'h HeaderMap) -> Option<&'h str> {
    const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");
    let same_origin = headers.get(SEC_FETCH_SITE).is_some_and(|v| v.as_bytes() == b"same-origin");
    same_origin.then(|| state.session_cookie.token_in_headers(headers)).flatten()
}

/// In front of every API route (fallbacks included): `inner` is the rest of the stack.
/// The gate (`access`) finds the caller and counts the request; a refused one is
/// answered here, an admitted one goes on with its caller for the extractors.
pub async fn guard<F, Fut>(state: AppState, mut request: Request, inner: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    let headers = request.headers();
    let credentials = match presented_key(headers) {
        Presented::Nothing => browser_session(&state, headers).map_or(Credentials::Nothing, Credentials::Session),
        key @ Presented::Key(_) => key.into(),
    };
    let client = state.access.client(request.extensions(), headers);
    let admitted = state.access.admit(credentials, client, Counting::Counted).await;
    let (mut response, window) = match admitted {
        Ok(Admitted { caller, window }) => {
            state.traffic.record(caller.as_ref().ok().and_then(|c| c.map(|c| c.key_id)));
            request.extensions_mut().insert(Authenticated(caller));
            (inner(request).await, Some(window))
        }
        Err(refused) => {
            let Refused { error, window, key_id } = *refused;
            state.traffic.record(key_id);
            (error.into_response(), window)
        }
    };
    // Room for these and what the layers outside add (CORS for a request with an
    // Origin, `Vary`, security headers, request id) at once, rather than the map
    // growing (and rehashing) three times on the way.
    response.headers_mut().reserve(ANSWER_HEADERS);
    // A handler that counted the request against a limit of its own (sign-up's) says
    // that window instead.
    let own_window = response.extensions_mut().remove::<WindowState>();
    if let Some(window) = own_window.or(window) {
        rate_limit_headers(response.headers_mut(), window);
    }
    response
}

/// About how many headers the guard and the layers outside it add to an answer (the
/// guard reserves room for them all at once).
pub const ANSWER_HEADERS: usize = 16;

/// Stands in for `guard` when measuring it: every request is `caller`, nothing counted.
#[cfg(feature = "bench-internals")]
pub async fn trust(caller: Caller, mut request: Request, next: axum::middleware::Next) -> Response {
    request.extensions_mut().insert(Authenticated(Ok(Some(caller))));
    next.run(request).await
}

pub fn rate_limit_headers(headers: &mut HeaderMap, window: WindowState) {
    const LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
    const REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
    const RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");
    headers.insert(LIMIT, kept(&LAST_LIMIT, window.limit.into()));
    headers.insert(REMAINING, HeaderValue::from(window.remaining));
    headers.insert(RESET, kept(&LAST_RESET, window.reset));
}

/// `number`'s header value, a copy of `last`'s when it is the same number (a fresh one
/// while the thread is being torn down).
fn kept(last: &'static std::thread::LocalKey<LastValue>, number: i64) -> HeaderValue {
    last.try_with(|last| last.value(number)).unwrap_or_else(|_| HeaderValue::from(number))
}

thread_local! {
    // A window's limit and end are the same for request after request (its plan's, the
    // minute's or the day's), and making a number's value allocates: each thread keeps
    // the last of each and hands out copies (callgrind: the three values were 1,300 of
    // a pet read's instructions, three allocations among them).
    static LAST_LIMIT: LastValue = const { LastValue::new() };
    static LAST_RESET: LastValue = const { LastValue::new() };
}

/// The header value of the last number asked for, kept to be copied.
struct LastValue(std::cell::RefCell<Option<(i64, HeaderValue)>>);

impl LastValue {
    const fn new() -> LastValue {
        LastValue(std::cell::RefCell::new(None))
    }

    fn value(&self, number: i64) -> HeaderValue {
        let mut last = self.0.borrow_mut();
        match &*last {
            Some((kept, value)) if *kept == number => value.clone(),
            _ => {
                let value = HeaderValue::from(number);
                *last = Some((number, value.clone()));
                value
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_limit_headers_follow_each_window_though_values_are_kept() {
        // The same limit and reset twice (kept values), then others, then the first again.
        for (limit, remaining, reset) in [(100, 99, 60), (100, 98, 60), (1000, 5, 120), (7, 0, 60), (100, 97, 60)] {
            let mut headers = HeaderMap::new();
            rate_limit_headers(&mut headers, WindowState { limit, remaining, reset });
            assert_eq!(headers["x-ratelimit-limit"], limit.to_string());
            assert_eq!(headers["x-ratelimit-remaining"], remaining.to_string());
            assert_eq!(headers["x-ratelimit-reset"], reset.to_string());
        }
    }
}
