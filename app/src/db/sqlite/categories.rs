//! Categories, and the counts of pets in them.

use super::Conn;
use crate::db::Db;
use crate::error::AppResult;
use crate::model::{Category, CategorySummary};
use crate::services::paging::PageRequest;

pub async fn list(db: &Db, page: PageRequest) -> AppResult<Vec<Category>> {
    Ok(sqlx::query_as("SELECT id, name, description FROM categories WHERE id > ? ORDER BY id LIMIT ?")
        .bind(page.after)
        .bind(page.fetch_limit())
        .fetch_all(db.pool())
        .await?)
}

/// Every category with its number of pets, by name.
pub async fn summaries(db: &Db) -> AppResult<Vec<CategorySummary>> {
    Ok(sqlx::query_as(
        "SELECT c.id, c.name, c.description, COUNT(p.id) AS pet_count
         FROM categories c LEFT JOIN pets p ON p.category_id = c.id
         GROUP BY c.id ORDER BY c.name_key, c.id",
    )
    .fetch_all(db.pool())
    .await?)
}

pub async fn get(db: &Db, id: i64) -> AppResult<Option<Category>> {
    Ok(sqlx::query_as("SELECT id, name, description FROM categories WHERE id = ?")
        .bind(id)
        .fetch_optional(db.pool())
        .await?)
}

/// Inserts a category; a name taken (by its key) is the driver's unique violation.
pub async fn insert(
    conn: &mut Conn,
    name: &str,
    name_key: &str,
    description: Option<&str>,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("INSERT INTO categories (name, name_key, description) VALUES (?, ?, ?) RETURNING id")
        .bind(name)
        .bind(name_key)
        .bind(description)
        .fetch_one(&mut *conn)
        .await
}

/// Replaces a category's name and description; false when there is no such category.
pub async fn update(
    conn: &mut Conn,
    id: i64,
    name: &str,
    name_key: &str,
    description: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let updated = sqlx::query("UPDATE categories SET name = ?, name_key = ?, description = ? WHERE id = ?")
        .bind(name)
        .bind(name_key)
        .bind(description)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(updated.rows_affected() > 0)
}

pub async fn exists(conn: &mut Conn, id: i64) -> AppResult<bool> {
    let found: Option<i64> =
        sqlx::query_scalar("SELECT id FROM categories WHERE id = ?").bind(id).fetch_optional(&mut *conn).await?;
    Ok(found.is_some())
}

pub async fn pet_count(conn: &mut Conn, id: i64) -> AppResult<i64> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM pets WHERE category_id = ?").bind(id).fetch_one(&mut *conn).await?)
}

pub async fn delete(conn: &mut Conn, id: i64) -> AppResult<()> {
    sqlx::query("DELETE FROM categories WHERE id = ?").bind(id).execute(&mut *conn).await?;
    Ok(())
}
