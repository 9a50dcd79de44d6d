//! The security suite (docs/SECURITY.md): one test per finding of the audit, through
//! the whole application as the server serves it (every layer, in process, with a clock
//! set by hand so that windows and bans are exact), plus the probes that held, kept as
//! regression tests.

mod common;

use std::net::SocketAddr;

use app::model::{Limits, Plan, Role};
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request, StatusCode, header};
use base64::Engine;
use common::{Reply, TestApp};
use serde_json::json;
use server::Config;

/// The session cookie a sign-in answer set (`name=value`).
fn session_cookie(reply: &Reply) -> String {
    reply
        .headers
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find(|value| value.contains("petstore_session=") && !value.contains("Max-Age=0"))
        .and_then(|value| value.split(';').next())
        .unwrap_or_else(|| panic!("no session cookie: {:?}", reply.headers))
        .to_owned()
}

async fn enterprise(app: &TestApp, role: Role, per_minute: u32) -> (i64, String) {
    app.key(role, Plan::Enterprise, Some(Limits { per_minute, per_day: 100_000 })).await
}

fn from(ip: &str, request: Request<Body>) -> Request<Body> {
    let mut request = request;
    let addr: SocketAddr = format!("{ip}:40000").parse().or_else(|_| format!("[{ip}]:40000").parse()).unwrap();
    request.extensions_mut().insert(ConnectInfo(addr));
    request
}

// 1. Limits and bans are the key's on every surface.

#[tokio::test]
async fn a_banned_key_is_refused_by_the_storefront_and_metrics_too() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let rex = app.pet("Rex", dogs, None).await;
    app.put(&format!("/api/v1/store/inventory/{rex}"), json!({ "quantity": 500 })).await;
    let (_, key) = app.key(Role::Customer, Plan::Free, None).await;
    // Signed in before the ban: a browser holds a session of the key.
    let signed_in = app.call_fn(None, "sign_in", &format!("key={key}")).await;
    let cookie = session_cookie(&signed_in);

    // Banned on the REST API: its 60, ten refusals, then the ban.
    for _ in 0..59 {
        assert_eq!(app.request_as(Some(&key), Method::GET, "/api/v1/pets", None).await.status, StatusCode::OK);
    }
    for _ in 0..10 {
        app.request_as(Some(&key), Method::GET, "/api/v1/pets", None).await.assert_error(429, "rate_limited");
    }
    let banned = app.request_as(Some(&key), Method::GET, "/api/v1/pets", None).await;
    banned.assert_error(429, "temporarily_banned");
    assert_eq!(banned.header("retry-after"), Some("900"));

    // The key cannot sign in, and its session can do nothing: the same 429, with the time left.
    let refused = app.call_fn(None, "sign_in", &format!("key={key}")).await;
    let message = refused.assert_error(429, "temporarily_banned");
    assert!(message.contains("15 min"), "{message}");
    for (endpoint, form) in [("place_order", format!("pet_id={rex}&quantity=1")), ("orders", String::new())] {
        app.call_fn(Some(&cookie), endpoint, &form).await.assert_error(429, "temporarily_banned");
    }
    assert_eq!(app.stock(rex).await.0, 500, "no order went through");
    // Pages still render (free), and say why the data is missing.
    let page = app.send(Request::get("/orders").header(header::COOKIE, &cookie).body(Body::empty()).unwrap()).await;
    assert!(page.text.contains("blocked for another"), "{}", page.text);
}

#[tokio::test]
async fn server_functions_count_against_the_sessions_key() {
    let app = TestApp::new().await;
    // An admin key allowed one request a minute.
    let (_, key) = enterprise(&app, Role::Admin, 1).await;
    let cookie = {
        let signed_in = app.call_fn(None, "sign_in", &format!("key={key}")).await;
        session_cookie(&signed_in) // the sign-in was the key's one request
    };
    let refused = app.call_fn(Some(&cookie), "staff_create_key", "name=x&role=admin&plan=pro").await;
    refused.assert_error(429, "rate_limited");
    assert_eq!(app.count("api_keys").await, 2, "no key was made");
    // The next minute it may again.
    app.set_time(common::T0 + 60);
    let made = app.call_fn(Some(&cookie), "staff_create_key", "name=x&role=admin&plan=pro").await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.text);
    assert_eq!(made.header("cache-control"), Some("no-store"), "the answer carries a secret");

    // Rendering a page counts nothing: the key's next request is still allowed.
    app.set_time(common::T0 + 120);
    for _ in 0..5 {
        let page =
            app.send(Request::get("/admin/keys").header(header::COOKIE, &cookie).body(Body::empty()).unwrap()).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(!page.text.contains("Too many requests"), "{}", page.text);
    }
    assert_eq!(app.call_fn(Some(&cookie), "admin_keys", "").await.status, StatusCode::OK);
}

