//! The security suite's findings that only the real binary can show (docs/SECURITY.md):
//! sockets held open, the open-files limit, the process's memory, a revocation by
//! another process, the store's file on disk. `security.rs` holds the rest.

mod common;

use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use common::live::LiveServer;
use http_body_util::BodyExt;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// The request timeout the servers here run with, in seconds: a request head must
/// arrive within it.
const HEAD_WITHIN: u64 = 2;

/// Room for a loaded machine around a promise of a few seconds (and short enough that
/// a connection never cut fails).
const ROOM: Duration = Duration::from_secs(HEAD_WITHIN + 8);

/// Connects to `server` from `local`, an address of loopback (127.0.0.1, 127.1.0.1…:
/// Linux answers for all of 127.0.0.0/8).
async fn connect_from(local: &str, server: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
    socket.connect(server).await.expect("the kernel takes the connection")
}

/// What the server sends until it closes the connection (`true`) or `within` passes.
async fn until_closed(stream: &mut (impl AsyncReadExt + Unpin), within: Duration) -> (bool, String) {
    let deadline = tokio::time::Instant::now() + within;
    let mut got = Vec::new();
    let mut buf = [0; 4096];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => return (true, String::from_utf8_lossy(&got).into_owned()),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => return (false, String::from_utf8_lossy(&got).into_owned()),
        }
    }
}

/// `GET /healthz` on a new connection from `local`: the answer's first line.
async fn healthz_from(local: &str, server: SocketAddr) -> String {
    let mut stream = connect_from(local, server).await;
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\n").await.unwrap();
    let (_, answer) = until_closed(&mut stream, ROOM).await;
    answer.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_connection_that_does_not_send_a_whole_request_head_in_time_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = LiveServer::start_with(dir.path(), |command| {
        command.env("PETSTORE_REQUEST_TIMEOUT", HEAD_WITHIN.to_string()).env("PETSTORE_TRUSTED_PROXIES", "127.0.0.3");
    });
    let addr = server.addr;
    // A trusted proxy (a load balancer) keeps its connections between requests.
    let mut balancer = connect_from("127.0.0.3", addr).await;
    balancer.write_all(b"GET /healthz HTTP/1.1\r\nHost: shop.test\r\n\r\n").await.unwrap();
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let mut half = TcpStream::connect(addr).await.unwrap();
    half.write_all(b"GET /healthz HTTP/1.1\r\nHost: shop.test\r\n").await.unwrap();
    // A byte every 200 ms, never a whole head: the time counts from its first byte.
    let (mut dripping, mut drip) = TcpStream::connect(addr).await.unwrap().into_split();
    let drips = tokio::spawn(async move {
        for byte in b"GET /healthz HTTP/1.1\r\nX-Slow: ".iter().chain([b'a'; 200].iter()) {
            if drip.write_all(&[*byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    // A keep-alive connection, answered once, then idle.
    let mut idle = TcpStream::connect(addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: shop.test\r\n\r\n").await.unwrap();
    // An event stream: an answer in progress, however long, is not a head awaited.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(b"GET /live HTTP/1.1\r\nHost: shop.test\r\n\r\n").await.unwrap();

    let started = tokio::time::Instant::now();
    for (name, stream) in [("silent", &mut silent), ("half a head", &mut half)] {
        let (closed, answer) = until_closed(stream, ROOM).await;
        assert!(closed, "{name}: still open after {ROOM:?}");
        assert!(!answer.contains(" 200 "), "{name} was not served: {answer}");
    }
    let (closed, answer) = until_closed(&mut dripping, ROOM).await;
    assert!(closed && !answer.contains(" 200 "), "dripping: {closed}, {answer}");
    let (closed, answer) = until_closed(&mut idle, ROOM).await;
    assert!(closed, "an idle keep-alive connection is closed too");
    assert!(answer.starts_with("HTTP/1.1 200"), "it was served first: {answer}");
    assert!(started.elapsed() >= Duration::from_millis(HEAD_WITHIN * 1000 - 500), "not before its time");
    drips.abort();
    let (closed, answer) = until_closed(&mut stream, Duration::from_secs(HEAD_WITHIN + 2)).await;
    assert!(!closed && answer.contains("text/event-stream"), "the stream stays open: {closed}, {answer}");
    let (closed, answer) = until_closed(&mut balancer, Duration::from_millis(500)).await;
    assert!(!closed && answer.starts_with("HTTP/1.1 200"), "the proxy's idle connection stays: {closed}, {answer}");
    // The server goes on serving.
    assert!(healthz_from("127.0.0.1", addr).await.starts_with("HTTP/1.1 200"));
}

#[tokio::test]
async fn connections_over_an_address_s_limit_are_closed_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = LiveServer::start_with(dir.path(), |command| {
        command.env("PETSTORE_MAX_CONNECTIONS_PER_ADDRESS", "8");
    });
    let addr = server.addr;
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(connect_from("127.0.0.1", addr).await);
    }
    // The ninth from that address is closed at once (not after the 30 s head timeout),
    // unserved.
    let mut ninth = connect_from("127.0.0.1", addr).await;
    ninth.write_all(b"GET /healthz HTTP/1.1\r\nHost: shop.test\r\n\r\n").await.ok();
    let (closed, answer) = until_closed(&mut ninth, Duration::from_secs(5)).await;
    assert!(closed && answer.is_empty(), "{closed}: {answer}");
    // Another address is served, and a place given back is taken again.
    assert!(healthz_from("127.0.0.2", addr).await.starts_with("HTTP/1.1 200"));
    drop(held.pop());
    common::eventually(async || {
        let first = healthz_from("127.0.0.1", addr).await;
        if first.starts_with("HTTP/1.1 200") { Ok(()) } else { Err(first) }
    })
    .await;
}

#[tokio::test]
async fn a_crowd_of_silent_connections_never_runs_the_server_out_of_files() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("server.log");
    let log = std::fs::File::create(&log_path).unwrap();
    // 256 files for the server in all; 300 silent connections from one address.
    let (server, _) = LiveServer::start_under(dir.path(), &["prlimit", "--nofile=256:256"], |command| {
        command.env("RUST_LOG", "info,petstore::request=warn").stderr(log);
    });
    let addr = server.addr;
    let mut crowd = Vec::new();
    for _ in 0..300 {
        crowd.push(connect_from("127.0.0.1", addr).await);
    }
    // Someone else (another network) is still served: the crowd's oldest gives way.
    let answered = healthz_from("127.1.0.1", addr).await;
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    let logged = std::fs::read_to_string(&log_path).unwrap();
    assert!(!logged.contains("Too many open files"), "{logged}");
    assert!(logged.contains("serving at most 192 connections"), "{logged}");
    drop(crowd);
}

/// A small PNG with an `iCCP` chunk whose profile inflates to
/// `inflated` zero bytes.
fn png_with_a_profile_of(inflated: usize) -> Vec<u8> {
    use std::io::Write;
    let picture = image::RgbImage::from_fn(64, 48, |x, y| image::Rgb([x as u8 * 4, y as u8 * 5, 90]));
    let mut png = std::io::Cursor::new(Vec::new());
    picture.write_to(&mut png, image::ImageFormat::Png).unwrap();
    let png = png.into_inner();
    let mut profile = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0_u8; 1 << 20];
    for _ in 0..inflated / zeros.len() {
        profile.write_all(&zeros).unwrap();
    }
    let mut data = b"bomb\0\0".to_vec();
    data.extend(profile.finish().unwrap());
    let mut chunk = (data.len() as u32).to_be_bytes().to_vec();
    let mut crc = crc32fast::Hasher::new();
    crc.update(b"iCCP");
    crc.update(&data);
    chunk.extend_from_slice(b"iCCP");
    chunk.extend_from_slice(&data);
    chunk.extend_from_slice(&crc.finalize().to_be_bytes());
    // After the signature and the header chunk (8 + 25 bytes).
    [&png[..33], &chunk[..], &png[33..]].concat()
}

#[tokio::test]
async fn a_png_whose_profile_inflates_to_a_gibibyte_is_taken_without_it() {
    // Made first: it takes a while, and a connection left idle meanwhile is closed.
    let bomb = png_with_a_profile_of(1 << 30);
    assert!(bomb.len() < 5 << 20, "under the upload limit: {} bytes", bomb.len());
    let dir = tempfile::tempdir().unwrap();
    let (server, admin) = LiveServer::start(dir.path());
    let admin = admin.unwrap();
    let http = server.client();
    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({ "name": "Cats" }))).await;
    let pet = json!({ "name": "Tom", "categoryId": category["id"] });
    let pet = http.expect(201, "POST", "/api/v1/pets", &admin, Some(&pet)).await;
    let before = server.peak_rss_kib();
    let path = format!("/api/v1/pets/{}/photo", pet["id"]);
    let (status, _, body) =
        http.send_raw_with_key("PUT", &path, &admin, bomb, &[("content-type", "image/png")]).await.expect("an answer");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let grew = server.peak_rss_kib().saturating_sub(before);
    assert!(grew < 128 * 1024, "the server's peak memory grew by {grew} KiB");
}

