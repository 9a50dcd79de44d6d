//! Model-based test of the state table: random sequences of place / cancel / complete /
//! set-inventory / admin-status events go both to the service (over SQLite) and to a
//! small in-memory model written straight from contract.md; after every step stock,
//! status and orders must agree, and stock is never below zero.

#![cfg(feature = "ssr")]

use std::collections::BTreeMap;
use strum::VariantArray;

use PetStatus::*;
use app::db;
use app::error::ErrorCode;
use app::model::{
    Caller, InventoryUpdate, NewApiKey, NewCategory, NewOrder, NewPet, OrderCompletion, OrderFilter, PetStatus, Plan,
    Role,
};
use app::services::paging::PageRequest;
use app::services::{categories, inventory, keys, orders, pets};

/// A tiny deterministic generator (xorshift64*), so a failing seed can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct ModelOrder {
    pet: i64,
    quantity: i64,
    complete: bool,
}

#[derive(Default)]
struct Model {
    pets: BTreeMap<i64, (PetStatus, i64)>,
    orders: BTreeMap<i64, ModelOrder>,
    /// Cancelled orders: gone from the listing; cancelling one again changes nothing.
    cancelled: std::collections::BTreeSet<i64>,
}

impl Model {
    fn open_orders(&self, pet: i64) -> usize {
        self.orders.values().filter(|o| o.pet == pet && !o.complete).count()
    }

    /// The contract's "place order" row; `Ok` means the service must succeed.
    fn place(&mut self, pet: i64, quantity: i64) -> Result<(), ErrorCode> {
        let (status, stock) = self.pets[&pet];
        if status != Available {
            return Err(ErrorCode::PetNotAvailable);
        }
        if stock < quantity {
            return Err(ErrorCode::InsufficientStock);
        }
        let stock = stock - quantity;
        self.pets.insert(pet, (if stock == 0 { Pending } else { Available }, stock));
        Ok(())
    }

    fn cancel(&mut self, id: i64) -> Result<(), ErrorCode> {
        if self.cancelled.contains(&id) {
            return Ok(());
        }
        let order = *self.orders.get(&id).ok_or(ErrorCode::NotFound)?;
        if order.complete {
            return Err(ErrorCode::OrderCompleted);
        }
        self.orders.remove(&id);
        self.cancelled.insert(id);
        let (status, stock) = self.pets[&order.pet];
        let stock = stock + order.quantity;
        let status = if status == Pending && stock > 0 { Available } else { status };
        self.pets.insert(order.pet, (status, stock));
        Ok(())
    }

    fn complete(&mut self, id: i64) -> Result<(), ErrorCode> {
        let order = self.orders.get_mut(&id).ok_or(ErrorCode::NotFound)?;
        if order.complete {
            return Err(ErrorCode::OrderCompleted);
        }
        order.complete = true;
        let pet = order.pet;
        let (_, stock) = self.pets[&pet];
        if stock == 0 && self.open_orders(pet) == 0 {
            self.pets.insert(pet, (Sold, 0));
        }
        Ok(())
    }

    fn set_inventory(&mut self, pet: i64, n: i64) {
        let status = if n > 0 {
            Available
        } else if self.open_orders(pet) > 0 {
            Pending
        } else {
            Sold
        };
        self.pets.insert(pet, (status, n));
    }

    fn admin_status(&mut self, pet: i64, to: PetStatus) -> Result<(), ErrorCode> {
        let (from, stock) = self.pets[&pet];
        let next = match (from, to) {
            (a, b) if a == b => (a, stock),
            (Available, Pending) | (Pending, Available) => (to, stock),
            (_, Sold) if self.open_orders(pet) > 0 => return Err(ErrorCode::InvalidTransition),
            (_, Sold) => (Sold, 0),
            (Sold, Available) if stock > 0 => (Available, stock),
            _ => return Err(ErrorCode::InvalidTransition),
        };
        self.pets.insert(pet, next);
        Ok(())
    }
}

fn code<T>(result: &Result<T, app::error::AppError>) -> Result<(), ErrorCode> {
    result.as_ref().map(|_| ()).map_err(|e| e.code)
}

