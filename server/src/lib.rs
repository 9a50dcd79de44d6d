//! The pet store server: the REST API under `/api/v1` and the Leptos storefront, over
//! one SQLite database (`app::db::Db`). `main.rs` only reads the configuration and calls `app`.

// The pages' view types nest deeply (tachys types a view by its whole tree); computing
// their layout here can pass the default limit of 128 (seen without incremental builds).
#![recursion_limit = "256"]

pub mod api;
pub mod config;
pub mod media;
pub mod ops;
pub mod pages;
pub mod serve;
pub mod site;
pub mod slots;
pub mod streams;

use std::convert::Infallible;
use std::sync::Arc;

use app::db::Db;
use app::services::Services;
use app::services::access::Access;
use app::services::clock::Clock;
use app::services::limits::RateLimiter;
use app::services::sessions::SessionCookie;
use app::services::traffic::Traffic;
use axum::Router;
use leptos::prelude::*;
use leptos_axum::{AxumRouteListing, LeptosRoutes, generate_route_list};

pub use config::Config;

/// This build's release (the workspace's version) and the commit it was built from
/// (`build.rs`): `server --version` and the `petstore_build_info` metric.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
pub const COMMIT: &str = env!("PETSTORE_COMMIT");

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
    pub db: Db,
    pub config: Arc<Config>,
    pub clock: Clock,
    /// Authentication, limits and bans: the gate every surface shares.
    pub access: Access,
    pub session_cookie: SessionCookie,
    /// The store as a WebAuthn relying party, for shoppers' passkeys (from the origin).
    pub passkeys: Arc<app::services::passkeys::RelyingParty>,
    /// The last hour's API requests per minute, for the staff dashboard.
    pub traffic: Arc<Traffic>,
    /// What every answer of the deprecated `GET /pets/{petId}` carries.
    pub deprecation: api::pets::DeprecationHeaders,
    /// The OpenAPI document as `GET /api/v1/openapi.json` sends it.
    pub openapi_json: axum::body::Bytes,
    /// The outbox's new events, for this process's streams.
    pub feed: Arc<app::services::events::Feed>,
    /// Places for the storefront's streams (`/live`) and the API's (`/api/v1/events`).
    pub live_streams: Arc<slots::Slots>,
    pub api_streams: Arc<slots::Slots>,
    /// Set when a signal asks the server to stop: `/readyz` answers 503 from then on,
    /// while requests are still served for the drain period.
    pub stopping: Arc<std::sync::atomic::AtomicBool>,
}

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    /// The state over an open store: loads the rate-limit counters a previous run left,
    /// starts watching the catalog for changes made by other processes (the read
    /// caches' freshness) and the retention sweep (`services::retention`); both tasks
    /// end when the store is closed.
    pub async fn new(db: Db, config: Config, clock: Clock) -> app::error::AppResult<AppState> {
        let limiter = RateLimiter::open(clock.clone(), config.bans(), &db, config.redis_url.as_deref()).await?;
        let feed = app::services::events::Feed::start(&db).await?;
        app::services::webhooks::dispatch::Dispatcher::spawn(db.clone(), config.webhook_targets())?;
        tokio::spawn(db.clone().watch_catalog());
        app::services::retention::spawn(db.clone(), clock.clone());
        Ok(AppState(Arc::new(Shared {
            access: Access::new(db.clone(), clock.clone(), Arc::new(limiter), config.proxies()),
            session_cookie: SessionCookie { secure: config.is_https() },
            passkeys: Arc::new(app::services::passkeys::RelyingParty::new(&config.origin())?),
            traffic: Arc::new(Traffic::new(clock.clone())),
            deprecation: api::pets::DeprecationHeaders::new(&config),
            openapi_json: api::openapi::document_json(&config),
            feed,
            live_streams: slots::Slots::new(streams::LIVE),
            api_streams: slots::Slots::new(streams::API),
            stopping: Arc::default(),
            db,
            config: Arc::new(config),
            clock,
        })))
    }

    /// What the storefront's server functions and pages get as their context.
    pub fn services(&self, reference: Arc<app::reference::ApiReference>) -> Services {
        Services {
            db: self.db.clone(),
            clock: self.clock.clone(),
            access: self.access.clone(),
            traffic: self.traffic.clone(),
            session_cookie: self.session_cookie,
            origin: Arc::from(self.config.origin()),
            reference,
            currency: self.config.currency.clone(),
            webhook_targets: self.config.webhook_targets(),
            passkeys: self.passkeys.clone(),
        }
    }
}

