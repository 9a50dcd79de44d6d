//! Scheduled snapshots (`--backup-dir`, `--backup-every`, `--backup-keep`) on the real
//! binary: the newest are kept and the oldest deleted, the metric moves, a folder that
//! cannot be written is reported while the store goes on serving (and the schedule
//! recovers when it is fixed), and of two servers over one store one takes them.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::within;

/// Several one-second intervals, with room for a loaded machine.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);
use common::live::LiveServer;
use serde_json::json;

/// A server over `dir/live.db` taking a snapshot into `backups` every second, keeping
/// `keep`, its log (info) in `log`.
fn start(dir: &Path, backups: &Path, keep: u32, log: &Path) -> (LiveServer, Option<String>) {
    let log = std::fs::File::create(log).unwrap();
    LiveServer::start_with(dir, |command| {
        command
            .env("PETSTORE_BACKUP_DIR", backups)
            .env("PETSTORE_BACKUP_EVERY", "1s")
            .env("PETSTORE_BACKUP_KEEP", keep.to_string())
            .env("RUST_LOG", "info,sqlx=warn")
            .stderr(log);
    })
}

/// The scheduled snapshots in `dir`, oldest first.
fn snapshots(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> =
        std::fs::read_dir(dir).map(|entries| entries.map(|e| e.unwrap().path()).collect()).unwrap_or_default();
    found.retain(|path| path.file_name().unwrap().to_string_lossy().starts_with("live-"));
    found.sort();
    found
}

fn log_lines(log: &Path, what: &str) -> usize {
    std::fs::read_to_string(log).unwrap().lines().filter(|line| line.contains(what)).count()
}

#[tokio::test]
async fn the_newest_snapshots_are_kept_the_oldest_deleted_and_the_metric_moves() {
    let dir = tempfile::tempdir().unwrap();
    let backups = dir.path().join("backups");
    let log = dir.path().join("server.log");
    let (server, admin) = start(dir.path(), &backups, 2, &log);
    let admin = admin.unwrap();
    let http = server.client();
    http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Kept"}))).await;

    let first = within(PATIENCE, async || {
        http.metric(&admin, "petstore_backup_last_success_timestamp_seconds")
            .await
            .ok_or_else(|| "no backup yet".to_owned())
    })
    .await;
    // Every snapshot name seen, until four have been written and the two oldest are gone.
    let mut seen = std::collections::BTreeSet::new();
    let kept = within(PATIENCE, async || {
        let now = snapshots(&backups);
        seen.extend(now.iter().cloned());
        if seen.len() >= 4 && now.len() == 2 && now.iter().eq(seen.iter().rev().take(2).rev()) {
            Ok(now)
        } else {
            Err(format!("seen {seen:?}, now {now:?}"))
        }
    })
    .await;
    let later = http.metric(&admin, "petstore_backup_last_success_timestamp_seconds").await.unwrap();
    assert!(later > first, "the metric moves: {first} then {later}");
    let every = http.metric(&admin, "petstore_backup_interval_seconds").await;
    assert_eq!(every, Some(1.0), "the interval, for the stale-backup alert");
    // The log is written by a thread of its own, a moment after the files.
    within(PATIENCE, async || match log_lines(&log, "deleted a scheduled backup beyond those kept") {
        n if n >= 2 => Ok(()),
        n => Err(format!("{n} deletions logged")),
    })
    .await;

    // Each is a whole store with what was there, readable by its owner alone.
    for snapshot in &kept {
        let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=ro", snapshot.display())).await;
        let Ok(pool) = pool else { continue }; // deleted meanwhile: the next is checked
        let verdict: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&pool).await.unwrap();
        assert_eq!(verdict, "ok");
        let names: Vec<String> = sqlx::query_scalar("SELECT name FROM categories").fetch_all(&pool).await.unwrap();
        assert!(names.contains(&"Kept".to_owned()), "{names:?}");
        let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(snapshot).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o600);
    }

    // Started again without a schedule, none is due: the interval reads 0 (so the
    // stale-backup alert rests), the last success stays what it was.
    let mut server = server;
    assert!(server.terminate());
    let (server, _) = LiveServer::start(dir.path());
    let http = server.client();
    assert_eq!(http.metric(&admin, "petstore_backup_interval_seconds").await, Some(0.0));
    assert!(http.metric(&admin, "petstore_backup_last_success_timestamp_seconds").await.unwrap() >= later);
}

