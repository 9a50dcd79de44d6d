//! The database: one pool for the process, migrations embedded in the binary.
//!
//! Everything SQL lives under `services/`; this module only opens the store. Moving to
//! PostgreSQL later means another `connect` and the same service signatures.

use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::error::{AppError, AppResult};

pub type Pool = sqlx::SqlitePool;
pub type Tx = sqlx::Transaction<'static, sqlx::Sqlite>;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// How long a writer waits for SQLite's single write lock before giving up with 503.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Opens (creating if needed) the database at `url`, in WAL mode with foreign keys on,
/// and applies any pending migration.
pub async fn connect(url: &str) -> Result<Pool, sqlx::Error> {
    let options = SqliteConnectOptions::from_str(url)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // WAL + NORMAL: a commit survives a process crash; only an OS crash may lose
        // the last transactions. The usual trade for a web service.
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT);
    if let Some(parent) = options.get_filename().parent() {
        if !parent.as_os_str().is_empty() {
            std::fs::create_dir_all(parent).map_err(|e| sqlx::Error::Configuration(e.into()))?;
        }
    }
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await?;
    MIGRATOR.run(&pool).await?;
    Ok(pool)
}

/// Starts a write transaction that takes SQLite's write lock at once (`BEGIN IMMEDIATE`),
/// so two writers queue on the busy timeout instead of failing with "database is
/// locked" when a read lock cannot be upgraded.
pub async fn begin_write(pool: &Pool) -> AppResult<Tx> {
    pool.begin_with("BEGIN IMMEDIATE").await.map_err(AppError::from)
}

/// One round trip to the database (for the readiness probe).
pub async fn ping(pool: &Pool) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT 1").execute(pool).await.map(|_| ())
}