/// The whole application: REST API, server functions, pages, static assets and the
/// operator's endpoints, inside the layers of `ops::wrap`.
pub fn app(state: AppState, leptos_options: LeptosOptions) -> ops::App {
    ops::scope::init_executor();
    let routes = route_list();
    let reference = Arc::new(app::reference::ApiReference::build(&api::openapi::document(&state.config)));
    // What server functions and pages find with `use_context` (the 404 page included,
    // whose header asks who is signed in).
    let services = state.services(reference);
    let provide = {
        let services = services.clone();
        let flash_cookie = app::server_fns::flash::FlashCookie { secure: state.config.is_https() };
        move || {
            if let Some(parts) = use_context::<axum::http::request::Parts>() {
                // The nonce the security layer will name in the page's policy.
                if let Some(nonce) = ops::security::page_nonce(&parts) {
                    provide_context(nonce);
                }
                // What a form sent without JavaScript did (`ops::forms`), for its page:
                // in its cookie, or handed in with an answer that carries a secret.
                let handed_in = parts.extensions.get::<app::server_fns::flash::Flash>().cloned();
                if let Some(flash) = handed_in.or_else(|| flash_cookie.read(&parts.headers)) {
                    provide_context(flash);
                }
            }
            provide_context(services.clone());
        }
    };
    let pages = Router::new()
        .leptos_routes_with_context(&leptos_options, routes, provide.clone(), {
            let leptos_options = leptos_options.clone();
            move || app::shell(leptos_options.clone())
        })
        .layer(axum::middleware::from_fn_with_state(
            pages::PageCache::new(services, state.config.is_https()),
            pages::serve_kept,
        ));
    // Each of the site's routes tells the metrics which it is (`ops::EveryRequest`
    // counts every answer; it knows the API's routes from their paths).
    let site = Router::new()
        .merge(ops::routes(state.clone()))
        .merge(media::routes(state.clone()))
        .merge(streams::routes(state.clone()))
        .merge(pages)
        .fallback(leptos_axum::file_and_error_handler_with_context(provide, app::shell))
        .layer(axum::middleware::from_fn(ops::metrics::note_route))
        .with_state(leptos_options);
    // The API answers everything under /api, in JSON (never with the storefront's
    // HTML 404 page).
    let app = api::in_front_of(api::service(state.clone()), site);
    // A write refused for lack of space, on either surface, makes the store not ready
    // (`/readyz`) until a write commits again.
    let db = state.db.clone();
    let app = tower::ServiceBuilder::new()
        .map_response(move |response: axum::response::Response| {
            if response.status() == axum::http::StatusCode::INSUFFICIENT_STORAGE {
                db.note_out_of_space();
            }
            response
        })
        .service(app);
    ops::wrap(app, &state.config)
}

/// The pages' routes, found once per process by rendering the app without data. While
/// leptos does that, a process-wide flag stops every resource that starts loading (in
/// any request being rendered) for good (leptos issue #4773), so it must never run
/// beside a render: only the first `app()` does it, before anything can be served.
fn route_list() -> Vec<AxumRouteListing> {
    static ROUTES: std::sync::OnceLock<Vec<AxumRouteListing>> = std::sync::OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(app::App)).clone()
}
