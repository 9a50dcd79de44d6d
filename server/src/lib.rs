//! The pet store server: the REST API under `/api/v1` and the Leptos storefront, over
//! one SQLite pool. `main.rs` only reads the configuration and calls `app`.

pub mod api;
pub mod config;

use std::sync::Arc;

use app::db::Pool;
use axum::Router;
use leptos::prelude::*;
use leptos_axum::{LeptosRoutes, generate_route_list};

pub use config::Config;

/// What every REST handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub pool: Pool,
    pub config: Arc<Config>,
}

/// The whole application: REST API, server functions, pages and static assets.
pub fn app(state: AppState, leptos_options: LeptosOptions) -> Router {
    let routes = generate_route_list(app::App);
    let pool = state.pool.clone();
    Router::new()
        .nest(api::BASE, api::router(state))
        // The rest of /api (`/api/v1/`, other versions) answers in JSON too, never with
        // the storefront's HTML 404 page.
        .route("/api", axum::routing::any(api::not_found))
        .route("/api/{*rest}", axum::routing::any(api::not_found))
        .leptos_routes_with_context(
            &leptos_options,
            routes,
            move || provide_context(pool.clone()),
            {
                let leptos_options = leptos_options.clone();
                move || app::shell(leptos_options.clone())
            },
        )
        .fallback(leptos_axum::file_and_error_handler(app::shell))
        .with_state(leptos_options)
}
