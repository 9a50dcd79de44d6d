//! `/api/v1/store/orders`: the state table through the API, ownership, idempotency and
//! concurrency.

mod common;

use std::sync::Arc;

use app::model::{Limits, Plan, Role};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use common::{Reply, T0, TestApp};
use serde_json::{Value, json};

const BIG: Option<Limits> = Some(Limits { per_minute: 1_000_000, per_day: 1_000_000 });

async fn shop() -> (TestApp, i64) {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    (app, dogs)
}

async fn customer(app: &TestApp) -> String {
    app.key(Role::Customer, Plan::Enterprise, BIG).await.1
}

async fn order_as(app: &TestApp, key: &str, pet: i64, quantity: i64) -> Reply {
    app.request_as(Some(key), Method::POST, "/api/v1/store/orders", Some(json!({ "petId": pet, "quantity": quantity })))
        .await
}

async fn stocked(app: &TestApp, dogs: i64, name: &str, stock: i64) -> i64 {
    let pet = app.pet(name, dogs, None).await;
    app.put(&format!("/api/v1/store/inventory/{pet}"), json!({ "quantity": stock })).await;
    pet
}

#[tokio::test]
async fn placing_reserves_stock_and_the_last_unit_makes_the_pet_pending() {
    let (app, dogs) = shop().await;
    let pet = stocked(&app, dogs, "Rex", 3).await;
    let shopper = customer(&app).await;

    let reply = order_as(&app, &shopper, pet, 2).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    let id = reply.body["id"].as_i64().unwrap();
    assert_eq!(reply.body, json!({ "id": id, "petId": pet, "quantity": 2, "complete": false }));
    assert_eq!(reply.header("location"), Some(format!("/api/v1/store/orders/{id}").as_str()));
    assert_eq!(app.stock(pet).await, (1, "available".into()));

    let with_date = app
        .request_as(
            Some(&shopper),
            Method::POST,
            "/api/v1/store/orders",
            Some(json!({ "petId": pet, "quantity": 1, "shipDate": "2027-01-31T12:00:00+02:00" })),
        )
        .await;
    assert_eq!(with_date.body["shipDate"], "2027-01-31T10:00:00Z");
    assert_eq!(app.stock(pet).await, (0, "pending".into()));

    order_as(&app, &shopper, pet, 1).await.assert_error(409, "pet_not_available");
    let other = stocked(&app, dogs, "Max", 2).await;
    order_as(&app, &shopper, other, 3).await.assert_error(409, "insufficient_stock");
    assert_eq!(app.stock(other).await, (2, "available".into()));
}

#[tokio::test]
async fn bad_orders_are_422_and_change_nothing() {
    let (app, dogs) = shop().await;
    let pet = stocked(&app, dogs, "Rex", 5).await;
    let shopper = customer(&app).await;
    for (body, field) in [
        (json!({ "petId": pet, "quantity": 0 }), "quantity: must be at least 1"),
        (json!({ "petId": pet, "quantity": 1001 }), "quantity: must be at most 1,000 in one order"),
        (json!({ "petId": pet, "quantity": -1 }), "quantity: must be at least 1"),
        (json!({ "petId": pet }), "quantity"),
        (json!({ "petId": 999, "quantity": 1 }), "petId"),
        (json!({ "petId": pet, "quantity": 1, "shipDate": "tomorrow" }), "shipDate"),
        (json!({ "petId": pet, "quantity": 1, "shipDate": "2027-01-31T12:00:00" }), "shipDate"),
        (json!({ "petId": pet, "quantity": 1, "complete": true }), "complete"),
        (json!({ "petId": pet, "quantity": 1, "id": 7 }), "unknown field `id`"),
    ] {
        let reply = app.request_as(Some(&shopper), Method::POST, "/api/v1/store/orders", Some(body.clone())).await;
        let message = reply.assert_error(422, "validation_failed");
        assert!(message.contains(field), "{body}: {message}");
    }
    app.request_as(None, Method::POST, "/api/v1/store/orders", Some(json!({ "petId": pet, "quantity": 1 })))
        .await
        .assert_error(401, "missing_api_key");
    assert_eq!(app.count("orders").await, 0);
    assert_eq!(app.stock(pet).await, (5, "available".into()));
}

