//! Retention, as an operator sees it: rows past keeping (expired sessions, idempotency
//! records older than 24 hours, rate-limit rows of days long past) that a store holds
//! are gone soon after the server starts; live ones, and the orders, stay.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::live::LiveServer;
use serde_json::json;

async fn count(db: &sqlx::SqlitePool, sql: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned())).fetch_one(db).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_past_keeping_are_deleted_at_start_and_live_ones_stay() {
    let dir = tempfile::tempdir().unwrap();
    // A first run makes the store (and its admin key), and one real order with an
    // Idempotency-Key, whose record must survive.
    let (mut server, admin) = LiveServer::start(dir.path());
    let admin = admin.expect("the first start creates an admin key");
    let http = server.client();
    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Owls"}))).await;
    let pet = json!({"name": "Hedwig", "categoryId": category["id"]});
    let pet = http.expect(201, "POST", "/api/v1/pets", &admin, Some(&pet)).await;
    let order = json!({"petId": pet["id"], "quantity": 1});
    let (status, _) = http
        .send("POST", "/api/v1/store/orders", Some(&admin), Some(&order), &[("Idempotency-Key", "live-order")])
        .await
        .unwrap();
    assert_eq!(status, 201);
    assert!(server.terminate(), "a clean stop");

    // Meanwhile, what an old store would hold.
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    let url = format!("sqlite://{}", server.db_path.display());
    let db = sqlx::SqlitePool::connect(&url).await.unwrap();
    let key_id: i64 = count(&db, "SELECT id FROM api_keys").await;
    for (token, expires) in [("expired", now - 60), ("live", now + 3600)] {
        sqlx::query("INSERT INTO sessions (token_hash, key_id, created_at, expires_at) VALUES (?, ?, 0, ?)")
            .bind(token.as_bytes())
            .bind(key_id)
            .bind(expires)
            .execute(&db)
            .await
            .unwrap();
    }
    sqlx::query(
        "INSERT INTO idempotency_records (key_id, idem_key, request_hash, status, body, created_at)
         VALUES (?, 'two-days-old', x'00', 201, '{}', ?)",
    )
    .bind(key_id)
    .bind(now - 2 * 86_400)
    .execute(&db)
    .await
    .unwrap();
    let last_week = (now / 86_400 - 7) * 86_400;
    sqlx::query(
        "INSERT INTO rate_limit_usage
           (subject, minute_start, minute_count, day_start, day_count, refusals, refusals_until, banned_until)
         VALUES ('ip:192.0.2.1', ?1, 5, ?1, 5, 0, 0, 0)",
    )
    .bind(last_week)
    .execute(&db)
    .await
    .unwrap();
    assert_eq!(count(&db, "SELECT COUNT(*) FROM rate_limit_usage WHERE subject = 'ip:192.0.2.1'").await, 1);

    let (mut server, _) = LiveServer::start(dir.path());
    let gone = "SELECT (SELECT COUNT(*) FROM sessions WHERE token_hash = CAST('expired' AS BLOB))
                     + (SELECT COUNT(*) FROM idempotency_records WHERE idem_key = 'two-days-old')
                     + (SELECT COUNT(*) FROM rate_limit_usage WHERE subject = 'ip:192.0.2.1')";
    let mut left = count(&db, gone).await;
    for _ in 0..100 {
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        left = count(&db, gone).await;
    }
    assert_eq!(left, 0, "the old rows are still there 10 s after the start");

    assert_eq!(count(&db, "SELECT COUNT(*) FROM sessions WHERE token_hash = CAST('live' AS BLOB)").await, 1);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM idempotency_records WHERE idem_key = 'live-order'").await, 1);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM orders").await, 1);
    // The live record still answers a retry with the first order.
    let (status, _) = server
        .client()
        .send("POST", "/api/v1/store/orders", Some(&admin), Some(&order), &[("Idempotency-Key", "live-order")])
        .await
        .unwrap();
    assert_eq!(status, 201);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM orders").await, 1, "replayed, not placed again");
    db.close().await;
    assert!(server.terminate());
}
