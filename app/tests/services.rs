//! The service layer against a real SQLite file: the rules that need a database
//! (uniqueness races, concurrent writers, the demo catalog).

#![cfg(feature = "ssr")]

use app::db::{self, Db};
use app::error::ErrorCode;
use app::model::{InventoryUpdate, NewCategory, NewPet, PHOTO_WIDTHS, PetFilter};
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

/// A store starts on a small volume (open issues, point 7): every demo pet has its
/// photo, at each width the storefront asks for, and the photos and descriptions the
/// demo catalog puts in the store come to under 1 MB.
#[tokio::test]
async fn demo_catalog_has_every_photo_and_stays_under_a_megabyte() {
    let (pool, _dir) = pool().await;
    let pages_before = used_sqlite_bytes(&pool).await;
    assert!(demo::seed_if_empty(&pool).await.unwrap());
    let pets: Vec<(i64, String, Option<String>, Option<String>)> =
        app::on_pool!(pool, |pool| sqlx::query_as("SELECT id, name, description, photo_hash FROM pets ORDER BY id")
            .fetch_all(pool)
            .await)
        .unwrap();
    let photos: Vec<(i64, i64, String, Vec<u8>)> = app::on_pool!(pool, |pool| sqlx::query_as(
        "SELECT pet_id, width, hash, bytes FROM pet_photos ORDER BY pet_id, width"
    )
    .fetch_all(pool)
    .await)
    .unwrap();
    assert_eq!(pets.len(), 13);
    for (id, name, description, hash) in &pets {
        assert!(description.as_deref().is_some_and(|d| !d.trim().is_empty()), "{name} has no description");
        let hash = hash.as_deref().unwrap_or_else(|| panic!("{name} has no photo"));
        let widths: Vec<i64> = photos.iter().filter(|(pet, ..)| pet == id).map(|(_, width, ..)| *width).collect();
        assert_eq!(widths, PHOTO_WIDTHS.map(i64::from), "{name}'s photo widths");
        for (_, width, stored_hash, bytes) in photos.iter().filter(|(pet, ..)| pet == id) {
            assert_eq!(stored_hash, hash, "{name} at {width}");
            assert!(bytes.len() > 100 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP", "{name} at {width}");
        }
    }
    assert_eq!(photos.len(), pets.len() * PHOTO_WIDTHS.len(), "no photo of a pet that is not there");

    let photo_bytes: usize = photos.iter().map(|(.., bytes)| bytes.len()).sum();
    let description_bytes: usize =
        pets.iter().filter_map(|(_, _, description, _)| description.as_ref()).map(String::len).sum();
    assert!(
        photo_bytes + description_bytes < 1_000_000,
        "the demo catalog holds {photo_bytes} bytes of photos and {description_bytes} of descriptions"
    );
    // On SQLite, what the file grew by: the rows, their indexes and search entries too.
    if let (Some(before), Some(after)) = (pages_before, used_sqlite_bytes(&pool).await) {
        assert!(after - before < 1_000_000, "loading the demo catalog took {} bytes of the file", after - before);
    }
}

/// The bytes of a SQLite store's pages in use (free pages left out); `None` on PostgreSQL.
async fn used_sqlite_bytes(pool: &Db) -> Option<i64> {
    let pool = pool.sqlite_pool()?;
    let mut values = Vec::new();
    for pragma in ["page_count", "freelist_count", "page_size"] {
        let sql = format!("PRAGMA {pragma}");
        values.push(sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql)).fetch_one(pool).await.unwrap());
    }
    let [pages, free, size] = values[..] else { unreachable!() };
    Some((pages - free) * size)
}

async fn pool_with_a_category() -> (Db, tempfile::TempDir) {
    let (pool, dir) = pool().await;
    categories::create(&pool, category("Mine")).await.unwrap();
    (pool, dir)
}
