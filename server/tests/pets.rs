//! `/api/v1/pets`: every success path and every error the endpoints can return.

mod common;

use axum::http::{Method, StatusCode};
use common::{TestApp, next_link};
use serde_json::json;
use server::Config;

#[tokio::test]
async fn create_returns_201_with_location_and_initial_stock() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;

    let reply = app.post("/api/v1/pets", json!({ "name": "  Rex ", "categoryId": dogs })).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    let id = reply.body["id"].as_i64().unwrap();
    assert_eq!(
        reply.body,
        json!({ "id": id, "name": "Rex", "categoryId": dogs, "status": "available", "photoUrls": [] })
    );
    assert_eq!(reply.header("location"), Some(format!("/api/v1/pets/{id}").as_str()));
    assert_eq!(app.stock(id).await, (1, "available".into()));

    let pending = app.pet("Max", dogs, Some("pending")).await;
    assert_eq!(app.stock(pending).await, (0, "pending".into()));
    let sold = app.pet("Luna", dogs, Some("sold")).await;
    assert_eq!(app.stock(sold).await, (0, "sold".into()));
}

#[tokio::test]
async fn create_rejects_bad_bodies_and_changes_nothing() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let cases = [
        (json!({ "name": "", "categoryId": dogs }), "name"),
        (json!({ "name": "   ", "categoryId": dogs }), "name"),
        (json!({ "name": "x".repeat(101), "categoryId": dogs }), "name"),
        (json!({ "name": "Rex" }), "categoryId"),
        (json!({ "categoryId": dogs }), "name"),
        (json!({ "name": "Rex", "categoryId": "one" }), "categoryId"),
        (json!({ "name": "Rex", "categoryId": 9999 }), "categoryId"),
        (json!({ "name": "Rex", "categoryId": 0 }), "categoryId"),
        (json!({ "name": "Rex", "categoryId": dogs, "status": "lost" }), "status"),
        (json!({ "name": "Rex", "categoryId": dogs, "colour": "brown" }), "colour"),
        (json!({ "name": "Rex", "categoryId": dogs, "id": 5 }), "unknown field `id`"),
        (json!({ "name": "Re\u{0}x", "categoryId": dogs }), "name"),
        (json!(["Rex", dogs]), "object"),
        (json!("Rex"), "object"),
    ];
    for (body, field) in cases {
        let reply = app.post("/api/v1/pets", body.clone()).await;
        let message = reply.assert_error(422, "validation_failed");
        assert!(message.contains(field), "{body} → {message} should name {field}");
    }
    // 100 characters, counted as characters rather than bytes, is fine.
    app.pet(&"é".repeat(100), dogs, None).await;
    assert_eq!(app.count("pets").await, 1);
    assert_eq!(app.count("inventory").await, 1);
}

#[tokio::test]
async fn bodies_that_are_not_json_are_400_415_or_413() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let good = json!({ "name": "Rex", "categoryId": dogs }).to_string();

    app.raw(Method::POST, "/api/v1/pets", None, good.clone()).await.assert_error(415, "unsupported_media_type");
    app.raw(Method::POST, "/api/v1/pets", Some("text/plain"), good.clone())
        .await
        .assert_error(415, "unsupported_media_type");
    app.raw(Method::POST, "/api/v1/pets", Some("application/json"), "{\"name\": ")
        .await
        .assert_error(400, "bad_request");
    app.raw(Method::POST, "/api/v1/pets", Some("application/json"), "not json").await.assert_error(400, "bad_request");
    app.raw(Method::POST, "/api/v1/pets", Some("application/json"), format!("{good} {good}"))
        .await
        .assert_error(400, "bad_request");
    let big = json!({ "name": "x".repeat(70 * 1024), "categoryId": dogs }).to_string();
    app.raw(Method::POST, "/api/v1/pets", Some("application/json"), big).await.assert_error(413, "payload_too_large");
    // A parameterised JSON type is JSON too.
    let reply = app.raw(Method::POST, "/api/v1/pets", Some("application/json; charset=utf-8"), good).await;
    assert_eq!(reply.status, StatusCode::CREATED);
    assert_eq!(app.count("pets").await, 1);
}

