//! The database: one handle ([`Db`]) per store, migrations embedded in the binary.
//!
//! Everything SQL lives under `services/`; this module opens the store, orders its
//! writers (`queue`) and keeps the generation the read caches compare. A second engine
//! plugs in here, behind the same handle (its row locks would make the queue
//! unnecessary).

mod health;
mod queue;

pub use health::PROBE_EVERY;
pub use queue::Work;

use crate::services::cache::Caches;

use std::ops::{Deref, DerefMut};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::error::AppResult;

pub type Pool = sqlx::SqlitePool;
pub type Tx = sqlx::Transaction<'static, sqlx::Sqlite>;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// How long a writer waits for SQLite's single write lock before giving up with 503.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Opens (creating if needed) the database at `url`, in WAL mode with foreign keys on,
/// and applies any pending migration.
async fn connect(url: &str) -> Result<Pool, sqlx::Error> {
    let options = SqliteConnectOptions::from_str(url)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // WAL + NORMAL: a commit survives a process crash; only an OS crash may lose
        // the last transactions. The usual trade for a web service.
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT);
    if let Some(parent) = options.get_filename().parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).map_err(|e| sqlx::Error::Configuration(e.into()))?;
    }
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        // A connection is an open file in this process: nothing can break it between
        // uses, so the ping sqlx sends before handing one out would be a wasted round
        // trip to the connection's thread on every query.
        .test_before_acquire(false)
        // A connection whose COMMIT failed (a full disk) may be left counted as inside
        // a transaction that SQLite already rolled back; every `BEGIN` on it would then
        // fail ("non-zero transaction depth") until the process restarts. Such a
        // connection is closed instead of reused, so writes work again as soon as the
        // fault ends.
        .before_acquire(|conn, _| Box::pin(async move { Ok(still_usable(conn).await) }))
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await?;
    MIGRATOR.run(&pool).await?;
    Ok(pool)
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

/// The store's data, as one handle: the pool, this process's queue of writers, the
/// generation of the data (which every committed write moves on, and so does
/// [`Db::watch_catalog`] when another process changed the catalog) and the read caches
/// that compare it. Every service function takes it; cloning it is one `Arc`.
///
/// Two handles over two files (tests open many in one process) share nothing.
#[derive(Clone)]
pub struct Db(Arc<Inner>);

struct Inner {
    pool: Pool,
    generation: AtomicU64,
    queue: Mutex<Option<tokio::sync::mpsc::Sender<queue::Request>>>,
    caches: Caches,
    health: health::WriteHealth,
}

impl Db {
    /// Opens (creating if needed) the database at `url` and applies any pending
    /// migration (see [`connect`]).
    pub async fn connect(url: &str) -> Result<Db, sqlx::Error> {
        connect(url).await.map(Db::over)
    }

    /// A handle over a pool opened elsewhere.
    pub fn over(pool: Pool) -> Db {
        Db(Arc::new(Inner {
            pool,
            generation: AtomicU64::new(0),
            queue: Mutex::default(),
            caches: Caches::default(),
            health: health::WriteHealth::default(),
        }))
    }

    /// The SQLite pool, for reads (and for tests and the operator's gauges). Writes go
    /// through [`Db::begin_write`] or [`Db::write`], so that none is missed by the caches.
    pub fn pool(&self) -> &Pool {
        &self.0.pool
    }

    /// The catalog's read caches (`services::cache`).
    pub(crate) fn caches(&self) -> &Caches {
        &self.0.caches
    }

    /// Which generation of the data a read sees. Taken before the read: if a write
    /// commits while the read runs, the generation has moved on by the time the
    /// read's result is cached.
    pub fn generation(&self) -> u64 {
        self.0.generation.load(Ordering::Acquire)
    }

    fn bump(&self) {
        self.0.generation.fetch_add(1, Ordering::Release);
    }

    /// One round trip to the database (for the readiness probe).
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT 1").execute(self.pool()).await.map(|_| ())
    }

    /// Closes the pool: the writer and the catalog watcher end with it.
    pub async fn close(&self) {
        self.pool().close().await;
    }
}

/// How often [`Db::watch_catalog`] looks for catalog changes made outside this process.
pub const CATALOG_WATCH_INTERVAL: Duration = Duration::from_millis(100);

