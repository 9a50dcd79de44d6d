//! The figures behind the staff dashboard's charts.

use crate::db::{Db, sql};
use crate::error::AppResult;
use crate::model::{PetStatus, StatusStock};
use strum::VariantArray;

/// Pets and units in stock for each status (every status, zeros included).
pub async fn stock_by_status(db: &Db) -> AppResult<Vec<StatusStock>> {
    let rows = sql::dashboard::stock_by_status(db).await?;
    Ok(PetStatus::VARIANTS
        .iter()
        .copied()
        .map(|status| {
            let (pets, units) =
                rows.iter().find(|row| row.0 == status).map_or((0, 0), |&(_, pets, units)| (pets, units));
            StatusStock { status, pets, units }
        })
        .collect())
}

/// Orders placed in each hour of today (UTC) so far, cancelled ones included: 24 counts.
pub async fn orders_per_hour_today(db: &Db, now: i64) -> AppResult<Vec<i64>> {
    let midnight = now - now.rem_euclid(86_400);
    let rows = sql::dashboard::orders_per_hour(db, midnight).await?;
    let mut hours = vec![0; 24];
    for (hour, count) in rows {
        if let Some(slot) = usize::try_from(hour).ok().and_then(|h| hours.get_mut(h)) {
            *slot = count;
        }
    }
    Ok(hours)
}
