//! `make bench-scale`: does the store stay flat as it grows? The release server, in its
//! default configuration, over two SQLite files alike but for their size: 1,000 pets
//! and 1,000 orders, then 1,000,000 pets in 200 categories and 1,000,000 orders. Each
//! file is filled by bulk SQL, rows made inside SQLite by one statement per table (the
//! search index and the catalog's version kept by the schema's own triggers, as for
//! rows any other client writes).
//!
//! For each size and row: the first answer after the server starts (nothing cached
//! yet, timed here), then wrk (Debian's) with one connection for
//! PETSTORE_SCALE_SECONDS (default 3): requests per second, p50 and p99 of a client
//! alone with the store. At the end, each row's growth factor (its p50 at 1,000,000
//! over its p50 at 1,000), start-up and memory, the budgets of docs/PERFORMANCE.md, and
//! `target/bench/scale.json`.
//!
//! Environment: SERVER_BIN (the release server, with its `hash.txt` beside it),
//! PETSTORE_SCALE_PETS (the large size, default 1,000,000).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::external::rss_mib;
use serde_json::json;
use sqlx::ConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;

const CATEGORIES: u64 = 200;
const SMALL: u64 = 1_000;

/// Twenty names, two to a pet and a number: `Ziggy Rocky 123456`.
const NAMES: [&str; 20] = [
    "Rex", "Fluffy", "Max", "Bella", "Luna", "Charlie", "Coco", "Milo", "Daisy", "Rocky", "Bailey", "Simba", "Nala",
    "Oscar", "Ruby", "Teddy", "Ziggy", "Pepper", "Ginger", "Shadow",
];

/// Ten words and ten likings, a description to a pet: `A calm companion who likes
/// games.` (none holds "bel", so the catalog's search for it finds names alone).
const WORDS: [&str; 10] =
    ["calm", "playful", "curious", "gentle", "lively", "shy", "clever", "loyal", "cheeky", "sleepy"];
const LIKINGS: [&str; 10] = [
    "long walks",
    "the sofa",
    "a warm rock",
    "morning sun",
    "company",
    "quiet evenings",
    "games",
    "the garden",
    "a good brush",
    "new toys",
];

/// What is measured at each size: a name and a path (with `{category}` and `{page500}`
/// filled in), and who asks: an API key, or a staff member's browser session.
const ROWS: [(&str, &str, Who); 13] = [
    ("GET /pets, first page", "/api/v1/pets?limit=20", Who::Key),
    ("GET /pets?status=sold", "/api/v1/pets?status=sold&limit=20", Who::Key),
    ("GET /pets?categoryId=…", "/api/v1/pets?categoryId={category}&limit=20", Who::Key),
    ("GET /pets?q=bel (common)", "/api/v1/pets?q=bel&limit=20", Who::Key),
    ("GET /pets?q=zzq (absent)", "/api/v1/pets?q=zzq&limit=20", Who::Key),
    ("GET /pets, page 500 by Link (limit=2)", "{page500}", Who::Key),
    ("GET /store/inventory", "/api/v1/store/inventory?limit=20", Who::Key),
    ("GET /store/orders (staff, all)", "/api/v1/store/orders?limit=20", Who::Key),
    ("catalog page /?q=bel", "/?q=bel", Who::Visitor),
    ("catalog page /?q=warm rock (descriptions)", "/?q=warm%20rock", Who::Visitor),
    ("catalog page /?q=zzq (absent)", "/?q=zzq", Who::Visitor),
    ("categories page /categories", "/categories", Who::Visitor),
    ("staff dashboard /admin", "/admin", Who::Staff),
];

#[derive(Clone, Copy, PartialEq)]
enum Who {
    Key,
    Visitor,
    Staff,
}

/// One row at one size.
#[derive(Clone, Copy)]
struct Figures {
    first_ms: f64,
    per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
}

/// One size's run.
struct Run {
    pets: u64,
    seed_seconds: f64,
    startup_ms: f64,
    rss_idle_mib: f64,
    rss_after_mib: f64,
    rows: Vec<Figures>,
}

