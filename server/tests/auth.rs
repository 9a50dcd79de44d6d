//! Keys, roles, rate limits and bans, as contract.md's "Authentication" and "Limits".

mod common;

use std::sync::Arc;

use app::model::{Limits, Plan, Role};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use common::{T0, TestApp};
use serde_json::json;
use server::Config;

const FREE_PET_LIST: &str = "/api/v1/pets";

#[tokio::test]
async fn missing_invalid_and_wrong_role_keys() {
    let app = TestApp::new().await;
    let reply = app.request_as(None, Method::GET, FREE_PET_LIST, None).await;
    reply.assert_error(401, "missing_api_key");
    assert_eq!(reply.header("www-authenticate"), Some("ApiKey"));
    let reply = app.request_as(Some("psk_0000000000_nope"), Method::GET, FREE_PET_LIST, None).await;
    reply.assert_error(401, "invalid_api_key");
    app.request_as(Some("not-even-shaped"), Method::GET, FREE_PET_LIST, None)
        .await
        .assert_error(401, "invalid_api_key");

    let (_, customer) = app.key(Role::Customer, Plan::Pro, None).await;
    assert_eq!(app.request_as(Some(&customer), Method::GET, FREE_PET_LIST, None).await.status, StatusCode::OK);
    let reply =
        app.request_as(Some(&customer), Method::POST, "/api/v1/categories", Some(json!({ "name": "Dogs" }))).await;
    reply.assert_error(403, "forbidden");
    app.request_as(Some(&customer), Method::GET, "/api/v1/keys", None).await.assert_error(403, "forbidden");
    assert_eq!(app.count("categories").await, 0);

    // Authorization: Bearer works as well as X-API-Key.
    let request =
        Request::get(FREE_PET_LIST).header("authorization", format!("Bearer {customer}")).body(Body::empty()).unwrap();
    assert_eq!(app.send(request).await.status, StatusCode::OK);
    // The document needs no key.
    assert_eq!(app.request_as(None, Method::GET, "/api/v1/openapi.json", None).await.status, StatusCode::OK);
}

#[tokio::test]
async fn sign_up_gives_a_working_free_customer_key_once_per_request() {
    let app = TestApp::new().await;
    let reply = app.request_as(None, Method::POST, "/api/v1/keys", None).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    assert_eq!(reply.header("x-api-stability"), Some("beta"));
    let key = reply.body["key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("psk_") && key.len() >= 30, "{key}");
    assert_eq!(reply.body["role"], "customer");
    assert_eq!(reply.body["plan"], "free");
    assert_eq!(reply.body["limits"], json!({ "perMinute": 60, "perDay": 1000 }));
    assert_eq!(reply.body["revokedAt"], json!(null));
    let first = app.request_as(Some(&key), Method::GET, FREE_PET_LIST, None).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.header("x-ratelimit-remaining"), Some("59"), "a fresh Free key's first response says 59");

    // The secret is not stored: only its hash.
    let id = reply.body["id"].as_i64();
    let stored: Vec<u8> =
        app::on_pool!(app.db, |pool| sqlx::query_scalar("SELECT key_hash FROM api_keys WHERE id = $1")
            .bind(id)
            .fetch_one(pool)
            .await)
        .unwrap();
    assert_eq!(stored.len(), 32);
    assert!(!stored.windows(8).any(|w| key.as_bytes().windows(8).any(|k| k == w)));

    // With a name; unknown fields and wrong types are 422.
    let reply = app.request_as(None, Method::POST, "/api/v1/keys", Some(json!({ "name": "my app" }))).await;
    assert_eq!(reply.body["name"], "my app");
    app.request_as(None, Method::POST, "/api/v1/keys", Some(json!({ "role": "admin" })))
        .await
        .assert_error(422, "validation_failed");
    // Sign-ups are limited per client IP: 5 a minute (the 422 above did not count), and
    // their answers' rate-limit headers say that limit, the refusal's too.
    for left in ["2", "1", "0"] {
        let reply = app.request_as(None, Method::POST, "/api/v1/keys", None).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
        assert_eq!((reply.header("x-ratelimit-limit"), reply.header("x-ratelimit-remaining")), (Some("5"), Some(left)));
    }
    let reply = app.request_as(None, Method::POST, "/api/v1/keys", None).await;
    reply.assert_error(429, "rate_limited");
    assert_eq!(reply.header("retry-after"), Some("60"));
    assert_eq!((reply.header("x-ratelimit-limit"), reply.header("x-ratelimit-remaining")), (Some("5"), Some("0")));
    assert_eq!(reply.header("x-api-stability"), Some("beta"));
    assert_eq!(app.count("api_keys").await, 1 + 5);
    // Every answer of the beta operation says so, a rejected key's 401 included.
    let reply = app.request_as(Some("psk_0000000000_nope"), Method::POST, "/api/v1/keys", None).await;
    reply.assert_error(401, "invalid_api_key");
    assert_eq!(reply.header("x-api-stability"), Some("beta"));
    assert!(app.get(FREE_PET_LIST).await.header("x-api-stability").is_none());
}

