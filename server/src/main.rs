//! `server` (or `server serve`): serves the pet store. Configuration comes from the
//! environment (see `Config` and the README).

use std::process::ExitCode;

use leptos::prelude::get_configuration;
use server::{AppState, Config};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn")))
        .init();

    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None | Some("serve") => {}
        Some("-h" | "--help" | "help") => {
            println!("usage: server [serve]\n\nServes the pet store. Settings come from the environment; see README.md.");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("server: unknown command {other:?} (try --help)");
            return ExitCode::from(2);
        }
    }
    match serve().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("server: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn serve() -> Result<(), String> {
    let config = Config::from_env()?;
    let leptos = get_configuration(None).map_err(|e| format!("reading the Leptos configuration: {e}"))?;
    let options = leptos.leptos_options;
    let addr = options.site_addr;

    let pool = app::db::connect(&config.database_url)
        .await
        .map_err(|e| format!("opening the database {}: {e}", config.database_url))?;
    if config.demo_data && app::services::demo::seed_if_empty(&pool).await.map_err(|e| e.message)? {
        tracing::info!("loaded the demo catalog into the empty database");
    }

    let state = AppState { pool: pool.clone(), config: std::sync::Arc::new(config) };
    let router = server::app(state, options);
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("binding {addr}: {e}"))?;
    println!("Pet Store is running at http://{addr}/ (REST API at http://{addr}/api/v1)");
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown_signal())
        .await
        .map_err(|e| format!("serving: {e}"))?;
    pool.close().await;
    Ok(())
}

/// Resolves on SIGINT or SIGTERM: stop accepting, let in-flight requests finish.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down");
}