/// Runs `steps` random events on the store at `url`; returns the store.
async fn run_on(url: &str, seed: u64, steps: usize) -> db::Db {
    let pool = db::Db::connect(url).await.unwrap();
    let admin_key =
        keys::create(&pool, 0, NewApiKey { name: "model".into(), role: Role::Admin, plan: Plan::Pro, limits: None })
            .await
            .unwrap();
    let admin = Caller { key_id: admin_key.key_info.id, role: Role::Admin, limits: admin_key.key_info.limits };
    let category = categories::create(&pool, NewCategory { name: "Dogs".into(), description: None }).await.unwrap();
    let mut model = Model::default();
    for name in ["A", "B", "C"] {
        let pet = pets::create(
            &pool,
            NewPet { name: name.into(), category_id: category.id, status: None, ..Default::default() },
        )
        .await
        .unwrap();
        model.pets.insert(pet.id, (Available, 1));
    }
    let pet_ids: Vec<i64> = model.pets.keys().copied().collect();
    let mut all_order_ids: Vec<i64> = Vec::new();
    let mut rng = Rng(seed | 1);

    for step in 0..steps {
        let pet = pet_ids[rng.below(pet_ids.len() as u64) as usize];
        let pick_order = |rng: &mut Rng| {
            if all_order_ids.is_empty() {
                999_999
            } else {
                all_order_ids[rng.below(all_order_ids.len() as u64) as usize]
            }
        };
        let (event, expected, actual) = match rng.below(5) {
            0 => {
                let quantity = 1 + rng.below(3) as i64;
                let expected = model.place(pet, quantity);
                let result =
                    orders::place(&pool, 0, admin, NewOrder { pet_id: pet, quantity, ship_date: None }, None).await;
                if let Ok(order) = &result {
                    model.orders.insert(order.id, ModelOrder { pet, quantity, complete: false });
                    all_order_ids.push(order.id);
                }
                (format!("place {quantity} of {pet}"), expected, code(&result))
            }
            1 => {
                let id = pick_order(&mut rng);
                let expected = model.cancel(id);
                (format!("cancel {id}"), expected, code(&orders::cancel(&pool, 0, admin, id).await))
            }
            2 => {
                let id = pick_order(&mut rng);
                let expected = model.complete(id);
                let completion = OrderCompletion { complete: true, ship_date: None };
                (format!("complete {id}"), expected, code(&orders::complete(&pool, 0, admin, id, completion).await))
            }
            3 => {
                let n = rng.below(4) as i64;
                model.set_inventory(pet, n);
                let result = inventory::set(&pool, pet, InventoryUpdate { quantity: n }).await;
                (format!("set stock of {pet} to {n}"), Ok(()), code(&result))
            }
            _ => {
                let to = PetStatus::VARIANTS[rng.below(3) as usize];
                let expected = model.admin_status(pet, to);
                let name = ["A", "B", "C"][pet_ids.iter().position(|p| *p == pet).unwrap()].to_owned();
                let body = NewPet { name, category_id: category.id, status: Some(to), ..Default::default() };
                (format!("admin sets {pet} to {to}"), expected, code(&pets::replace(&pool, pet, body).await))
            }
        };
        assert_eq!(actual, expected, "seed {seed}, step {step}: {event}");

        // Stock and status of every pet, and the set of live orders, agree with the model.
        for (&pet, &(status, stock)) in &model.pets {
            let item = inventory::get(&pool, pet).await.unwrap();
            assert!(item.quantity >= 0);
            assert_eq!((item.status, item.quantity), (status, stock), "seed {seed}, step {step} ({event}), pet {pet}");
        }
        let listed =
            orders::list(&pool, admin, &OrderFilter::default(), PageRequest { limit: 100, after: 0 }).await.unwrap();
        assert!(listed.next_cursor.is_none(), "all live orders fit one page");
        let live: BTreeMap<i64, ModelOrder> = listed
            .items
            .iter()
            .map(|o| (o.id, ModelOrder { pet: o.pet_id, quantity: o.quantity, complete: o.complete }))
            .collect();
        assert_eq!(live, model.orders, "seed {seed}, step {step} ({event})");
    }
    pool
}

async fn run(seed: u64, steps: usize) {
    let dir = tempfile::tempdir().unwrap();
    run_on(&db::testing::scratch_url(dir.path()).await, seed, steps).await;
}

#[tokio::test]
async fn random_event_sequences_agree_with_the_model() {
    for seed in [1, 7, 42, 2026, 9_001] {
        run(seed, 150).await;
    }
}

