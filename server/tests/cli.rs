//! The server binary's key commands and its first start, run as a user would.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::live::Running;

fn server(db: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_server"));
    command.env("DATABASE_URL", db).env("RUST_LOG", "warn").env("LEPTOS_OUTPUT_NAME", "petstore");
    command.env("LEPTOS_SITE_ROOT", common::live::test_site());
    // Stopped at once (the drain has a test of its own, shutdown.rs).
    command.env("PETSTORE_SHUTDOWN_DRAIN", "0");
    command
}

fn run(db: &str, args: &[&str]) -> (bool, String, String) {
    let out = server(db).args(args).output().expect("the binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn keys_create_prints_only_the_key_then_list_and_revoke() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("cli.db").display());
    let (ok, stdout, stderr) = run(&db, &["keys", "create", "--name", "ci bot", "--role", "admin", "--plan", "pro"]);
    assert!(ok, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "only the key on stdout: {stdout:?}");
    assert!(lines[0].starts_with("psk_"), "{stdout}");

    let (ok, stdout, stderr) = run(
        &db,
        &[
            "keys",
            "create",
            "--name",
            "big",
            "--role",
            "customer",
            "--plan",
            "enterprise",
            "--per-minute",
            "5000",
            "--per-day",
            "900000",
        ],
    );
    assert!(ok, "{stderr}");
    assert!(stdout.trim().starts_with("psk_"));
    let (ok, _, stderr) = run(&db, &["keys", "create", "--name", "x", "--role", "customer", "--plan", "enterprise"]);
    assert!(!ok);
    assert!(stderr.contains("limits"), "{stderr}");

    let (ok, stdout, _) = run(&db, &["keys", "list"]);
    assert!(ok);
    assert!(stdout.contains("ci bot") && stdout.contains("admin") && stdout.contains("5000"), "{stdout}");
    assert!(!stdout.contains("psk_"), "no secrets in the list");

    // The only admin key stays: staff would be locked out of the console.
    let (ok, _, stderr) = run(&db, &["keys", "revoke", "1"]);
    assert!(!ok);
    assert!(stderr.contains("last active admin key"), "{stderr}");
    let (ok, _, stderr) = run(&db, &["keys", "create", "--name", "second admin", "--role", "admin"]);
    assert!(ok, "{stderr}");
    let (ok, _, stderr) = run(&db, &["keys", "revoke", "1"]);
    assert!(ok, "{stderr}");
    let (_, stdout, _) = run(&db, &["keys", "list"]);
    let ci_bot = stdout.lines().find(|l| l.contains("ci bot")).unwrap();
    assert!(ci_bot.contains("T"), "a revocation time: {ci_bot}");
    let (ok, _, _) = run(&db, &["keys", "revoke", "99"]);
    assert!(!ok);
}

/// Starts the server (with `args`), returns what it printed before it said it was
/// running.
fn first_lines(db: &str, args: &[&str]) -> String {
    first_lines_of(server(db).args(args))
}

/// As [`first_lines`], with standard output a terminal (util-linux's `script` runs it
/// on a pseudo-terminal), as for an operator who starts it by hand.
fn first_lines_on_a_terminal(db: &str) -> String {
    let binary = env!("CARGO_BIN_EXE_server");
    let command = server(db);
    let mut script = Command::new("script");
    script.args(["--quiet", "--return", "--command", binary, "/dev/null"]);
    script.envs(command.get_envs().filter_map(|(name, value)| Some((name, value?))));
    first_lines_of(&mut script)
}

fn first_lines_of(command: &mut Command) -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = Running(
        command
            .env("LEPTOS_SITE_ADDR", format!("127.0.0.1:{port}"))
            .env("PETSTORE_DEMO_DATA", "false")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = String::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap_or_default();
            seen.push_str(&line);
            seen.push('\n');
            if line.contains("is running at") {
                break;
            }
        }
        let _ = tx.send(seen);
    });
    let seen = rx.recv_timeout(Duration::from_secs(30)).expect("the server starts");
    // Stopped, and nothing left listening: under `script`, a SIGKILL of `script` alone
    // used to leave the server running after the test.
    child.stop();
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "the server on port {port} was left running");
    seen
}

