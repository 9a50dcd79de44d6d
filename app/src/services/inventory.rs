//! Inventory: one stock count per pet. Setting it recomputes the pet's status.

use sqlx::SqliteConnection;

use crate::db::Db;
use crate::error::{AppError, AppResult};
use crate::model::{InventoryItem, InventoryUpdate, Page};
use crate::services::paging::PageRequest;
use crate::services::rules::{self, PetState};
use crate::services::validate;

const ITEM_COLUMNS: &str = "SELECT i.pet_id, i.quantity, p.status FROM inventory i JOIN pets p ON p.id = i.pet_id";

pub async fn list(db: &Db, page: PageRequest) -> AppResult<Page<InventoryItem>> {
    let rows: Vec<InventoryItem> =
        sqlx::query_as(sqlx::AssertSqlSafe(format!("{ITEM_COLUMNS} WHERE i.pet_id > ? ORDER BY i.pet_id LIMIT ?")))
            .bind(page.after)
            .bind(page.fetch_limit())
            .fetch_all(db.pool())
            .await?;
    Ok(page.finish(rows, |item| item.pet_id))
}

pub async fn get(db: &Db, pet_id: i64) -> AppResult<InventoryItem> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("{ITEM_COLUMNS} WHERE i.pet_id = ?")))
        .bind(pet_id)
        .fetch_optional(db.pool())
        .await?
        .ok_or_else(|| AppError::not_found("pet", pet_id))
}

/// "set inventory to n", in one transaction with the status it implies.
pub async fn set(db: &Db, pet_id: i64, update: InventoryUpdate) -> AppResult<InventoryItem> {
    let quantity = validate::stock("quantity", update.quantity)?;
    let mut tx = db.begin_write().await?;
    let current = state_for_update(&mut tx, pet_id).await?;
    let open_orders = open_order_count(&mut tx, pet_id).await?;
    let next = rules::set_inventory(quantity, open_orders);
    write_state(&mut tx, pet_id, current, next).await?;
    tx.commit().await?;
    Ok(InventoryItem { pet_id, quantity: next.stock, status: next.status })
}

/// A pet's status and stock, read inside a write transaction (404 when it is gone).
pub(crate) async fn state_for_update(conn: &mut SqliteConnection, pet_id: i64) -> AppResult<PetState> {
    let row: Option<(crate::model::PetStatus, i64)> =
        sqlx::query_as("SELECT p.status, i.quantity FROM pets p JOIN inventory i ON i.pet_id = p.id WHERE p.id = ?")
            .bind(pet_id)
            .fetch_optional(&mut *conn)
            .await?;
    let (status, stock) = row.ok_or_else(|| AppError::not_found("pet", pet_id))?;
    Ok(PetState { status, stock })
}

/// Moves a pet from `current` (as read by `state_for_update`) to `next`, writing only
/// what changed: an order that leaves the status as it was is one statement, not two.
pub(crate) async fn write_state(
    conn: &mut SqliteConnection,
    pet_id: i64,
    current: PetState,
    next: PetState,
) -> AppResult<()> {
    if next.status != current.status {
        sqlx::query("UPDATE pets SET status = ? WHERE id = ?")
            .bind(next.status)
            .bind(pet_id)
            .execute(&mut *conn)
            .await?;
    }
    if next.stock != current.stock {
        sqlx::query("UPDATE inventory SET quantity = ? WHERE pet_id = ?")
            .bind(next.stock)
            .bind(pet_id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Open (neither completed nor cancelled) orders holding the pet.
pub(crate) async fn open_order_count(conn: &mut SqliteConnection, pet_id: i64) -> AppResult<i64> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE pet_id = ? AND complete = 0 AND cancelled_at IS NULL")
        .bind(pet_id)
        .fetch_one(&mut *conn)
        .await?)
}
