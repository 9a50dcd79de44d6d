//! The public REST API, mounted at `/api/v1`: one module per resource, one error type
//! (`app::error::AppError`) for every failure, and an OpenAPI document built from the
//! same handler annotations that build the router.

pub mod auth;
pub mod categories;
pub mod events;
pub mod extract;
pub mod inventory;
pub mod keys;
pub mod openapi;
pub mod orders;
pub mod pets;
pub mod webhooks;

use app::error::{AppError, ErrorCode};
use app::model::Page;
use std::convert::Infallible;
use std::sync::{Arc, LazyLock};

use axum::extract::{OriginalUri, Request};
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use serde::Serialize;
use tower::util::Either;
use tower::util::future::EitherResponseFuture;
use tower::{Layer, Service, ServiceBuilder};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::{AllowHeaders, Any, CorsLayer};
use tower_http::limit::RequestBodyLimitLayer;

use crate::{AppState, HttpService};

/// Where the API is mounted; `Location` and `Link` headers are built from it.
pub const BASE: &str = "/api/v1";

/// The API as one service, answering `/api` and everything under it: its routes at
/// their full paths (`/api/v1/pets/{petId}`), and JSON 404s for the rest (`/api/v1/`
/// with its slash, other versions) behind the same guard. [`in_front_of`] puts it in
/// front of the site.
///
/// Its layers wrap the router as a whole, not each route: axum clones every layer a
/// route carries, boxed, for each request, and with a dozen of them that cloning,
/// allocating and moving was a quarter of the server's CPU per API request
/// (docs/PERFORMANCE.md); the metrics count every answer from outside it all
/// (`ops::EveryRequest`). From the outside in: CORS, for requests with an `Origin`
/// (preflight requests are answered there), authentication and rate limits
/// (`EveryRequest`), the body limit, the panic catcher.
pub fn service(state: AppState) -> impl HttpService {
    let guarded = EveryRequest { state: state.clone(), inner: routes(state) };
    // CORS is for browsers, which send `Origin` with every cross-origin request (and
    // every preflight): a request without one (a server, a script) has no use for its
    // headers and skips it, which was a twentieth of a cached read's instructions.
    let by_origin = Split {
        goes_left: |request: &Request| request.headers().contains_key(header::ORIGIN),
        left: cors().layer(guarded.clone()),
        right: guarded,
    };
    ServiceBuilder::new().map_response(vary_by_origin).service(by_origin)
}

/// Every answer says it depends on `Origin` (CORS headers with one, none without), so
/// that a cache between a browser and the API never hands a browser an answer made for
/// a request without it.
fn vary_by_origin(mut response: Response) -> Response {
    response.headers_mut().append(header::VARY, HeaderValue::from_static("origin"));
    response
}

/// The API without authentication and rate limits: every request acts as `caller`.
/// Only for measuring what the guard costs (`make bench-auth`, with the
/// `bench-internals` feature, which the binary users run is never built with).
#[cfg(feature = "bench-internals")]
pub fn service_without_guard(state: AppState, caller: app::model::Caller) -> impl HttpService {
    let trust = axum::middleware::from_fn(move |request: Request, next| async move {
        let limit = extract::body_limit(request.method(), request.uri().path());
        json_error_for_bare_413(auth::trust(caller, request, next).await, limit)
    });
    ServiceBuilder::new().layer(trust).service(routes(state))
}

