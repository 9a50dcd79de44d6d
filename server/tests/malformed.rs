//! A malformed-input corpus sent in-process to every write endpoint of the API: broken
//! JSON, wrong content types, wrong types, out-of-range numbers, over-long and odd
//! strings, unknown and repeated fields, oversized bodies. Each bad request must get
//! the exact Error (status and code) and must leave every table as it was.

mod common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request, StatusCode, header};
use common::{Reply, TestApp};
use serde_json::{Value, json};
use sqlx::{Column, Row, TypeInfo, ValueRef};

const JSON: Option<&str> = Some("application/json");
const LIMIT: usize = 64 * 1024;
const MIB: usize = 1024 * 1024;

// ---------------------------------------------------------------------------------
// Fixtures and the database snapshot
// ---------------------------------------------------------------------------------

/// What the corpus aims at, created before the snapshot so that PUT and PATCH targets
/// exist (a bad body must be refused even where a good one would succeed).
struct Shop {
    app: TestApp,
    dogs: i64,
    cats: i64,
    /// Available, stock 4 after the two orders below.
    rex: i64,
    /// Sold: orders for it are refused.
    sold: i64,
    /// An open order for Rex.
    open: i64,
    /// A completed order for Rex.
    done: i64,
}

async fn shop() -> Shop {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let cats = app.category("Cats").await;
    let rex = app.pet("Rex", dogs, None).await;
    let stocked = app.put(&format!("/api/v1/store/inventory/{rex}"), json!({ "quantity": 6 })).await;
    assert_eq!(stocked.status, StatusCode::OK, "{}", stocked.text);
    let sold = app.pet("Felix", cats, Some("sold")).await;
    let mut orders = Vec::new();
    for _ in 0..2 {
        let placed = app.post("/api/v1/store/orders", json!({ "petId": rex, "quantity": 1 })).await;
        assert_eq!(placed.status, StatusCode::CREATED, "{}", placed.text);
        orders.push(placed.body["id"].as_i64().unwrap());
    }
    let (open, done) = (orders[0], orders[1]);
    let completed =
        app.request(Method::PATCH, &format!("/api/v1/store/orders/{done}"), Some(json!({ "complete": true }))).await;
    assert_eq!(completed.status, StatusCode::OK, "{}", completed.text);
    Shop { app, dogs, cats, rex, sold, open, done }
}

/// Every table's rows rendered as text, sorted; `rate_limit_usage` legitimately
/// changes with every request, `webhook_fanout` with the webhook dispatcher's work in
/// the background (how far it made out the setup's events), and the migrations table
/// is not the app's data.
async fn snapshot(db: &app::db::Db) -> BTreeMap<String, Vec<String>> {
    let mut dump = BTreeMap::new();
    match db.pool() {
        app::db::Pool::Sqlite(pool) => {
            let tables: Vec<String> = sqlx::query_scalar(
                "SELECT name FROM sqlite_master WHERE type = 'table'
                 AND name NOT IN ('rate_limit_usage', 'webhook_fanout', '_sqlx_migrations') ORDER BY name",
            )
            .fetch_all(pool)
            .await
            .unwrap();
            for table in tables {
                let sql = format!("SELECT * FROM \"{table}\"");
                let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch_all(pool).await.unwrap();
                let mut rendered: Vec<String> = rows.iter().map(render).collect();
                rendered.sort();
                dump.insert(table, rendered);
            }
        }
        // Each row as PostgreSQL's own JSON of it.
        app::db::Pool::Postgres(pool) => {
            let tables: Vec<String> = sqlx::query_scalar(
                "SELECT table_name::TEXT FROM information_schema.tables
                 WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
                 AND table_name NOT IN ('rate_limit_usage', 'webhook_fanout', '_sqlx_migrations') ORDER BY 1",
            )
            .fetch_all(pool)
            .await
            .unwrap();
            for table in tables {
                let sql = format!("SELECT CAST(row_to_json(t) AS TEXT) FROM \"{table}\" t");
                let mut rendered: Vec<String> =
                    sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_all(pool).await.unwrap();
                rendered.sort();
                dump.insert(table, rendered);
            }
        }
    }
    dump
}

fn render(row: &sqlx::sqlite::SqliteRow) -> String {
    let columns = (0..row.len()).map(|i| {
        let kind = {
            let raw = row.try_get_raw(i).unwrap();
            if raw.is_null() { "NULL".to_owned() } else { raw.type_info().name().to_owned() }
        };
        let value = match kind.as_str() {
            "NULL" => "NULL".to_owned(),
            "INTEGER" => row.try_get_unchecked::<i64, _>(i).unwrap().to_string(),
            "REAL" => row.try_get_unchecked::<f64, _>(i).unwrap().to_string(),
            "TEXT" => format!("{:?}", row.try_get_unchecked::<String, _>(i).unwrap()),
            _ => {
                let bytes = row.try_get_unchecked::<Vec<u8>, _>(i).unwrap();
                format!("x'{}'", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())
            }
        };
        format!("{}={value}", row.column(i).name())
    });
    columns.collect::<Vec<_>>().join(", ")
}