#[tokio::test]
async fn get_by_id_is_deprecated_with_headers_on_every_response() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let rex = app.pet("Rex", dogs, None).await;

    let reply = app.get(&format!("/api/v1/pets/{rex}")).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.body,
        json!({ "id": rex, "name": "Rex", "categoryId": dogs, "status": "available", "photoUrls": [] })
    );
    // 2026-11-01T00:00:00Z and 2027-06-30, the contract's defaults.
    assert_eq!(reply.header("deprecation"), Some("@1793491200"));
    assert_eq!(reply.header("sunset"), Some("Wed, 30 Jun 2027 00:00:00 GMT"));
    assert_eq!(reply.header("link"), Some(format!("</api/v1/pets?ids={rex}>; rel=\"successor-version\"").as_str()));

    let missing = app.get("/api/v1/pets/424242").await;
    missing.assert_error(404, "not_found");
    assert_eq!(missing.header("deprecation"), Some("@1793491200"));
    let bad = app.get("/api/v1/pets/abc").await;
    bad.assert_error(400, "bad_request");
    assert_eq!(bad.header("deprecation"), Some("@1793491200"));
    assert_eq!(bad.header("link"), Some("</api/v1/pets>; rel=\"successor-version\""));
    let anonymous = app.request_as(None, Method::GET, &format!("/api/v1/pets/{rex}"), None).await;
    anonymous.assert_error(401, "missing_api_key");
    assert_eq!(anonymous.header("sunset"), Some("Wed, 30 Jun 2027 00:00:00 GMT"));
    app.get("/api/v1/pets/0").await.assert_error(404, "not_found");
    app.get("/api/v1/pets/99999999999999999999").await.assert_error(400, "bad_request");
}

#[tokio::test]
async fn get_by_id_answers_410_after_the_sunset() {
    let config = Config { sunset: server::config::parse_date("2020-01-01").unwrap(), ..Config::default() };
    let app = TestApp::with_config(config).await;
    let dogs = app.category("Dogs").await;
    let rex = app.pet("Rex", dogs, None).await;
    let reply = app.get(&format!("/api/v1/pets/{rex}")).await;
    let message = reply.assert_error(410, "sunset");
    assert!(message.contains(&format!("/pets?ids={rex}")), "{message}");
    assert_eq!(reply.header("sunset"), Some("Wed, 01 Jan 2020 00:00:00 GMT"));
    // The successor still works.
    let list = app.get(&format!("/api/v1/pets?ids={rex}")).await;
    assert_eq!(list.body[0]["id"], rex);
}

#[tokio::test]
async fn replace_changes_name_category_and_status_under_the_rules() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let cats = app.category("Cats").await;
    let pet = app.pet("Rex", dogs, None).await;
    let path = format!("/api/v1/pets/{pet}");

    // Omitted status: unchanged.
    let reply = app.put(&path, json!({ "name": "Felix", "categoryId": cats })).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(
        reply.body,
        json!({ "id": pet, "name": "Felix", "categoryId": cats, "status": "available", "photoUrls": [] })
    );

    // available → pending (a hold) keeps the stock; → sold empties it.
    let reply = app.put(&path, json!({ "name": "Felix", "categoryId": cats, "status": "pending" })).await;
    assert_eq!(reply.body["status"], "pending");
    assert_eq!(app.stock(pet).await, (1, "pending".into()));
    let reply = app.put(&path, json!({ "name": "Felix", "categoryId": cats, "status": "sold" })).await;
    assert_eq!(reply.body["status"], "sold");
    assert_eq!(app.stock(pet).await, (0, "sold".into()));

    // sold → pending never; sold → available only with stock.
    app.put(&path, json!({ "name": "Felix", "categoryId": cats, "status": "pending" }))
        .await
        .assert_error(409, "invalid_transition");
    app.put(&path, json!({ "name": "Felix", "categoryId": cats, "status": "available" }))
        .await
        .assert_error(409, "invalid_transition");
    assert_eq!(app.stock(pet).await, (0, "sold".into()));

    // Errors change nothing.
    app.put(&path, json!({ "name": "", "categoryId": cats })).await.assert_error(422, "validation_failed");
    app.put(&path, json!({ "name": "Tom", "categoryId": 777 })).await.assert_error(422, "validation_failed");
    app.put("/api/v1/pets/5555", json!({ "name": "Tom", "categoryId": cats })).await.assert_error(404, "not_found");
    app.put("/api/v1/pets/x", json!({ "name": "Tom", "categoryId": cats })).await.assert_error(400, "bad_request");
    app.raw(Method::PUT, &path, Some("text/plain"), "hi").await.assert_error(415, "unsupported_media_type");
    assert_eq!(app.get(&path).await.body["name"], "Felix");
}

