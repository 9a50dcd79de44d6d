//! The staff dashboard's aggregates.

use super::on_pool;
use crate::db::Db;
use crate::error::AppResult;
use crate::model::{LowStockPet, PetStatus};

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

/// The revenue of the orders placed from `from` to before `to` (Unix seconds on whole
/// hours), less those cancelled since: at most a week of the hourly totals.
pub async fn revenue_between(db: &Db, from: i64, to: i64) -> AppResult<i64> {
    Ok(on_pool!(db, |pool| {
        sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(revenue), 0) AS BIGINT) FROM order_hours WHERE hour >= $1 / 3600 AND hour < $2 / 3600",
    )
    .bind(from)
    .bind(to)
    .fetch_one(pool)
    .await
    })?)
}

/// Pets for sale with 1 or 2 units left (`model::LOW_STOCK`), fewest first (the newest
/// first among equals, as the freshest stock is the likeliest to be meant): read
/// through the partial index `inventory_low`, whose predicate this repeats as it is.
/// `CROSS JOIN` keeps SQLite reading the inventory first (its planner would otherwise
/// walk every pet for sale by `pets_status`); PostgreSQL plans it as the inner join it is.
pub async fn low_stock(db: &Db, limit: i64) -> AppResult<Vec<LowStockPet>> {
    Ok(on_pool!(db, |pool| sqlx::query_as(
        "SELECT p.id, p.name, i.quantity FROM inventory i CROSS JOIN pets p
         WHERE p.id = i.pet_id AND i.quantity BETWEEN 1 AND 2 AND p.status = 'available'
         ORDER BY i.quantity, i.pet_id DESC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await)?)
}
