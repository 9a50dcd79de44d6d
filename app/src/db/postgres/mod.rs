//! The PostgreSQL engine: how the store's database is opened, how a write begins, and
//! what PostgreSQL's error codes mean. Several servers may share one database.

use std::str::FromStr;
use std::time::Duration;

use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use super::engine::BUSY_TIMEOUT;
use super::{Durability, Failure};

type Pool = sqlx::PgPool;
type Tx = sqlx::Transaction<'static, sqlx::Postgres>;

/// The migrations, applied under the store's own advisory lock ([`migrate`]) rather
/// than sqlx's, so that the wait for it is not cut short by the migration's lock timeout.
static MIGRATOR: sqlx::migrate::Migrator =
    sqlx::migrate::Migrator { locking: false, ..sqlx::migrate!("./migrations/postgres") };

/// The advisory lock under which one server applies pending migrations while others
/// starting at the same time wait ("migr").
const MIGRATE_LOCK: i64 = 0x6d69_6772;

/// How often a server starting while another migrates asks for the migration lock.
const MIGRATE_LOCK_POLL: Duration = Duration::from_millis(100);

/// How long a migration's statement waits for a table's lock before the migration
/// fails (and the server does not start). Without it, a migration queued behind a
/// long transaction holds every request queued behind its own lock meanwhile: on a
/// busy store, an outage.
pub const MIGRATION_LOCK_TIMEOUT: &str = "10s";

/// The advisory lock every write transaction of the store takes (any number; this one
/// spells "pets" in ASCII).
const WRITE_LOCK: i64 = 0x7065_7473;

/// The advisory lock of [`super::Db::alone`] ("once").
pub(super) const START_LOCK: i64 = 0x6f6e_6365;

/// Connects to the database at `url` and applies any pending migration (sqlx holds
/// an advisory lock meanwhile, so servers starting together migrate once).
pub async fn connect(url: &str, durability: Durability) -> Result<Pool, sqlx::Error> {
    let options = PgConnectOptions::from_str(url)?.options([
        (
            "synchronous_commit",
            match durability {
                // The server's default: a commit is acknowledged once it is on disk.
                Durability::Full => "on",
                // Acknowledged before: a crash of the database server may lose the last
                // commits (never its consistency).
                Durability::Normal => "off",
            },
        ),
        // A server that stalls inside a transaction (paused, partitioned) must not hold
        // the store's write lock for every other server: PostgreSQL ends it. No write
        // of the store idles that long (requests end at 30 s, and none waits inside
        // its transaction for anything but the database).
        ("idle_in_transaction_session_timeout", "15s"),
    ]);
    let pool = pool_options(16).connect_with(options.clone()).await?;
    if let Err(refused) = super::schema::refuse_unknown(&applied(&pool).await?, &MIGRATOR) {
        pool.close().await;
        return Err(refused);
    }
    migrate(&options).await?;
    Ok(pool)
}

/// Applies the pending migrations on a session of their own: it waits as long as it
/// takes for the migration lock (another server migrating; asked for every 100 ms), then gives each statement
/// [`MIGRATION_LOCK_TIMEOUT`] to get its tables' locks. Closing the session frees the
/// lock, also when a migration fails.
async fn migrate(options: &PgConnectOptions) -> Result<(), sqlx::Error> {
    let mut conn = sqlx::PgConnection::connect_with(options).await?;
    let migrated = async {
        // Asked again and again rather than waited for in one statement: a statement
        // that waits holds a snapshot, and a migration building an index CONCURRENTLY
        // waits for every older snapshot to end, the waiting servers' too (a deadlock
        // PostgreSQL would end by failing one of them).
        while !sqlx::query_scalar::<_, bool>("SELECT pg_try_advisory_lock($1)")
            .bind(MIGRATE_LOCK)
            .fetch_one(&mut conn)
            .await?
        {
            tokio::time::sleep(MIGRATE_LOCK_POLL).await;
        }
        sqlx::query(sqlx::AssertSqlSafe(format!("SET lock_timeout = '{MIGRATION_LOCK_TIMEOUT}'")))
            .execute(&mut conn)
            .await?;
        MIGRATOR.run(&mut conn).await.map_err(sqlx::Error::from)
    }
    .await;
    let _ = conn.close().await;
    migrated
}