/// `GET /pets/{petId}` and `GET /pets` answer from JSON kept between reads
/// (`pets::get_as_json`, `pets::list_as_json`): a write through the API, an order and a
/// write behind this process's back each show in both.
#[tokio::test]
async fn reads_show_every_write_after_they_were_kept() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let pet = app.pet("Rex", dogs, None).await;
    let path = format!("/api/v1/pets/{pet}");
    // The pet as the first page of the listing shows it (a page of one, with a filter,
    // and the whole list: three kept pages).
    let listed = |query: &'static str| {
        let app = &app;
        async move {
            let reply = app.get(&format!("/api/v1/pets?{query}")).await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
            reply.body.as_array().unwrap().iter().find(|p| p["id"] == pet).cloned().unwrap_or_default()
        }
    };
    for _ in 0..2 {
        assert_eq!(app.get(&path).await.body["name"], "Rex");
        assert_eq!(listed("limit=1").await["name"], "Rex");
        assert_eq!(listed("status=available").await["name"], "Rex");
        assert_eq!(listed("q=rex").await["name"], "Rex");
    }

    // Through the API: at once.
    let reply = app.put(&path, json!({ "name": "Max", "categoryId": dogs })).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let reply = app.get(&path).await;
    let max = json!({ "id": pet, "name": "Max", "categoryId": dogs, "status": "available", "photoUrls": [] });
    assert_eq!(reply.body, max);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(listed("limit=1").await, max);
    assert_eq!(listed("q=rex").await, serde_json::Value::Null, "no longer found by its old name");

    // An order that takes the last unit makes it pending.
    let reply = app.post("/api/v1/store/orders", json!({ "petId": pet, "quantity": 1 })).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    assert_eq!(app.get(&path).await.body["status"], "pending");
    assert_eq!(listed("limit=1").await["status"], "pending");
    assert_eq!(listed("status=available").await, serde_json::Value::Null, "no longer available");

    // Behind this process's back (as another server over the same file would write):
    // within the catalog watcher's interval, polled with room for a loaded machine.
    app.rename_pet_behind_the_services(pet, "Bella").await;
    let mut names = (serde_json::Value::Null, serde_json::Value::Null);
    for _ in 0..20 {
        tokio::time::sleep(app::db::CATALOG_WATCH_INTERVAL).await;
        names = (app.get(&path).await.body["name"].clone(), listed("limit=1").await["name"].clone());
        if names == (json!("Bella"), json!("Bella")) {
            break;
        }
    }
    assert_eq!(names, (json!("Bella"), json!("Bella")), "not seen within 2 s");

    // Gone once deleted.
    let other = app.pet("Luna", dogs, None).await;
    let other_path = format!("/api/v1/pets/{other}");
    assert_eq!(app.get(&other_path).await.body["name"], "Luna");
    let ids = |reply: common::Reply| -> Vec<i64> {
        reply.body.as_array().unwrap().iter().map(|p| p["id"].as_i64().unwrap()).collect()
    };
    assert_eq!(ids(app.get("/api/v1/pets").await), [pet, other]);
    assert_eq!(app.delete(&other_path).await.status, StatusCode::NO_CONTENT);
    app.get(&other_path).await.assert_error(404, "not_found");
    assert_eq!(ids(app.get("/api/v1/pets").await), [pet]);
}

