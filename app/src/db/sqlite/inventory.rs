//! Stock, and the pet status that goes with it.

use super::Conn;
use crate::db::Db;
use crate::error::AppResult;
use crate::model::{InventoryItem, PetStatus};
use crate::services::paging::PageRequest;

const ITEM_COLUMNS: &str = "SELECT i.pet_id, i.quantity, p.status FROM inventory i JOIN pets p ON p.id = i.pet_id";

pub async fn list(db: &Db, page: PageRequest) -> AppResult<Vec<InventoryItem>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!("{ITEM_COLUMNS} WHERE i.pet_id > ? ORDER BY i.pet_id LIMIT ?")))
        .bind(page.after)
        .bind(page.fetch_limit())
        .fetch_all(db.pool())
        .await?)
}

pub async fn get(db: &Db, pet_id: i64) -> AppResult<Option<InventoryItem>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!("{ITEM_COLUMNS} WHERE i.pet_id = ?")))
        .bind(pet_id)
        .fetch_optional(db.pool())
        .await?)
}

/// A pet's status and stock, inside a write transaction (which holds the write lock).
pub async fn state(conn: &mut Conn, pet_id: i64) -> AppResult<Option<(PetStatus, i64)>> {
    Ok(sqlx::query_as("SELECT p.status, i.quantity FROM pets p JOIN inventory i ON i.pet_id = p.id WHERE p.id = ?")
        .bind(pet_id)
        .fetch_optional(&mut *conn)
        .await?)
}

pub async fn set_status(conn: &mut Conn, pet_id: i64, status: PetStatus) -> AppResult<()> {
    sqlx::query("UPDATE pets SET status = ? WHERE id = ?").bind(status).bind(pet_id).execute(&mut *conn).await?;
    Ok(())
}

pub async fn set_stock(conn: &mut Conn, pet_id: i64, stock: i64) -> AppResult<()> {
    sqlx::query("UPDATE inventory SET quantity = ? WHERE pet_id = ?")
        .bind(stock)
        .bind(pet_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Open (neither completed nor cancelled) orders holding the pet.
pub async fn open_orders(conn: &mut Conn, pet_id: i64) -> AppResult<i64> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE pet_id = ? AND complete = 0 AND cancelled_at IS NULL")
        .bind(pet_id)
        .fetch_one(&mut *conn)
        .await?)
}
