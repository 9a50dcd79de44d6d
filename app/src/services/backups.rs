//! Scheduled snapshots of a SQLite store (`--backup-dir`, `--backup-every`,
//! `--backup-keep`): with no other tool, a server writes a checked snapshot into the
//! folder at every interval and deletes the oldest beyond the number kept. Each is
//! taken by `server backup` (`db::backup::backup`) in a child process at the lowest CPU
//! and I/O priority (`nice -n 19 ionice -c 3`): on a busy machine the store's requests
//! come first and the snapshot takes longer (docs/PERFORMANCE.md, "Backups at a
//! million pets"). Of several processes over one store file, the one holding
//! a lease in the database takes them (renewed while it runs; another takes over when
//! it stops or its lease runs out); the others say so once in the log. How the last one
//! went is kept in the database, so every server's dashboard and metrics tell it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::db::{Db, sql};
use crate::error::AppResult;
use crate::model::{BackupStatus, span_in_words};
use crate::services::clock::{Clock, compact_utc, rfc3339};

/// Where, how often and how many; and the program that takes one (this server's own
/// binary, run as `<program> backup --to FILE` over `database_url`).
#[derive(Clone, Debug)]
pub struct Schedule {
    pub dir: PathBuf,
    pub every: Duration,
    pub keep: usize,
    pub program: PathBuf,
    pub database_url: String,
}

/// How long the lease holds without being renewed: a holder killed outright is
/// replaced after this.
pub const LEASE_SECONDS: i64 = 30;
/// How often the holder renews its lease and looks whether a snapshot is due (more
/// often when the interval is shorter).
const CHECK_EVERY: Duration = Duration::from_secs(5);

/// The running schedule; [`Backups::stop`] ends it and hands the lease on.
pub struct Backups {
    task: tokio::task::JoinHandle<()>,
    holder: String,
    db: Db,
}

impl Backups {
    /// Stops taking snapshots (one being written is abandoned, its partial file
    /// removed by the next attempt's cleanup or left hidden) and gives the lease up, so
    /// that another server over the store takes the next one without waiting.
    pub async fn stop(self) {
        self.task.abort();
        let _ = self.task.await;
        if let Ok(mut tx) = self.db.begin_write_outside_catalog().await
            && sql::backups::give_up_lease(&mut tx, &self.holder).await.is_ok()
        {
            let _ = tx.commit().await;
        }
    }
}

/// Starts the schedule for the SQLite store whose file is `store`.
pub fn spawn(db: Db, clock: Clock, store: PathBuf, schedule: Schedule) -> Backups {
    let holder = format!("pid {} started {}", std::process::id(), clock.now());
    let task = tokio::spawn(run(db.clone(), clock, store, schedule, holder.clone()));
    Backups { task, holder, db }
}

async fn run(db: Db, clock: Clock, store: PathBuf, schedule: Schedule, holder: String) {
    let mut tick = tokio::time::interval(schedule.every.min(CHECK_EVERY));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let every = i64::try_from(schedule.every.as_secs()).unwrap_or(i64::MAX).max(1);
    let mut holding: Option<bool> = None;
    loop {
        tick.tick().await;
        if db.is_closed() {
            return;
        }
        let now = clock.now();
        let holds = match renew(&db, &holder, now).await {
            Ok(holds) => holds,
            Err(err) => {
                tracing::warn!(error = %err, "could not learn which server takes the scheduled backups; trying again");
                continue;
            }
        };
        if holding != Some(holds) {
            if holds {
                tracing::info!(dir = %schedule.dir.display(), every_seconds = every, keep = schedule.keep,
                    "this server takes the scheduled backups");
            } else {
                tracing::info!("another server over this store takes the scheduled backups; this one does not");
            }
            holding = Some(holds);
        }
        if !holds {
            continue;
        }
        let due = match sql::backups::read(&db).await {
            Ok(row) => row.and_then(|row| row.last_attempt_at).is_none_or(|last| now - last >= every),
            Err(err) => {
                tracing::warn!(error = %err, "could not read when the last scheduled backup was taken");
                false
            }
        };
        if due {
            // A large store's snapshot may outlast the lease: it is renewed meanwhile,
            // by a task of its own (the snapshot's own writes must never wait on it).
            let renewal = tokio::spawn({
                let (db, holder, clock) = (db.clone(), holder.clone(), clock.clone());
                async move {
                    loop {
                        tokio::time::sleep(CHECK_EVERY).await;
                        let _ = renew(&db, &holder, clock.now()).await;
                    }
                }
            });
            take_one(&db, &clock, &store, &schedule, every).await;
            renewal.abort();
        }
    }
}

