//! Faults the machine has, met by the real binary:
//! - a store on a small volume that fills up: writes are refused with 507
//!   `insufficient_storage` and change nothing, reads go on, `/readyz` says not ready,
//!   and both writes and readiness come back as soon as there is space;
//! - storage that refuses writes (an I/O error): the same, with 503 `unavailable`;
//! - another process holding the database's lock: writes wait the busy timeout, then
//!   503 with `Retry-After`, the queue of writers never wedges, and all works the moment
//!   the lock is released;
//! - the log on a full disk: every request is still answered;
//! - on PostgreSQL: the database server stopped (`pg_ctl stop -m immediate`) and
//!   started again, and a full data volume. (Redis going away: several_servers.rs.)
//!
//! None needs a restart to recover. (Tests run as root, as the toolchain notes say: the
//! volumes are a tmpfs, or ext4 on a loop device, mounted for the test.)

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::live::{LiveServer, Running};
use serde_json::json;

/// A tmpfs mounted over a directory for the test's lifetime.
struct Volume {
    at: PathBuf,
}

impl Volume {
    fn mount(at: &Path, size: &str) -> Volume {
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .expect("mount runs");
        assert!(mounted.success(), "mounting a tmpfs (tests run as root)");
        Volume { at: at.to_path_buf() }
    }

    fn resize(&self, size: &str) {
        let resized = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.at)
            .status()
            .expect("mount runs");
        assert!(resized.success());
    }
}

impl Volume {
    /// An ext4 file system in a file of `megabytes`, on a loop device mounted at `at`.
    fn ext4(image: &Path, at: &Path, megabytes: u64) -> Volume {
        std::fs::File::create(image).unwrap().set_len(megabytes << 20).unwrap();
        run("mkfs.ext4", &["-q".as_ref(), image.as_os_str()]);
        run("mount", &["-o".as_ref(), "loop".as_ref(), image.as_os_str(), at.as_os_str()]);
        Volume { at: at.to_path_buf() }
    }
}

/// Runs a command that must succeed.
fn run(program: &str, args: &[&std::ffi::OsStr]) {
    let status = Command::new(program).args(args).status().unwrap_or_else(|e| panic!("{program} runs: {e}"));
    assert!(status.success(), "{program} {args:?}: {status}");
}

/// Polls `/readyz` until it answers `expected`, for at most 5 s.
async fn readiness_becomes(http: &common::live::Http, expected: u16) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, ready) = http.send("GET", "/readyz", None, None, &[]).await.unwrap();
        if status == expected {
            return ready;
        }
        assert!(Instant::now() < deadline, "/readyz still not {expected} after 5 s: {status} {ready}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The value of one metric line (`name{labels}`) in the server's `/metrics`, 0 if absent.
async fn metric(http: &common::live::Http, admin: &str, series: &str) -> f64 {
    http.metric(admin, series).await.unwrap_or(0.0)
}

/// Creates pets (`pet(n)`, n from 0) until one is refused: how many were created, and
/// the refusal's status and body.
async fn fill_until_refused(
    http: &common::live::Http,
    admin: &str,
    pet: impl Fn(usize) -> serde_json::Value,
) -> (usize, u16, serde_json::Value) {
    for n in 0..40_000 {
        let (status, body) = http.send("POST", "/api/v1/pets", Some(admin), Some(&pet(n)), &[]).await.unwrap();
        if status != 201 {
            return (n, status, body);
        }
    }
    panic!("the volume never filled up");
}

/// Once a fault has ended: a write works within 5 s (polled, with no restart), and then
/// every one does (no connection is left stuck in a failed transaction).
async fn writes_work_again(
    http: &common::live::Http,
    admin: &str,
    pet: impl Fn(usize) -> serde_json::Value,
    from: usize,
) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = http.send("POST", "/api/v1/pets", Some(admin), Some(&pet(from)), &[]).await.unwrap();
        if status == 201 {
            break;
        }
        assert!(Instant::now() < deadline, "writes still refused 5 s after the fault ended: {status} {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for n in 1..=30 {
        let (status, body) = http.send("POST", "/api/v1/pets", Some(admin), Some(&pet(from + n)), &[]).await.unwrap();
        assert_eq!(status, 201, "write {n} after the fault: {body}");
    }
}

