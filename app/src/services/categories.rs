//! Categories: unique names (case-insensitively), and no deleting one that pets use.

use crate::db::{Db, sql};
use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::{Category, CategorySummary, NewCategory, Page};
use crate::services::paging::PageRequest;
use crate::services::validate;

pub async fn list(db: &Db, page: PageRequest) -> AppResult<Page<Category>> {
    let rows = sql::categories::list(db, page).await?;
    Ok(page.finish(rows, |c| c.id))
}

/// Every category with its number of pets, by name: the storefront's pickers and the
/// categories page.
/// (Cached: every page of the storefront asks for them; see `cache`.)
pub async fn summaries(db: &Db) -> AppResult<Vec<CategorySummary>> {
    db.caches().summaries.get_or_read(db, (), || sql::categories::summaries(db)).await
}

pub async fn get(db: &Db, id: i64) -> AppResult<Category> {
    sql::categories::get(db, id).await?.ok_or_else(|| AppError::not_found("category", id))
}

pub async fn create(db: &Db, new: NewCategory) -> AppResult<Category> {
    let name = validate::name("name", &new.name)?;
    let description = validate::description("description", new.description.as_deref())?;
    let mut tx = db.begin_write().await?;
    let id = sql::categories::insert(&mut tx, &name.text, &name.key, description.as_deref())
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
    let updated = sql::categories::update(&mut tx, id, &name.text, &name.key, description.as_deref())
        .await
        .map_err(|e| unique_name(e, &name.text))?;
    if !updated {
        return Err(AppError::not_found("category", id));
    }
    tx.commit().await?;
    Ok(Category { id, name: name.text, description })
}

pub async fn delete(db: &Db, id: i64) -> AppResult<()> {
    let mut tx = db.begin_write().await?;
    if !sql::categories::exists(&mut tx, id).await? {
        return Err(AppError::not_found("category", id));
    }
    let pets = sql::categories::pet_count(&mut tx, id).await?;
    if pets > 0 {
        return Err(AppError::conflict(
            ErrorCode::CategoryInUse,
            format!("category {id} still has {pets} pet(s); move or delete them first"),
        ));
    }
    sql::categories::delete(&mut tx, id).await?;
    tx.commit().await?;
    Ok(())
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