#[tokio::test]
async fn delete_removes_the_pet_and_its_inventory() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let pet = app.pet("Rex", dogs, None).await;
    let reply = app.delete(&format!("/api/v1/pets/{pet}")).await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT);
    assert!(reply.text.is_empty());
    app.get(&format!("/api/v1/pets/{pet}")).await.assert_error(404, "not_found");
    app.get(&format!("/api/v1/store/inventory/{pet}")).await.assert_error(404, "not_found");
    assert_eq!(app.count("inventory").await, 0);
    app.delete(&format!("/api/v1/pets/{pet}")).await.assert_error(404, "not_found");
    app.delete("/api/v1/pets/nope").await.assert_error(400, "bad_request");
    // Ids are not reused.
    let next = app.pet("Max", dogs, None).await;
    assert!(next > pet);
}

#[tokio::test]
async fn list_filters_by_status_category_name_and_ids() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let cats = app.category("Cats").await;
    let rex = app.pet("Rex", dogs, None).await;
    let max = app.pet("Max", dogs, Some("pending")).await;
    let felix = app.pet("Félix", cats, Some("sold")).await;
    let rexie = app.pet("Big REXIE", cats, None).await;

    let ids = |reply: &common::Reply| -> Vec<i64> {
        reply.body.as_array().unwrap().iter().map(|p| p["id"].as_i64().unwrap()).collect()
    };
    let all = app.get("/api/v1/pets").await;
    assert_eq!(all.status, StatusCode::OK);
    assert_eq!(ids(&all), vec![rex, max, felix, rexie]);
    assert!(all.header("link").is_none());
    assert_eq!(ids(&app.get("/api/v1/pets?status=available").await), vec![rex, rexie]);
    assert_eq!(ids(&app.get(&format!("/api/v1/pets?categoryId={cats}")).await), vec![felix, rexie]);
    assert_eq!(ids(&app.get("/api/v1/pets?q=rex").await), vec![rex, rexie]);
    assert_eq!(ids(&app.get("/api/v1/pets?q=F%C3%89LIX").await), vec![felix]);
    assert_eq!(ids(&app.get(&format!("/api/v1/pets?ids={max},{rexie},999")).await), vec![max, rexie]);
    assert_eq!(ids(&app.get(&format!("/api/v1/pets?status=available&categoryId={dogs}&q=R")).await), vec![rex]);
    assert_eq!(ids(&app.get("/api/v1/pets?q=nobody").await), Vec::<i64>::new());

    for (query, field) in [
        ("status=lost", "status"),
        ("categoryId=dogs", "categoryId"),
        ("ids=1,x", "ids"),
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=ten", "limit"),
        ("cursor=bogus", "cursor"),
    ] {
        let reply = app.get(&format!("/api/v1/pets?{query}")).await;
        let message = reply.assert_error(422, "validation_failed");
        assert!(message.starts_with(field), "{query} → {message}");
    }
    let many = (1..=101).map(|n| n.to_string()).collect::<Vec<_>>().join(",");
    app.get(&format!("/api/v1/pets?ids={many}")).await.assert_error(422, "validation_failed");
    // A parameter given twice is ambiguous.
    let message =
        app.get("/api/v1/pets?status=sold&status=available").await.assert_error(422, "validation_failed").to_owned();
    assert!(message.contains("status"), "{message}");
}