/// The migrations applied to the database (none for a new one), read without writing.
async fn applied(pool: &Pool) -> Result<Vec<(i64, String)>, sqlx::Error> {
    let migrated: bool =
        sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL").fetch_one(pool).await?;
    if !migrated {
        return Ok(Vec::new());
    }
    sqlx::query_as("SELECT version, description FROM _sqlx_migrations").fetch_all(pool).await
}

/// The connections that count requests against the shared rate limits (a few beside
/// `store`'s, to the same database): their commits do not wait for the write-ahead log
/// to reach the disk, so a crash of the database server may forget the last fraction
/// of a second of counting (as a SQLite server's crash forgets up to a second), and a
/// busy key's counting never waits for a disk flush.
pub fn counters_pool(store: &Pool) -> Pool {
    let options = (*store.connect_options()).clone().options([("synchronous_commit", "off")]);
    pool_options(4).connect_lazy_with(options)
}

/// What both pools share.
fn pool_options(connections: u32) -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(connections)
        // A request waits no longer for a connection than a writer for the lock: an
        // unreachable database is answered with 503 in seconds, not at the request's
        // timeout.
        .acquire_timeout(BUSY_TIMEOUT)
        // A connection the database server closed while it sat idle (a restart) is
        // found before use: one idle for over a second is pinged first. Not every one,
        // which would be a round trip per query under load (sqlx also pings each
        // connection as it comes back to the pool, so one broken in use is closed then).
        // (sqlx's own test, on by default, pings every time.)
        .test_before_acquire(false)
        .before_acquire(|connection, meta| {
            Box::pin(async move {
                if meta.idle_for > Duration::from_secs(1) {
                    connection.ping().await?;
                }
                Ok(true)
            })
        })
        .idle_timeout(Duration::from_secs(600))
}

/// A write transaction holding the store's write lock from its start, as a SQLite
/// writer holds the file's: the store's writes are serialized across every server, so
/// each sees all that committed before it and none oversells, whatever it reads first.
/// (The queue of each server batches its orders, so the lock is taken once per batch.)
/// A writer waits for the lock at most [`BUSY_TIMEOUT`], then gets 503.
pub async fn begin_write(pool: &Pool) -> Result<Tx, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let wait =
        format!("SET LOCAL lock_timeout = {}; SELECT pg_advisory_xact_lock({WRITE_LOCK})", BUSY_TIMEOUT.as_millis());
    sqlx::raw_sql(sqlx::AssertSqlSafe(wait)).execute(&mut *tx).await?;
    Ok(tx)
}

/// What a PostgreSQL error means for the client, by its SQLSTATE
/// (https://www.postgresql.org/docs/current/errcodes-appendix.html); `None` for another
/// engine's errors.
pub(super) fn failure(err: &sqlx::Error) -> Option<Failure> {
    match err {
        sqlx::Error::Database(db) => {
            let code = db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>()?.code();
            match code {
                // Serialization failure, deadlock, lock timeout, statement timeout, too
                // many connections.
                "40001" | "40P01" | "55P03" | "57014" | "53300" => Some(Failure::Busy),
                // Disk full.
                "53100" => Some(Failure::Full),
                // The server is shutting down or starting, a read-only standby, an I/O
                // error, or the connection broke.
                "57P01" | "57P02" | "57P03" | "25006" | "58030" => Some(Failure::Storage),
                code if code.starts_with("08") => Some(Failure::Storage),
                _ => None,
            }
        }
        // The connection to the database server broke (`Io` is SQLite's too: the same).
        sqlx::Error::Tls(_) => Some(Failure::Storage),
        _ => None,
    }
}
