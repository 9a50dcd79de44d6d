//! The staff dashboard's aggregates.

use super::on_pool;
use crate::db::Db;
use crate::error::AppResult;
use crate::model::PetStatus;

/// Pets and units in stock per status, from the running totals the schema's triggers
/// keep (migration `…_tallies.sql`): three rows, however many pets.
pub async fn stock_by_status(db: &Db) -> AppResult<Vec<(PetStatus, i64, i64)>> {
    Ok(on_pool!(db, |pool| sqlx::query_as("SELECT status, pets, units FROM status_stock").fetch_all(pool).await)?)
}

/// Orders placed in each hour of the day from `midnight`, as (hour, count), hours with
/// none absent: at most 24 rows of the hourly totals.
pub async fn orders_per_hour(db: &Db, midnight: i64) -> AppResult<Vec<(i64, i64)>> {
    Ok(on_pool!(db, |pool| sqlx::query_as(
        "SELECT hour - $1 / 3600, placed FROM order_hours WHERE hour >= $1 / 3600 AND hour < $1 / 3600 + 24",
    )
    .bind(midnight)
    .fetch_all(pool)
    .await)?)
}
