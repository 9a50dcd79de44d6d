//! The staff console's server functions, and the API's same-origin session (the docs
//! page's try-it panel), through the real router.

mod common;

use app::model::{Plan, Role};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use common::TestApp;

async fn session(app: &TestApp, role: Role) -> (i64, String) {
    app.session(role).await
}

const TABLES: [&str; 7] = ["categories", "pets", "inventory", "api_keys", "orders", "webhooks", "webhook_deliveries"];

#[tokio::test]
async fn console_functions_refuse_everyone_but_staff_and_change_nothing() {
    let app = TestApp::with_config(server::Config { webhooks_allow_private: true, ..server::Config::default() }).await;
    // For an event nothing here causes: the deliverer would add log rows in the background.
    let hook = serde_json::json!({ "url": "http://127.0.0.1:9/hook", "events": ["order.completed"] });
    assert_eq!(app.post("/api/v1/webhooks", hook).await.status, StatusCode::CREATED);
    let category = app.category("Dogs").await;
    let pet = app.pet("Rex", category, None).await;
    let (_, customer) = session(&app, Role::Customer).await;
    let calls = [
        ("staff_dashboard", String::new()),
        ("staff_save_pet", format!("name=Max&category_id={category}")),
        ("staff_delete_pet", format!("id={pet}")),
        ("staff_save_category", "name=Cats".to_owned()),
        ("staff_delete_category", format!("id={category}")),
        ("staff_inventory", String::new()),
        ("staff_set_stock", format!("pet_id={pet}&quantity=9")),
        ("admin_keys", String::new()),
        ("staff_create_key", "name=x&role=admin&plan=pro".to_owned()),
        ("staff_revoke_key", "id=1".to_owned()),
        ("staff_webhooks", String::new()),
        ("staff_webhook_log", "id=1".to_owned()),
        ("staff_save_webhook", "url=https%3A%2F%2Fexample.com%2Fh&events%5B%5D=*".to_owned()),
        ("staff_save_webhook", "id=1&url=https%3A%2F%2Fexample.com%2Fh&events%5B%5D=*".to_owned()),
        ("staff_webhook_action", "id=1&action=disable".to_owned()),
        ("staff_webhook_action", "id=1&action=test".to_owned()),
        ("staff_webhook_action", "id=1&action=rotate".to_owned()),
        ("staff_webhook_action", "id=1&action=delete".to_owned()),
        ("staff_webhook_action", "id=1&action=retry&delivery=1".to_owned()),
    ];
    let mut before = Vec::new();
    for table in TABLES {
        before.push(app.count(table).await);
    }
    for (endpoint, form) in &calls {
        app.call_fn(None, endpoint, form).await.assert_error(401, "missing_api_key");
        app.call_fn(Some(&customer), endpoint, form).await.assert_error(403, "forbidden");
        app.call_fn(Some("petstore_session=forged"), endpoint, form).await.assert_error(401, "missing_api_key");
    }
    for (table, count) in TABLES.iter().zip(before) {
        assert_eq!(app.count(table).await, count, "{table} unchanged");
    }
    assert_eq!(app.stock(pet).await, (1, "available".to_owned()));
}

