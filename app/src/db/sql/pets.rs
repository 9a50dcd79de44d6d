//! Pets and their catalog cards (a pet with its category's name and its stock).

use sqlx::{Database, Encode, QueryBuilder, Type};

use super::{Conn, on_conn, on_pool};
use crate::db::{Db, Engine};
use crate::error::AppResult;
use crate::model::{PetCard, PetFilter, PetStatus};

const CARD_FIELDS: &str = "p.id, p.name, p.category_id, c.name AS category_name, p.status, i.quantity,
     p.description, p.price, p.photo_hash";

const CARD_COLUMNS: &str = "SELECT p.id, p.name, p.category_id, c.name AS category_name, p.status, i.quantity,
     p.description, p.price, p.photo_hash
     FROM pets p
     JOIN categories c ON c.id = p.category_id
     JOIN inventory i ON i.pet_id = p.id";

/// SQLite's cards driven by its search index (`pet_text`, an FTS5 table of trigrams of
/// each pet's folded name, its category's folded name and its description), which is
/// read in id order: the page ends the search, however many pets match. (`CROSS JOIN`
/// keeps the index the outer loop.)
const SQLITE_INDEXED_CARD_COLUMNS: &str = "SELECT p.id, p.name, p.category_id, c.name AS category_name, p.status,
     i.quantity, p.description, p.price, p.photo_hash
     FROM pet_text
     CROSS JOIN pets p ON p.id = pet_text.rowid
     JOIN categories c ON c.id = p.category_id
     JOIN inventory i ON i.pet_id = p.id";

/// The fewest characters a search goes through the name index with: a trigram index
/// cannot look up less. A shorter search scans the names in id order, and stops once
/// the page is full.
pub const INDEXED_SEARCH_MIN_CHARS: usize = 3;

/// The price a pet without one sorts by: after every real price.
pub const NO_PRICE_SORTS_AS: i64 = i64::MAX;

/// Where a page of cards starts, in the order it is read in: after the last card of
/// the page before (its id, and its name key or price for those orders).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Keyset {
    /// By id, after this id (0: from the start).
    Id(i64),
    /// By id, latest first, before this id (`None`: from the start).
    Newest(Option<i64>),
    /// By folded name, then id.
    Name(Option<(String, i64)>),
    /// By price ([`NO_PRICE_SORTS_AS`] for none), then id.
    Price(Option<(i64, i64)>),
}

impl Keyset {
    /// Where the page after `card` starts, in this order.
    pub fn after(&self, card: &PetCard) -> Keyset {
        match self {
            Keyset::Id(_) => Keyset::Id(card.id),
            Keyset::Newest(_) => Keyset::Newest(Some(card.id)),
            Keyset::Name(_) => Keyset::Name(Some((crate::model::fold(&card.name), card.id))),
            Keyset::Price(_) => Keyset::Price(Some((card.price.unwrap_or(NO_PRICE_SORTS_AS), card.id))),
        }
    }
}

/// The cards from `from` on matching `filter` (its searches folded already), `limit` of
/// them.
pub async fn cards(db: &Db, filter: &PetFilter, from: &Keyset, limit: i64) -> AppResult<Vec<PetCard>> {
    let engine = db.engine();
    Ok(on_pool!(db, |pool| {
        let mut sql = QueryBuilder::new("");
        push_cards(&mut sql, engine, filter, from, limit);
        sql.build_query_as().fetch_all(pool).await
    })?)
}

