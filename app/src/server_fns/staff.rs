//! The staff console's server functions. Every one checks for an admin session first,
//! with the same role rule as the REST API, so the console is refused on the server and
//! not merely hidden. Each is a thin call into the service layer.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::{ApiKey, BackupStatus, Category, CreatedApiKey, Page, Pet, PetCard, StatusStock, TrafficSeries};

#[cfg(feature = "ssr")]
use super::call::Call;

/// Rows per page of the inventory table.
pub const INVENTORY_PAGE_SIZE: u32 = 100;
/// Keys drawn beside the whole API on the dashboard.
pub const BUSIEST_KEYS: usize = 3;

/// A key as the console lists it, with today's request count.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KeyUsage {
    pub key: ApiKey,
    pub used_today: i64,
}

/// What the dashboard draws.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Dashboard {
    /// Revenue, open orders and pets running low: what an owner looks for first.
    pub sales: crate::model::Sales,
    pub stock: Vec<StatusStock>,
    /// Orders placed in each UTC hour of today (24 counts).
    pub orders_per_hour: Vec<i64>,
    /// The UTC hour now (0 to 23): later hours have not happened yet.
    pub hour_now: u32,
    /// API requests per minute over the last hour, the whole API.
    pub api: TrafficSeries,
    /// The same for the busiest keys of the hour.
    pub busiest: Vec<TrafficSeries>,
    /// How the scheduled backups stand (`None` on a PostgreSQL store).
    pub backups: Option<BackupStatus>,
}

/// The call, once admitted and its session known to be an admin's.
#[cfg(feature = "ssr")]
pub(super) async fn staff() -> Result<Call, AppError> {
    let call = Call::admit().await?;
    call.require(crate::model::Role::Admin)?;
    Ok(call)
}

/// A form's id field: a positive integer, or a validation error naming `field`.
#[cfg(feature = "ssr")]
fn form_id(field: &str, raw: &str) -> Result<i64, AppError> {
    raw.trim().parse::<i64>().ok().filter(|id| *id > 0).ok_or_else(|| AppError::validation(field, "must be chosen"))
}

/// A form's whole number in `min..=max`, or a validation error naming `field` that says
/// which bound it broke (a bound such as 4,294,967,295 means nothing to staff until
/// it is the one they passed).
#[cfg(feature = "ssr")]
fn form_number(field: &str, raw: &str, min: i64, max: i64) -> Result<i64, AppError> {
    use crate::model::thousands;
    let number = raw.trim().parse::<i64>().map_err(|_| AppError::validation(field, "must be a whole number"))?;
    if number < min {
        Err(AppError::validation(field, format!("must be at least {min}")))
    } else if number > max {
        Err(AppError::validation(field, format!("must be at most {}", thousands(max.unsigned_abs()))))
    } else {
        Ok(number)
    }
}

/// One of an enum's names, or a validation error naming `field`.
#[cfg(feature = "ssr")]
fn form_name<T: serde::de::DeserializeOwned>(field: &str, raw: &str) -> Result<T, AppError> {
    serde_json::from_value(serde_json::Value::String(raw.trim().to_owned()))
        .map_err(|err| AppError::validation(field, err.to_string()))
}

#[server(prefix = "/_app", endpoint = "staff_dashboard")]
pub async fn load_dashboard() -> Result<Dashboard, AppError> {
    use crate::services::{dashboard, keys};
    let call = staff().await?;
    let (db, now) = (&call.db, call.now());
    let (api, mut busiest) = call.traffic.last_hour(BUSIEST_KEYS);
    for series in &mut busiest {
        if let Some(id) = series.key_id {
            series.label = match keys::get(db, id).await {
                Ok(row) => format!("{} (key {id})", row.name),
                Err(_) => format!("key {id}"),
            };
        }
    }
    Ok(Dashboard {
        sales: dashboard::sales(db, now).await?,
        stock: dashboard::stock_by_status(db).await?,
        orders_per_hour: dashboard::orders_per_hour_today(db, now).await?,
        hour_now: u32::try_from(now.rem_euclid(86_400) / 3_600).unwrap_or(0),
        api,
        busiest,
        backups: crate::services::backups::status(db, now).await?,
    })
}

/// Creates a pet (no `id`) or replaces one, by the rules of `POST`/`PUT /pets`. An
/// empty `status` keeps the pet's status (or makes a new one `available`). The form
/// always shows the description and the price, so what it sends is what the pet gets:
/// an empty one removes it. The price is typed in the currency's major units
/// (`12.50`). The page is shown again, with the change (and what was done, in the
/// flash).
#[server(prefix = "/_app", endpoint = "staff_save_pet")]
pub async fn save_pet(
    id: Option<i64>,
    name: String,
    category_id: String,
    status: Option<String>,
    description: Option<String>,
    price: Option<String>,
) -> Result<Pet, AppError> {
    use crate::model::{Field, NewPet};
    use crate::services::pets;
    let call = staff().await?;
    let status = status.filter(|s| !s.is_empty()).map(|s| form_name("status", &s)).transpose()?;
    let description = Field::from_option(description.filter(|text| !text.trim().is_empty()));
    let price = match price.as_deref().map(str::trim).filter(|typed| !typed.is_empty()) {
        None => Field::Clear,
        Some(typed) => {
            Field::Set(call.currency.parse(typed).map_err(|problem| AppError::validation("price", problem))?)
        }
    };
    let new = NewPet { name, category_id: form_id("categoryId", &category_id)?, status, description, price };
    let saved = match id {
        Some(id) => pets::replace(&call.db, id, new).await?,
        None => pets::create(&call.db, new).await?,
    };
    call.back_to_page("/admin/pets");
    Ok(saved)
}

