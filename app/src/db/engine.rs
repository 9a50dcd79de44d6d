//! The two engines behind one set of types: the pool, a write transaction, what a
//! failure means, and the macros that compile one query for each engine.

use std::time::Duration;

use sqlx::error::BoxDynError;
use sqlx::{Database, Decode, Encode, Type};

use super::{postgres, sqlite};
use crate::error::{AppError, ErrorCode};
use crate::model::{PetStatus, Plan, Role};

/// Which engine a store is on, from its URL's scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    pub fn of_url(url: &str) -> Result<Engine, sqlx::Error> {
        if url.starts_with("sqlite:") {
            Ok(Engine::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Engine::Postgres)
        } else {
            Err(sqlx::Error::Configuration(
                format!("DATABASE_URL must start with sqlite:// or postgres://, not {:?}", scheme(url)).into(),
            ))
        }
    }
}

/// The URL's scheme only: the rest may hold a password.
fn scheme(url: &str) -> &str {
    url.split_once(':').map_or("", |(scheme, _)| scheme)
}

/// The store's connections.
#[derive(Clone, Debug)]
pub enum Pool {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

impl Pool {
    pub fn engine(&self) -> Engine {
        match self {
            Pool::Sqlite(_) => Engine::Sqlite,
            Pool::Postgres(_) => Engine::Postgres,
        }
    }

    pub fn size(&self) -> u32 {
        match self {
            Pool::Sqlite(pool) => pool.size(),
            Pool::Postgres(pool) => pool.size(),
        }
    }

    pub fn num_idle(&self) -> usize {
        match self {
            Pool::Sqlite(pool) => pool.num_idle(),
            Pool::Postgres(pool) => pool.num_idle(),
        }
    }

    pub fn max_connections(&self) -> u32 {
        match self {
            Pool::Sqlite(pool) => pool.options().get_max_connections(),
            Pool::Postgres(pool) => pool.options().get_max_connections(),
        }
    }

    pub fn is_closed(&self) -> bool {
        match self {
            Pool::Sqlite(pool) => pool.is_closed(),
            Pool::Postgres(pool) => pool.is_closed(),
        }
    }

    pub async fn close(&self) {
        match self {
            Pool::Sqlite(pool) => pool.close().await,
            Pool::Postgres(pool) => pool.close().await,
        }
    }
}

/// A write transaction's connection (its own, or one the queue shares).
pub enum Tx {
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>),
}

/// What the store's SQL runs on inside a write.
pub type Conn = Tx;

impl Tx {
    pub fn engine(&self) -> Engine {
        match self {
            Tx::Sqlite(_) => Engine::Sqlite,
            Tx::Postgres(_) => Engine::Postgres,
        }
    }

    pub async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Tx::Sqlite(tx) => tx.commit().await,
            Tx::Postgres(tx) => tx.commit().await,
        }
    }

    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        match self {
            Tx::Sqlite(tx) => tx.rollback().await,
            Tx::Postgres(tx) => tx.rollback().await,
        }
    }
}

/// Runs `$body` with `$pool` bound to the pool of the store `$db` (a [`super::Db`]),
/// compiled once for each engine: the body's query is one text, bound and decoded by
/// each engine's driver. (Exported for tests that read the store's rows on either
/// engine.)
#[macro_export]
macro_rules! on_pool {
    ($db:expr, |$pool:ident| $body:expr) => {
        match $db.pool() {
            $crate::db::Pool::Sqlite($pool) => $body,
            $crate::db::Pool::Postgres($pool) => $body,
        }
    };
}

/// As [`on_pool!`], with `$conn` bound to a write transaction's connection.
#[macro_export]
macro_rules! on_conn {
    ($tx:expr, |$conn:ident| $body:expr) => {
        match $tx {
            $crate::db::Tx::Sqlite(tx) => {
                let $conn = &mut **tx;
                $body
            }
            $crate::db::Tx::Postgres(tx) => {
                let $conn = &mut **tx;
                $body
            }
        }
    };
}

pub(crate) use crate::{on_conn, on_pool};

/// How long a writer waits for the store's write lock (SQLite's file lock, or the
/// store's lock on PostgreSQL) before giving up with 503.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A write transaction, holding the store's write lock from its start (see each engine's
/// `begin_write`).
pub(super) async fn begin_write(pool: &Pool, reopen: &sqlite::Reopen) -> Result<Tx, sqlx::Error> {
    match pool {
        Pool::Sqlite(pool) => Ok(Tx::Sqlite(sqlite::begin_write(pool, reopen).await?)),
        Pool::Postgres(pool) => Ok(Tx::Postgres(postgres::begin_write(pool).await?)),
    }
}