/// Takes or renews the lease; whether this server holds it.
async fn renew(db: &Db, holder: &str, now: i64) -> AppResult<bool> {
    let mut tx = db.begin_write_outside_catalog().await?;
    let holds = sql::backups::take_lease(&mut tx, holder, now, now + LEASE_SECONDS).await?;
    tx.commit().await?;
    Ok(holds)
}

/// One snapshot into the folder, noted in the database, the log and the metrics; then
/// the oldest beyond the number kept are deleted. A failure is reported the same
/// ways, and tried again at the next interval.
async fn take_one(db: &Db, clock: &Clock, store: &Path, schedule: &Schedule, every: i64) {
    let started_at = clock.now();
    let _ = note(db, |tx| Box::pin(sql::backups::note_attempt(tx, started_at, every))).await;
    let started = Instant::now();
    let to = schedule.dir.join(snapshot_name(store, started_at));
    let written = async {
        // Its owner's alone, as the snapshots in it are.
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
            .create(&schedule.dir)
            .map_err(|err| format!("creating the folder {}: {err}", schedule.dir.display()))?;
        remove_abandoned(&schedule.dir, store);
        take_in_child(schedule, &to).await
    }
    .await;
    match written {
        Ok(said) => {
            let file = to.display().to_string();
            let noted = file.clone();
            let _ =
                note(db, move |tx| Box::pin(async move { sql::backups::note_success(tx, started_at, &noted).await }))
                    .await;
            tracing::info!(path = %file, what = %said, seconds = started.elapsed().as_secs_f64(),
                "took a scheduled backup");
            match prune(&schedule.dir, store, schedule.keep) {
                Ok(deleted) => {
                    for old in deleted {
                        tracing::info!(path = %old.display(), "deleted a scheduled backup beyond those kept");
                    }
                }
                Err(err) => tracing::warn!(dir = %schedule.dir.display(), error = %err,
                    "could not delete the scheduled backups beyond those kept"),
            }
        }
        Err(err) => {
            metrics::counter!("petstore_backup_failures_total").increment(1);
            let noted = err.clone();
            let _ =
                note(db, move |tx| Box::pin(async move { sql::backups::note_failure(tx, started_at, &noted).await }))
                    .await;
            tracing::warn!(dir = %schedule.dir.display(), error = %err, retry_in_seconds = every,
                "a scheduled backup failed; the store goes on serving");
        }
    }
}

/// `nice -n 19 ionice -c 3 <program> backup --to <to>`: what it said it wrote, or why
/// it failed (its last lines). Killed if the schedule stops meanwhile; its hidden
/// partial file is then removed by the next attempt.
async fn take_in_child(schedule: &Schedule, to: &Path) -> Result<String, String> {
    let out = tokio::process::Command::new("nice")
        .args(["-n", "19", "ionice", "-c", "3"])
        .arg(&schedule.program)
        .args(["backup", "--to"])
        .arg(to)
        .env("DATABASE_URL", &schedule.database_url)
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|err| format!("starting `{} backup`: {err}", schedule.program.display()))?;
    let said = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = said.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    let last = lines[lines.len().saturating_sub(3)..].join(" ");
    if out.status.success() { Ok(last) } else { Err(last.strip_prefix("Error: ").unwrap_or(&last).to_owned()) }
}

/// The hidden partial files of snapshots of `store` left in `dir` by a snapshot that
/// was killed (the server stopped meanwhile): only the schedule's holder writes there,
/// one at a time, so any found before it starts is abandoned.
fn remove_abandoned(dir: &Path, store: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for path in entries.filter_map(|entry| Some(entry.ok()?.path())) {
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else { continue };
        let abandoned = name
            .strip_prefix('.')
            .and_then(|rest| rest.split_once(".partial-"))
            .is_some_and(|(snapshot, _)| is_snapshot_of(snapshot, store));
        if abandoned {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// One write of the schedule's row, in a transaction of its own.
async fn note<F>(db: &Db, write: F) -> AppResult<()>
where
    F: for<'c> FnOnce(&'c mut crate::db::Conn) -> crate::db::Work<'c, ()>,
{
    let mut tx = db.begin_write_outside_catalog().await?;
    write(&mut tx).await?;
    tx.commit().await?;
    Ok(())
}

/// `<store's name>-<UTC time>.db`, such as `petstore-20261127T061500Z.db`: sorted by
/// name, they are sorted by time.
pub fn snapshot_name(store: &Path, unix: i64) -> String {
    format!("{}-{}.db", stem(store), compact_utc(unix))
}

fn stem(store: &Path) -> String {
    store.file_stem().map_or_else(|| "petstore".into(), |stem| stem.to_string_lossy().into_owned())
}

/// Whether `name` is one of the scheduled snapshots of `store` (never another file).
fn is_snapshot_of(name: &str, store: &Path) -> bool {
    let Some(stamp) = name.strip_prefix(&format!("{}-", stem(store))).and_then(|rest| rest.strip_suffix("Z.db")) else {
        return false;
    };
    let (date, time) = stamp.split_at_checked(8).unwrap_or(("", ""));
    date.len() == 8
        && date.bytes().all(|b| b.is_ascii_digit())
        && time.len() == 7
        && time.starts_with('T')
        && time[1..].bytes().all(|b| b.is_ascii_digit())
}

/// Deletes the oldest snapshots of `store` in `dir` beyond the newest `keep`; returns
/// what it deleted.
fn prune(dir: &Path, store: &Path, keep: usize) -> std::io::Result<Vec<PathBuf>> {
    let mut taken: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            is_snapshot_of(path.file_name()?.to_str()?, store).then_some(path)
        })
        .collect();
    taken.sort();
    let beyond = taken.len().saturating_sub(keep);
    let old: Vec<PathBuf> = taken.drain(..beyond).collect();
    for path in &old {
        std::fs::remove_file(path)?;
    }
    Ok(old)
}