/// Removes a pet's photo (uploading one goes to `PUT /api/v1/pets/{petId}/photo`, which
/// takes the image itself).
#[server(prefix = "/_app", endpoint = "staff_remove_photo")]
pub async fn remove_photo(id: i64) -> Result<(), AppError> {
    let call = staff().await?;
    crate::services::photos::remove(&call.db, id).await?;
    call.back_to_page("/admin/pets");
    Ok(())
}

#[server(prefix = "/_app", endpoint = "staff_delete_pet")]
pub async fn delete_pet(id: i64) -> Result<(), AppError> {
    let call = staff().await?;
    crate::services::pets::delete(&call.db, id).await?;
    leptos_axum::redirect("/admin/pets");
    Ok(())
}

/// Creates a category (no `id`; the page is shown again, with it in the list) or
/// renames and describes one (in place).
#[server(prefix = "/_app", endpoint = "staff_save_category")]
pub async fn save_category(id: Option<i64>, name: String, description: Option<String>) -> Result<Category, AppError> {
    use crate::model::NewCategory;
    use crate::services::categories;
    let call = staff().await?;
    let new = NewCategory { name, description: description.filter(|d| !d.trim().is_empty()) };
    match id {
        Some(id) => categories::replace(&call.db, id, new).await,
        None => {
            let created = categories::create(&call.db, new).await?;
            call.back_to_page("/admin/categories");
            Ok(created)
        }
    }
}

#[server(prefix = "/_app", endpoint = "staff_delete_category")]
pub async fn delete_category(id: i64) -> Result<(), AppError> {
    let call = staff().await?;
    crate::services::categories::delete(&call.db, id).await?;
    call.back_to_page("/admin/categories");
    Ok(())
}

/// One page of every pet's stock and status, by id.
#[server(prefix = "/_app", endpoint = "staff_inventory")]
pub async fn inventory(cursor: Option<String>) -> Result<Page<PetCard>, AppError> {
    use crate::model::PetFilter;
    use crate::services::{paging::PageRequest, pets};
    let call = staff().await?;
    let page = PageRequest { limit: INVENTORY_PAGE_SIZE, ..PageRequest::parse(None, cursor.as_deref())? };
    pets::list_cards(&call.db, &PetFilter::default(), page).await
}

/// Sets a pet's stock, by the rules of `PUT /store/inventory/{petId}`.
#[server(prefix = "/_app", endpoint = "staff_set_stock")]
pub async fn set_stock(pet_id: i64, quantity: String) -> Result<crate::model::InventoryItem, AppError> {
    use crate::model::InventoryUpdate;
    let call = staff().await?;
    let quantity = form_number("quantity", &quantity, 0, 1_000_000)?;
    let item = crate::services::inventory::set(&call.db, pet_id, InventoryUpdate { quantity }).await?;
    // The row's status and "low" mark follow: the page is shown again.
    call.back_to_page("/admin/inventory");
    Ok(item)
}

/// Every key with today's usage.
#[server(prefix = "/_app", endpoint = "admin_keys")]
pub async fn admin_keys() -> Result<Vec<KeyUsage>, AppError> {
    use crate::services::{access::Subject, keys};
    let call = staff().await?;
    let rows = keys::list_all(&call.db).await?;
    let mut usage = Vec::with_capacity(rows.len());
    for row in &rows {
        let used_today = call.access.limiter.used_today(&Subject::Key(row.id).id()).await?;
        usage.push(KeyUsage { key: row.to_api(), used_today });
    }
    Ok(usage)
}

/// Creates a key as an admin's `POST /keys` does; the limits count only for Enterprise.
#[server(prefix = "/_app", endpoint = "staff_create_key")]
pub async fn create_key(
    name: String,
    role: String,
    plan: String,
    per_minute: Option<String>,
    per_day: Option<String>,
) -> Result<CreatedApiKey, AppError> {
    use crate::model::{Limits, NewApiKey, Plan};
    let call = staff().await?;
    let plan: Plan = form_name("plan", &plan)?;
    let limits = if plan == Plan::Enterprise {
        let per_minute = form_number("perMinute", per_minute.as_deref().unwrap_or(""), 1, u32::MAX.into())?;
        let per_day = form_number("perDay", per_day.as_deref().unwrap_or(""), 1, u32::MAX.into())?;
        Some(Limits { per_minute: per_minute as u32, per_day: per_day as u32 })
    } else {
        None
    };
    let new = NewApiKey { name, role: form_name("role", &role)?, plan, limits };
    let created = crate::services::keys::create(&call.db, call.now(), new).await?;
    call.no_store();
    // Shown again with the key in the list; the secret goes along once, in the flash.
    call.back_to_page("/admin/keys");
    Ok(created)
}

/// A one-time sign-in link for a key's account (`services::passkeys::issue_sign_in_link`),
/// shown once: the page is shown again with it (`no-store`, carried once in the flash).
#[server(prefix = "/_app", endpoint = "staff_sign_in_link")]
pub async fn sign_in_link(id: i64) -> Result<String, AppError> {
    let call = staff().await?;
    let link = crate::services::passkeys::issue_sign_in_link(&call.db, &call.passkeys, call.now(), id).await?;
    call.no_store();
    call.back_to_page("/admin/keys");
    Ok(link)
}

/// Revokes a key: its next API call fails and its browser sessions end.
#[server(prefix = "/_app", endpoint = "staff_revoke_key")]
pub async fn revoke_key(id: i64) -> Result<ApiKey, AppError> {
    let call = staff().await?;
    let revoked = call.access.auth.revoke(id).await?.to_api();
    call.back_to_page("/admin/keys");
    Ok(revoked)
}
