//! What an operator needs around the application: health and readiness probes, metrics,
//! request ids and logs, timeouts, compression and security headers. `wrap` puts the
//! layers around the whole router, API and pages alike.

pub mod canonical;
pub mod deadline;
pub mod forms;
pub mod health;
pub mod log_format;
pub mod log_writer;
pub mod metrics;
pub mod scope;
pub mod security;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use app::error::{AppError, ErrorCode};
use app::server_fns::flash::FlashCookie;
use app::services::sessions::SessionCookie;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::FutureExt;
use futures_util::future;
use tower::util::BoxCloneSyncService;
use tower::{Service, ServiceBuilder};
use tower_http::compression::{Compression, CompressionBody};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};

use crate::AppState;
use security::Target;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// `/healthz`, `/readyz` and `/metrics`: outside the API, so not rate-limited.
pub fn routes<S>(state: AppState) -> Router<S> {
    metrics::handle(); // installs the recorder before the first request is counted
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(metrics::render))
        .with_state(state)
}

/// The whole application as the server serves it (tests send requests to it too).
pub type App = BoxCloneSyncService<Request, Response, Infallible>;

/// The layers around the whole application, outermost first. They wrap the router as
/// one service, so each request passes through them once; layers given to the router
/// itself are cloned, boxed, into every route and cloned again for each request.
pub fn wrap(app: impl crate::HttpService, config: &crate::Config) -> App {
    let request_timeout = config.request_timeout;
    let public_url: Option<Arc<str>> = config.public_url.as_deref().map(Arc::from);
    let stack = ServiceBuilder::new()
        .map_response(|response: Response<_>| response.map(Body::new))
        // Outermost: the client's own id is kept, otherwise a new UUID.
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer_fn(|inner| CompressWhenAccepted(Compression::new(inner)))
        // A second later than the body deadline, so a slow body is told apart (408)
        // from a slow answer (503).
        .layer_fn(|inner| EveryRequest {
            inner,
            answer_within: request_timeout + Duration::from_secs(1),
            public_url: public_url.clone(),
            session_cookie: SessionCookie { secure: config.is_https() },
            flash_cookie: FlashCookie { secure: config.is_https() },
        })
        .service(app);
    BoxCloneSyncService::new(stack)
}

/// tower-http's compression, entered only by requests that accept an encoding. Its
/// response type holds a brotli encoder's state inline (about 6 KB, copied by each
/// layer it passes) and it scans every answer's content type: about 7 % of the CPU of
/// a request that accepts no encoding and so gets none (docs/PERFORMANCE.md). Such a
/// request goes straight to the service inside.
#[derive(Clone)]
struct CompressWhenAccepted<S>(Compression<S>);

type BoxBody = fn(Result<Response<CompressionBody<Body>>, Infallible>) -> Result<Response, Infallible>;

impl<S: crate::HttpService> Service<Request> for CompressWhenAccepted<S> {
    type Response = Response;
    type Error = Infallible;
    type Future = future::Either<future::Map<<Compression<S> as Service<Request>>::Future, BoxBody>, S::Future>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if request.headers().contains_key(header::ACCEPT_ENCODING) {
            // Boxed at once, so that the layers outside do not copy the big body type.
            let boxed: BoxBody = |result| result.map(|response| response.map(Body::new));
            future::Either::Left(self.0.call(request).map(boxed))
        } else {
            future::Either::Right(self.0.get_mut().call(request))
        }
    }
}

/// The application's own checks and headers, as one layer:
/// - refuses cross-site calls to the server functions, and bodies they do not take;
/// - answers plain (no-JavaScript) form posts to them with a redirect and the flash,
///   and gives their errors their own status (`forms`);
/// - drops the parameters Leptos would read a form's error from in a page's address,
///   and sends a page's other addresses to its own (`canonical`);
/// - answers 503 when the answer is not ready within `answer_within`;
/// - writes the security and caching headers, with the page's nonce;
/// - counts and times every answer in the metrics, under its route's template.
///
/// A service of its own rather than `axum::middleware::from_fn`: that one clones the
/// whole application inside it and boxes it for every request, so that the function
/// can own it (`Next`); here the application is called in place, and only this
/// layer's own future is boxed (docs/PERFORMANCE.md).
#[derive(Clone)]
struct EveryRequest<S> {
    inner: S,
    answer_within: Duration,
    /// The `--public-url` setting: the store's own origin for the cross-site check.
    public_url: Option<Arc<str>>,
    session_cookie: SessionCookie,
    flash_cookie: FlashCookie,
}