#[tokio::test]
async fn a_banned_address_cannot_sign_up_anywhere_and_a_banned_key_cannot_scrape() {
    let app = TestApp::with_config(Config { ban_after: 1, ban_minutes: 10, ..Config::default() }).await;
    // The address is banned (anonymous requests over its limit, then one more).
    for _ in 0..60 {
        app.request_as(None, Method::GET, "/api/v1/openapi.json", None).await;
    }
    app.request_as(None, Method::GET, "/api/v1/openapi.json", None).await.assert_error(429, "rate_limited");
    app.request_as(None, Method::GET, "/api/v1/openapi.json", None).await.assert_error(429, "temporarily_banned");
    let keys_before = app.count("api_keys").await;
    app.call_fn(None, "sign_up", "").await.assert_error(429, "temporarily_banned");
    app.request_as(None, Method::POST, "/api/v1/keys", None).await.assert_error(429, "temporarily_banned");
    assert_eq!(app.count("api_keys").await, keys_before);

    // An admin key banned on the API gets no metrics either.
    let (_, admin) = enterprise(&app, Role::Admin, 1).await;
    app.request_as(Some(&admin), Method::GET, "/api/v1/pets", None).await;
    app.request_as(Some(&admin), Method::GET, "/api/v1/pets", None).await.assert_error(429, "rate_limited");
    app.request_as(Some(&admin), Method::GET, "/api/v1/pets", None).await.assert_error(429, "temporarily_banned");
    let scrape = Request::get("/metrics").header(header::AUTHORIZATION, format!("Bearer {admin}"));
    app.send(scrape.body(Body::empty()).unwrap()).await.assert_error(429, "temporarily_banned");
    // Reset and Retry-After agree during a ban.
    let banned = app.request_as(Some(&admin), Method::GET, "/api/v1/pets", None).await;
    let reset: i64 = banned.header("x-ratelimit-reset").unwrap().parse().unwrap();
    let retry: i64 = banned.header("retry-after").unwrap().parse().unwrap();
    assert_eq!(reset, common::T0 + retry);
    assert_eq!(banned.header("x-ratelimit-remaining"), Some("0"));
}

// 2. Markup in names is text, in the head and the body of every page.

#[tokio::test]
async fn markup_in_names_stays_text_on_every_page() {
    let app = TestApp::new().await;
    let names = [
        r#"</title><meta http-equiv="refresh" content="0;url=https://evil.example/">"#,
        "<script>alert(1)</script>",
        r#""><svg onload=alert(1)>"#,
    ];
    let category = app.category(names[2]).await;
    let mut pets = Vec::new();
    for name in names {
        pets.push(app.pet(name, category, None).await);
    }
    let (_, staff) = app.session(Role::Admin).await;
    let mut paths = vec!["/".to_owned(), "/categories".to_owned(), format!("/?category={category}")];
    paths.extend(pets.iter().map(|id| format!("/pets/{id}")));
    let staff_paths: Vec<String> = ["/admin/pets", "/admin/categories", "/admin/inventory", "/orders"]
        .into_iter()
        .map(str::to_owned)
        .chain(pets.iter().map(|id| format!("/admin/pets/{id}")))
        .collect();
    for (path, cookie) in paths.iter().map(|p| (p, None)).chain(staff_paths.iter().map(|p| (p, Some(&staff)))) {
        let mut request = Request::get(path.as_str());
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie.as_str());
        }
        let page = app.send(request.body(Body::empty()).unwrap()).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        let head = page.text.split("</head>").next().unwrap();
        assert_eq!(head.matches("<title>").count(), 1, "{path}: {head}");
        assert_eq!(head.matches("</title>").count(), 1, "{path}: one title, closed once: {head}");
        for markup in ["<meta http-equiv", "<script>alert", "<svg onload"] {
            assert!(!page.text.contains(markup), "{path}: {markup} as markup");
        }
    }
    let pet_page = app.get(&format!("/pets/{}", pets[0])).await;
    assert!(
        pet_page.text.contains(r#"<title>&lt;/title&gt;&lt;meta http-equiv="refresh" content="0;url=https://evil.example/"&gt; · Pet Store</title>"#),
        "the name as text in the title: {}",
        pet_page.text.split("</head>").next().unwrap()
    );
}

// 3. Metrics labels come from fixed sets.

