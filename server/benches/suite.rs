//! `make bench`: the release server, started as a user would start it (the default
//! configuration: the request log at INFO, to `target/bench/server.log`), over a fresh
//! SQLite file with a realistic catalog (1,000 pets in 20 categories), loaded from this
//! process on loopback. Every throughput is also given as a ratio to a ceiling measured
//! in the same run: a bare axum route in a process of its own (this program, started
//! again as `ceiling`; the server users run carries no benchmark code), answering a
//! JSON body as long as a pet's. The same process also replays the store's own answers
//! to the pet read and to the list (status, headers and body, byte for byte but the
//! date): the limit for those bytes, measured in turns with each. Prints a table, then
//! the GET rows again as wrk (Debian's) measures them (the ceilings, the pet read, the
//! list, and the pet read from two fresh servers with the request log on and off, in
//! turns: what the log costs), checks
//! the budgets of docs/PERFORMANCE.md, and writes everything to `target/bench/results.json`.
//!
//! Environment: SERVER_BIN (default target/release/server, built by `cargo leptos build
//! --release`), PETSTORE_BENCH_SECONDS (each row, default 5), PETSTORE_BENCH_CONNECTIONS
//! (default 32).

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::external::{Wrk, rss_mib};
use common::{Outcome, Sample};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

const PETS: usize = 1_000;
/// The ceilings' rows: the body alone, and the pet read's and the list's answers replayed.
const CEILING: &str = "ceiling: bare axum route";
const CEILING_PET: &str = "ceiling: the pet read's answer, replayed";
const CEILING_LIST: &str = "ceiling: the list's answer, replayed";

/// The PostgreSQL rows' names: a pet read and orders, with one server and with two.
const POSTGRES_ROWS: [&str; 4] = [
    "PostgreSQL, counters in PostgreSQL: GET /api/v1/pets/{petId}, one server",
    "PostgreSQL, counters in PostgreSQL: orders, distinct pets, one server",
    "PostgreSQL, counters in PostgreSQL: GET /api/v1/pets/{petId}, two servers",
    "PostgreSQL, counters in PostgreSQL: orders, distinct pets, two servers",
];
const REDIS_ROWS: [&str; 4] = [
    "PostgreSQL, counters in Redis: GET /api/v1/pets/{petId}, one server",
    "PostgreSQL, counters in Redis: orders, distinct pets, one server",
    "PostgreSQL, counters in Redis: GET /api/v1/pets/{petId}, two servers",
    "PostgreSQL, counters in Redis: orders, distinct pets, two servers",
];
const CATEGORIES: usize = 20;

/// The release server as a child process.
struct Server {
    child: Child,
    addr: String,
    /// From spawning the process to its first 200 on `/healthz`.
    startup: Duration,
}

impl Server {
    fn start(bin: &Path, db: &Path, site_root: &Path) -> Server {
        Server::start_with(bin, db, site_root, &[])
    }

    /// As [`Server::start`], with more environment variables (settings).
    fn start_with(bin: &Path, db: &Path, site_root: &Path, settings: &[(&str, &str)]) -> Server {
        Server::start_over(bin, &format!("sqlite://{}", db.display()), site_root, settings)
    }

    /// As [`Server::start_with`], over the database at `url` (either engine).
    fn start_over(bin: &Path, url: &str, site_root: &Path, settings: &[(&str, &str)]) -> Server {
        let spawned = Instant::now();
        let mut child = Command::new(bin)
            .env("DATABASE_URL", url)
            .env("PETSTORE_ADDR", "127.0.0.1:0")
            .env("PETSTORE_DEMO_DATA", "false")
            .env("LEPTOS_SITE_ROOT", site_root)
            .env("LEPTOS_ENV", "PROD")
            // A PostgreSQL store's first admin key would go to the working directory
            // (server/, in the source tree); the bench makes its own key anyway.
            .env("PETSTORE_FIRST_ADMIN_KEY_FILE", server_log_path().with_file_name("first-admin-key"))
            // The default configuration, as `make run` starts it: the request log at
            // INFO, a line per request, here to a file as an operator's would be
            // (whatever RUST_LOG the bench itself was started with).
            .env_remove("RUST_LOG")
            .envs(settings.iter().copied())
            .stdout(Stdio::piped())
            .stderr(server_log())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e} (run `make bench`, which builds it)", bin.display()));
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let addr = loop {
            let line = lines.next().expect("the server's start-up lines").unwrap();
            if let Some(rest) = line.strip_prefix("Pet Store is running at http://") {
                break rest.split('/').next().unwrap().to_owned();
            }
        };
        std::thread::spawn(move || lines.for_each(drop)); // keep stdout drained
        loop {
            let healthy = std::net::TcpStream::connect(&addr).ok().and_then(|mut stream| {
                use std::io::{Read, Write};
                write!(stream, "GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").ok()?;
                let mut head = [0u8; 12];
                stream.read_exact(&mut head).ok()?;
                Some(head.ends_with(b"200"))
            });
            if healthy == Some(true) {
                break;
            }
            assert!(spawned.elapsed() < Duration::from_secs(30), "the server did not answer /healthz");
            std::thread::sleep(Duration::from_millis(1));
        }
        Server { startup: spawned.elapsed(), child, addr }
    }

    /// Resident set size now, in MiB.
    fn rss_mib(&self) -> f64 {
        rss_mib(self.child.id())
    }

    /// Stops it as an operator would (SIGTERM, a graceful shutdown).
    fn stop(mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }
}

/// The ceiling: a bare axum route with none of the application's layers, database or
/// JSON encoding, in a process of its own (this program again), as a user would
/// compare. Two kinds of answer: `GET /{bytes}`, `{"pad":"xxx…"}` exactly `bytes` long
/// with a content type alone (the body's cost); and `GET /replay/{name}`, an answer the
/// store gave, replayed: its status, headers and body byte for byte but the date (the
/// limit for those bytes: the store's rate-limit, security and request-id headers cost
/// bare axum itself about 30 % of its rate).
struct Ceiling {
    child: Child,
    addr: String,
}

/// An answer of the store, as the ceiling replays it: what it reads, and what it sends.
type ReplayedAnswer = (axum::http::StatusCode, axum::http::HeaderMap, Bytes);

#[derive(serde::Serialize, serde::Deserialize)]
struct Replayed {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Ceiling {
    /// Set in the child's environment: serve the ceiling instead of measuring. Its value
    /// is a JSON file of the answers to replay, by name.
    const ROLE: &str = "PETSTORE_BENCH_CEILING";

    fn start(replays: &Path) -> Ceiling {
        let exe = std::env::current_exe().expect("this program's path");
        let mut child = Command::new(exe)
            .env(Ceiling::ROLE, replays)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the ceiling starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let line = lines.next().expect("the ceiling's address").unwrap();
        let addr = line.strip_prefix("Bench ceiling at http://").expect("the ceiling's first line").to_owned();
        Ceiling { child, addr: addr.trim_end_matches('/').to_owned() }
    }