/// The rows that differ between two snapshots, for a failure message.
fn diff(before: &BTreeMap<String, Vec<String>>, after: &BTreeMap<String, Vec<String>>) -> String {
    let mut out = Vec::new();
    for (table, rows) in after {
        let old = before.get(table).cloned().unwrap_or_default();
        for row in rows.iter().filter(|r| !old.contains(r)) {
            out.push(format!("+ {table}: {}", cut(row)));
        }
        for row in old.iter().filter(|r| !rows.contains(r)) {
            out.push(format!("- {table}: {}", cut(row)));
        }
    }
    out.join("; ")
}

fn cut(text: &str) -> String {
    if text.chars().count() > 200 {
        format!("{}…", text.chars().take(200).collect::<String>())
    } else {
        text.to_owned()
    }
}

// ---------------------------------------------------------------------------------
// Cases and the runner
// ---------------------------------------------------------------------------------

/// How the body travels.
enum Payload {
    /// An in-memory body (known length, no Content-Length header).
    Bytes(Vec<u8>),
    /// With an explicit Content-Length header.
    Declared(Vec<u8>),
    /// Streamed in 16 KiB chunks, no length known up front.
    Chunked(Vec<u8>),
}

/// One bad request: what it is, its Content-Type, its body, and the Error it must get.
struct Case {
    what: String,
    content_type: Option<&'static str>,
    body: Payload,
    status: u16,
    code: &'static str,
    /// For a 422 about one field: the message must name it.
    field: Option<&'static str>,
}

impl Case {
    fn with_content_type(self, content_type: Option<&'static str>) -> Case {
        Case { content_type, ..self }
    }
}

fn bad(
    what: impl Into<String>,
    content_type: Option<&'static str>,
    body: impl Into<Vec<u8>>,
    status: u16,
    code: &'static str,
) -> Case {
    Case { what: what.into(), content_type, body: Payload::Bytes(body.into()), status, code, field: None }
}

/// Malformed JSON: 400 `bad_request`.
fn broken(what: impl Into<String>, body: impl Into<Vec<u8>>) -> Case {
    bad(what, JSON, body, 400, "bad_request")
}

/// Well-formed JSON that breaks a rule about `field`: 422 naming it.
fn invalid(what: impl Into<String>, body: impl Into<Vec<u8>>, field: &'static str) -> Case {
    Case { field: Some(field), ..bad(what, JSON, body, 422, "validation_failed") }
}

fn too_large(what: impl Into<String>, body: Payload) -> Case {
    Case { body, ..bad(what, JSON, "", 413, "payload_too_large") }
}

/// `valid` with `field` set to the raw JSON text `raw` (which need not be valid JSON).
fn with(valid: &Value, field: &str, raw: &str) -> String {
    let mut body = valid.clone();
    body[field] = json!("@@raw@@");
    body.to_string().replace("\"@@raw@@\"", raw)
}

fn without(valid: &Value, field: &str) -> String {
    let mut body = valid.clone();
    body.as_object_mut().unwrap().remove(field);
    body.to_string()
}

/// `{"name":"xxx…"}` of exactly `bytes` bytes.
fn padded(bytes: usize) -> Vec<u8> {
    format!("{{\"name\":\"{}\"}}", "x".repeat(bytes - 11)).into_bytes()
}

/// Sends every case to `method path` (with `key`, or none) and returns the failures:
/// a wrong answer, or any change to the database (checked after each case).
async fn run(app: &TestApp, method: Method, path: &str, key: Option<&str>, cases: Vec<Case>) -> Vec<String> {
    let mut failures = Vec::new();
    let mut before = snapshot(&app.db).await;
    for (i, case) in cases.into_iter().enumerate() {
        let mut builder = Request::builder().method(method.clone()).uri(path);
        if let Some(key) = key {
            builder = builder.header("x-api-key", key);
        }
        if let Some(content_type) = case.content_type {
            builder = builder.header(header::CONTENT_TYPE, content_type);
        }
        let body = match case.body {
            Payload::Bytes(bytes) => Body::from(bytes),
            Payload::Declared(bytes) => {
                builder = builder.header(header::CONTENT_LENGTH, bytes.len());
                Body::from(bytes)
            }
            Payload::Chunked(bytes) => {
                let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
                    bytes.chunks(16 * 1024).map(|c| Ok(c.to_vec())).collect();
                Body::from_stream(futures::stream::iter(chunks))
            }
        };
        let mut request = builder.body(body).unwrap();
        // One client address per case: anonymous sign-ups are rate limited per IP.
        let ip = SocketAddr::from(([10, 0, (i / 250) as u8, (i % 250 + 1) as u8], 40000));
        request.extensions_mut().insert(ConnectInfo(ip));
        let reply = app.send(request).await;

        let label = format!("{method} {path} [{}]", case.what);
        if let Err(problem) = check(&reply, case.status, case.code, case.field) {
            failures.push(format!("{label}: {problem}"));
        }
        let after = snapshot(&app.db).await;
        if after != before {
            failures.push(format!("{label}: the database changed: {}", diff(&before, &after)));
            before = after;
        }
    }
    failures
}