#[tokio::test]
async fn invented_methods_and_paths_add_no_metrics_series() {
    let app = TestApp::new().await;
    let odd = |method: &str, path: &str| {
        let request = Request::builder().method(method).uri(path).header("x-api-key", &app.admin);
        request.body(Body::empty()).unwrap()
    };
    let scrape = || async {
        let request = Request::get("/metrics").header(header::AUTHORIZATION, format!("Bearer {}", app.admin));
        let text = app.send(request.body(Body::empty()).unwrap()).await.text;
        text.lines().filter(|line| line.starts_with("http_requests_total{")).map(str::to_owned).collect::<Vec<_>>()
    };
    // Every kind of answer once, so that the series they make exist before counting.
    for path in ["/healthz", "/api/v1/x0", "/no-such-page-0"] {
        app.send(odd("XYZ0", path)).await;
    }
    let before = scrape().await;
    for n in 0..1_000 {
        let path = match n % 3 {
            0 => "/healthz".to_owned(),
            1 => format!("/api/v1/x{n}"),
            _ => format!("/no-such-page-{n}"),
        };
        app.send(odd(&format!("XYZ{n}"), &path)).await;
    }
    let after = scrape().await;
    // (Other tests of this binary add series of their own meanwhile: compare these.)
    let series = |lines: &[String]| {
        let mut series: Vec<String> = lines
            .iter()
            .filter(|line| line.contains(r#"method="other""#))
            .map(|line| line.rsplit_once(' ').unwrap().0.to_owned())
            .collect();
        series.sort();
        series
    };
    assert_eq!(series(&after), series(&before), "the same series, only counted more");
    assert!(!after.iter().any(|line| line.contains("/x1") || line.contains("no-such-page")), "{after:?}");
    assert!(after.iter().any(|line| line.contains(r#"method="other""#)), "{after:?}");
    assert!(!after.iter().any(|line| line.contains("XYZ")), "{after:?}");
}

// 4. Sign-in is throttled, and sessions do not pile up.

#[tokio::test]
async fn wrong_keys_at_sign_in_are_throttled_then_banned() {
    let app = TestApp::new().await;
    let mut codes = Vec::new();
    for n in 0..75 {
        let reply = app.call_fn(None, "sign_in", &format!("key=psk_0000000000_wrong{n}")).await;
        codes.push(reply.body["code"].as_str().unwrap_or_default().to_owned());
    }
    assert!(codes[..60].iter().all(|code| code == "invalid_api_key"), "{codes:?}");
    assert!(codes.iter().any(|code| code == "rate_limited"), "{codes:?}");
    assert_eq!(codes.last().map(String::as_str), Some("temporarily_banned"), "{codes:?}");
    assert_eq!(app.count("sessions").await, 0);
}

#[tokio::test]
async fn a_key_keeps_at_most_ten_sessions_and_a_browser_one() {
    let app = TestApp::new().await;
    let (key_id, key) = enterprise(&app, Role::Customer, 10_000).await;
    let sessions = || async {
        app::on_pool!(app.db, |pool| sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM sessions WHERE key_id = $1")
            .bind(key_id)
            .fetch_one(pool)
            .await)
        .unwrap()
    };
    let first = session_cookie(&app.call_fn(None, "sign_in", &format!("key={key}")).await);
    // The same browser signing in again: its session is replaced.
    let again = session_cookie(&app.call_fn(Some(&first), "sign_in", &format!("key={key}")).await);
    assert_eq!(sessions().await, 1);
    let refused = app.send(Request::get("/orders").header(header::COOKIE, &first).body(Body::empty()).unwrap()).await;
    assert!(refused.text.contains("Sign in to see your orders"), "the old session ended");
    // Three hundred other browsers: the ten newest stay.
    for n in 0..300 {
        app.set_time(common::T0 + n);
        app.call_fn(None, "sign_in", &format!("key={key}")).await;
    }
    assert_eq!(sessions().await, 10);
    let old = app.send(Request::get("/orders").header(header::COOKIE, &again).body(Body::empty()).unwrap()).await;
    assert!(old.text.contains("Sign in to see your orders"), "the oldest ended");
}

// 5. An error in the address is not shown as the store's own words.

#[tokio::test]
async fn an_error_in_the_address_is_not_shown() {
    let app = TestApp::new().await;
    let forged = json!({"code": "invalid_api_key", "message": "Your key has expired, renew it at https://evil.example", "status": 401});
    let encoded = base64::engine::general_purpose::URL_SAFE.encode(forged.to_string());
    // However the names are written (Leptos decodes them), and whatever status the
    // forged object claims (429 was answered for a percent-encoded one).
    let claiming_429 =
        json!({"code": "rate_limited", "message": "renew it at https://evil.example/renew", "status": 429});
    let claiming_429 = base64::engine::general_purpose::URL_SAFE.encode(claiming_429.to_string());
    for path in [
        format!("/sign-in?__path=/_app/sign_in&__err={encoded}"),
        format!("/sign-up?__path=/_app/sign_up&__err={encoded}"),
        format!("/sign-in?%5F%5Fpath=%2F_app%2Fsign_in&%5F%5Ferr={claiming_429}"),
        format!("/sign-in?%5f_path=/_app/sign_in&_%5ferr={claiming_429}"),
        format!("/sign-in?__pat%68=/_app/sign_in&__e%72r={claiming_429}"),
    ] {
        let page = app.send(Request::get(path.as_str()).body(Body::empty()).unwrap()).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        assert!(!page.text.contains("evil.example"), "{path}: {}", page.text);
    }
    // A form sent without JavaScript gets its outcome back as the store words it.
    let sent = app
        .send(
            Request::post("/_app/sign_in")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(header::ACCEPT, "text/html")
                .header(header::REFERER, "http://shop.test/sign-in")
                .body(Body::from("key=psk_0000000000_nope"))
                .unwrap(),
        )
        .await;
    assert_eq!(sent.status, StatusCode::SEE_OTHER);
    assert_eq!(sent.header("location"), Some("/sign-in"), "back to the form, nothing in the address");
    let flash = sent.header("set-cookie").unwrap().split(';').next().unwrap().to_owned();
    let page = app.send(Request::get("/sign-in").header(header::COOKIE, &flash).body(Body::empty()).unwrap()).await;
    assert!(
        page.text.contains("That key is not recognised"),
        "{flash}: {}",
        page.text.split("<main").nth(1).unwrap_or("")
    );
    assert_eq!(page.header("cache-control"), Some("no-store"));
    assert!(page.header("set-cookie").unwrap().contains("Max-Age=0"), "shown once");
}

// 6. One bucket for every anonymous caller no more.

#[tokio::test]
async fn made_up_keys_are_throttled_without_banning_the_address() {
    let app = TestApp::new().await;
    let mut last = None;
    for n in 0..75 {
        let reply = app.request_as(Some(&format!("psk_0000000000_made{n}")), Method::GET, "/api/v1/pets", None).await;
        last = Some(reply.body["code"].as_str().unwrap().to_owned());
    }
    assert_eq!(last.as_deref(), Some("temporarily_banned"), "guessing is throttled, then banned");
    // The address itself is not: its public reads and sign-ups go on.
    assert_eq!(app.request_as(None, Method::GET, "/api/v1/openapi.json", None).await.status, StatusCode::OK);
    assert_eq!(app.request_as(None, Method::POST, "/api/v1/keys", None).await.status, StatusCode::CREATED);
    let (_, key) = app.key(Role::Customer, Plan::Free, None).await;
    assert_eq!(app.request_as(Some(&key), Method::GET, "/api/v1/pets", None).await.status, StatusCode::OK);
}

#[tokio::test]
async fn ipv6_clients_share_their_64_and_proxies_are_trusted_only_when_named() {
    let app = TestApp::new().await;
    let openapi = |ip: &str| from(ip, Request::get("/api/v1/openapi.json").body(Body::empty()).unwrap());
    for n in 0..60 {
        // Sixty addresses of one /64 spend one allowance.
        assert_eq!(app.send(openapi(&format!("2001:db8:1:2::{n:x}"))).await.status, StatusCode::OK);
    }
    app.send(openapi("2001:db8:1:2:ffff::1")).await.assert_error(429, "rate_limited");
    assert_eq!(app.send(openapi("2001:db8:1:3::1")).await.status, StatusCode::OK, "another /64");

    // Without --trusted-proxies, X-Forwarded-For is ignored: the proxy's address counts.
    let forwarded = |peer: &str, client: &str| {
        from(peer, Request::get("/api/v1/openapi.json").header("x-forwarded-for", client).body(Body::empty()).unwrap())
    };
    let reply = app.send(forwarded("10.0.0.7", "203.0.113.1")).await;
    assert_eq!(reply.header("x-ratelimit-remaining"), Some("59"));
    let reply = app.send(forwarded("10.0.0.7", "203.0.113.2")).await;
    assert_eq!(reply.header("x-ratelimit-remaining"), Some("58"), "one client: the proxy");

    let proxies = vec!["10.0.0.0/8".parse().unwrap()];
    let app = TestApp::with_config(Config { trusted_proxies: proxies, ..Config::default() }).await;
    for client in ["203.0.113.1", "203.0.113.2"] {
        let reply = app.send(forwarded("10.0.0.7", client)).await;
        assert_eq!(reply.header("x-ratelimit-remaining"), Some("59"), "{client} counts alone");
    }
    // Only a trusted peer's header is believed.
    let reply = app.send(forwarded("198.51.100.9", "203.0.113.1")).await;
    assert_eq!(reply.header("x-ratelimit-remaining"), Some("59"), "counted as 198.51.100.9");
}

// 7. Defence in depth.

#[tokio::test]
async fn over_https_the_session_cookie_is_host_prefixed_and_secure() {
    let app =
        TestApp::with_config(Config { public_url: Some("https://shop.example".into()), ..Config::default() }).await;
    let (_, key) = app.key(Role::Customer, Plan::Pro, None).await;
    let signed_in = app.call_fn(None, "sign_in", &format!("key={key}")).await;
    let set = signed_in.header("set-cookie").unwrap();
    assert!(set.starts_with("__Host-petstore_session=") && set.contains("; Secure") && set.contains("Path=/"), "{set}");
    assert!(!set.contains("Domain"), "{set}");
    let cookie = set.split(';').next().unwrap();
    let page = app.send(Request::get("/orders").header(header::COOKIE, cookie).body(Body::empty()).unwrap()).await;
    assert!(page.text.contains("My orders"), "{}", page.text);
    // The plain name (which a sibling site could plant) is not a session here.
    let planted = cookie.replace("__Host-", "");
    let page = app.send(Request::get("/orders").header(header::COOKIE, planted).body(Body::empty()).unwrap()).await;
    assert!(page.text.contains("Sign in to see your orders"));

    // Over plain HTTP (no --public-url) a browser would drop such a cookie.
    let plain = TestApp::new().await;
    let (_, key) = plain.key(Role::Customer, Plan::Pro, None).await;
    let set = plain.call_fn(None, "sign_in", &format!("key={key}")).await.header("set-cookie").unwrap().to_owned();
    assert!(set.starts_with("petstore_session=") && !set.contains("Secure"), "{set}");
}

#[tokio::test]
async fn server_functions_check_origin_always_and_take_only_forms() {
    let app = TestApp::new().await;
    let (_, cookie) = app.session(Role::Customer).await;
    let post = |site: &str, origin: &str, content_type: &str| {
        Request::post("/_app/sign_out")
            .header(header::HOST, "shop.test")
            .header(header::COOKIE, &cookie)
            .header("sec-fetch-site", site)
            .header(header::ORIGIN, origin)
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::empty())
            .unwrap()
    };
    let form = "application/x-www-form-urlencoded";
    app.send(post("none", "http://evil.test", form)).await.assert_error(403, "forbidden");
    app.send(post("same-origin", "null", form)).await.assert_error(403, "forbidden");
    app.send(post("same-origin", "http://shop.test", "text/plain")).await.assert_error(415, "unsupported_media_type");
    app.send(post("same-origin", "http://shop.test", "application/json"))
        .await
        .assert_error(415, "unsupported_media_type");
    let signed_out = app.send(post("same-origin", "http://shop.test", form)).await;
    assert_eq!(signed_out.status, StatusCode::OK, "{}", signed_out.text);
}

#[tokio::test]
async fn answers_with_a_secret_are_not_stored() {
    let app = TestApp::new().await;
    let signed_up = app.request_as(None, Method::POST, "/api/v1/keys", None).await;
    assert_eq!(signed_up.status, StatusCode::CREATED);
    assert_eq!(signed_up.header("cache-control"), Some("no-store"));
    let created = app.post("/api/v1/keys", json!({ "name": "ci", "role": "customer", "plan": "pro" })).await;
    assert_eq!(created.header("cache-control"), Some("no-store"));
    let signed_up = app.call_fn(None, "sign_up", "").await;
    assert_eq!(signed_up.status, StatusCode::OK, "{}", signed_up.text);
    assert_eq!(signed_up.header("cache-control"), Some("no-store"));
}

// The second audit: the surfaces added since (streams, the flash, slow clients,
// uploads, proxies). The live binary's share is in `security_live.rs`.

/// Opens `GET /api/v1/events` from 127.0.0.1 with these headers.
async fn open_events(app: &TestApp, headers: &[(&str, &str)]) -> axum::response::Response {
    open_from(app, "/api/v1/events", "127.0.0.1", headers).await
}

/// Opens a stream at `path` from `ip` with these headers.
async fn open_from(app: &TestApp, path: &str, ip: &str, headers: &[(&str, &str)]) -> axum::response::Response {
    use tower::ServiceExt;
    let mut request = Request::get(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    app.router.clone().oneshot(from(ip, request.body(Body::empty()).unwrap())).await.unwrap()
}

/// What a stream sends until it ends (`true`) or `within` passes (`false`).
async fn until_it_ends(body: &mut Body, within: std::time::Duration) -> (bool, String) {
    use http_body_util::BodyExt;
    let deadline = tokio::time::Instant::now() + within;
    let mut text = String::new();
    loop {
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    text.push_str(&String::from_utf8_lossy(&data));
                }
            }
            Ok(_) => return (true, text),
            Err(_) => return (false, text),
        }
    }
}

/// The stream's first frame (the id it starts after), read so that it is open.
async fn opened(response: axum::response::Response) -> Body {
    use http_body_util::BodyExt;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let frame = tokio::time::timeout(std::time::Duration::from_secs(5), body.frame()).await;
    assert!(frame.expect("the opening frame").is_some());
    body
}

/// A statement with one number, run on the pool behind the services (as another
/// process over the same database would write).
async fn behind_the_services(app: &TestApp, sql: &'static str, value: i64) {
    app::on_pool!(app.db, |pool| sqlx::query(sql).bind(value).execute(pool).await.map(|_| ())).unwrap();
}

/// Room for a loaded machine around the promise of a second.
const WITHIN: std::time::Duration = std::time::Duration::from_secs(3);

#[tokio::test]
async fn a_revoked_keys_stream_ends_and_sends_nothing_more() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    // Revoked through the API: a customer key's stream.
    let (customer_id, customer) = app.key(Role::Customer, Plan::Pro, None).await;
    let mut stream = opened(open_events(&app, &[("x-api-key", &customer)]).await).await;
    assert_eq!(app.delete(&format!("/api/v1/keys/{customer_id}")).await.status, StatusCode::OK);
    app.pet("Rex", dogs, None).await;
    let (ended, text) = until_it_ends(&mut stream, WITHIN).await;
    assert!(ended, "the stream is still open: {text}");
    assert!(!text.contains("pet.created"), "{text}");

    // Revoked through the console: an admin key's stream, which saw every order.
    let (staff_id, staff) = app.key(Role::Admin, Plan::Pro, None).await;
    let (_, console) = app.session(Role::Admin).await;
    let mut stream = opened(open_events(&app, &[("authorization", &format!("Bearer {staff}"))]).await).await;
    let revoked = app.call_fn(Some(&console), "staff_revoke_key", &format!("id={staff_id}")).await;
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.text);
    app.pet("Bella", dogs, None).await;
    let (ended, text) = until_it_ends(&mut stream, WITHIN).await;
    assert!(ended && !text.contains("pet.created"), "{ended}: {text}");

    // Revoked behind the process's back (another server, `server keys revoke`): seen
    // within the second the authenticator believes a key.
    let (other_id, other) = app.key(Role::Customer, Plan::Pro, None).await;
    let mut stream = opened(open_events(&app, &[("x-api-key", &other)]).await).await;
    behind_the_services(&app, "UPDATE api_keys SET revoked_at = 1 WHERE id = $1", other_id).await;
    let (ended, text) = until_it_ends(&mut stream, WITHIN).await;
    assert!(ended, "the stream is still open: {text}");

    // A browser session's stream (the docs page's): signing out ends it.
    let (_, key) = app.key(Role::Customer, Plan::Pro, None).await;
    let cookie = session_cookie(&app.call_fn(None, "sign_in", &format!("key={key}")).await);
    let same_origin = [("cookie", cookie.as_str()), ("sec-fetch-site", "same-origin")];
    let mut stream = opened(open_events(&app, &same_origin).await).await;
    assert_eq!(app.call_fn(Some(&cookie), "sign_out", "").await.status, StatusCode::OK);
    app.pet("Max", dogs, None).await;
    let (ended, text) = until_it_ends(&mut stream, WITHIN).await;
    assert!(ended && !text.contains("pet.created"), "{ended}: {text}");

    // A key that still works keeps its stream.
    let (_, kept) = app.key(Role::Customer, Plan::Pro, None).await;
    let mut stream = opened(open_events(&app, &[("x-api-key", &kept)]).await).await;
    app.pet("Luna", dogs, None).await;
    let (ended, text) = until_it_ends(&mut stream, std::time::Duration::from_secs(1)).await;
    assert!(!ended && text.contains("pet.created"), "{ended}: {text}");
}

