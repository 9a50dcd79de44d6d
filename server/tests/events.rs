//! Events (contract.md, "Events"): the outbox on both surfaces. A real receiver (an
//! axum server on loopback) checks every webhook's signature with the Standard
//! Webhooks crate, sees every event type with the resource the REST API shows, sees a
//! retry carry the same id after it answered 500, and sees nothing of a refused
//! change. The key's stream shows what the key may see, resumes after an event, and is
//! limited per key. Webhook targets are checked for the address classes they must not
//! reach.

mod common;

use std::time::Duration;

use app::model::{Plan, Role};
use app::services::events::BEFORE_THE_FIRST;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use common::receiver::Receiver;
use common::{Reply, TestApp};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use server::Config;

fn allowing_loopback() -> Config {
    Config { webhooks_allow_private: true, ..Config::default() }
}

/// Registers an endpoint for `events`; its id and secret.
async fn register(app: &TestApp, url: &str, events: Value) -> (i64, String) {
    let reply = app.post("/api/v1/webhooks", json!({ "url": url, "events": events, "description": "tests" })).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    (reply.body["id"].as_i64().unwrap(), reply.body["secret"].as_str().unwrap().to_owned())
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|event| event["type"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn a_receiver_gets_every_event_type_signed_with_the_resource_as_the_api_shows_it() {
    let app = TestApp::with_config(allowing_loopback()).await;
    let receiver = Receiver::start(Vec::new()).await;
    let (_, secret) = register(&app, &receiver.url, json!(["*"])).await;
    let dogs = app.category("Dogs").await;

    let created = app.post("/api/v1/pets", json!({ "name": "Rex", "categoryId": dogs, "price": 500 })).await;
    let pet = created.body["id"].as_i64().unwrap();
    let updated = app.put(&format!("/api/v1/pets/{pet}"), json!({ "name": "Rexy", "categoryId": dogs })).await;
    let stocked = app.put(&format!("/api/v1/store/inventory/{pet}"), json!({ "quantity": 3 })).await;
    let (_, shopper) = app.key(Role::Customer, Plan::Pro, None).await;
    let order = |quantity: i64| {
        app.request_as(
            Some(&shopper),
            Method::POST,
            "/api/v1/store/orders",
            Some(json!({ "petId": pet, "quantity": quantity })),
        )
    };
    let first = order(1).await;
    let second = order(2).await; // the last two units: out of stock, pending
    let order_id = |reply: &Reply| reply.body["id"].as_i64().unwrap();
    let cancelled = app
        .request_as(Some(&shopper), Method::DELETE, &format!("/api/v1/store/orders/{}", order_id(&second)), None)
        .await;
    assert_eq!(cancelled.status, StatusCode::NO_CONTENT);
    let completed = app
        .request(
            Method::PATCH,
            &format!("/api/v1/store/orders/{}", order_id(&first)),
            Some(json!({ "complete": true })),
        )
        .await;
    let (key_id, _) = app.key(Role::Customer, Plan::Free, None).await;
    let revoked = app.delete(&format!("/api/v1/keys/{key_id}")).await;
    let other = app.pet("Gone", dogs, None).await;
    let gone = app.get(&format!("/api/v1/pets/{other}")).await.body;
    assert_eq!(app.delete(&format!("/api/v1/pets/{other}")).await.status, StatusCode::NO_CONTENT);

    let expected = [
        "pet.created",
        "pet.updated",
        "inventory.updated",
        "order.created",
        "inventory.updated",
        "order.created",
        "inventory.updated",
        "inventory.out_of_stock",
        "pet.status_changed",
        "inventory.updated",
        "pet.status_changed",
        "order.cancelled",
        "order.completed",
        "key.revoked",
        "pet.created",
        "pet.deleted",
    ];
    receiver.wait_for(Duration::from_secs(5), |got| got.len() >= expected.len()).await;
    let events = receiver.events(&secret);
    // Order between deliveries is not promised (a few are sent at once): compared as
    // sets.
    let mut got_types = types(&events);
    got_types.sort_unstable();
    let mut want_types = expected.to_vec();
    want_types.sort_unstable();
    assert_eq!(got_types, want_types);
    let find = |kind: &str| {
        events.iter().filter(|event| event["type"] == kind).map(|event| event["data"].clone()).collect::<Vec<_>>()
    };
    assert!(find("pet.created").contains(&created.body));
    assert_eq!(find("pet.updated"), std::slice::from_ref(&updated.body));
    assert!(find("inventory.updated").contains(&stocked.body));
    let orders = find("order.created");
    assert!(orders.len() == 2 && orders.contains(&first.body) && orders.contains(&second.body));
    assert_eq!(find("order.completed"), std::slice::from_ref(&completed.body));
    assert_eq!(find("order.cancelled")[0]["id"], second.body["id"]);
    assert_eq!(find("key.revoked"), std::slice::from_ref(&revoked.body));
    assert_eq!(find("pet.deleted"), [gone]);
    assert!(find("inventory.out_of_stock").contains(&json!({ "petId": pet, "quantity": 0, "status": "pending" })));
    for event in &events {
        let at = event["createdAt"].as_str().unwrap();
        assert!(at.ends_with('Z') && at.len() == 24, "{at}");
        assert!(event["id"].as_str().unwrap().starts_with("evt_"));
    }
    // The same events on the key's stream would carry the same ids: one outbox.
    assert_eq!(app.count("events").await, expected.len() as i64);
}

#[tokio::test]
async fn a_failed_delivery_is_retried_with_the_same_id_and_the_log_says_so() {
    let app = TestApp::with_config(allowing_loopback()).await;
    let receiver = Receiver::start(vec![500]).await;
    let (webhook, secret) = register(&app, &receiver.url, json!(["pet.created"])).await;
    app.pet("Rex", app.category("Dogs").await, None).await;
    // About 5 s later (4 to 6 with the jitter), the retry.
    let got = receiver.wait_for(Duration::from_secs(12), |got| got.len() >= 2).await;
    assert_eq!(got[0].headers["webhook-id"], got[1].headers["webhook-id"], "the same event, the same id");
    assert_eq!(types(&receiver.events(&secret)), ["pet.created", "pet.created"]);
    let log = settled_log(&app, webhook, 2).await;
    let attempts = log.as_array().unwrap();
    // Newest first: the retry that succeeded, then the failure that led to it.
    assert_eq!((attempts[0]["attempt"].clone(), attempts[0]["status"].clone()), (json!(2), json!("succeeded")));
    assert_eq!(attempts[0]["responseStatus"], 200);
    assert_eq!((attempts[1]["attempt"].clone(), attempts[1]["status"].clone()), (json!(1), json!("failed")));
    assert_eq!(attempts[1]["responseStatus"], 500);
    assert_eq!(attempts[1]["error"], "the endpoint answered 500 Internal Server Error");
    assert!(attempts[1]["nextAttemptAt"].is_string());
    assert_eq!(attempts[0]["eventId"], attempts[1]["eventId"]);
    // What was sent, as the receiver got it, and the start of each answer (2 KiB of
    // the refusal's 3 KB, cut there).
    let sent: Value = serde_json::from_slice(&got[0].body).unwrap();
    assert_eq!((&attempts[0]["payload"], &attempts[1]["payload"]), (&sent, &sent));
    assert_eq!(attempts[0]["responseBody"], "thanks");
    let refused = attempts[1]["responseBody"].as_str().unwrap();
    assert_eq!(refused, &common::receiver::refusal()[..2_048]);

    // Retried by hand: sent again, as a third attempt.
    let retried =
        app.post(&format!("/api/v1/webhooks/{webhook}/deliveries/{}/retry", attempts[1]["id"]), json!({})).await;
    assert_eq!(retried.status, StatusCode::ACCEPTED, "{}", retried.text);
    assert_eq!(retried.body["attempt"], 3);
    receiver.wait_for(Duration::from_secs(5), |got| got.len() >= 3).await;
    assert_eq!(receiver.received()[2].headers["webhook-id"], got[0].headers["webhook-id"]);
}

#[tokio::test]
async fn refused_changes_send_nothing_and_a_refused_target_is_never_registered() {
    let app = TestApp::with_config(allowing_loopback()).await;
    let receiver = Receiver::start(Vec::new()).await;
    let (_, secret) = register(&app, &receiver.url, json!(["*"])).await;
    let dogs = app.category("Dogs").await;
    let pet = app.pet("Rex", dogs, Some("pending")).await;
    receiver.wait_for(Duration::from_secs(5), |got| got.len() == 1).await;
    let (_, shopper) = app.key(Role::Customer, Plan::Pro, None).await;
    let before = app.count("events").await;
    // Refused: not available, a bad body, a bad transition, a missing pet.
    let refused = app
        .request_as(Some(&shopper), Method::POST, "/api/v1/store/orders", Some(json!({ "petId": pet, "quantity": 1 })))
        .await;
    refused.assert_error(409, "pet_not_available");
    app.post("/api/v1/pets", json!({ "name": "", "categoryId": dogs })).await.assert_error(422, "validation_failed");
    app.put(&format!("/api/v1/pets/{pet}"), json!({ "name": "Rex", "categoryId": dogs, "status": "sold" })).await;
    app.delete("/api/v1/pets/999999").await.assert_error(404, "not_found");
    assert_eq!(app.count("events").await, before + 3, "only the allowed status change: its stock, status, pet");
    receiver.wait_for(Duration::from_secs(5), |got| got.len() >= 4).await;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let mut got = types(&receiver.events(&secret)).into_iter().map(str::to_owned).collect::<Vec<_>>();
    got.sort_unstable();
    assert_eq!(got, ["inventory.updated", "pet.created", "pet.status_changed", "pet.updated"]);

    // Targets: without the operator's permission, none of the private kinds.
    let strict = TestApp::new().await;
    for url in [
        "http://127.0.0.1:9/hook",
        "http://[::1]/hook",
        "http://localhost/hook",
        "http://10.0.0.1/hook",
        "http://192.168.0.10/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1/hook",
        "http://224.0.0.1/hook",
        "ftp://example.com/hook",
    ] {
        let reply = strict.post("/api/v1/webhooks", json!({ "url": url, "events": ["*"] })).await;
        reply.assert_error(422, "invalid_webhook_url");
    }
    assert_eq!(strict.count("webhooks").await, 0);
}

#[tokio::test]
async fn endpoints_are_managed_and_a_rotation_signs_with_both_secrets_for_a_day() {
    let app = TestApp::with_config(allowing_loopback()).await;
    let receiver = Receiver::start(Vec::new()).await;
    let (id, first_secret) = register(&app, &receiver.url, json!(["order.created", "pet.created"])).await;
    assert!(first_secret.starts_with("whsec_"));
    let listed = app.get("/api/v1/webhooks").await;
    assert_eq!(listed.body[0]["events"], json!(["order.created", "pet.created"]));
    assert!(listed.body[0].get("secret").is_none(), "never again after creation");
    let one = app.get(&format!("/api/v1/webhooks/{id}")).await;
    assert_eq!((one.body["enabled"].clone(), one.body["description"].clone()), (json!(true), json!("tests")));

    // Bad bodies name their field.
    for (body, field) in [
        (json!({ "url": receiver.url, "events": [] }), "events"),
        (json!({ "url": receiver.url, "events": ["order.made"] }), "events"),
        (json!({ "url": receiver.url, "events": ["*", "pet.created"] }), "events"),
        (json!({ "url": receiver.url, "events": ["ping"] }), "events"),
        (json!({ "url": receiver.url }), "events"),
        (json!({ "events": ["*"] }), "url"),
    ] {
        let reply = app.post("/api/v1/webhooks", body.clone()).await;
        assert!(reply.assert_error(422, "validation_failed").contains(field), "{body}");
    }

    // The test ping: signed, to this endpoint only.
    let ping = app.post(&format!("/api/v1/webhooks/{id}/test"), json!({})).await;
    assert_eq!(ping.status, StatusCode::ACCEPTED, "{}", ping.text);
    assert_eq!((ping.body["eventType"].clone(), ping.body["status"].clone()), (json!("ping"), json!("pending")));
    receiver.wait_for(Duration::from_secs(5), |got| got.len() == 1).await;
    assert_eq!(types(&receiver.events(&first_secret)), ["ping"]);

    // Rotated: the new secret signs, and the old one too (the header carries both).
    let rotated = app.post(&format!("/api/v1/webhooks/{id}/rotate-secret"), json!({})).await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.text);
    let second_secret = rotated.body["secret"].as_str().unwrap().to_owned();
    assert_ne!(second_secret, first_secret);
    assert!(rotated.body["previousSecretExpiresAt"].is_string());
    app.pet("Rex", app.category("Dogs").await, None).await;
    let got = receiver.wait_for(Duration::from_secs(5), |got| got.len() == 2).await;
    assert_eq!(got[1].headers["webhook-signature"].to_str().unwrap().split(' ').count(), 2);
    for secret in [&first_secret, &second_secret] {
        let key = standardwebhooks::Webhook::new(secret).unwrap();
        key.verify(&got[1].body, &got[1].headers).expect("signed by each secret during the overlap");
    }
    let before = standardwebhooks::Webhook::new(&second_secret).unwrap();
    assert!(before.verify(&got[0].body, &got[0].headers).is_err(), "the new secret did not sign before it was made");

    // Changed: only what the body names.
    let patched = app
        .request(
            Method::PATCH,
            &format!("/api/v1/webhooks/{id}"),
            Some(json!({ "events": ["*"], "description": null })),
        )
        .await;
    assert_eq!(patched.body["events"], json!(["*"]));
    assert!(patched.body.get("description").is_none());
    assert_eq!(patched.body["url"], json!(receiver.url));
    let disabled =
        app.request(Method::PATCH, &format!("/api/v1/webhooks/{id}"), Some(json!({ "enabled": false }))).await;
    assert_eq!(disabled.body["enabled"], false);
    app.pet("Max", app.category("Cats").await, None).await;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(receiver.received().len(), 2, "a disabled endpoint is sent nothing");
    let log = app.get(&format!("/api/v1/webhooks/{id}/deliveries?limit=1")).await;
    assert_eq!(log.body.as_array().unwrap().len(), 1);
    assert!(common::next_link(&log).is_some(), "paged");

    // Customers may not; a deleted endpoint is gone with its log.
    let (_, shopper) = app.key(Role::Customer, Plan::Pro, None).await;
    app.request_as(Some(&shopper), Method::GET, "/api/v1/webhooks", None).await.assert_error(403, "forbidden");
    assert_eq!(app.delete(&format!("/api/v1/webhooks/{id}")).await.status, StatusCode::NO_CONTENT);
    app.get(&format!("/api/v1/webhooks/{id}")).await.assert_error(404, "not_found");
    assert_eq!(app.count("webhook_deliveries").await, 0);
}

/// Reads an event stream's frames until `want` events came, or `within` passed.
async fn read_stream(body: &mut Body, want: usize, within: Duration) -> (Vec<Value>, Vec<String>, String) {
    let deadline = tokio::time::Instant::now() + within;
    let mut text = String::new();
    loop {
        let events = parse_stream(&text);
        if events.0.len() >= want {
            return (events.0, events.1, text);
        }
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    text.push_str(&String::from_utf8_lossy(&data));
                }
            }
            _ => return (events.0, events.1, text),
        }
    }
}