#[tokio::test]
async fn admins_create_list_and_revoke_keys_and_revocation_is_immediate() {
    let app = TestApp::new().await;
    let reply = app
        .post("/api/v1/keys", json!({ "name": "partner", "role": "customer", "plan": "enterprise", "limits": { "perMinute": 5000, "perDay": 900000 } }))
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    assert_eq!(reply.body["limits"], json!({ "perMinute": 5000, "perDay": 900000 }));
    let (id, key) = (reply.body["id"].as_i64().unwrap(), reply.body["key"].as_str().unwrap().to_owned());
    let ok = app.request_as(Some(&key), Method::GET, FREE_PET_LIST, None).await;
    assert_eq!(ok.header("x-ratelimit-limit"), Some("5000"));

    app.post("/api/v1/keys", json!({ "name": "x", "role": "customer", "plan": "enterprise" }))
        .await
        .assert_error(422, "validation_failed");
    app.post(
        "/api/v1/keys",
        json!({ "name": "x", "role": "customer", "plan": "pro", "limits": { "perMinute": 1, "perDay": 2 } }),
    )
    .await
    .assert_error(422, "validation_failed");
    app.post("/api/v1/keys", json!({ "name": "x", "role": "root", "plan": "pro" }))
        .await
        .assert_error(422, "validation_failed");

    let list = app.get("/api/v1/keys").await;
    assert_eq!(list.status, StatusCode::OK);
    let listed = list.body.as_array().unwrap();
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|k| k.get("key").is_none()), "secrets are never listed");

    let revoked = app.delete(&format!("/api/v1/keys/{id}")).await;
    assert_eq!(revoked.status, StatusCode::OK);
    assert!(revoked.body["revokedAt"].is_string());
    app.request_as(Some(&key), Method::GET, FREE_PET_LIST, None).await.assert_error(401, "invalid_api_key");
    app.delete("/api/v1/keys/999").await.assert_error(404, "not_found");
}

#[tokio::test]
async fn the_last_active_admin_key_cannot_be_revoked() {
    let app = TestApp::new().await;
    let admin_id: i64 =
        app::on_pool!(app.db, |pool| sqlx::query_scalar("SELECT id FROM api_keys WHERE name = 'test admin'")
            .fetch_one(pool)
            .await)
        .unwrap();
    // The only admin key: refused, through the API and the console, and it still works.
    let message = app.delete(&format!("/api/v1/keys/{admin_id}")).await.assert_error(409, "last_admin_key").to_owned();
    assert!(message.contains("last active admin key"), "{message}");
    let token = app::services::sessions::start(&app.db, T0, admin_id, app::services::sessions::Opened::SignUp, None)
        .await
        .unwrap();
    let cookie = format!("{}={token}", app.state.session_cookie.name());
    app.call_fn(Some(&cookie), "staff_revoke_key", &format!("id={admin_id}")).await.assert_error(409, "last_admin_key");
    assert_eq!(app.get("/api/v1/keys").await.status, StatusCode::OK);

    // With a second admin key either may go, but not both.
    let (second_id, second) = app.key(Role::Admin, Plan::Pro, None).await;
    let revoked = app.request_as(Some(&second), Method::DELETE, &format!("/api/v1/keys/{admin_id}"), None).await;
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.text);
    app.request_as(Some(&second), Method::DELETE, &format!("/api/v1/keys/{second_id}"), None)
        .await
        .assert_error(409, "last_admin_key");
    // Revoking an already revoked key stays a no-op, whatever the count.
    let again = app.request_as(Some(&second), Method::DELETE, &format!("/api/v1/keys/{admin_id}"), None).await;
    assert_eq!(again.status, StatusCode::OK);
}

