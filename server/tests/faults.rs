//! Faults the machine has, met by the real binary: a store on a small volume that
//! fills up. Writes are refused with 507 `insufficient_storage` and change nothing,
//! reads go on, `/readyz` says not ready, and both writes and readiness come back as
//! soon as there is space, with no restart.
//! (Tests run as root, as the toolchain notes say: the volume is a tmpfs mounted for
//! the test and resized under the running server.)

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::live::LiveServer;
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

    let mut refused = None;
    for n in 0..20_000 {
        let (status, body) = http.send("POST", "/api/v1/pets", Some(&admin), Some(&pet(n)), &[]).await.unwrap();
        if status != 201 {
            refused = Some((n, status, body));
            break;
        }
    }
    let (created, status, body) = refused.expect("the volume filled up");
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
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = http.send("POST", "/api/v1/pets", Some(&admin), Some(&pet(created)), &[]).await.unwrap();
        if status == 201 {
            break;
        }
        assert!(Instant::now() < deadline, "writes still refused 5 s after space returned: {status} {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for n in 1..=30 {
        let (status, body) =
            http.send("POST", "/api/v1/pets", Some(&admin), Some(&pet(created + n)), &[]).await.unwrap();
        assert_eq!(status, 201, "write {n} after the fault: {body}");
    }
    assert!(server.terminate(), "a clean stop");
}
