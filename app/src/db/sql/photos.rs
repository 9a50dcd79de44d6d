//! Pets' photos: each width's encoded bytes, replaced together, with the content hash
//! the pet's row names.

use super::{Conn, on_conn, on_pool};
use crate::db::Db;
use crate::error::AppResult;

/// Puts `variants` (width, WebP bytes) in place of the pet's photo, and names `hash` on
/// the pet's row (which moves the catalog's version: cached cards and pages follow).
pub async fn replace(conn: &mut Conn, pet_id: i64, hash: &str, variants: &[(u32, Vec<u8>)]) -> AppResult<()> {
    remove(conn, pet_id).await?;
    for (width, bytes) in variants {
        on_conn!(conn, |c| sqlx::query("INSERT INTO pet_photos (pet_id, width, hash, bytes) VALUES ($1, $2, $3, $4)")
            .bind(pet_id)
            .bind(i64::from(*width))
            .bind(hash)
            .bind(bytes.as_slice())
            .execute(c)
            .await
            .map(|done| done.rows_affected()))?;
    }
    set_hash(conn, pet_id, Some(hash)).await
}

/// Removes the pet's photo, if it has one; returns whether it had.
pub async fn remove(conn: &mut Conn, pet_id: i64) -> AppResult<bool> {
    let removed = on_conn!(conn, |c| sqlx::query("DELETE FROM pet_photos WHERE pet_id = $1")
        .bind(pet_id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    if removed > 0 {
        set_hash(conn, pet_id, None).await?;
    }
    Ok(removed > 0)
}

async fn set_hash(conn: &mut Conn, pet_id: i64, hash: Option<&str>) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query("UPDATE pets SET photo_hash = $1 WHERE id = $2")
        .bind(hash)
        .bind(pet_id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(())
}

/// The bytes of the pet's photo at `width`, if its photo is still the one `hash` names.
pub async fn variant(db: &Db, pet_id: i64, hash: &str, width: u32) -> AppResult<Option<Vec<u8>>> {
    Ok(on_pool!(db, |pool| sqlx::query_scalar(
        "SELECT bytes FROM pet_photos WHERE pet_id = $1 AND width = $2 AND hash = $3"
    )
    .bind(pet_id)
    .bind(i64::from(width))
    .bind(hash)
    .fetch_optional(pool)
    .await)?)
}

/// Whether the pet's photo at `width` is still the one `hash` names (without its bytes).
pub async fn exists(db: &Db, pet_id: i64, hash: &str, width: u32) -> AppResult<bool> {
    // (Its width: a column of one type on both engines, where a literal 1 is not.)
    let found: Option<i64> = on_pool!(db, |pool| sqlx::query_scalar(
        "SELECT width FROM pet_photos WHERE pet_id = $1 AND width = $2 AND hash = $3"
    )
    .bind(pet_id)
    .bind(i64::from(width))
    .bind(hash)
    .fetch_optional(pool)
    .await)?;
    Ok(found.is_some())
}