/// A server of a SQLite store started without a schedule: unless another server takes
/// the snapshots, none is due any more, and neither the dashboard nor the stale-backup
/// alert waits for one.
pub async fn note_off(db: &Db, now: i64) -> AppResult<()> {
    let mut tx = db.begin_write_outside_catalog().await?;
    sql::backups::note_off(&mut tx, now).await?;
    tx.commit().await?;
    Ok(())
}

/// How the scheduled snapshots stand at `now`; `None` on a PostgreSQL store (backed up
/// with its own tools).
pub async fn status(db: &Db, now: i64) -> AppResult<Option<BackupStatus>> {
    let Some(row) = sql::backups::read(db).await? else { return Ok(None) };
    let ago = row.last_success_at.map(|at| (now - at).max(0));
    let failing = match (row.last_failure_at, row.last_success_at) {
        (Some(failed), succeeded) if succeeded.is_none_or(|ok| ok < failed) => row.last_error.clone(),
        _ => None,
    };
    let warning = match (&failing, row.every_seconds, ago) {
        (Some(error), _, _) => Some(format!("The last scheduled backup failed: {error}")),
        (None, Some(every), Some(ago)) if ago > 2 * every => Some(format!(
            "The last backup was taken {} ago, more than twice the interval ({}).",
            span_in_words(ago),
            span_in_words(every)
        )),
        (None, Some(every), None) if row.last_attempt_at.is_some_and(|at| now - at > 2 * every) => {
            Some("No scheduled backup has been written yet.".into())
        }
        _ => None,
    };
    Ok(Some(BackupStatus {
        every_seconds: row.every_seconds,
        last_success_at: row.last_success_at.map(rfc3339),
        last_success_ago_seconds: ago,
        last_file: row.last_file,
        failing,
        warning,
    }))
}

/// When the last scheduled snapshot was written (Unix seconds), if ever, and every how
/// many seconds one is due (the alert on a stale backup compares the two).
pub async fn last_success(db: &Db) -> AppResult<(Option<i64>, Option<i64>)> {
    Ok(sql::backups::read(db).await?.map_or((None, None), |row| (row.last_success_at, row.every_seconds)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_stores_own_snapshots_are_pruned_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = Path::new("/data/shop.db");
        let names = [
            snapshot_name(store, 1_700_000_000),
            snapshot_name(store, 1_700_000_002),
            snapshot_name(store, 1_700_000_001),
            "shop-notes.db".into(),
            "other-20231114T221320Z.db".into(),
            ".shop-20231114T221320Z.db.partial-12".into(),
        ];
        for name in &names {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        let deleted = prune(dir.path(), store, 1).unwrap();
        let deleted: Vec<_> = deleted.iter().map(|p| p.file_name().unwrap().to_str().unwrap().to_owned()).collect();
        assert_eq!(deleted, [names[0].clone(), names[2].clone()]);
        let mut left: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        assert_eq!(
            left,
            [".shop-20231114T221320Z.db.partial-12", "other-20231114T221320Z.db", &names[1], "shop-notes.db"]
        );
        assert_eq!(names[0], "shop-20231114T221320Z.db");

        // A snapshot killed halfway left its hidden partial file: the next one removes it.
        std::fs::write(dir.path().join(".other-20231114T221320Z.db.partial-9"), b"x").unwrap();
        remove_abandoned(dir.path(), store);
        let mut left: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        assert_eq!(
            left,
            [".other-20231114T221320Z.db.partial-9", "other-20231114T221320Z.db", &names[1], "shop-notes.db"]
        );
    }
}