/// Every table's rows, each column rendered the same way on either engine (bytes as
/// hex, booleans as 1 and 0), sorted.
async fn dump(store: &db::Db) -> BTreeMap<&'static str, Vec<String>> {
    use sqlx::Row;
    fn render<'r, R: Row>(row: &'r R, i: usize) -> String
    where
        usize: sqlx::ColumnIndex<R>,
        Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
        Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
        Option<Vec<u8>>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
        Option<bool>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    {
        let shown = row
            .try_get::<Option<i64>, _>(i)
            .map(|v| v.map(|v| v.to_string()))
            .or_else(|_| row.try_get::<Option<String>, _>(i).map(|v| v.map(|v| format!("{v:?}"))))
            .or_else(|_| row.try_get::<Option<Vec<u8>>, _>(i).map(|v| v.map(|v| format!("{v:02x?}"))))
            .or_else(|_| row.try_get::<Option<bool>, _>(i).map(|v| v.map(|v| i64::from(v).to_string())))
            .unwrap_or_else(|e| panic!("column {i}: {e}"));
        shown.unwrap_or_else(|| "NULL".to_owned())
    }
    let mut tables = BTreeMap::new();
    for (table, columns) in db::copy::tables() {
        let sql = format!("SELECT {} FROM {table}", columns.join(", "));
        let mut rows: Vec<String> = app::on_pool!(store, |pool| sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(pool)
            .await
            .unwrap()
            .iter()
            .map(|row| (0..columns.len()).map(|i| render(row, i)).collect::<Vec<_>>().join(" | "))
            .collect());
        rows.sort();
        tables.insert(table, rows);
    }
    tables
}

