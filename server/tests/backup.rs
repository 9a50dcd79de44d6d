//! `server backup` and `server restore` on a SQLite store, run as an operator runs them:
//! a backup taken while clients place orders holds every order acknowledged before it
//! began and a consistent stock, and a server started on it serves it; a restore refuses
//! what is not a whole store, and a store that a process has open, replacing nothing.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::live::LiveServer;
use serde_json::json;

const PETS: usize = 8;
const START_STOCK: i64 = 100_000;

/// `server <args>` over the store at `db`: success, standard error.
fn server(db: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_server"))
        .env("DATABASE_URL", format!("sqlite://{}", db.display()))
        .env("RUST_LOG", "warn")
        .args(args)
        .output()
        .expect("the binary runs");
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

async fn sqlite(path: &Path) -> sqlx::SqlitePool {
    sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display())).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_taken_while_eight_clients_order_holds_every_order_acknowledged_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server_a, admin) = LiveServer::start(dir.path());
    let admin = admin.expect("the first start creates an admin key");
    let http = server_a.client();
    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Kept"}))).await;
    let mut pets = Vec::new();
    for n in 0..PETS {
        let pet = json!({ "name": format!("Pet {n}"), "categoryId": category["id"] });
        let id = http.expect(201, "POST", "/api/v1/pets", &admin, Some(&pet)).await["id"].as_i64().unwrap();
        let stock = json!({ "quantity": START_STOCK });
        http.expect(200, "PUT", &format!("/api/v1/store/inventory/{id}"), &admin, Some(&stock)).await;
        pets.push(id);
    }

    let running = Arc::new(AtomicBool::new(true));
    // Each client notes its orders' ids with whether the backup had begun when the
    // answer came (a 201 read before `started` was set is acknowledged before it).
    let started = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..8)
        .map(|client| {
            let (http, admin, running, started, pets) =
                (http.clone(), admin.clone(), running.clone(), started.clone(), pets.clone());
            tokio::spawn(async move {
                let mut acknowledged = Vec::new();
                let mut n = 0;
                while running.load(Ordering::Relaxed) {
                    let body = json!({ "petId": pets[(client + n) % pets.len()], "quantity": 1 + n % 2 });
                    let (status, order) = http
                        .send("POST", "/api/v1/store/orders", Some(&admin), Some(&body), &[])
                        .await
                        .expect("an answer");
                    assert_eq!(status, 201, "{order}");
                    let before = !started.load(Ordering::SeqCst);
                    acknowledged.push((order["id"].as_i64().unwrap(), before));
                    n += 1;
                }
                acknowledged
            })
        })
        .collect();

    tokio::time::sleep(Duration::from_millis(500)).await;
    let backup = dir.path().join("backups").join("shop.db");
    std::fs::create_dir_all(backup.parent().unwrap()).unwrap();
    started.store(true, Ordering::SeqCst);
    let db = server_a.db_path.clone();
    let target = backup.clone();
    let (ok, said) =
        tokio::task::spawn_blocking(move || server(&db, &["backup", "--to", target.to_str().unwrap()])).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    running.store(false, Ordering::Relaxed);
    let mut acknowledged = Vec::new();
    for client in clients {
        acknowledged.extend(client.await.unwrap());
    }
    assert!(ok, "{said}");
    assert!(said.contains(&format!("wrote {}", backup.display())) && said.contains(" orders, schema at migration "));
    assert!(acknowledged.iter().filter(|(_, before)| !before).count() > 0, "orders went on during the backup");

    let kept = common::live::orders_with_their_stock_taken(&backup, &pets, START_STOCK).await;
    let kept_ids: std::collections::HashSet<i64> = kept.iter().map(|(id, _, _)| *id).collect();
    let missing: Vec<_> = acknowledged.iter().filter(|(id, before)| *before && !kept_ids.contains(id)).collect();
    assert!(missing.is_empty(), "orders acknowledged before the backup began are missing: {missing:?}");
    assert!(said.contains(&format!(", {} orders,", kept.len())), "it says what it wrote: {said}");
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&backup).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "a backup holds secrets: {mode:o}");
    let leftovers: Vec<_> =
        std::fs::read_dir(backup.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 1, "no partial file is left: {leftovers:?}");

    // Never over an existing file unless told.
    let (ok, said) = server(&server_a.db_path, &["backup", "--to", backup.to_str().unwrap()]);
    assert!(!ok && said.contains("exists: pass --force"), "{said}");

    // A server started on the backup serves the same pets and orders.
    assert!(server_a.terminate());
    let restored_dir = dir.path().join("restored");
    std::fs::create_dir_all(&restored_dir).unwrap();
    std::fs::copy(&backup, restored_dir.join("live.db")).unwrap();
    let (server_b, _) = LiveServer::start(&restored_dir);
    let http = server_b.client();
    for (n, pet) in pets.iter().enumerate() {
        let answered = http.expect(200, "GET", &format!("/api/v1/pets/{pet}"), &admin, None).await;
        assert_eq!(answered["name"], format!("Pet {n}"));
    }
    let (id, _, _) = kept.iter().max().unwrap();
    let order = http.expect(200, "GET", &format!("/api/v1/store/orders/{id}"), &admin, None).await;
    assert_eq!(order["id"], *id);
}