/// `assert_error`, turned into a result so that one run reports every failing case.
fn check(reply: &Reply, status: u16, code: &str, field: Option<&str>) -> Result<(), String> {
    let message =
        std::panic::catch_unwind(AssertUnwindSafe(|| reply.assert_error(status, code).to_owned())).map_err(|_| {
            format!(
                "expected {status} {code}, got {} {:?} {}",
                reply.status.as_u16(),
                reply.header("content-type"),
                cut(&reply.text)
            )
        })?;
    match field {
        Some(field) if !message.contains(field) => Err(format!("the message does not name `{field}`: {message}")),
        _ => Ok(()),
    }
}

/// Sends a fresh copy of the corpus to each target with the admin key, then fails
/// listing every case that went wrong.
async fn refuse_all<const N: usize>(app: &TestApp, targets: [(Method, String); N], corpus: impl Fn() -> Vec<Case>) {
    let mut failures = Vec::new();
    let mut total = 0;
    for (method, path) in targets {
        let cases = corpus();
        total += cases.len();
        failures.extend(run(app, method, &path, Some(app.admin.as_str()), cases).await);
    }
    assert_none(failures, total);
}

#[track_caller]
fn assert_none(failures: Vec<String>, total: usize) {
    assert!(failures.is_empty(), "{} of {total} cases failed:\n{}", failures.len(), failures.join("\n"));
}

// ---------------------------------------------------------------------------------
// Corpora shared by every endpoint
// ---------------------------------------------------------------------------------

/// Bodies that are not JSON, not a JSON object, not sent as JSON, or too big; the
/// answer does not depend on the endpoint. `valid` is a body the endpoint accepts.
fn syntax(valid: &Value) -> Vec<Case> {
    let text = valid.to_string();
    let open = &text[..text.len() - 1];
    let utf16: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let not_an_object = |what: &str, body: String| bad(what, JSON, body, 422, "validation_failed");
    let unsupported = |what: &str, content_type: &'static str, body: &str| {
        bad(what, Some(content_type), body, 415, "unsupported_media_type")
    };
    vec![
        // Not JSON at all: 400.
        broken("truncated in the middle", &text[..text.len() / 2]),
        broken("the closing brace missing", open),
        broken("a trailing comma", format!("{open},}}")),
        broken("single quotes", text.replace('"', "'")),
        broken("trailing garbage", format!("{text} x")),
        broken("two objects", format!("{text}{text}")),
        broken("a comment", format!("/* hi */{text}")),
        broken("a UTF-8 byte order mark", [&b"\xEF\xBB\xBF"[..], text.as_bytes()].concat()),
        broken("UTF-16", utf16),
        broken("invalid UTF-8 in a key", &b"{\"\xff\xfe\":1}"[..]),
        broken("a bare word", "hello"),
        broken("a lone brace", "{"),
        broken("a lone quote", "\""),
        broken("a lone surrogate in a key", r#"{"\ud800":1}"#),
        // Well-formed JSON that is not an object: 422.
        not_an_object("the body inside an array", format!("[{text}]")),
        not_an_object("an empty array", "[]".into()),
        not_an_object("a string", "\"Rex\"".into()),
        not_an_object("a number", "42".into()),
        not_an_object("a negative number", "-1".into()),
        not_an_object("null", "null".into()),
        not_an_object("true", "true".into()),
        not_an_object("false", "false".into()),
        not_an_object("10,000 nested arrays", deep),
        // A JSON body not declared as JSON: 415.
        bad("no Content-Type", None, text.clone(), 415, "unsupported_media_type"),
        unsupported("an empty Content-Type", "", &text),
        unsupported("text/plain", "text/plain", &text),
        unsupported("text/json", "text/json", &text),
        unsupported("application/jsonx", "application/jsonx", &text),
        unsupported("a form", "application/x-www-form-urlencoded", "name=Rex&categoryId=1"),
        unsupported("multipart", "multipart/form-data; boundary=x", &text),
        unsupported("XML", "application/xml", "<pet><name>Rex</name></pet>"),
        // Sizes: the limit is 64 KiB; a body at the limit is read (then refused by the
        // rules), one byte more is 413, however it is sent.
        bad("exactly 64 KiB", JSON, padded(LIMIT), 422, "validation_failed"),
        too_large("64 KiB + 1 byte", Payload::Bytes(padded(LIMIT + 1))),
        too_large("64 KiB + 1 byte, chunked", Payload::Chunked(padded(LIMIT + 1))),
        too_large("1 MiB with Content-Length", Payload::Declared(padded(MIB))),
        too_large("1 MiB chunked", Payload::Chunked(padded(MIB))),
    ]
}