/// `server migrate-data`'s copy: the model's random history, with every other table
/// filled too (sessions, a revoked key, idempotency records, rate-limit counters and a
/// ban), moves from SQLite to PostgreSQL row for row, and ids go on past every id
/// SQLite handed out.
#[tokio::test]
async fn a_store_with_every_table_filled_moves_to_postgres_row_for_row() {
    use app::services::limits::{BanPolicy, RateLimiter};
    use app::services::{clock::Clock, sessions};
    let dir = tempfile::tempdir().unwrap();
    let source = run_on(&format!("sqlite://{}", dir.path().join("s.db").display()), 42, 150).await;
    let customer = NewApiKey { name: "shopper".into(), role: Role::Customer, plan: Plan::Free, limits: None };
    let shopper = keys::create(&source, 0, customer.clone()).await.unwrap().key_info;
    let gone = keys::create(&source, 0, customer).await.unwrap().key_info;
    keys::revoke(&source, 5, gone.id).await.unwrap();
    sessions::start(&source, 10, shopper.id, sessions::Opened::SignUp, None).await.unwrap();
    let caller = Caller { key_id: shopper.id, role: Role::Customer, limits: shopper.limits };
    let category =
        categories::create(&source, NewCategory { name: "Moved".into(), description: Some("d".into()) }).await.unwrap();
    let carried = NewPet {
        name: "Carried".into(),
        category_id: category.id,
        description: app::model::Field::Set("Moves well.".into()),
        price: app::model::Field::Set(1_250),
        ..Default::default()
    };
    let pet = pets::create(&source, carried).await.unwrap();
    inventory::set(&source, pet.id, InventoryUpdate { quantity: 3 }).await.unwrap();
    // A photo (its bytes as stored; what they are does not matter to the copy).
    let photo =
        app::services::photos::Encoded::new(vec![(320, vec![1, 2]), (640, vec![3, 4]), (1280, vec![0; 70_000])]);
    app::services::photos::store(&source, pet.id, &photo).await.unwrap();
    let order = NewOrder { pet_id: pet.id, quantity: 1, ship_date: None };
    orders::place(&source, 20, caller, order, Some("once")).await.unwrap();
    // A webhook endpoint and a delivery to it (its test ping).
    let new = app::model::NewWebhook {
        url: "http://127.0.0.1:9/hook".into(),
        events: vec!["*".into()],
        description: Some("moved".into()),
    };
    let targets = app::services::webhooks::Targets { allow_private: true };
    let webhook = app::services::webhooks::create(&source, targets, new).await.unwrap();
    app::services::webhooks::test(&source, webhook.webhook.id).await.unwrap();
    // As a dispatcher leaves it, having made out the first events.
    app::on_pool!(source, |pool| sqlx::query("UPDATE webhook_fanout SET last_seq = 3").execute(pool).await.map(|_| ()))
        .unwrap();
    // The highest pet id handed out, then deleted: the target must not hand it out again.
    let last = pets::create(
        &source,
        NewPet { name: "Last".into(), category_id: category.id, status: None, ..Default::default() },
    )
    .await
    .unwrap();
    pets::delete(&source, last.id).await.unwrap();
    // Counters, and a ban.
    let now = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(1_795_428_000));
    let limiter = RateLimiter::new(Clock::manual(now), BanPolicy { after_refusals: 1, seconds: 600 });
    let one = app::model::Limits { per_minute: 1, per_day: 10 };
    for _ in 0..3 {
        limiter.check("key:1", one).await.unwrap();
    }
    limiter.flush(&source).await.unwrap();

    // An account with a passkey and its recovery codes (as `services::passkeys` stores
    // them; their content does not matter to the copy).
    app::on_pool!(source, |pool| async {
        let account: i64 = sqlx::query_scalar(
            "INSERT INTO accounts (key_id, user_handle, created_at) VALUES ($1, $2, 30) RETURNING id",
        )
        .bind(shopper.id)
        .bind(&[7_u8; 16][..])
        .fetch_one(pool)
        .await?;
        sqlx::query(
            "INSERT INTO passkeys (account_id, credential_id, passkey, name, created_at, last_used_at)
             VALUES ($1, $2, '{}', 'Phone', 30, 40)",
        )
        .bind(account)
        .bind(&[8_u8; 16][..])
        .execute(pool)
        .await?;
        sqlx::query(
            "INSERT INTO recovery_codes (code_hash, account_id, used_at, expires_at)
             VALUES ($1, $2, 50, NULL), ($3, $2, NULL, 90000)",
        )
        .bind(&[1_u8; 32][..])
        .bind(account)
        .bind(&[2_u8; 32][..])
        .execute(pool)
        .await
        .map(|_| ())
    }
    .await)
    .unwrap();
    // A session the account's passkey (the first, 1) opened.
    sessions::start(&source, 60, shopper.id, sessions::Opened::Passkey(1), None).await.unwrap();

    let before = dump(&source).await;
    for (table, rows) in &before {
        assert!(!rows.is_empty(), "{table} has rows to move");
    }
    // Every table of the store is copied: none added since is left out. (Not the
    // migrations' record, the one-row version and probe tables the target has of its
    // own, SQLite's search index and its shadow tables, the running totals, which the
    // target's triggers make again from the rows copied, the scheduled backups' row,
    // which only a SQLite store has: PostgreSQL is backed up with its own tools, nor
    // passkey ceremonies, each minutes old at most: one under way is begun again.)
    let sqlite_tables: Vec<String> = app::on_pool!(source, |pool| {
        sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'pet_text%'
           AND name NOT IN ('_sqlx_migrations', 'catalog_version', 'write_probe', 'webhook_fanout',
                            'category_pets', 'status_stock', 'order_hours', 'open_orders',
                            'backup_schedule', 'passkey_ceremonies') ORDER BY name"
    )
    .fetch_all(pool)
    .await
    })
    .unwrap();
    let copied_tables: Vec<&str> = before.keys().copied().collect();
    assert_eq!(sqlite_tables, copied_tables, "migrate-data copies every table");
    let target = db::Db::connect(&db::testing::new_postgres_database().await).await.unwrap();
    let copied = db::copy::sqlite_to_postgres(&source, &target).await.unwrap();
    assert_eq!(copied.len(), before.len());
    assert_eq!(dump(&target).await, before, "row for row");
    assert_tallies_hold(&target, "after the copy").await;
    let fanned_out = |store: &db::Db| {
        let store = store.clone();
        async move {
            app::on_pool!(store, |pool| sqlx::query_scalar::<_, i64>("SELECT last_seq FROM webhook_fanout")
                .fetch_one(pool)
                .await)
            .unwrap()
        }
    };
    assert_eq!(fanned_out(&target).await, fanned_out(&source).await, "how far deliveries were made out");

    // A second copy into the same database is refused, and changes nothing.
    let again = db::copy::sqlite_to_postgres(&source, &target).await.unwrap_err();
    assert!(again.to_string().contains("already holds data"), "{again}");
    assert_eq!(dump(&target).await, before);

    let next = pets::create(
        &target,
        NewPet { name: "New".into(), category_id: category.id, status: None, ..Default::default() },
    )
    .await
    .unwrap();
    assert!(next.id > last.id, "ids go on past every id handed out: {} after {}", next.id, last.id);
}