#[tokio::test]
async fn list_pages_with_a_link_header_that_keeps_the_filters() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let cats = app.category("Cats").await;
    let mut expected = Vec::new();
    for n in 0..25 {
        let id = app.pet(&format!("Dog {n}"), dogs, None).await;
        expected.push(id);
        app.pet(&format!("Cat {n}"), cats, None).await;
    }

    let mut seen = Vec::new();
    let mut url = format!("/api/v1/pets?categoryId={dogs}&limit=10");
    let mut pages = 0;
    loop {
        let reply = app.get(&url).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        pages += 1;
        seen.extend(reply.body.as_array().unwrap().iter().map(|p| p["id"].as_i64().unwrap()));
        match next_link(&reply) {
            Some(next) => {
                assert!(next.starts_with("/api/v1/pets?"), "{next}");
                assert!(next.contains(&format!("categoryId={dogs}")) && next.contains("limit=10"), "{next}");
                url = next;
            }
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, expected);

    // Default page size is 20.
    let first = app.get("/api/v1/pets").await;
    assert_eq!(first.body.as_array().unwrap().len(), 20);
    assert!(next_link(&first).is_some());
}

#[tokio::test]
async fn with_a_public_url_location_link_and_servers_are_absolute() {
    let config = Config { public_url: Some("https://shop.example".into()), ..Config::default() };
    let app = TestApp::with_config(config).await;
    let dogs = app.category("Dogs").await;
    let created = app.post("/api/v1/pets", json!({"name": "Rex", "categoryId": dogs})).await;
    let id = created.body["id"].as_i64().unwrap();
    assert_eq!(created.header("location"), Some(format!("https://shop.example/api/v1/pets/{id}").as_str()));
    app.pet("Fido", dogs, None).await;
    let page = app.get("/api/v1/pets?limit=1").await;
    let link = page.header("link").unwrap();
    assert!(link.starts_with("<https://shop.example/api/v1/pets?limit=1&cursor="), "{link}");
    let document = app.get("/api/v1/openapi.json").await;
    assert_eq!(document.body["servers"][0]["url"], "https://shop.example/api/v1");

    // Without it, paths on this server.
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let created = app.post("/api/v1/pets", json!({"name": "Rex", "categoryId": dogs})).await;
    assert!(created.header("location").unwrap().starts_with("/api/v1/pets/"));
    assert_eq!(app.get("/api/v1/openapi.json").await.body["servers"][0]["url"], "/api/v1");
}

#[tokio::test]
async fn the_storefront_searches_categories_and_descriptions_and_the_api_names_only() {
    let app = TestApp::new().await;
    let cats = app.category("Cats").await;
    let birds = app.category("Birds").await;
    let whiskers = app.pet("Whiskers", cats, None).await;
    let tweety = app
        .post("/api/v1/pets", json!({ "name": "Tweety", "categoryId": birds, "description": "Not a CAT person." }))
        .await
        .body["id"]
        .as_i64()
        .unwrap();
    let catalina = app.pet("Catalina", birds, None).await;
    app.pet("Polly", birds, None).await;

    // The catalog's server function: name, category or description.
    let reply = app.call_fn(None, "catalog", "q=Cat").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let found: Vec<i64> = reply.body["items"].as_array().unwrap().iter().map(|c| c["id"].as_i64().unwrap()).collect();
    assert_eq!(found, vec![whiskers, tweety, catalina]);
    // The page drawn on the server, without JavaScript, is the same search.
    let page = app.get("/?q=cat").await;
    assert_eq!(page.status, StatusCode::OK);
    for name in ["Whiskers", "Tweety", "Catalina"] {
        assert!(page.text.contains(&format!(">{name}<")), "{name} on the page");
    }
    assert!(!page.text.contains(">Polly<"));
    // The REST API's `q`: names only, as the contract says.
    let listed = app.get("/api/v1/pets?q=Cat").await;
    let ids: Vec<i64> = listed.body.as_array().unwrap().iter().map(|p| p["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, vec![catalina]);
}
