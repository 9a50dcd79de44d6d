//! `/api/v1/store/inventory`: setting stock recomputes status.

mod common;

use axum::http::StatusCode;
use common::{TestApp, next_link};
use serde_json::json;

#[tokio::test]
async fn setting_stock_recomputes_status() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let pet = app.pet("Rex", dogs, None).await;
    let path = format!("/api/v1/store/inventory/{pet}");

    assert_eq!(app.get(&path).await.body, json!({ "petId": pet, "quantity": 1, "status": "available" }));
    // 0 with no open orders → sold.
    let reply = app.put(&path, json!({ "quantity": 0 })).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.body, json!({ "petId": pet, "quantity": 0, "status": "sold" }));
    assert_eq!(app.get(&format!("/api/v1/pets/{pet}")).await.body["status"], "sold");
    // n > 0 → available, from any status.
    let reply = app.put(&path, json!({ "quantity": 1_000_000 })).await;
    assert_eq!(reply.body, json!({ "petId": pet, "quantity": 1_000_000, "status": "available" }));
    let held = app.pet("Max", dogs, Some("pending")).await;
    let reply = app.put(&format!("/api/v1/store/inventory/{held}"), json!({ "quantity": 2 })).await;
    assert_eq!(reply.body["status"], "available");
}

#[tokio::test]
async fn bad_updates_change_nothing() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let pet = app.pet("Rex", dogs, None).await;
    let path = format!("/api/v1/store/inventory/{pet}");
    for body in [
        json!({ "quantity": -1 }),
        json!({ "quantity": 1_000_001 }),
        json!({ "quantity": 1.5 }),
        json!({ "quantity": "3" }),
        json!({}),
        json!({ "quantity": 3, "status": "sold" }),
    ] {
        let reply = app.put(&path, body.clone()).await;
        assert_eq!(reply.status.as_u16(), 422, "{body}: {}", reply.text);
        let message = reply.assert_error(422, "validation_failed");
        assert!(message.contains("quantity") || message.contains("`status`"), "{body}: {message}");
    }
    // A number beyond int64.
    let reply = app
        .raw(axum::http::Method::PUT, &path, Some("application/json"), r#"{"quantity": 99999999999999999999}"#)
        .await;
    reply.assert_error(422, "validation_failed");
    assert_eq!(app.stock(pet).await, (1, "available".into()));
    app.put("/api/v1/store/inventory/777", json!({ "quantity": 3 })).await.assert_error(404, "not_found");
    app.put("/api/v1/store/inventory/seven", json!({ "quantity": 3 })).await.assert_error(400, "bad_request");
    app.get("/api/v1/store/inventory/777").await.assert_error(404, "not_found");
}

#[tokio::test]
async fn list_has_one_entry_per_pet_and_pages() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let mut pets = Vec::new();
    for n in 0..3 {
        pets.push(app.pet(&format!("Dog {n}"), dogs, if n == 1 { Some("sold") } else { None }).await);
    }
    let first = app.get("/api/v1/store/inventory?limit=2").await;
    assert_eq!(
        first.body,
        json!([
            { "petId": pets[0], "quantity": 1, "status": "available" },
            { "petId": pets[1], "quantity": 0, "status": "sold" },
        ])
    );
    let second = app.get(&next_link(&first).unwrap()).await;
    assert_eq!(second.body, json!([{ "petId": pets[2], "quantity": 1, "status": "available" }]));
    app.get("/api/v1/store/inventory?cursor=%21").await.assert_error(422, "validation_failed");
}