/// The running totals the schema's triggers keep (migration `…_tallies.sql`: pets per
/// category, pets and units per status, orders and revenue per hour; `…_open_orders.sql`) equal the counts they stand
/// for after every kind of write: pets made, moved to another category, given another
/// status, restocked and deleted, orders placed, cancelled and completed through the
/// services (their revenue and the open orders too), and rows written with plain SQL
/// as another client would, orders deleted and cancelled no more among them. The dashboard's and the
/// category list's figures are read from them.
#[tokio::test]
async fn the_running_totals_match_the_rows_they_count() {
    use app::services::dashboard;
    let dir = tempfile::tempdir().unwrap();
    let store = db::Db::connect(&db::testing::scratch_url(dir.path()).await).await.unwrap();
    let admin_key =
        keys::create(&store, 0, NewApiKey { name: "t".into(), role: Role::Admin, plan: Plan::Pro, limits: None })
            .await
            .unwrap();
    let admin = Caller { key_id: admin_key.key_info.id, role: Role::Admin, limits: admin_key.key_info.limits };
    let mut kinds = Vec::new();
    for name in ["Dogs", "Cats", "Birds"] {
        kinds.push(categories::create(&store, NewCategory { name: name.into(), description: None }).await.unwrap().id);
    }
    let mut rng = Rng(7);
    let mut pets_made: Vec<i64> = Vec::new();
    let mut placed: Vec<i64> = Vec::new();
    for step in 0..120 {
        let pick = |rng: &mut Rng, ids: &[i64]| ids.get(rng.below(ids.len().max(1) as u64) as usize).copied();
        let event = match rng.below(7) {
            0 | 1 => {
                let category_id = kinds[rng.below(3) as usize];
                let status = Some(PetStatus::VARIANTS[rng.below(3) as usize]);
                let name = format!("Pet {step}");
                // Some priced (their orders have a total), some not.
                let price = if step % 2 == 0 { app::model::Field::Set(100 + step as i64) } else { Default::default() };
                let pet = pets::create(&store, NewPet { name, category_id, status, price, ..Default::default() }).await;
                pets_made.push(pet.unwrap().id);
                "create".to_owned()
            }
            2 => {
                let Some(pet) = pick(&mut rng, &pets_made) else { continue };
                let category_id = kinds[rng.below(3) as usize];
                let status = Some(PetStatus::VARIANTS[rng.below(3) as usize]);
                let body = NewPet { name: format!("Moved {step}"), category_id, status, ..Default::default() };
                let _ = pets::replace(&store, pet, body).await;
                format!("replace {pet}")
            }
            3 => {
                let Some(pet) = pick(&mut rng, &pets_made) else { continue };
                inventory::set(&store, pet, InventoryUpdate { quantity: rng.below(9) as i64 }).await.unwrap();
                format!("restock {pet}")
            }
            4 => {
                let Some(pet) = pick(&mut rng, &pets_made) else { continue };
                // Refused while the pet has open orders; either way the totals hold.
                if pets::delete(&store, pet).await.is_ok() {
                    pets_made.retain(|p| *p != pet);
                }
                format!("delete {pet}")
            }
            5 => {
                let Some(pet_id) = pick(&mut rng, &pets_made) else { continue };
                let now = 1_795_400_000 + rng.below(3 * 86_400) as i64;
                let order = NewOrder { pet_id, quantity: 1, ship_date: None };
                if let Ok(order) = orders::place(&store, now, admin, order, None).await {
                    placed.push(order.id);
                }
                if let Some(id) = pick(&mut rng, &placed) {
                    let _ = orders::cancel(&store, now, admin, id).await;
                }
                if let Some(id) = pick(&mut rng, &placed) {
                    let _ =
                        orders::complete(&store, now, admin, id, OrderCompletion { complete: true, ship_date: None })
                            .await;
                }
                format!("order {pet_id}")
            }
            _ => {
                // Another client: a pet with its stock, a status changed and a pet
                // deleted (its stock row going with it) by plain SQL.
                let category = kinds[rng.below(3) as usize];
                let pet = pick(&mut rng, &pets_made).unwrap_or(0);
                let statements = [
                    format!(
                        "INSERT INTO pets (name, name_key, category_id, status) VALUES ('Raw {step}', 'raw {step}', {category}, 'pending')"
                    ),
                    "INSERT INTO inventory (pet_id, quantity) SELECT MAX(id), 4 FROM pets".to_owned(),
                    format!("UPDATE pets SET status = 'sold' WHERE id = {pet}"),
                    format!("DELETE FROM pets WHERE id = {pet} AND id NOT IN (SELECT pet_id FROM orders)"),
                    // An order placed, one closed, one opened again and one deleted.
                    format!(
                        "INSERT INTO orders (pet_id, key_id, quantity, created_at) VALUES ({pet}, {}, 1, {})",
                        admin.key_id,
                        1_795_400_000 + step
                    ),
                    format!(
                        "UPDATE orders SET cancelled_at = 1 WHERE id = (SELECT MIN(id) FROM orders WHERE id % 3 = {})",
                        step % 3
                    ),
                    format!(
                        "UPDATE orders SET cancelled_at = NULL WHERE id = (SELECT MAX(id) FROM orders WHERE id % 5 = {})",
                        step % 5
                    ),
                    format!("DELETE FROM orders WHERE id = (SELECT MAX(id) FROM orders WHERE id % 7 = {})", step % 7),
                ];
                for sql in statements {
                    app::on_pool!(store, |pool| sqlx::query(sqlx::AssertSqlSafe(sql)).execute(pool).await.map(|_| ()))
                        .unwrap();
                }
                pets_made = app::on_pool!(store, |pool| sqlx::query_scalar("SELECT id FROM pets ORDER BY id")
                    .fetch_all(pool)
                    .await)
                .unwrap();
                format!("plain SQL on {pet}")
            }
        };
        assert_tallies_hold(&store, &format!("step {step}: {event}")).await;
    }
    assert!(!placed.is_empty() && pets_made.len() > 3, "the run did something");

    // What the dashboard and the category list show is what the rows say.
    let by_status: Vec<(PetStatus, i64, i64)> = app::on_pool!(store, |pool| sqlx::query_as(
        "SELECT p.status, COUNT(*), CAST(COALESCE(SUM(i.quantity), 0) AS BIGINT)
         FROM pets p JOIN inventory i ON i.pet_id = p.id GROUP BY p.status ORDER BY p.status"
    )
    .fetch_all(pool)
    .await)
    .unwrap();
    let shown: Vec<(PetStatus, i64, i64)> = dashboard::stock_by_status(&store)
        .await
        .unwrap()
        .into_iter()
        .filter(|s| s.pets > 0)
        .map(|s| (s.status, s.pets, s.units))
        .collect();
    assert_eq!(shown, by_status);
    for summary in categories::summaries(&store).await.unwrap() {
        let counted: i64 =
            app::on_pool!(store, |pool| sqlx::query_scalar("SELECT COUNT(*) FROM pets WHERE category_id = $1")
                .bind(summary.id)
                .fetch_one(pool)
                .await)
            .unwrap();
        assert_eq!(summary.pet_count, counted, "{}", summary.name);
    }
}