#[tokio::main]
async fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    let bin = std::env::var("SERVER_BIN").map_or_else(|_| root.join("target/release/server"), PathBuf::from);
    let site_root = root.join("target/site");
    let large: u64 = std::env::var("PETSTORE_SCALE_PETS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let seconds: u64 = std::env::var("PETSTORE_SCALE_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let dir = tempfile::tempdir().unwrap();

    let runs: Vec<Run> = {
        let mut runs = Vec::new();
        for pets in [SMALL, large] {
            runs.push(run(&bin, &site_root, &dir.path().join(format!("scale-{pets}.db")), pets, seconds).await);
        }
        runs
    };
    let (small, big) = (&runs[0], &runs[1]);

    println!();
    println!(
        "wrk (Debian's), 1 connection, {seconds} s a row; `first` is the first answer after the server starts; \
         growth = p50 at {large} pets / p50 at {SMALL}"
    );
    println!(
        "{:<40} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7}",
        "row", "first 1k", "p50 1k", "first big", "p50 big", "p99 big", "req/s big", "growth"
    );
    let mut growths = Vec::new();
    for (i, (name, _, _)) in ROWS.iter().enumerate() {
        let (s, b) = (small.rows[i], big.rows[i]);
        let growth = b.p50_ms / s.p50_ms;
        growths.push(growth);
        println!(
            "{name:<40} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.0} {:>6.2}×",
            s.first_ms, s.p50_ms, b.first_ms, b.p50_ms, b.p99_ms, b.per_second, growth
        );
    }
    println!();
    for run in &runs {
        println!(
            "{:>9} pets and orders: seeded in {:.1} s; start to first 200 {:.0} ms; {:.1} MiB idle, {:.1} MiB after the rows",
            run.pets, run.seed_seconds, run.startup_ms, run.rss_idle_mib, run.rss_after_mib
        );
    }

    let budgets: Vec<(String, bool)> = vec![
        (format!("every row's p50 < 5 ms at {large} pets"), big.rows.iter().all(|r| r.p50_ms < 5.0)),
        (format!("no row's p50 more than 3 × its p50 at {SMALL} pets"), growths.iter().all(|g| *g <= 3.0)),
        (format!("start to first 200 < 1 s at {large} pets"), big.startup_ms < 1000.0),
        (format!("seeding {large} pets and orders < 2 minutes"), big.seed_seconds < 120.0),
    ];
    println!();
    for (budget, met) in &budgets {
        println!("{} {budget}", if *met { "met   " } else { "MISSED" });
    }

    let results = json!({
        "connections": 1,
        "secondsPerRow": seconds,
        "runs": runs.iter().map(|run| json!({
            "pets": run.pets,
            "orders": run.pets,
            "categories": CATEGORIES,
            "seedSeconds": run.seed_seconds,
            "startupMs": run.startup_ms,
            "rssIdleMiB": run.rss_idle_mib,
            "rssAfterMiB": run.rss_after_mib,
            "rows": ROWS.iter().zip(&run.rows).map(|((name, _, _), f)| json!({
                "name": name,
                "firstMs": f.first_ms,
                "requestsPerSecond": f.per_second.round(),
                "p50Ms": f.p50_ms,
                "p99Ms": f.p99_ms,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "growth": ROWS.iter().zip(&growths).map(|((name, _, _), g)| json!({ "name": name, "p50Growth": g })).collect::<Vec<_>>(),
        "budgets": budgets.iter().map(|(b, met)| json!({ "budget": b, "met": met })).collect::<Vec<_>>(),
    });
    let out = root.join("target/bench");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("scale.json"), serde_json::to_string_pretty(&results).unwrap()).unwrap();
    println!("\nwritten to target/bench/scale.json");
    if budgets.iter().any(|(_, met)| !met) {
        std::process::exit(1);
    }
}

/// Seeds a store of `pets` pets and as many orders, starts the server over it and
/// measures every row.
async fn run(bin: &Path, site_root: &Path, db: &Path, pets: u64, seconds: u64) -> Run {
    let url = format!("sqlite://{}", db.display());
    // The server's own CLI makes the file (its migrations) and a key no row exhausts.
    let key = cli(bin, &url, &["keys", "create", "--name", "scale", "--role", "admin", "--plan", "enterprise"]);
    let seeding = Instant::now();
    seed(db, pets).await;
    let seed_seconds = seeding.elapsed().as_secs_f64();
    println!("{pets} pets and {pets} orders seeded in {seed_seconds:.1} s");

    let mut server = Server::start(bin, &url, site_root);
    let rss_idle_mib = rss_mib(server.child.id());
    let base = format!("http://{}", server.addr);
    let cookie = sign_in(&server.addr, &key);
    let page500 = page_by_links(&server.addr, &key, "/api/v1/pets?limit=2", 499);
    let mut rows = Vec::new();
    for (name, path, who) in ROWS {
        let path = path.replace("{category}", &(CATEGORIES / 2).to_string()).replace("{page500}", &page500);
        let header = match who {
            Who::Key => Some(format!("x-api-key: {key}")),
            Who::Visitor => None,
            Who::Staff => Some(format!("cookie: {cookie}")),
        };
        let started = Instant::now();
        let (status, _) = get(&server.addr, &path, header.as_deref());
        let first_ms = started.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(status, 200, "{name}: {path}");
        let wrk = wrk(&format!("{base}{path}"), header.as_deref(), seconds)
            .unwrap_or_else(|| panic!("wrk failed on {name} (`make wrk` installs it)"));
        rows.push(Figures { first_ms, ..wrk });
    }
    let rss_after_mib = rss_mib(server.child.id());
    server.stop();
    Run { pets, seed_seconds, startup_ms: server.startup.as_secs_f64() * 1000.0, rss_idle_mib, rss_after_mib, rows }
}

/// The catalog and the orders, made inside SQLite: 200 categories, `pets` pets (two
/// names and a number, a description, a status and a price each, 5 in stock) and `pets` orders over
/// the last 12 days, half of them complete, placed by the scale key.
async fn seed(db: &Path, pets: u64) {
    let options = SqliteConnectOptions::new().filename(db).pragma("synchronous", "OFF").pragma("journal_mode", "WAL");
    let mut conn = options.connect().await.expect("the seeded file opens");
    let names = NAMES.iter().enumerate().map(|(k, name)| format!("({k}, '{name}')")).collect::<Vec<_>>().join(", ");
    // As JSON arrays, read by index: two more joins let SQLite's planner put the
    // million-row series inside them.
    let (words, likings) = (serde_json::to_string(&WORDS).unwrap(), serde_json::to_string(&LIKINGS).unwrap());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let statements = [
        "BEGIN".to_owned(),
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {CATEGORIES})
             INSERT INTO categories (name, name_key, description)
             SELECT 'Kind ' || i, 'kind ' || i, 'Animals of kind ' || i FROM n"
        ),
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {pets}),
             w(k, name) AS (VALUES {names})
             INSERT INTO pets (name, name_key, category_id, status, price, description)
             SELECT a.name || ' ' || b.name || ' ' || n.i, lower(a.name || ' ' || b.name || ' ' || n.i),
                    1 + (n.i * 7919) % {CATEGORIES},
                    CASE n.i % 3 WHEN 0 THEN 'available' WHEN 1 THEN 'pending' ELSE 'sold' END,
                    100 * (10 + (n.i * 37) % 900),
                    'A ' || json_extract('{words}', '$[' || ((n.i * 3) % 10) || ']') || ' companion who likes '
                        || json_extract('{likings}', '$[' || ((n.i / 10) % 10) || ']') || '.'
             FROM n JOIN w a ON a.k = (n.i * 13) % 20 JOIN w b ON b.k = (n.i / 20 * 7) % 20"
        ),
        "INSERT INTO inventory (pet_id, quantity) SELECT id, 5 FROM pets".to_owned(),
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {pets})
             INSERT INTO orders (pet_id, key_id, quantity, complete, created_at, unit_price, total)
             SELECT 1 + (n.i * 104729) % {pets}, (SELECT MIN(id) FROM api_keys), 1, n.i % 2,
                    {now} - (({pets} - n.i) * 1000000 / {pets}), 1000, 1000
             FROM n"
        ),
        "COMMIT".to_owned(),
        "ANALYZE".to_owned(),
    ];
    for statement in statements {
        let result = sqlx::raw_sql(sqlx::AssertSqlSafe(statement.clone())).execute(&mut conn).await;
        result.unwrap_or_else(|e| panic!("{e}: {statement}"));
    }
}

