//! The OpenAPI document: its fixed facts, and that it and the router describe the
//! same set of operations, both ways.

mod common;

use std::collections::BTreeSet;

use axum::http::Method;
use common::TestApp;
use serde_json::Value;
use server::Config;

// OPTIONS is left out: the CORS layer answers every preflight (an OPTIONS with an
// Origin) before routing; the API has no OPTIONS operation of its own.
const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

async fn document(app: &TestApp) -> Value {
    let reply = app.get("/api/v1/openapi.json").await;
    assert_eq!(reply.status.as_u16(), 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    reply.body
}

fn documented(doc: &Value) -> BTreeSet<(String, String)> {
    let mut operations = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in METHODS {
            if item.get(method).is_some() {
                operations.insert((method.to_owned(), path.clone()));
            }
        }
    }
    operations
}

#[tokio::test]
async fn document_facts() {
    let app = TestApp::new().await;
    let doc = document(&app).await;
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], "1.0.0");
    assert_eq!(doc["servers"][0]["url"], "/api/v1");
    let tags: Vec<&str> = doc["tags"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(tags, ["Pets", "Store", "Meta"]);
    assert!(doc["info"]["contact"]["url"].as_str().unwrap().ends_with("/docs"));

    for (method, path) in documented(&doc) {
        let operation = &doc["paths"][&path][&method];
        let stability = if (method.as_str(), path.as_str()) == ("post", "/keys") { "beta" } else { "stable" };
        assert_eq!(operation["x-stability"], stability, "{method} {path}");
        // Every operation states how to authenticate: the document itself, with none.
        let security = operation["security"].as_array().unwrap_or_else(|| panic!("{method} {path}: no security"));
        assert_eq!(security.is_empty(), path == "/openapi.json", "{method} {path}");
        // Every answer may carry the rate-limit headers; 429 says when to retry, 401 how
        // to authenticate; every operation documents 405, 500 and 503 as Error objects.
        for (status, response) in operation["responses"].as_object().unwrap() {
            let response = match response.get("$ref").and_then(Value::as_str) {
                Some(name) => &doc["components"]["responses"][name.rsplit('/').next().unwrap()],
                None => response,
            };
            let headers = response["headers"].as_object().unwrap_or_else(|| panic!("{method} {path} {status}"));
            assert!(headers.contains_key("X-RateLimit-Remaining"), "{method} {path} {status}");
            assert_eq!(headers.contains_key("Retry-After"), status == "429", "{method} {path} {status}");
            assert_eq!(headers.contains_key("WWW-Authenticate"), status == "401", "{method} {path} {status}");
        }
        for status in ["405", "500", "503"] {
            assert!(operation["responses"][status].is_object(), "{method} {path} {status}");
        }
        let deprecated = operation["deprecated"].as_bool().unwrap_or(false);
        assert_eq!(deprecated, method == "get" && path == "/pets/{petId}", "{method} {path}");
        if path != "/openapi.json" {
            let tag = operation["tags"][0].as_str().unwrap_or_default();
            assert!(tag == "Pets" || tag == "Store", "{method} {path} has tag {tag:?}");
        } else {
            assert_eq!(operation["tags"][0], "Meta");
        }
        assert!(operation["description"].as_str().is_some_and(|d| !d.is_empty()), "{method} {path}: no description");
        // Parameters are sent or not, never null.
        for parameter in operation["parameters"].as_array().into_iter().flatten() {
            let types = parameter["schema"].get("type").map(Value::to_string).unwrap_or_default();
            assert!(!types.contains("null"), "{method} {path}: {parameter}");
        }
    }
    assert_eq!(doc["paths"]["/pets/{petId}"]["get"]["x-sunset"], "2027-06-30");
    // Only the order listing (the spec's rule) and the photo upload (a file, which the
    // panel cannot send) hide the docs page's try-it panel.
    for (method, path) in documented(&doc) {
        let hidden = doc["paths"][&path][&method].get("x-hideTryItPanel").cloned();
        let expected =
            matches!((method.as_str(), path.as_str()), ("get", "/store/orders") | ("put", "/pets/{petId}/photo"))
                .then_some(serde_json::json!(true));
        assert_eq!(hidden, expected, "{method} {path}");
    }
    assert!(doc["components"]["schemas"]["Error"].is_object());
    // Every endpoint with a JSON body documents the body errors, in the Error shape.
    for (method, path) in documented(&doc) {
        let operation = &doc["paths"][&path][&method];
        if operation.get("requestBody").is_none() {
            continue;
        }
        for status in ["400", "413", "415", "422"] {
            let schema = &operation["responses"][status]["content"]["application/json"]["schema"]["$ref"];
            assert_eq!(schema, "#/components/schemas/Error", "{method} {path} {status}");
        }
    }
    // What the server always sends is required: a pet's photoUrls (empty when it has
    // none), a delivery's answer (null when there was none).
    assert_eq!(
        doc["components"]["schemas"]["Pet"]["required"],
        serde_json::json!(["id", "name", "categoryId", "status", "photoUrls"])
    );
    let delivery = doc["components"]["schemas"]["Delivery"]["required"].as_array().unwrap();
    for always in ["responseStatus", "durationMs", "error", "nextAttemptAt"] {
        assert!(delivery.contains(&serde_json::json!(always)), "Delivery.{always}");
    }
    // What it leaves out is absent, never null: in every schema it sends, an optional
    // property does not admit null (a required one may: ApiKey.revokedAt).
    let mut optional = 0;
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        let sent = !name.starts_with("New")
            && !name.ends_with("Update")
            && !["SignUp", "OrderCompletion"].contains(&name.as_str());
        let required = schema["required"].as_array().cloned().unwrap_or_default();
        for (property, definition) in schema["properties"].as_object().into_iter().flatten() {
            if sent && !required.contains(&serde_json::json!(property)) {
                optional += 1;
                assert!(
                    !definition.to_string().contains("\"null\""),
                    "{name}.{property} is optional and nullable: {definition}"
                );
            }
        }
    }
    assert!(optional >= 8, "Pet.price, Order.total, …: {optional}");
    // A request's null still means "remove".
    assert_eq!(
        doc["components"]["schemas"]["NewPet"]["properties"]["price"]["type"],
        serde_json::json!(["integer", "null"])
    );
    // An error code a later release adds must not break a client built on this document.
    let code = &doc["components"]["schemas"]["Error"]["properties"]["code"];
    assert_eq!(code["anyOf"], serde_json::json!([{"$ref": "#/components/schemas/ErrorCode"}, {"type": "string"}]));
    // A photo may be sent as bytes, which generators know how to send.
    let photo = &doc["paths"]["/pets/{petId}/photo"]["put"]["requestBody"]["content"];
    assert_eq!(photo["application/octet-stream"]["schema"]["format"], "binary");
    // The stream is marked, for generators and their users to read it as a stream.
    assert_eq!(doc["paths"]["/events"]["get"]["x-streaming"], true);
    // Sign-up: anonymous first, a body generated clients send (`{}`), and both shapes
    // described.
    let create_key = &doc["paths"]["/keys"]["post"];
    assert_eq!(create_key["security"][0], serde_json::json!({}));
    assert_eq!(create_key["requestBody"]["required"], true);
    let shapes = &create_key["requestBody"]["content"]["application/json"]["schema"]["oneOf"];
    assert_eq!(
        shapes,
        &serde_json::json!([{"$ref": "#/components/schemas/SignUp"}, {"$ref": "#/components/schemas/NewApiKey"}])
    );
    assert!(doc["components"]["schemas"]["SignUp"].is_object());
    let key = &doc["components"]["schemas"]["ApiKey"];
    assert_eq!(key["properties"]["createdAt"]["format"], "date-time");
    assert_eq!(key["properties"]["revokedAt"]["format"], "date-time");
    assert!(key["required"].as_array().unwrap().contains(&serde_json::json!("revokedAt")));
    // Written for third parties: nothing about this repository's files or code.
    let text = doc.to_string();
    assert!(!text.contains("contract.md") && !text.contains("status()"), "internal references");
}

