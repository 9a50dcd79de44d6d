//! What authentication and rate limiting cost: requests per second for an authenticated
//! `GET /api/v1/pets/{petId}` (Enterprise key, limits far above the load) through the
//! real API router, and through the same router with the guard layer replaced by one
//! that trusts every request. Both servers run in this process on loopback; rounds
//! alternate so that drift on a shared machine hits both alike.
//!
//! Run: `cargo bench -p server --bench auth_overhead` (or `make bench-auth`).

mod common;

use std::time::Duration;

use app::model::{Limits, NewApiKey, NewCategory, NewPet, Plan, Role};
use app::services::clock::Clock;
use app::services::{categories, keys, pets};
use axum::Router;
use http_body_util::Full;
use hyper::body::Bytes;
use server::{AppState, Config};

const CONNECTIONS: usize = 32;
const ROUND: Duration = Duration::from_secs(3);
const ROUNDS: usize = 5;

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let db = app::db::Db::connect(&url).await.unwrap();
    let category = categories::create(&db, NewCategory { name: "Dogs".into(), description: None }).await.unwrap();
    let pet =
        pets::create(&db, NewPet { name: "Rex".into(), category_id: category.id, status: None, ..Default::default() })
            .await
            .unwrap();
    let limits = Limits { per_minute: u32::MAX / 2, per_day: u32::MAX / 2 };
    let new = NewApiKey { name: "bench".into(), role: Role::Customer, plan: Plan::Enterprise, limits: Some(limits) };
    let created = keys::create(&db, 0, new).await.unwrap();
    let caller = app::model::Caller { key_id: created.key_info.id, role: Role::Customer, limits };

    let state = AppState::new(db.clone(), Config::default().over(url), Clock::system()).await.unwrap();
    let guarded = Router::new().fallback_service(server::api::service(state.clone()));
    let bare = Router::new().fallback_service(server::api::service_without_guard(state, caller));
    let guarded_addr = common::spawn(guarded).await;
    let bare_addr = common::spawn(bare).await;
    let path = format!("/api/v1/pets/{}", pet.id);

    println!(
        "GET {path}, {CONNECTIONS} connections, a warm-up and {ROUNDS} alternating rounds of {}s each",
        ROUND.as_secs()
    );
    let (mut with, mut without) = (Vec::new(), Vec::new());
    // The first round of each warms caches and connection pools; it is not counted.
    for round in 0..=ROUNDS {
        for (addr, runs) in [(bare_addr, &mut without), (guarded_addr, &mut with)] {
            let (uri, key) = (format!("http://{addr}{path}"), created.key.clone());
            let outcome = common::load(CONNECTIONS, ROUND, move |_, _| {
                hyper::Request::get(&uri).header("x-api-key", &key).body(Full::new(Bytes::new())).unwrap()
            })
            .await;
            assert_eq!((outcome.conflicts, outcome.other), (0, 0), "every request must succeed");
            if round > 0 {
                runs.push(outcome.per_second());
            }
        }
    }
    let median = |runs: &mut Vec<f64>| {
        runs.sort_by(f64::total_cmp);
        runs[runs.len() / 2]
    };
    let (a, b) = (median(&mut without), median(&mut with));
    println!("{:<34} {:>12}", "variant", "requests/s");
    println!("{:<34} {:>12.0}", "without auth and limit layers", a);
    println!("{:<34} {:>12.0}", "with auth and limit layers", b);
    println!("cost of the layers: {:.1} % (median round of each)", (1.0 - b / a) * 100.0);
}