/// Under a service manager or in a container standard output ends in a journal: the
/// first admin key goes to a file only the server's user can read, and only its path
/// is printed. Once: a second start creates nothing and leaves the file alone.
#[test]
fn first_start_writes_one_admin_key_to_a_private_file_when_stdout_is_not_a_terminal() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("first.db").display());
    let file = dir.path().join("first-admin-key");
    let first = first_lines(&db, &[]);
    assert!(first.contains(&format!("Wrote the first admin key to {}", file.display())), "{first}");
    assert!(!first.contains("psk_"), "no key on standard output: {first}");
    let key = std::fs::read_to_string(&file).unwrap();
    assert!(key.trim().starts_with("psk_") && key.lines().count() == 1, "{key:?}");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);

    let second = first_lines(&db, &[]);
    assert!(!second.contains("first admin key") && !second.contains("psk_"), "{second}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), key, "the file is left as it was");
    let (_, list, _) = run(&db, &["keys", "list"]);
    assert_eq!(list.lines().filter(|l| l.contains("admin")).count(), 1, "{list}");
}

/// Started by hand on a terminal, the key is shown once, and no file is written.
#[test]
fn first_start_on_a_terminal_shows_the_admin_key_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("first.db").display());
    let first = first_lines_on_a_terminal(&db);
    assert!(first.contains("Created the first admin key"), "{first}");
    assert_eq!(first.matches("psk_").count(), 1, "{first}");
    assert!(!dir.path().join("first-admin-key").exists());
    let second = first_lines_on_a_terminal(&db);
    assert!(!second.contains("psk_"), "{second}");
}

/// A server whose built site is missing would answer pages whose scripts and styles
/// are all 404: it refuses to start, naming where it looked and what is missing.
#[test]
fn a_server_without_its_built_site_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("site.db").display());
    let empty = dir.path().join("empty-site");
    std::fs::create_dir(&empty).unwrap();
    let mut command = server(&db);
    command.env("LEPTOS_SITE_ROOT", &empty).env("PETSTORE_ADDR", "127.0.0.1:0");
    // Under coreutils' timeout: a server that wrongly starts fails the test (124), not hangs it.
    let mut bounded = Command::new("timeout");
    bounded.args(["60", env!("CARGO_BIN_EXE_server")]);
    bounded.envs(command.get_envs().filter_map(|(name, value)| Some((name, value?))));
    let out = bounded.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "refused at once, not timed out: {stderr}");
    assert!(stderr.contains("LEPTOS_SITE_ROOT names a folder without the built site"), "{stderr}");
    assert!(stderr.contains(&empty.display().to_string()) && stderr.contains(".wasm"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("is running"));
}

/// A store on a small volume starts empty with `--demo-data off` (or `false`): no
/// category, no pet, no photo. Started the same way with it on, it has the demo catalog.
#[tokio::test]
async fn demo_data_off_starts_an_empty_store() {
    for (value, expected) in [("off", (0, 0, 0)), ("false", (0, 0, 0)), ("on", (5, 13, 39))] {
        let dir = tempfile::tempdir().unwrap();
        let db = format!("sqlite://{}", dir.path().join("demo.db").display());
        let started = first_lines(&db, &["--demo-data", value]);
        assert!(started.contains("Wrote the first admin key"), "{started}");
        let store = sqlx::SqlitePool::connect(&db).await.unwrap();
        let counts: (i64, i64, i64) = sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM categories), (SELECT COUNT(*) FROM pets), (SELECT COUNT(*) FROM pet_photos)",
        )
        .fetch_one(&store)
        .await
        .unwrap();
        assert_eq!(counts, expected, "--demo-data {value}: categories, pets and photos");
        store.close().await;
    }
}

