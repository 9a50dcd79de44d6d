//! The SQLite engine: how the store's file is opened, how a write begins, and what
//! SQLite's result codes mean.

use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::engine::BUSY_TIMEOUT;
use super::{Durability, Failure};

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

type Pool = sqlx::SqlitePool;
type Tx = sqlx::Transaction<'static, sqlx::Sqlite>;

pub(in crate::db) static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// Which pooled connections to replace. SQLite opens a file it may not write (a
/// read-only volume, a file made immutable) read-only, silently, and such a connection
/// stays so: one the pool opened during a fault would refuse every write after it. So
/// when a write fails for a storage fault, every connection opened until then is
/// closed at its next acquire instead of reused, and the pool opens new ones.
#[derive(Clone, Default)]
pub struct Reopen(Arc<Mutex<Option<Instant>>>);

impl Reopen {
    /// Connections opened before now are replaced at their next acquire.
    pub fn all_opened_until_now(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
    }

    /// Whether a connection opened `age` ago may be used again.
    fn keeps(&self, age: Duration) -> bool {
        let until = *self.0.lock().unwrap_or_else(|p| p.into_inner());
        until.is_none_or(|until| Instant::now().checked_sub(age).is_none_or(|opened| opened > until))
    }
}

/// The store's connections: the readers' pool, and the writers' one connection.
pub struct Pools {
    pub read: Pool,
    /// Every write transaction of this process runs on this one connection (the queue
    /// orders them anyway). Its page cache stays warm: a connection that did not make
    /// the last change reads every page it touches again from the file, and a pool
    /// hands each write the connection idle longest. (It is a pool of one so that a
    /// connection a fault made suspect is replaced as the readers' are.)
    pub write: Pool,
}

/// Opens (creating if needed) the database at `url`, in WAL mode with foreign keys on,
/// refusing one a newer release has migrated ([`migrate`] applies what it lacks).
/// `Reopen` tells the pools which connections to replace.
pub async fn connect(url: &str, durability: Durability) -> Result<(Pools, Reopen, InUse), sqlx::Error> {
    let options = SqliteConnectOptions::from_str(url)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // In WAL mode either keeps the file intact through a power cut; FULL also syncs
        // the log at every commit, so nothing acknowledged is lost with it.
        .synchronous(match durability {
            Durability::Full => SqliteSynchronous::Full,
            Durability::Normal => SqliteSynchronous::Normal,
        })
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT);
    if let Some(parent) = options.get_filename().parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).map_err(|e| sqlx::Error::Configuration(e.into()))?;
    }
    create_private(options.get_filename()).map_err(|e| sqlx::Error::Configuration(e.into()))?;
    let in_use = InUse::take_shared(options.get_filename()).map_err(|e| sqlx::Error::Configuration(e.into()))?;
    let reopen = Reopen::default();
    let pool_of = |connections: u32| {
        let replaced = reopen.clone();
        SqlitePoolOptions::new()
            .max_connections(connections)
            // A connection is an open file in this process: nothing can break it between
            // uses, so the ping sqlx sends before handing one out would be a wasted round
            // trip to the connection's thread on every query.
            .test_before_acquire(false)
            // A connection whose COMMIT failed (a full disk) may be left counted as inside
            // a transaction that SQLite already rolled back; every `BEGIN` on it would then
            // fail ("non-zero transaction depth") until the process restarts. Such a
            // connection is closed instead of reused, so writes work again as soon as the
            // fault ends.
            .before_acquire(move |conn, opened| {
                let keep = replaced.keeps(opened.age);
                Box::pin(async move { Ok(keep && still_usable(conn).await) })
            })
            .acquire_timeout(Duration::from_secs(10))
    };
    let read = pool_of(8).connect_with(options.clone()).await?;
    if let Err(refused) = super::schema::refuse_unknown(&applied(&read).await?, &MIGRATOR) {
        read.close().await;
        return Err(refused);
    }
    // Opened on first use: a command that only reads opens no second connection.
    let write = pool_of(1).connect_lazy_with(options);
    Ok((Pools { read, write }, reopen, in_use))
}

