//! The operator's side: probes, metrics, request ids, security headers, compression,
//! timeouts and the cross-site refusal of server functions.

mod common;

use std::time::Duration;

use app::model::{Plan, Role};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use common::TestApp;
use serde_json::json;
use server::Config;

#[tokio::test]
async fn health_and_readiness_answer_without_a_key() {
    let app = TestApp::new().await;
    let health = app.request_as(None, Method::GET, "/healthz", None).await;
    assert_eq!((health.status, health.body["status"].as_str()), (StatusCode::OK, Some("ok")));
    let ready = app.request_as(None, Method::GET, "/readyz", None).await;
    assert_eq!((ready.status, ready.body["status"].as_str()), (StatusCode::OK, Some("ready")));
    assert!(ready.header("x-ratelimit-limit").is_none(), "probes are not rate-limited");

    app.db.close().await;
    // The Error object, naming the dependency that failed; ask again in a second.
    let ready = app.request_as(None, Method::GET, "/readyz", None).await;
    assert_eq!(ready.status, StatusCode::SERVICE_UNAVAILABLE, "{}", ready.text);
    assert_eq!((ready.body["code"].as_str(), ready.body["status"].as_u64()), (Some("unavailable"), Some(503)));
    assert_eq!(ready.body["dependency"].as_str(), Some("database"), "{}", ready.text);
    assert_eq!(ready.header("retry-after"), Some("1"));
    assert_eq!(app.request_as(None, Method::GET, "/healthz", None).await.status, StatusCode::OK);
}

#[tokio::test]
async fn metrics_need_an_admin_key_and_count_requests_by_route() {
    let app = TestApp::new().await;
    let (_, customer) = app.key(Role::Customer, Plan::Free, None).await;
    app.request_as(None, Method::GET, "/metrics", None).await.assert_error(401, "missing_api_key");
    let refused = app.send(bearer("/metrics", &customer)).await;
    refused.assert_error(403, "forbidden");

    let category = app.category("Metrics").await;
    let pet = app.pet("Counted", category, None).await;
    app.put(&format!("/api/v1/store/inventory/{pet}"), json!({ "quantity": 3 })).await;
    let order = app.post("/api/v1/store/orders", json!({ "petId": pet, "quantity": 1 })).await;
    assert_eq!(order.status, StatusCode::CREATED, "{}", order.text);
    app.get(&format!("/api/v1/pets/{pet}")).await;
    // Answers made before the API's router are counted under their route too: the
    // guard's refusal of a request without a key, and a path no route has.
    app.request_as(None, Method::GET, &format!("/api/v1/pets/{pet}"), None).await.assert_error(401, "missing_api_key");
    app.get("/api/v2/pets").await.assert_error(404, "not_found");
    // And the site's routes, which its router names.
    assert_eq!(app.request_as(None, Method::GET, "/categories", None).await.status, StatusCode::OK);

    let scraped = app.send(bearer("/metrics", &app.admin)).await;
    assert_eq!(scraped.status, StatusCode::OK, "{}", scraped.text);
    assert!(scraped.header("content-type").unwrap().starts_with("text/plain; version=0.0.4"));
    let text = &scraped.text;
    for expected in [
        r#"http_requests_total{method="GET",route="/api/v1/pets/{petId}",status="200"}"#,
        r#"http_requests_total{method="POST",route="/api/v1/store/orders",status="201"}"#,
        r#"http_request_duration_seconds_bucket{method="GET",route="/api/v1/pets/{petId}",status="200",le="0.005"}"#,
        r#"http_requests_total{method="GET",route="/api/v1/pets/{petId}",status="401"}"#,
        r#"http_requests_total{method="GET",route="unmatched",status="404"}"#,
        r#"http_requests_total{method="GET",route="/categories",status="200"}"#,
        "petstore_orders_placed_total",
        "petstore_open_orders 1",
        r#"petstore_db_pool_connections{state="idle"}"#,
        "petstore_db_pool_max_connections 8",
        "petstore_banned_subjects 0",
        "petstore_db_writes_failing 0",
        "petstore_ready 1",
    ] {
        assert!(text.contains(expected), "missing {expected} in:\n{text}");
    }
    // Every metric says what it is (promtool's check wants a HELP line per family).
    for line in text.lines().filter(|line| !line.starts_with('#') && !line.is_empty()) {
        let name = line.split(['{', ' ']).next().unwrap();
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix).filter(|f| text.contains(&format!("# TYPE {f} histogram"))))
            .unwrap_or(name);
        assert!(text.contains(&format!("# HELP {family} ")), "no HELP for {family} in:\n{text}");
    }
    // Raw paths never become labels (ids would make series without end).
    assert!(!text.contains(&format!("/api/v1/pets/{pet}\"")), "{text}");
}

