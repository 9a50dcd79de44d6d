//! Pets: creation with their initial stock, replacement under the status rules,
//! listing with filters and keyset paging, in the catalog's orders.

use crate::db::cache::CardsKey;
pub use crate::db::cache::JsonPage;
use crate::db::sql::pets::{Content, Keyset};
use crate::db::{Db, sql};
use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::{EventType, Field, NewPet, Page, Pet, PetCard, PetFilter, PetSort, PetStatus};
use crate::services::events::{self, Audience};
use crate::services::paging::{self, PageRequest};
use crate::services::rules;
use crate::services::{inventory, validate};

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
    let q = filter.q.as_deref().map(validate::fold);
    (PetFilter { q, text: filter.text.as_deref().map(validate::fold), ..filter.clone() }, from, limit)
}

/// `limit` cards from `from` on, and one more when there is one, from the database.
async fn query_cards(db: &Db, (filter, from, limit): CardsKey) -> AppResult<Vec<PetCard>> {
    sql::pets::cards(db, &filter, &from, i64::from(limit) + 1).await
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

#[cfg(test)]
mod tests {
    use crate::db::Db;
    use crate::model::{Field, NewCategory, NewPet, PetFilter, PetStatus};
    use crate::services::paging::PageRequest;
    use crate::services::{categories, pets};

    async fn store() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::connect(&crate::db::testing::scratch_url(dir.path()).await).await.unwrap();
        (dir, db)
    }

    #[tokio::test]
    async fn two_stores_in_one_process_share_nothing() {
        use categories::summaries;
        let ((_a, one), (_b, other)) = (store().await, store().await);
        assert!(summaries(&one).await.unwrap().is_empty());
        // Written past the handle, so the other store's generation stays 0 like the
        // first's: only the caches being the store's own tells the two apart.
        crate::on_pool!(other, |pool| sqlx::query("INSERT INTO categories (name, name_key) VALUES ('Owls', 'owls')")
            .execute(pool)
            .await
            .map(|_| ()))
        .unwrap();
        assert_eq!((one.generation(), other.generation()), (0, 0));
        assert_eq!(summaries(&other).await.unwrap().len(), 1, "read from its own database");
    }

    #[tokio::test]
    async fn a_page_of_pets_as_json_is_the_page_encoded_kept_and_a_write_shows_at_once() {
        let (_dir, db) = store().await;
        let dogs = categories::create(&db, NewCategory { name: "Dogs".into(), description: None }).await.unwrap();
        let mut ids = Vec::new();
        for name in ["Rex", "Max", "Rexie"] {
            let new = NewPet { name: name.into(), category_id: dogs.id, ..Default::default() };
            ids.push(pets::create(&db, new).await.unwrap().id);
        }
        let (all, first_two) = (PetFilter::default(), PageRequest { limit: 2, after: 0 });

        let page = pets::list_as_json(&db, &all, first_two).await.unwrap();
        let listed = pets::list(&db, &all, first_two).await.unwrap();
        assert_eq!(page.json, serde_json::to_vec(&listed.items).unwrap());
        assert!(listed.next_cursor.is_some());
        assert_eq!(page.next_cursor.as_deref(), listed.next_cursor.as_deref());
        // Kept: the next read is the same bytes, not a copy.
        let again = pets::list_as_json(&db, &all, first_two).await.unwrap();
        assert_eq!(again.json.as_ptr(), page.json.as_ptr());
        // The last page: no cursor.
        let last = pets::list_as_json(&db, &all, PageRequest { limit: 2, after: ids[1] }).await.unwrap();
        assert!(last.next_cursor.is_none());
        assert_eq!(last.json, serde_json::to_vec(&[pets::get(&db, ids[2]).await.unwrap()]).unwrap());
        // Search text folded for the key: "REX" and "rex" share an entry.
        let by_name = |q: &str| PetFilter { q: Some(q.into()), ..PetFilter::default() };
        let upper = pets::list_as_json(&db, &by_name("REX"), PageRequest::default()).await.unwrap();
        let lower = pets::list_as_json(&db, &by_name("rex"), PageRequest::default()).await.unwrap();
        assert_eq!(upper.json.as_ptr(), lower.json.as_ptr());

        // A rename is in the very next read.
        let renamed = NewPet { name: "Fido".into(), category_id: dogs.id, ..Default::default() };
        pets::replace(&db, ids[0], renamed).await.unwrap();
        let after = pets::list_as_json(&db, &all, first_two).await.unwrap();
        let text = String::from_utf8(after.json.to_vec()).unwrap();
        assert!(text.contains("\"Fido\"") && !text.contains("\"Rex\""), "{text}");
        let found = pets::list_as_json(&db, &by_name("rex"), PageRequest::default()).await.unwrap();
        let names: Vec<String> = serde_json::from_slice::<Vec<serde_json::Value>>(&found.json)
            .unwrap()
            .iter()
            .map(|p| p["name"].to_string())
            .collect();
        assert_eq!(names, ["\"Rexie\""]);
    }

    /// The names the service finds for `q`, following every page of `limit`.
    async fn found(db: &Db, q: &str, limit: u32) -> Vec<String> {
        found_by(db, &PetFilter { q: Some(q.to_owned()), ..PetFilter::default() }, limit).await
    }

    /// The names the storefront's search finds for `text`, in pages of 2.
    async fn found_everywhere(db: &Db, text: &str) -> Vec<String> {
        found_by(db, &PetFilter { text: Some(text.to_owned()), ..PetFilter::default() }, 2).await
    }

    /// The names the service lists for `filter`, following every page of `limit`.
    async fn found_by(db: &Db, filter: &PetFilter, limit: u32) -> Vec<String> {
        let mut names = Vec::new();
        let mut page = PageRequest { limit, after: 0 };
        loop {
            let listed = pets::list(db, filter, page).await.unwrap();
            names.extend(listed.items.into_iter().map(|pet| pet.name));
            match listed.next_cursor {
                Some(cursor) => page = PageRequest::parse(Some(&limit.to_string()), Some(&cursor)).unwrap(),
                None => return names,
            }
        }
    }

    #[tokio::test]
    async fn name_search_is_a_case_insensitive_contains_through_the_index_or_a_scan() {
        let (_dir, db) = store().await;
        let category = categories::create(&db, NewCategory { name: "Dogs".into(), description: None }).await.unwrap();
        for name in ["Rexford", "Tyrex", "Max", "O\"Rex\" Jr", "Émile", "Bo", "REX"] {
            pets::create(
                &db,
                NewPet { name: name.into(), category_id: category.id, status: None, ..Default::default() },
            )
            .await
            .unwrap();
        }
        // Three characters or more: the trigram index, paged in id order.
        assert_eq!(found(&db, "rex", 2).await, ["Rexford", "Tyrex", "O\"Rex\" Jr", "REX"]);
        assert_eq!(found(&db, "ÉMI", 10).await, ["Émile"]);
        assert_eq!(found(&db, "\"rex\"", 10).await, ["O\"Rex\" Jr"], "quotes are text, not query syntax");
        assert_eq!(found(&db, "rex OR max", 10).await, Vec::<String>::new(), "nor are operators");
        assert!(found(&db, "zzz", 10).await.is_empty());
        // With the other filters: they narrow what the index finds.
        let sold = NewPet {
            name: "Rexanne".into(),
            category_id: category.id,
            status: Some(PetStatus::Sold),
            ..Default::default()
        };
        pets::create(&db, sold).await.unwrap();
        let filter = PetFilter { q: Some("rex".into()), status: Some(PetStatus::Sold), ..PetFilter::default() };
        let listed = pets::list(&db, &filter, PageRequest::default()).await.unwrap();
        assert_eq!(listed.items.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["Rexanne"]);
        let filter = PetFilter { q: Some("rex".into()), category_id: Some(category.id + 1), ..PetFilter::default() };
        assert!(pets::list(&db, &filter, PageRequest::default()).await.unwrap().items.is_empty());
        // Shorter: a scan, the same rule.
        assert_eq!(found(&db, "bo", 10).await, ["Bo"]);
        assert_eq!(found(&db, "x", 2).await, ["Rexford", "Tyrex", "Max", "O\"Rex\" Jr", "REX", "Rexanne"]);

        // A rename and a delete keep the index in step.
        let rex = found(&db, "rexford", 10).await;
        assert_eq!(rex, ["Rexford"]);
        let id =
            pets::list(&db, &PetFilter { q: Some("rexford".into()), ..PetFilter::default() }, PageRequest::default())
                .await
                .unwrap()
                .items[0]
                .id;
        let renamed = NewPet { name: "Fido".into(), category_id: category.id, status: None, ..Default::default() };
        pets::replace(&db, id, renamed).await.unwrap();
        assert!(found(&db, "rexford", 10).await.is_empty());
        assert_eq!(found(&db, "fid", 10).await, ["Fido"]);
        pets::delete(&db, id).await.unwrap();
        assert!(found(&db, "fid", 10).await.is_empty());
    }

    #[tokio::test]
    async fn the_storefront_search_looks_in_names_categories_and_descriptions() {
        let (_dir, db) = store().await;
        let category = |name: &str| NewCategory { name: name.into(), description: None };
        let cats = categories::create(&db, category("Cats")).await.unwrap();
        let birds = categories::create(&db, category("Birds")).await.unwrap();
        let mut ids = Vec::new();
        for (name, category_id, description) in [
            ("Whiskers", cats.id, Some("An orange tabby")),
            ("Tweety", birds.id, Some("A canary who sings; not a Cat person")),
            ("Catalina", birds.id, None),
            ("Polly", birds.id, Some("Talks, and sings at dawn")),
        ] {
            let description = description.map_or(Field::Keep, |text| Field::Set(text.to_owned()));
            let new = NewPet { name: name.into(), category_id, description, ..Default::default() };
            ids.push(pets::create(&db, new).await.unwrap().id);
        }
        // By category (Whiskers), description (Tweety) or name (Catalina), whatever the
        // case, in id order over pages; the REST API's `q` still means names.
        assert_eq!(found_everywhere(&db, "CAT").await, ["Whiskers", "Tweety", "Catalina"]);
        assert_eq!(found(&db, "cat", 10).await, ["Catalina"]);
        assert_eq!(found_everywhere(&db, "sings").await, ["Tweety", "Polly"]);
        assert_eq!(found_everywhere(&db, "sings at").await, ["Polly"], "the words as typed, in order");
        assert!(found_everywhere(&db, "zebra").await.is_empty());
        // Shorter than a trigram: a scan, the same rule.
        assert_eq!(found_everywhere(&db, "ca").await, ["Whiskers", "Tweety", "Catalina"]);
        // Both searches and the other filters narrow one another.
        let both = PetFilter { q: Some("ly".into()), text: Some("dawn".into()), ..PetFilter::default() };
        assert_eq!(found_by(&db, &both, 10).await, ["Polly"]);
        let birds_only = PetFilter { text: Some("cat".into()), category_id: Some(birds.id), ..PetFilter::default() };
        assert_eq!(found_by(&db, &birds_only, 10).await, ["Tweety", "Catalina"]);

        // Every write keeps the index in step: a category renamed, a description
        // changed, a pet moved to another category, a pet deleted.
        categories::replace(&db, birds.id, category("Parrots")).await.unwrap();
        assert!(found_everywhere(&db, "bird").await.is_empty());
        assert_eq!(found_everywhere(&db, "parrot").await, ["Tweety", "Catalina", "Polly"]);
        let quiet = |category_id| NewPet {
            name: "Tweety".into(),
            category_id,
            description: Field::Set("Sings at dawn".into()),
            ..Default::default()
        };
        pets::replace(&db, ids[1], quiet(birds.id)).await.unwrap();
        assert_eq!(found_everywhere(&db, "cat").await, ["Whiskers", "Catalina"]);
        pets::replace(&db, ids[1], quiet(cats.id)).await.unwrap();
        assert_eq!(found_everywhere(&db, "cats").await, ["Whiskers", "Tweety"]);
        pets::delete(&db, ids[0]).await.unwrap();
        assert_eq!(found_everywhere(&db, "cats").await, ["Tweety"]);
        if let Some(pool) = db.sqlite_pool() {
            // FTS5 checks its index against the rows it was made from.
            sqlx::query("INSERT INTO pet_text (pet_text, rank) VALUES ('integrity-check', 1)")
                .execute(pool)
                .await
                .expect("the search index matches the pets");
        }
    }
}