/// A search of a listing, folded: in names only (`q`), or in names, category names and
/// descriptions (`text`).
#[derive(Clone, Copy)]
enum Search<'a> {
    Name(&'a str),
    Everywhere(&'a str),
}

impl<'a> Search<'a> {
    fn of(filter: &'a PetFilter) -> Vec<Search<'a>> {
        let name = filter.q.as_deref().map(Search::Name);
        let everywhere = filter.text.as_deref().map(Search::Everywhere);
        name.into_iter().chain(everywhere).collect()
    }

    fn text(self) -> &'a str {
        match self {
            Search::Name(text) | Search::Everywhere(text) => text,
        }
    }

    /// Long enough for the trigram indexes.
    fn indexed(self) -> bool {
        self.text().chars().count() >= INDEXED_SEARCH_MIN_CHARS
    }

    /// This search as a term of an FTS5 query of `pet_text`: one phrase (rows that
    /// hold its trigrams one after another, which is to say contain it), in the name
    /// column or in any. (Inside double quotes nothing is an operator; a double quote
    /// is written twice.)
    fn fts_term(self) -> String {
        let phrase = format!("\"{}\"", self.text().replace('"', "\"\""));
        match self {
            Search::Name(_) => format!("name_key : {phrase}"),
            Search::Everywhere(_) => phrase,
        }
    }
}

/// The query of [`cards`], pushed onto `sql` (which tests start with `EXPLAIN`).
fn push_cards<DB: Database>(sql: &mut QueryBuilder<DB>, engine: Engine, filter: &PetFilter, from: &Keyset, limit: i64)
where
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    String: for<'q> Encode<'q, DB> + Type<DB>,
    PetStatus: for<'q> Encode<'q, DB> + Type<DB>,
{
    let searches = Search::of(filter);
    // SQLite's search index drives the read in id order (either way): the page ends
    // the search. The other orders read the matches from it and sort them.
    let by_index = engine == Engine::Sqlite && searches.iter().any(|search| search.indexed());
    let id = if by_index { "pet_text.rowid" } else { "p.id" };
    if by_index {
        sql.push(SQLITE_INDEXED_CARD_COLUMNS);
        let terms: Vec<String> =
            searches.iter().filter(|search| search.indexed()).map(|search| search.fts_term()).collect();
        sql.push(" WHERE pet_text MATCH ").push_bind(terms.join(" AND "));
    } else {
        sql.push(CARD_COLUMNS);
        sql.push(" WHERE 1 = 1");
    }
    for search in searches.into_iter().filter(|search| !(by_index && search.indexed())) {
        push_search(sql, engine, search);
    }
    if let Some(status) = filter.status {
        sql.push(" AND p.status = ").push_bind(status);
    }
    if let Some(category_id) = filter.category_id {
        sql.push(" AND p.category_id = ").push_bind(category_id);
    }
    if let Some(ids) = &filter.ids {
        sql.push(" AND p.id IN (");
        let mut list = sql.separated(", ");
        for id in ids {
            list.push_bind(*id);
        }
        sql.push(")");
    }
    // Each order as its index (pets_by_name, pets_by_price) has it, so that it is read
    // in order; name keys compare bytewise on both engines.
    let name = match engine {
        Engine::Sqlite => "p.name_key",
        Engine::Postgres => "p.name_key COLLATE \"C\"",
    };
    let price = format!("COALESCE(p.price, {NO_PRICE_SORTS_AS})");
    match from {
        Keyset::Id(after) => {
            sql.push(format!(" AND {id} > ")).push_bind(*after);
            sql.push(format!(" ORDER BY {id}"));
        }
        Keyset::Newest(before) => {
            if let Some(before) = before {
                sql.push(format!(" AND {id} < ")).push_bind(*before);
            }
            sql.push(format!(" ORDER BY {id} DESC"));
        }
        Keyset::Name(after) => {
            if let Some((key, after_id)) = after {
                sql.push(format!(" AND ({name}, p.id) > (")).push_bind(key.clone());
                sql.push(", ").push_bind(*after_id).push(")");
            }
            sql.push(format!(" ORDER BY {name}, p.id"));
        }
        Keyset::Price(after) => {
            if let Some((value, after_id)) = after {
                sql.push(format!(" AND ({price}, p.id) > (")).push_bind(*value);
                sql.push(", ").push_bind(*after_id).push(")");
            }
            sql.push(format!(" ORDER BY {price}, p.id"));
        }
    }
    sql.push(" LIMIT ").push_bind(limit);
}

/// `search` as a condition of the listing, outside SQLite's search index. PostgreSQL's
/// trigram indexes (`pets_name_trigrams` and `pets_description_trigrams`, pg_trgm)
/// answer LIKE and ILIKE, and its planner weighs them against reading the primary key
/// in order; categories are few, and read whole. A search shorter than a trigram scans,
/// on both engines, and stops once the page is full.
fn push_search<DB: Database>(sql: &mut QueryBuilder<DB>, engine: Engine, search: Search<'_>)
where
    String: for<'q> Encode<'q, DB> + Type<DB>,
{
    let text = search.text();
    if search.indexed() && engine == Engine::Postgres {
        let pattern = like_contains(text);
        sql.push(" AND (p.name_key LIKE ").push_bind(pattern.clone());
        if let Search::Everywhere(_) = search {
            sql.push(" OR p.description ILIKE ").push_bind(pattern.clone());
            sql.push(" OR p.category_id IN (SELECT id FROM categories WHERE name_key LIKE ").push_bind(pattern);
            sql.push(")");
        }
    } else {
        sql.push(" AND (instr(p.name_key, ").push_bind(text.to_owned()).push(") > 0");
        if let Search::Everywhere(_) = search {
            sql.push(" OR instr(lower(p.description), ").push_bind(text.to_owned()).push(") > 0");
            sql.push(" OR p.category_id IN (SELECT id FROM categories WHERE instr(name_key, ");
            sql.push_bind(text.to_owned()).push(") > 0)");
        }
    }
    sql.push(")");
}

/// A LIKE pattern for text containing `text`: its own `%`, `_` and `\` are text
/// (backslash is PostgreSQL's default LIKE escape).
fn like_contains(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

pub async fn card(db: &Db, id: i64) -> AppResult<Option<PetCard>> {
    let sql = format!("{CARD_COLUMNS} WHERE p.id = $1");
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(pool).await)?)
}

/// The card as a write transaction has left it (what the write answers with).
pub async fn card_in(conn: &mut Conn, id: i64) -> AppResult<Option<PetCard>> {
    // The card shows the stock, which a batch may hold back (`db::batch`).
    crate::db::batch::flush(conn).await?;
    let sql = format!("{CARD_COLUMNS} WHERE p.id = $1");
    Ok(on_conn!(conn, |c| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(c).await)?)
}

/// Up to `limit` other pets of `category_id` that can be ordered, latest first (the pet
/// page's "more in this category").
pub async fn others_in_category(db: &Db, category_id: i64, except: i64, limit: i64) -> AppResult<Vec<PetCard>> {
    let sql = format!(
        "SELECT {CARD_FIELDS} FROM pets p
         JOIN categories c ON c.id = p.category_id
         JOIN inventory i ON i.pet_id = p.id
         WHERE p.category_id = $1 AND p.id <> $2 AND p.status = $3
         ORDER BY p.id DESC LIMIT $4"
    );
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(category_id)
        .bind(except)
        .bind(PetStatus::Available)
        .bind(limit)
        .fetch_all(pool)
        .await)?)
}

