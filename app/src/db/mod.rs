//! The database: one handle ([`Db`]) per store, migrations embedded in the binary.
//!
//! Two engines serve the same store: SQLite (the embedded default, `sqlite://…`) and
//! PostgreSQL (`postgres://…`, for several servers over one database). Services talk
//! to the handle and to [`sql`], never to an engine: how each engine's database is
//! opened, begins a write and what its errors mean live in `sqlite` and `postgres`;
//! the store's SQL, one module per resource, in `sql`, written once for both (each
//! query compiled for each engine by [`on_pool!`] and [`on_conn!`], with a branch
//! where the engines' SQL differs). Around them, this module orders the store's
//! writers (`queue`), keeps the generation the read caches compare and tells whether
//! writes work (`health`).

pub mod backup;
mod batch;
pub(crate) mod cache;
pub mod copy;
mod engine;
mod health;
pub(crate) mod outbox;
pub mod paging;
pub(crate) mod postgres;
mod queue;
mod schema;
pub(crate) mod sql;
pub(crate) mod sqlite;
pub mod testing;

pub use engine::{Conn, Engine, Failure, Pool, Tx};
pub(crate) use engine::{on_conn, on_pool};
pub use health::PROBE_EVERY;
pub use queue::Work;
pub use sqlite::sqlite_file;

use cache::Caches;

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::{AppError, AppResult};

/// What an acknowledged write survives (`--durability`). Either way a crash of the
/// process loses nothing acknowledged and the database's integrity survives a power
/// cut; they differ in whether a power cut (or an OS crash) may lose the last
/// acknowledged writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Durability {
    /// Every commit reaches the disk before it is acknowledged (SQLite's
    /// `synchronous=FULL`): a power cut loses nothing acknowledged.
    #[default]
    Full,
    /// Commits reach the disk at the next checkpoint (`synchronous=NORMAL` in WAL
    /// mode): a power cut may lose the last acknowledged writes.
    Normal,
}

/// How a store is opened.
#[derive(Clone, Copy, Debug)]
pub struct Opening {
    pub durability: Durability,
    /// Before an existing SQLite store is migrated, a snapshot of it is written beside
    /// it (`<store>.pre-<migration>`; the newest two are kept).
    pub snapshot_before_migrating: bool,
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
    /// What write transactions run on: the same pool on PostgreSQL; on SQLite, one
    /// connection of the writers' own (`sqlite::Pools`).
    write_pool: Pool,
    /// Which of the pool's connections a storage fault has made suspect (SQLite's).
    reopen: sqlite::Reopen,
    /// Tells `server restore` that the store's file is open (SQLite's).
    _in_use: sqlite::InUse,
    generation: AtomicU64,
    queue: Mutex<Option<tokio::sync::mpsc::Sender<queue::Request>>>,
    caches: Caches,
    health: health::WriteHealth,
    /// The runtime that opened the store, for its background tasks: on SQLite the write
    /// queue runs on a runtime of its own (`queue`), which ends with the queue.
    runtime: tokio::runtime::Handle,
}

impl Db {
    /// Opens (creating if needed) the database at `url` with the default
    /// [`Durability`] and applies any pending migration.
    pub async fn connect(url: &str) -> Result<Db, sqlx::Error> {
        Db::connect_with(url, Durability::default()).await
    }

    /// Opens the database at `url` (a SQLite file, created if needed, or a PostgreSQL
    /// database), its commits kept as `durability` says, and applies any pending
    /// migration.
    pub async fn connect_with(url: &str, durability: Durability) -> Result<Db, sqlx::Error> {
        Db::open(url, Opening { durability, snapshot_before_migrating: true }).await
    }

    /// Opens the database at `url` as `opening` says, and applies any pending migration
    /// (on an existing SQLite store, after a snapshot of it, when asked).
    pub async fn open(url: &str, opening: Opening) -> Result<Db, sqlx::Error> {
        let durability = opening.durability;
        let (pool, write_pool, reopen, in_use) = match Engine::of_url(url)? {
            Engine::Sqlite => {
                let (sqlite::Pools { read: pool, write }, reopen, in_use) = sqlite::connect(url, durability).await?;
                if opening.snapshot_before_migrating
                    && let Some(version) = sqlite::first_pending(&pool).await?
                {
                    let store = sqlite::sqlite_file(url)?;
                    backup::before_migrating(&pool, &store, version).await.map_err(|err| {
                        sqlx::Error::InvalidArgument(format!(
                            "before applying migration {version}, a snapshot of the store could not be taken, so \
                             nothing was migrated: {err} (free some space, or start with \
                             --snapshot-before-migrating=false to migrate without one)"
                        ))
                    })?;
                }
                sqlite::migrate(&pool).await?;
                (Pool::Sqlite(pool), Pool::Sqlite(write), reopen, in_use)
            }
            Engine::Postgres => {
                let pool = Pool::Postgres(postgres::connect(url, durability).await?);
                (pool.clone(), pool, sqlite::Reopen::default(), sqlite::InUse::none())
            }
        };
        Ok(Db(Arc::new(Inner {
            pool,
            write_pool,
            reopen,
            _in_use: in_use,
            generation: AtomicU64::new(0),
            queue: Mutex::default(),
            caches: Caches::default(),
            health: health::WriteHealth::default(),
            runtime: tokio::runtime::Handle::current(),
        })))
    }