#[tokio::test]
async fn headers_count_down_refusals_do_not_count_and_the_window_rolls_over() {
    let app = TestApp::new().await;
    let (_, key) = app.key(Role::Customer, Plan::Free, None).await;
    let get = |path: &'static str| {
        let (app, key) = (&app, key.clone());
        async move { app.request_as(Some(&key), Method::GET, path, None).await }
    };
    let first = get(FREE_PET_LIST).await;
    assert_eq!(first.header("x-ratelimit-limit"), Some("60"));
    assert_eq!(first.header("x-ratelimit-remaining"), Some("59"));
    assert_eq!(first.header("x-ratelimit-reset"), Some((T0 + 60).to_string().as_str()));
    // Errors count and carry the headers too.
    let missing = get("/api/v1/pets/424242").await;
    missing.assert_error(404, "not_found");
    assert_eq!(missing.header("x-ratelimit-remaining"), Some("58"));
    for _ in 0..58 {
        assert_eq!(get(FREE_PET_LIST).await.status, StatusCode::OK);
    }
    app.set_time(T0 + 20);
    let refused = get(FREE_PET_LIST).await;
    refused.assert_error(429, "rate_limited");
    assert_eq!(refused.header("retry-after"), Some("40"));
    assert_eq!(refused.header("x-ratelimit-remaining"), Some("0"));
    assert_eq!(refused.header("x-ratelimit-reset"), Some((T0 + 60).to_string().as_str()));

    app.set_time(T0 + 60);
    let next = get(FREE_PET_LIST).await;
    assert_eq!(next.status, StatusCode::OK);
    assert_eq!(next.header("x-ratelimit-remaining"), Some("59"));
    assert_eq!(next.header("x-ratelimit-reset"), Some((T0 + 120).to_string().as_str()));
}

#[tokio::test]
async fn the_day_window_binds_when_it_has_less_left() {
    let app = TestApp::new().await;
    let (_, key) = app.key(Role::Customer, Plan::Enterprise, Some(Limits { per_minute: 100, per_day: 3 })).await;
    let day_end = T0 - T0.rem_euclid(86_400) + 86_400;
    for left in [2, 1, 0] {
        let reply = app.request_as(Some(&key), Method::GET, FREE_PET_LIST, None).await;
        assert_eq!(reply.header("x-ratelimit-limit"), Some("3"));
        assert_eq!(reply.header("x-ratelimit-remaining"), Some(left.to_string().as_str()));
        assert_eq!(reply.header("x-ratelimit-reset"), Some(day_end.to_string().as_str()));
    }
    let refused = app.request_as(Some(&key), Method::GET, FREE_PET_LIST, None).await;
    refused.assert_error(429, "rate_limited");
    assert_eq!(refused.header("retry-after"), Some((day_end - T0).to_string().as_str()));
}

#[tokio::test]
async fn hammering_after_ten_refusals_bans_for_fifteen_minutes() {
    let app = TestApp::new().await;
    let (_, key) = app.key(Role::Customer, Plan::Enterprise, Some(Limits { per_minute: 2, per_day: 1000 })).await;
    let get = || app.request_as(Some(&key), Method::GET, FREE_PET_LIST, None);
    for _ in 0..2 {
        assert_eq!(get().await.status, StatusCode::OK);
    }
    for _ in 0..10 {
        get().await.assert_error(429, "rate_limited");
    }
    let banned = get().await;
    banned.assert_error(429, "temporarily_banned");
    assert_eq!(banned.header("retry-after"), Some("900"));
    // The ban outlives the minute.
    app.set_time(T0 + 300);
    let still = get().await;
    still.assert_error(429, "temporarily_banned");
    assert_eq!(still.header("retry-after"), Some("600"));
    app.set_time(T0 + 900);
    assert_eq!(get().await.status, StatusCode::OK);
}

#[tokio::test]
async fn ban_settings_are_configurable() {
    let config = Config { ban_after: 2, ban_minutes: 2, ..Config::default() };
    let app = TestApp::with_config(config).await;
    let (_, key) = app.key(Role::Customer, Plan::Enterprise, Some(Limits { per_minute: 1, per_day: 1000 })).await;
    let get = || app.request_as(Some(&key), Method::GET, FREE_PET_LIST, None);
    get().await;
    get().await.assert_error(429, "rate_limited");
    get().await.assert_error(429, "rate_limited");
    let banned = get().await;
    banned.assert_error(429, "temporarily_banned");
    assert_eq!(banned.header("retry-after"), Some("120"));
}