#[tokio::test]
async fn a_key_revoked_by_another_process_ends_its_stream_on_a_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let (server, admin) = LiveServer::start(dir.path());
    let admin = admin.unwrap();
    let http = server.client();
    let created = http
        .expect(
            201,
            "POST",
            "/api/v1/keys",
            &admin,
            Some(&json!({ "name": "streamer", "role": "customer", "plan": "pro" })),
        )
        .await;
    let key = created["key"].as_str().unwrap();
    let (status, mut stream) = http.open("/api/v1/events", key).await.unwrap();
    assert_eq!(status, 200);
    let opening = tokio::time::timeout(ROOM, stream.frame()).await.expect("the opening frame");
    assert!(opening.is_some());
    // The operator revokes it from the shell (the CLI is another process).
    let revoked = std::process::Command::new(env!("CARGO_BIN_EXE_server"))
        .env("DATABASE_URL", format!("sqlite://{}", server.db_path.display()))
        .env("RUST_LOG", "warn")
        .args(["keys", "revoke", &created["id"].to_string()])
        .output()
        .unwrap();
    assert!(revoked.status.success(), "{}", String::from_utf8_lossy(&revoked.stderr));
    let revoked_at = tokio::time::Instant::now();
    loop {
        match tokio::time::timeout_at(revoked_at + ROOM, stream.frame()).await {
            Ok(Some(Ok(_))) => {}
            Ok(_) => break,
            Err(_) => panic!("the revoked key's stream is still open after {ROOM:?}"),
        }
    }
    // The store's file and its log are the owner's alone.
    for file in [server.db_path.clone(), server.db_path.with_extension("db-wal")] {
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{} is {mode:o}", file.display());
    }
}