/// The store's currency, for clients to read prices by: the euro by default, and with
/// `--currency JPY` the yen, which has no decimals (`x-currency-digits` 0), said the
/// same way in the introduction.
#[tokio::test]
async fn the_document_names_the_store_currency_and_its_decimals() {
    let doc = document(&TestApp::new().await).await;
    assert_eq!(doc["info"]["x-currency"], "EUR");
    assert_eq!(doc["info"]["x-currency-digits"], 2);
    let intro = doc["info"]["description"].as_str().unwrap();
    assert!(intro.contains("(EUR, with 2 decimals: 12900 is written `€129.00`)"), "{intro}");

    // As an operator sets it: the flag (any case), read by the server's own parser.
    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        config: Config,
    }
    let command = <Cli as clap::CommandFactory>::command().mut_args(|arg| arg.env(None));
    let matches = command.try_get_matches_from(["server", "--currency", "jpy"]).unwrap();
    let config = <Config as clap::FromArgMatches>::from_arg_matches(&matches).unwrap();
    let doc = document(&TestApp::with_config(config).await).await;
    assert_eq!(doc["info"]["x-currency"], "JPY");
    assert_eq!(doc["info"]["x-currency-digits"], 0);
    let intro = doc["info"]["description"].as_str().unwrap();
    assert!(intro.contains("(JPY, with 0 decimals: 12900 is written `¥12,900`)"), "{intro}");
    assert!(!intro.contains("EUR"), "{intro}");
}

