//! Moving a store from SQLite to PostgreSQL (`server migrate-data`): every table
//! copied with its ids, the id sequences moved past every id SQLite ever handed out,
//! counters and bans included, then verified row count by row count.

use std::fmt::Write as _;

use sqlx::{Connection, QueryBuilder, Row};

use super::{Db, Pool};

/// Why a copy stopped (the target is left as it was).
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error("migrate-data copies from a sqlite:// store to a postgres:// one")]
    Engines,
    #[error(
        "the target database already holds data ({rows} rows in {table}): migrate-data copies into an empty \
         database only"
    )]
    NotEmpty { table: &'static str, rows: i64 },
    #[error("the copy does not match, nothing was kept:{0}")]
    Mismatch(String),
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

/// What one column holds, to carry it across.
#[derive(Clone, Copy)]
enum Kind {
    Int,
    OptInt,
    Text,
    OptText,
    Bytes,
    /// SQLite's 0 or 1, PostgreSQL's boolean.
    Bool,
}

use Kind::{Bool, Bytes, Int, OptInt, OptText, Text};

/// The store's tables in an order their foreign keys allow, with their columns and
/// the id column whose sequence moves on (PostgreSQL's `seq` of sessions is its own:
/// rows are copied in the order SQLite stored them, so it keeps their order).
const TABLES: &[(&str, &[(&str, Kind)], Option<&str>)] = &[
    ("categories", &[("id", Int), ("name", Text), ("name_key", Text), ("description", OptText)], Some("id")),
    (
        "pets",
        &[
            ("id", Int),
            ("name", Text),
            ("name_key", Text),
            ("category_id", Int),
            ("status", Text),
            ("description", OptText),
            ("price", OptInt),
            ("photo_hash", OptText),
        ],
        Some("id"),
    ),
    ("inventory", &[("pet_id", Int), ("quantity", Int)], None),
    ("pet_photos", &[("pet_id", Int), ("width", Int), ("hash", Text), ("bytes", Bytes)], None),
    (
        "api_keys",
        &[
            ("id", Int),
            ("prefix", Text),
            ("key_hash", Bytes),
            ("name", Text),
            ("role", Text),
            ("plan", Text),
            ("per_minute", Int),
            ("per_day", Int),
            ("created_at", Int),
            ("revoked_at", OptInt),
        ],
        Some("id"),
    ),
    (
        "sessions",
        &[
            ("token_hash", Bytes),
            ("key_id", Int),
            ("passkey_id", OptInt),
            ("opened_by", Text),
            ("created_at", Int),
            ("expires_at", Int),
        ],
        None,
    ),
    ("accounts", &[("id", Int), ("key_id", Int), ("user_handle", Bytes), ("created_at", Int)], Some("id")),
    (
        "passkeys",
        &[
            ("id", Int),
            ("account_id", Int),
            ("credential_id", Bytes),
            ("passkey", Text),
            ("name", Text),
            ("created_at", Int),
            ("last_used_at", OptInt),
        ],
        Some("id"),
    ),
    ("recovery_codes", &[("code_hash", Bytes), ("account_id", Int), ("used_at", OptInt), ("expires_at", OptInt)], None),
    (
        "rate_limit_usage",
        &[
            ("subject", Text),
            ("minute_start", Int),
            ("minute_count", Int),
            ("day_start", Int),
            ("day_count", Int),
            ("refusals", Int),
            ("refusals_until", Int),
            ("banned_until", Int),
        ],
        None,
    ),
    (
        "orders",
        &[
            ("id", Int),
            ("pet_id", Int),
            ("key_id", Int),
            ("quantity", Int),
            ("ship_date", OptText),
            ("complete", Bool),
            ("created_at", Int),
            ("cancelled_at", OptInt),
            ("unit_price", OptInt),
            ("total", OptInt),
        ],
        Some("id"),
    ),
    (
        "events",
        &[
            ("seq", Int),
            ("id", Text),
            ("type", Text),
            ("created_at", Int),
            ("data", Text),
            ("owner_key_id", OptInt),
            ("admin_only", Bool),
        ],
        Some("seq"),
    ),
    (
        "webhooks",
        &[
            ("id", Int),
            ("url", Text),
            ("events", Text),
            ("description", OptText),
            ("enabled", Bool),
            ("secret", Text),
            ("previous_secret", OptText),
            ("previous_until", OptInt),
            ("created_at", Int),
            ("failing_since", OptInt),
            ("disabled_reason", OptText),
        ],
        Some("id"),
    ),
    (
        "webhook_deliveries",
        &[
            ("id", Int),
            ("webhook_id", Int),
            ("event_seq", Int),
            ("attempt", Int),
            ("status", Text),
            ("created_at", Int),
            ("due_at", OptInt),
            ("claimed_until", OptInt),
            ("attempted_at", OptInt),
            ("response_status", OptInt),
            ("duration_ms", OptInt),
            ("error", OptText),
            ("response_body", OptText),
        ],
        Some("id"),
    ),
    (
        "idempotency_records",
        &[
            ("key_id", Int),
            ("idem_key", Text),
            ("request_hash", Bytes),
            ("status", Int),
            ("body", Text),
            ("created_at", Int),
        ],
        None,
    ),
];

/// The tables copied, each with the columns carried across (for a check of the copy).
pub fn tables() -> impl Iterator<Item = (&'static str, Vec<&'static str>)> {
    TABLES.iter().map(|(table, columns, _)| (*table, columns.iter().map(|(name, _)| *name).collect()))
}

/// The tables whose rows the running totals count (migration `…_tallies.sql`).
const COUNTED: [&str; 3] = ["pets", "inventory", "orders"];

/// Rows read from SQLite and written to PostgreSQL at a time.
const BATCH: i64 = 1_000;
/// The same for photos, each up to a few hundred KB.
const PHOTO_BATCH: i64 = 20;

/// How many rows each table had, in the order copied.
pub type Copied = Vec<(&'static str, i64)>;

/// Copies the SQLite store `from` into the PostgreSQL store `to`, which must hold no
/// rows yet. SQLite is read in one transaction (a snapshot, even while a server writes
/// to it) and PostgreSQL written in one: an error leaves the target as it was.
pub async fn sqlite_to_postgres(from: &Db, to: &Db) -> Result<Copied, CopyError> {
    let (Pool::Sqlite(source), Pool::Postgres(target)) = (from.pool(), to.pool()) else {
        return Err(CopyError::Engines);
    };
    let mut reader = source.acquire().await?;
    let mut snapshot = reader.begin().await?;
    let mut writer = target.begin().await?;
    for (table, _, _) in TABLES {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        let rows: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_one(&mut *writer).await?;
        if rows > 0 {
            return Err(CopyError::NotEmpty { table, rows });
        }
    }
    // The running totals' triggers (and the catalog version's) are off while rows come
    // in by the thousand; the totals are counted once at the end (`refill_tallies`).
    for table in COUNTED {
        let sql = format!("ALTER TABLE {table} DISABLE TRIGGER USER");
        sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *writer).await?;
    }
    let mut copied = Copied::new();
    for &(table, columns, id) in TABLES {
        let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
        let select =
            format!("SELECT rowid, {} FROM {table} WHERE rowid > $1 ORDER BY rowid LIMIT $2", names.join(", "));
        let mut after = 0_i64;
        let mut count = 0_i64;
        loop {
            let rows = sqlx::query(sqlx::AssertSqlSafe(select.clone()))
                .bind(after)
                .bind(if table == "pet_photos" { PHOTO_BATCH } else { BATCH })
                .fetch_all(&mut *snapshot)
                .await?;
            let Some(last) = rows.last() else { break };
            after = last.try_get(0)?;
            let mut insert =
                QueryBuilder::<sqlx::Postgres>::new(format!("INSERT INTO {table} ({}) ", names.join(", ")));
            let mut failed = None;
            insert.push_values(&rows, |mut values, row| {
                for (i, (_, kind)) in columns.iter().enumerate() {
                    let bound = match kind {
                        Int => row.try_get::<i64, _>(i + 1).map(|v| {
                            values.push_bind(v);
                        }),
                        OptInt => row.try_get::<Option<i64>, _>(i + 1).map(|v| {
                            values.push_bind(v);
                        }),
                        Text => row.try_get::<String, _>(i + 1).map(|v| {
                            values.push_bind(v);
                        }),
                        OptText => row.try_get::<Option<String>, _>(i + 1).map(|v| {
                            values.push_bind(v);
                        }),
                        Bytes => row.try_get::<Vec<u8>, _>(i + 1).map(|v| {
                            values.push_bind(v);
                        }),
                        Bool => row.try_get::<bool, _>(i + 1).map(|v| {
                            values.push_bind(v);
                        }),
                    };
                    if let Err(err) = bound {
                        failed.get_or_insert(err);
                    }
                }
            });
            if let Some(err) = failed {
                return Err(err.into());
            }
            insert.build().execute(&mut *writer).await?;
            count += rows.len() as i64;
        }
        if let Some(id) = id {
            // Past the highest id SQLite ever handed out (AUTOINCREMENT's record), not
            // only the highest left: a deleted pet's id is never handed out again.
            let handed_out: Option<i64> = sqlx::query_scalar("SELECT seq FROM sqlite_sequence WHERE name = $1")
                .bind(table)
                .fetch_optional(&mut *snapshot)
                .await?;
            let next = handed_out.unwrap_or(0).max(0) + 1;
            let sql = format!(
                "SELECT setval(pg_get_serial_sequence('{table}', '{id}'),
                               GREATEST($1, (SELECT COALESCE(MAX({id}), 0) + 1 FROM {table})), false)"
            );
            sqlx::query(sqlx::AssertSqlSafe(sql)).bind(next).execute(&mut *writer).await?;
        }
        copied.push((table, count));
    }
    sqlx::query("SELECT refill_tallies()").execute(&mut *writer).await?;
    sqlx::query("UPDATE catalog_version SET version = version + 1").execute(&mut *writer).await?;
    for table in COUNTED {
        let sql = format!("ALTER TABLE {table} ENABLE TRIGGER USER");
        sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *writer).await?;
    }
    // How far webhook deliveries were made out (a one-row table the target's migration
    // made too): carried over, so that no event is sent again.
    let fanned_out: i64 =
        sqlx::query_scalar("SELECT last_seq FROM webhook_fanout WHERE id = 1").fetch_one(&mut *snapshot).await?;
    sqlx::query("UPDATE webhook_fanout SET last_seq = $1 WHERE id = 1").bind(fanned_out).execute(&mut *writer).await?;
    // Verified inside the target's transaction, before it commits.
    let mut mismatches = String::new();
    for &(table, count) in &copied {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        let written: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.clone())).fetch_one(&mut *writer).await?;
        let read: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_one(&mut *snapshot).await?;
        if written != count || read != count {
            let _ = write!(mismatches, " {table}: {read} in SQLite, {count} copied, {written} in PostgreSQL;");
        }
    }
    if !mismatches.is_empty() {
        return Err(CopyError::Mismatch(mismatches));
    }
    writer.commit().await?;
    snapshot.rollback().await?;
    Ok(copied)
}