/// Every cookie an answer sets, with a flash's value decoded: none may hold a secret.
#[track_caller]
fn no_secret_in_cookies(reply: &Reply, secrets: &[&str]) {
    for cookie in reply.headers.get_all(header::SET_COOKIE).iter().filter_map(|value| value.to_str().ok()) {
        let value = cookie.split(';').next().unwrap().split_once('=').map_or("", |(_, value)| value);
        let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(value).unwrap_or_default();
        let decoded = String::from_utf8_lossy(&decoded);
        for secret in secrets {
            assert!(!cookie.contains(secret) && !decoded.contains(secret), "{cookie} holds {secret}: {decoded}");
        }
    }
}

/// A server function called as a plain HTML form is (no JavaScript), from `page`.
fn plain_form(endpoint: &str, page: &str, cookie: Option<&str>, form: &str) -> Request<Body> {
    let mut request = Request::post(format!("/_app/{endpoint}"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, format!("http://shop.test{page}"));
    if let Some(cookie) = cookie {
        request = request.header(header::COOKIE, cookie);
    }
    request.body(Body::from(form.to_owned())).unwrap()
}

#[tokio::test]
async fn no_secret_leaves_in_a_cookie() {
    let app = TestApp::new().await;
    // Signing in, with and without JavaScript, right or wrong: the typed key is in no
    // cookie (the session's is a token of its own).
    let (_, key) = app.key(Role::Customer, Plan::Pro, None).await;
    let with_js = app.call_fn(None, "sign_in", &format!("key={key}&next=/orders")).await;
    no_secret_in_cookies(&with_js, &[key.as_str()]);
    session_cookie(&with_js);
    for typed in [key.clone(), "psk_0000000000_wrongwrongwrong".to_owned()] {
        let plain = app.send(plain_form("sign_in", "/sign-in", None, &format!("key={typed}"))).await;
        assert_eq!(plain.status, StatusCode::SEE_OTHER);
        no_secret_in_cookies(&plain, &[typed.as_str()]);
    }

    // A new key in the console: with JavaScript the answer is the key itself, with no
    // redirect and no flash; without, the keys page drawn with it. Both `no-store`.
    let (_, console) = app.session(Role::Admin).await;
    let made = app.call_fn(Some(&console), "staff_create_key", "name=partner&role=customer&plan=pro").await;
    let secret = made.body["key"].as_str().expect("the key in the answer").to_owned();
    assert_eq!(made.header("cache-control"), Some("no-store"));
    assert!(made.header("location").is_none() && made.header("serverfnredirect").is_none(), "{:?}", made.headers);
    assert!(made.header("set-cookie").is_none(), "no flash: {:?}", made.headers);
    let plain = app
        .send(plain_form("staff_create_key", "/admin/keys", Some(&console), "name=partner2&role=customer&plan=pro"))
        .await;
    assert_eq!(plain.status, StatusCode::OK, "{}", plain.text);
    assert_eq!(plain.header("cache-control"), Some("no-store"));
    let shown = plain.text.split("id=\"new-key\">").nth(1).and_then(|rest| rest.split('<').next()).unwrap_or("");
    assert!(shown.starts_with("psk_") && shown != secret, "the new key on the page: {}", plain.text);
    assert!(plain.text.contains("partner2"), "the page is drawn after the change");
    no_secret_in_cookies(&plain, &[shown, secret.as_str()]);

    // A webhook's signing secret, registered and rotated, likewise.
    let app = TestApp::with_config(Config { webhooks_allow_private: true, ..Config::default() }).await;
    let (_, console) = app.session(Role::Admin).await;
    let url = "url=http%3A%2F%2F127.0.0.1%3A9%2Fhook&events%5B%5D=*";
    let made = app.call_fn(Some(&console), "staff_save_webhook", url).await;
    let secret = made.body["secret"].as_str().expect("the secret in the answer").to_owned();
    assert!(made.header("location").is_none() && made.header("set-cookie").is_none(), "{:?}", made.headers);
    let plain = app.send(plain_form("staff_save_webhook", "/admin/webhooks", Some(&console), url)).await;
    assert_eq!((plain.status, plain.header("cache-control")), (StatusCode::OK, Some("no-store")), "{}", plain.text);
    assert!(plain.text.contains("id=\"webhook-secret\">whsec_"), "{}", plain.text);
    no_secret_in_cookies(&plain, &["whsec_", secret.as_str()]);
    let id = made.body["id"].as_i64().unwrap();
    let rotate = format!("id={id}&action=rotate");
    let rotated = app.send(plain_form("staff_webhook_action", "/admin/webhooks", Some(&console), &rotate)).await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.text);
    assert!(rotated.text.contains("id=\"webhook-secret\">whsec_"), "{}", rotated.text);
    no_secret_in_cookies(&rotated, &["whsec_"]);

    // Signing up without JavaScript: the sign-up page, drawn with the key and signed in.
    let signed_up = app.send(plain_form("sign_up", "/sign-up", None, "name=no-js")).await;
    assert_eq!((signed_up.status, signed_up.header("cache-control")), (StatusCode::OK, Some("no-store")));
    assert!(signed_up.text.contains("id=\"new-key\">psk_"), "{}", signed_up.text);
    no_secret_in_cookies(&signed_up, &["psk_"]);
    let cookie = session_cookie(&signed_up);
    let orders = app.send(Request::get("/orders").header(header::COOKIE, &cookie).body(Body::empty()).unwrap()).await;
    assert!(orders.text.contains("My orders"), "signed in with the new key");
}