impl Drop for Volume {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.at).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_writes_with_507_and_they_work_again_when_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let volume = Volume::mount(dir.path(), "1m");
    let (mut server, admin) = LiveServer::start(dir.path());
    let admin = admin.expect("the first start creates an admin key");
    let http = server.client();
    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Owls"}))).await;
    let pet = |n: usize| json!({"name": format!("Owl {n} {}", "x".repeat(80)), "categoryId": category["id"]});

    let (created, status, body) = fill_until_refused(&http, &admin, &pet).await;
    assert_eq!((status, body["code"].as_str()), (507, Some("insufficient_storage")), "{body}");
    // Not ready from that refusal on (a load balancer stops sending writes here), while
    // the process itself is healthy.
    let (status, ready) = http.send("GET", "/readyz", None, None, &[]).await.unwrap();
    assert_eq!((status, ready["code"].as_str()), (503, Some("unavailable")), "{ready}");
    assert_eq!(http.send("GET", "/healthz", None, None, &[]).await.unwrap().0, 200);
    // Nothing half-written, and reads go on.
    let (status, listed) = http.get("/api/v1/pets?limit=100", &admin).await.unwrap();
    assert_eq!(status, 200);
    let (status, again) = http.send("POST", "/api/v1/pets", Some(&admin), Some(&pet(created)), &[]).await.unwrap();
    assert_eq!((status, again["code"].as_str()), (507, Some("insufficient_storage")), "{again}");
    assert!(listed.as_array().unwrap().len() <= created);

    // Space returns: writes work again within 5 s (polled), with no restart, and then
    // every one does (no connection is left stuck in the failed transaction).
    volume.resize("50m");
    // Ready again within 5 s by itself, before any client writes (the store's own probe).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, ready) = http.send("GET", "/readyz", None, None, &[]).await.unwrap();
        if status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "still not ready 5 s after space returned: {ready}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    writes_work_again(&http, &admin, &pet, created).await;
    assert!(server.terminate(), "a clean stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_that_refuses_writes_answers_503_and_writes_come_back_when_it_works() {
    let dir = tempfile::tempdir().unwrap();
    let mount = dir.path().join("volume");
    std::fs::create_dir(&mount).unwrap();
    let volume = Volume::ext4(&dir.path().join("volume.img"), &mount, 32);
    let log_path = dir.path().join("server.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let (mut server, admin) = LiveServer::start_with(&mount, |command| {
        command.stderr(log);
    });
    let admin = admin.expect("the first start creates an admin key");
    let http = server.client();
    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Owls"}))).await;
    let pet = |name: &str| json!({"name": name, "categoryId": category["id"]});
    let kept = http.expect(201, "POST", "/api/v1/pets", &admin, Some(&pet("Kept before"))).await;

    // The files refuse every write, even root's: ext4's immutable attribute (Linux
    // refuses to remount a volume read-only while files on it are open for writing).
    let files = [server.db_path.clone(), server.db_path.with_extension("db-wal")];
    let attribute = |flag: &str| {
        for file in &files {
            run("chattr", &[flag.as_ref(), file.as_os_str()]);
        }
    };
    attribute("+i");
    let (status, headers, body) =
        http.send_full("POST", "/api/v1/pets", Some(&admin), Some(&pet("Refused")), &[]).await.unwrap();
    assert_eq!((status, body["code"].as_str()), (503, Some("unavailable")), "{body}");
    assert!(headers.contains_key("retry-after"), "{headers:?}");
    // Not ready, naming the dependency; healthy; reads go on.
    let ready = readiness_becomes(&http, 503).await;
    assert_eq!((ready["code"].as_str(), ready["dependency"].as_str()), (Some("unavailable"), Some("database")));
    assert_eq!(http.send("GET", "/healthz", None, None, &[]).await.unwrap().0, 200);
    let (status, listed) = http.get("/api/v1/pets", &admin).await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert!(metric(&http, &admin, "petstore_db_faults_total{kind=\"storage\"}").await >= 1.0);
    assert_eq!(metric(&http, &admin, "petstore_db_writes_failing").await, 1.0);
    assert_eq!(metric(&http, &admin, "petstore_ready").await, 0.0, "what /readyz says, for the alert");
    // The fault lasts a while, with traffic (whose rate-limit counters the server
    // tries to save every second, and fails to).
    for _ in 0..25 {
        assert_eq!(http.get("/api/v1/pets", &admin).await.unwrap().0, 200);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The fault ends: ready again within 5 s by itself, and writes work.
    attribute("-i");
    readiness_becomes(&http, 200).await;
    assert_eq!(metric(&http, &admin, "petstore_ready").await, 1.0);
    let after = http.expect(201, "POST", "/api/v1/pets", &admin, Some(&pet("After"))).await;
    let (_, listed) = http.get("/api/v1/pets", &admin).await.unwrap();
    let names: Vec<&str> = listed.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    // Nothing acknowledged lost, nothing refused stored.
    assert_eq!(names, ["Kept before", "After"], "{listed}");
    assert!(after["id"].as_i64() > kept["id"].as_i64());
    assert!(server.terminate(), "a clean stop");
    // The log says so once when the fault starts and once when it ends, not once a
    // request or a second.
    let log = std::fs::read_to_string(&log_path).unwrap();
    let said = |what: &str| log.matches(what).count();
    assert_eq!(said("writes fail for a storage fault"), 1, "{log}");
    assert_eq!(said("writes work again: the store is ready"), 1, "{log}");
    assert!(said("writing rate-limit counters failed") <= 1, "{log}");
    drop(volume);
}

