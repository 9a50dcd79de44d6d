//! The service layer against a real SQLite file: the rules that need a database
//! (uniqueness races, concurrent writers, the demo catalog).

#![cfg(feature = "ssr")]

use app::db::{self, Db};
use app::error::ErrorCode;
use app::model::{InventoryUpdate, NewCategory, NewPet, PetFilter};
use app::services::{categories, demo, inventory, paging::PageRequest, pets};

async fn pool() -> (Db, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let pool = db::Db::connect(&db::testing::scratch_url(dir.path()).await).await.unwrap();
    (pool, dir)
}

fn category(name: &str) -> NewCategory {
    NewCategory { name: name.into(), description: None }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_of_one_name_make_exactly_one_category() {
    let (pool, _dir) = pool().await;
    let tasks: Vec<_> = (0..20)
        .map(|n| {
            let pool = pool.clone();
            let name = if n % 2 == 0 { "Ferrets" } else { "FERRETS" };
            tokio::spawn(async move { categories::create(&pool, category(name)).await })
        })
        .collect();
    let mut created = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => created += 1,
            Err(err) => assert_eq!(err.code, ErrorCode::DuplicateName, "{err:?}"),
        }
    }
    assert_eq!(created, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_queue_instead_of_failing() {
    let (pool, _dir) = pool().await;
    let dogs = categories::create(&pool, category("Dogs")).await.unwrap();
    let pet =
        pets::create(&pool, NewPet { name: "Rex".into(), category_id: dogs.id, status: None, ..Default::default() })
            .await
            .unwrap();
    // 200 writes from many tasks at once: none may fail with "database is locked".
    let tasks: Vec<_> = (0..200)
        .map(|n| {
            let pool = pool.clone();
            tokio::spawn(async move {
                if n % 2 == 0 {
                    inventory::set(&pool, pet.id, InventoryUpdate { quantity: n }).await.map(|_| ())
                } else {
                    pets::create(&pool, NewPet { name: format!("Pup {n}"), category_id: dogs.id, ..Default::default() })
                        .await
                        .map(|_| ())
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().expect("every write succeeds");
    }
    let all = pets::list(&pool, &PetFilter::default(), PageRequest { limit: 100, after: 0 }).await.unwrap();
    assert_eq!(all.items.len(), 100);
    assert!(all.next_cursor.is_some(), "101 pets in all");
}

#[tokio::test]
async fn demo_catalog_loads_once_and_only_into_an_empty_store() {
    let (pool, _dir) = pool().await;
    assert!(demo::seed_if_empty(&pool).await.unwrap());
    assert!(!demo::seed_if_empty(&pool).await.unwrap());
    let summaries = categories::summaries(&pool).await.unwrap();
    assert_eq!(summaries.len(), 5);
    assert_eq!(summaries.iter().map(|c| c.pet_count).sum::<i64>(), 13);
    let rex =
        pets::list_cards(&pool, &PetFilter { q: Some("rex".into()), ..Default::default() }, PageRequest::default())
            .await
            .unwrap();
    assert_eq!((rex.items[0].quantity, rex.items[0].category_name.as_str()), (3, "Dogs"));

    let (other, _dir2) = pool_with_a_category().await;
    assert!(!demo::seed_if_empty(&other).await.unwrap());
}

async fn pool_with_a_category() -> (Db, tempfile::TempDir) {
    let (pool, dir) = pool().await;
    categories::create(&pool, category("Mine")).await.unwrap();
    (pool, dir)
}