#[tokio::test]
async fn a_folder_that_cannot_be_written_is_reported_the_store_serves_on_and_the_schedule_recovers() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the folder should be: it cannot be created.
    let backups = dir.path().join("backups");
    std::fs::write(&backups, "in the way").unwrap();
    let log = dir.path().join("server.log");
    let (server, admin) = start(dir.path(), &backups, 3, &log);
    let admin = admin.unwrap();
    let http = server.client();

    within(PATIENCE, async || match http.metric(&admin, "petstore_backup_failures_total").await {
        Some(failures) if failures >= 2.0 => Ok(()),
        other => Err(format!("failures: {other:?}")),
    })
    .await;
    assert!(http.metric(&admin, "petstore_backup_last_success_timestamp_seconds").await.is_none());
    within(PATIENCE, async || match log_lines(&log, "a scheduled backup failed; the store goes on serving") {
        n if n >= 2 => Ok(()),
        n => Err(format!("{n} failures logged")),
    })
    .await;
    // It serves and takes writes meanwhile.
    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Dogs"}))).await;
    let pet = json!({ "name": "Rex", "categoryId": category["id"] });
    http.expect(201, "POST", "/api/v1/pets", &admin, Some(&pet)).await;
    let (status, _) = http.get("/readyz", &admin).await.unwrap();
    assert_eq!(status, 200);

    // The fault ends: the next interval writes a snapshot, with no restart.
    std::fs::remove_file(&backups).unwrap();
    within(PATIENCE, async || {
        http.metric(&admin, "petstore_backup_last_success_timestamp_seconds")
            .await
            .ok_or_else(|| "no backup yet".to_owned())
    })
    .await;
    assert!(!snapshots(&backups).is_empty());
}

#[tokio::test]
async fn of_two_servers_over_one_store_one_takes_the_snapshots_and_the_other_takes_over_when_it_stops() {
    let dir = tempfile::tempdir().unwrap();
    let backups = dir.path().join("backups");
    let logs = [dir.path().join("a.log"), dir.path().join("b.log")];
    let (mut a, _) = start(dir.path(), &backups, 100, &logs[0]);
    let (mut b, _) = start(dir.path(), &backups, 100, &logs[1]);
    within(
        PATIENCE,
        async || if snapshots(&backups).len() >= 3 { Ok(()) } else { Err("fewer than 3 snapshots".to_owned()) },
    )
    .await;

    let taken = |log: &Path| log_lines(log, "took a scheduled backup");
    let (holder, other) = within(PATIENCE, async || match (taken(&logs[0]), taken(&logs[1])) {
        (0, n) if n > 0 => Ok((1, 0)),
        (n, 0) if n > 0 => Ok((0, 1)),
        (0, 0) => Err("no snapshot logged yet".to_owned()),
        both => panic!("both servers took snapshots: {both:?}"),
    })
    .await;
    assert_eq!(log_lines(&logs[other], "another server over this store takes the scheduled backups"), 1);
    // Every file is one the holder took (its log line comes just after the file).
    let written = snapshots(&backups).len();
    assert!(taken(&logs[holder]) + 1 >= written, "{written} files, fewer snapshots taken");
    assert_eq!(taken(&logs[other]), 0);

    // The holder stops (its lease given up): the other takes the next ones at once.
    let (stopping, staying) = if holder == 0 { (&mut a, &b) } else { (&mut b, &a) };
    assert!(stopping.terminate());
    within(
        PATIENCE,
        async || if taken(&logs[other]) >= 2 { Ok(()) } else { Err("the other has not taken over".to_owned()) },
    )
    .await;
    assert_eq!(log_lines(&logs[other], "this server takes the scheduled backups"), 1);
    let http = staying.client();
    let (status, _) = http.send("GET", "/readyz", None, None, &[]).await.unwrap();
    assert_eq!(status, 200);
}

#[test]
fn a_postgresql_store_is_told_which_tools_back_it_up() {
    let out = Command::new(env!("CARGO_BIN_EXE_server"))
        .args(["--database-url", "postgres://shop:secret@127.0.0.1:1/shop", "--backup-dir", "/tmp/never"])
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(said.contains("--backup-dir takes snapshots of a SQLite store"), "{said}");
    assert!(said.contains("pg_basebackup --pgdata=") && said.contains("pg_dump --format=custom"), "{said}");
    assert!(!said.contains("secret"), "the password is not repeated: {said}");
    assert!(!Path::new("/tmp/never").exists());
}

#[test]
fn a_backup_interval_is_a_duration_from_a_second_to_30_days() {
    for (every, fine) in
        [("2s", true), ("15m", true), ("6h", true), ("1h 30m", true), ("0s", false), ("31d", false), ("soon", false)]
    {
        let out = Command::new(env!("CARGO_BIN_EXE_server"))
            .args(["--backup-every", every])
            .env("DATABASE_URL", "sqlite:///nonexistent-folder/never.db")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(!said.contains("invalid value"), fine, "{every}: {said}");
    }
}
