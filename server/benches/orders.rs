//! Orders per second through the real API (auth and limits included) over SQLite:
//! many clients ordering one unit each, over distinct pets and over one hot pet, with
//! each `--durability` (full: every commit synced to disk; normal: at checkpoints).
//! Only 201s count; 409s (a pet sold out) are expected refusals, anything else an error.
//!
//! Run: `cargo bench -p server --bench orders` (or `make bench-orders`).

mod common;

use std::time::Duration;

use app::db::Durability;
use app::model::{InventoryUpdate, Limits, NewApiKey, NewCategory, NewPet, Plan, Role};
use app::services::clock::Clock;
use app::services::{categories, inventory, keys, pets};
use axum::Router;
use http_body_util::Full;
use hyper::body::Bytes;
use server::{AppState, Config};

const CONNECTIONS: usize = 64;
const ROUND: Duration = Duration::from_secs(5);
const DISTINCT_PETS: usize = 1_000;

#[tokio::main]
async fn main() {
    println!("POST /api/v1/store/orders, quantity 1, {CONNECTIONS} connections, {}s each", ROUND.as_secs());
    println!("{:<12} {:<28} {:>10} {:>10} {:>8} {:>8}", "durability", "pets", "orders/s", "placed", "409s", "errors");
    for durability in [Durability::Full, Durability::Normal] {
        measure(durability).await;
    }
}

/// Both rows over a store of their own, opened with `durability`.
async fn measure(durability: Durability) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let db = app::db::Db::connect_with(&url, durability).await.unwrap();
    let category = categories::create(&db, NewCategory { name: "Dogs".into(), description: None }).await.unwrap();
    let mut pet_ids = Vec::with_capacity(DISTINCT_PETS + 1);
    for n in 0..=DISTINCT_PETS {
        let pet =
            pets::create(&db, NewPet { name: format!("Pet {n}"), category_id: category.id, ..Default::default() })
                .await
                .unwrap();
        inventory::set(&db, pet.id, InventoryUpdate { quantity: 1_000_000 }).await.unwrap();
        pet_ids.push(pet.id);
    }
    let hot = pet_ids.pop().unwrap();
    let limits = Limits { per_minute: u32::MAX / 2, per_day: u32::MAX / 2 };
    let new = NewApiKey { name: "bench".into(), role: Role::Customer, plan: Plan::Enterprise, limits: Some(limits) };
    let key = keys::create(&db, 0, new).await.unwrap().key;
    let config = {
        let config = Config::default().over(url);
        Config { store: server::config::Store { durability, ..config.store }, ..config }
    };
    let state = AppState::new(db.clone(), config, Clock::system()).await.unwrap();
    let addr = common::spawn(Router::new().fallback_service(server::api::service(state))).await;

    for (label, targets) in
        [(format!("{DISTINCT_PETS} distinct pets"), pet_ids.clone()), ("one hot pet".to_owned(), vec![hot])]
    {
        let (uri, key) = (format!("http://{addr}/api/v1/store/orders"), key.clone());
        let outcome = common::load(CONNECTIONS, ROUND, move |worker, n| {
            let pet = targets[(worker * 7919 + n as usize) % targets.len()];
            hyper::Request::post(&uri)
                .header("x-api-key", &key)
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(format!("{{\"petId\":{pet},\"quantity\":1}}"))))
                .unwrap()
        })
        .await;
        println!(
            "{:<12} {label:<28} {:>10.0} {:>10} {:>8} {:>8}",
            format!("{durability:?}").to_lowercase(),
            outcome.per_second(),
            outcome.ok,
            outcome.conflicts,
            outcome.other
        );
        assert_eq!(outcome.other, 0, "no errors other than the expected 409s");
    }
}