/// An empty or blank body: malformed JSON (400), or no JSON at all (415).
fn empty_bodies() -> Vec<Case> {
    vec![
        broken("an empty body", ""),
        broken("a blank body", " \r\n\t "),
        bad("an empty body without Content-Type", None, "", 415, "unsupported_media_type"),
    ]
}

/// Every wrong JSON type for an integer field, and numbers no int64 holds.
fn int_field(valid: &Value, field: &'static str) -> Vec<Case> {
    let mut cases = vec![invalid(format!("{field} missing"), without(valid, field), field)];
    // Well-formed but not an int64: 422 naming the field.
    for raw in [
        "null",
        "true",
        "\"1\"",
        "1.5",
        "1.0",
        "1e2",
        "-0.0",
        "[]",
        "[1]",
        "{}",
        "9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "100000000000000000000000000000",
    ] {
        cases.push(invalid(format!("{field} = {raw}"), with(valid, field, raw), field));
    }
    // Not JSON numbers at all (1e400 overflows every number type serde_json has): 400.
    for raw in ["1e400", "-1e400", "NaN", "Infinity", "0x10", "01", "+1", ".5", "1.", "--1", "1_000"] {
        cases.push(broken(format!("{field} = {raw}"), with(valid, field, raw)));
    }
    cases
}