#[tokio::test]
async fn staff_functions_follow_the_api_rules_and_name_the_bad_field() {
    let app = TestApp::new().await;
    let (_, staff) = session(&app, Role::Admin).await;
    let staff = Some(staff.as_str());

    let created = app.call_fn(staff, "staff_save_category", "name=Ferrets&description=").await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.text);
    let ferrets = created.body["id"].as_i64().unwrap();
    assert_eq!(created.body.get("description"), None, "an empty description is none");
    app.call_fn(staff, "staff_save_category", "name=ferrets").await.assert_error(409, "duplicate_name");

    let message = app
        .call_fn(staff, "staff_save_pet", "name=Noodle&category_id=")
        .await
        .assert_field_error("categoryId")
        .to_owned();
    assert!(message.starts_with("categoryId:"), "{message}");
    let message = app
        .call_fn(staff, "staff_save_pet", &format!("name=%20&category_id={ferrets}"))
        .await
        .assert_field_error("name")
        .to_owned();
    assert!(message.starts_with("name:"), "{message}");
    app.call_fn(staff, "staff_save_pet", &format!("name=Noodle&category_id={ferrets}&status=lost"))
        .await
        .assert_field_error("status");
    let pet = app.call_fn(staff, "staff_save_pet", &format!("name=Noodle&category_id={ferrets}")).await;
    assert_eq!(pet.status, StatusCode::OK, "{}", pet.text);
    let pet_id = pet.body["id"].as_i64().unwrap();

    let message = app
        .call_fn(staff, "staff_set_stock", &format!("pet_id={pet_id}&quantity=lots"))
        .await
        .assert_field_error("quantity")
        .to_owned();
    assert!(message.starts_with("quantity:"), "{message}");
    let set = app.call_fn(staff, "staff_set_stock", &format!("pet_id={pet_id}&quantity=0")).await;
    assert_eq!((set.body["quantity"].as_i64(), set.body["status"].as_str()), (Some(0), Some("sold")), "{}", set.text);

    // The category has a pet: it cannot go.
    app.call_fn(staff, "staff_delete_category", &format!("id={ferrets}")).await.assert_error(409, "category_in_use");

    let message = app
        .call_fn(staff, "staff_create_key", "name=partner&role=customer&plan=enterprise")
        .await
        .assert_field_error("perMinute")
        .to_owned();
    assert!(message.starts_with("perMinute:"), "{message}");
    let key = app
        .call_fn(staff, "staff_create_key", "name=partner&role=customer&plan=enterprise&per_minute=500&per_day=50000")
        .await;
    assert_eq!(key.body["limits"]["perDay"], 50000, "{}", key.text);
    let secret = key.body["key"].as_str().unwrap().to_owned();
    app.request_as(Some(&secret), Method::GET, "/api/v1/pets", None).await;

    let usage = app.call_fn(staff, "admin_keys", "").await;
    let row = usage.body.as_array().unwrap().iter().find(|row| row["key"]["name"] == "partner").cloned().unwrap();
    assert_eq!(row["used_today"], 1, "{row}");

    let revoked = app.call_fn(staff, "staff_revoke_key", &format!("id={}", key.body["id"])).await;
    assert!(revoked.body["revokedAt"].is_string(), "{}", revoked.text);
    app.request_as(Some(&secret), Method::GET, "/api/v1/pets", None).await.assert_error(401, "invalid_api_key");
}

#[tokio::test]
async fn the_api_takes_a_session_only_from_the_sites_own_pages() {
    let app = TestApp::new().await;
    let (_, cookie) = session(&app, Role::Customer).await;
    let get = |cookie: &str, site: Option<&str>, key: Option<&str>| {
        let mut request = Request::get("/api/v1/pets").header(header::COOKIE, cookie);
        if let Some(site) = site {
            request = request.header("sec-fetch-site", site);
        }
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        request.body(Body::empty()).unwrap()
    };
    app.send(get(&cookie, None, None)).await.assert_error(401, "missing_api_key");
    app.send(get(&cookie, Some("cross-site"), None)).await.assert_error(401, "missing_api_key");
    app.send(get(&cookie, Some("same-site"), None)).await.assert_error(401, "missing_api_key");
    let ok = app.send(get(&cookie, Some("same-origin"), None)).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.text);
    assert_eq!(ok.header("x-ratelimit-limit"), Some("300"), "the session's key's plan (Pro)");
    // A key, when sent, is the credential, even beside a session.
    app.send(get(&cookie, Some("same-origin"), Some("psk_0000000000_nope"))).await.assert_error(401, "invalid_api_key");
    // A customer's session may not do an admin's work.
    let write = Request::post("/api/v1/categories")
        .header(header::COOKIE, &cookie)
        .header("sec-fetch-site", "same-origin")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(r#"{"name":"Cats"}"#))
        .unwrap();
    app.send(write).await.assert_error(403, "forbidden");
}