    async fn serve(replays: PathBuf) {
        use axum::serve::ListenerExt;
        let replays: std::collections::HashMap<String, Replayed> =
            serde_json::from_slice(&std::fs::read(&replays).expect("the answers to replay")).expect("replays' JSON");
        let replays: Arc<std::collections::HashMap<String, ReplayedAnswer>> =
            Arc::new(replays.into_iter().map(|(name, answer)| (name, Ceiling::answer(answer))).collect());
        let router = axum::Router::new().route("/{bytes}", axum::routing::get(Ceiling::padded_json)).route(
            "/replay/{name}",
            axum::routing::get(move |axum::extract::Path(name): axum::extract::Path<String>| {
                let replays = replays.clone();
                async move { replays.get(&name).cloned().expect("a replayed answer") }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
        println!("Bench ceiling at http://{}/", listener.local_addr().unwrap());
        // As the server does: answers are sent at once (TCP_NODELAY).
        let listener = listener.tap_io(|stream| {
            let _ = stream.set_nodelay(true);
        });
        axum::serve(listener, router).await.expect("serving the ceiling");
    }

    /// A replayed answer made once: hyper adds the date and the length.
    fn answer(replayed: Replayed) -> ReplayedAnswer {
        let mut headers = axum::http::HeaderMap::new();
        for (name, value) in replayed.headers {
            if matches!(name.as_str(), "date" | "content-length" | "transfer-encoding" | "connection") {
                continue;
            }
            headers.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).expect("a header name"),
                axum::http::HeaderValue::from_str(&value).expect("a header value"),
            );
        }
        (axum::http::StatusCode::from_u16(replayed.status).unwrap(), headers, Bytes::from(replayed.body))
    }

    async fn padded_json(axum::extract::Path(bytes): axum::extract::Path<usize>) -> impl axum::response::IntoResponse {
        let bytes = bytes.clamp(11, 1 << 20);
        let mut body = Vec::with_capacity(bytes);
        body.extend_from_slice(b"{\"pad\":\"");
        body.resize(bytes - 2, b'x');
        body.extend_from_slice(b"\"}");
        ([(axum::http::header::CONTENT_TYPE, "application/json")], body)
    }
}

impl Drop for Ceiling {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A run that fails half-way (an assertion, a panic) does not leave the server running
/// and holding the terminal's output open.
impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// CPU time the process has used so far (user and system, every thread), seconds.
fn cpu_seconds(pid: u32) -> f64 {
    static TICKS: std::sync::LazyLock<f64> = std::sync::LazyLock::new(|| {
        let out = Command::new("getconf").arg("CLK_TCK").output().ok();
        out.and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok()).unwrap_or(100.0)
    });
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) in parentheses: utime and
    // stime are the 14th and 15th of the whole line.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / *TICKS
}

type Http = Client<HttpConnector, Full<Bytes>>;

async fn call(http: &Http, method: &str, url: &str, key: Option<&str>, body: Option<Value>) -> (u16, Bytes) {
    let mut request = hyper::Request::builder().method(method).uri(url);
    if let Some(key) = key {
        request = request.header("x-api-key", key);
    }
    let body = match body {
        Some(body) => {
            request = request.header("content-type", "application/json");
            Bytes::from(body.to_string())
        }
        None => Bytes::new(),
    };
    let response = http.request(request.body(Full::new(body)).unwrap()).await.expect("an answer");
    let status = response.status().as_u16();
    (status, response.into_body().collect().await.unwrap().to_bytes())
}

/// The store's answer to `GET url` with `key`, whole, for the ceiling to replay.
async fn answer_to_replay(http: &Http, url: &str, key: &str) -> Replayed {
    let request = hyper::Request::get(url).header("x-api-key", key).body(Full::new(Bytes::new())).unwrap();
    let response = http.request(request).await.expect("an answer");
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), value.to_str().expect("a text header").to_owned()))
        .collect();
    let body = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    assert_eq!(status, 200, "{url}: {body}");
    Replayed { status, headers, body }
}

/// The admin key the first start printed is limited to 10,000 requests a minute: make
/// one for the benchmark that no run can exhaust.
async fn seed(http: &Http, base: &str, admin: &str) -> (String, Vec<i64>) {
    let limits = json!({ "perMinute": 2_000_000_000u32, "perDay": 2_000_000_000u32 });
    let key = json!({ "name": "bench", "role": "admin", "plan": "enterprise", "limits": limits });
    let (status, created) = call(http, "POST", &format!("{base}/api/v1/keys"), Some(admin), Some(key)).await;
    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&created));
    let key: String = serde_json::from_slice::<Value>(&created).unwrap()["key"].as_str().unwrap().to_owned();
    let mut categories = Vec::new();
    for n in 0..CATEGORIES {
        let body = json!({ "name": format!("Category {n}"), "description": format!("Animals of kind {n}") });
        let (status, created) = call(http, "POST", &format!("{base}/api/v1/categories"), Some(&key), Some(body)).await;
        assert_eq!(status, 201);
        categories.push(serde_json::from_slice::<Value>(&created).unwrap()["id"].as_i64().unwrap());
    }
    let next = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..16)
        .map(|_| {
            let (http, base, key, next, categories) =
                (http.clone(), base.to_owned(), key.clone(), next.clone(), categories.clone());
            tokio::spawn(async move {
                let mut ids = Vec::new();
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed) as usize;
                    if n >= PETS {
                        return ids;
                    }
                    let pet = json!({ "name": format!("Pet number {n}"), "categoryId": categories[n % CATEGORIES] });
                    let (status, created) =
                        call(&http, "POST", &format!("{base}/api/v1/pets"), Some(&key), Some(pet)).await;
                    assert_eq!(status, 201);
                    let id = serde_json::from_slice::<Value>(&created).unwrap()["id"].as_i64().unwrap();
                    let stock = json!({ "quantity": 1_000_000 });
                    let url = format!("{base}/api/v1/store/inventory/{id}");
                    assert_eq!(call(&http, "PUT", &url, Some(&key), Some(stock)).await.0, 200);
                    ids.push(id);
                }
            })
        })
        .collect();
    let mut ids = Vec::new();
    for worker in workers {
        ids.extend(worker.await.unwrap());
    }
    ids.sort_unstable();
    (key, ids)
}

struct Row {
    name: &'static str,
    outcome: Outcome,
    /// Highest resident memory sampled while the row ran, MiB.
    rss_peak: f64,
    /// The server's CPU time (user and system, all threads) per answer, microseconds:
    /// what the request costs the server alone, apart from the load generator that
    /// shares its cores.
    cpu_us: f64,
}