/// The envelopes of an event stream's text, and the ids they were sent with.
fn parse_stream(text: &str) -> (Vec<Value>, Vec<String>) {
    let mut envelopes = Vec::new();
    let mut ids = Vec::new();
    for block in text.split("\n\n") {
        let data = block.lines().find_map(|line| line.strip_prefix("data: "));
        if let Some(envelope) = data.and_then(|data| serde_json::from_str(data).ok()) {
            envelopes.push(envelope);
            ids.extend(block.lines().find_map(|line| line.strip_prefix("id: ")).map(str::to_owned));
        }
    }
    (envelopes, ids)
}

/// The id a stream opens with (a frame of only `id:`): the event it starts after.
async fn opening_id(body: &mut Body) -> String {
    let mut text = String::new();
    while !text.contains("\n\n") {
        let frame = tokio::time::timeout(Duration::from_secs(5), body.frame()).await;
        let frame = frame.expect("the opening frame within 5 s").expect("a frame").unwrap();
        text.push_str(&String::from_utf8_lossy(&frame.into_data().unwrap()));
    }
    opening_of(&text)
}

/// The id in a stream's text's first frame, which must have no data.
fn opening_of(text: &str) -> String {
    let first = text.split("\n\n").next().unwrap();
    assert!(!first.contains("data:"), "the first frame has no data: {text}");
    first.strip_prefix("id: ").expect("the first frame is an id").to_owned()
}

