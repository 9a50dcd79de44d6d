//! docs/operations.md's recipe for a PostgreSQL store, run as written: a base backup
//! with WAL archiving, orders placed after it, then recovery to a time between them
//! into a new cluster, and a server on the recovered cluster: the orders placed before
//! that time are there, none after, and the stock agrees.

mod common;

use std::time::Duration;

use common::live::{Http, LiveServer};
use common::postgres::OwnPostgres;
use serde_json::{Value, json};

/// A server over the `postgres` database of `cluster`.
fn serve(dir: &std::path::Path, cluster: &OwnPostgres) -> (LiveServer, Option<String>) {
    let url = cluster.url();
    LiveServer::start_with(dir, |command| {
        command.env("DATABASE_URL", url);
    })
}

/// `count` orders of one unit of `pet`: their ids.
async fn place(http: &Http, key: &str, pet: &Value, count: usize) -> Vec<i64> {
    let mut ids = Vec::new();
    for _ in 0..count {
        let order = json!({ "petId": pet, "quantity": 1 });
        ids.push(http.expect(201, "POST", "/api/v1/store/orders", key, Some(&order)).await["id"].as_i64().unwrap());
    }
    ids
}

#[tokio::test]
async fn a_base_backup_with_archived_wal_recovers_to_a_point_in_time_and_serves_from_it() {
    let dir = tempfile::tempdir().unwrap();
    // The archive is a folder here; in production, another machine or a bucket.
    let primary = OwnPostgres::start_with(&["wal_level=replica", "archive_mode=on", "archive_timeout=60"]);
    let archive = primary.owned_folder("archive");
    primary.psql(&format!("ALTER SYSTEM SET archive_command = 'test ! -f {0}/%f && cp %p {0}/%f'", archive.display()));
    primary.psql("SELECT pg_reload_conf()");

    let (mut server, admin) = serve(dir.path(), &primary);
    let admin = admin.unwrap();
    let http = server.client();
    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Dogs"}))).await;
    let pet = http
        .expect(201, "POST", "/api/v1/pets", &admin, Some(&json!({"name": "Rex", "categoryId": category["id"]})))
        .await;
    http.expect(200, "PUT", &format!("/api/v1/store/inventory/{}", pet["id"]), &admin, Some(&json!({"quantity": 100})))
        .await;

    // The base backup, then orders; the point in time; then more orders.
    let base = primary.owned_folder("base");
    let port = primary.port.to_string();
    primary.tool(
        "pg_basebackup",
        &[
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-U",
            "petstore",
            "-D",
            &base.display().to_string(),
            "--checkpoint=fast",
            "--wal-method=stream",
        ],
    );
    let before = place(&http, &admin, &pet["id"], 5).await;
    let point = primary.psql("SELECT clock_timestamp()");
    // Commit times on either side of the point are apart by more than any clock's step.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let after = place(&http, &admin, &pet["id"], 3).await;
    assert!(server.terminate());
    // The segment holding the last orders goes to the archive too.
    let last = primary.psql("SELECT pg_walfile_name(pg_switch_wal())");
    common::within(Duration::from_secs(30), async || {
        let archived = primary.psql("SELECT coalesce(last_archived_wal, '') FROM pg_stat_archiver");
        if archived.as_str() >= last.as_str() {
            Ok(())
        } else {
            Err(format!("archived up to {archived:?}, waiting for {last}"))
        }
    })
    .await;
    primary.stop_immediately();

    // A new cluster from the base backup, replaying the archive up to the point.
    let recovered = OwnPostgres::recovered_from(
        &base,
        &[
            &format!("restore_command = 'cp {}/%f %p'", archive.display()),
            &format!("recovery_target_time = '{point}'"),
            "recovery_target_action = 'promote'",
        ],
    );
    common::within(Duration::from_secs(60), async || match recovered.psql("SELECT pg_is_in_recovery()").as_str() {
        "f" => Ok(()),
        other => Err(format!("still recovering: {other}")),
    })
    .await;

    let served = dir.path().join("recovered");
    std::fs::create_dir_all(&served).unwrap();
    let (server, _) = serve(&served, &recovered);
    let http = server.client();
    for id in &before {
        http.expect(200, "GET", &format!("/api/v1/store/orders/{id}"), &admin, None).await;
    }
    for id in &after {
        let (status, body) = http.get(&format!("/api/v1/store/orders/{id}"), &admin).await.unwrap();
        assert_eq!(status, 404, "order {id}, placed after the point, is back: {body}");
    }
    let stock = http.expect(200, "GET", &format!("/api/v1/store/inventory/{}", pet["id"]), &admin, None).await;
    assert_eq!(stock["quantity"], 100 - before.len() as i64, "{stock}");
    // It takes orders again.
    place(&http, &admin, &pet["id"], 1).await;
}