impl Db {
    /// Moves the data generation on whenever the catalog's version (a counter the
    /// database's own triggers move on with every change to categories, pets or stock,
    /// whoever makes it) is not what it was, checking every [`CATALOG_WATCH_INTERVAL`].
    /// This process's own writes move the generation at once, on commit; this is for
    /// the others (another process on the same file), whose changes the read caches
    /// then stop serving within that interval. The first read moves it on too: what
    /// was cached before it may predate a change made meanwhile. Ends when the pool is
    /// closed.
    pub async fn watch_catalog(self) {
        // The version last read; `None` before the first read, and after a failed one
        // (what changed meanwhile is unknown).
        let mut seen: Option<i64> = None;
        let mut warned = false;
        let mut tick = tokio::time::interval(CATALOG_WATCH_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            match sqlx::query_scalar::<_, i64>("SELECT version FROM catalog_version").fetch_one(self.pool()).await {
                Ok(version) => {
                    if seen != Some(version) {
                        self.bump();
                    }
                    seen = Some(version);
                    warned = false;
                }
                Err(sqlx::Error::PoolClosed) => return,
                // Unknown whether something changed: assume it did (and again once a read
                // succeeds).
                Err(err) => {
                    if !warned {
                        tracing::warn!(error = %err, "reading the catalog's version failed; retrying every 100 ms");
                        warned = true;
                    }
                    self.bump();
                    seen = None;
                }
            }
        }
    }
}

/// A write transaction. It reads and writes like the connection it runs on; dropping
/// it without `commit` rolls back.
pub struct WriteTx {
    tx: Tx,
    db: Db,
    /// Whether its commit moves the data generation on (all but `begin_write_outside_catalog`'s).
    moves_generation: bool,
    // Declared after `tx`, so dropped after it: the queue's next writer begins only
    // once this transaction has ended.
    turn: queue::Turn,
}

impl WriteTx {
    /// Commits, then moves the data to a new generation (after, so that a read which
    /// sees the new generation also sees the committed rows). Both run in a task of
    /// their own: once `COMMIT` is sent it takes effect even if the caller is dropped (a
    /// timeout, a client gone), and the generation must then move on all the same.
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        let WriteTx { tx, db, moves_generation, turn } = self;
        let committing = tokio::spawn(async move {
            let committed = tx.commit().await;
            // Also after a failed COMMIT: whether it took effect is unknown.
            if moves_generation {
                db.bump();
            }
            match &committed {
                Ok(()) => db.note_committed(),
                Err(err) => db.note_failed(err),
            }
            drop(turn);
            committed
        });
        committing.await.map_err(|e| sqlx::Error::Protocol(format!("the commit's task failed: {e}")))?
    }
}

impl Deref for WriteTx {
    type Target = sqlx::SqliteConnection;
    fn deref(&self) -> &Self::Target {
        &self.tx
    }
}

impl DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.tx
    }
}

impl Db {
    /// Starts a write transaction of its own once this process's queue of writers gets
    /// to it (see `queue`). It takes SQLite's write lock at once (`BEGIN IMMEDIATE`), so
    /// that a writer of another process waits in the busy handler instead of failing
    /// with "database is locked" when a read lock cannot be upgraded. Every write goes
    /// through here or [`Db::write`], so none is missed by the read caches.
    ///
    /// Do not start a write while holding one: the second waits for the first's turn.
    pub async fn begin_write(&self) -> AppResult<WriteTx> {
        self.begin(true).await
    }

    /// As [`Db::begin_write`], for a write that changes nothing a read cache holds (the
    /// rate-limit counters, saved every second; retention): its commit leaves the data
    /// generation, and so every cached read, as it was. A catalog change made through it
    /// by mistake would still be seen within [`CATALOG_WATCH_INTERVAL`], by
    /// [`Db::watch_catalog`].
    pub async fn begin_write_outside_catalog(&self) -> AppResult<WriteTx> {
        self.begin(false).await
    }

    async fn begin(&self, moves_generation: bool) -> AppResult<WriteTx> {
        let turn = self.turn().await?;
        let tx = self.pool().begin_with("BEGIN IMMEDIATE").await.inspect_err(|err| self.note_failed(err))?;
        Ok(WriteTx { tx, db: self.clone(), moves_generation, turn })
    }
}
