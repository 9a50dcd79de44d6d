//! The pages kept for anonymous visitors (`server::pages`): each answer has its own
//! nonce, a write is seen at once, a write by another process within the catalog
//! watcher's interval, and
//! signed-in visitors get pages of their own.

mod common;

use app::model::Role;
use axum::body::Body;
use axum::http::{Request, header};
use common::TestApp;

fn nonce_of(reply: &common::Reply) -> String {
    let csp = reply.header("content-security-policy").expect("a page has a CSP");
    csp.split("'nonce-").nth(1).and_then(|rest| rest.split('\'').next()).expect("a nonce in the CSP").to_owned()
}

async fn page(app: &TestApp, path: &str, cookie: Option<&str>) -> common::Reply {
    let mut request = Request::get(path);
    if let Some(cookie) = cookie {
        request = request.header(header::COOKIE, cookie);
    }
    let reply = app.send(request.body(Body::empty()).unwrap()).await;
    assert_eq!(reply.status, 200, "{path}: {}", reply.text);
    reply
}

#[tokio::test]
async fn a_kept_page_carries_each_answers_own_nonce() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    app.pet("Rex", dogs, None).await;

    let first = page(&app, "/", None).await;
    let second = page(&app, "/", None).await;
    let (one, two) = (nonce_of(&first), nonce_of(&second));
    assert_ne!(one, two, "a fresh nonce per answer");
    for (reply, nonce) in [(&first, &one), (&second, &two)] {
        let scripts = reply.text.matches("<script").count();
        assert!(scripts > 0);
        assert_eq!(reply.text.matches(&format!("nonce=\"{nonce}\"")).count(), scripts, "{}", reply.text);
        assert!(reply.text.contains("Rex"));
        assert_eq!(reply.header("content-type"), Some("text/html; charset=utf-8"));
    }
    assert_eq!(first.text.replace(&one, "N"), second.text.replace(&two, "N"), "the same page otherwise");
}

#[tokio::test]
async fn a_write_is_seen_by_the_next_page() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let rex = app.pet("Rex", dogs, None).await;
    assert!(page(&app, "/", None).await.text.contains("Rex"));
    assert!(page(&app, &format!("/pets/{rex}"), None).await.text.contains("Rex"));

    // Through the API: at once.
    app.pet("Fido", dogs, None).await;
    let reply = app.put(&format!("/api/v1/pets/{rex}"), serde_json::json!({"name": "Max", "categoryId": dogs})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let catalog = page(&app, "/", None).await.text;
    assert!(catalog.contains("Fido") && catalog.contains("Max") && !catalog.contains("Rex"), "{catalog}");
    assert!(page(&app, &format!("/pets/{rex}"), None).await.text.contains("Max"));

    // Behind this process's back (as another server over the same file would write):
    // once the catalog watcher has seen the version the database's triggers moved on.
    app::on_pool!(app.db, |pool| sqlx::query("UPDATE pets SET name = 'Bella', name_key = 'bella' WHERE id = $1")
        .bind(rex)
        .execute(pool)
        .await
        .map(|_| ()))
    .unwrap();
    // Promised within the watch interval (100 ms); polled, with room for a loaded machine.
    let mut catalog = String::new();
    for _ in 0..20 {
        tokio::time::sleep(app::db::CATALOG_WATCH_INTERVAL).await;
        catalog = page(&app, "/", None).await.text;
        if catalog.contains("Bella") {
            break;
        }
    }
    assert!(catalog.contains("Bella") && !catalog.contains("Max"), "not seen within 2 s: {catalog}");
}

/// How the header says an admin is signed in, as the server writes it.
const SIGNED_IN_ADMIN: &str = r#"<span class="who-label">Signed in · </span>Admin"#;

#[tokio::test]
async fn a_signed_in_visitor_gets_a_page_of_their_own() {
    let app = TestApp::new().await;
    let anonymous = page(&app, "/", None).await;
    assert!(anonymous.text.contains("Sign in"));

    let (_, session) = app.session(Role::Admin).await;
    let cookie = format!("theme=dark; {session}");
    let signed_in = page(&app, "/", Some(&cookie)).await;
    assert!(signed_in.text.contains(SIGNED_IN_ADMIN), "{}", signed_in.text);

    // Neither page was served in place of the other.
    assert!(page(&app, "/", None).await.text.contains("Sign in"));
    assert!(!page(&app, "/", None).await.text.contains("Signed in"));
    assert!(page(&app, "/", Some(&cookie)).await.text.contains(SIGNED_IN_ADMIN));
}

#[tokio::test]
async fn a_page_that_is_not_a_200_is_not_kept() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let missing = app.send(Request::get("/pets/1").body(Body::empty()).unwrap()).await;
    assert_eq!(missing.status, 404);
    // The pet appears without moving this process's generation (as another process's
    // write would), at once: a kept 404 would hide it until the catalog watcher looked.
    app::on_pool!(app.db, |pool| {
        sqlx::query(
            "INSERT INTO pets (id, name, name_key, category_id, status) VALUES (1, 'Rex', 'rex', $1, 'available')",
        )
        .bind(dogs)
        .execute(pool)
        .await
        .unwrap();
        sqlx::query("INSERT INTO inventory (pet_id, quantity) VALUES (1, 0)").execute(pool).await.unwrap();
    });
    assert!(page(&app, "/pets/1", None).await.text.contains("Rex"));
}