/// The scrape token reads `/metrics` (with the process's own series, the build's
/// release and commit, and every counter at 0 before its first event) and nothing else:
/// on the API it is no key at all. A wrong token is refused like a wrong key.
#[tokio::test]
async fn a_metrics_token_reads_the_metrics_and_nothing_else() {
    let token = "scrape-0123456789abcdef0123456789abcdef";
    let config =
        Config { metrics_token: Some(server::config::parse_metrics_token(token).unwrap()), ..Config::default() };
    let app = TestApp::with_config(config).await;
    let scraped = app.send(bearer("/metrics", token)).await;
    assert_eq!(scraped.status, StatusCode::OK, "{}", scraped.text);
    let text = &scraped.text;
    let build = format!(r#"petstore_build_info{{version="{}",commit="{}"}} 1"#, server::VERSION, server::COMMIT);
    for expected in [
        build.as_str(),
        "process_cpu_seconds_total ",
        "process_resident_memory_bytes ",
        "process_open_fds ",
        "process_max_fds ",
        "process_start_time_seconds ",
        // Nothing in this suite makes these happen: each is there, at 0.
        "\npetstore_db_faults_total{kind=\"full\"} 0\n",
        "\npetstore_db_faults_total{kind=\"busy\"} 0\n",
        "\npetstore_webhook_deliveries_total{outcome=\"failed\"} 0\n",
        "\npetstore_rate_limited_total{code=\"temporarily_banned\"} 0\n",
        "\npetstore_backup_failures_total 0\n",
        "\npetstore_bans_total 0\n",
    ] {
        assert!(text.contains(expected), "missing {expected} in:\n{text}");
    }
    let commit = server::COMMIT;
    assert!(commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit()), "built from a checkout: {commit}");

    let wrong = app.send(bearer("/metrics", "scrape-0123456789abcdef0123456789abcdeX")).await;
    wrong.assert_error(401, "invalid_api_key");
    for (method, path) in [(Method::GET, "/api/v1/store/inventory"), (Method::DELETE, "/api/v1/pets/1")] {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap();
        app.send(request).await.assert_error(401, "invalid_api_key");
    }
    // Admin keys still read it.
    assert_eq!(app.send(bearer("/metrics", &app.admin)).await.status, StatusCode::OK);
}

fn bearer(path: &str, key: &str) -> Request<Body> {
    Request::get(path).header(header::AUTHORIZATION, format!("Bearer {key}")).body(Body::empty()).unwrap()
}

#[tokio::test]
async fn every_response_has_a_request_id_and_the_clients_own_is_kept() {
    let app = TestApp::new().await;
    let made = app.get("/api/v1/pets").await;
    let id = made.header("x-request-id").expect("a request id");
    assert_eq!(id.len(), 36, "a UUID: {id}");
    let other = app.get("/api/v1/pets").await;
    assert_ne!(other.header("x-request-id"), Some(id));

    let kept =
        app.send(Request::get("/healthz").header("x-request-id", "trace-me-42").body(Body::empty()).unwrap()).await;
    assert_eq!(kept.header("x-request-id"), Some("trace-me-42"));
}

#[tokio::test]
async fn security_headers_are_on_api_answers_pages_and_errors() {
    let app = TestApp::new().await;
    for path in ["/api/v1/pets", "/api/v1/nothing", "/healthz", "/", "/no-such-page"] {
        let reply = app.get(path).await;
        assert_eq!(reply.header("x-content-type-options"), Some("nosniff"), "{path}");
        assert_eq!(reply.header("referrer-policy"), Some("strict-origin-when-cross-origin"), "{path}");
        let csp = reply.header("content-security-policy").unwrap_or_else(|| panic!("{path}: no CSP"));
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert!(!csp.contains("unsafe-inline"), "{path}: {csp}");
    }
    // Pages (the docs and the 404 page too) name the nonce that every one of their
    // inline scripts carries; none goes without.
    for path in ["/", "/docs", "/no-such-page", "/pkg/no-such-file.css", "/_app/no_such_function"] {
        let page = app.get(path).await;
        assert_eq!(page.header("cache-control"), Some("private, no-cache"), "{path}");
        let csp = page.header("content-security-policy").unwrap();
        let nonce = csp.split("'nonce-").nth(1).and_then(|rest| rest.split('\'').next()).expect("a nonce in the CSP");
        assert!(nonce.len() >= 16, "{path}: {csp}");
        let scripts = page.text.matches("<script").count();
        assert!(scripts > 0, "{path}");
        assert_eq!(page.text.matches(&format!("nonce=\"{nonce}\"")).count(), scripts, "{path}: {}", page.text);
    }
    let page = app.get("/").await;
    let nonce = page.header("content-security-policy").unwrap().split("'nonce-").nth(1).unwrap().to_owned();
    let again = app.get("/").await;
    assert!(!again.header("content-security-policy").unwrap().contains(&nonce), "a fresh nonce per page");
}