#[tokio::test]
async fn failed_sign_ins_leave_the_address_its_public_reads_and_sign_ups() {
    let app = TestApp::new().await;
    let mut last = None;
    for n in 0..75 {
        let reply = app.call_fn(None, "sign_in", &format!("key=psk_0000000000_wrong{n}")).await;
        last = reply.body["code"].as_str().map(str::to_owned);
    }
    assert_eq!(last.as_deref(), Some("temporarily_banned"), "guessing is throttled, then banned");
    // An empty key counts as a failed attempt too (banned now).
    app.call_fn(None, "sign_in", "key=").await.assert_error(429, "temporarily_banned");
    assert_eq!(app.request_as(None, Method::GET, "/api/v1/openapi.json", None).await.status, StatusCode::OK);
    assert_eq!(app.request_as(None, Method::POST, "/api/v1/keys", None).await.status, StatusCode::CREATED);
    assert_eq!(app.call_fn(None, "sign_up", "").await.status, StatusCode::OK);
    // A right key is the key's own request: it signs in.
    let (_, key) = app.key(Role::Customer, Plan::Pro, None).await;
    assert_eq!(app.call_fn(None, "sign_in", &format!("key={key}")).await.status, StatusCode::OK);
}

#[tokio::test]
async fn one_network_cannot_take_every_live_stream() {
    let app = TestApp::new().await;
    // One /48 (a cheap server's allocation): sixteen streams a /64, sixty-four a /56,
    // two hundred and fifty-six in all.
    let mut crowd = Vec::new();
    for block in 0..4 {
        for net in 0..4 {
            for host in 0..16 {
                let ip = format!("2001:db8:7:{block:x}{net:02x}::{host:x}");
                let response = open_from(&app, "/live", &ip, &[]).await;
                assert_eq!(response.status(), StatusCode::OK, "{ip}");
                crowd.push(response);
            }
        }
    }
    // Its /64s, /56s and the /48 itself are full.
    for ip in ["2001:db8:7:0::ff", "2001:db8:7:3::1", "2001:db8:7:400::1"] {
        let refused = open_from(&app, "/live", ip, &[]).await;
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS, "{ip}");
    }
    assert_eq!(open_from(&app, "/live", "2001:db8:8::1", &[]).await.status(), StatusCode::OK, "another /48");
    assert_eq!(open_from(&app, "/live", "198.51.100.7", &[]).await.status(), StatusCode::OK);

    // The whole budget, taken by eight /48s (the first holding most): a visitor from a
    // ninth still gets a stream, and the oldest stream of the network holding most
    // gives way (it ends).
    for network in 9..17 {
        for n in 0..255 {
            if state_count(&app) == 2_000 {
                break;
            }
            let ip = format!("2001:db8:{network:x}:{:x}{:02x}::{:x}", n / 64, n / 16 % 4, n % 16);
            let response = open_from(&app, "/live", &ip, &[]).await;
            assert_eq!(response.status(), StatusCode::OK, "{ip}");
            crowd.push(response);
        }
    }
    assert_eq!(state_count(&app), 2_000);
    let newcomer = open_from(&app, "/live", "203.0.113.9", &[]).await;
    assert_eq!(newcomer.status(), StatusCode::OK);
    let mut oldest = crowd.remove(0).into_body();
    let (ended, _) = until_it_ends(&mut oldest, WITHIN).await;
    assert!(ended, "the oldest stream of the largest network ended");

    // The API's streams are bounded per address too, whatever the keys.
    let mut open = Vec::new();
    for _ in 0..16 {
        let (_, key) = app.key(Role::Customer, Plan::Free, None).await;
        let response = open_from(&app, "/api/v1/events", "192.0.2.44", &[("x-api-key", &key)]).await;
        assert_eq!(response.status(), StatusCode::OK);
        open.push(response);
    }
    let (_, key) = app.key(Role::Customer, Plan::Free, None).await;
    let refused = open_from(&app, "/api/v1/events", "192.0.2.44", &[("x-api-key", &key)]).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
}