#[tokio::test]
async fn customers_see_and_cancel_only_their_own_orders() {
    let (app, dogs) = shop().await;
    let pet = stocked(&app, dogs, "Rex", 10).await;
    let (alice, bob) = (customer(&app).await, customer(&app).await);
    let a1 = order_as(&app, &alice, pet, 1).await.body["id"].as_i64().unwrap();
    let b1 = order_as(&app, &bob, pet, 2).await.body["id"].as_i64().unwrap();

    let mine = app.request_as(Some(&alice), Method::GET, "/api/v1/store/orders", None).await;
    assert_eq!(mine.body.as_array().unwrap().iter().map(|o| o["id"].as_i64().unwrap()).collect::<Vec<_>>(), vec![a1]);
    app.request_as(Some(&alice), Method::GET, &format!("/api/v1/store/orders/{b1}"), None)
        .await
        .assert_error(404, "not_found");
    app.request_as(Some(&alice), Method::DELETE, &format!("/api/v1/store/orders/{b1}"), None)
        .await
        .assert_error(404, "not_found");
    assert_eq!(app.get("/api/v1/store/orders").await.body.as_array().unwrap().len(), 2, "admins see all");
    assert_eq!(app.get(&format!("/api/v1/store/orders/{b1}")).await.body["quantity"], 2);

    // Cancelling returns the units; the order is then gone.
    let reply = app.request_as(Some(&alice), Method::DELETE, &format!("/api/v1/store/orders/{a1}"), None).await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT);
    assert_eq!(app.stock(pet).await, (8, "available".into()));
    app.request_as(Some(&alice), Method::GET, &format!("/api/v1/store/orders/{a1}"), None)
        .await
        .assert_error(404, "not_found");
    app.request_as(Some(&alice), Method::DELETE, &format!("/api/v1/store/orders/{a1}"), None)
        .await
        .assert_error(404, "not_found");
    // Admins may cancel anyone's.
    assert_eq!(app.delete(&format!("/api/v1/store/orders/{b1}")).await.status, StatusCode::NO_CONTENT);
    assert_eq!(app.stock(pet).await, (10, "available".into()));
}

#[tokio::test]
async fn completing_sells_the_pet_only_when_nothing_else_holds_it() {
    let (app, dogs) = shop().await;
    let pet = stocked(&app, dogs, "Rex", 2).await;
    let shopper = customer(&app).await;
    let first = order_as(&app, &shopper, pet, 1).await.body["id"].as_i64().unwrap();
    let second = order_as(&app, &shopper, pet, 1).await.body["id"].as_i64().unwrap();
    assert_eq!(app.stock(pet).await, (0, "pending".into()));

    let patch = |id: i64, body: Value| {
        let app = &app;
        async move { app.request(Method::PATCH, &format!("/api/v1/store/orders/{id}"), Some(body)).await }
    };
    app.request_as(
        Some(&shopper),
        Method::PATCH,
        &format!("/api/v1/store/orders/{first}"),
        Some(json!({ "complete": true })),
    )
    .await
    .assert_error(403, "forbidden");
    patch(first, json!({ "complete": false })).await.assert_error(422, "validation_failed");

    let done = patch(first, json!({ "complete": true })).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    assert_eq!(
        done.body,
        json!({ "id": first, "petId": pet, "quantity": 1, "complete": true, "shipDate": "2026-11-23T10:00:00Z" })
    );
    assert_eq!(app.stock(pet).await, (0, "pending".into()), "the second order still holds it");
    patch(first, json!({ "complete": true })).await.assert_error(409, "order_completed");
    app.delete(&format!("/api/v1/store/orders/{first}")).await.assert_error(409, "order_completed");

    let done = patch(second, json!({ "complete": true, "shipDate": "2026-12-01T09:00:00Z" })).await;
    assert_eq!(done.body["shipDate"], "2026-12-01T09:00:00Z");
    assert_eq!(app.stock(pet).await, (0, "sold".into()));
    let list = app.get(&format!("/api/v1/store/orders?complete=true&petId={pet}")).await;
    assert_eq!(list.body.as_array().unwrap().len(), 2);
    assert_eq!(app.get("/api/v1/store/orders?complete=false").await.body, json!([]));
    app.get("/api/v1/store/orders?complete=yes").await.assert_error(422, "validation_failed");
    patch(9999, json!({ "complete": true })).await.assert_error(404, "not_found");
}

#[tokio::test]
async fn open_orders_hold_the_pet_against_inventory_status_and_deletion() {
    let (app, dogs) = shop().await;
    let pet = stocked(&app, dogs, "Rex", 1).await;
    let shopper = customer(&app).await;
    let id = order_as(&app, &shopper, pet, 1).await.body["id"].as_i64().unwrap();

    // Setting stock to 0 while an order is open: pending, not sold.
    let reply = app.put(&format!("/api/v1/store/inventory/{pet}"), json!({ "quantity": 0 })).await;
    assert_eq!(reply.body["status"], "pending");
    app.put(&format!("/api/v1/pets/{pet}"), json!({ "name": "Rex", "categoryId": dogs, "status": "sold" }))
        .await
        .assert_error(409, "invalid_transition");
    app.delete(&format!("/api/v1/pets/{pet}")).await.assert_error(409, "pet_has_open_orders");

    app.delete(&format!("/api/v1/store/orders/{id}")).await;
    assert_eq!(app.stock(pet).await, (1, "available".into()));
    assert_eq!(app.delete(&format!("/api/v1/pets/{pet}")).await.status, StatusCode::NO_CONTENT);
}

