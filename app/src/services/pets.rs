//! Pets: creation with their initial stock, replacement under the status rules,
//! listing with filters and keyset paging, in the catalog's orders.

use crate::db::sql::pets::{Content, Keyset};
use crate::db::{Db, sql};
use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::{EventType, Field, NewPet, Page, Pet, PetCard, PetFilter, PetSort, PetStatus};
use crate::services::events::{self, Audience};
use crate::services::paging::{self, PageRequest};
use crate::services::rules;
use crate::services::{inventory, validate};

/// A page of cards, or of pets as the API's JSON, as it is cached: the filter (its
/// search text folded, so that "Rex" and "rex" share an entry), where the page starts
/// and how many it holds.
pub type CardsKey = (PetFilter, Keyset, u32);

/// One page of pets with their category name and stock, by id (what the API lists;
/// cached, see `cache`).
pub async fn list_cards(db: &Db, filter: &PetFilter, page: PageRequest) -> AppResult<Page<PetCard>> {
    let cards = read_cards(db, filter, Keyset::Id(page.after), page.limit).await?;
    Ok(page.finish(cards, |card| card.id))
}

/// One page of the catalog in `sort`'s order, from `cursor` (as the page before gave
/// it; a cursor of another order is a 422).
pub async fn browse(
    db: &Db,
    filter: &PetFilter,
    sort: PetSort,
    limit: u32,
    cursor: Option<&str>,
) -> AppResult<Page<PetCard>> {
    let from = paging::sorted_cursor(sort, cursor)?;
    let mut cards = read_cards(db, filter, from.clone(), limit).await?;
    let has_more = cards.len() > limit as usize;
    cards.truncate(limit as usize);
    let next_cursor = cards.last().filter(|_| has_more).map(|last| paging::encode_sorted_cursor(&from.after(last)));
    Ok(Page { items: cards, next_cursor })
}

/// The key of a page of `limit` cards from `from` on.
fn cards_key(filter: &PetFilter, from: Keyset, limit: u32) -> CardsKey {
    (PetFilter { q: filter.q.as_deref().map(validate::fold), ..filter.clone() }, from, limit)
}

/// `limit` cards from `from` on, and one more when there is one, from the database.
async fn query_cards(db: &Db, (filter, from, limit): CardsKey) -> AppResult<Vec<PetCard>> {
    sql::pets::cards(db, &filter, filter.q.as_deref(), &from, i64::from(limit) + 1).await
}

/// `limit` cards from `from` on, and one more when there is one (kept).
async fn read_cards(db: &Db, filter: &PetFilter, from: Keyset, limit: u32) -> AppResult<Vec<PetCard>> {
    let key = cards_key(filter, from, limit);
    db.caches().pages.get_or_read(db, key.clone(), || query_cards(db, key)).await
}

/// The spec's `Pets` listing: the same query, each row cut down to a `Pet`.
pub async fn list(db: &Db, filter: &PetFilter, page: PageRequest) -> AppResult<Page<Pet>> {
    let cards = list_cards(db, filter, page).await?;
    Ok(Page { items: cards.items.into_iter().map(Pet::from).collect(), next_cursor: cards.next_cursor })
}

/// A page of `list` as the API sends it: the JSON array of its pets, and the cursor
/// of the page after it, if any.
#[derive(Clone, Debug)]
pub struct JsonPage {
    pub json: axum::body::Bytes,
    pub next_cursor: Option<std::sync::Arc<str>>,
}

/// The page of `list`, as the API's JSON: encoded once per generation of the data and
/// kept (`cache`), as `get_as_json` keeps a pet, so that a busy `GET /pets` neither
/// copies twenty cards nor encodes them on every read. Read from the database on a
/// miss, not through the cards' pages: the page is kept once, as JSON.
pub async fn list_as_json(db: &Db, filter: &PetFilter, page: PageRequest) -> AppResult<JsonPage> {
    let key = cards_key(filter, Keyset::Id(page.after), page.limit);
    let query = key.clone();
    let read = move || async move {
        let page = page.finish(query_cards(db, query).await?, |card| card.id);
        let pets: Vec<Pet> = page.items.into_iter().map(Pet::from).collect();
        Ok(JsonPage { json: encode(&pets, "pets")?, next_cursor: page.next_cursor.map(Into::into) })
    };
    db.caches().list_json.get_or_read(db, key, read).await
}