/// The routes inside the guard, with the body limit and the panic catcher.
fn routes(state: AppState) -> impl HttpService {
    let (routes, _) = openapi::routes(&state.config);
    let public_url: Option<Arc<str>> = state.config.public_url.as_deref().map(Arc::from);
    let router = routes
        // Both fallbacks after every route: axum applies the 405 one to the routes
        // registered before it.
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state);
    let inner = ServiceBuilder::new()
        .layer(CatchPanicLayer::custom(|_| AppError::internal("handler panicked", "panic").into_response()))
        .service(router);
    // Bodies are cut off at the limit as they arrive, with or without a Content-Length;
    // a Content-Length over it is refused before the handler runs. A photo upload has a
    // limit of its own (`extract::body_limit`).
    let limited = |limit: usize| {
        ServiceBuilder::new()
            .map_response(IntoResponse::into_response)
            .layer(RequestBodyLimitLayer::new(limit))
            .service(inner.clone())
    };
    // axum's extractors add a limit of their own, 2 MB, unless told not to: a photo is
    // larger. Every other body is cut off far below it (asserted below `routes`), so
    // only photos are told (telling is an extension inserted into each request, a fifth
    // of what the limits cost).
    let photos = ServiceBuilder::new()
        .layer(axum::extract::DefaultBodyLimit::disable())
        .service(limited(app::services::photos::MAX_UPLOAD_BYTES));
    let by_route = Split {
        goes_left: |request: &Request| extract::is_photo_upload(request.method(), request.uri().path()),
        left: photos,
        right: limited(extract::BODY_LIMIT),
    };
    ServiceBuilder::new()
        .map_response(move |response: Response| absolute_links(response, public_url.as_deref()))
        .service(by_route)
}

// Bodies other than photos are cut off by our own limit before axum's own (2 MB) could
// apply, so only the photo branch switches axum's off (`routes`).
const _: () = assert!(extract::BODY_LIMIT < 2_000_000);

/// The route template an API path belongs to (`/api/v1/pets/{petId}`), for the
/// metrics. Matched by the operational layer from the path, so that the answers given
/// before the router (the guard's refusals, preflights, bodies refused by their
/// length) are counted under their route too, and the router needs no layer per route
/// to tell it.
pub fn route_template(path: &str) -> Option<&'static str> {
    static TEMPLATES: LazyLock<matchit::Router<&'static str>> = LazyLock::new(|| {
        let mut templates = matchit::Router::new();
        // The routes do not depend on the configuration (only the document's notes do).
        for path in openapi::routes(&crate::Config::default()).1.paths.paths.into_keys() {
            let template: &'static str = Box::leak(format!("{BASE}{path}").into_boxed_str());
            templates.insert(template, template).expect("the documented paths are distinct");
        }
        templates
    });
    TEMPLATES.at(path).ok().map(|matched| *matched.value)
}

/// Whether the API answers `path`: `/api` and everything under it.
pub fn is_api_path(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/")
}

/// `api` in front of `site`: requests for `/api` and everything under it go to the
/// API, all others to the site. Split by the path's prefix before any router, so that
/// an API request is routed once, by the API's own router.
pub fn in_front_of<S: HttpService>(api: impl HttpService, site: S) -> impl HttpService {
    Split { goes_left: |request: &Request| is_api_path(request.uri().path()), left: api, right: site }
}

/// Two services, and which of them a request goes to.
#[derive(Clone)]
struct Split<L, R> {
    goes_left: fn(&Request) -> bool,
    left: L,
    right: R,
}

impl<L: HttpService, R: HttpService> Service<Request> for Split<L, R> {
    type Response = Response;
    type Error = Infallible;
    type Future = EitherResponseFuture<L::Future, R::Future>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        std::task::ready!(self.left.poll_ready(cx))?;
        self.right.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let mut target =
            if (self.goes_left)(&request) { Either::Left(&mut self.left) } else { Either::Right(&mut self.right) };
        target.call(request)
    }
}

/// What every API request goes through, as one layer: authentication and rate limits
/// (`auth::guard`), the Error shape for the body limit's own 413, and `X-API-Stability`
/// on every answer of a beta or experimental operation, whoever produced it (handler,
/// extractor, guard or body limit).
///
/// A service of its own rather than `axum::middleware::from_fn_with_state`, which boxes
/// the routes inside for every request (see `ops::EveryRequest`).
#[derive(Clone)]
struct EveryRequest<S> {
    state: AppState,
    inner: S,
}

