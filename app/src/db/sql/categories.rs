//! Categories, and the counts of pets in them.

use super::{Conn, on_conn, on_pool};
use crate::db::Db;
use crate::db::paging::PageRequest;
use crate::error::AppResult;
use crate::model::{Category, CategorySummary};

pub async fn list(db: &Db, page: PageRequest) -> AppResult<Vec<Category>> {
    Ok(on_pool!(db, |pool| sqlx::query_as(
        "SELECT id, name, description FROM categories WHERE id > $1 ORDER BY id LIMIT $2"
    )
    .bind(page.after)
    .bind(page.fetch_limit())
    .fetch_all(pool)
    .await)?)
}

/// Every category with its number of pets, by name.
pub async fn summaries(db: &Db) -> AppResult<Vec<CategorySummary>> {
    Ok(on_pool!(db, |pool| sqlx::query_as(
        "SELECT c.id, c.name, c.description, COALESCE(t.pets, 0) AS pet_count
         FROM categories c LEFT JOIN category_pets t ON t.category_id = c.id
         ORDER BY c.name_key, c.id",
    )
    .fetch_all(pool)
    .await)?)
}

pub async fn get(db: &Db, id: i64) -> AppResult<Option<Category>> {
    Ok(on_pool!(db, |pool| sqlx::query_as("SELECT id, name, description FROM categories WHERE id = $1")
        .bind(id)
        .fetch_optional(pool)
        .await)?)
}

/// Inserts a category; a name taken (by its key) is the driver's unique violation.
pub async fn insert(
    conn: &mut Conn,
    name: &str,
    name_key: &str,
    description: Option<&str>,
) -> Result<i64, sqlx::Error> {
    on_conn!(conn, |c| sqlx::query_scalar(
        "INSERT INTO categories (name, name_key, description) VALUES ($1, $2, $3) RETURNING id"
    )
    .bind(name)
    .bind(name_key)
    .bind(description)
    .fetch_one(c)
    .await)
}

/// Replaces a category's name and description; false when there is no such category.
pub async fn update(
    conn: &mut Conn,
    id: i64,
    name: &str,
    name_key: &str,
    description: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let updated = on_conn!(conn, |c| sqlx::query(
        "UPDATE categories SET name = $1, name_key = $2, description = $3 WHERE id = $4"
    )
    .bind(name)
    .bind(name_key)
    .bind(description)
    .bind(id)
    .execute(c)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(updated > 0)
}

pub async fn exists(conn: &mut Conn, id: i64) -> AppResult<bool> {
    let found: Option<i64> = on_conn!(conn, |c| sqlx::query_scalar("SELECT id FROM categories WHERE id = $1")
        .bind(id)
        .fetch_optional(c)
        .await)?;
    Ok(found.is_some())
}

pub async fn pet_count(conn: &mut Conn, id: i64) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar("SELECT COUNT(*) FROM pets WHERE category_id = $1")
        .bind(id)
        .fetch_one(c)
        .await)?)
}

pub async fn delete(conn: &mut Conn, id: i64) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query("DELETE FROM categories WHERE id = $1")
        .bind(id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(())
}
