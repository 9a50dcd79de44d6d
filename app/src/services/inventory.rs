//! Inventory: one stock count per pet. Setting it recomputes the pet's status.

use crate::db::{Conn, Db, sql};
use crate::error::{AppError, AppResult};
use crate::model::{EventType, InventoryItem, InventoryUpdate, Page, Pet};
use crate::services::events::{self, Audience};
use crate::services::paging::PageRequest;
use crate::services::rules::{self, PetState};
use crate::services::validate;

pub async fn list(db: &Db, page: PageRequest) -> AppResult<Page<InventoryItem>> {
    let rows = sql::inventory::list(db, page).await?;
    Ok(page.finish(rows, |item| item.pet_id))
}

pub async fn get(db: &Db, pet_id: i64) -> AppResult<InventoryItem> {
    sql::inventory::get(db, pet_id).await?.ok_or_else(|| AppError::not_found("pet", pet_id))
}

/// The most pets whose stock one page reads again at once (a catalog page shows 12,
/// a pet page 1 and up to 4 more).
pub const STOCK_READ_MAX: usize = 100;

/// The stock of each of `pet_ids` that still exists, in their order (one read).
pub async fn stock_of_pets(db: &Db, pet_ids: &[i64]) -> AppResult<Vec<InventoryItem>> {
    if pet_ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut found = sql::inventory::of_pets(db, pet_ids).await?;
    found.sort_by_key(|item| pet_ids.iter().position(|id| *id == item.pet_id));
    Ok(found)
}

/// "set inventory to n", in one transaction with the status it implies.
pub async fn set(db: &Db, pet_id: i64, update: InventoryUpdate) -> AppResult<InventoryItem> {
    let quantity = validate::stock("quantity", update.quantity)?;
    let mut tx = db.begin_write().await?;
    let current = state_for_update(&mut tx, pet_id).await?;
    let open_orders = sql::inventory::open_orders(&mut tx, pet_id).await?;
    let next = rules::set_inventory(quantity, open_orders);
    write_state(&mut tx, pet_id, current, next).await?;
    tx.commit().await?;
    Ok(InventoryItem { pet_id, quantity: next.stock, status: next.status })
}

/// A pet's status and stock, read inside a write transaction (404 when it is gone).
pub(crate) async fn state_for_update(conn: &mut Conn, pet_id: i64) -> AppResult<PetState> {
    let (status, stock) =
        sql::inventory::state(conn, pet_id).await?.ok_or_else(|| AppError::not_found("pet", pet_id))?;
    Ok(PetState { status, stock })
}

/// Moves a pet from `current` (as read by `state_for_update`) to `next`, writing only
/// what changed (an order that leaves the status as it was is one statement, not two),
/// and the events that say so: `inventory.updated` when stock or status moved,
/// `inventory.out_of_stock` when the last unit went, `pet.status_changed` with the pet.
pub(crate) async fn write_state(conn: &mut Conn, pet_id: i64, current: PetState, next: PetState) -> AppResult<()> {
    if next.status != current.status {
        sql::inventory::set_status(conn, pet_id, next.status).await?;
    }
    if next.stock != current.stock {
        sql::inventory::set_stock(conn, pet_id, next.stock).await?;
    }
    record_move(conn, pet_id, current, next).await
}

/// [`write_state`] once the stock is written already: an order writes it with its own
/// row (`sql::orders::insert_taking_stock`). The status, and the events of the move.
pub(crate) async fn write_status_after_stock(
    conn: &mut Conn,
    pet_id: i64,
    current: PetState,
    next: PetState,
) -> AppResult<()> {
    if next.status != current.status {
        sql::inventory::set_status(conn, pet_id, next.status).await?;
    }
    record_move(conn, pet_id, current, next).await
}

/// The events of a move from `current` to `next` ([`write_state`]'s).
async fn record_move(conn: &mut Conn, pet_id: i64, current: PetState, next: PetState) -> AppResult<()> {
    if next == current {
        return Ok(());
    }
    let item = InventoryItem { pet_id, quantity: next.stock, status: next.status };
    events::record(conn, EventType::InventoryUpdated, &item, Audience::Everyone).await?;
    if next.stock == 0 && current.stock > 0 {
        events::record(conn, EventType::InventoryOutOfStock, &item, Audience::Everyone).await?;
    }
    if next.status != current.status {
        let pet =
            sql::pets::card_in(conn, pet_id).await?.map(Pet::from).ok_or_else(|| AppError::not_found("pet", pet_id))?;
        events::record(conn, EventType::PetStatusChanged, &pet, Audience::Everyone).await?;
    }
    Ok(())
}