/// The first migration an existing store still lacks (`None` for a new store, which
/// has nothing to lose, or one that is up to date).
pub async fn first_pending(pool: &Pool) -> Result<Option<i64>, sqlx::Error> {
    let applied = applied(pool).await?;
    if applied.is_empty() {
        return Ok(None);
    }
    Ok(MIGRATOR.iter().map(|m| m.version).filter(|version| !applied.iter().any(|(v, _)| v == version)).min())
}

/// Applies the migrations the store lacks.
pub async fn migrate(pool: &Pool) -> Result<(), sqlx::Error> {
    MIGRATOR.run(pool).await?;
    Ok(())
}

/// The migrations applied to the database (none for a new one), read without writing.
async fn applied(pool: &Pool) -> Result<Vec<(i64, String)>, sqlx::Error> {
    let migrated: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations')",
    )
    .fetch_one(pool)
    .await?;
    if !migrated {
        return Ok(Vec::new());
    }
    sqlx::query_as("SELECT version, description FROM _sqlx_migrations").fetch_all(pool).await
}

/// The file of the SQLite store at `url` (`sqlite://data/petstore.db?mode=rwc` →
/// `data/petstore.db`).
pub fn sqlite_file(url: &str) -> Result<std::path::PathBuf, sqlx::Error> {
    Ok(SqliteConnectOptions::from_str(url)?.get_filename().to_path_buf())
}

/// An advisory lock on the store's file (flock, which SQLite's own locks do not touch):
/// shared while a process has the store open, exclusive while `server restore` replaces
/// it. Released when dropped, or when the process ends however it ends.
#[derive(Debug)]
pub struct InUse(#[allow(dead_code, reason = "held for its lock")] Option<std::fs::File>);

impl InUse {
    /// No lock (a PostgreSQL store's).
    pub fn none() -> InUse {
        InUse(None)
    }

    /// Shared with every other process that has the store open; refused while a restore
    /// holds it alone. An in-memory database has no file to lock.
    fn take_shared(path: &std::path::Path) -> std::io::Result<InUse> {
        if path.as_os_str().is_empty() || path == std::path::Path::new(":memory:") {
            return Ok(InUse(None));
        }
        let file = std::fs::File::open(path)?;
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockShared) {
            Ok(()) => Ok(InUse(Some(file))),
            Err(rustix::io::Errno::WOULDBLOCK) => Err(std::io::Error::other(format!(
                "{} is being restored (`server restore` holds it); try again when it ends",
                path.display()
            ))),
            // A file system without flock (some network ones): the store works as
            // before; only `server restore` cannot tell that it is open.
            Err(_) => Ok(InUse(None)),
        }
    }

    /// The store at `path` alone, or an error saying that a process has it open. A
    /// missing file is nobody's.
    pub fn take_alone(path: &std::path::Path) -> std::io::Result<InUse> {
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(InUse(None)),
            Err(err) => return Err(err),
        };
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(InUse(Some(file))),
            Err(rustix::io::Errno::WOULDBLOCK) => Err(std::io::Error::other(format!(
                "{} is open in another process (a server, or a `server` command): stop it first",
                path.display()
            ))),
            Err(err) => Err(std::io::Error::other(format!(
                "cannot tell whether {} is open in another process (its file system refuses flock: {err}); \
                 nothing was replaced",
                path.display()
            ))),
        }
    }
}

/// Creates the store's file, when it is missing, readable and writable by its owner
/// alone: it holds the webhooks' signing secrets, the keys' hashes and every order.
/// (SQLite gives its `-wal` and `-shm` files the database's permissions.) A file that
/// exists is left as it is; so is an in-memory database.
fn create_private(path: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    if path.as_os_str().is_empty() || path == std::path::Path::new(":memory:") {
        return Ok(());
    }
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(_) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(err) => Err(err),
    }
}

/// Whether a pooled connection is outside any transaction. Checked without a round
/// trip in the usual case; otherwise after one, which lets a rollback still queued on
/// the connection (a transaction dropped uncommitted) run first.
async fn still_usable(conn: &mut sqlx::SqliteConnection) -> bool {
    use sqlx::Connection;
    if !conn.is_in_transaction() {
        return true;
    }
    let answered = sqlx::query("SELECT 1").execute(&mut *conn).await.is_ok();
    answered && !conn.is_in_transaction()
}

