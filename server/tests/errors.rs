//! The router's own answers: unknown paths, wrong methods, and that every error under
//! /api/v1 is the JSON Error object, never text or HTML.

mod common;

use axum::http::Method;
use common::TestApp;

#[tokio::test]
async fn unknown_api_paths_are_json_404s() {
    let app = TestApp::new().await;
    for path in [
        "/api/v1/nope",
        "/api/v1",
        "/api/v1/",
        "/api/v2/pets",
        "/api",
        "/api/v1/pets/1/photos",
        "/api/v1/store",
        "/api/v1/store/orders/x/y",
    ] {
        let message = app.get(path).await.assert_error(404, "not_found").to_owned();
        assert!(message.contains("no API resource"), "{path}: {message}");
    }
}

#[tokio::test]
async fn wrong_methods_are_json_405s_with_allow() {
    let app = TestApp::new().await;
    for (method, path, allowed) in [
        (Method::PATCH, "/api/v1/pets", "GET,HEAD,POST"),
        (Method::POST, "/api/v1/pets/1", "GET,HEAD,PUT,DELETE"),
        (Method::DELETE, "/api/v1/store/inventory", "GET,HEAD"),
        (Method::POST, "/api/v1/openapi.json", "GET,HEAD"),
    ] {
        let reply = app.request(method.clone(), path, None).await;
        reply.assert_error(405, "method_not_allowed");
        let mut allow: Vec<&str> = reply.header("allow").unwrap_or_default().split(',').map(str::trim).collect();
        let mut expected: Vec<&str> = allowed.split(',').collect();
        allow.sort();
        expected.sort();
        assert_eq!(allow, expected, "{method} {path}");
    }
}

#[tokio::test]
async fn chunked_bodies_over_the_limit_are_413() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    // A streamed body has no Content-Length: the limit must still hold.
    let big = format!("{{\"name\": \"{}\", \"categoryId\": {dogs}}}", "x".repeat(80 * 1024));
    let chunks: Vec<Result<String, std::io::Error>> =
        big.as_bytes().chunks(4096).map(|c| Ok(String::from_utf8_lossy(c).into_owned())).collect();
    let body = axum::body::Body::from_stream(futures::stream::iter(chunks));
    app.raw(Method::POST, "/api/v1/pets", Some("application/json"), body).await.assert_error(413, "payload_too_large");
    assert_eq!(app.count("pets").await, 0);
}

#[tokio::test]
async fn a_declared_oversized_body_is_a_json_413() {
    let app = TestApp::new().await;
    // Content-Length over the limit: the limit layer answers before any handler.
    let request = axum::http::Request::post("/api/v1/categories")
        .header("content-type", "application/json")
        .header("content-length", "71680")
        .header("x-api-key", &app.admin)
        .body(axum::body::Body::from(vec![b' '; 71680]))
        .unwrap();
    app.send(request).await.assert_error(413, "payload_too_large");
    assert_eq!(app.count("categories").await, 0);
}

#[tokio::test]
async fn storefront_pages_stay_html() {
    let app = TestApp::new().await;
    let reply = app.get("/no/such/page").await;
    assert_eq!(reply.status.as_u16(), 404);
    assert!(reply.header("content-type").unwrap_or_default().starts_with("text/html"), "{:?}", reply.headers);
}

/// Building the app (another test's, or a restart's) while a page renders must not stall
/// that page: leptos marks route-list generation with a process-wide flag, and a
/// resource first polled while it is set never loads (leptos issue #4773), so the
/// route list is generated once per process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_render_while_another_app_is_built() {
    let app = TestApp::new().await;
    let state = app.state.clone();
    let building = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let runtime = tokio::runtime::Handle::current();
    let builder = std::thread::spawn({
        let building = building.clone();
        move || {
            let _inside = runtime.enter(); // building spawns leptos tasks
            let options = leptos::prelude::LeptosOptions::builder().output_name("petstore").build();
            while building.load(std::sync::atomic::Ordering::Relaxed) {
                drop(server::app(state.clone(), options.clone()));
            }
        }
    });
    for round in 0..200 {
        let reply = tokio::time::timeout(std::time::Duration::from_secs(5), app.get("/no/such/page")).await;
        let reply = reply.unwrap_or_else(|_| panic!("round {round}: the 404 page stalled"));
        assert_eq!(reply.status.as_u16(), 404, "round {round}");
    }
    building.store(false, std::sync::atomic::Ordering::Relaxed);
    builder.join().unwrap();
}