async fn idempotent(app: &TestApp, key: &str, idem: &str, body: Value) -> Reply {
    let request = Request::post("/api/v1/store/orders")
        .header("content-type", "application/json")
        .header("x-api-key", key)
        .header("idempotency-key", idem)
        .body(Body::from(body.to_string()))
        .unwrap();
    app.send(request).await
}

#[tokio::test]
async fn idempotency_keys_replay_the_first_answer_for_a_day() {
    let (app, dogs) = shop().await;
    let pet = stocked(&app, dogs, "Rex", 5).await;
    let shopper = customer(&app).await;
    let body = json!({ "petId": pet, "quantity": 2 });

    let first = idempotent(&app, &shopper, "order-1", body.clone()).await;
    assert_eq!(first.status, StatusCode::CREATED);
    let again = idempotent(&app, &shopper, "order-1", body.clone()).await;
    assert_eq!((again.status, &again.body), (first.status, &first.body));
    assert_eq!(app.count("orders").await, 1);
    assert_eq!(app.stock(pet).await, (3, "available".into()));

    idempotent(&app, &shopper, "order-1", json!({ "petId": pet, "quantity": 3 }))
        .await
        .assert_error(409, "idempotency_key_reused");
    // Another API key's same idempotency key is its own.
    let other = customer(&app).await;
    assert_eq!(idempotent(&app, &other, "order-1", body.clone()).await.status, StatusCode::CREATED);
    // A refusal is replayed too, even once stock is back.
    let refused = idempotent(&app, &shopper, "big", json!({ "petId": pet, "quantity": 4 })).await;
    refused.assert_error(409, "insufficient_stock");
    app.put(&format!("/api/v1/store/inventory/{pet}"), json!({ "quantity": 50 })).await;
    let replayed = idempotent(&app, &shopper, "big", json!({ "petId": pet, "quantity": 4 })).await;
    assert_eq!((replayed.status, &replayed.body), (refused.status, &refused.body));
    // After 24 hours the key is free again.
    app.set_time(T0 + 24 * 3600 + 1);
    let later = idempotent(&app, &shopper, "order-1", body).await;
    assert_eq!(later.status, StatusCode::CREATED);
    assert_ne!(later.body["id"], first.body["id"]);
    idempotent(&app, &shopper, "bad key ✗", json!({ "petId": pet, "quantity": 1 }))
        .await
        .assert_error(400, "bad_request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_retries_with_one_idempotency_key_make_one_order() {
    let (app, dogs) = shop().await;
    let pet = stocked(&app, dogs, "Rex", 100).await;
    let app = Arc::new(app);
    let shopper = customer(&app).await;
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let (app, key) = (app.clone(), shopper.clone());
            tokio::spawn(async move { idempotent(&app, &key, "same", json!({ "petId": pet, "quantity": 1 })).await })
        })
        .collect();
    let mut bodies = Vec::new();
    for task in tasks {
        let reply = task.await.unwrap();
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
        bodies.push(reply.body);
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]));
    assert_eq!(app.count("orders").await, 1);
    assert_eq!(app.stock(pet).await.0, 99);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_concurrent_orders_for_ten_units_sell_exactly_ten() {
    let (app, dogs) = shop().await;
    let pet = stocked(&app, dogs, "Rex", 10).await;
    let app = Arc::new(app);
    let shopper = customer(&app).await;
    let tasks: Vec<_> = (0..100)
        .map(|_| {
            let (app, key) = (app.clone(), shopper.clone());
            tokio::spawn(async move { order_as(&app, &key, pet, 1).await })
        })
        .collect();
    let (mut placed, mut refused) = (0, 0);
    for task in tasks {
        let reply = task.await.unwrap();
        match reply.status.as_u16() {
            201 => placed += 1,
            409 => {
                let code = reply.body["code"].as_str().unwrap();
                assert!(code == "insufficient_stock" || code == "pet_not_available", "{code}");
                refused += 1;
            }
            other => panic!("unexpected {other}: {}", reply.text),
        }
    }
    assert_eq!((placed, refused), (10, 90));
    assert_eq!(app.stock(pet).await, (0, "pending".into()));
    let open: i64 = app::on_pool!(app.db, |pool| sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(quantity), 0) AS BIGINT) FROM orders
         WHERE pet_id = $1 AND complete = FALSE AND cancelled_at IS NULL",
    )
    .bind(pet)
    .fetch_one(pool)
    .await)
    .unwrap();
    assert_eq!(open + app.stock(pet).await.0, 10);
}
