//! Graceful shutdown: on SIGTERM the server stops accepting connections but finishes
//! the request in flight (whose body is still arriving), saves, and exits 0.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::live::LiveServer;

#[test]
fn sigterm_finishes_the_request_in_flight_and_refuses_new_connections() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, admin) = LiveServer::start(dir.path());
    let admin = admin.unwrap();
    let body = br#"{"name":"Arrived during shutdown"}"#;
    let mut stream = TcpStream::connect(server.addr).unwrap();
    write!(
        stream,
        "POST /api/v1/categories HTTP/1.1\r\nHost: {}\r\nX-API-Key: {admin}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        server.addr,
        body.len()
    )
    .unwrap();
    stream.write_all(&body[..10]).unwrap();
    stream.flush().unwrap();
    std::thread::sleep(Duration::from_millis(200)); // the server is reading the body

    server.send_sigterm();
    std::thread::sleep(Duration::from_millis(300));
    assert!(TcpStream::connect(server.addr).is_err(), "no new connections once shutting down");

    stream.write_all(&body[10..]).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 201"), "the request in flight is answered: {response}");
    assert!(server.wait_for_exit(), "exit 0");

    // What it answered was saved: the category is there after a restart.
    let (server, _) = LiveServer::start(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let categories = runtime.block_on(server.client().expect(200, "GET", "/api/v1/categories", &admin, None));
    assert!(categories.to_string().contains("Arrived during shutdown"), "{categories}");
}
