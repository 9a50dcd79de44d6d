//! Snapshots of a SQLite store, taken while servers keep serving (`server backup`), and
//! putting one back (`server restore`). A snapshot is written under a temporary name,
//! synced, checked and only then renamed into place, so a failure never leaves a file
//! that looks like a backup. (A PostgreSQL store is backed up with PostgreSQL's own
//! tools: docs/operations.md, "Backups".)

use std::path::{Path, PathBuf};

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, SqliteConnection};

use super::sqlite::InUse;

/// What a snapshot holds, as read back from the written file.
#[derive(Debug)]
pub struct Snapshot {
    pub path: PathBuf,
    pub bytes: u64,
    pub pets: i64,
    pub orders: i64,
    /// The newest migration applied to it: version and description.
    pub migration: (i64, String),
}

/// Why a backup or a restore did not happen. Nothing was written or replaced.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(String);

fn refused(context: impl std::fmt::Display, err: impl std::fmt::Display) -> Refused {
    Refused(format!("{context}: {err}"))
}

/// Writes a consistent snapshot of the store behind `pool` to `to` (SQLite's `VACUUM
/// INTO`: a read transaction, so writers go on meanwhile). An existing `to` is replaced
/// only with `force`.
pub async fn backup(pool: &sqlx::SqlitePool, to: &Path, force: bool) -> Result<Snapshot, Refused> {
    if to.exists() && !force {
        return Err(Refused(format!("{} exists: pass --force to replace it", to.display())));
    }
    let partial = partial_name(to);
    let written = async {
        // Created empty first, readable by its owner alone (it holds key hashes and
        // webhook secrets); VACUUM INTO fills an empty file.
        create_private(&partial).map_err(|err| refused(format_args!("creating {}", partial.display()), err))?;
        let target = partial.to_str().ok_or_else(|| Refused(format!("{} is not UTF-8", partial.display())))?;
        // On a connection of its own, not one of the pool's for seconds, and without
        // sqlx's warning that a statement is slow: at a million pets this one takes a
        // few seconds, as it should.
        let mut conn = (*pool.connect_options())
            .clone()
            .disable_statement_logging()
            .connect()
            .await
            .map_err(|err| refused("connecting to the store", err))?;
        let copied = sqlx::query("VACUUM INTO ?").bind(target).execute(&mut conn).await;
        let _ = conn.close().await;
        copied.map_err(|err| refused("taking the snapshot", err))?;
        sync(&partial).map_err(|err| refused(format_args!("syncing {}", partial.display()), err))?;
        let snapshot = inspect(&partial).await?;
        std::fs::rename(&partial, to).map_err(|err| refused(format_args!("renaming into {}", to.display()), err))?;
        sync_parent(to).map_err(|err| refused("syncing the folder", err))?;
        Ok(Snapshot { path: to.to_path_buf(), ..snapshot })
    }
    .await;
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

/// Puts the snapshot `from` in the place of the SQLite store at `target`, after checking
/// that it is a whole store this binary understands and that nothing has the target
/// open. What it replaces is kept beside it (`<target>.before-restore-<time>`, with its
/// `-wal` if any); the path of that copy is returned. The caller then opens the target
/// as usual, which applies the migrations the snapshot lacks.
pub async fn restore(from: &Path, target: &Path, now: &str) -> Result<(Snapshot, Option<PathBuf>), Refused> {
    if with_suffix(from, "-wal").exists() {
        return Err(Refused(format!(
            "{} has a -wal file beside it: it is a live store, not a backup (take one with `server backup`)",
            from.display()
        )));
    }
    let snapshot = inspect(from).await?;
    // Held until the snapshot is in place: a server starting meanwhile is refused.
    let _alone = InUse::take_alone(target).map_err(|err| Refused(err.to_string()))?;
    let partial = partial_name(target);
    let kept = target.with_file_name(format!("{}.before-restore-{now}", file_name(target)));
    let restored = async {
        create_private(&partial).map_err(|err| refused(format_args!("creating {}", partial.display()), err))?;
        std::fs::copy(from, &partial).map_err(|err| refused(format_args!("copying {}", from.display()), err))?;
        // `copy` gives the copy the source's mode (a Litestream restore's is 0644): the
        // store is its owner's alone, whatever it was restored from.
        std::fs::set_permissions(&partial, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .map_err(|err| refused(format_args!("making {} private", partial.display()), err))?;
        sync(&partial).map_err(|err| refused(format_args!("syncing {}", partial.display()), err))?;
        let kept = if target.exists() {
            for suffix in ["-wal", "-shm"] {
                let companion = with_suffix(target, suffix);
                if companion.exists() {
                    std::fs::rename(&companion, with_suffix(&kept, suffix))
                        .map_err(|err| refused(format_args!("keeping {}", companion.display()), err))?;
                }
            }
            std::fs::rename(target, &kept).map_err(|err| refused(format_args!("keeping {}", target.display()), err))?;
            Some(kept)
        } else {
            None
        };
        std::fs::rename(&partial, target)
            .map_err(|err| refused(format_args!("renaming into {}", target.display()), err))?;
        sync_parent(target).map_err(|err| refused("syncing the folder", err))?;
        Ok(kept)
    }
    .await;
    if restored.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    Ok((Snapshot { path: target.to_path_buf(), ..snapshot }, restored?))
}

/// Reads a snapshot back, read-only: it must be a SQLite file that passes
/// `integrity_check`, hold the store's tables and no migration this binary lacks.
async fn inspect(path: &Path) -> Result<Snapshot, Refused> {
    let not_a_store =
        |err: &dyn std::fmt::Display| Refused(format!("{} is not a pet store backup: {err}", path.display()));
    let bytes = std::fs::metadata(path).map_err(|err| refused(path.display(), err))?.len();
    let mut conn = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .immutable(true)
        .disable_statement_logging()
        .connect()
        .await
        .map_err(|err| not_a_store(&err))?;
    let checked: Result<Snapshot, Refused> = async {
        let verdict: String =
            sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut conn).await.map_err(|err| not_a_store(&err))?;
        if verdict != "ok" {
            return Err(not_a_store(&format_args!("integrity_check says {verdict}")));
        }
        let applied: Vec<(i64, String)> = sqlx::query_as("SELECT version, description FROM _sqlx_migrations")
            .fetch_all(&mut conn)
            .await
            .map_err(|err| not_a_store(&err))?;
        super::schema::refuse_unknown(&applied, &super::sqlite::MIGRATOR).map_err(|err| not_a_store(&err))?;
        let migration = applied.into_iter().max().ok_or_else(|| not_a_store(&"no migration was applied to it"))?;
        let pets = count(&mut conn, "SELECT count(*) FROM pets").await.map_err(|err| not_a_store(&err))?;
        let orders = count(&mut conn, "SELECT count(*) FROM orders").await.map_err(|err| not_a_store(&err))?;
        Ok(Snapshot { path: path.to_path_buf(), bytes, pets, orders, migration })
    }
    .await;
    let _ = conn.close().await;
    checked
}

async fn count(conn: &mut SqliteConnection, query: &'static str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(query).fetch_one(conn).await
}

/// `.<name>.partial-<pid>` beside `path`: hidden, and never taken for a backup.
fn partial_name(path: &Path) -> PathBuf {
    path.with_file_name(format!(".{}.partial-{}", file_name(path), std::process::id()))
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| "petstore.db".into(), |name| name.to_string_lossy().into_owned())
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    path.with_file_name(format!("{}{suffix}", file_name(path)))
}