/// Debian's `sqlite3`, holding the database's write lock until told to let go.
struct LockHolder {
    child: Running,
}

impl LockHolder {
    fn take(db: &Path) -> LockHolder {
        // -bail: a failed BEGIN stops it before it says "locked".
        let mut child = Command::new("sqlite3")
            .arg("-bail")
            .arg(db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("sqlite3 runs (make test installs it)");
        let stdin = child.stdin.as_mut().unwrap();
        writeln!(stdin, ".timeout 10000\nBEGIN EXCLUSIVE;\nSELECT 'locked';").unwrap();
        stdin.flush().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (said, heard) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = said.send(line);
        });
        let line = heard.recv_timeout(Duration::from_secs(15)).expect("sqlite3 answers within 15 s");
        assert_eq!(line.trim(), "locked", "sqlite3 took the lock");
        LockHolder { child: Running(child) }
    }

    fn release(mut self) {
        let mut stdin = self.child.stdin.take().unwrap();
        writeln!(stdin, "COMMIT;\n.quit").unwrap();
        drop(stdin);
        assert!(self.child.wait().unwrap().success());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_held_by_another_process_makes_writes_wait_then_503_and_nothing_wedges() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, admin) = LiveServer::start(dir.path());
    let admin = admin.expect("the first start creates an admin key");
    let http = server.client();
    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Owls"}))).await;
    let pet = |name: String| json!({"name": name, "categoryId": category["id"]});
    let stocked = http.expect(201, "POST", "/api/v1/pets", &admin, Some(&pet("Stocked".into()))).await;
    let stocked = stocked["id"].as_i64().unwrap();
    let stock = json!({"quantity": 10});
    http.expect(200, "PUT", &format!("/api/v1/store/inventory/{stocked}"), &admin, Some(&stock)).await;

    let lock = LockHolder::take(&server.db_path);
    // Writers of both kinds at once: a pet takes a transaction of its own, and waits
    // the busy timeout (5 s) at most for its turn and at most again for the lock;
    // orders share the queue's transactions, a batch at a time, each batch waiting the
    // busy timeout. Every one is answered before the request timeout, and every
    // refusal is a 503 with Retry-After.
    let started = Instant::now();
    let writers = (0..8).map(|n| {
        let (http, admin) = (http.clone(), admin.clone());
        let (path, body) = if n % 2 == 0 {
            ("/api/v1/pets", pet(format!("Waiting {n}")))
        } else {
            ("/api/v1/store/orders", json!({"petId": stocked, "quantity": 1}))
        };
        tokio::spawn(async move { http.send_full("POST", path, Some(&admin), Some(&body), &[]).await })
    });
    for answer in futures::future::join_all(writers).await {
        let (status, headers, body) = answer.unwrap().expect("an answer, not a wedged queue");
        assert_eq!((status, body["code"].as_str()), (503, Some("unavailable")), "{body}");
        assert!(headers.contains_key("retry-after"), "{headers:?}");
    }
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(4), "writes waited for the lock ({waited:?})");
    // Reads go on meanwhile (WAL), and the store stays ready: the lock is another
    // client's, not a fault of the storage.
    assert_eq!(http.get("/api/v1/pets", &admin).await.unwrap().0, 200);
    assert_eq!(http.send("GET", "/readyz", None, None, &[]).await.unwrap().0, 200);
    assert!(metric(&http, &admin, "petstore_db_faults_total{kind=\"busy\"}").await >= 1.0);

    // Released: the next write works at once (within a second, polled).
    lock.release();
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        let (status, body) =
            http.send("POST", "/api/v1/pets", Some(&admin), Some(&pet("After".into())), &[]).await.unwrap();
        if status == 201 {
            break;
        }
        assert!(Instant::now() < deadline, "writes still refused after the lock was released: {status} {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (_, listed) = http.get("/api/v1/pets", &admin).await.unwrap();
    let names: Vec<&str> = listed.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Stocked", "After"], "nothing refused was stored");
    let (_, orders) = http.get("/api/v1/store/orders", &admin).await.unwrap();
    assert_eq!(orders.as_array().map(Vec::len), Some(0), "no refused order was stored: {orders}");
    let (_, inventory) = http.get(&format!("/api/v1/store/inventory/{stocked}"), &admin).await.unwrap();
    assert_eq!(inventory["quantity"], 10, "no stock was taken: {inventory}");
    assert!(server.terminate(), "a clean stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_on_a_full_disk_costs_no_request_its_answer() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let _volume = Volume::mount(&logs, "64k");
    let log = std::fs::File::create(logs.join("server.log")).unwrap();
    // Every request logs a line (INFO), to a file on a volume about to be full.
    let (mut server, admin) = LiveServer::start_with(dir.path(), |command| {
        command.env("RUST_LOG", "info").stderr(log);
    });
    let admin = admin.expect("the first start creates an admin key");
    let http = server.client();
    // Fill the volume: what the log writes from now on fails.
    let mut filler = std::fs::File::create(logs.join("filler")).unwrap();
    while filler.write_all(&[0; 4096]).and_then(|()| filler.sync_all()).is_ok() {}

    for n in 0..200 {
        let (status, body) = http.get("/api/v1/pets", &admin).await.expect("an answer, not a dropped connection");
        assert_eq!(status, 200, "request {n}: {body}");
    }
    let (status, _) = http.send("GET", "/", None, None, &[]).await.expect("a page");
    assert_eq!(status, 200);
    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Owls"}))).await;
    assert!(category["id"].is_i64());
    assert!(server.terminate(), "a clean stop");
}

/// The server's PostgreSQL stops as in a crash, then starts again: meanwhile requests
/// that need it are answered 503 with `Retry-After` well within the request timeout,
/// `/readyz` says the database is unavailable and `/healthz` that the process is
/// fine; afterwards the server reconnects by itself, nothing acknowledged is lost, and
/// writes work again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_that_stops_and_starts_again_is_answered_503_meanwhile_then_works() {
    let postgres = common::postgres::OwnPostgres::start();
    let dir = tempfile::tempdir().unwrap();
    let (mut server, admin) = LiveServer::start_with(dir.path(), |command| {
        command.env("DATABASE_URL", postgres.url());
    });
    let admin = admin.expect("the first start creates an admin key");
    let http = server.client();
    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Owls"}))).await;
    let pet = |name: &str| json!({"name": name, "categoryId": category["id"]});
    let kept = http.expect(201, "POST", "/api/v1/pets", &admin, Some(&pet("Kept before"))).await;

    postgres.stop_immediately();
    let started = Instant::now();
    let (status, headers, body) =
        http.send_full("POST", "/api/v1/pets", Some(&admin), Some(&pet("Refused")), &[]).await.unwrap();
    assert_eq!((status, body["code"].as_str()), (503, Some("unavailable")), "{body}");
    assert!(headers.contains_key("retry-after"), "{headers:?}");
    assert!(started.elapsed() < Duration::from_secs(30), "answered within the request timeout");
    let ready = readiness_becomes(&http, 503).await;
    assert_eq!((ready["code"].as_str(), ready["dependency"].as_str()), (Some("unavailable"), Some("database")));
    assert_eq!(http.send("GET", "/healthz", None, None, &[]).await.unwrap().0, 200);

    postgres.start_again();
    readiness_becomes(&http, 200).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = http.send("POST", "/api/v1/pets", Some(&admin), Some(&pet("After")), &[]).await.unwrap();
        if status == 201 {
            break;
        }
        assert!(Instant::now() < deadline, "writes still refused 5 s after the restart: {status} {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let names: Vec<String> = http
        .get("/api/v1/pets", &admin)
        .await
        .unwrap()
        .1
        .as_array()
        .unwrap()
        .iter()
        .map(|pet| pet["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["Kept before", "After"], "nothing acknowledged lost, nothing refused stored");
    assert_eq!(kept["name"], "Kept before");
    assert!(server.terminate(), "a clean stop");
}

/// The store's data on a PostgreSQL tablespace of its own, on a small volume that
/// fills: writes are refused with 507 and change nothing, reads go on, and writes work
/// again as soon as the volume grows. (PostgreSQL's write-ahead log stays on the
/// cluster's own disk; when that one fills, PostgreSQL stops itself, which is the test
/// above.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_postgres_volume_refuses_writes_with_507_and_they_work_again_when_space_returns() {
    use sqlx::Connection;
    let postgres = common::postgres::OwnPostgres::start();
    let small = postgres.dir().join("small");
    std::fs::create_dir(&small).unwrap();
    // Room for the new database (a copy of template1, 8 MB); shrunk below once the
    // store is made.
    let volume = Volume::mount(&small, "32m");
    run("chown", &["postgres".as_ref(), small.as_os_str()]);
    let mut conn = sqlx::PgConnection::connect(&postgres.url()).await.unwrap();
    let create = format!("CREATE TABLESPACE small LOCATION '{}'", small.display());
    sqlx::raw_sql(sqlx::AssertSqlSafe(create)).execute(&mut conn).await.unwrap();
    sqlx::raw_sql("CREATE DATABASE store TABLESPACE small").execute(&mut conn).await.unwrap();
    let url = postgres.url().replace("/postgres", "/store");
    let dir = tempfile::tempdir().unwrap();
    let (mut server, admin) = LiveServer::start_with(dir.path(), |command| {
        command.env("DATABASE_URL", &url);
    });
    let admin = admin.expect("the first start creates an admin key");
    let http = server.client();
    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Owls"}))).await;
    let pet = |n: usize| json!({"name": format!("Owl {n} {}", "x".repeat(80)), "categoryId": category["id"]});
    // A megabyte of room left for the store's rows.
    let used = Command::new("df").args(["--output=used", "-B1"]).arg(&small).output().unwrap().stdout;
    let used: u64 = String::from_utf8_lossy(&used).lines().nth(1).unwrap().trim().parse().unwrap();
    volume.resize(&format!("{}", used + (1 << 20)));

    let (created, status, body) = fill_until_refused(&http, &admin, &pet).await;
    assert_eq!((status, body["code"].as_str()), (507, Some("insufficient_storage")), "{body}");
    // Not ready from that refusal on (asked at once, before anything slower: the store's
    // probe tries its own one-row write every half second, and on PostgreSQL that
    // update can fit in its page while new rows cannot).
    let (status, ready) = http.send("GET", "/readyz", None, None, &[]).await.unwrap();
    assert_eq!((status, ready["dependency"].as_str()), (503, Some("database")), "{ready}");
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pets")
        .fetch_one(&mut sqlx::PgConnection::connect(&url).await.unwrap())
        .await
        .unwrap();
    assert_eq!(stored, created as i64, "the refused write changed nothing");
    assert_eq!(http.get("/api/v1/pets?limit=5", &admin).await.unwrap().0, 200, "reads go on");

    volume.resize("64m");
    writes_work_again(&http, &admin, &pet, created).await;
    readiness_becomes(&http, 200).await;
    assert!(server.terminate(), "a clean stop");
}