#[tokio::test]
async fn responses_are_compressed_when_the_client_accepts_it() {
    let app = TestApp::new().await;
    for path in ["/", "/api/v1/openapi.json"] {
        let reply =
            app.send(Request::get(path).header(header::ACCEPT_ENCODING, "gzip").body(Body::empty()).unwrap()).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}");
        assert_eq!(reply.header("content-encoding"), Some("gzip"), "{path}");
        let vary: Vec<&str> = reply.headers.get_all(header::VARY).iter().map(|v| v.to_str().unwrap()).collect();
        // The API's answers also depend on `Origin` (its CORS headers).
        let expected: &[&str] = if path == "/" { &["accept-encoding"] } else { &["origin", "accept-encoding"] };
        assert_eq!(vary, expected, "{path}");
    }
    assert_eq!(app.get("/api/v1/openapi.json").await.header("content-encoding"), None);
    // A page sent uncompressed still tells shared caches it has other versions.
    let page = app.get("/").await;
    assert_eq!(page.header("content-encoding"), None);
    assert_eq!(page.header("vary"), Some("accept-encoding"));
}

#[tokio::test]
async fn server_functions_refuse_cross_site_calls() {
    let app = TestApp::new().await;
    let call = |site: Option<&'static str>, origin: Option<&'static str>| {
        let mut builder = Request::post("/_app/sign_out")
            .header(header::HOST, "shop.test")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some(site) = site {
            builder = builder.header("sec-fetch-site", site);
        }
        if let Some(origin) = origin {
            builder = builder.header(header::ORIGIN, origin);
        }
        builder.body(Body::empty()).unwrap()
    };
    app.send(call(Some("cross-site"), Some("http://evil.test"))).await.assert_error(403, "forbidden");
    app.send(call(None, Some("http://evil.test"))).await.assert_error(403, "forbidden");
    for allowed in [call(Some("same-origin"), Some("http://shop.test")), call(None, Some("http://shop.test"))] {
        let reply = app.send(allowed).await;
        assert_ne!(reply.status, StatusCode::FORBIDDEN, "{}", reply.text);
    }
}

#[tokio::test]
async fn a_body_that_trickles_in_is_cut_off_with_408_and_changes_nothing() {
    let app = TestApp::with_config(Config { request_timeout: Duration::from_secs(1), ..Config::default() }).await;
    let before = app.count("categories").await;
    // A valid body, one byte every 200 ms: never idle for long, but 5 s in all.
    let body = br#"{"name":"Slow lorises are here"}"#.to_vec();
    let chunks =
        futures::stream::iter(body.into_iter().map(|b| Ok::<_, std::io::Error>(vec![b]))).then(|chunk| async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            chunk
        });
    let request = Request::post("/api/v1/categories")
        .header("x-api-key", &app.admin)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(chunks))
        .unwrap();
    let started = std::time::Instant::now();
    let reply = app.send(request).await;
    reply.assert_error(408, "request_timeout");
    assert!(started.elapsed() < Duration::from_secs(3), "cut off at the deadline, not when the body ended");
    assert_eq!(app.count("categories").await, before);
}

use futures::StreamExt;

#[tokio::test]
async fn server_function_errors_carry_their_own_status() {
    let app = TestApp::new().await;
    let request = Request::post("/_app/place_order")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("pet_id=1&quantity=1"))
        .unwrap();
    app.send(request).await.assert_error(401, "missing_api_key");
    let bad_args = Request::post("/_app/place_order")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("pet_id=one"))
        .unwrap();
    let reply = app.send(bad_args).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.text);
}
