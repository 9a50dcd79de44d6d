//! The store's SQL, one module per resource, which services call instead of writing
//! SQL of their own. Each query is one text for both engines (`$1`-style parameters,
//! which SQLite reads too), compiled for each by `on_pool!` / `on_conn!`; where the
//! engines differ (name search, a few predicates), the function says so and branches.

pub mod accounts;
pub mod backups;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Engine;

    /// Two categories added in one transaction, by statements of their own.
    async fn two_categories(db: &Db, names: [&str; 2]) {
        let mut tx = db.begin_write().await.unwrap();
        for name in names {
            on_conn!(&mut *tx, |c| sqlx::query("INSERT INTO categories (name, name_key) VALUES ($1, $1)")
                .bind(name)
                .execute(c)
                .await
                .map(|_| ())
                .unwrap());
        }
        tx.commit().await.unwrap();
    }

    #[tokio::test]
    async fn the_catalog_version_moves_on_with_each_transaction_that_changes_the_catalog() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::connect(&crate::db::testing::scratch_url(dir.path()).await).await.unwrap();
        let before = catalog_version(&db).await.unwrap();
        two_categories(&db, ["a", "b"]).await;
        let after_one = catalog_version(&db).await.unwrap();
        assert!(after_one > before);
        if db.engine() == Engine::Postgres {
            // A batch of orders is many statements: its row is rewritten once.
            assert_eq!(after_one, before + 1, "once a transaction");
        }
        two_categories(&db, ["c", "d"]).await;
        let after_two = catalog_version(&db).await.unwrap();
        assert!(after_two > after_one, "the next transaction moves it on again");
        // A change rolled back to a savepoint takes its move with it; the next change
        // of the same transaction moves it again.
        let mut tx = db.begin_write().await.unwrap();
        on_conn!(&mut *tx, |c| {
            for statement in [
                "SAVEPOINT s",
                "INSERT INTO categories (name, name_key) VALUES ('e', 'e')",
                "ROLLBACK TO s",
                "INSERT INTO categories (name, name_key) VALUES ('f', 'f')",
            ] {
                sqlx::raw_sql(statement).execute(&mut *c).await.unwrap();
            }
        });
        tx.commit().await.unwrap();
        assert!(catalog_version(&db).await.unwrap() > after_two, "moved by the change that was kept");
    }
}