/// Streams of the storefront open now.
fn state_count(app: &TestApp) -> usize {
    app.state.live_streams.taken()
}

#[tokio::test]
async fn resuming_from_before_the_first_event_replays_a_day_at_most() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let old = app.pet("Old", dogs, None).await;
    // Its events are three days old now.
    let three_days_ago = app::services::events::now_ms() - 3 * 24 * 3_600_000;
    behind_the_services(&app, "UPDATE events SET created_at = $1", three_days_ago).await;
    let recent = app.pet("Recent", dogs, None).await;
    let (_, key) = app.key(Role::Customer, Plan::Pro, None).await;
    let first = app::services::events::BEFORE_THE_FIRST;
    let response = open_events(&app, &[("x-api-key", &key), ("last-event-id", first)]).await;
    let mut body = response.into_body();
    let (_, text) = until_it_ends(&mut body, std::time::Duration::from_secs(1)).await;
    assert!(text.contains(&format!("\"id\":{recent},")), "the day's events: {text}");
    assert!(!text.contains(&format!("\"id\":{old},")), "none older than a day: {text}");
}

#[tokio::test]
async fn a_client_s_bytes_in_x_forwarded_for_spoil_only_its_own_hops() {
    let proxies = vec!["10.0.0.0/8".parse().unwrap()];
    let app = TestApp::with_config(Config { trusted_proxies: proxies, ..Config::default() }).await;
    let forwarded = |value: &[u8]| {
        let request = Request::get("/api/v1/openapi.json")
            .header("x-forwarded-for", axum::http::HeaderValue::from_bytes(value).unwrap())
            .body(Body::empty())
            .unwrap();
        from("10.0.0.7", request)
    };
    // Not ASCII at the client's end: still counted as the client our proxy named.
    let reply = app.send(forwarded(b"\xff\xfe 6.6.6.6, 203.0.113.9")).await;
    assert_eq!(reply.header("x-ratelimit-remaining"), Some("59"));
    let reply = app.send(forwarded(b"203.0.113.9")).await;
    assert_eq!(reply.header("x-ratelimit-remaining"), Some("58"), "one client, 203.0.113.9");
    // The proxy itself was never counted (a banned client could not pass as it).
    let reply = app.send(from("10.0.0.7", Request::get("/api/v1/openapi.json").body(Body::empty()).unwrap())).await;
    assert_eq!(reply.header("x-ratelimit-remaining"), Some("59"), "the proxy's own count is untouched");
}