/// The server over `db` on a free port, logging JSON at INFO to its piped standard
/// error: the process and its address.
fn serve_with_json_logs(db: &str) -> (Running, String) {
    let mut child = Running(
        server(db)
            .args(["--log-format", "json", "--addr", "127.0.0.1:0", "--demo-data", "false"])
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let addr = stdout
        .lines()
        .map_while(Result::ok)
        .find_map(|line| {
            line.strip_prefix("Pet Store is running at http://").map(|r| r.split('/').next().unwrap().to_owned())
        })
        .expect("the address line");
    (child, addr)
}

/// `--log-format json`: every line on stderr is a JSON object, and a request's line
/// carries its request id; SIGTERM then stops the server cleanly.
#[test]
fn json_logs_carry_the_request_id_and_sigterm_stops_cleanly() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("logs.db").display());
    let (mut child, addr) = serve_with_json_logs(&db);
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    write!(stream, "GET /healthz HTTP/1.1\r\nHost: {addr}\r\nX-Request-Id: find-me-7\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.to_ascii_lowercase().contains("x-request-id: find-me-7"), "{response}");

    let term = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(term.success());
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(child.wait().unwrap().success(), "exit 0 after SIGTERM: {stderr}");
    let events: Vec<serde_json::Value> = stderr
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    let answered = events
        .iter()
        .find(|e| e["id"] == "find-me-7" && e["status"] == 200)
        .unwrap_or_else(|| panic!("no event for the request in {stderr}"));
    assert_eq!(answered["path"], "/healthz");
    assert_eq!(answered["method"], "GET");
    assert_eq!(answered["target"], "petstore::request");
    assert!(answered["latency_ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{answered}");
    assert!(events.iter().any(|e| e["message"] == "stopped"), "{stderr}");
}

#[test]
fn a_database_url_it_cannot_serve_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = server("mysql://user@host:3306/db")
        .env("PETSTORE_DEMO_DATA", "false")
        .current_dir(dir.path())
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "it started: {stderr}");
    assert!(stderr.contains("DATABASE_URL") && stderr.contains("sqlite:"), "{stderr}");
    assert!(stderr.contains("\"mysql\""), "names what it got: {stderr}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing is created: {left:?}");
}

#[test]
fn a_database_password_is_never_printed() {
    for url in [
        "postgres://shop:hunter2@127.0.0.1:1/store",
        "postgres://shop@127.0.0.1:1/store?sslmode=disable&password=hunter2",
        "postgres://shop@127.0.0.1:1/store?%70assword=hunter2",
    ] {
        let (ok, _, stderr) = run(url, &["keys", "list"]);
        assert!(!ok, "nothing answers on port 1");
        assert!(stderr.contains("opening the database") && stderr.contains("***"), "{stderr}");
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
}

#[test]
fn a_new_sqlite_store_is_the_owner_s_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data").join("private.db");
    let (ok, _, stderr) = run(&format!("sqlite://{}", path.display()), &["keys", "list"]);
    assert!(ok, "{stderr}");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
}

/// A store that a newer release has migrated (here: one more migration than this binary
/// has) is refused at start, in words naming both versions, and left byte for byte.
#[tokio::test]
async fn a_database_from_a_newer_release_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("newer.db");
    let db = format!("sqlite://{}", path.display());
    let (ok, _, stderr) = run(&db, &["keys", "list"]);
    assert!(ok, "{stderr}");
    let pool = sqlx::SqlitePool::connect(&db).await.unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (99991231000000, 'loyalty points', TRUE, x'00', 1)",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let before = std::fs::read(&path).unwrap();

    let mut serving = server(&db).args(["--addr", "127.0.0.1:0"]).stderr(Stdio::piped()).spawn().unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = serving.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(30) {
            serving.kill().unwrap();
            panic!("the server started on a database from a newer release");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut serving.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("newer release") && stderr.contains("99991231000000 (loyalty points)"), "{stderr}");
    assert!(stderr.contains("knows migrations up to 2026"), "names its own newest: {stderr}");
    assert_eq!(stderr.matches("99991231000000").count(), 1, "said once: {stderr}");
    assert!(std::fs::read(&path).unwrap() == before, "the file changed");
}

