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

/// Orders queued together make one batch of the write queue, whose rows and stock are
/// written together (`db::batch`): each order is kept once with an id of its own, never
/// one an order had before; each pet's stock, status and the running totals come out as
/// if the orders had been placed one by one.
#[tokio::test]
async fn orders_placed_together_are_each_kept_once_and_the_totals_agree() {
    use app::model::{Caller, NewApiKey, NewOrder, Plan, Role};
    use app::services::{keys, orders};

    let (pool, _dir) = pool().await;
    let dogs = categories::create(&pool, category("Dogs")).await.unwrap();
    let mut stocked = Vec::new();
    for (name, stock) in [("Rex", 5), ("Fido", 1)] {
        let pet = pets::create(&pool, NewPet { name: name.into(), category_id: dogs.id, ..Default::default() })
            .await
            .unwrap();
        inventory::set(&pool, pet.id, InventoryUpdate { quantity: stock }).await.unwrap();
        stocked.push(pet.id);
    }
    let [rex, fido] = stocked[..] else { unreachable!() };
    let new = NewApiKey { name: "shopper".into(), role: Role::Customer, plan: Plan::Free, limits: None };
    let key = keys::create(&pool, 0, new).await.unwrap();
    let caller = Caller { key_id: key.key_info.id, role: Role::Customer, limits: key.key_info.limits };
    let order = |pet_id: i64| {
        let pool = pool.clone();
        async move { orders::place(&pool, 1_000, caller, NewOrder { pet_id, quantity: 1, ship_date: None }, None).await }
    };
    // The highest order so far is gone (as retention deletes them): its id is not
    // handed out again.
    let gone = order(rex).await.unwrap().id;
    app::on_pool!(pool, |p| sqlx::query("DELETE FROM orders WHERE id = $1").bind(gone).execute(p).await.map(|_| ()))
        .unwrap();

    // While a writer holds the queue's turn, the orders queue up; then they run as one
    // batch: three of Rex, two of Fido (who has one left), one of a pet that is not.
    let turn = pool.begin_write().await.unwrap();
    let placing: Vec<_> = [rex, fido, rex, fido, rex, 9_999].into_iter().map(|pet| tokio::spawn(order(pet))).collect();
    tokio::task::yield_now().await;
    let before = pool.generation();
    drop(turn);
    let mut placed = Vec::new();
    for (n, placing) in placing.into_iter().enumerate() {
        match (n, placing.await.unwrap()) {
            (3, Err(err)) => assert_eq!(err.status, 409, "Fido's second: {err:?}"),
            (5, Err(err)) => assert_eq!(err.field(), Some("petId"), "{err:?}"),
            (_, Ok(order)) => placed.push(order.id),
            (n, Err(err)) => panic!("order {n}: {err:?}"),
        }
    }
    assert_eq!(pool.generation(), before + 1, "one transaction for the six");
    assert_eq!(placed.len(), 4);
    assert!(placed.windows(2).all(|w| w[0] < w[1]), "ids in the order placed: {placed:?}");
    assert!(placed[0] > gone, "{placed:?} after {gone}");

    let count = |sql: &'static str| {
        let pool = pool.clone();
        async move { app::on_pool!(pool, |p| sqlx::query_scalar::<_, i64>(sql).fetch_one(p).await).unwrap() }
    };
    let kept: Vec<(i64, i64)> =
        app::on_pool!(pool, |p| sqlx::query_as("SELECT id, pet_id FROM orders ORDER BY id").fetch_all(p).await)
            .unwrap();
    assert_eq!(kept.iter().map(|(id, _)| *id).collect::<Vec<_>>(), placed, "each order kept once");
    assert_eq!(inventory::get(&pool, rex).await.unwrap().quantity, 1, "five less the first and three");
    let fido_now = inventory::get(&pool, fido).await.unwrap();
    assert_eq!((fido_now.quantity, fido_now.status.as_str()), (0, "pending"));
    // The running totals the triggers keep, against the rows.
    assert_eq!(count("SELECT orders FROM open_orders").await, 4);
    let tallied: Vec<(String, i64, i64)> =
        app::on_pool!(pool, |p| sqlx::query_as("SELECT status, pets, units FROM status_stock ORDER BY status")
            .fetch_all(p)
            .await)
        .unwrap();
    let counted: Vec<(String, i64, i64)> = app::on_pool!(pool, |p| sqlx::query_as(
        "SELECT s.status, (SELECT COUNT(*) FROM pets p WHERE p.status = s.status),
                CAST((SELECT COALESCE(SUM(i.quantity), 0) FROM pets p JOIN inventory i ON i.pet_id = p.id
                      WHERE p.status = s.status) AS BIGINT)
         FROM status_stock s ORDER BY s.status"
    )
    .fetch_all(p)
    .await)
    .unwrap();
    assert_eq!(tallied, counted);
}