#[tokio::test]
async fn webhooks_cannot_reach_local_nat64_or_translated_loopback() {
    let app = TestApp::new().await;
    for url in ["http://[64:ff9b:1::a00:1]/hook", "http://[::ffff:0:7f00:1]/hook", "http://[::ffff:0:a9fe:a9fe]/"] {
        let reply = app.post("/api/v1/webhooks", json!({ "url": url, "events": ["*"] })).await;
        reply.assert_error(422, "invalid_webhook_url");
    }
}

#[tokio::test]
async fn a_failed_delivery_does_not_repeat_its_url() {
    let app = TestApp::with_config(Config { webhooks_allow_private: true, ..Config::default() }).await;
    // Nothing listens on port 9 of loopback: the connection is refused.
    let hook = app
        .post("/api/v1/webhooks", json!({ "url": "http://127.0.0.1:9/hooks/T0KEN-in-the-path", "events": ["*"] }))
        .await;
    let id = hook.body["id"].as_i64().unwrap();
    app.post(&format!("/api/v1/webhooks/{id}/test"), json!({})).await;
    let error = common::eventually(async || {
        let log = app.get(&format!("/api/v1/webhooks/{id}/deliveries")).await;
        let failed = log.body.as_array().and_then(|list| list.iter().find_map(|attempt| attempt["error"].as_str()));
        failed.map(str::to_owned).ok_or(log.text)
    })
    .await;
    assert!(error.starts_with("could not connect"), "{error}");
    assert!(!error.contains("T0KEN"), "{error}");
}