impl<S: crate::HttpService> Service<Request> for EveryRequest<S> {
    type Response = Response;
    type Error = Infallible;
    type Future = future::BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let arrived = tokio::time::Instant::now();
        let method = request.method().clone();
        // For the request's line in the log (`log_answer`).
        let (id, uri) = (request.headers().get(&REQUEST_ID).cloned(), request.uri().clone());
        let target = Target::of(request.uri().path());
        // The API's route is known from the path (whether or not the request gets past
        // the guard to its router); the site's router tells its own
        // (`metrics::note_route`).
        let api_route = (target == Target::Api).then(|| crate::api::route_template(request.uri().path()));
        let nonce = security::page_nonce_for(target, &mut request);
        // A page for a signed-in visitor, or one showing a form's outcome, is theirs
        // alone (and the outcome is shown once).
        let (personal, flashed) = match target {
            Target::Site => {
                security::drop_action_error_params(&mut request);
                let flashed = self.flash_cookie.is_in(request.headers());
                (flashed || self.session_cookie.token_in_headers(request.headers()).is_some(), flashed)
            }
            _ => (false, false),
        };
        // Made here, outside the request's scope (`scope::within`): the services inside
        // only start their work, and read the scope, when their future is polled.
        let refusal = security::refuse_server_fn_call(target, &request, self.public_url.as_deref())
            .or_else(|| canonical::redirect(target, &request));
        let answer = match refusal {
            Some(refusal) => future::Either::Left(future::Either::Left(future::ready(refusal))),
            None if target == Target::ServerFn && request.method() == axum::http::Method::POST => {
                // Not the hot path: the app is cloned and the call boxed.
                let (app, flash_cookie) = (self.inner.clone(), self.flash_cookie);
                future::Either::Right(Box::pin(forms::answer(app, request, flash_cookie)))
            }
            None => future::Either::Left(future::Either::Right(
                self.inner.call(request).map(|Ok(response): Result<Response, Infallible>| response),
            )),
        };
        let answer = deadline::by_deadline(arrived + self.answer_within, answer).map(|answered| {
            answered.unwrap_or_else(|| {
                let request = app::request_id::current();
                tracing::warn!(request, "request timed out");
                AppError::new(ErrorCode::Unavailable, "the server could not answer in time; try again").into_response()
            })
        });
        // Combinators, not an async block: a block awaiting a future it captured holds
        // it twice, and each such layer doubled the future this layer boxes (4.8 KB,
        // copied on its way into the box, for a 0.3 KB answer).
        let flash_cookie = self.flash_cookie;
        let answered = scope::within(arrived, id.clone(), answer).map(move |(mut response, site_route)| {
            security::set_headers(target, nonce.as_ref(), personal, &mut response);
            if flashed
                && security::is_html(response.headers())
                && let Ok(clear) = HeaderValue::from_str(&flash_cookie.set(None))
            {
                response.headers_mut().append(header::SET_COOKIE, clear);
            }
            let route = match (api_route, &site_route, target) {
                (Some(api_route), _, _) => api_route.unwrap_or("unmatched"),
                (None, Some(site_route), _) => site_route.as_str(),
                (None, None, Target::Asset { .. }) => "/pkg/{file}",
                (None, None, _) => "unmatched",
            };
            let took = arrived.elapsed();
            metrics::record(&method, route, response.status(), took);
            log_answer(id.as_ref(), &method, &uri, response.status(), took);
            Ok(response)
        });
        Box::pin(answered)
    }
}

/// The request's line in the log, when it is answered: its id, method, path, status
/// and how long the answer took. One event, with no span around the request: a span
/// (formatted when opened, entered at every poll) cost more than the line itself.
fn log_answer(
    id: Option<&HeaderValue>,
    method: &axum::http::Method,
    uri: &axum::http::Uri,
    status: StatusCode,
    took: Duration,
) {
    let id = id.and_then(|id| id.to_str().ok()).unwrap_or("-");
    // Whole microseconds: `0.412`, not `0.41203700000000004`.
    let latency_ms = took.as_micros() as f64 / 1000.0;
    tracing::info!(
        target: log_format::REQUEST_TARGET,
        id,
        method = method.as_str(),
        path = uri.path(),
        status = status.as_u16(),
        latency_ms,
        "answered"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_answer_not_ready_a_second_after_the_request_timeout_is_503() {
        let config = crate::Config { request_timeout: Duration::from_secs(1), ..crate::Config::default() };
        let never = tower::service_fn(|_: Request| std::future::pending::<Result<Response, Infallible>>());
        let app = wrap(never, &config);
        let started = tokio::time::Instant::now();
        let request = Request::get("/api/v1/pets/1").body(Body::empty()).unwrap();
        let response = tower::ServiceExt::oneshot(app, request).await.unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        let body = axum::body::to_bytes(response.into_body(), 1 << 16).await.unwrap();
        let error: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(error["code"], "unavailable", "{error}");
    }
}