/// A request reaches a handler unless the router's own fallbacks answer it (their 404
/// says "no API resource"; every 405 is theirs).
async fn served(app: &TestApp, method: &str, path: &str) -> bool {
    let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
    let reply = app.request(method, &format!("/api/v1{path}"), None).await;
    let fallback_404 =
        reply.status == 404 && reply.body["message"].as_str().unwrap_or("").starts_with("no API resource");
    !(fallback_404 || reply.status == 405)
}

/// A path template filled with an id that names nothing, so probing changes nothing
/// (a DELETE of an existing key would revoke the test's own).
fn concrete(path: &str) -> String {
    path.split('/').map(|seg| if seg.starts_with('{') { "999999" } else { seg }).collect::<Vec<_>>().join("/")
}

/// Whether a concrete path fits a path template like `/pets/{petId}`.
fn matches(template: &str, path: &str) -> bool {
    let (t, p): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    t.len() == p.len() && t.iter().zip(&p).all(|(t, p)| t.starts_with('{') || t == p)
}

#[tokio::test]
async fn every_documented_operation_is_served_and_nothing_else() {
    let app = TestApp::new().await;
    let doc = document(&app).await;
    let documented = documented(&doc);
    assert!(documented.len() >= 14, "{documented:?}");

    // Documented → served.
    for (method, path) in &documented {
        assert!(served(&app, method, &concrete(path)).await, "{method} {path} is documented but not served");
    }

    // Served → documented: every method on every documented path, on the paths one
    // level up and down, and on a few plausible extras.
    let mut candidates: BTreeSet<String> = BTreeSet::new();
    for (_, path) in &documented {
        let path = concrete(path);
        candidates.insert(path.clone());
        candidates.insert(format!("{path}/999999"));
        candidates.insert(format!("{path}/x"));
        if let Some((parent, _)) = path.rsplit_once('/') {
            candidates.insert(if parent.is_empty() { "/".into() } else { parent.to_owned() });
        }
    }
    for extra in ["/users", "/health", "/docs", "/openapi.yaml"] {
        candidates.insert(extra.into());
    }
    for path in &candidates {
        for method in METHODS {
            if served(&app, method, path).await {
                assert!(
                    documented.iter().any(|(m, template)| m == method && matches(template, path)),
                    "{method} {path} is served but not documented"
                );
            }
        }
    }
}

