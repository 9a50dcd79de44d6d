//! The real server binary on a loopback port over a database in a temporary directory,
//! and a small HTTP client for it: for the tests that kill, restart or soak the process.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// A child process of a test, killed and reaped when dropped: also when an assertion
/// fails first (the panic unwinds through it), so that a failed test leaves nothing
/// running. Once the process has been waited for, the kill does nothing.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Running {
    /// SIGTERM, then waits up to 10 s for the process to end (killed by the drop if it
    /// has not). A server stops cleanly so; util-linux's `script` ends the command it
    /// runs on its pseudo-terminal, which a SIGKILL of `script` would leave running.
    pub fn stop(mut self) {
        let _ = sigterm(self.0.id());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if !matches!(self.0.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Sends SIGTERM to `pid` (by `kill`: the tests take no libc); whether it was sent.
fn sigterm(pid: u32) -> bool {
    Command::new("kill").args(["-TERM", &pid.to_string()]).status().is_ok_and(|status| status.success())
}

impl Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

/// A stand-in for the built storefront (`target/site`, which `cargo test` does not
/// build): the files a page links, empty. The server refuses to start without them.
pub fn test_site() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-site");
    std::fs::create_dir_all(root.join("pkg")).expect("the test site's folder");
    for file in server::site::plain_files("petstore") {
        let path = root.join("pkg").join(file);
        if !path.is_file() {
            std::fs::write(&path, "").expect("a test site file");
        }
    }
    root
}

pub struct LiveServer {
    child: Running,
    pub addr: SocketAddr,
    pub db_path: PathBuf,
}

impl LiveServer {
    /// Starts the binary over `dir/live.db` (no demo catalog) on a free port and waits
    /// until it listens. Returns the first admin key when this start created it.
    pub fn start(dir: &Path) -> (LiveServer, Option<String>) {
        LiveServer::start_with(dir, |_| {})
    }

    /// As [`LiveServer::start`], with the command changed by `configure` first (more
    /// variables, standard error elsewhere).
    pub fn start_with(dir: &Path, configure: impl FnOnce(&mut Command)) -> (LiveServer, Option<String>) {
        LiveServer::start_under(dir, &[], configure)
    }

    /// As [`LiveServer::start_with`], the binary run by `wrapper` (a command and its
    /// arguments, such as `prlimit --nofile=256:256`) when one is given.
    pub fn start_under(
        dir: &Path,
        wrapper: &[&str],
        configure: impl FnOnce(&mut Command),
    ) -> (LiveServer, Option<String>) {
        let db_path = dir.join("live.db");
        let mut command = match wrapper.split_first() {
            Some((program, args)) => {
                let mut command = Command::new(program);
                command.args(args).arg(env!("CARGO_BIN_EXE_server"));
                command
            }
            None => Command::new(env!("CARGO_BIN_EXE_server")),
        };
        command
            .env("DATABASE_URL", format!("sqlite://{}", db_path.display()))
            .env("PETSTORE_ADDR", "127.0.0.1:0")
            .env("PETSTORE_DEMO_DATA", "false")
            // Stopped at once (the drain has a test of its own, shutdown.rs).
            .env("PETSTORE_SHUTDOWN_DRAIN", "0")
            .env("RUST_LOG", "warn")
            .env("LEPTOS_OUTPUT_NAME", "petstore")
            .env("LEPTOS_SITE_ROOT", test_site())
            // Files the server writes into its working directory stay in the test's.
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        configure(&mut command);
        // Killed if anything below fails: a server whose start is not seen must not outlive the test.
        let mut child = Running(command.spawn().expect("the server binary starts"));
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        // Read the start-up lines, then keep draining so the server never blocks on stdout.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut admin = None;
        let addr = loop {
            let line = rx.recv_timeout(Duration::from_secs(30)).expect("the server starts within 30 s");
            if let Some(rest) = line.strip_prefix("Wrote the first admin key to ") {
                let path = rest.split(" (").next().unwrap();
                admin = Some(std::fs::read_to_string(path).expect("the first admin key's file").trim().to_owned());
            }
            if let Some(rest) = line.strip_prefix("Pet Store is running at http://") {
                break rest.split('/').next().unwrap().parse().expect("an address");
            }
        };
        (LiveServer { child, addr, db_path }, admin)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL: no shutdown code runs.
    pub fn kill_9(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaped");
    }

    /// SIGTERM, then waits for the process to exit; returns whether it exited cleanly.
    pub fn terminate(&mut self) -> bool {
        self.send_sigterm();
        self.wait_for_exit()
    }

    /// SIGTERM, without waiting.
    pub fn send_sigterm(&self) {
        assert!(sigterm(self.pid()), "SIGTERM to {}", self.pid());
    }

    /// Waits for the process to exit; returns whether it exited cleanly.
    pub fn wait_for_exit(&mut self) -> bool {
        self.child.wait().expect("the server exits").success()
    }

    /// Whether the process has not exited yet.
    pub fn still_running(&mut self) -> bool {
        self.child.try_wait().expect("the process's state").is_none()
    }

    /// Resident memory in KiB (Linux).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).expect("/proc status");
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// The most memory the process has had resident so far, in KiB (Linux's VmHWM).
    pub fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).expect("/proc status");
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    pub fn client(&self) -> Http {
        Http {
            client: Client::builder(TokioExecutor::new()).pool_max_idle_per_host(64).build_http(),
            base: format!("http://{}", self.addr),
        }
    }
}

#[derive(Clone)]
pub struct Http {
    client: Client<HttpConnector, Full<Bytes>>,
    base: String,
}

/// Status and JSON body (`Null` when the body is not JSON).
pub type Answer = (u16, Value);

impl Http {
    /// One request; `Err` when no complete answer arrived (connection refused or cut).
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Result<Answer, String> {
        self.send_full(method, path, key, body, headers).await.map(|(status, _, body)| (status, body))
    }

    /// As [`Http::send`], with the response's headers.
    pub async fn send_full(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Result<(u16, hyper::HeaderMap, Value), String> {
        let (status, headers, body) = self.exchange(method, path, key, body, headers).await?;
        Ok((status, headers, serde_json::from_slice(&body).unwrap_or(Value::Null)))
    }

    /// A GET with `key` that must answer 200; its body as text (`/metrics`).
    pub async fn text(&self, path: &str, key: &str) -> String {
        let (status, _, body) = self.exchange("GET", path, Some(key), None, &[]).await.expect("an answer");
        assert_eq!(status, 200, "GET {path}");
        String::from_utf8(body.to_vec()).expect("UTF-8")
    }

    /// The value of one series (`name` or `name{labels}`) in `/metrics`, read with the
    /// admin `key`, if it is there.
    pub async fn metric(&self, key: &str, series: &str) -> Option<f64> {
        let text = self.text("/metrics", key).await;
        text.lines().find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.trim().parse().ok())
    }

    /// A request with a body of any kind (its type among `headers`), no key: status,
    /// headers and the body's bytes (pages, forms).
    pub async fn send_raw(
        &self,
        method: &str,
        path: &str,
        body: Vec<u8>,
        headers: &[(&str, &str)],
    ) -> Result<(u16, hyper::HeaderMap, Bytes), String> {
        self.exchange_bytes(method, path, None, Bytes::from(body), headers).await
    }

    /// As [`Http::send_raw`], with a key (an upload).
    pub async fn send_raw_with_key(
        &self,
        method: &str,
        path: &str,
        key: &str,
        body: Vec<u8>,
        headers: &[(&str, &str)],
    ) -> Result<(u16, hyper::HeaderMap, Bytes), String> {
        self.exchange_bytes(method, path, Some(key), Bytes::from(body), headers).await
    }

    async fn exchange(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Result<(u16, hyper::HeaderMap, Bytes), String> {
        match body {
            Some(body) => {
                let mut with_type = headers.to_vec();
                with_type.push(("content-type", "application/json"));
                self.exchange_bytes(method, path, key, Bytes::from(body.to_string()), &with_type).await
            }
            None => self.exchange_bytes(method, path, key, Bytes::new(), headers).await,
        }
    }

    async fn exchange_bytes(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        bytes: Bytes,
        headers: &[(&str, &str)],
    ) -> Result<(u16, hyper::HeaderMap, Bytes), String> {
        let mut builder = hyper::Request::builder().method(method).uri(format!("{}{path}", self.base));
        if let Some(key) = key {
            builder = builder.header("authorization", format!("Bearer {key}"));
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let request = builder.body(Full::new(bytes)).map_err(|e| e.to_string())?;
        let call = async {
            let response = self.client.request(request).await.map_err(|e| e.to_string())?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
            Ok((status, headers, body))
        };
        tokio::time::timeout(Duration::from_secs(30), call).await.map_err(|_| "no answer in 30 s".to_owned())?
    }

    /// A GET with `key` whose body is left open (an event stream): status and body.
    pub async fn open(&self, path: &str, key: &str) -> Result<(u16, hyper::body::Incoming), String> {
        let request = hyper::Request::get(format!("{}{path}", self.base))
            .header("authorization", format!("Bearer {key}"))
            .body(Full::new(Bytes::new()))
            .map_err(|e| e.to_string())?;
        let response = self.client.request(request).await.map_err(|e| e.to_string())?;
        Ok((response.status().as_u16(), response.into_body()))
    }

    pub async fn get(&self, path: &str, key: &str) -> Result<Answer, String> {
        self.send("GET", path, Some(key), None, &[]).await
    }

    /// A request that must succeed with `expected`; returns the body.
    pub async fn expect(&self, expected: u16, method: &str, path: &str, key: &str, body: Option<&Value>) -> Value {
        let (status, reply) = self.send(method, path, Some(key), body, &[]).await.expect("an answer");
        assert_eq!(status, expected, "{method} {path}: {reply}");
        reply
    }
}

/// The orders `(id, pet, quantity)` in a SQLite store file (a backup, a restored copy),
/// once its `integrity_check` is ok and each of `pets`, stocked with `start` units, has
/// lost exactly the units ordered of it.
pub async fn orders_with_their_stock_taken(path: &Path, pets: &[i64], start: i64) -> Vec<(i64, i64, i64)> {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display())).await.unwrap();
    let verdict: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&pool).await.unwrap();
    assert_eq!(verdict, "ok", "{}", path.display());
    let orders: Vec<(i64, i64, i64)> =
        sqlx::query_as("SELECT id, pet_id, quantity FROM orders").fetch_all(&pool).await.unwrap();
    let mut ordered = std::collections::HashMap::<i64, i64>::new();
    for (_, pet, quantity) in &orders {
        *ordered.entry(*pet).or_default() += quantity;
    }
    for pet in pets {
        let left: i64 = sqlx::query_scalar("SELECT quantity FROM inventory WHERE pet_id = ?")
            .bind(pet)
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(left + ordered.get(pet).copied().unwrap_or(0), start, "pet {pet}: stock taken = units ordered");
    }
    pool.close().await;
    orders
}