#[tokio::test]
async fn usage_and_bans_survive_a_restart() {
    let app = TestApp::new().await;
    let (_, used) = app.key(Role::Customer, Plan::Free, None).await;
    let (_, hammered) = app.key(Role::Customer, Plan::Enterprise, Some(Limits { per_minute: 1, per_day: 1000 })).await;
    for _ in 0..5 {
        app.request_as(Some(&used), Method::GET, FREE_PET_LIST, None).await;
    }
    for _ in 0..12 {
        app.request_as(Some(&hammered), Method::GET, FREE_PET_LIST, None).await;
    }
    app.state.access.limiter.flush(&app.db).await.unwrap();
    let (dir, now) = (app.dir, app.now.clone());
    app.db.close().await;

    let restarted = TestApp::open(dir, Config::default(), now).await;
    let reply = restarted.request_as(Some(&used), Method::GET, FREE_PET_LIST, None).await;
    assert_eq!(reply.header("x-ratelimit-remaining"), Some("54"));
    restarted.set_time(T0 + 120);
    let reply = restarted.request_as(Some(&used), Method::GET, FREE_PET_LIST, None).await;
    assert_eq!(reply.header("x-ratelimit-remaining"), Some("59"), "a new minute");
    restarted
        .request_as(Some(&hammered), Method::GET, FREE_PET_LIST, None)
        .await
        .assert_error(429, "temporarily_banned");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn exactly_sixty_of_two_hundred_concurrent_requests_succeed() {
    let app = Arc::new(TestApp::new().await);
    let (_, key) = app.key(Role::Customer, Plan::Free, None).await;
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let (app, key) = (app.clone(), key.clone());
            tokio::spawn(
                async move { app.request_as(Some(&key), Method::GET, "/api/v1/pets?limit=1", None).await.status },
            )
        })
        .collect();
    let mut ok = 0;
    let mut limited = 0;
    for task in tasks {
        match task.await.unwrap().as_u16() {
            200 => ok += 1,
            429 => limited += 1,
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!((ok, limited), (60, 140));
}

#[tokio::test]
async fn cors_allows_any_origin_and_exposes_every_header() {
    let app = TestApp::new().await;
    let preflight = Request::builder()
        .method(Method::OPTIONS)
        .uri("/api/v1/pets")
        .header("origin", "https://partner.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "x-api-key, content-type, idempotency-key")
        .body(Body::empty())
        .unwrap();
    let reply = app.send(preflight).await;
    assert!(reply.status.is_success());
    assert_eq!(reply.header("access-control-allow-origin"), Some("*"));
    let allowed = reply.header("access-control-allow-headers").unwrap_or_default().to_ascii_lowercase();
    assert!(allowed.contains("x-api-key") && allowed.contains("idempotency-key"), "{allowed}");
    assert_eq!(reply.header("access-control-allow-methods"), Some("*"));
    assert!(reply.header("access-control-allow-credentials").is_none());

    let request = Request::get("/api/v1/pets")
        .header("origin", "https://partner.example")
        .header("x-api-key", &app.admin)
        .body(Body::empty())
        .unwrap();
    let reply = app.send(request).await;
    // Every header (the rate-limit ones, Retry-After, Deprecation, Sunset, Link, ...).
    assert_eq!(reply.header("access-control-expose-headers"), Some("*"));
    assert_eq!(reply.header("access-control-allow-origin"), Some("*"));
    assert_eq!(reply.header("vary"), Some("origin"));

    // Without an `Origin` (a server, a script): no CORS headers, and the answer says it
    // depends on it, whoever gives it (the handler, the guard).
    let plain = app.get("/api/v1/pets").await;
    assert_eq!(plain.status, StatusCode::OK);
    assert!(
        plain.header("access-control-allow-origin").is_none()
            && plain.header("access-control-expose-headers").is_none()
    );
    assert_eq!(plain.header("vary"), Some("origin"));
    let refused = app.send(Request::get("/api/v1/pets").body(Body::empty()).unwrap()).await;
    refused.assert_error(401, "missing_api_key");
    assert_eq!(refused.header("vary"), Some("origin"));
    // An OPTIONS without an `Origin` is no preflight: the API has no such method.
    let options = app.request(Method::OPTIONS, "/api/v1/pets", None).await;
    options.assert_error(405, "method_not_allowed");
    assert!(options.header("access-control-allow-methods").is_none());
}

/// The guard's own refusal of a beta operation says it is beta too: every answer of
/// `POST /keys` carries `X-API-Stability`, whoever produced it.
#[tokio::test]
async fn the_guards_429_on_a_beta_operation_carries_its_stability() {
    let app = TestApp::new().await;
    // Requests without a key count against the IP at the Free plan's 60 a minute.
    for _ in 0..60 {
        app.request_as(None, Method::GET, "/api/v1/pets", None).await.assert_error(401, "missing_api_key");
    }
    let refused = app.request_as(None, Method::POST, "/api/v1/keys", None).await;
    refused.assert_error(429, "rate_limited");
    assert_eq!(refused.header("x-api-stability"), Some("beta"));
    assert_eq!(app.count("api_keys").await, 1, "only the test's admin key");
}
