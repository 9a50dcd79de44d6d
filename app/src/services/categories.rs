//! Categories: unique names (case-insensitively), and no deleting one that pets use.

use crate::db::Db;
use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::{Category, CategorySummary, NewCategory, Page};
use crate::services::paging::PageRequest;
use crate::services::validate;

pub async fn list(db: &Db, page: PageRequest) -> AppResult<Page<Category>> {
    let rows: Vec<Category> =
        sqlx::query_as("SELECT id, name, description FROM categories WHERE id > ? ORDER BY id LIMIT ?")
            .bind(page.after)
            .bind(page.fetch_limit())
            .fetch_all(db.pool())
            .await?;
    Ok(page.finish(rows, |c| c.id))
}

/// Every category with its number of pets, by name: the storefront's pickers and the
/// categories page.
/// (Cached: every page of the storefront asks for them; see `cache`.)
pub async fn summaries(db: &Db) -> AppResult<Vec<CategorySummary>> {
    let read = || async {
        Ok(sqlx::query_as(
            "SELECT c.id, c.name, c.description, COUNT(p.id) AS pet_count
             FROM categories c LEFT JOIN pets p ON p.category_id = c.id
             GROUP BY c.id ORDER BY c.name_key, c.id",
        )
        .fetch_all(db.pool())
        .await?)
    };
    db.caches().summaries.get_or_read(db, (), read).await
}

pub async fn get(db: &Db, id: i64) -> AppResult<Category> {
    sqlx::query_as("SELECT id, name, description FROM categories WHERE id = ?")
        .bind(id)
        .fetch_optional(db.pool())
        .await?
        .ok_or_else(|| AppError::not_found("category", id))
}

pub async fn create(db: &Db, new: NewCategory) -> AppResult<Category> {
    let name = validate::name("name", &new.name)?;
    let description = validate::description("description", new.description.as_deref())?;
    let mut tx = db.begin_write().await?;
    let id: i64 =
        sqlx::query_scalar("INSERT INTO categories (name, name_key, description) VALUES (?, ?, ?) RETURNING id")
            .bind(&name.text)
            .bind(&name.key)
            .bind(&description)
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| unique_name(e, &name.text))?;
    tx.commit().await?;
    Ok(Category { id, name: name.text, description })
}

/// PUT semantics: the body replaces name and description (an omitted description clears it).
pub async fn replace(db: &Db, id: i64, new: NewCategory) -> AppResult<Category> {
    let name = validate::name("name", &new.name)?;
    let description = validate::description("description", new.description.as_deref())?;
    let mut tx = db.begin_write().await?;
    let updated = sqlx::query("UPDATE categories SET name = ?, name_key = ?, description = ? WHERE id = ?")
        .bind(&name.text)
        .bind(&name.key)
        .bind(&description)
        .bind(id)
        .execute(&mut *tx)
        .await
        .map_err(|e| unique_name(e, &name.text))?;
    if updated.rows_affected() == 0 {
        return Err(AppError::not_found("category", id));
    }
    tx.commit().await?;
    Ok(Category { id, name: name.text, description })
}

pub async fn delete(db: &Db, id: i64) -> AppResult<()> {
    let mut tx = db.begin_write().await?;
    let exists: Option<i64> =
        sqlx::query_scalar("SELECT id FROM categories WHERE id = ?").bind(id).fetch_optional(&mut *tx).await?;
    if exists.is_none() {
        return Err(AppError::not_found("category", id));
    }
    let pets: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM pets WHERE category_id = ?").bind(id).fetch_one(&mut *tx).await?;
    if pets > 0 {
        return Err(AppError::conflict(
            ErrorCode::CategoryInUse,
            format!("category {id} still has {pets} pet(s); move or delete them first"),
        ));
    }
    sqlx::query("DELETE FROM categories WHERE id = ?").bind(id).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}

/// True when a category with this id exists; used to validate a pet's `categoryId`.
pub(crate) async fn exists(conn: &mut sqlx::SqliteConnection, id: i64) -> AppResult<bool> {
    let found: Option<i64> =
        sqlx::query_scalar("SELECT id FROM categories WHERE id = ?").bind(id).fetch_optional(conn).await?;
    Ok(found.is_some())
}

fn unique_name(err: sqlx::Error, name: &str) -> AppError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => AppError::conflict(
            ErrorCode::DuplicateName,
            format!("a category named {name:?} already exists (names are compared case-insensitively)"),
        ),
        _ => err.into(),
    }
}