async fn open_stream(app: &TestApp, key: &str, last_event_id: Option<&str>) -> axum::response::Response {
    open(app, "/api/v1/events", Some(key), last_event_id).await
}

/// Opens the stream at `path`, with a key or without, from one address.
async fn open(app: &TestApp, path: &str, key: Option<&str>, last_event_id: Option<&str>) -> axum::response::Response {
    use tower::ServiceExt;
    let mut request = Request::get(path);
    if let Some(key) = key {
        request = request.header("x-api-key", key);
    }
    if let Some(id) = last_event_id {
        request = request.header("last-event-id", id);
    }
    let mut request = request.body(Body::empty()).unwrap();
    request.extensions_mut().insert(axum::extract::ConnectInfo(std::net::SocketAddr::from(([127, 0, 0, 1], 40000))));
    app.router.clone().oneshot(request).await.unwrap()
}

#[tokio::test]
async fn a_keys_stream_shows_what_it_may_see_resumes_and_is_limited() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let pet = app.pet("Rex", dogs, None).await;
    app.put(&format!("/api/v1/store/inventory/{pet}"), json!({ "quantity": 10 })).await;
    let (_, shopper) = app.key(Role::Customer, Plan::Pro, None).await;
    let (_, other) = app.key(Role::Customer, Plan::Pro, None).await;

    let response = open_stream(&app, &shopper, None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert!(response.headers().contains_key("x-ratelimit-remaining"), "counted once, as a request");
    let mut body = response.into_body();
    let order = json!({ "petId": pet, "quantity": 1 });
    let mine = app.request_as(Some(&shopper), Method::POST, "/api/v1/store/orders", Some(order.clone())).await;
    app.request_as(Some(&other), Method::POST, "/api/v1/store/orders", Some(order)).await;
    // Mine: its order and the stock it took; the other's: only the stock.
    let (events, ids, text) = read_stream(&mut body, 3, Duration::from_secs(5)).await;
    assert_eq!(types(&events), ["order.created", "inventory.updated", "inventory.updated"]);
    assert!(opening_of(&text).starts_with("evt_"), "opens with where it starts: {text}");
    assert_eq!(events[0]["data"], mine.body);
    assert_eq!(ids[0], events[0]["id"].as_str().unwrap());
    drop(body);

    // Resumed after the first: the two after it, and nothing of the other's order.
    let mut resumed = open_stream(&app, &shopper, Some(&ids[0])).await.into_body();
    let (events, _, _) = read_stream(&mut resumed, 2, Duration::from_secs(5)).await;
    assert_eq!(types(&events), ["inventory.updated", "inventory.updated"]);

    // An admin's stream sees every order.
    let mut staff = open_stream(&app, &app.admin.clone(), Some(&ids[0])).await.into_body();
    let (events, _, _) = read_stream(&mut staff, 3, Duration::from_secs(5)).await;
    assert_eq!(types(&events), ["inventory.updated", "order.created", "inventory.updated"]);

    // Five open streams per key; the sixth is refused until one closes.
    let mut open = Vec::new();
    for _ in 0..4 {
        open.push(open_stream(&app, &other, None).await);
    }
    let sixth_for_shopper = open_stream(&app, &shopper, None).await; // resumed + this = 2 of shopper's
    assert_eq!(sixth_for_shopper.status(), StatusCode::OK);
    open.push(open_stream(&app, &other, None).await);
    let refused = open_stream(&app, &other, None).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let refused = refused.into_body().collect().await.unwrap().to_bytes();
    let refused: Value = serde_json::from_slice(&refused).unwrap();
    assert_eq!(refused["code"], "rate_limited");
    drop(open.pop());
    assert_eq!(open_stream(&app, &other, None).await.status(), StatusCode::OK);
    // No key: 401.
    let reply = app.request_as(None, Method::GET, "/api/v1/events", None).await;
    reply.assert_error(401, "missing_api_key");
}