/// A savepoint inside a shared write transaction. When the last write's savepoint is
/// still open (`release_last`: it succeeded, and its `RELEASE` was left for now), it is
/// released in the same round trip.
pub(super) async fn savepoint(tx: &mut Tx, release_last: bool) -> Result<(), sqlx::Error> {
    let open = if release_last { "RELEASE queued_write; SAVEPOINT queued_write" } else { "SAVEPOINT queued_write" };
    on_conn!(tx, |conn| sqlx::raw_sql(open).execute(conn).await.map(|_| ()))
}

/// Undoes the savepoint's statements and closes it.
pub(super) async fn undo_savepoint(tx: &mut Tx) -> Result<(), sqlx::Error> {
    let undo = "ROLLBACK TO queued_write; RELEASE queued_write";
    on_conn!(tx, |conn| sqlx::raw_sql(undo).execute(conn).await.map(|_| ()))
}

/// What a database error means for the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Another writer holds the lock past the busy timeout (or, on PostgreSQL, the
    /// transaction lost a conflict): nothing was written, and a retry may succeed.
    Busy,
    /// The disk (or the database's size limit) is full.
    Full,
    /// The storage under the database failed otherwise (read-only, an I/O error, a file
    /// that cannot be opened), or the database server cannot be reached.
    Storage,
}

impl Failure {
    /// Its name in the metrics and the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Failure::Busy => "busy",
            Failure::Full => "full",
            Failure::Storage => "storage",
        }
    }

    pub fn of(err: &sqlx::Error) -> Option<Failure> {
        sqlite::failure(err).or_else(|| postgres::failure(err))
    }
}

/// The API's enums are stored as their names (TEXT on both engines), never as an
/// engine's own enum type.
macro_rules! stored_as_text {
    ($($name:ty),*) => {$(
        impl<DB: Database> Type<DB> for $name
        where
            str: Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <str as Type<DB>>::type_info()
            }

            fn compatible(ty: &DB::TypeInfo) -> bool {
                <str as Type<DB>>::compatible(ty)
            }
        }

        impl<'q, DB: Database> Encode<'q, DB> for $name
        where
            &'static str: Encode<'q, DB>,
        {
            fn encode_by_ref(&self, buf: &mut DB::ArgumentBuffer) -> Result<sqlx::encode::IsNull, BoxDynError> {
                <&'static str as Encode<'q, DB>>::encode(self.as_str(), buf)
            }
        }

        impl<'r, DB: Database> Decode<'r, DB> for $name
        where
            &'r str: Decode<'r, DB>,
        {
            fn decode(value: DB::ValueRef<'r>) -> Result<Self, BoxDynError> {
                let text = <&'r str as Decode<'r, DB>>::decode(value)?;
                text.parse().map_err(|_| format!("{text:?} is not a {}", stringify!($name)).into())
            }
        }
    )*};
}

stored_as_text!(PetStatus, Role, Plan);

/// A database error as the client is told it: where the store lives, its failures are
/// known (the error type below knows nothing of the database).
impl From<sqlx::Error> for AppError {
    fn from(err: sqlx::Error) -> AppError {
        // A fault is counted and logged once when it starts and once when it ends
        // (`db::health`), not once a request.
        let error = match Failure::of(&err) {
            // A writer that waited its whole busy timeout (another process holds the
            // lock, or the store is overloaded): the client may retry; nothing was written.
            Some(Failure::Busy) => AppError::busy(),
            // Nothing was written (the transaction is rolled back); writes work again once
            // there is space, reads meanwhile.
            Some(Failure::Full) => {
                AppError::new(ErrorCode::InsufficientStorage, "the store's disk is full; nothing was changed")
            }
            // A read-only volume or an I/O error: likewise, until the volume works again.
            Some(Failure::Storage) => AppError::unavailable("the store's storage is failing; nothing was changed"),
            None if matches!(err, sqlx::Error::PoolTimedOut) => AppError::busy(),
            None => return AppError::internal("database error", err),
        };
        AppError { cause: Some(std::sync::Arc::new(err)), ..error }
    }
}