/// The same on PostgreSQL: refused, in words, and the migrations table is as it was.
#[tokio::test]
async fn a_postgres_database_from_a_newer_release_is_refused() {
    let db = app::db::testing::new_postgres_database().await;
    let (ok, _, stderr) = run(&db, &["keys", "list"]);
    assert!(ok, "{stderr}");
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (99991231000000, 'loyalty points', TRUE, '\\x00', 1)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let applied = || sqlx::query_scalar::<_, i64>("SELECT count(*) FROM _sqlx_migrations").fetch_one(&pool);
    let before = applied().await.unwrap();
    let (ok, _, stderr) = run(&db, &["keys", "list"]);
    assert!(!ok, "it opened a database from a newer release");
    assert!(stderr.contains("newer release") && stderr.contains("99991231000000 (loyalty points)"), "{stderr}");
    assert_eq!(applied().await.unwrap(), before);
    pool.close().await;
}

/// `server migrate-data`, as an operator moving up from SQLite types it: the key made
/// on SQLite works on PostgreSQL afterwards (every subcommand migrates the database it
/// opens, so `keys` works on the new one at once), and a second run, a missing source
/// or a wrong pair of engines is refused with a clear error and changes nothing.
#[tokio::test]
async fn migrate_data_moves_a_store_to_an_empty_postgres_database_once() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!("sqlite://{}", dir.path().join("old.db").display());
    let (ok, key, stderr) = run(&sqlite, &["keys", "create", "--name", "moving", "--role", "admin", "--plan", "pro"]);
    assert!(ok, "{stderr}");
    let postgres = app::db::testing::new_postgres_database().await;

    let (ok, _, stderr) = run(&sqlite, &["migrate-data", "--from", &sqlite, "--to", &postgres]);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("api_keys") && stderr.contains("copied and verified"), "{stderr}");
    let (ok, listed, stderr) = run(&postgres, &["keys", "list"]);
    assert!(ok, "{stderr}");
    assert!(listed.contains("moving"), "{listed}");
    assert!(!listed.contains(key.trim()), "no secrets in the list");

    let (ok, _, stderr) = run(&sqlite, &["migrate-data", "--from", &sqlite, "--to", &postgres]);
    assert!(!ok && stderr.contains("already holds data"), "{stderr}");
    let missing = format!("sqlite://{}", dir.path().join("typo.db").display());
    let (ok, _, stderr) = run(&sqlite, &["migrate-data", "--from", &missing, "--to", &postgres]);
    assert!(!ok && stderr.contains("no SQLite store"), "{stderr}");
    assert!(!dir.path().join("typo.db").exists(), "a mistyped source is not created");
    let (ok, _, stderr) = run(&sqlite, &["migrate-data", "--from", &postgres, "--to", &sqlite]);
    assert!(!ok && stderr.contains("--from a sqlite:// store --to a postgres://"), "{stderr}");
}

/// A request over HTTP/1.1 on a connection of its own: the status and the body.
fn http(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: Option<&str>) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = body.unwrap_or("");
    request.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, response.split_once("\r\n\r\n").map(|(_, body)| body.to_owned()).unwrap_or_default())
}