impl<S: HttpService> Service<Request> for EveryRequest<S> {
    type Response = Response;
    type Error = Infallible;
    type Future = futures_util::future::BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let path = request.uri().path();
        let stability = openapi::stability(request.method().as_str(), path.strip_prefix(BASE).unwrap_or(path));
        let limit = extract::body_limit(request.method(), path);
        // The guard may wait (a key read from the database) before the routes are
        // called: the future takes a ready clone, and leaves this one (tower's rule
        // for calling a service later than `call`).
        let fresh = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, fresh);
        // Combinators, not an async block around the guard: a block awaiting what it
        // captured holds it twice (see `ops::EveryRequest`).
        let answered = auth::guard(self.state.clone(), request, move |request| {
            inner
                .call(request)
                .map(move |Ok(response): Result<Response, Infallible>| json_error_for_bare_413(response, limit))
        })
        .map(move |mut response| {
            if let Some(stability) = stability {
                const STABILITY: HeaderName = HeaderName::from_static("x-api-stability");
                response.headers_mut().insert(STABILITY, HeaderValue::from_static(stability));
            }
            Ok(response)
        });
        Box::pin(answered)
    }
}

/// CORS for third-party web apps: any origin, no credentials (keys travel in headers),
/// so the wildcards of the Fetch standard apply: any method, every response header
/// exposed. Allowed request headers are those the preflight asks for (a wildcard would
/// not cover `Authorization`). No `Vary` of its own: [`service`] adds `Vary: Origin` to
/// every answer, with an `Origin` or without. Every value is a constant but the
/// max-age: a value built from a list was an allocation or a shared count to bump each
/// time (docs/PERFORMANCE.md).
fn cors() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(Any)
        .allow_methods(Any)
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers(Any)
        .vary([])
        .max_age(std::time::Duration::from_secs(600))
}

pub async fn not_found(uri: OriginalUri) -> AppError {
    AppError::new(ErrorCode::NotFound, format!("no API resource at {}", uri.path()))
}

async fn method_not_allowed(method: Method, uri: OriginalUri) -> AppError {
    AppError::new(ErrorCode::MethodNotAllowed, format!("{method} is not allowed on {}", uri.path()))
}

/// `RequestBodyLimitLayer` answers an oversized Content-Length itself, with a plain-text
/// body; give it the Error shape like every other API error.
fn json_error_for_bare_413(response: Response, limit: usize) -> Response {
    let is_bare_413 = response.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE
        && response.headers().get(header::CONTENT_TYPE).is_none_or(|v| v != "application/json");
    if is_bare_413 {
        return extract::too_large(limit).into_response();
    }
    response
}

/// The paging parameters of every list endpoint, kept as text so that the service can
/// name a bad one in its 422.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Page size, 1 to 100 (default 20).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100)]
    pub limit: Option<String>,
    /// Opaque cursor from the previous page's `Link: rel="next"` header.
    #[param(min_length = 1)]
    pub cursor: Option<String>,
}

/// The errors of every endpoint that reads a JSON body, documented once.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum BodyErrors {
    /// The body is not valid JSON, or a path id is not an integer (`bad_request`)
    #[response(status = 400)]
    BadRequest(AppError),
    /// The body did not fully arrive within the request timeout (`request_timeout`)
    #[response(status = 408)]
    RequestTimeout(AppError),
    /// The body is over 64 KiB (`payload_too_large`)
    #[response(status = 413)]
    PayloadTooLarge(AppError),
    /// The body is not sent as `application/json` (`unsupported_media_type`)
    #[response(status = 415)]
    UnsupportedMediaType(AppError),
    /// A field is missing, unknown (named in the message), of the wrong type, or breaks a
    /// limit, or an id in the body names nothing (`validation_failed`)
    #[response(status = 422)]
    ValidationFailed(AppError),
}