/// Every operation whose security has no "no key" alternative refuses a request without
/// a key, with an unknown key, and with an unknown `X-API-Key` beside a valid bearer
/// token (one bad credential is never rescued by another). `POST /keys` is sign-up,
/// which needs no key; it still refuses a bad one.
#[tokio::test]
async fn every_operation_that_needs_a_key_refuses_a_missing_or_bad_one() {
    use axum::body::Body;
    use axum::http::{Request, header};
    let app = TestApp::new().await;
    let doc = document(&app).await;
    let unknown = "psk_0000000000_AAAAAAAAAAAAAAAAAAAAAA";
    let mut checked: u8 = 0;
    for (method, path) in documented(&doc) {
        let security = doc["paths"][&path][&method]["security"].as_array().cloned().unwrap_or_default();
        if security.is_empty() {
            continue; // the document itself
        }
        let key_optional = security.iter().any(|s| s.as_object().is_some_and(|o| o.is_empty()));
        let uri = format!("/api/v1{}", concrete(&path));
        // Requests without a valid key count against their IP: one IP per operation
        // keeps them all under the Free plan's 60 a minute.
        let ip = std::net::SocketAddr::from(([10, 0, 0, checked + 1], 40000));
        let request = |extra: &[(&str, &str)]| {
            let mut builder = Request::builder()
                .method(method.to_uppercase().as_str())
                .uri(&uri)
                .extension(axum::extract::ConnectInfo(ip));
            for (name, value) in extra {
                builder = builder.header(*name, *value);
            }
            builder.header(header::CONTENT_TYPE, "application/json").body(Body::from("{}")).unwrap()
        };
        if !key_optional {
            app.send(request(&[])).await.assert_error(401, "missing_api_key");
            app.send(request(&[("x-api-key", "")])).await.assert_error(401, "missing_api_key");
        }
        let bearer = format!("Bearer {}", app.admin);
        app.send(request(&[("x-api-key", unknown)])).await.assert_error(401, "invalid_api_key");
        app.send(request(&[("authorization", &format!("Bearer {unknown}"))]))
            .await
            .assert_error(401, "invalid_api_key");
        app.send(request(&[("x-api-key", unknown), ("authorization", &bearer)]))
            .await
            .assert_error(401, "invalid_api_key");
        if !key_optional {
            let reply = app.send(request(&[("x-api-key", ""), ("authorization", &bearer)])).await;
            reply.assert_error(401, "missing_api_key");
        }
        checked += 1;
    }
    assert_eq!(usize::from(checked), documented(&doc).len() - 1, "every operation but the document's own");
}

/// The docs page's reading of the document: pickers for parameters of few values, and
/// the guide's headings one level under the page's title.
#[tokio::test]
async fn the_reference_offers_pickers_and_keeps_heading_levels() {
    let app = TestApp::new().await;
    let reference = app::reference::ApiReference::build(&document(&app).await);
    let operation = |id: &str| {
        reference.groups.iter().flat_map(|group| group.operations()).find(|op| op.id == id).cloned().unwrap()
    };
    let values = |id: &str, param: &str| {
        operation(id).params.into_iter().find(|p| p.name == param).map(|p| p.values).unwrap_or_default()
    };
    assert_eq!(values("listPets", "status"), ["available", "pending", "sold"]);
    assert_eq!(values("listOrders", "complete"), ["true", "false"]);
    assert!(values("listPets", "q").is_empty());
    assert!(!reference.guide_html.contains("<h3>Rate limits"), "the guide's sections are <h2>");
    assert!(reference.guide_html.contains("<h2 id=\"rate-limits\">Rate limits</h2>"));
    // Inside the seed's two tags, by resource; each general error said once, in the
    // guide, and only named under an operation.
    let resources = |tag: &str| -> Vec<String> {
        let group = reference.groups.iter().find(|group| group.tag == tag).unwrap();
        group.resources.iter().map(|resource| resource.name.clone()).collect()
    };
    assert_eq!(resources("Pets"), ["Pets", "Categories"]);
    assert_eq!(resources("Store"), ["Orders", "Inventory", "Keys", "Events", "Webhooks"]);
    let create_order = operation("placeOrder");
    let statuses: Vec<&str> = create_order.responses.iter().map(|r| r.status.as_str()).collect();
    assert_eq!(statuses, ["201", "409", "422"], "its own answers");
    assert_eq!(
        create_order.general_errors,
        ["400", "401", "403", "405", "408", "413", "415", "429", "500", "503", "507"]
    );
    for code in ["rate_limited", "missing_api_key", "insufficient_storage", "unavailable"] {
        assert!(reference.guide_html.contains(&format!("<code>{code}</code>")), "the guide's Errors name {code}");
    }
}