#[tokio::test]
async fn the_dashboard_counts_api_requests_per_key_and_draws_stock_and_orders() {
    let app = TestApp::new().await;
    let category = app.category("Dogs").await;
    let pet = app.pet("Rex", category, None).await;
    app.put(&format!("/api/v1/store/inventory/{pet}"), serde_json::json!({"quantity": 5})).await;
    let (busy_id, busy) = app.key(Role::Customer, Plan::Pro, None).await;
    for _ in 0..4 {
        app.request_as(Some(&busy), Method::GET, "/api/v1/pets", None).await;
    }
    let placed = app
        .request_as(
            Some(&busy),
            Method::POST,
            "/api/v1/store/orders",
            Some(serde_json::json!({"petId": pet, "quantity": 2})),
        )
        .await;
    assert_eq!(placed.status, StatusCode::CREATED, "{}", placed.text);
    app.request_as(None, Method::GET, "/api/v1/pets", None).await;

    let (_, staff) = session(&app, Role::Admin).await;
    let dashboard = app.call_fn(Some(&staff), "staff_dashboard", "").await;
    assert_eq!(dashboard.status, StatusCode::OK, "{}", dashboard.text);
    let body = &dashboard.body;
    let sum = |series: &serde_json::Value| {
        series["per_minute"].as_array().unwrap().iter().map(|n| n.as_i64().unwrap()).sum::<i64>()
    };
    // Three calls by the test admin's key (category, pet, stock), five by `busy`, one anonymous.
    assert_eq!(sum(&body["api"]), 9, "{body}");
    assert_eq!(body["api"]["per_minute"].as_array().unwrap().len(), 60);
    assert_eq!(body["busiest"][0]["key_id"], busy_id, "{body}");
    assert_eq!(sum(&body["busiest"][0]), 5);
    assert!(body["busiest"][0]["label"].as_str().unwrap().contains(&format!("(key {busy_id})")));
    let hours = body["orders_per_hour"].as_array().unwrap();
    assert_eq!(hours.len(), 24);
    assert_eq!(hours[10], 1, "T0 is 10:00 UTC: {body}");
    assert_eq!(body["hour_now"], 10);
    let available = body["stock"].as_array().unwrap().iter().find(|s| s["status"] == "available").unwrap();
    assert_eq!((available["pets"].as_i64(), available["units"].as_i64()), (Some(1), Some(3)), "{body}");

    // The last three units: the order writes the stock with its own row, then the status
    // moves the pet (and its units, none left) to pending.
    let last = app
        .request_as(
            Some(&busy),
            Method::POST,
            "/api/v1/store/orders",
            Some(serde_json::json!({"petId": pet, "quantity": 3})),
        )
        .await;
    assert_eq!(last.status, StatusCode::CREATED, "{}", last.text);
    let dashboard = app.call_fn(Some(&staff), "staff_dashboard", "").await;
    let stock = |status: &str| {
        let row = dashboard.body["stock"].as_array().unwrap().iter().find(|s| s["status"] == status).unwrap();
        (row["pets"].as_i64().unwrap(), row["units"].as_i64().unwrap())
    };
    assert_eq!((stock("available"), stock("pending")), ((0, 0), (1, 0)), "{}", dashboard.body);
    assert_eq!(dashboard.body["orders_per_hour"][10], 2, "{}", dashboard.body);
}

/// The `/admin` page's HTML for the staff session `cookie`.
async fn dashboard_page(app: &TestApp, cookie: &str) -> String {
    let request = Request::get("/admin").header(header::COOKIE, cookie).body(Body::empty()).unwrap();
    let reply = app.send(request).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    reply.text
}

/// What the scheduled backups' row says, written as a server taking them would.
async fn backups_were(app: &TestApp, every: i64, success: Option<i64>, failure: Option<(i64, &str)>) {
    let pool = app.db.sqlite_pool().expect("a SQLite store");
    sqlx::query(
        "UPDATE backup_schedule SET every_seconds = $1, last_attempt_at = $2, last_success_at = $3,
         last_file = '/backups/shop-1.db', last_failure_at = $4, last_error = $5",
    )
    .bind(every)
    .bind(failure.map(|(at, _)| at).or(success))
    .bind(success)
    .bind(failure.map(|(at, _)| at))
    .bind(failure.map(|(_, why)| why))
    .execute(pool)
    .await
    .unwrap();
}

#[tokio::test]
async fn the_dashboard_says_when_the_last_backup_was_taken_and_warns_when_it_is_late_or_failing() {
    let app = TestApp::new().await;
    let (_, staff) = session(&app, Role::Admin).await;
    let backups = async || app.call_fn(Some(&staff), "staff_dashboard", "").await.body["backups"].clone();
    if app::db::testing::on_postgres() {
        // Backed up with PostgreSQL's own tools: the dashboard has nothing to say.
        assert!(backups().await.is_null());
        assert!(!dashboard_page(&app, &staff).await.contains("class=\"backups\""));
        return;
    }

    let off = backups().await;
    assert_eq!((off["every_seconds"].is_null(), off["warning"].is_null()), (true, true), "{off}");
    assert!(dashboard_page(&app, &staff).await.contains("Scheduled backups are off"));

    // Every hour, the last one 90 minutes ago: late, but not yet twice the interval.
    backups_were(&app, 3_600, Some(common::T0 - 5_400), None).await;
    let fine = backups().await;
    assert_eq!(fine["last_success_ago_seconds"], 5_400, "{fine}");
    assert!(fine["warning"].is_null(), "{fine}");
    let page = dashboard_page(&app, &staff).await;
    assert!(page.contains("Last backup taken 90 min ago"), "{page}");
    assert!(!page.contains("role=\"alert\""), "{page}");

    // Two hours and a second: more than twice the interval.
    backups_were(&app, 3_600, Some(common::T0 - 7_201), None).await;
    let late = backups().await;
    let warning = late["warning"].as_str().expect("a warning");
    assert!(warning.contains("2 h ago") && warning.contains("twice the interval"), "{late}");
    assert!(dashboard_page(&app, &staff).await.contains(warning));

    // The last attempt failed, after an earlier success: the failure is what staff see.
    backups_were(
        &app,
        3_600,
        Some(common::T0 - 3_600),
        Some((common::T0 - 10, "creating the folder /backups: Permission denied")),
    )
    .await;
    let failing = backups().await;
    assert_eq!(failing["failing"], "creating the folder /backups: Permission denied", "{failing}");
    let page = dashboard_page(&app, &staff).await;
    assert!(
        page.contains("The last scheduled backup failed: creating the folder /backups: Permission denied"),
        "{page}"
    );
    assert!(page.contains("role=\"alert\""), "{page}");
}