/// The storefront's stream: a visitor sees the stock change, not who ordered; a browser
/// that reconnects with the last id it had (the opening one if no event came) gets what
/// it missed, while the server holds it in memory; an address has sixteen.
#[tokio::test]
async fn the_storefronts_stream_shows_the_stock_and_resumes_where_the_browser_left_off() {
    let app = TestApp::new().await;
    // A store with no event yet: the stream starts before the first, and a page that
    // reconnects so gets the first pet.
    let mut before_any = open(&app, "/live", None, None).await.into_body();
    assert_eq!(opening_id(&mut before_any).await, BEFORE_THE_FIRST);
    drop(before_any);
    let dogs = app.category("Dogs").await;
    let pet = app.pet("Rex", dogs, None).await;
    let mut first = open(&app, "/live", None, Some(BEFORE_THE_FIRST)).await.into_body();
    let (events, _, text) = read_stream(&mut first, 1, Duration::from_secs(5)).await;
    assert_eq!(types(&events), ["pet.created"], "{text}");
    assert_eq!(events[0]["data"]["id"], pet);
    drop(first);
    let (_, shopper) = app.key(Role::Customer, Plan::Pro, None).await;

    // A quiet page: its stream names where it starts, and drops before any event.
    let response = open(&app, "/live", None, None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut quiet = response.into_body();
    let opening = opening_id(&mut quiet).await;
    assert!(opening.starts_with("evt_"), "{opening}");
    drop(quiet);
    app.put(&format!("/api/v1/store/inventory/{pet}"), json!({ "quantity": 10 })).await;
    let mut body = open(&app, "/live", None, Some(&opening)).await.into_body();
    let (events, ids, text) = read_stream(&mut body, 1, Duration::from_secs(5)).await;
    assert_eq!(types(&events), ["inventory.updated"], "{text}");
    assert_eq!(events[0]["data"]["quantity"], 10);
    drop(body);

    // While the browser is away, a shopper buys two: the reconnected stream has both
    // changes of stock (and no order), in order.
    for _ in 0..2 {
        let order = json!({ "petId": pet, "quantity": 1 });
        let placed = app.request_as(Some(&shopper), Method::POST, "/api/v1/store/orders", Some(order)).await;
        assert_eq!(placed.status, StatusCode::CREATED, "{}", placed.body);
    }
    let mut resumed = open(&app, "/live", None, Some(&ids[0])).await.into_body();
    let (events, sold, text) = read_stream(&mut resumed, 2, Duration::from_secs(5)).await;
    assert_eq!(types(&events), ["inventory.updated", "inventory.updated"], "{text}");
    assert_eq!(events[0]["data"]["quantity"], 9);
    assert_eq!(events[1]["data"]["quantity"], 8);

    // A new stream starts from now (after the last sale's stock event, the latest):
    // nothing of the past is sent again.
    let mut fresh = open(&app, "/live", None, None).await.into_body();
    assert_eq!(opening_id(&mut fresh).await, sold[1]);
    let (events, _, _) = read_stream(&mut fresh, 1, Duration::from_millis(500)).await;
    assert!(events.is_empty(), "{events:?}");

    // Sixteen streams an address (two are open): the seventeenth waits until one closes.
    let mut more = Vec::new();
    for _ in 0..14 {
        let response = open(&app, "/live", None, None).await;
        assert_eq!(response.status(), StatusCode::OK);
        more.push(response);
    }
    assert_eq!(open(&app, "/live", None, None).await.status(), StatusCode::TOO_MANY_REQUESTS);
    drop(fresh);
    assert_eq!(open(&app, "/live", None, None).await.status(), StatusCode::OK);
    drop((resumed, more));

    // After a restart the server holds no event in memory: the storefront's stream
    // resumes from now (no replay read from the database for anyone who asks), while
    // a key's stream, which counts against the key, still replays the two sales.
    let (dir, now) = (app.dir, app.now.clone());
    app.db.close().await;
    let app = TestApp::open(dir, Config::default(), now).await;
    let mut live = open(&app, "/live", None, Some(&ids[0])).await.into_body();
    assert_eq!(opening_id(&mut live).await, sold[1], "from now, not from the id sent");
    app.put(&format!("/api/v1/store/inventory/{pet}"), json!({ "quantity": 5 })).await;
    let (events, _, text) = read_stream(&mut live, 1, Duration::from_secs(5)).await;
    assert_eq!(events[0]["data"]["quantity"], 5, "{text}");
    let mut replayed = open_stream(&app, &shopper, Some(&ids[0])).await.into_body();
    let (events, _, text) = read_stream(&mut replayed, 5, Duration::from_secs(5)).await;
    let stock: Vec<_> = events
        .iter()
        .filter(|e| e["type"] == "inventory.updated")
        .filter_map(|e| e["data"]["quantity"].as_i64())
        .collect();
    assert_eq!(stock, [9, 8, 5], "{text}");
}

/// A page of the staff console, as this session sees it.
async fn console_page(app: &TestApp, cookie: &str, path: &str) -> String {
    let request = Request::get(path).header("cookie", cookie).body(Body::empty()).unwrap();
    let page = app.send(request).await;
    assert_eq!(page.status, StatusCode::OK, "{path}");
    page.text
}

/// The console's webhook pages call the same service as `/webhooks`: they register an
/// endpoint (a secret once; "All events" wins over the others ticked), send a test
/// ping the receiver can verify, disable and enable it, send a delivery again, edit,
/// rotate and delete it, and show the endpoints and each one's log.
#[tokio::test]
async fn the_console_manages_endpoints_and_shows_their_deliveries() {
    let app = TestApp::with_config(allowing_loopback()).await;
    let receiver = Receiver::start(Vec::new()).await;
    let (_, staff) = app.session(Role::Admin).await;
    let call = |endpoint: &'static str, form: String| {
        let staff = staff.clone();
        let app = &app;
        async move { app.call_fn(Some(&staff), endpoint, &form).await }
    };
    let act = |id: i64, action: &str| call("staff_webhook_action", format!("id={id}&action={action}"));
    let url = serde_urlencoded::to_string([("", &receiver.url)]).unwrap();
    let url = url.trim_start_matches('=');

    call("staff_save_webhook", format!("url={url}")).await.assert_field_error("events");
    call("staff_save_webhook", "url=ftp%3A%2F%2Fexample.com&events%5B%5D=*".to_owned())
        .await
        .assert_error(422, "invalid_webhook_url");
    let all = call("staff_save_webhook", format!("url={url}&events%5B%5D=*&events%5B%5D=pet.created")).await;
    assert_eq!(all.status, StatusCode::OK, "{}", all.text);
    assert_eq!(all.headers["cache-control"], "no-store", "a secret is kept by no cache");
    let first = all.body["id"].as_i64().unwrap();
    assert_eq!(app.get(&format!("/api/v1/webhooks/{first}")).await.body["events"], json!(["*"]));
    let form = format!("url={url}&events%5B%5D=order.created&events%5B%5D=pet.created&description=Shop");
    let created = call("staff_save_webhook", form).await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.text);
    let (id, secret) = (created.body["id"].as_i64().unwrap(), created.body["secret"].as_str().unwrap().to_owned());
    assert!(secret.starts_with("whsec_"));
    assert_eq!(created.body["text"], format!("Registered endpoint #{id} ({}).", receiver.url));
    let shown = app.get(&format!("/api/v1/webhooks/{id}")).await.body;
    assert_eq!((&shown["events"], &shown["description"]), (&json!(["order.created", "pet.created"]), &json!("Shop")));
    let list = call("staff_webhooks", String::new()).await;
    assert_eq!(list.body.as_array().unwrap().len(), 2);
    assert!(!list.body.to_string().contains("whsec_"), "a list shows no secret");

    let ping = act(id, "test").await;
    assert_eq!(ping.status, StatusCode::OK, "{}", ping.text);
    receiver.wait_for(Duration::from_secs(5), |got| got.len() == 1).await;
    let events = receiver.events(&secret);
    assert_eq!((events[0]["type"].as_str(), &events[0]["data"]["webhookId"]), (Some("ping"), &json!(id)));
    assert!(ping.body["text"].as_str().unwrap().contains(events[0]["id"].as_str().unwrap()), "{}", ping.text);

    let page = console_page(&app, &staff, "/admin/webhooks").await;
    assert!(page.contains(&receiver.url) && page.contains("Shop") && page.contains("order.created, pet.created"));
    assert!(page.contains("All events") && page.contains("Enabled"));
    assert!(!page.contains(&secret), "the secret is not on the page after the flash");
    // The log: the ping, once delivered.
    let log = poll_page(&app, &staff, &format!("/admin/webhooks/{id}"), "Delivered").await;
    assert!(log.contains("ping") && log.contains("HTTP 200") && log.contains(events[0]["id"].as_str().unwrap()));
    // Folded under the attempt: the body sent (the webhook's id in its data) and the answer's.
    let folded = log.split("What was sent and answered").nth(1).expect("an attempt's details");
    assert!(
        folded.contains(&format!("&quot;webhookId&quot;: {id}")) || folded.contains(&format!("\"webhookId\": {id}")),
        "{folded}"
    );
    assert!(folded.contains("thanks"), "{folded}");
    let deliveries = app.get(&format!("/api/v1/webhooks/{id}/deliveries")).await.body;
    let delivery = deliveries[0]["id"].as_i64().unwrap();

    assert_eq!(act(id, "disable").await.body["text"], format!("Disabled endpoint #{id}."));
    assert!(console_page(&app, &staff, "/admin/webhooks").await.contains(">Disabled<"));
    let retry = format!("id={id}&action=retry&delivery={delivery}");
    call("staff_webhook_action", retry.clone()).await.assert_error(409, "invalid_transition");
    act(id, "sleep").await.assert_field_error("action");
    act(id, "retry").await.assert_field_error("delivery");
    assert_eq!(act(id, "enable").await.body["text"], format!("Enabled endpoint #{id}."));
    let again = call("staff_webhook_action", retry).await;
    assert!(again.body["text"].as_str().unwrap().ends_with("again (attempt 2)."), "{}", again.text);
    let got = receiver.wait_for(Duration::from_secs(5), |got| got.len() == 2).await;
    assert_eq!(got[0].headers["webhook-id"], got[1].headers["webhook-id"], "sent again with the same id");

    let edit = format!("id={id}&url={url}&events%5B%5D=order.completed&description=");
    assert_eq!(call("staff_save_webhook", edit).await.body["text"], "Saved.");
    let shown = app.get(&format!("/api/v1/webhooks/{id}")).await.body;
    assert_eq!(shown["events"], json!(["order.completed"]));
    assert_eq!(shown.get("description"), None, "an empty description removes it");
    let rotated = act(id, "rotate").await;
    let new_secret = rotated.body["secret"].as_str().unwrap();
    assert!(new_secret.starts_with("whsec_") && new_secret != secret);
    assert_eq!(rotated.headers["cache-control"], "no-store");
    assert_eq!(act(id, "delete").await.body["text"], format!("Deleted endpoint #{id}."));
    assert_eq!(app.get(&format!("/api/v1/webhooks/{id}")).await.status, StatusCode::NOT_FOUND);
    act(id, "test").await.assert_error(404, "not_found");
}

