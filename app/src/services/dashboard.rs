//! The figures behind the staff dashboard's charts.

use crate::db::{Db, sql};
use crate::error::AppResult;
use crate::model::{LOW_STOCK_LISTED, PetStatus, Sales, StatusStock};
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

/// Revenue today and this week (UTC; a week starts on Monday), the open orders and the
/// pets running low.
pub async fn sales(db: &Db, now: i64) -> AppResult<Sales> {
    let midnight = now - now.rem_euclid(86_400);
    let monday = monday_of(midnight);
    let tomorrow = midnight + 86_400;
    Ok(Sales {
        revenue_today: sql::dashboard::revenue_between(db, midnight, tomorrow).await?,
        revenue_this_week: sql::dashboard::revenue_between(db, monday, tomorrow).await?,
        open_orders: sql::orders::count_open(db).await?,
        low_stock: sql::dashboard::low_stock(db, LOW_STOCK_LISTED).await?,
    })
}

/// The midnight (UTC) of the Monday on or before the day starting at `midnight`.
fn monday_of(midnight: i64) -> i64 {
    // 1970-01-01 was a Thursday: days since then, plus 3, count from a Monday.
    midnight - (midnight / 86_400 + 3).rem_euclid(7) * 86_400
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_week_starts_on_monday() {
        // Thursday 2026-11-26 and Sunday 2026-11-29 are in the week of Monday 2026-11-23;
        // Monday 2026-11-30 starts the next.
        let (monday, thursday, sunday, next) = (1_795_392_000, 1_795_651_200, 1_795_910_400, 1_795_996_800);
        for (day, week) in [(thursday, monday), (monday, monday), (sunday, monday), (next, next)] {
            assert_eq!(super::monday_of(day), week, "{day}");
        }
    }
}