/// Each running total against a count of the rows it stands for.
async fn assert_tallies_hold(store: &db::Db, when: &str) {
    let pairs = [
        (
            "SELECT status, pets, units FROM status_stock WHERE pets <> 0 OR units <> 0 ORDER BY status",
            "SELECT p.status, COUNT(*), CAST(COALESCE(SUM(i.quantity), 0) AS BIGINT)
             FROM pets p LEFT JOIN inventory i ON i.pet_id = p.id GROUP BY p.status ORDER BY p.status",
        ),
        (
            "SELECT CAST(category_id AS TEXT), pets, CAST(0 AS BIGINT) FROM category_pets WHERE pets <> 0 ORDER BY category_id",
            "SELECT CAST(category_id AS TEXT), COUNT(*), CAST(0 AS BIGINT) FROM pets GROUP BY category_id ORDER BY category_id",
        ),
        (
            "SELECT CAST(hour AS TEXT), placed, CAST(revenue AS BIGINT) FROM order_hours WHERE placed <> 0 ORDER BY hour",
            "SELECT CAST(created_at / 3600 AS TEXT), COUNT(*),
                    CAST(COALESCE(SUM(CASE WHEN cancelled_at IS NULL THEN total ELSE 0 END), 0) AS BIGINT)
             FROM orders GROUP BY created_at / 3600 ORDER BY created_at / 3600",
        ),
        (
            "SELECT 'open', orders, CAST(0 AS BIGINT) FROM open_orders",
            "SELECT 'open', COUNT(*), CAST(0 AS BIGINT) FROM orders WHERE NOT complete AND cancelled_at IS NULL",
        ),
    ];
    for (kept, counted) in pairs {
        let read = |sql: &'static str| async move {
            let rows: Vec<(String, i64, i64)> =
                app::on_pool!(store, |pool| sqlx::query_as(sql).fetch_all(pool).await).unwrap();
            rows
        };
        assert_eq!(read(kept).await, read(counted).await, "{when}: {kept}");
    }
}