/// What a pet's row holds besides its name, category and status.
pub struct Content<'a> {
    pub description: Option<&'a str>,
    pub price: Option<i64>,
}

/// Inserts a pet with its inventory row; returns its id.
pub async fn insert(
    conn: &mut Conn,
    name: &str,
    name_key: &str,
    category_id: i64,
    status: PetStatus,
    content: Content<'_>,
    stock: i64,
) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO pets (name, name_key, category_id, status, description, price)
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        )
        .bind(name)
        .bind(name_key)
        .bind(category_id)
        .bind(status)
        .bind(content.description)
        .bind(content.price)
        .fetch_one(&mut *c)
        .await?;
        sqlx::query("INSERT INTO inventory (pet_id, quantity) VALUES ($1, $2)")
            .bind(id)
            .bind(stock)
            .execute(c)
            .await
            .map(|_| id)
    })?)
}

/// Rewrites what a replace sets: name, category, description and price.
pub async fn update(
    conn: &mut Conn,
    id: i64,
    name: &str,
    name_key: &str,
    category_id: i64,
    content: Content<'_>,
) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query(
        "UPDATE pets SET name = $1, name_key = $2, category_id = $3, description = $4, price = $5 WHERE id = $6"
    )
    .bind(name)
    .bind(name_key)
    .bind(category_id)
    .bind(content.description)
    .bind(content.price)
    .bind(id)
    .execute(c)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(())
}

/// Deletes the pet; its inventory row and photo go with it (ON DELETE CASCADE).
pub async fn delete(conn: &mut Conn, id: i64) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query("DELETE FROM pets WHERE id = $1")
        .bind(id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(())
}

pub async fn name(conn: &mut Conn, id: i64) -> AppResult<Option<String>> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar("SELECT name FROM pets WHERE id = $1").bind(id).fetch_optional(c).await)?)
}