/// Runs the server's CLI over `url`; its standard output, trimmed.
fn cli(bin: &Path, url: &str, args: &[&str]) -> String {
    let out = Command::new(bin)
        .args(args)
        .args(["--per-minute", "2000000000", "--per-day", "2000000000"])
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .output()
        .expect("the CLI runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// The release server as a child process, in its default configuration.
struct Server {
    child: Child,
    addr: String,
    /// From spawning the process to its first 200 on `/healthz`.
    startup: Duration,
}

impl Server {
    fn start(bin: &Path, url: &str, site_root: &Path) -> Server {
        let spawned = Instant::now();
        let mut child = Command::new(bin)
            .env("DATABASE_URL", url)
            .env("PETSTORE_ADDR", "127.0.0.1:0")
            .env("PETSTORE_DEMO_DATA", "false")
            .env("LEPTOS_SITE_ROOT", site_root)
            .env("LEPTOS_ENV", "PROD")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e} (run `make bench-scale`, which builds it)", bin.display()));
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let addr = loop {
            let line = lines.next().expect("the server's start-up lines").unwrap();
            if let Some(rest) = line.strip_prefix("Pet Store is running at http://") {
                break rest.split('/').next().unwrap().to_owned();
            }
        };
        std::thread::spawn(move || lines.for_each(drop));
        while get(&addr, "/healthz", None).0 != 200 {
            assert!(spawned.elapsed() < Duration::from_secs(60), "the server did not answer /healthz");
            std::thread::sleep(Duration::from_millis(1));
        }
        Server { startup: spawned.elapsed(), child, addr }
    }

    fn stop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One HTTP/1.1 request on a connection of its own: the status and the raw head and
/// body (0 when nothing answered).
fn get(addr: &str, path: &str, header: Option<&str>) -> (u16, String) {
    let Ok(mut stream) = std::net::TcpStream::connect(addr) else { return (0, String::new()) };
    let extra = header.map(|h| format!("{h}\r\n")).unwrap_or_default();
    if write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{extra}Connection: close\r\n\r\n").is_err() {
        return (0, String::new());
    }
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, response)
}