/// Wrong types and broken escapes for a string field.
fn string_field(valid: &Value, field: &'static str, required: bool) -> Vec<Case> {
    let mut wrong = vec!["5", "true", "[]", "{}", "[\"Rex\"]"];
    if required {
        wrong.push("null");
    }
    let mut cases: Vec<Case> =
        wrong.into_iter().map(|raw| invalid(format!("{field} = {raw}"), with(valid, field, raw), field)).collect();
    for (what, raw) in [
        // A lone surrogate escape is not a Unicode scalar value: invalid JSON text.
        ("a lone leading surrogate", r#""\ud800""#),
        ("a lone trailing surrogate", r#""\udc00""#),
        ("a leading surrogate before a letter", r#""Re\ud800x""#),
        ("a leading surrogate before a non-surrogate escape", r#""\ud800\u0041""#),
        ("a short \\u escape", r#""\u12""#),
        ("an unknown escape", r#""\x41""#),
        ("a raw tab", "\"Re\tx\""),
        ("a raw control character", "\"Re\u{1}x\""),
        ("an unterminated string", "\"Rex"),
    ] {
        cases.push(broken(format!("{field} with {what}"), with(valid, field, raw)));
    }
    if required {
        cases.push(invalid(format!("{field} missing"), without(valid, field), field));
    }
    cases
}

/// The name rules: trimmed, 1 to 100 characters (not bytes, not graphemes), no
/// control characters. A NUL is a control character.
fn name_rules(valid: &Value, field: &'static str) -> Vec<Case> {
    let s = |text: String| serde_json::to_string(&text).unwrap();
    let mut cases: Vec<Case> = [
        ("empty", s(String::new())),
        ("blank", s("   ".into())),
        ("only a tab and a newline", r#""\t\n""#.into()),
        ("only no-break spaces (trimmed away)", r#""\u00a0\u3000""#.into()),
        ("101 ASCII characters", s("x".repeat(101))),
        ("101 two-byte characters", s("é".repeat(101))),
        ("51 letters with combining accents (102 characters)", s("e\u{301}".repeat(51))),
        ("60,000 characters", s("x".repeat(60_000))),
        ("a NUL byte alone", r#""\u0000""#.into()),
        ("a NUL byte at the end", r#""Rex\u0000""#.into()),
        ("a NUL byte inside", r#""Re\u0000x""#.into()),
        ("a bell", r#""Rex\u0007""#.into()),
        ("an ANSI escape", r#""\u001b[31mRex""#.into()),
        ("DEL", r#""Rex\u007f""#.into()),
        ("a C1 control (NEL) inside", r#""Rex\u0085Max""#.into()),
        ("a newline inside", r#""Rex\nMax""#.into()),
    ]
    .into_iter()
    .map(|(what, raw)| invalid(format!("{field}: {what}"), with(valid, field, &raw), field))
    .collect();
    // 100,000 characters do not fit in a 64 KiB body.
    cases.push(too_large(
        format!("{field}: 100,000 characters"),
        Payload::Bytes(with(valid, field, &s("x".repeat(100_000))).into()),
    ));
    cases
}

/// Fields the type does not have (422 naming the field), and fields given twice.
fn unknown_and_repeated(valid: &Value, unknown: &[&'static str], repeated: &[(&'static str, &str, &str)]) -> Vec<Case> {
    let mut cases: Vec<Case> =
        unknown.iter().map(|field| invalid(format!("unknown field {field}"), with(valid, field, "1"), field)).collect();
    for (field, first, second) in repeated {
        // serde refuses a field given twice; a clean 422 rather than "last one wins".
        let raw = format!("{first},\"{field}\":{second}");
        cases.push(invalid(format!("{field} given twice"), with(valid, field, &raw), field));
    }
    cases
}

// ---------------------------------------------------------------------------------
// The endpoints
// ---------------------------------------------------------------------------------

/// POST /pets and PUT /pets/{petId} (a NewPet body).
#[tokio::test]
async fn pet_writes_refuse_malformed_bodies() {
    let shop = shop().await;
    let valid = json!({ "name": "Max", "categoryId": shop.dogs });
    let corpus = || {
        let mut cases = syntax(&valid);
        cases.extend(empty_bodies());
        cases.push(invalid("an empty object", "{}", "name"));
        cases.extend(string_field(&valid, "name", true));
        cases.extend(name_rules(&valid, "name"));
        cases.extend(int_field(&valid, "categoryId"));
        for raw in ["0", "-1", "-9223372036854775808", "9223372036854775807", "999999"] {
            // Not a positive id, or an id that names no category: 422 like any bad field.
            cases.push(invalid(format!("categoryId = {raw}"), with(&valid, "categoryId", raw), "categoryId"));
        }
        // A status is one of three strings; serde's `{"variant": null}` map form of an
        // enum is not part of the API.
        let statuses =
            ["\"adopted\"", "\"AVAILABLE\"", "\"\"", "\" available\"", "1", "true", "[]", "{}", "{\"sold\":null}"];
        for raw in statuses {
            cases.push(invalid(format!("status = {raw}"), with(&valid, "status", raw), "status"));
        }
        cases.extend(unknown_and_repeated(
            &valid,
            &["colour", "category_id", "categoryID", "Name", "id", "photoUrls", "__proto__"],
            &[("name", "\"A\"", "\"B\""), ("categoryId", &shop.dogs.to_string(), &shop.cats.to_string())],
        ));
        cases
    };
    let targets = [(Method::POST, "/api/v1/pets".to_owned()), (Method::PUT, format!("/api/v1/pets/{}", shop.rex))];
    refuse_all(&shop.app, targets, corpus).await;
}

/// POST /categories and PUT /categories/{categoryId} (a NewCategory body).
#[tokio::test]
async fn category_writes_refuse_malformed_bodies() {
    let shop = shop().await;
    let valid = json!({ "name": "Birds", "description": "Feathered" });
    let corpus = || {
        let mut cases = syntax(&valid);
        cases.extend(empty_bodies());
        cases.push(invalid("an empty object", "{}", "name"));
        cases.extend(string_field(&valid, "name", true));
        cases.extend(name_rules(&valid, "name"));
        cases.extend(string_field(&valid, "description", false));
        let s = |text: String| serde_json::to_string(&text).unwrap();
        for (what, raw) in [
            ("1,001 characters", s("x".repeat(1001))),
            ("1,001 two-byte characters", s("é".repeat(1001))),
            ("60,000 characters", s("x".repeat(60_000))),
            ("a NUL byte", r#""Feathered\u0000""#.into()),
            ("a bell", r#""Feathered\u0007""#.into()),
            ("an ANSI escape", r#""\u001b[2JFeathered""#.into()),
        ] {
            cases.push(invalid(format!("description: {what}"), with(&valid, "description", &raw), "description"));
        }
        cases.push(too_large(
            "description: 100,000 characters",
            Payload::Bytes(with(&valid, "description", &s("x".repeat(100_000))).into()),
        ));
        // Names are unique case-insensitively, after trimming ("Dogs" exists).
        for raw in ["\"Dogs\"", "\"dOGS\"", "\"  Dogs \""] {
            cases.push(bad(format!("name = {raw}, taken"), JSON, with(&valid, "name", raw), 409, "duplicate_name"));
        }
        cases.extend(unknown_and_repeated(
            &valid,
            &["id", "colour", "Description", "pets", "name_key"],
            &[("name", "\"A\"", "\"B\""), ("description", "\"a\"", "\"b\"")],
        ));
        cases
    };
    let targets =
        [(Method::POST, "/api/v1/categories".to_owned()), (Method::PUT, format!("/api/v1/categories/{}", shop.cats))];
    refuse_all(&shop.app, targets, corpus).await;
}

/// PUT /store/inventory/{petId} (an InventoryUpdate body).
#[tokio::test]
async fn inventory_writes_refuse_malformed_bodies() {
    let shop = shop().await;
    let valid = json!({ "quantity": 3 });
    let mut cases = syntax(&valid);
    cases.extend(empty_bodies());
    cases.push(invalid("an empty object", "{}", "quantity"));
    cases.extend(int_field(&valid, "quantity"));
    // Stock is 0 to 1,000,000 (0 itself is a valid "sold out").
    for raw in ["-1", "1000001", "-9223372036854775808", "9223372036854775807"] {
        cases.push(invalid(format!("quantity = {raw}"), with(&valid, "quantity", raw), "quantity"));
    }
    cases.extend(unknown_and_repeated(&valid, &["stock", "petId", "status", "Quantity"], &[("quantity", "1", "2")]));
    let total = cases.len();
    let app = &shop.app;
    let failures =
        run(app, Method::PUT, &format!("/api/v1/store/inventory/{}", shop.rex), Some(app.admin.as_str()), cases).await;
    assert_none(failures, total);
}

/// The ship-date rule: RFC 3339 with an offset.
fn ship_dates(valid: &Value) -> Vec<Case> {
    let mut cases = string_field(valid, "shipDate", false);
    for raw in [
        "\"tomorrow\"",
        "\"\"",
        "\"2027-01-31\"",
        "\"2027-01-31T12:00:00\"",
        "\"2027-02-30T12:00:00Z\"",
        "\"2027-01-31T25:00:00Z\"",
        "\"2027-01-31T12:00:00+25:00\"",
        "\"1738324800\"",
        "\"2027-01-31T12:00:00Z\\u0000\"",
    ] {
        cases.push(invalid(format!("shipDate = {raw}"), with(valid, "shipDate", raw), "shipDate"));
    }
    cases
}

/// POST /store/orders (NewOrder) and PATCH /store/orders/{orderId} (OrderCompletion).
/// Cancelling is DELETE without a body, so it has no body to get wrong.
#[tokio::test]
async fn order_writes_refuse_malformed_bodies() {
    let shop = shop().await;
    let app = &shop.app;

    let valid = json!({ "petId": shop.rex, "quantity": 1 });
    let mut place = syntax(&valid);
    place.extend(empty_bodies());
    place.push(invalid("an empty object", "{}", "petId"));
    place.extend(int_field(&valid, "petId"));
    place.extend(int_field(&valid, "quantity"));
    for raw in ["0", "-1", "-9223372036854775808", "9223372036854775807", "999999"] {
        // Not a positive id, or one that names no pet: 422 like `categoryId`.
        place.push(invalid(format!("petId = {raw}"), with(&valid, "petId", raw), "petId"));
    }
    for raw in ["0", "-1", "1001", "-9223372036854775808", "9223372036854775807"] {
        // 1 to 1,000 units.
        place.push(invalid(format!("quantity = {raw}"), with(&valid, "quantity", raw), "quantity"));
    }
    place.extend(ship_dates(&valid));
    // Well-formed and valid, but refused by the state rules: still nothing changes.
    place.push(bad("more than the stock", JSON, with(&valid, "quantity", "5"), 409, "insufficient_stock"));
    place.push(bad("a sold pet", JSON, with(&valid, "petId", &shop.sold.to_string()), 409, "pet_not_available"));
    place.extend(unknown_and_repeated(
        &valid,
        &["complete", "id", "pet_id", "status", "customerId"],
        &[("petId", &shop.rex.to_string(), &shop.sold.to_string()), ("quantity", "1", "2")],
    ));

    let valid = json!({ "complete": true });
    let mut complete = syntax(&valid);
    complete.extend(empty_bodies());
    complete.push(invalid("an empty object", "{}", "complete"));
    complete.push(invalid("complete missing", json!({ "shipDate": "2027-01-31T12:00:00Z" }).to_string(), "complete"));
    // `complete` must be the JSON literal true: false is no change an order takes.
    for raw in ["false", "\"true\"", "1", "0", "null", "[]", "{}", "[true]"] {
        complete.push(invalid(format!("complete = {raw}"), with(&valid, "complete", raw), "complete"));
    }
    for raw in ["True", "TRUE", "tru", "yes", "t"] {
        complete.push(broken(format!("complete = {raw}"), with(&valid, "complete", raw)));
    }
    complete.extend(ship_dates(&valid));
    complete.extend(unknown_and_repeated(
        &valid,
        &["quantity", "petId", "id", "status", "cancelled"],
        &[("complete", "true", "false"), ("complete", "true", "true")],
    ));

    let total = place.len() + complete.len() + 1;
    let mut failures = run(app, Method::POST, "/api/v1/store/orders", Some(app.admin.as_str()), place).await;
    failures.extend(
        run(app, Method::PATCH, &format!("/api/v1/store/orders/{}", shop.open), Some(app.admin.as_str()), complete)
            .await,
    );
    // A valid completion of a completed order is refused by the state rules.
    let again = vec![bad("completing twice", JSON, r#"{"complete":true}"#, 409, "order_completed")];
    failures.extend(
        run(app, Method::PATCH, &format!("/api/v1/store/orders/{}", shop.done), Some(app.admin.as_str()), again).await,
    );
    assert_none(failures, total);
}

/// POST /keys: an admin's NewApiKey, and the anonymous sign-up (`{"name"?}`).
#[tokio::test]
async fn key_creation_refuses_malformed_bodies() {
    let shop = shop().await;
    let app = &shop.app;

    let valid = json!({ "name": "ci", "role": "customer", "plan": "pro" });
    let mut admin = syntax(&valid);
    // An admin must say what key to create: no body is a 422 here, not a 400.
    admin.push(invalid("no body", "", "name").with_content_type(None));
    admin.push(invalid("an empty body", "", "name"));
    admin.push(invalid("a blank body", " \r\n ", "name"));
    admin.push(invalid("an empty object", "{}", "name"));
    admin.extend(string_field(&valid, "name", true));
    admin.extend(name_rules(&valid, "name"));
    for field in ["role", "plan"] {
        // Role and plan are plain strings (not serde's `{"variant": null}` map form).
        for raw in [
            "\"root\"",
            "\"Admin\"",
            "\"FREE\"",
            "\"\"",
            "1",
            "null",
            "[]",
            "{}",
            "{\"admin\":null}",
            "{\"free\":null}",
        ] {
            admin.push(invalid(format!("{field} = {raw}"), with(&valid, field, raw), field));
        }
        admin.push(invalid(format!("{field} missing"), without(&valid, field), field));
    }
    let enterprise = json!({ "name": "big", "role": "customer", "plan": "enterprise", "limits": { "perMinute": 100, "perDay": 1000 } });
    let limits = |raw: &str| with(&enterprise, "limits", raw);
    admin.push(invalid(
        "limits on a fixed plan",
        with(&valid, "limits", r#"{"perMinute":100,"perDay":1000}"#),
        "limits",
    ));
    admin.push(invalid("an Enterprise key without limits", without(&enterprise, "limits"), "limits"));
    for raw in [r#"{"perMinute":0,"perDay":1000}"#, r#"{"perMinute":100,"perDay":0}"#, "null", "[]", "5", "\"100/min\""]
    {
        admin.push(invalid(format!("limits = {raw}"), limits(raw), "limits"));
    }
    for (raw, field) in [
        (r#"{"perMinute":-1,"perDay":1000}"#, "perMinute"),
        (r#"{"perMinute":4294967296,"perDay":1000}"#, "perMinute"),
        (r#"{"perMinute":1.5,"perDay":1000}"#, "perMinute"),
        (r#"{"perMinute":"100","perDay":1000}"#, "perMinute"),
        (r#"{"perMinute":100,"perDay":9223372036854775808}"#, "perDay"),
        (r#"{"perMinute":100}"#, "perDay"),
        (r#"{}"#, "perMinute"),
        (r#"{"perMinute":100,"perDay":1000,"perHour":10}"#, "perHour"),
        (r#"{"perMinute":100,"perMinute":200,"perDay":1000}"#, "perMinute"),
    ] {
        admin.push(invalid(format!("limits = {raw}"), limits(raw), field));
    }
    admin.push(broken("limits.perDay = 1e400", limits(r#"{"perMinute":100,"perDay":1e400}"#)));
    admin.extend(unknown_and_repeated(
        &valid,
        &["key", "id", "createdAt", "revokedAt", "keyHash"],
        &[("role", "\"customer\"", "\"admin\""), ("name", "\"a\"", "\"b\"")],
    ));

    // Sign-up: an empty or blank body is a valid sign-up, so it is not in this corpus;
    // neither is `{"name": null}` (the default name).
    let valid = json!({ "name": "mine" });
    let mut signup = syntax(&valid);
    signup.extend(string_field(&valid, "name", false));
    signup.extend(name_rules(&valid, "name"));
    // Only a name may be chosen: asking for a role, plan or limits is refused, not ignored.
    signup.extend(unknown_and_repeated(
        &valid,
        &["role", "plan", "limits", "key", "id"],
        &[("name", "\"a\"", "\"b\"")],
    ));

    let total = admin.len() + signup.len();
    let mut failures = run(app, Method::POST, "/api/v1/keys", Some(app.admin.as_str()), admin).await;
    failures.extend(run(app, Method::POST, "/api/v1/keys", None, signup).await);
    assert_none(failures, total);
}

/// Bad ids in the paths of writes, and writes sent to routes that do not exist; a
/// valid body throughout. No such route is 404, a wrong method 405.
#[tokio::test]
async fn bad_write_paths_are_refused() {
    let shop = shop().await;
    let app = &shop.app;
    let (rex, open) = (shop.rex, shop.open);
    let pet = json!({ "name": "Max", "categoryId": shop.dogs });
    let category = json!({ "name": "Birds" });
    let stock = json!({ "quantity": 3 });
    let completion = json!({ "complete": true });
    let cases: Vec<(Method, String, &Value, u16, &str)> = vec![
        (Method::PUT, "/api/v1/pets/abc".into(), &pet, 400, "bad_request"),
        (Method::PUT, "/api/v1/pets/1.5".into(), &pet, 400, "bad_request"),
        (Method::PUT, "/api/v1/pets/9223372036854775808".into(), &pet, 400, "bad_request"),
        (Method::PUT, "/api/v1/pets/%00".into(), &pet, 400, "bad_request"),
        (Method::PUT, "/api/v1/pets/0".into(), &pet, 404, "not_found"),
        (Method::PUT, "/api/v1/pets/-1".into(), &pet, 404, "not_found"),
        (Method::PUT, "/api/v1/pets/999999".into(), &pet, 404, "not_found"),
        (Method::PUT, "/api/v1/categories/abc".into(), &category, 400, "bad_request"),
        (Method::PUT, "/api/v1/categories/999999".into(), &category, 404, "not_found"),
        (Method::PUT, "/api/v1/store/inventory/abc".into(), &stock, 400, "bad_request"),
        (Method::PUT, "/api/v1/store/inventory/999999".into(), &stock, 404, "not_found"),
        (Method::PATCH, "/api/v1/store/orders/abc".into(), &completion, 400, "bad_request"),
        (Method::PATCH, "/api/v1/store/orders/999999".into(), &completion, 404, "not_found"),
        // Completing is PATCH on the order; cancelling is DELETE: no action sub-routes.
        (Method::POST, format!("/api/v1/store/orders/{open}/complete"), &completion, 404, "not_found"),
        (Method::POST, format!("/api/v1/store/orders/{open}/cancel"), &completion, 404, "not_found"),
        (Method::PUT, format!("/api/v1/store/orders/{open}"), &completion, 405, "method_not_allowed"),
        (Method::POST, format!("/api/v1/pets/{rex}"), &pet, 405, "method_not_allowed"),
        (Method::PATCH, format!("/api/v1/pets/{rex}"), &pet, 405, "method_not_allowed"),
        (Method::PUT, "/api/v1/pets".into(), &pet, 405, "method_not_allowed"),
        (Method::PUT, "/api/v1/store/inventory".into(), &stock, 405, "method_not_allowed"),
        (Method::PUT, "/api/v1/keys".into(), &category, 405, "method_not_allowed"),
    ];
    let total = cases.len();
    let mut failures = Vec::new();
    for (method, path, body, status, code) in cases {
        let case = bad(format!("a valid body, status {status}"), JSON, body.to_string(), status, code);
        failures.extend(run(app, method, &path, Some(app.admin.as_str()), vec![case]).await);
    }
    assert_none(failures, total);
}

// ---------------------------------------------------------------------------------
// Odd but valid names
// ---------------------------------------------------------------------------------

/// Unicode that is not a control character and counts within 100 characters is a valid
/// name, kept as sent after trimming (Unicode white space). Format characters (RTL
/// override, zero-width joiner and space, BOM) are not control characters.
#[tokio::test]
async fn odd_but_valid_names_are_accepted_as_sent() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let cases: Vec<(&str, String, String)> = vec![
        ("a right-to-left override", r#""\u202eRex""#.into(), "\u{202e}Rex".into()),
        ("a zero-width-joined emoji family", r#""👩‍👩‍👧‍👦""#.into(), "👩‍👩‍👧‍👦".into()),
        ("only a zero-width space", r#""\u200b""#.into(), "\u{200b}".into()),
        ("a leading BOM", r#""\ufeffRex""#.into(), "\u{feff}Rex".into()),
        ("a surrogate pair escape", r#""\ud83d\udc36""#.into(), "🐶".into()),
        (
            "100 characters of 50 letters with combining accents",
            format!("\"{}\"", "e\u{301}".repeat(50)),
            "e\u{301}".repeat(50),
        ),
        ("100 two-byte characters", format!("\"{}\"", "é".repeat(100)), "é".repeat(100)),
        ("100 four-byte characters", format!("\"{}\"", "𝕏".repeat(100)), "𝕏".repeat(100)),
        ("100 characters within white space", format!("\"  {}\\t\"", "x".repeat(100)), "x".repeat(100)),
        ("no-break and ideographic spaces, trimmed", r#""\u00a0Rex\u3000""#.into(), "Rex".into()),
        ("a tab and newline, trimmed", r#""\tRex\n""#.into(), "Rex".into()),
    ];
    for (what, raw, expected) in cases {
        let body = format!("{{\"name\":{raw},\"categoryId\":{dogs}}}");
        let reply = app.raw(Method::POST, "/api/v1/pets", Some("application/json"), body).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{what}: {}", reply.text);
        assert_eq!(reply.body["name"], expected.as_str(), "{what}");
        let id = reply.body["id"].as_i64().unwrap();
        let listed = app.get(&format!("/api/v1/pets?ids={id}")).await;
        assert_eq!(listed.body[0]["name"], expected.as_str(), "{what}: stored as sent");
    }
}
