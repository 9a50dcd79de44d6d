//! The pages kept for anonymous visitors (`server::pages`): each answer has its own
//! nonce, a write is seen at once, a write by another process within the catalog
//! watcher's interval, and signed-in visitors get pages of their own: the kept page
//! with their own header where only the header is theirs, else rendered for them.

mod common;

use app::model::Role;
use axum::body::Body;
use axum::http::{Request, header};
use common::TestApp;

/// The page counters in `/metrics` are the process's: the tests of this file take
/// turns, so that one's counts are its own.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

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
    let _turn = ONE_AT_A_TIME.lock().await;
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
    let _turn = ONE_AT_A_TIME.lock().await;
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
    app.rename_pet_behind_the_services(rex, "Bella").await;
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
    let _turn = ONE_AT_A_TIME.lock().await;
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
    let _turn = ONE_AT_A_TIME.lock().await;
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let missing = app.send(Request::get("/pets/1").body(Body::empty()).unwrap()).await;
    assert_eq!(missing.status, 404);
    let kept_before = pages_answered(&app, "kept").await;
    // The pet appears without moving this process's generation, as another process's
    // write would.
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
    // The next page is rendered afresh. It may still say "not found" for a moment (seen
    // once under load; likely a read of the pet that the 404's render started, its "more
    // like this", still running and handing its answer to a request that joins it), and
    // another process's write is promised within the catalog watcher's interval. So the page is asked for
    // until it shows the pet, and none of the answers may be a kept page: a kept 404
    // would be served (counted "kept") until the watcher saw the write.
    let mut shown = false;
    for _ in 0..100 {
        let reply = app.send(Request::get("/pets/1").body(Body::empty()).unwrap()).await;
        if reply.status == 200 && reply.text.contains("Rex") {
            shown = true;
            break;
        }
        assert_eq!(reply.status, 404, "{}", reply.text);
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(shown, "the pet's page never showed it");
    assert_eq!(pages_answered(&app, "kept").await, kept_before, "a page was served from the kept ones");
}

/// How many pages were answered so (`petstore_pages_total{how}`), from `/metrics`:
/// the recorder is the process's, so tests compare before and after.
async fn pages_answered(app: &TestApp, how: &str) -> u64 {
    let request = Request::get("/metrics")
        .header(header::AUTHORIZATION, format!("Bearer {}", app.admin))
        .body(Body::empty())
        .unwrap();
    let scraped = app.send(request).await;
    let line = format!("petstore_pages_total{{how=\"{how}\"}} ");
    scraped.text.lines().find_map(|l| l.strip_prefix(&line)).map_or(0, |n| n.trim().parse().unwrap())
}

/// The catalog and the categories page are the kept page with the visitor's own header
/// island in place of the anonymous one, and that page is exactly the one rendered for
/// them whole: compared with the page rendered for them at an address nothing is kept
/// for (a parameter the page does not read), that address aside.
#[tokio::test]
async fn a_signed_in_visitor_gets_the_kept_page_with_their_own_header() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    app.pet("Rex", dogs, None).await;
    let (_, admin) = app.session(Role::Admin).await;
    let (_, customer) = app.session(Role::Customer).await;
    for (path, query) in [("/", "?q=rex&status=available"), ("/categories", "")] {
        for cookie in [&admin, &customer] {
            let address = format!("{path}{query}");
            // Kept (a miss renders it, and counts as rendered), then assembled. A write
            // in the background (the rate-limit counters' flush) may make the kept page
            // stale in between: then it is rendered and kept again, so try a few times.
            let mut assembled = None;
            for _ in 0..5 {
                page(&app, &address, Some(cookie)).await;
                let before = pages_answered(&app, "assembled").await;
                let reply = page(&app, &address, Some(cookie)).await;
                if pages_answered(&app, "assembled").await == before + 1 {
                    assembled = Some(reply);
                    break;
                }
            }
            let assembled = assembled.unwrap_or_else(|| panic!("{address}: never assembled from the kept page"));
            let rendered_before = pages_answered(&app, "rendered").await;
            let whole_address =
                if query.is_empty() { format!("{path}?utm_source=x") } else { format!("{address}&utm_source=x") };
            let whole = page(&app, &whole_address, Some(cookie)).await;
            assert_eq!(pages_answered(&app, "rendered").await, rendered_before + 1, "{whole_address}: rendered");
            let whole_text = whole
                .text
                .replace(&nonce_of(&whole), "N")
                .replace(&whole_address.replace('&', "&amp;"), &address.replace('&', "&amp;"));
            let whole_text = whole_text.replace(&whole_address, &address);
            assert_eq!(assembled.text.replace(&nonce_of(&assembled), "N"), whole_text, "{address}");
            assert!(assembled.text.contains("Sign out") && !assembled.text.contains(">Sign in<"), "{}", assembled.text);
            assert_eq!(assembled.header("cache-control"), whole.header("cache-control"));
        }
    }
    // The island is kept per caller and page: the same caller on another query of the
    // same page is sent back there after signing out, not to the first one's.
    for _ in 0..2 {
        let other = page(&app, "/?q=max", Some(&admin)).await;
        let start = other.text.find(app::ui::ACCOUNT_NAV_START).expect("the account island");
        let island = &other.text[start..start + other.text[start..].find("</leptos-island>").unwrap()];
        assert!(island.contains("q=max") && !island.contains("q=rex"), "{island}");
        assert!(island.contains(">Staff<"), "the admin's own: {island}");
    }
    // Anonymous visitors still get the anonymous header from the same kept page.
    let anonymous = page(&app, "/?q=rex&status=available", None).await;
    assert!(anonymous.text.contains(">Sign in<") && !anonymous.text.contains("Sign out"));
}

#[tokio::test]
async fn a_page_whose_data_was_refused_is_not_kept_for_everyone() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let app =
        TestApp::with_config(server::config::Config { ban_after: 1, ban_minutes: 10, ..Default::default() }).await;
    let dogs = app.category("Dogs").await;
    app.pet("Rex", dogs, None).await;
    // One address is banned (anonymous requests over its limit, then one more)…
    let banned = std::net::SocketAddr::from(([203, 0, 113, 7], 40000));
    let from = |address, path: &str| {
        let mut request = Request::get(path).body(Body::empty()).unwrap();
        request.extensions_mut().insert(axum::extract::ConnectInfo::<std::net::SocketAddr>(address));
        request
    };
    let mut refused = 0;
    for _ in 0..70 {
        if app.send(from(banned, "/api/v1/openapi.json")).await.status == 429 {
            refused += 1;
        }
    }
    assert!(refused > 0, "the address was refused");
    // …and asks for the catalog first: its page says so, and not with a 200.
    let theirs = app.send(from(banned, "/")).await;
    assert_eq!(theirs.status, 429, "{}", theirs.text);
    let retry: u64 = theirs.header("retry-after").expect("Retry-After on the ban's page").parse().unwrap();
    assert!((1..=600).contains(&retry), "{retry}");
    assert!(theirs.text.contains("notice-error"), "{}", theirs.text);
    // Everyone else gets the catalog, not the banned visitor's page.
    let others = page(&app, "/", None).await;
    assert!(others.text.contains("Rex") && !others.text.contains("notice-error"), "{}", others.text);
}
