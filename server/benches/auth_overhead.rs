//! What authentication and rate limiting cost: requests per second for an authenticated
//! `GET /api/v1/pets/{petId}` (Enterprise key, limits far above the load) through the
//! real API router, and through the same router with the guard layer replaced by one
//! that trusts every request. Both servers run in this process on loopback; rounds
//! alternate so that drift on a shared machine hits both alike.
//!
//! Run: `cargo bench -p server --bench auth_overhead` (or `make bench-auth`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use app::model::{Limits, NewApiKey, NewCategory, NewPet, Plan, Role};
use app::services::clock::Clock;
use app::services::{categories, keys, pets};
use axum::Router;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use server::{AppState, Config};

const CONNECTIONS: usize = 32;
const ROUND: Duration = Duration::from_secs(3);
const ROUNDS: usize = 3;

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let pool = app::db::connect(&url).await.unwrap();
    let category = categories::create(&pool, NewCategory { name: "Dogs".into(), description: None }).await.unwrap();
    let pet = pets::create(&pool, NewPet { name: "Rex".into(), category_id: category.id, status: None }).await.unwrap();
    let limits = Limits { per_minute: u32::MAX / 2, per_day: u32::MAX / 2 };
    let new = NewApiKey { name: "bench".into(), role: Role::Customer, plan: Plan::Enterprise, limits: Some(limits) };
    let created = keys::create(&pool, 0, new).await.unwrap();
    let caller = app::model::Caller { key_id: created.key_info.id, role: Role::Customer, limits };

    let state =
        AppState::new(pool.clone(), Config { database_url: url, ..Config::default() }, Clock::system()).await.unwrap();
    let guarded = Router::new().nest("/api/v1", server::api::router(state.clone()));
    let bare = Router::new().nest("/api/v1", server::api::router_without_guard(state, caller));
    let guarded_addr = spawn(guarded).await;
    let bare_addr = spawn(bare).await;
    let path = format!("/api/v1/pets/{}", pet.id);

    println!("GET {path}, {CONNECTIONS} connections, {ROUNDS} alternating rounds of {}s each", ROUND.as_secs());
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        without.push(load(bare_addr, &path, &created.key).await);
        with.push(load(guarded_addr, &path, &created.key).await);
    }
    let best = |runs: &[f64]| runs.iter().cloned().fold(0.0, f64::max);
    let (a, b) = (best(&without), best(&with));
    println!("{:<34} {:>12}", "variant", "requests/s");
    println!("{:<34} {:>12.0}", "without auth and limit layers", a);
    println!("{:<34} {:>12.0}", "with auth and limit layers", b);
    println!("cost of the layers: {:.1} % (best round of each)", (1.0 - b / a) * 100.0);
}

async fn spawn(router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>()).await.unwrap();
    });
    addr
}

/// Requests per second over one round, with every response checked to be a 200.
async fn load(addr: SocketAddr, path: &str, key: &str) -> f64 {
    let client: Client<_, Empty<Bytes>> =
        Client::builder(TokioExecutor::new()).pool_max_idle_per_host(CONNECTIONS).build_http();
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let uri: hyper::Uri = format!("http://{addr}{path}").parse().unwrap();
    let start = Instant::now();
    let workers: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            let (client, uri, key, done, stop) =
                (client.clone(), uri.clone(), key.to_owned(), done.clone(), stop.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let request =
                        hyper::Request::get(uri.clone()).header("x-api-key", &key).body(Empty::new()).unwrap();
                    let response = client.request(request).await.expect("the server answers");
                    assert_eq!(response.status(), 200, "every request must succeed");
                    response.into_body().collect().await.unwrap();
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    tokio::time::sleep(ROUND).await;
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        worker.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64()
}