/// How a row's requests are made: `request(worker, n)` is the n-th request of a worker.
type Requests = Arc<dyn Fn(usize, u64) -> hyper::Request<Full<Bytes>> + Send + Sync>;

/// How long each row of a group is measured, in turns of one second (see [`measure`]):
/// twice a row's time, because what the group is for is a p99, and a tail takes more
/// samples than a median to settle.
fn group_seconds(seconds: u64) -> u32 {
    2 * seconds as u32
}

/// Measures rows together, each after a second of warm-up. A group of more than one
/// row is measured in turns, one second each (a, b, a, b, …; [`group_seconds`] of
/// each in all), pooled per row: the machine's drift during the run (other tenants of
/// a shared host) then falls on every row of the group alike, so that their ratios
/// compare like with like. Memory is sampled while they run. With PETSTORE_BENCH_ONLY
/// set, only the ceiling and the rows whose name contains it run (for profiling one of
/// them); the budgets of the others are then not judged.
/// `group`: each row's name, the process whose CPU time it is charged, and its
/// requests; `pid` is the server, whose memory is sampled.
async fn measure(
    group: Vec<(&'static str, Charged, Requests)>,
    pid: u32,
    connections: usize,
    seconds: u64,
) -> Vec<Row> {
    let only = std::env::var("PETSTORE_BENCH_ONLY").ok();
    let group: Vec<_> = group
        .into_iter()
        .filter(|(name, _, _)| {
            only.as_ref().is_none_or(|only| name.contains(only.as_str()) || name.starts_with("ceiling"))
        })
        .collect();
    for (_, _, requests) in &group {
        common::run(connections, Duration::from_secs(1), requests.clone()).await;
    }
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        std::thread::spawn(move || {
            let mut peak: f64 = 0.0;
            while sampling.load(Ordering::Relaxed) {
                peak = peak.max(rss_mib(pid));
                std::thread::sleep(Duration::from_millis(100));
            }
            peak
        })
    };
    let (slices, slice) = match group.len() {
        1 => (1, Duration::from_secs(seconds)),
        _ => (group_seconds(seconds), Duration::from_secs(1)),
    };
    let mut measured: Vec<(Sample, f64)> = group.iter().map(|_| (Sample::default(), 0.0)).collect();
    for _ in 0..slices {
        for ((_, charged, requests), (sample, cpu)) in group.iter().zip(&mut measured) {
            let cpu_before: f64 = charged.iter().map(|pid| cpu_seconds(*pid)).sum();
            sample.add(common::run(connections, slice, requests.clone()).await);
            *cpu += charged.iter().map(|pid| cpu_seconds(*pid)).sum::<f64>() - cpu_before;
        }
    }
    sampling.store(false, Ordering::Relaxed);
    let rss_peak = sampler.join().unwrap();
    group
        .iter()
        .zip(measured)
        .map(|((name, _, _), (sample, cpu))| {
            let outcome = sample.outcome();
            let answers = (outcome.ok + outcome.conflicts + outcome.other).max(1) as f64;
            Row { name, outcome, rss_peak, cpu_us: cpu * 1e6 / answers }
        })
        .collect()
}

/// The processes whose CPU time a row is charged (the servers that answer it).
type Charged = Vec<u32>;

/// One row, measured alone.
async fn row<F>(name: &'static str, pid: u32, connections: usize, seconds: u64, request: F) -> Vec<Row>
where
    F: Fn(usize, u64) -> hyper::Request<Full<Bytes>> + Send + Sync + 'static,
{
    measure(vec![(name, vec![pid], Arc::new(request))], pid, connections, seconds).await
}

fn get(url: String, key: Option<String>) -> hyper::Request<Full<Bytes>> {
    let mut request = hyper::Request::get(url);
    if let Some(key) = key {
        request = request.header("x-api-key", key);
    }
    request.body(Full::new(Bytes::new())).unwrap()
}

/// A browser session for `key`, as the `Cookie` header that carries it.
async fn sign_in(http: &Http, base: &str, key: &str) -> String {
    let request = hyper::Request::post(format!("{base}/_app/sign_in"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(Full::new(Bytes::from(format!("key={key}"))))
        .unwrap();
    let response = http.request(request).await.expect("an answer");
    let set_cookie = response.headers().get("set-cookie").and_then(|v| v.to_str().ok()).expect("a session cookie");
    set_cookie.split(';').next().unwrap().to_owned()
}

fn order(url: &str, key: &str, pet: i64) -> hyper::Request<Full<Bytes>> {
    hyper::Request::post(url)
        .header("x-api-key", key)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(format!("{{\"petId\":{pet},\"quantity\":1}}"))))
        .unwrap()
}

/// What a first visit to the catalog costs: the page and everything it names (the
/// stylesheet, the JS, the WASM, the icon), as a browser that accepts compression gets
/// them. Hydration itself asks for nothing more (the page carries its data).
async fn first_visit(http: &Http, base: &str) -> (usize, usize, usize, usize) {
    let fetch = |path: String| {
        let http = http.clone();
        let url = format!("{base}{path}");
        async move {
            let request =
                hyper::Request::get(url).header("accept-encoding", "gzip, deflate, br").body(Full::new(Bytes::new()));
            let response = http.request(request.unwrap()).await.expect("an answer");
            assert_eq!(response.status(), 200, "{path}");
            response.into_body().collect().await.unwrap().to_bytes().len()
        }
    };
    let (_, html) = call(http, "GET", &format!("{base}/"), None, None).await;
    let html = String::from_utf8_lossy(&html).into_owned();
    let mut assets: Vec<String> = Vec::new();
    for marker in ["\"/pkg/", "'/pkg/", "\"/favicon"] {
        for (at, _) in html.match_indices(marker) {
            let rest = &html[at + 1..];
            let end = rest.find(['"', '\'']).unwrap_or(rest.len());
            let path = rest[..end].to_owned();
            if !assets.contains(&path) && !path.ends_with(".d.ts") {
                assets.push(path);
            }
        }
    }
    let mut bytes = fetch("/".to_owned()).await;
    for path in &assets {
        bytes += fetch(path.clone()).await;
    }
    (html.len(), fetch("/".to_owned()).await, 1 + assets.len(), bytes)
}

/// The release WASM as a browser downloads it (Chromium's `Accept-Encoding`), twenty
/// times: the bytes on the wire and their encoding, and the server's CPU per download.
/// The build compressed it once (scripts/precompress.sh), so a download should cost
/// the server little more than copying the file.
struct WasmDownload {
    encoding: String,
    bytes: usize,
    cpu_ms: f64,
}

async fn wasm_downloads(http: &Http, base: &str, wasm_path: &str, pid: u32) -> WasmDownload {
    const DOWNLOADS: usize = 20;
    let cpu_before = cpu_seconds(pid);
    let (mut encoding, mut bytes) = (String::new(), 0);
    for _ in 0..DOWNLOADS {
        let request = hyper::Request::get(format!("{base}{wasm_path}"))
            .header("accept-encoding", "gzip, deflate, br, zstd")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let response = http.request(request).await.expect("an answer");
        assert_eq!(response.status(), 200, "{wasm_path}");
        encoding =
            response.headers().get("content-encoding").map_or("none", |value| value.to_str().unwrap_or("?")).to_owned();
        bytes = response.into_body().collect().await.unwrap().to_bytes().len();
    }
    let cpu_ms = (cpu_seconds(pid) - cpu_before) * 1000.0 / DOWNLOADS as f64;
    WasmDownload { encoding, bytes, cpu_ms }
}

/// Photo uploads timed end to end, as staff send them.
struct Uploads {
    width: u32,
    height: u32,
    bytes: usize,
    millis: Vec<f64>,
    /// The server's CPU time per upload.
    cpu_ms: f64,
}

impl Uploads {
    fn p50_ms(&self) -> f64 {
        let mut sorted = self.millis.clone();
        sorted.sort_by(f64::total_cmp);
        sorted[sorted.len() / 2]
    }

    fn max_ms(&self) -> f64 {
        self.millis.iter().copied().fold(0.0, f64::max)
    }
}

/// The largest photo the API takes: a 12-megapixel JPEG (a phone's 4032 × 3024) of
/// just under 5 MiB, sent to `PUT /pets/{petId}/photo` five times, one after another.
async fn photo_uploads(http: &Http, base: &str, key: &str, pet: i64, pid: u32) -> Uploads {
    const LIMIT: usize = 5 * 1024 * 1024;
    let (width, height) = (4032, 3024);
    let jpeg = tokio::task::spawn_blocking(move || {
        // A photo-like picture: gradients under fine noise (from a fixed seed), which
        // JPEG cannot squeeze much; the quality is the highest that stays under 5 MiB.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let picture = image::RgbImage::from_fn(width, height, |x, y| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let noise = (seed % 48) as u32;
            image::Rgb([
                ((x * 255 / width + noise) % 256) as u8,
                ((y * 255 / height + noise / 2) % 256) as u8,
                (((x + y) * 255 / (width + height) + noise) % 256) as u8,
            ])
        });
        let mut best = Vec::new();
        for quality in (60..=98).rev().step_by(2) {
            let mut out = Vec::new();
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality).encode_image(&picture).unwrap();
            if out.len() <= LIMIT {
                best = out;
                break;
            }
        }
        assert!(!best.is_empty() && best.len() > LIMIT * 3 / 4, "a JPEG near 5 MiB ({} bytes)", best.len());
        best
    })
    .await
    .unwrap();
    let url = format!("{base}/api/v1/pets/{pet}/photo");
    let mut millis = Vec::new();
    let cpu_before = cpu_seconds(pid);
    for _ in 0..5 {
        let request = hyper::Request::put(&url)
            .header("x-api-key", key)
            .header("content-type", "image/jpeg")
            .body(Full::new(Bytes::from(jpeg.clone())))
            .unwrap();
        let started = Instant::now();
        let response = http.request(request).await.expect("an answer");
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        millis.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    }
    let cpu_ms = (cpu_seconds(pid) - cpu_before) * 1000.0 / millis.len() as f64;
    Uploads { width, height, bytes: jpeg.len(), millis, cpu_ms }
}

