//! `/api/v1/categories`.

mod common;

use axum::http::{Method, StatusCode};
use common::{TestApp, next_link};
use serde_json::json;

#[tokio::test]
async fn crud_round_trip() {
    let app = TestApp::new().await;
    let reply = app.post("/api/v1/categories", json!({ "name": " Dogs ", "description": "Loyal" })).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    let id = reply.body["id"].as_i64().unwrap();
    assert_eq!(reply.body, json!({ "id": id, "name": "Dogs", "description": "Loyal" }));
    assert_eq!(reply.header("location"), Some(format!("/api/v1/categories/{id}").as_str()));

    let path = format!("/api/v1/categories/{id}");
    assert_eq!(app.get(&path).await.body, json!({ "id": id, "name": "Dogs", "description": "Loyal" }));
    // PUT replaces: an omitted description is cleared.
    let reply = app.put(&path, json!({ "name": "Hounds" })).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.body, json!({ "id": id, "name": "Hounds" }));
    // Renaming to its own name in another case is fine.
    assert_eq!(app.put(&path, json!({ "name": "HOUNDS" })).await.status, StatusCode::OK);

    let list = app.get("/api/v1/categories").await;
    assert_eq!(list.body, json!([{ "id": id, "name": "HOUNDS" }]));
    assert_eq!(app.delete(&path).await.status, StatusCode::NO_CONTENT);
    app.get(&path).await.assert_error(404, "not_found");
    app.put(&path, json!({ "name": "Again" })).await.assert_error(404, "not_found");
    app.delete(&path).await.assert_error(404, "not_found");
    app.get("/api/v1/categories/dogs").await.assert_error(400, "bad_request");
}

#[tokio::test]
async fn names_are_unique_case_insensitively_including_non_ascii() {
    let app = TestApp::new().await;
    app.category("Dogs").await;
    let eclair = app.category("Éclair").await;
    app.post("/api/v1/categories", json!({ "name": "dogs" })).await.assert_error(409, "duplicate_name");
    app.post("/api/v1/categories", json!({ "name": " DOGS " })).await.assert_error(409, "duplicate_name");
    app.post("/api/v1/categories", json!({ "name": "éCLAIR" })).await.assert_error(409, "duplicate_name");
    app.put(&format!("/api/v1/categories/{eclair}"), json!({ "name": "Dogs" }))
        .await
        .assert_error(409, "duplicate_name");
    assert_eq!(app.count("categories").await, 2);
}

#[tokio::test]
async fn a_category_in_use_cannot_be_deleted() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let pet = app.pet("Rex", dogs, None).await;
    let message =
        app.delete(&format!("/api/v1/categories/{dogs}")).await.assert_error(409, "category_in_use").to_owned();
    assert!(message.contains("1 pet"), "{message}");
    app.delete(&format!("/api/v1/pets/{pet}")).await;
    assert_eq!(app.delete(&format!("/api/v1/categories/{dogs}")).await.status, StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn bad_bodies_are_rejected() {
    let app = TestApp::new().await;
    for (body, field) in [
        (json!({}), "name"),
        (json!({ "name": "" }), "name"),
        (json!({ "name": "a".repeat(101) }), "name"),
        (json!({ "name": "Dogs", "description": "d".repeat(1001) }), "description"),
        (json!({ "name": "Dogs", "description": 5 }), "description"),
        (json!({ "name": "Dogs", "kind": "mammal" }), "kind"),
    ] {
        let reply = app.post("/api/v1/categories", body.clone()).await;
        let message = reply.assert_error(422, "validation_failed");
        assert!(message.contains(field), "{body} → {message}");
    }
    app.raw(Method::POST, "/api/v1/categories", Some("application/xml"), "<a/>")
        .await
        .assert_error(415, "unsupported_media_type");
    app.raw(Method::POST, "/api/v1/categories", Some("application/json"), "{").await.assert_error(400, "bad_request");
    assert!(
        app.post("/api/v1/categories", json!({ "name": "Dogs", "description": "d".repeat(1000) }))
            .await
            .status
            .is_success()
    );
    assert_eq!(app.count("categories").await, 1);
}

#[tokio::test]
async fn list_pages() {
    let app = TestApp::new().await;
    for n in 0..5 {
        app.category(&format!("Kind {n}")).await;
    }
    let first = app.get("/api/v1/categories?limit=3").await;
    assert_eq!(first.body.as_array().unwrap().len(), 3);
    let next = next_link(&first).expect("a next page");
    let second = app.get(&next).await;
    assert_eq!(second.body.as_array().unwrap().len(), 2);
    assert_eq!(second.body[0]["name"], "Kind 3");
    assert!(next_link(&second).is_none());
    app.get("/api/v1/categories?limit=1000").await.assert_error(422, "validation_failed");
}
