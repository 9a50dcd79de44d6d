//! The pet store server: the REST API under `/api/v1` and the Leptos storefront, over
//! one SQLite pool. `main.rs` only reads the configuration and calls `app`.

pub mod api;
pub mod config;
pub mod ops;
pub mod pages;

use std::convert::Infallible;
use std::sync::Arc;

use app::db::Pool;
use app::services::auth::Authenticator;
use app::services::clock::Clock;
use app::services::limits::RateLimiter;
use app::services::traffic::Traffic;
use axum::Router;
use leptos::prelude::*;
use leptos_axum::{AxumRouteListing, LeptosRoutes, generate_route_list};

pub use config::Config;

/// An application, or a part of one, as the server serves it: a service that always
/// answers (errors are responses too).
pub trait HttpService:
    tower::Service<
        axum::extract::Request,
        Response = axum::response::Response,
        Error = Infallible,
        Future: Send + 'static,
    > + Clone
    + Send
    + Sync
    + 'static
{
}

impl<S> HttpService for S where
    S: tower::Service<
            axum::extract::Request,
            Response = axum::response::Response,
            Error = Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + Sync
        + 'static
{
}

/// What every REST handler can reach. One `Arc`: axum clones the state into every
/// request's handler and extractors, and one count is simpler to clone than one per
/// field (no change in the benchmark's figures could be told apart from the drift).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    pub pool: Pool,
    pub config: Arc<Config>,
    pub clock: Clock,
    pub auth: Authenticator,
    pub limiter: Arc<RateLimiter>,
    /// The last hour's API requests per minute, for the staff dashboard.
    pub traffic: Arc<Traffic>,
    /// What every answer of the deprecated `GET /pets/{petId}` carries.
    pub deprecation: api::pets::DeprecationHeaders,
    /// The OpenAPI document as `GET /api/v1/openapi.json` sends it.
    pub openapi_json: axum::body::Bytes,
}

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    /// The state over an open pool: loads the rate-limit counters a previous run left,
    /// and starts watching the catalog for changes made by other processes (the read
    /// caches' freshness; the task ends when the pool is closed).
    pub async fn new(pool: Pool, config: Config, clock: Clock) -> app::error::AppResult<AppState> {
        let limiter = RateLimiter::load(clock.clone(), config.bans, &pool).await?;
        tokio::spawn(app::db::watch_catalog(pool.clone()));
        Ok(AppState(Arc::new(Shared {
            auth: Authenticator::new(pool.clone(), clock.clone()),
            limiter: Arc::new(limiter),
            traffic: Arc::new(Traffic::new(clock.clone())),
            deprecation: api::pets::DeprecationHeaders::new(&config),
            openapi_json: api::openapi::document_json(&config),
            pool,
            config: Arc::new(config),
            clock,
        })))
    }
}

/// The whole application: REST API, server functions, pages, static assets and the
/// operator's endpoints, inside the layers of `ops::wrap`.
pub fn app(state: AppState, leptos_options: LeptosOptions) -> ops::App {
    let routes = route_list();
    let reference = Arc::new(app::reference::ApiReference::build(&api::openapi::document(&state.config)));
    // What server functions and pages find with `use_context` (the 404 page included,
    // whose header asks who is signed in).
    let provide = {
        let context = (
            state.pool.clone(),
            state.auth.clone(),
            state.clock.clone(),
            state.limiter.clone(),
            state.traffic.clone(),
            reference,
        );
        move || {
            // The nonce the security layer will name in the page's policy.
            if let Some(nonce) =
                use_context::<axum::http::request::Parts>().as_ref().and_then(ops::security::page_nonce)
            {
                provide_context(nonce);
            }
            provide_context(context.0.clone());
            provide_context(context.1.clone());
            provide_context(context.2.clone());
            provide_context(context.3.clone());
            provide_context(context.4.clone());
            provide_context(context.5.clone());
        }
    };
    let request_timeout = state.config.request_timeout;
    let pages = Router::new()
        .leptos_routes_with_context(&leptos_options, routes, provide.clone(), {
            let leptos_options = leptos_options.clone();
            move || app::shell(leptos_options.clone())
        })
        .layer(axum::middleware::from_fn_with_state(pages::PageCache::new(state.pool.clone()), pages::serve_kept));
    // Each of the site's routes tells the metrics which it is (`ops::EveryRequest`
    // counts every answer; it knows the API's routes from their paths).
    let site = Router::new()
        .merge(ops::routes(state.clone()))
        .merge(pages)
        .fallback(leptos_axum::file_and_error_handler_with_context(provide, app::shell))
        .layer(axum::middleware::from_fn(ops::metrics::note_route))
        .with_state(leptos_options);
    // The API answers everything under /api, in JSON (never with the storefront's
    // HTML 404 page).
    ops::wrap(api::in_front_of(api::service(state), site), request_timeout)
}

/// The pages' routes, found once per process by rendering the app without data. While
/// leptos does that, a process-wide flag stops every resource that starts loading (in
/// any request being rendered) for good (leptos issue #4773), so it must never run
/// beside a render: only the first `app()` does it, before anything can be served.
fn route_list() -> Vec<AxumRouteListing> {
    static ROUTES: std::sync::OnceLock<Vec<AxumRouteListing>> = std::sync::OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(app::App)).clone()
}