/// A write transaction that takes SQLite's write lock at once (`BEGIN IMMEDIATE`), so
/// that a writer of another process waits in the busy handler instead of failing with
/// "database is locked" when a read lock cannot be upgraded. A connection found
/// read-only (opened during a storage fault, see [`Reopen`]) is not tried again: the
/// write begins once more on a connection opened now, which can write if the storage
/// works again.
pub async fn begin_write(pool: &Pool, reopen: &Reopen) -> Result<Tx, sqlx::Error> {
    match pool.begin_with("BEGIN IMMEDIATE").await {
        Err(err) if is_read_only(&err) => {
            reopen.all_opened_until_now();
            pool.begin_with("BEGIN IMMEDIATE").await
        }
        begun => begun,
    }
}

/// `SQLITE_READONLY`: the connection cannot write the file.
fn is_read_only(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if primary_code(db.as_ref()) == Some(8))
}

/// What a SQLite error means for the client, by its result code
/// (https://www.sqlite.org/rescode.html); `None` for another engine's errors.
pub(super) fn failure(err: &sqlx::Error) -> Option<Failure> {
    match err {
        sqlx::Error::Database(db) => match primary_code(db.try_downcast_ref::<sqlx::sqlite::SqliteError>()?)? {
            // Another connection holds the lock (`SQLITE_BUSY`, `SQLITE_LOCKED`).
            5 | 6 => Some(Failure::Busy),
            // `SQLITE_FULL`.
            13 => Some(Failure::Full),
            // Read-only, an I/O error, or the file cannot be opened.
            8 | 10 | 14 => Some(Failure::Storage),
            _ => None,
        },
        sqlx::Error::Io(_) => Some(Failure::Storage),
        _ => None,
    }
}

/// The primary result code of a SQLite error (sqlx reports the extended one, such as
/// 517 for `SQLITE_BUSY_SNAPSHOT`, whose low byte is the primary).
fn primary_code(err: &dyn sqlx::error::DatabaseError) -> Option<i32> {
    err.code()?.parse::<i32>().ok().map(|code| code & 0xff)
}

#[cfg(test)]
mod tests {
    use crate::db::{Db, Tx, on_conn};

    async fn count(tx: &mut Tx) -> Result<i64, sqlx::Error> {
        on_conn!(tx, |c| sqlx::query_scalar("SELECT COUNT(*) FROM temp.written_here").fetch_one(c).await)
    }

    /// A temporary table lives on the connection that made it: each write finds the
    /// one the first made, whether it ran in the queue or in a transaction of its own,
    /// with reads on the readers' pool in between.
    #[tokio::test]
    async fn every_write_runs_on_the_writers_own_connection() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::connect(&format!("sqlite://{}", dir.path().join("store.db").display())).await.unwrap();
        let mut tx = db.begin_write().await.unwrap();
        on_conn!(&mut *tx, |c| sqlx::raw_sql(
            "CREATE TEMP TABLE written_here (n); INSERT INTO written_here VALUES (1)"
        )
        .execute(c)
        .await
        .map(|_| ()))
        .unwrap();
        tx.commit().await.unwrap();
        for n in 2..6_i64 {
            // Reads on the readers' pool meanwhile, some at once.
            let reads = (0..4).map(|_| db.ping());
            futures::future::try_join_all(reads).await.unwrap();
            let seen = if n % 2 == 0 {
                db.write(move |conn| {
                    Box::pin(async move {
                        on_conn!(conn, |c| sqlx::query("INSERT INTO temp.written_here VALUES ($1)")
                            .bind(n)
                            .execute(c)
                            .await
                            .map(|_| ()))?;
                        Ok(count(conn).await?)
                    })
                })
                .await
                .unwrap()
            } else {
                let mut tx = db.begin_write().await.unwrap();
                on_conn!(&mut *tx, |c| sqlx::query("INSERT INTO temp.written_here VALUES ($1)")
                    .bind(n)
                    .execute(c)
                    .await
                    .map(|_| ()))
                .unwrap();
                let seen = count(&mut tx).await.unwrap();
                tx.commit().await.unwrap();
                seen
            };
            assert_eq!(seen, n, "write {n} ran where the first made its table");
        }
    }
}