/// The release WASM every page loads, raw bytes and `gzip -9` bytes: the storefront's
/// islands, the module the hash file beside the server binary names (an older build may
/// have left other files in `target/site/pkg`). The staff console's islands are
/// lazy, WASM files of their own fetched only by pages that have them: their
/// number and brotli bytes all together.
struct WasmSize {
    raw: u64,
    gzip: u64,
    /// Where the pages link it.
    path_in_site: String,
    lazy_files: usize,
    lazy_brotli: u64,
}

fn wasm_size(site_root: &Path, bin: &Path) -> WasmSize {
    let hashes = bin.with_file_name("hash.txt");
    let text = std::fs::read_to_string(&hashes)
        .unwrap_or_else(|e| panic!("{} (`make build-release` writes it): {e}", hashes.display()));
    let hash = text.lines().find_map(|line| line.strip_prefix("wasm: ")).expect("a wasm line in hash.txt");
    let path = site_root.join(format!("pkg/petstore.{}.wasm", hash.trim()));
    let gzip = Command::new("gzip").args(["-9", "-c"]).arg(&path).output().expect("gzip runs");
    assert!(gzip.status.success(), "gzip -9 {}", path.display());
    let path_in_site = format!("/pkg/petstore.{}.wasm", hash.trim());
    // The build's own list of its files (the one precompress.sh and dist.sh use).
    let listed = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/site-files.sh"))
        .arg(site_root.join("pkg"))
        .arg(&hashes)
        .output()
        .expect("scripts/site-files.sh runs");
    assert!(listed.status.success(), "site-files.sh: {}", String::from_utf8_lossy(&listed.stderr));
    let lazy: Vec<u64> = String::from_utf8(listed.stdout)
        .unwrap()
        .lines()
        .filter(|file| file.ends_with(".wasm") && !file.contains("/petstore."))
        .map(|file| std::fs::metadata(format!("{file}.br")).expect("the brotli copy of a lazy island").len())
        .collect();
    WasmSize {
        raw: std::fs::metadata(&path).unwrap().len(),
        gzip: gzip.stdout.len() as u64,
        path_in_site,
        lazy_files: lazy.len(),
        lazy_brotli: lazy.iter().sum(),
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[tokio::main]
async fn main() {
    if let Some(replays) = std::env::var_os(Ceiling::ROLE) {
        return Ceiling::serve(PathBuf::from(replays)).await;
    }
    // Emptied once a run: the servers' request logs of a run are gigabytes, and kept
    // from run to run they filled this machine's disk.
    std::fs::write(server_log_path(), b"").unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = std::env::var_os("SERVER_BIN").map_or_else(|| root.join("target/release/server"), PathBuf::from);
    let site_root = root.join("target/site");
    let seconds: u64 = env_or("PETSTORE_BENCH_SECONDS", 5);
    let connections: usize = env_or("PETSTORE_BENCH_CONNECTIONS", 32);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bench.db");
    let http: Http = Client::builder(TokioExecutor::new()).build_http();

    // First start: an empty file, migrations, the first admin key.
    let first = Server::start(&bin, &db, &site_root);
    let admin = cli_admin_key(&bin, &format!("sqlite://{}", db.display()));
    let base = format!("http://{}", first.addr);
    let (key, pets) = seed(&http, &base, &admin).await;
    let first_startup = first.startup;
    first.stop();

    // The measured process: a restart over the seeded catalog.
    let server = Server::start(&bin, &db, &site_root);
    let base = format!("http://{}", server.addr);
    let pid = server.child.id();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_idle = server.rss_mib();

    let sample = pets[PETS / 2];
    // The pet read's and the list's answers, for the ceiling to replay (and the pet's
    // body length, for its padded body).
    let replays = root.join("target/bench/ceiling-replays.json");
    let list_url = format!("{base}/api/v1/pets?limit=20");
    let pet_answer = answer_to_replay(&http, &format!("{base}/api/v1/pets/{sample}"), &key).await;
    let pet_body_len = pet_answer.body.len();
    let to_replay = json!({ "pet": pet_answer, "list": answer_to_replay(&http, &list_url, &key).await });
    std::fs::create_dir_all(replays.parent().unwrap()).unwrap();
    std::fs::write(&replays, serde_json::to_vec_pretty(&to_replay).unwrap()).unwrap();
    let ceiling = Ceiling::start(&replays);
    let ceiling_url = format!("http://{}/{pet_body_len}", ceiling.addr);
    let ceiling_url_for_wrk = ceiling_url.clone();
    let replayed_pet_url = format!("http://{}/replay/pet", ceiling.addr);
    let replayed_list_url = format!("http://{}/replay/list", ceiling.addr);
    let hot = pets[0];
    let distinct: Arc<Vec<i64>> = Arc::new(pets[1..].to_vec());
    let pets = Arc::new(pets);

    let mut rows: Vec<Row> = Vec::new();
    {
        // In turns: the p99 budget compares these two.
        let (base, key, pets) = (base.clone(), key.clone(), pets.clone());
        let ceiling_pid = ceiling.child.id();
        let ceiling: Requests = Arc::new(move |_, _| get(ceiling_url.clone(), None));
        let replayed_pet_url = replayed_pet_url.clone();
        let replayed: Requests = Arc::new(move |_, _| get(replayed_pet_url.clone(), None));
        let pet: Requests = Arc::new(move |w, n| {
            let pet = pets[(w * 7919 + n as usize * 31) % pets.len()];
            get(format!("{base}/api/v1/pets/{pet}"), Some(key.clone()))
        });
        let group = vec![
            (CEILING, vec![ceiling_pid], ceiling),
            (CEILING_PET, vec![ceiling_pid], replayed),
            ("GET /api/v1/pets/{petId}", vec![pid], pet),
        ];
        rows.extend(measure(group, pid, connections, seconds).await);
    }
    {
        let (list_url, key) = (list_url.clone(), key.clone());
        let ceiling_pid = ceiling.child.id();
        let replayed_list_url = replayed_list_url.clone();
        let replayed: Requests = Arc::new(move |_, _| get(replayed_list_url.clone(), None));
        let list: Requests = Arc::new(move |_, _| get(list_url.clone(), Some(key.clone())));
        let group = vec![(CEILING_LIST, vec![ceiling_pid], replayed), ("GET /api/v1/pets?limit=20", vec![pid], list)];
        rows.extend(measure(group, pid, connections, seconds).await);
    }
    {
        let (url, key, distinct) = (format!("{base}/api/v1/store/orders"), key.clone(), distinct.clone());
        rows.extend(
            row("POST /api/v1/store/orders, distinct pets", pid, connections, seconds, move |w, n| {
                order(&url, &key, distinct[(w * 7919 + n as usize) % distinct.len()])
            })
            .await,
        );
    }
    {
        let (url, key) = (format!("{base}/api/v1/store/orders"), key.clone());
        rows.extend(
            row("POST /api/v1/store/orders, one hot pet", pid, connections, seconds, move |_, _| {
                order(&url, &key, hot)
            })
            .await,
        );
    }
    {
        let base = base.clone();
        rows.extend(
            row("SSR catalog page /", pid, connections, seconds, move |_, _| get(format!("{base}/"), None)).await,
        );
    }
    {
        // A signed-in visitor's catalog: the kept page with their own header island
        // (`server::pages`), the session checked on each request.
        let (base, cookie) = (base.clone(), sign_in(&http, &base, &key).await);
        rows.extend(
            row("SSR catalog page /, signed in", pid, connections, seconds, move |_, _| {
                hyper::Request::get(format!("{base}/"))
                    .header("cookie", cookie.clone())
                    .body(Full::new(Bytes::new()))
                    .unwrap()
            })
            .await,
        );
    }
    {
        let (base, pets) = (base.clone(), pets.clone());
        rows.extend(
            row("SSR pet page /pets/{id}", pid, connections, seconds, move |w, n| {
                get(format!("{base}/pets/{}", pets[(w * 7919 + n as usize * 31) % pets.len()]), None)
            })
            .await,
        );
    }

    let (html_raw, html_sent, visit_requests, visit_bytes) = first_visit(&http, &base).await;
    let upload = photo_uploads(&http, &base, &key, sample, pid).await;
    let wasm = wasm_size(&site_root, &bin);
    let wasm_download = wasm_downloads(&http, &base, &wasm.path_in_site, pid).await;
    let rss_load = rows.iter().map(|r| r.rss_peak).fold(0.0, f64::max);
    // The same GET rows measured by a load generator nobody here wrote. The ceiling,
    // the pet read and the list are measured in turns, so a slow stretch of the machine
    // falls on all alike; with them, what the log costs: the same read from two more servers
    // over the same file, started alike but for the log (the default, and
    // `RUST_LOG=warn`), so that nothing but the log tells them apart.
    let logged = Server::start_with(&bin, &db, &site_root, &[]);
    let quiet = Server::start_with(&bin, &db, &site_root, &[("RUST_LOG", "warn")]);
    let pet_url = format!("{base}/api/v1/pets/{sample}");
    let logged_pet_url = format!("http://{}/api/v1/pets/{sample}", logged.addr);
    let quiet_pet_url = format!("http://{}/api/v1/pets/{sample}", quiet.addr);
    let turns = wrk_in_turns(
        &[
            (&ceiling_url_for_wrk, None),
            (&pet_url, Some(&key)),
            (&logged_pet_url, Some(&key)),
            (&quiet_pet_url, Some(&key)),
            (&list_url, Some(&key)),
            (&replayed_pet_url, None),
            (&replayed_list_url, None),
        ],
        connections,
        seconds,
    );
    logged.stop();
    quiet.stop();
    let external: Vec<(&str, Option<Wrk>)> = vec![
        (CEILING, turns[0]),
        ("GET /api/v1/pets/{petId}", turns[1]),
        ("GET /api/v1/pets/{petId}, fresh server, log on", turns[2]),
        ("GET /api/v1/pets/{petId}, fresh server, log off", turns[3]),
        ("GET /api/v1/pets?limit=20", turns[4]),
        (CEILING_PET, turns[5]),
        (CEILING_LIST, turns[6]),
        ("SSR catalog page /", wrk(&format!("{base}/"), None, connections, seconds)),
    ];
    let startup = server.startup;
    server.stop();
    // Stopped here, not at the end: `exit(1)` below would skip its `Drop`, and the
    // process would outlive the run holding the caller's standard output.
    drop(ceiling);

    // What the default durability (every commit synced to disk) costs: the same orders
    // from a server started with `--durability normal`, over the same file.
    let relaxed = Server::start_with(&bin, &db, &site_root, &[("PETSTORE_DURABILITY", "normal")]);
    {
        let (url, key, distinct) =
            (format!("http://{}/api/v1/store/orders", relaxed.addr), key.clone(), distinct.clone());
        let pid = relaxed.child.id();
        rows.extend(
            row(
                "POST /api/v1/store/orders, distinct pets, durability normal",
                pid,
                connections,
                seconds,
                move |w, n| order(&url, &key, distinct[(w * 7919 + n as usize) % distinct.len()]),
            )
            .await,
        );
    }
    relaxed.stop();

    // Several servers over one PostgreSQL (`make bench` runs the suite beside a
    // throwaway PostgreSQL and Redis): a pet read and orders, with one server and with
    // two sharing the database, the counters in PostgreSQL and in Redis.
    if let Ok(redis) = std::env::var("PETSTORE_TEST_REDIS") {
        for (redis, [read_one, orders_one, read_two, orders_two]) in [(None, POSTGRES_ROWS), (Some(redis), REDIS_ROWS)]
        {
            let url = app::db::testing::new_postgres_database().await;
            let settings: Vec<(&str, &str)> =
                redis.iter().map(|redis| ("PETSTORE_REDIS_URL", redis.as_str())).collect();
            let first = Server::start_over(&bin, &url, &site_root, &settings);
            let admin = cli_admin_key(&bin, &url);
            let (key, pets) = seed(&http, &format!("http://{}", first.addr), &admin).await;
            let second = Server::start_over(&bin, &url, &site_root, &settings);
            let bases = Arc::new([format!("http://{}", first.addr), format!("http://{}", second.addr)]);
            let (pids, pets) = ([first.child.id(), second.child.id()], Arc::new(pets));
            for servers in [1, 2] {
                let (read, orders) = if servers == 1 { (read_one, orders_one) } else { (read_two, orders_two) };
                let (bases_read, key_read, pets_read) = (bases.clone(), key.clone(), pets.clone());
                let read_requests: Requests = Arc::new(move |w, n| {
                    let pet = pets_read[(w * 7919 + n as usize * 31) % pets_read.len()];
                    get(format!("{}/api/v1/pets/{pet}", bases_read[w % servers]), Some(key_read.clone()))
                });
                let (bases_order, key_order, pets_order) = (bases.clone(), key.clone(), pets.clone());
                let order_requests: Requests = Arc::new(move |w, n| {
                    let url = format!("{}/api/v1/store/orders", bases_order[w % servers]);
                    order(&url, &key_order, pets_order[(w * 7919 + n as usize) % pets_order.len()])
                });
                let charged = pids[..servers].to_vec();
                rows.extend(measure(vec![(read, charged.clone(), read_requests)], pids[0], connections, seconds).await);
                rows.extend(measure(vec![(orders, charged, order_requests)], pids[0], connections, seconds).await);
            }
            // No order oversold: every pet's stock and its orders add up to what it had.
            let pool = sqlx::PgPool::connect(&url).await.unwrap();
            let oversold: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM inventory i WHERE i.quantity < 0 OR i.quantity + (
                   SELECT COALESCE(SUM(o.quantity), 0) FROM orders o WHERE o.pet_id = i.pet_id) <> 1000000",
            )
            .fetch_one(&pool)
            .await
            .unwrap();
            assert_eq!(oversold, 0, "stock plus orders is what each pet had");
            pool.close().await;
            first.stop();
            second.stop();
        }
    } else {
        println!("(no PostgreSQL rows: run through `make bench`, which starts PostgreSQL and Redis)");
    }

    // The table.
    let ceiling = rows[0].outcome;
    println!();
    println!(
        "{connections} connections, {seconds} s a row after 1 s of warm-up (the first two: {} s each, in turns of \
         1 s); {PETS} pets in {CATEGORIES} categories",
        group_seconds(seconds)
    );
    println!(
        "{:<76} {:>10} {:>8} {:>9} {:>9} {:>8} {:>6} {:>11}",
        "row", "req/s", "ceiling", "p50 ms", "p99 ms", "errors", "5xx", "server µs"
    );
    for r in &rows {
        let o = r.outcome;
        println!(
            "{:<76} {:>10.0} {:>7.0}% {:>9.2} {:>9.2} {:>8} {:>6} {:>11.1}",
            r.name,
            o.per_second(),
            100.0 * o.per_second() / ceiling.per_second(),
            f64::from(o.p50_us) / 1000.0,
            f64::from(o.p99_us) / 1000.0,
            o.other,
            o.server_errors,
            r.cpu_us
        );
    }
    let startup_ms = startup.as_secs_f64() * 1000.0;
    println!();
    println!(
        "start to first 200: {startup_ms:.0} ms over the seeded catalog ({:.0} ms on an empty file)",
        first_startup.as_secs_f64() * 1000.0
    );
    println!("resident memory: {rss_idle:.1} MiB idle, {rss_load:.1} MiB at most under load");
    println!("release WASM every page loads: {} bytes raw, {} bytes gzip -9", wasm.raw, wasm.gzip);
    println!(
        "release WASM as a browser downloads it: {} bytes, encoding {}, {:.2} ms of server CPU per download",
        wasm_download.bytes, wasm_download.encoding, wasm_download.cpu_ms
    );
    println!(
        "lazy islands (the staff console's, fetched by the pages that have them): {} WASM files, {} bytes brotli in all",
        wasm.lazy_files, wasm.lazy_brotli
    );
    println!("catalog page: {html_raw} bytes of HTML ({html_sent} bytes as sent compressed)");
    println!("first visit to the catalog: {visit_requests} requests, {visit_bytes} bytes (compressed)");
    println!(
        "photo upload: a {} × {} JPEG of {} bytes, {} uploads one after another: p50 {:.0} ms, slowest {:.0} ms, \
         {:.0} ms of server CPU each",
        upload.width,
        upload.height,
        upload.bytes,
        upload.millis.len(),
        upload.p50_ms(),
        upload.max_ms(),
        upload.cpu_ms
    );
    println!();
    println!(
        "measured by wrk (Debian's), {connections} connections, 2 threads, {seconds} s each; the first seven \
         rows in turns, {WRK_TURNS} rounds:"
    );
    println!("{:<50} {:>10} {:>8} {:>9} {:>9}", "row", "req/s", "ceiling", "p50 ms", "p99 ms");
    let wrk_ceiling = external[0].1.map(|w| w.per_second);
    for (name, figures) in &external {
        match figures {
            Some(w) => println!(
                "{name:<50} {:>10.0} {:>7.0}% {:>9.2} {:>9.2}",
                w.per_second,
                wrk_ceiling.map_or(f64::NAN, |c| 100.0 * w.per_second / c),
                w.p50_ms,
                w.p99_ms
            ),
            None => println!("{name:<50} (wrk not found or failed: `apt-get install wrk`)"),
        }
    }

    // Against the limit for the same bytes: a bare axum process sending what the store sent.
    let same_bytes = |row: &str, ceiling: &str| -> Option<String> {
        let (o, c) = (find_row(&rows, row)?, find_row(&rows, ceiling)?);
        let wrk_figures = |name: &str| external.iter().find(|(n, _)| *n == name).and_then(|(_, w)| *w);
        let by_wrk = match (wrk_figures(row), wrk_figures(ceiling)) {
            (Some(w), Some(c)) => format!(
                "by wrk {:.0} % (p99 {:.2} against {:.2} ms, {:.2} ×)",
                100.0 * w.per_second / c.per_second,
                w.p99_ms,
                c.p99_ms,
                w.p99_ms / c.p99_ms
            ),
            _ => "not by wrk".to_owned(),
        };
        Some(format!(
            "{row}: {:.0} % of its replayed answer's ceiling (p99 {:.2} against {:.2} ms), {by_wrk}",
            100.0 * o.per_second() / c.per_second(),
            f64::from(o.p99_us) / 1000.0,
            f64::from(c.p99_us) / 1000.0
        ))
    };
    println!();
    println!("against a bare axum process sending the same status, headers and body:");
    for (row, ceiling) in [("GET /api/v1/pets/{petId}", CEILING_PET), ("GET /api/v1/pets?limit=20", CEILING_LIST)] {
        println!("  {}", same_bytes(row, ceiling).unwrap_or_else(|| format!("{row}: not measured")));
    }

    // The budgets (docs/PERFORMANCE.md).
    let find = |prefix: &str| rows.iter().find(|r| r.name.starts_with(prefix)).map(|r| r.outcome);
    let judge = |prefix: &str, test: &dyn Fn(Outcome) -> bool| find(prefix).map(test);
    // The wrk figures a budget compares: the ceiling, the pet read, the pet read from
    // the fresh servers with the log on and off, the list, and the two replayed
    // answers (`None` without wrk).
    let wrk_figures = || -> Option<[Wrk; 7]> {
        let figure = |i: usize| external[i].1;
        Some([figure(0)?, figure(1)?, figure(2)?, figure(3)?, figure(4)?, figure(5)?, figure(6)?])
    };
    // A row wrk saw errors in (answers other than 2xx or 3xx) meets no budget.
    let by_wrk = |test: &dyn Fn([Wrk; 7]) -> bool| wrk_figures().map(|f| f.iter().all(|w| !w.errors) && test(f));
    let budgets: Vec<(&str, Option<bool>)> = vec![
        (
            "GET /pets/{petId} ≥ 50 % of the ceiling's req/s",
            judge("GET /api/v1/pets/", &|o| o.per_second() >= 0.5 * ceiling.per_second()),
        ),
        (
            "GET /pets/{petId} p99 ≤ 2 × the ceiling's p99",
            judge("GET /api/v1/pets/", &|o| o.p99_us <= 2 * ceiling.p99_us),
        ),
        (
            "GET /pets?limit=20 ≥ 30 % of the ceiling's req/s",
            judge("GET /api/v1/pets?", &|o| o.per_second() >= 0.3 * ceiling.per_second()),
        ),
        (
            "≥ 3,000 orders/s over distinct pets",
            judge("POST /api/v1/store/orders, distinct", &|o| o.per_second() >= 3000.0),
        ),
        ("no 5xx in any row", Some(rows.iter().all(|r| r.outcome.server_errors == 0))),
        (
            "PostgreSQL, counters in PostgreSQL: GET /pets/{petId} ≥ 25 % of the ceiling",
            judge(POSTGRES_ROWS[0], &|o| o.per_second() >= 0.25 * ceiling.per_second()),
        ),
        (
            "PostgreSQL, counters in Redis: GET /pets/{petId} ≥ 25 % of the ceiling",
            judge(REDIS_ROWS[0], &|o| o.per_second() >= 0.25 * ceiling.per_second()),
        ),
        (
            "PostgreSQL, counters in PostgreSQL: ≥ 2,000 orders/s with two servers",
            judge(POSTGRES_ROWS[3], &|o| o.per_second() >= 2000.0),
        ),
        (
            "PostgreSQL, counters in Redis: ≥ 2,000 orders/s with two servers",
            judge(REDIS_ROWS[3], &|o| o.per_second() >= 2000.0),
        ),
        ("SSR catalog p50 < 5 ms", judge("SSR catalog", &|o| o.p50_us < 5_000)),
        ("SSR catalog, signed in: p50 < 2 ms", judge("SSR catalog page /, signed in", &|o| o.p50_us < 2_000)),
        (
            "SSR catalog, signed in: < 100 µs of server CPU a page",
            rows.iter().find(|r| r.name.starts_with("SSR catalog page /, signed in")).map(|r| r.cpu_us < 100.0),
        ),
        (
            "by wrk: GET /pets/{petId} ≥ 60 % of the ceiling's req/s",
            by_wrk(&|[ceiling, pet, ..]| pet.per_second >= 0.6 * ceiling.per_second),
        ),
        (
            "by wrk: GET /pets/{petId} p99 ≤ 2 × the ceiling's p99",
            by_wrk(&|[ceiling, pet, ..]| pet.p99_ms <= 2.0 * ceiling.p99_ms),
        ),
        (
            "by wrk: GET /pets?limit=20 ≥ 40 % of the ceiling's req/s",
            by_wrk(&|[ceiling, _, _, _, list, ..]| list.per_second >= 0.4 * ceiling.per_second),
        ),
        (
            "by wrk: the request log costs < 10 % of GET /pets/{petId}",
            by_wrk(&|[_, _, logged, quiet, ..]| logged.per_second >= 0.9 * quiet.per_second),
        ),
        (
            "by wrk: GET /pets/{petId} ≥ 90 % of a bare axum process sending the same answer",
            by_wrk(&|[_, pet, _, _, _, replayed, _]| pet.per_second >= 0.9 * replayed.per_second),
        ),
        (
            "by wrk: GET /pets/{petId} p99 ≤ 1.5 × that process's p99",
            by_wrk(&|[_, pet, _, _, _, replayed, _]| pet.p99_ms <= 1.5 * replayed.p99_ms),
        ),
        (
            "by wrk: GET /pets?limit=20 ≥ 85 % of a bare axum process sending the same answer",
            by_wrk(&|[_, _, _, _, list, _, replayed]| list.per_second >= 0.85 * replayed.per_second),
        ),
        ("start to first 200 < 300 ms", Some(startup_ms < 300.0)),
        ("resident memory under load < 80 MB", Some(rss_load * 1.048_576 < 80.0)),
        ("release WASM every page loads < 400 KB gzip", Some(wasm.gzip < 400_000)),
        (
            "a shopper's page downloads ≤ 200 KB of WASM (brotli)",
            Some(wasm_download.encoding == "br" && wasm_download.bytes <= 200_000),
        ),
        (
            "a WASM download is the brotli file built, < 5 ms of server CPU",
            Some(wasm_download.encoding == "br" && wasm_download.cpu_ms < 5.0),
        ),
        ("a 5 MiB photo upload processed in < 1 s (p50)", Some(upload.p50_ms() < 1_000.0)),
    ];
    println!();
    for (budget, met) in &budgets {
        let verdict = match met {
            Some(true) => "met   ",
            Some(false) => "MISSED",
            None => "not run",
        };
        println!("{verdict} {budget}");
    }

    let results = json!({
        "machine": machine(),
        "connections": connections,
        "secondsPerRow": seconds,
        "secondsOfCeilingAndGetPetInTurns": group_seconds(seconds),
        "rows": rows.iter().map(|r| json!({
            "name": r.name,
            "requestsPerSecond": r.outcome.per_second().round(),
            "ratioToCeiling": (1000.0 * r.outcome.per_second() / ceiling.per_second()).round() / 1000.0,
            "p50Ms": f64::from(r.outcome.p50_us) / 1000.0,
            "p99Ms": f64::from(r.outcome.p99_us) / 1000.0,
            "ok": r.outcome.ok,
            "conflicts": r.outcome.conflicts,
            "errors": r.outcome.other,
            "serverErrors": r.outcome.server_errors,
            "rssPeakMiB": r.rss_peak,
            "serverCpuMicrosPerRequest": (10.0 * r.cpu_us).round() / 10.0,
        })).collect::<Vec<_>>(),
        "wrk": external.iter().map(|(name, w)| json!({
            "name": name,
            "requestsPerSecond": w.map(|w| w.per_second.round()),
            "p50Ms": w.map(|w| w.p50_ms),
            "p99Ms": w.map(|w| w.p99_ms),
        })).collect::<Vec<_>>(),
        "startupMs": startup_ms.round(),
        "startupEmptyFileMs": (first_startup.as_secs_f64() * 1000.0).round(),
        "rssIdleMiB": rss_idle,
        "rssUnderLoadMiB": rss_load,
        "wasmBytes": wasm.raw,
        "wasmGzipBytes": wasm.gzip,
        "lazyIslands": { "wasmFiles": wasm.lazy_files, "brotliBytes": wasm.lazy_brotli },
        "wasmDownload": { "bytes": wasm_download.bytes, "encoding": wasm_download.encoding, "serverCpuMs": wasm_download.cpu_ms },
        "catalogHtmlBytes": html_raw,
        "catalogHtmlSentBytes": html_sent,
        "firstVisitRequests": visit_requests,
        "firstVisitBytes": visit_bytes,
        "photoUpload": {
            "jpegBytes": upload.bytes,
            "pixels": [upload.width, upload.height],
            "millis": upload.millis,
            "p50Ms": upload.p50_ms(),
            "serverCpuMsEach": upload.cpu_ms,
        },
        "budgets": budgets.iter().map(|(b, met)| json!({ "budget": b, "met": met })).collect::<Vec<_>>(),
    });
    let out = root.join("target/bench");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("results.json"), serde_json::to_string_pretty(&results).unwrap()).unwrap();
    println!("\nwritten to target/bench/results.json");
    if budgets.iter().any(|(_, met)| *met == Some(false)) {
        std::process::exit(1);
    }
}