// The probes that held, kept.

#[tokio::test]
async fn path_tricks_on_static_files_are_404() {
    let app = TestApp::new().await;
    for path in [
        "/pkg/../Cargo.toml",
        "/pkg/%2e%2e/Cargo.toml",
        "/pkg/..%2fCargo.toml",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/pkg/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "/favicon.svg/../../Cargo.toml",
    ] {
        let Ok(request) = Request::get(path).body(Body::empty()) else { continue };
        let reply = app.send(request).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{path}: {}", reply.text);
        assert!(!reply.text.contains("[workspace]") && !reply.text.contains("root:"), "{path}");
    }
}

#[tokio::test]
async fn idempotency_records_belong_to_their_key() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let rex = app.pet("Rex", dogs, None).await;
    app.put(&format!("/api/v1/store/inventory/{rex}"), json!({ "quantity": 5 })).await;
    let (_, alice) = app.key(Role::Customer, Plan::Pro, None).await;
    let (_, bob) = app.key(Role::Customer, Plan::Pro, None).await;
    let order = |key: &str| {
        Request::post("/api/v1/store/orders")
            .header("x-api-key", key)
            .header("idempotency-key", "same-key")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(json!({ "petId": rex, "quantity": 1 }).to_string()))
            .unwrap()
    };
    let first = app.send(order(&alice)).await;
    let second = app.send(order(&bob)).await;
    assert_eq!((first.status, second.status), (StatusCode::CREATED, StatusCode::CREATED));
    assert_ne!(first.body["id"], second.body["id"], "Bob's key is not Alice's replay");
    app.request_as(Some(&bob), Method::GET, &format!("/api/v1/store/orders/{}", first.body["id"]), None)
        .await
        .assert_error(404, "not_found");
}
