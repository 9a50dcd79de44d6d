//! The store's SQL, one module per resource, which services call instead of writing
//! SQL of their own. Each query is one text for both engines (`$1`-style parameters,
//! which SQLite reads too), compiled for each by `on_pool!` / `on_conn!`; where the
//! engines differ (name search, a few predicates), the function says so and branches.

pub mod categories;
pub mod dashboard;
pub mod events;
pub mod inventory;
pub mod keys;
pub mod orders;
pub mod pets;
pub mod photos;
pub mod rate_limits;
pub mod retention;
pub mod webhooks;

use super::{Conn, Db, on_conn, on_pool};

/// The catalog's version: a counter the database's own triggers move on with every
/// change to categories, pets or stock, whoever makes it.
pub async fn catalog_version(db: &Db) -> Result<i64, sqlx::Error> {
    on_pool!(db, |pool| sqlx::query_scalar("SELECT version FROM catalog_version").fetch_one(pool).await)
}

/// The health probe's write: one row rewritten.
pub async fn touch_write_probe(conn: &mut Conn, now: i64) -> Result<(), sqlx::Error> {
    on_conn!(conn, |c| sqlx::query("UPDATE write_probe SET at = $1 WHERE id = 1")
        .bind(now)
        .execute(c)
        .await
        .map(|_| ()))
}