/// An internal error's line names the request it failed, though the failing work ran
/// on the write queue's task: an order replayed from an idempotency record that has
/// been damaged (as by a hand edit) is a 500, and its line says which request.
#[test]
fn an_internal_errors_line_names_its_request_from_the_write_queue_too() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("errors.db");
    let db = format!("sqlite://{}", path.display());
    let (ok, key, stderr) = run(&db, &["keys", "create", "--name", "staff", "--role", "admin", "--plan", "pro"]);
    assert!(ok, "{stderr}");
    let key = key.trim().to_owned();
    let (mut child, addr) = serve_with_json_logs(&db);
    let json = |body: &str| serde_json::from_str::<serde_json::Value>(body).unwrap();
    let keyed = [("X-API-Key", key.as_str())];
    let (status, category) = http(&addr, "POST", "/api/v1/categories", &keyed, Some(r#"{"name":"Dogs"}"#));
    assert_eq!(status, 201, "{category}");
    let pet = format!(r#"{{"name":"Rex","categoryId":{}}}"#, json(&category)["id"]);
    let (status, pet) = http(&addr, "POST", "/api/v1/pets", &keyed, Some(&pet));
    assert_eq!(status, 201, "{pet}");
    let pet_id = json(&pet)["id"].as_i64().unwrap();
    let stock = http(&addr, "PUT", &format!("/api/v1/store/inventory/{pet_id}"), &keyed, Some(r#"{"quantity":5}"#));
    assert_eq!(stock.0, 200, "{}", stock.1);
    let order = format!(r#"{{"petId":{pet_id},"quantity":1}}"#);
    let once = [("X-API-Key", key.as_str()), ("Idempotency-Key", "order-1")];
    let (status, placed) = http(&addr, "POST", "/api/v1/store/orders", &once, Some(&order));
    assert_eq!(status, 201, "{placed}");

    // The recorded answer is damaged behind the server's back.
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let pool = sqlx::SqlitePool::connect(&db).await.unwrap();
        let damaged = sqlx::query("UPDATE idempotency_records SET body = 'not an order'").execute(&pool).await.unwrap();
        assert_eq!(damaged.rows_affected(), 1);
        pool.close().await;
    });
    let again = [("X-API-Key", key.as_str()), ("Idempotency-Key", "order-1"), ("X-Request-Id", "find-me-500")];
    let (status, refused) = http(&addr, "POST", "/api/v1/store/orders", &again, Some(&order));
    assert_eq!(status, 500, "{refused}");
    assert!(!refused.contains("not an order"), "the cause stays in the log: {refused}");

    let term = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(term.success());
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(child.wait().unwrap().success(), "{stderr}");
    let events: Vec<serde_json::Value> = stderr.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
    let failed = events
        .iter()
        .find(|e| e["level"] == "ERROR" && e["message"] == "idempotency replay")
        .unwrap_or_else(|| panic!("no line for the internal error in {stderr}"));
    assert_eq!(failed["request"], "find-me-500", "{failed}");
    assert!(events.iter().any(|e| e["id"] == "find-me-500" && e["status"] == 500), "{stderr}");
}

/// A PostgreSQL database migrated up to, not including, `version` (as a previous
/// release left it).
async fn postgres_before(version: &str) -> String {
    let db = app::db::testing::new_postgres_database().await;
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/migrations/postgres");
    let older = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap().to_string_lossy().as_ref() < version {
            std::fs::copy(&path, older.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    sqlx::migrate::Migrator::new(older.path()).await.unwrap().run(&pool).await.unwrap();
    pool.close().await;
    db
}

/// A migration that cannot get its table's lock (a long transaction holds it) fails
/// after the migration lock timeout, rather than queue every request behind it; it
/// changes nothing, and the next start, the lock free, migrates.
#[tokio::test]
async fn a_postgres_migration_that_cannot_get_its_lock_gives_up_and_changes_nothing() {
    let db = postgres_before("20261127000001").await;
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let applied = || sqlx::query_scalar::<_, i64>("SELECT max(version) FROM _sqlx_migrations").fetch_one(&pool);
    let before = applied().await.unwrap();
    let mut holder = pool.begin().await.unwrap();
    sqlx::query("LOCK TABLE orders IN ROW EXCLUSIVE MODE").execute(&mut *holder).await.unwrap();

    let (ok, _, stderr) = tokio::task::spawn_blocking({
        let db = db.clone();
        move || run(&db, &["migrate"])
    })
    .await
    .unwrap();
    assert!(!ok, "it migrated under a held lock: {stderr}");
    assert!(stderr.contains("lock timeout"), "{stderr}");
    assert_eq!(applied().await.unwrap(), before, "nothing was applied");

    holder.rollback().await.unwrap();
    let (ok, _, stderr) = run(&db, &["migrate"]);
    assert!(ok, "{stderr}");
    assert!(applied().await.unwrap() > before);
    pool.close().await;
}