/// How many categories and pets the store has.
pub async fn catalog_size(db: &Db) -> AppResult<(i64, i64)> {
    Ok(on_pool!(db, |pool| sqlx::query_as("SELECT (SELECT COUNT(*) FROM categories), (SELECT COUNT(*) FROM pets)")
        .fetch_one(pool)
        .await)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store on the test run's engine.
    async fn store() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::connect(&crate::db::testing::scratch_url(dir.path()).await).await.unwrap();
        (dir, db)
    }

    /// A SQLite store, for what only SQLite has.
    async fn sqlite_store() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::connect(&format!("sqlite://{}", dir.path().join("t.db").display())).await.unwrap();
        (dir, db)
    }

    #[tokio::test]
    async fn rows_another_client_writes_are_found_through_the_index() {
        use sqlx::Connection;
        let (dir, db) = store().await;
        let category: i64 = on_pool!(db, |pool| sqlx::query_scalar(
            "INSERT INTO categories (name, name_key) VALUES ('Owls', 'owls') RETURNING id"
        )
        .fetch_one(pool)
        .await)
        .unwrap();
        // As the sqlite3 or psql prompt would write: a connection of its own, plain SQL.
        let url = crate::db::testing::scratch_url(dir.path()).await;
        let insert_pet =
            "INSERT INTO pets (name, name_key, category_id, status) VALUES ('Hedwig', 'hedwig', $1, 'available')";
        let insert_stock = "INSERT INTO inventory (pet_id, quantity) SELECT id, 1 FROM pets WHERE name = 'Hedwig'";
        match db.engine() {
            Engine::Sqlite => {
                let mut other = sqlx::SqliteConnection::connect(&url).await.unwrap();
                sqlx::query(insert_pet).bind(category).execute(&mut other).await.unwrap();
                sqlx::query(insert_stock).execute(&mut other).await.unwrap();
            }
            Engine::Postgres => {
                let mut other = sqlx::PgConnection::connect(&url).await.unwrap();
                sqlx::query(insert_pet).bind(category).execute(&mut other).await.unwrap();
                sqlx::query(insert_stock).execute(&mut other).await.unwrap();
            }
        }
        let filter = PetFilter { q: Some("edwi".into()), ..PetFilter::default() };
        let cards = cards(&db, &filter, &Keyset::Id(0), 21).await.unwrap();
        assert_eq!(cards.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["Hedwig"]);
    }

    /// What SQLite's planner does with the query `cards` builds.
    async fn plan(db: &Db, filter: &PetFilter, from: &Keyset) -> Vec<String> {
        let mut sql = QueryBuilder::<sqlx::Sqlite>::new("EXPLAIN QUERY PLAN ");
        push_cards(&mut sql, Engine::Sqlite, filter, from, 21);
        let plan: Vec<(i64, i64, i64, String)> =
            sql.build_query_as().fetch_all(db.sqlite_pool().unwrap()).await.unwrap();
        plan.into_iter().map(|(_, _, _, detail)| detail).collect()
    }

    #[tokio::test]
    async fn an_indexed_search_reads_the_index_in_order_without_sorting() {
        let (_dir, db) = sqlite_store().await;
        // The very query `cards` runs, with a status filter beside the search: of names
        // (the REST API's), of everything (the storefront's) or both.
        let status = Some(PetStatus::Available);
        let name = PetFilter { status, q: Some("abc".into()), ..PetFilter::default() };
        let everywhere = PetFilter { status, text: Some("abc".into()), ..PetFilter::default() };
        let both = PetFilter { status, q: Some("abc".into()), text: Some("def".into()), ..PetFilter::default() };
        for filter in [name, everywhere, both] {
            for from in [Keyset::Id(0), Keyset::Newest(Some(9))] {
                let steps = plan(&db, &filter, &from).await;
                assert!(steps[0].starts_with("SCAN pet_text VIRTUAL TABLE INDEX"), "{steps:?}");
                assert!(!steps.iter().any(|step| step.contains("TEMP B-TREE")), "no sort: {steps:?}");
            }
        }
    }

    #[tokio::test]
    async fn every_catalog_order_is_read_from_an_index_without_sorting() {
        let (_dir, db) = sqlite_store().await;
        for (from, index) in [
            (Keyset::Name(Some(("rex".into(), 3))), "pets_by_name"),
            (Keyset::Name(None), "pets_by_name"),
            (Keyset::Price(Some((1_000, 3))), "pets_by_price"),
            (Keyset::Price(None), "pets_by_price"),
            (Keyset::Newest(Some(9)), "PRIMARY KEY"),
        ] {
            let steps = plan(&db, &PetFilter::default(), &from).await;
            assert!(steps.iter().any(|step| step.contains(index)), "{from:?}: {steps:?}");
            assert!(!steps.iter().any(|step| step.contains("TEMP B-TREE")), "{from:?}, no sort: {steps:?}");
        }
    }
}
