//! Stock, and the pet status that goes with it.

use super::{Conn, on_conn, on_pool};
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
    Ok(on_conn!(conn, |c| sqlx::query_as(
        "SELECT p.status, i.quantity FROM pets p JOIN inventory i ON i.pet_id = p.id WHERE p.id = $1"
    )
    .bind(pet_id)
    .fetch_optional(c)
    .await)?)
}

/// A pet's status, stock and price, inside the write transaction that places an order.
pub async fn state_and_price(conn: &mut Conn, pet_id: i64) -> AppResult<Option<(PetStatus, i64, Option<i64>)>> {
    Ok(on_conn!(conn, |c| sqlx::query_as(
        "SELECT p.status, i.quantity, p.price FROM pets p JOIN inventory i ON i.pet_id = p.id WHERE p.id = $1"
    )
    .bind(pet_id)
    .fetch_optional(c)
    .await)?)
}

pub async fn set_status(conn: &mut Conn, pet_id: i64, status: PetStatus) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query("UPDATE pets SET status = $1 WHERE id = $2")
        .bind(status)
        .bind(pet_id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(())
}

pub async fn set_stock(conn: &mut Conn, pet_id: i64, stock: i64) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query("UPDATE inventory SET quantity = $1 WHERE pet_id = $2")
        .bind(stock)
        .bind(pet_id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(())
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