/// The endpoint's delivery log once it holds `attempts` attempts and none is pending:
/// the receiver has a request a moment before the server writes down its answer.
async fn settled_log(app: &TestApp, webhook: i64, attempts: usize) -> Value {
    common::eventually(async || {
        let log = app.get(&format!("/api/v1/webhooks/{webhook}/deliveries")).await.body;
        let rows = log.as_array().unwrap();
        let settled = rows.len() >= attempts && rows.iter().all(|row| row["status"] != "pending");
        if settled { Ok(log) } else { Err(format!("the delivery log {log}")) }
    })
    .await
}

/// Shows the console page `path` again until it contains `text` (`common::eventually`).
async fn poll_page(app: &TestApp, cookie: &str, path: &str, text: &str) -> String {
    common::eventually(async || {
        let page = console_page(app, cookie, path).await;
        if page.contains(text) { Ok(page) } else { Err(format!("{path} showing {text:?}")) }
    })
    .await
}

/// What a page whose stream missed events reads again: the stock of the pets it shows,
/// for anyone (no key), a deleted pet left out; a list that is not ids, or too long,
/// is refused in the Error shape.
#[tokio::test]
async fn a_page_reads_the_stock_it_shows_again() {
    let app = TestApp::new().await;
    let fish = app.category("Fish").await;
    let (nemo, dory) = (app.pet("Nemo", fish, None).await, app.pet("Dory", fish, None).await);
    app.put(&format!("/api/v1/store/inventory/{nemo}"), json!({ "quantity": 4 })).await;
    let gone = app.pet("Gone", fish, None).await;
    assert_eq!(app.delete(&format!("/api/v1/pets/{gone}")).await.status, StatusCode::NO_CONTENT);

    let read = app.call_fn(None, "stock_now", &format!("pets={dory}%2C{nemo}%2C{gone}%2C{nemo}")).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    let stock: Vec<(i64, i64, &str)> = read
        .body
        .as_array()
        .expect("a list")
        .iter()
        .map(|item| {
            (item["petId"].as_i64().unwrap(), item["quantity"].as_i64().unwrap(), item["status"].as_str().unwrap())
        })
        .collect();
    assert_eq!(stock, vec![(dory, 1, "available"), (nemo, 4, "available")]);

    let too_many = (1..=101).map(|id| id.to_string()).collect::<Vec<_>>().join("%2C");
    for form in [format!("pets={too_many}"), "pets=1%2Cx".to_owned(), "pets=-3".to_owned()] {
        app.call_fn(None, "stock_now", &form).await.assert_field_error("pets");
    }
}