/// The errors of every endpoint that needs a key, documented once.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum AuthErrors {
    /// No key (`missing_api_key`, with `WWW-Authenticate: ApiKey`), or an unknown or
    /// revoked one (`invalid_api_key`)
    #[response(status = 401)]
    Unauthorized(AppError),
    /// The key's role may not do this (`forbidden`)
    #[response(status = 403)]
    Forbidden(AppError),
    /// Over the key's rate limit (`rate_limited`) or banned after hammering
    /// (`temporarily_banned`); see `Retry-After`
    #[response(status = 429)]
    TooManyRequests(AppError),
}

/// The errors of every list endpoint, documented once.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum ListErrors {
    /// The query string cannot be decoded, or a filter, `limit` or `cursor` is malformed
    /// or out of range; the message names it (`validation_failed`)
    #[response(status = 422)]
    ValidationFailed(AppError),
}

/// A page of a listing: the body is the plain array; the next page, if any, is in
/// `Link: <…>; rel="next"` (the request's own URL with the new cursor).
pub fn paged<T: Serialize>(uri: &OriginalUri, page: Page<T>) -> Response {
    with_next_link(axum::Json(page.items).into_response(), uri, page.next_cursor.as_deref())
}

/// A page of pets already encoded (`pets::list_as_json`), sent as `paged` sends one.
pub fn paged_json(uri: &OriginalUri, page: app::services::pets::JsonPage) -> Response {
    with_next_link(json_answer(page.json), uri, page.next_cursor.as_deref())
}

fn with_next_link(mut response: Response, uri: &OriginalUri, cursor: Option<&str>) -> Response {
    if let Some(cursor) = cursor {
        let mut pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(uri.query().unwrap_or("")).unwrap_or_default();
        pairs.retain(|(key, _)| key != "cursor");
        pairs.push(("cursor".into(), cursor.to_owned()));
        let query = serde_urlencoded::to_string(&pairs).unwrap_or_default();
        let link = format!("<{}?{query}>; rel=\"next\"", uri.path());
        if let Ok(value) = HeaderValue::from_str(&link) {
            response.headers_mut().insert(header::LINK, value);
        }
    }
    response
}

/// An answer of JSON already encoded (a kept pet or page of pets), as `axum::Json`
/// would send it. Its header map has room from the start for what the layers outside
/// add (the guard would otherwise grow it, rehashing what is in it).
pub fn json_answer(json: axum::body::Bytes) -> Response {
    let mut response = Response::new(axum::body::Body::from(json));
    // Its own (content type; deprecation, sunset and link for a pet; link for a page)
    // and the layers' headers.
    *response.headers_mut() = axum::http::HeaderMap::with_capacity(4 + auth::ANSWER_HEADERS);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// With `--public-url`, the `Location` and `Link` of an answer name absolute URLs
/// (`https://shop.example/api/v1/…`), as clients behind the operator's proxy reach
/// them; without it they stay paths on this server.
fn absolute_links(mut response: Response, public_url: Option<&str>) -> Response {
    let Some(public_url) = public_url else { return response };
    for name in [header::LOCATION, header::LINK] {
        let values: Vec<HeaderValue> = response
            .headers()
            .get_all(&name)
            .iter()
            .map(|value| {
                let Ok(text) = value.to_str() else { return value.clone() };
                let absolute = match name {
                    header::LINK => text.replace("</", &format!("<{public_url}/")),
                    _ if text.starts_with('/') => format!("{public_url}{text}"),
                    _ => return value.clone(),
                };
                HeaderValue::from_str(&absolute).unwrap_or_else(|_| value.clone())
            })
            .collect();
        if values.is_empty() {
            continue;
        }
        response.headers_mut().remove(&name);
        for value in values {
            response.headers_mut().append(name.clone(), value);
        }
    }
    response
}

/// The `Location` of a newly created resource (a path under the API's base).
pub fn location(path: String) -> [(header::HeaderName, String); 1] {
    [(header::LOCATION, format!("{BASE}{path}"))]
}