#[tokio::test]
async fn a_restore_refuses_what_is_not_a_whole_store_and_a_store_in_use_and_replaces_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("shop.db");
    let (ok, said) = server(&store, &["keys", "create", "--name", "first", "--role", "admin"]);
    assert!(ok, "{said}");
    let backup = dir.path().join("shop.backup");
    let (ok, said) = server(&store, &["backup", "--to", backup.to_str().unwrap()]);
    assert!(ok, "{said}");
    let (ok, said) = server(&store, &["keys", "create", "--name", "after the backup", "--role", "customer"]);
    assert!(ok, "{said}");
    let files = |dir: &Path| {
        let mut names: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        names
    };
    let before = std::fs::read(&store).unwrap();
    let listing = files(dir.path());

    let not_a_store = dir.path().join("notes.txt");
    std::fs::write(&not_a_store, "not a database at all, just words ".repeat(200)).unwrap();
    let bytes = std::fs::read(&backup).unwrap();
    let truncated = dir.path().join("truncated.backup");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let listing =
        [listing, vec![not_a_store.file_name().unwrap().into(), truncated.file_name().unwrap().into()]].concat();
    for bad in [&not_a_store, &truncated] {
        let (ok, said) = server(&store, &["restore", "--from", bad.to_str().unwrap()]);
        assert!(!ok, "{} was restored", bad.display());
        assert!(said.contains("is not a pet store backup"), "{said}");
        assert!(std::fs::read(&store).unwrap() == before, "the store changed");
        let mut expected = listing.clone();
        expected.sort();
        assert_eq!(files(dir.path()), expected, "nothing is added or moved");
    }

    // A server has the store open: refused, whatever the file.
    let (mut live, _) = LiveServer::start_with(dir.path(), |command| {
        command.env("DATABASE_URL", format!("sqlite://{}", store.display()));
    });
    let (ok, said) = server(&store, &["restore", "--from", backup.to_str().unwrap()]);
    assert!(!ok, "restored under a running server");
    assert!(said.contains("open in another process"), "{said}");
    assert!(live.terminate());
    assert!(std::fs::read(&store).unwrap() == before, "the store changed");

    // Stopped, the restore goes through and keeps what it replaced; the store is its
    // owner's alone even when the backup was not.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&backup, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (ok, said) = server(&store, &["restore", "--from", backup.to_str().unwrap()]);
    assert!(ok, "{said}");
    assert_eq!(std::fs::metadata(&store).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(said.contains("the store it replaced is kept at"), "{said}");
    let kept = files(dir.path())
        .into_iter()
        .find(|name| {
            name.to_string_lossy().starts_with("shop.db.before-restore-") && !name.to_string_lossy().ends_with("-wal")
        })
        .expect("the replaced store is kept");
    let listed = |db: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_server"))
            .env("DATABASE_URL", format!("sqlite://{}", db.display()))
            .args(["keys", "list"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(listed(&dir.path().join(&kept)).contains("after the backup"), "the kept store is the one replaced");
    let now = listed(&store);
    assert!(now.contains("first") && !now.contains("after the backup"), "the store is the backup's: {now}");
}

/// An existing store one migration behind this release, as the previous release left it.
async fn store_one_migration_behind(path: &Path) -> (i64, String) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/migrations/sqlite");
    let mut files: Vec<_> = std::fs::read_dir(&source).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let newest = files.pop().unwrap();
    let older = tempfile::tempdir().unwrap();
    for file in &files {
        std::fs::copy(file, older.path().join(file.file_name().unwrap())).unwrap();
    }
    // In WAL mode, as every release leaves its store.
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    sqlx::migrate::Migrator::new(older.path()).await.unwrap().run(&pool).await.unwrap();
    pool.close().await;
    let name = newest.file_name().unwrap().to_string_lossy().into_owned();
    (name.split('_').next().unwrap().parse().unwrap(), name)
}

#[tokio::test]
async fn an_upgrade_snapshots_the_store_before_migrating_it_and_keeps_the_newest_two() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("shop.db");
    let (version, name) = store_one_migration_behind(&store).await;
    for old in ["shop.db.pre-20200101000000", "shop.db.pre-20210101000000"] {
        std::fs::write(dir.path().join(old), "an older snapshot").unwrap();
    }
    let (ok, said) = server(&store, &["keys", "list"]);
    assert!(ok, "{said}");

    let snapshot = dir.path().join(format!("shop.db.pre-{version}"));
    let copy = sqlite(&snapshot).await;
    let versions: Vec<i64> = sqlx::query_scalar("SELECT version FROM _sqlx_migrations").fetch_all(&copy).await.unwrap();
    assert!(!versions.is_empty() && !versions.contains(&version), "the snapshot is the store before {name}");
    copy.close().await;
    let migrated = sqlite(&store).await;
    let versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations").fetch_all(&migrated).await.unwrap();
    assert!(versions.contains(&version), "the store itself is migrated");
    migrated.close().await;
    assert!(!dir.path().join("shop.db.pre-20200101000000").exists(), "the oldest snapshot is deleted");
    assert!(dir.path().join("shop.db.pre-20210101000000").exists(), "the newest two are kept");

    // Up to date: nothing more is taken.
    let (ok, said) = server(&store, &["keys", "list"]);
    assert!(ok, "{said}");
    assert!(dir.path().join("shop.db.pre-20210101000000").exists());
}