fn create_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).map(drop)
}

fn sync(path: &Path) -> std::io::Result<()> {
    std::fs::File::open(path)?.sync_all()
}

fn sync_parent(path: &Path) -> std::io::Result<()> {
    match path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        Some(parent) => sync(parent),
        None => sync(Path::new(".")),
    }
}

/// A snapshot of an existing store before `version` (its first pending migration) is
/// applied: `<store>.pre-<version>` beside it. The newest two are kept, older ones
/// deleted.
pub(super) async fn before_migrating(pool: &sqlx::SqlitePool, store: &Path, version: i64) -> Result<PathBuf, Refused> {
    let to = with_suffix(store, &format!(".pre-{version}"));
    let snapshot = backup(pool, &to, true).await?;
    tracing::info!(path = %snapshot.path.display(), orders = snapshot.orders, "took a snapshot of the store before migrating it");
    let prefix = format!("{}.pre-", file_name(store));
    let folder = store.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut taken: Vec<(i64, PathBuf)> = std::fs::read_dir(folder)
        .map_err(|err| refused(folder.display(), err))?
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let version = path.file_name()?.to_str()?.strip_prefix(&prefix)?.parse().ok()?;
            Some((version, path))
        })
        .collect();
    taken.sort();
    for (_, old) in taken.iter().rev().skip(2) {
        let _ = std::fs::remove_file(old);
    }
    Ok(snapshot.path)
}
