//! Stock, and the pet status that goes with it.

use super::{Conn, on_conn, on_pool};
use crate::db::batch::{self, PetState};
use crate::db::paging::PageRequest;
use crate::db::{Db, Engine};
use crate::error::AppResult;
use crate::model::{InventoryItem, PetStatus};

const ITEM_COLUMNS: &str = "SELECT i.pet_id, i.quantity, p.status FROM inventory i JOIN pets p ON p.id = i.pet_id";

pub async fn list(db: &Db, page: PageRequest) -> AppResult<Vec<InventoryItem>> {
    let sql = format!("{ITEM_COLUMNS} WHERE i.pet_id > $1 ORDER BY i.pet_id LIMIT $2");
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(page.after)
        .bind(page.fetch_limit())
        .fetch_all(pool)
        .await)?)
}

pub async fn get(db: &Db, pet_id: i64) -> AppResult<Option<InventoryItem>> {
    let sql = format!("{ITEM_COLUMNS} WHERE i.pet_id = $1");
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(pet_id).fetch_optional(pool).await)?)
}

/// The stock of those of `pet_ids` that exist, in one read, in no particular order.
pub async fn of_pets(db: &Db, pet_ids: &[i64]) -> AppResult<Vec<InventoryItem>> {
    Ok(on_pool!(db, |pool| {
        let mut sql = sqlx::QueryBuilder::new(ITEM_COLUMNS);
        sql.push(" WHERE i.pet_id IN (");
        let mut list = sql.separated(", ");
        for id in pet_ids {
            list.push_bind(*id);
        }
        sql.push(")");
        sql.build_query_as().fetch_all(pool).await
    })?)
}

/// A pet's status and stock, inside a write transaction (which holds the write lock).
pub async fn state(conn: &mut Conn, pet_id: i64) -> AppResult<Option<(PetStatus, i64)>> {
    batch::flush(conn).await?;
    Ok(on_conn!(conn, |c| sqlx::query_as(
        "SELECT p.status, i.quantity FROM pets p JOIN inventory i ON i.pet_id = p.id WHERE p.id = $1"
    )
    .bind(pet_id)
    .fetch_optional(c)
    .await)?)
}

/// A pet's status, stock and price, inside the write transaction that places an order:
/// from what its batch read ahead (`db::batch`) when the queue runs it, else read now.
pub async fn state_and_price(conn: &mut Conn, pet_id: i64) -> AppResult<Option<PetState>> {
    if let Some(known) = batch::pet(pet_id) {
        return Ok(known);
    }
    batch::flush(conn).await?;
    Ok(on_conn!(conn, |c| sqlx::query_as(
        "SELECT p.status, i.quantity, p.price FROM pets p JOIN inventory i ON i.pet_id = p.id WHERE p.id = $1"
    )
    .bind(pet_id)
    .fetch_optional(c)
    .await)?)
}

/// The status, stock and price of those of `pet_ids` that exist, in one read, with
/// each pet's id.
pub(in crate::db) async fn states_and_prices(
    conn: &mut Conn,
    pet_ids: &[i64],
) -> Result<Vec<(i64, PetStatus, i64, Option<i64>)>, sqlx::Error> {
    on_conn!(conn, |c| {
        let mut sql = sqlx::QueryBuilder::new(
            "SELECT p.id, p.status, i.quantity, p.price FROM pets p JOIN inventory i ON i.pet_id = p.id WHERE p.id IN (",
        );
        let mut list = sql.separated(", ");
        for id in pet_ids {
            list.push_bind(*id);
        }
        sql.push(")");
        sql.build_query_as().fetch_all(c).await
    })
}

pub async fn set_status(conn: &mut Conn, pet_id: i64, status: PetStatus) -> AppResult<()> {
    // The tallies' trigger counts the pet's stock under its new status.
    batch::flush(conn).await?;
    on_conn!(conn, |c| sqlx::query("UPDATE pets SET status = $1 WHERE id = $2")
        .bind(status)
        .bind(pet_id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    batch::status_set(pet_id, status);
    Ok(())
}

pub async fn set_stock(conn: &mut Conn, pet_id: i64, stock: i64) -> AppResult<()> {
    batch::flush(conn).await?;
    on_conn!(conn, |c| sqlx::query("UPDATE inventory SET quantity = $1 WHERE pet_id = $2")
        .bind(stock)
        .bind(pet_id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    batch::stock_set(pet_id, stock);
    Ok(())
}

/// Sets the stock of each `(pet, stock)`, in one statement.
pub(in crate::db) async fn set_stocks(conn: &mut Conn, stocks: &[(i64, i64)]) -> Result<(), sqlx::Error> {
    on_conn!(conn, |c| {
        let mut sql = sqlx::QueryBuilder::new("UPDATE inventory SET quantity = CASE pet_id");
        for (pet, stock) in stocks {
            sql.push(" WHEN ").push_bind(*pet).push(" THEN ").push_bind(*stock);
        }
        sql.push(" END WHERE pet_id IN (");
        let mut list = sql.separated(", ");
        for (pet, _) in stocks {
            list.push_bind(*pet);
        }
        sql.push(")");
        sql.build().execute(c).await.map(|_| ())
    })
}

/// Open (neither completed nor cancelled) orders holding the pet.
pub async fn open_orders(conn: &mut Conn, pet_id: i64) -> AppResult<i64> {
    let sql = format!("SELECT COUNT(*) FROM orders WHERE pet_id = $1 AND {}", open_order(conn.engine()));
    Ok(on_conn!(conn, |c| sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(pet_id).fetch_one(c).await)?)
}

/// An order neither completed nor cancelled, as each engine's partial index
/// (`orders_open_by_pet`) spells it, so that the index is used: SQLite stores
/// `complete` as 0 or 1, PostgreSQL as a boolean.
pub(crate) fn open_order(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => "complete = 0 AND cancelled_at IS NULL",
        Engine::Postgres => "NOT complete AND cancelled_at IS NULL",
    }
}