    /// The pool, for the engine's module (`sql`), tests and the operator's gauges.
    /// Writes go through [`Db::begin_write`] or [`Db::write`], so that none is missed
    /// by the caches.
    pub fn pool(&self) -> &Pool {
        &self.0.pool
    }

    /// The newest migration applied to the database.
    pub async fn newest_migration(&self) -> Result<i64, sqlx::Error> {
        on_pool!(self, |pool| sqlx::query_scalar("SELECT max(version) FROM _sqlx_migrations").fetch_one(pool).await)
    }

    /// The pool when the store is on SQLite (tools and tests that only work there).
    pub fn sqlite_pool(&self) -> Option<&sqlx::SqlitePool> {
        match self.pool() {
            Pool::Sqlite(pool) => Some(pool),
            Pool::Postgres(_) => None,
        }
    }

    /// The catalog's read caches (`cache`).
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

    /// Which engine the store is on.
    pub fn engine(&self) -> Engine {
        self.pool().engine()
    }

    /// One round trip to the database (for the readiness probe).
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        on_pool!(self, |pool| sqlx::query("SELECT 1").execute(pool).await.map(|_| ()))
    }

    /// Runs `work` while no other server of the store runs work given here (a
    /// PostgreSQL advisory lock held by one connection meanwhile; a SQLite store has
    /// one server): for what servers starting together must do once, such as loading
    /// the demo catalog into an empty store or creating its first admin key.
    pub async fn alone<T>(&self, work: impl std::future::Future<Output = AppResult<T>>) -> AppResult<T> {
        /// The connection holding the lock: closed rather than pooled unless the lock
        /// was released, so that work which panics or is dropped frees it too.
        struct Held(Option<sqlx::pool::PoolConnection<sqlx::Postgres>>);
        impl Drop for Held {
            fn drop(&mut self) {
                if let Some(conn) = self.0.take() {
                    drop(conn.detach());
                }
            }
        }
        let Pool::Postgres(pool) = self.pool() else { return work.await };
        let mut held = Held(Some(pool.acquire().await?));
        let conn = held.0.as_mut().expect("just acquired");
        sqlx::query("SELECT pg_advisory_lock($1)").bind(postgres::START_LOCK).execute(&mut **conn).await?;
        let done = work.await;
        let conn = held.0.as_mut().expect("still held");
        let unlock = sqlx::query("SELECT pg_advisory_unlock($1)").bind(postgres::START_LOCK);
        if unlock.execute(&mut **conn).await.is_ok() {
            // Released: back to the pool.
            held.0.take();
        }
        done
    }

    /// Whether [`Db::close`] has been called.
    pub fn is_closed(&self) -> bool {
        self.pool().is_closed()
    }

    /// Closes the pools: the writer and the catalog watcher end with them.
    pub async fn close(&self) {
        self.0.write_pool.close().await;
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
            match sql::catalog_version(&self).await {
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
        // As the request's (if any): a failed commit's line names it.
        let committing = tokio::spawn(crate::request_id::carried(async move {
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
        }));
        committing.await.map_err(|e| sqlx::Error::Protocol(format!("the commit's task failed: {e}")))?
    }
}

impl Deref for WriteTx {
    type Target = Conn;
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
    /// to it (see `queue`). It takes the write lock at once, so that a writer of
    /// another process waits for it instead of failing when a read lock cannot be
    /// upgraded. Every write goes through here or [`Db::write`], so none is missed by
    /// the read caches.
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
        // Its turn is waited for no longer than the lock itself: while another process
        // holds the lock, each writer before this one waits the whole busy timeout, and
        // a queue of them must not add up to a wait without end.
        let turn = tokio::time::timeout(engine::BUSY_TIMEOUT, self.turn()).await.map_err(|_| AppError::busy())??;
        let tx =
            engine::begin_write(&self.0.write_pool, &self.0.reopen).await.inspect_err(|err| self.note_failed(err))?;
        Ok(WriteTx { tx, db: self.clone(), moves_generation, turn })
    }
}
