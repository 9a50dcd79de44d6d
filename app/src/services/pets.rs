//! Pets: creation with their initial stock, replacement under the status rules,
//! listing with filters and keyset paging.

use crate::db::{Db, sql};
use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::{NewPet, Page, Pet, PetCard, PetFilter, PetStatus};
use crate::services::paging::PageRequest;
use crate::services::rules;
use crate::services::{inventory, validate};

/// One page of pets with their category name and stock (what the catalog shows;
/// cached, see `cache`).
pub async fn list_cards(db: &Db, filter: &PetFilter, page: PageRequest) -> AppResult<Page<PetCard>> {
    // The search text as it is compared, so that "Rex" and "rex" share an entry.
    let key = PetFilter { q: filter.q.as_deref().map(validate::fold), ..filter.clone() };
    db.caches().pages.get_or_read(db, (key, page), || read_cards(db, filter, page)).await
}

async fn read_cards(db: &Db, filter: &PetFilter, page: PageRequest) -> AppResult<Page<PetCard>> {
    let name_part = filter.q.as_deref().map(validate::fold);
    let rows = sql::pets::cards(db, filter, name_part.as_deref(), page).await?;
    Ok(page.finish(rows, |card| card.id))
}

/// The spec's `Pets` listing: the same query, each row cut down to a `Pet`.
pub async fn list(db: &Db, filter: &PetFilter, page: PageRequest) -> AppResult<Page<Pet>> {
    let cards = list_cards(db, filter, page).await?;
    Ok(Page { items: cards.items.into_iter().map(Pet::from).collect(), next_cursor: cards.next_cursor })
}

pub async fn card(db: &Db, id: i64) -> AppResult<PetCard> {
    let read = || async move { sql::pets::card(db, id).await?.ok_or_else(|| AppError::not_found("pet", id)) };
    db.caches().cards.get_or_read(db, id, read).await
}

pub async fn get(db: &Db, id: i64) -> AppResult<Pet> {
    card(db, id).await.map(Pet::from)
}

/// Creates the pet and its inventory row together; stock starts at 1 when available.
pub async fn create(db: &Db, new: NewPet) -> AppResult<Pet> {
    let name = validate::name("name", &new.name)?;
    let category_id = validate::id("categoryId", new.category_id)?;
    let status = new.status.unwrap_or(PetStatus::Available);

    let mut tx = db.begin_write().await?;
    if !sql::categories::exists(&mut tx, category_id).await? {
        return Err(missing_category(category_id));
    }
    let id =
        sql::pets::insert(&mut tx, &name.text, &name.key, category_id, status, rules::initial_stock(status)).await?;
    tx.commit().await?;
    Ok(Pet { id, name: name.text, category_id, status })
}

/// PUT: replaces name and category; a given status goes through the admin status
/// rules (an omitted one is left as it is).
pub async fn replace(db: &Db, id: i64, new: NewPet) -> AppResult<Pet> {
    let name = validate::name("name", &new.name)?;
    let category_id = validate::id("categoryId", new.category_id)?;

    let mut tx = db.begin_write().await?;
    let current = inventory::state_for_update(&mut tx, id).await?;
    if !sql::categories::exists(&mut tx, category_id).await? {
        return Err(missing_category(category_id));
    }
    let next = match new.status {
        None => current,
        Some(requested) => {
            let open_orders = sql::inventory::open_orders(&mut tx, id).await?;
            rules::admin_set_status(current, requested, open_orders)?
        }
    };
    sql::pets::rename(&mut tx, id, &name.text, &name.key, category_id).await?;
    inventory::write_state(&mut tx, id, current, next).await?;
    tx.commit().await?;
    Ok(Pet { id, name: name.text, category_id, status: next.status })
}

pub async fn delete(db: &Db, id: i64) -> AppResult<()> {
    let mut tx = db.begin_write().await?;
    // Reading the state first gives the 404 for a missing pet.
    let _ = inventory::state_for_update(&mut tx, id).await?;
    let open = sql::inventory::open_orders(&mut tx, id).await?;
    if open > 0 {
        return Err(AppError::conflict(
            ErrorCode::PetHasOpenOrders,
            format!("pet {id} is held by {open} open order(s); complete or cancel them first"),
        ));
    }
    sql::pets::delete(&mut tx, id).await?;
    tx.commit().await?;
    Ok(())
}

fn missing_category(category_id: i64) -> AppError {
    AppError::validation("categoryId", format!("category {category_id} does not exist"))
}
