//! What an operator needs around the application: health and readiness probes, metrics,
//! request ids and logs, timeouts, compression and security headers. `wrap` puts the
//! layers around the whole router, API and pages alike.

pub mod ceiling;
pub mod health;
pub mod metrics;
pub mod security;

use std::convert::Infallible;
use std::time::Duration;

use app::error::{AppError, ErrorCode};
use axum::Router;
use axum::body::Body;
use axum::error_handling::HandleErrorLayer;
use axum::extract::Request;
use axum::http::{HeaderName, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tower::ServiceBuilder;
use tower::util::BoxCloneSyncService;
use tower_http::compression::CompressionLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};

use crate::AppState;

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
pub fn wrap(app: impl crate::HttpService, request_timeout: Duration) -> App {
    let stack = ServiceBuilder::new()
        .map_response(|response: Response<_>| response.map(Body::new))
        // Outermost: the client's own id is kept, otherwise a new UUID.
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|request: &Request| {
                    let id = request.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-");
                    tracing::info_span!("request", id, method = %request.method(), path = %request.uri().path())
                })
                .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
        )
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        // The compressed body's type holds a brotli encoder's state inline (about 6 KB):
        // boxed at once, so the layers outside do not copy it with every response.
        .map_response(|response: Response<_>| response.map(Body::new))
        .layer(CompressionLayer::new())
        .layer(middleware::from_fn(every_request))
        // A second later than the body deadline, so a slow body is told apart (408)
        // from a slow answer (503).
        .layer(HandleErrorLayer::new(timed_out))
        .timeout(request_timeout + Duration::from_secs(1))
        .service(app);
    BoxCloneSyncService::new(stack)
}

/// The application's own checks and headers, as one layer:
/// - refuses cross-site calls to the server functions;
/// - gives a server function's error its own status;
/// - writes the security and caching headers, with the page's nonce.
async fn every_request(mut request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let nonce = security::page_nonce_for(&mut request);
    let mut response = match security::refuse_cross_site(&request) {
        Some(refusal) => refusal,
        None => {
            let response = next.run(request).await;
            security::server_fn_error_status(&path, response).await
        }
    };
    security::set_headers(&path, nonce.as_ref(), &mut response);
    response
}

async fn timed_out(uri: Uri, err: tower::BoxError) -> Response {
    if !err.is::<tower::timeout::error::Elapsed>() {
        return AppError::internal("middleware", err).into_response();
    }
    tracing::warn!(path = uri.path(), "request timed out");
    AppError::new(ErrorCode::Unavailable, "the server could not answer in time; try again").into_response()
}