/// `value` as JSON bytes to keep. Boxed first: the kept bytes hold no spare capacity the
/// cache's weight misses.
fn encode<T: serde::Serialize>(value: &T, what: &str) -> AppResult<axum::body::Bytes> {
    let json = serde_json::to_vec(value).map_err(|err| AppError::internal(&format!("encoding {what}"), err))?;
    Ok(axum::body::Bytes::from(json.into_boxed_slice()))
}

pub async fn card(db: &Db, id: i64) -> AppResult<PetCard> {
    let read = || async move { sql::pets::card(db, id).await?.ok_or_else(|| AppError::not_found("pet", id)) };
    db.caches().cards.get_or_read(db, id, read).await
}

pub async fn get(db: &Db, id: i64) -> AppResult<Pet> {
    card(db, id).await.map(Pet::from)
}

/// The pet of `get`, as the API's JSON: encoded once per generation of the data and
/// kept (`cache`), so that a busy `GET /pets/{petId}` neither copies the card nor
/// encodes it on every read.
pub async fn get_as_json(db: &Db, id: i64) -> AppResult<axum::body::Bytes> {
    let read = || async move { encode(&get(db, id).await?, "a pet") };
    db.caches().pet_json.get_or_read(db, id, read).await
}

/// How many pets "more in this category" shows.
pub const MORE_IN_CATEGORY: i64 = 4;

/// Pets of the same category a shopper could order instead, latest first.
pub async fn more_like(db: &Db, card: &PetCard) -> AppResult<Vec<PetCard>> {
    sql::pets::others_in_category(db, card.category_id, card.id, MORE_IN_CATEGORY).await
}

/// A request's description and price, checked.
fn content_change(new: &NewPet) -> AppResult<(Field<String>, Field<i64>)> {
    let description = match &new.description {
        Field::Set(text) => Field::from_option(validate::pet_description("description", Some(text))?),
        other => other.clone(),
    };
    let price = match &new.price {
        Field::Set(price) => Field::Set(validate::price("price", *price)?),
        other => other.clone(),
    };
    Ok((description, price))
}

/// Creates the pet and its inventory row together; stock starts at 1 when available.
pub async fn create(db: &Db, new: NewPet) -> AppResult<Pet> {
    let name = validate::name("name", &new.name)?;
    let category_id = validate::id("categoryId", new.category_id)?;
    let (description, price) = content_change(&new)?;
    let (description, price) = (description.apply(None), price.apply(None));
    let status = new.status.unwrap_or(PetStatus::Available);

    let mut tx = db.begin_write().await?;
    if !sql::categories::exists(&mut tx, category_id).await? {
        return Err(missing_category(category_id));
    }
    let content = Content { description: description.as_deref(), price };
    let id =
        sql::pets::insert(&mut tx, &name.text, &name.key, category_id, status, content, rules::initial_stock(status))
            .await?;
    let pet = Pet { id, name: name.text, category_id, status, description, price, photo_urls: Vec::new() };
    events::record(&mut tx, EventType::PetCreated, &pet, Audience::Everyone).await?;
    tx.commit().await?;
    Ok(pet)
}

/// PUT: replaces name and category; a given status goes through the admin status
/// rules, a given description or price replaces the pet's (`null` removes it); what is
/// omitted is left as it is.
pub async fn replace(db: &Db, id: i64, new: NewPet) -> AppResult<Pet> {
    let name = validate::name("name", &new.name)?;
    let category_id = validate::id("categoryId", new.category_id)?;
    let (description, price) = content_change(&new)?;

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
    let before = sql::pets::card_in(&mut tx, id).await?.ok_or_else(|| AppError::not_found("pet", id))?;
    let (description, price) = (description.apply(before.description), price.apply(before.price));
    let content = Content { description: description.as_deref(), price };
    sql::pets::update(&mut tx, id, &name.text, &name.key, category_id, content).await?;
    inventory::write_state(&mut tx, id, current, next).await?;
    let after = Pet::from(sql::pets::card_in(&mut tx, id).await?.ok_or_else(|| AppError::not_found("pet", id))?);
    events::record(&mut tx, EventType::PetUpdated, &after, Audience::Everyone).await?;
    tx.commit().await?;
    Ok(after)
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
    let gone = sql::pets::card_in(&mut tx, id).await?.ok_or_else(|| AppError::not_found("pet", id))?;
    sql::pets::delete(&mut tx, id).await?;
    events::record(&mut tx, EventType::PetDeleted, &Pet::from(gone), Audience::Everyone).await?;
    tx.commit().await?;
    Ok(())
}

fn missing_category(category_id: i64) -> AppError {
    AppError::validation("categoryId", format!("category {category_id} does not exist"))
}