/// The figures of the row named `name`.
fn find_row(rows: &[Row], name: &str) -> Option<Outcome> {
    rows.iter().find(|r| r.name == name).map(|r| r.outcome)
}

/// The first admin key, made with the server's own CLI (the first start's printed one
/// went to a drained pipe).
fn cli_admin_key(bin: &Path, url: &str) -> String {
    let out = Command::new(bin)
        .args(["keys", "create", "--name", "bench admin", "--role", "admin", "--plan", "pro"])
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .output()
        .expect("the CLI runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// What the figures were measured on.
fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model =
        cpuinfo.lines().find_map(|l| l.strip_prefix("model name")).map(|m| m.trim_start_matches([' ', '\t', ':']));
    json!({
        "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "cpu": model,
        "kernel": std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim(),
    })
}

/// Where the measured servers' logs go: a file, as an operator's would.
fn server_log() -> Stdio {
    let file = std::fs::OpenOptions::new().create(true).append(true).open(server_log_path()).unwrap();
    Stdio::from(file)
}

/// `target/bench/server.log`: every server of a run appends its log there.
fn server_log_path() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("server.log")
}

/// How many rounds `wrk_in_turns` measures each target.
const WRK_TURNS: usize = 3;

/// The `targets` measured by wrk in turns, `WRK_TURNS` rounds of `seconds` each: the
/// requests per second, p50 and p99 each the mean of its rounds.
fn wrk_in_turns(targets: &[(&str, Option<&str>)], connections: usize, seconds: u64) -> Vec<Option<Wrk>> {
    let mut rounds: Vec<Vec<Wrk>> = vec![Vec::new(); targets.len()];
    for _ in 0..WRK_TURNS {
        for ((url, key), measured) in targets.iter().zip(&mut rounds) {
            measured.extend(wrk(url, *key, connections, seconds));
        }
    }
    rounds
        .into_iter()
        .map(|measured| {
            let n = measured.len() as f64;
            (measured.len() == WRK_TURNS).then(|| Wrk {
                per_second: measured.iter().map(|w| w.per_second).sum::<f64>() / n,
                p50_ms: measured.iter().map(|w| w.p50_ms).sum::<f64>() / n,
                p99_ms: measured.iter().map(|w| w.p99_ms).sum::<f64>() / n,
                errors: measured.iter().any(|w| w.errors),
            })
        })
        .collect()
}

/// `wrk -t2 -c<connections> -d<seconds>s --latency` against `url`, with `key`.
fn wrk(url: &str, key: Option<&str>, connections: usize, seconds: u64) -> Option<Wrk> {
    common::external::wrk(2, connections, seconds, key.map(|key| format!("x-api-key: {key}")).as_deref(), url)
}