#[tokio::test]
async fn server_migrate_migrates_and_exits() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("shop.db");
    let (version, _) = store_one_migration_behind(&store).await;
    let (ok, said) = server(&store, &["migrate"]);
    assert!(ok, "{said}");
    assert!(said.contains(&format!("the database is at migration {version}")), "{said}");
    assert!(dir.path().join(format!("shop.db.pre-{version}")).exists(), "snapshotted first");
}

#[tokio::test]
async fn a_snapshot_that_cannot_be_written_stops_the_upgrade_before_it_migrates_anything() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("shop.db");
    let (version, _) = store_one_migration_behind(&store).await;
    // The snapshot's name is taken by a folder with something in it: the rename fails.
    let blocker = dir.path().join(format!("shop.db.pre-{version}"));
    std::fs::create_dir_all(blocker.join("inside")).unwrap();
    let before = std::fs::read(&store).unwrap();

    let (ok, said) = server(&store, &["keys", "list"]);
    assert!(!ok, "it migrated without a snapshot");
    assert!(
        said.contains(&format!("before applying migration {version}")) && said.contains("nothing was migrated"),
        "{said}"
    );
    assert!(std::fs::read(&store).unwrap() == before, "the store changed");
    let hidden: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("partial"))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");

    // Told to go on without one, it migrates.
    let (ok, said) = server(&store, &["keys", "list", "--snapshot-before-migrating=false"]);
    assert!(ok, "{said}");
}
