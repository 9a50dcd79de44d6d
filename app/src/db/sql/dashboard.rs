//! The staff dashboard's aggregates.

use super::on_pool;
use crate::db::Db;
use crate::error::AppResult;
use crate::model::PetStatus;

/// Pets and units in stock per status (statuses with no pet are absent).
pub async fn stock_by_status(db: &Db) -> AppResult<Vec<(PetStatus, i64, i64)>> {
    // PostgreSQL's SUM of BIGINTs is NUMERIC: cast back.
    Ok(on_pool!(db, |pool| sqlx::query_as(
        "SELECT p.status, COUNT(*), CAST(COALESCE(SUM(i.quantity), 0) AS BIGINT)
         FROM pets p JOIN inventory i ON i.pet_id = p.id GROUP BY p.status",
    )
    .fetch_all(pool)
    .await)?)
}

/// Orders placed in each hour of the day from `midnight`, as (hour, count), hours with
/// none absent.
pub async fn orders_per_hour(db: &Db, midnight: i64) -> AppResult<Vec<(i64, i64)>> {
    Ok(on_pool!(db, |pool| sqlx::query_as(
        "SELECT (created_at - $1) / 3600, COUNT(*) FROM orders
         WHERE created_at >= $1 AND created_at < $1 + 86400 GROUP BY 1",
    )
    .bind(midnight)
    .fetch_all(pool)
    .await)?)
}