/// A staff member's browser session, as the `Cookie` header's value.
fn sign_in(addr: &str, key: &str) -> String {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let body = format!("key={key}");
    write!(
        stream,
        "POST /_app/sign_in HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Accept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let cookie = response
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: ").or_else(|| l.strip_prefix("Set-Cookie: ")))
        .unwrap_or_else(|| panic!("a session cookie: {response}"));
    cookie.split(';').next().unwrap().to_owned()
}

/// The path `hops` pages on from `first`, following each answer's `Link: rel="next"`.
fn page_by_links(addr: &str, key: &str, first: &str, hops: usize) -> String {
    let header = format!("x-api-key: {key}");
    let mut path = first.to_owned();
    for hop in 0..hops {
        let (status, response) = get(addr, &path, Some(&header));
        assert_eq!(status, 200, "{path}");
        let link = response
            .lines()
            .take_while(|l| !l.is_empty())
            .find_map(|l| l.strip_prefix("link: ").or_else(|| l.strip_prefix("Link: ")))
            .unwrap_or_else(|| panic!("no next page after {hop} pages"));
        let target = link.split_once('<').and_then(|(_, rest)| rest.split_once('>')).map(|(t, _)| t).unwrap();
        // Relative, or absolute under --public-url: keep the path and query.
        path = match target.find("/api/") {
            Some(at) => target[at..].to_owned(),
            None => target.to_owned(),
        };
    }
    path
}

/// `wrk -t1 -c1 -d<seconds>s --latency` against `url`: one client alone with the store.
fn wrk(url: &str, header: Option<&str>, seconds: u64) -> Option<Figures> {
    let measured = common::external::wrk(1, 1, seconds, header, url)?;
    // A row whose answers are not 2xx would measure an error page.
    assert!(!measured.errors, "wrk saw answers other than 2xx at {url}");
    Some(Figures { first_ms: 0.0, per_second: measured.per_second, p50_ms: measured.p50_ms, p99_ms: measured.p99_ms })
}