/// The dashboard's first panel: revenue today and this week (UTC, from Monday; a
/// cancelled order's total taken back out), the open orders and the pets for sale
/// running low, from the running totals and the low-stock index of both engines.
#[tokio::test]
async fn the_dashboard_shows_revenue_open_orders_and_pets_running_low() {
    use common::T0;
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let priced = |name: &str, price: i64| serde_json::json!({ "name": name, "categoryId": dogs, "price": price });
    let rex = app.post("/api/v1/pets", priced("Rex", 1_250)).await.body["id"].as_i64().unwrap();
    app.put(&format!("/api/v1/store/inventory/{rex}"), serde_json::json!({ "quantity": 10 })).await;
    let tiny = app.pet("Tiny", dogs, None).await;
    app.put(&format!("/api/v1/store/inventory/{tiny}"), serde_json::json!({ "quantity": 2 })).await;
    // Held back: pending, so not for sale however few it has.
    let held = app.pet("Held", dogs, None).await;
    let held_back = serde_json::json!({ "name": "Held", "categoryId": dogs, "status": "pending" });
    assert_eq!(app.put(&format!("/api/v1/pets/{held}"), held_back).await.status, StatusCode::OK);
    assert_eq!(app.stock(held).await, (1, "pending".to_owned()));
    let (_, shopper) = app.key(Role::Customer, Plan::Pro, None).await;
    let order = async |quantity: i64| {
        let body = serde_json::json!({ "petId": rex, "quantity": quantity });
        let placed = app.request_as(Some(&shopper), Method::POST, "/api/v1/store/orders", Some(body)).await;
        assert_eq!(placed.status, StatusCode::CREATED, "{}", placed.text);
        placed.body["id"].as_i64().unwrap()
    };
    // T0 is Monday 10:00 UTC. Sunday night's order is last week's.
    app.set_time(T0 - 11 * 3600);
    order(3).await;
    app.set_time(T0);
    order(2).await;
    let cancelled = order(1).await;
    let gone = app.request_as(Some(&shopper), Method::DELETE, &format!("/api/v1/store/orders/{cancelled}"), None).await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT, "{}", gone.text);

    let (_, staff) = session(&app, Role::Admin).await;
    let sales = async || app.call_fn(Some(&staff), "staff_dashboard", "").await.body["sales"].clone();
    let now = sales().await;
    assert_eq!((now["revenue_today"].as_i64(), now["revenue_this_week"].as_i64()), (Some(2_500), Some(2_500)), "{now}");
    assert_eq!(now["open_orders"], 2, "Sunday's and today's, not the cancelled one: {now}");
    let low: Vec<(i64, i64)> = now["low_stock"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pet| (pet["id"].as_i64().unwrap(), pet["quantity"].as_i64().unwrap()))
        .collect();
    assert_eq!(low, vec![(tiny, 2)], "not Rex (4 left), not the pending one: {now}");
    let page = dashboard_page(&app, &staff).await;
    assert!(page.contains("Revenue today") && page.contains("€25.00"), "{page}");
    assert!(page.contains(&format!("href=\"/admin/pets/{tiny}\"")), "{page}");

    // Wednesday: nothing yet today, the week's still there.
    app.set_time(T0 + 2 * 86_400);
    let later = sales().await;
    assert_eq!(
        (later["revenue_today"].as_i64(), later["revenue_this_week"].as_i64()),
        (Some(0), Some(2_500)),
        "{later}"
    );
}
