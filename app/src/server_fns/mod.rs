//! Server functions: the storefront's only way to the data. Each one is a thin call
//! into `services`, the same code the REST API runs. Mounted under `/_app`, apart
//! from the public REST API under `/api/v1`.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::{CategorySummary, Page, PetCard};

pub mod accounts;
pub mod docs;
pub mod staff;
pub mod webhooks;

pub use accounts::*;
pub use staff::*;
pub use webhooks::*;

/// Where the server functions are mounted (`#[server(prefix = …)]` of every one).
pub const PREFIX: &str = "/_app/";

/// Cards per catalog page.
pub const CATALOG_PAGE_SIZE: u32 = 12;

#[cfg(feature = "ssr")]
pub(crate) mod call;
pub mod flash;

/// One page of the catalog. The arguments are the page's raw query values, so a bad
/// one gets the same 422 message as on the REST API; `q` searches names, categories and
/// descriptions (the REST API's, names only); `sort` is one of `PetSort`'s names (none:
/// the order pets were added in).
#[server(prefix = "/_app", endpoint = "catalog")]
pub async fn catalog(
    status: Option<String>,
    category: Option<String>,
    q: Option<String>,
    sort: Option<String>,
    cursor: Option<String>,
) -> Result<Page<PetCard>, AppError> {
    use crate::model::PetSort;
    use crate::services::{pets, validate};
    let filter =
        validate::pet_filter(status.as_deref(), category.as_deref(), q.as_deref(), None)?.searching_everywhere();
    let sort = PetSort::parse(sort.as_deref())
        .ok_or_else(|| AppError::validation("sort", "must be one of name, price, newest"))?;
    pets::browse(&call::Call::admit().await?.db, &filter, sort, CATALOG_PAGE_SIZE, cursor.as_deref()).await
}

#[server(prefix = "/_app", endpoint = "pet")]
pub async fn pet(id: i64) -> Result<PetCard, AppError> {
    crate::services::pets::card(&call::Call::admit().await?.db, id).await
}

/// The stock and status of the pets a page shows (`pets`: their ids, comma-separated,
/// at most 100), read again when its live stream opens after missing events. A pet
/// since deleted is left out.
#[server(prefix = "/_app", endpoint = "stock_now")]
pub async fn stock_now(pets: String) -> Result<Vec<crate::model::InventoryItem>, AppError> {
    use crate::services::{inventory, validate};
    let ids = validate::id_list("pets", &pets, inventory::STOCK_READ_MAX)?;
    inventory::stock_of_pets(&call::Call::admit().await?.db, &ids).await
}

/// Other pets of `id`'s category a shopper could order instead.
#[server(prefix = "/_app", endpoint = "more_like")]
pub async fn more_like(id: i64) -> Result<Vec<PetCard>, AppError> {
    use crate::services::pets;
    let call = call::Call::admit().await?;
    pets::more_like(&call.db, &pets::card(&call.db, id).await?).await
}

#[server(prefix = "/_app", endpoint = "categories")]
pub async fn categories() -> Result<Vec<CategorySummary>, AppError> {
    crate::services::categories::summaries(&call::Call::admit().await?.db).await
}

/// Who is signed in on this browser, if anyone.
#[server(prefix = "/_app", endpoint = "viewer")]
pub async fn viewer() -> Result<Option<crate::model::Caller>, AppError> {
    Ok(call::Call::admit().await?.caller)
}

/// Signs in with a key: checks it like the REST API does (a wrong one counts as a
/// failed attempt from this address; a banned key cannot sign in), starts a session
/// and goes back to `next`, the page the visitor came from (this site's own paths
/// only), or the catalog.
#[server(prefix = "/_app", endpoint = "sign_in")]
pub async fn sign_in(key: String, next: Option<String>) -> Result<(), AppError> {
    let call = call::Call::admit_for_sign_in().await?;
    let key = key.trim();
    if key.is_empty() {
        call.access.failed_sign_in(call.client).await?;
        return Err(AppError::validation("key", "paste the API key you were given"));
    }
    let caller = call.access.sign_in(key, call.client).await?;
    call.start_session(caller.key_id, crate::services::sessions::Opened::Key(key)).await?;
    leptos_axum::redirect(crate::paths::return_path(next.as_deref()));
    Ok(())
}

/// Signs up for a Free key (limited per address, like `POST /api/v1/keys`) and signs in.
#[server(prefix = "/_app", endpoint = "sign_up")]
pub async fn sign_up(name: Option<String>) -> Result<crate::model::CreatedApiKey, AppError> {
    let call = call::Call::admit().await?;
    let name = name.filter(|n| !n.trim().is_empty());
    let request = crate::model::SignUp { name };
    let created =
        crate::services::keys::sign_up(&call.db, &call.access.limiter, call.now(), call.client, request).await?;
    call.start_session(created.key_info.id, crate::services::sessions::Opened::SignUp).await?;
    call.no_store();
    Ok(created)
}

/// Signs out and goes back to `next` (as `sign_in`).
#[server(prefix = "/_app", endpoint = "sign_out")]
pub async fn sign_out(next: Option<String>) -> Result<(), AppError> {
    call::Call::admit().await?.end_session().await?;
    leptos_axum::redirect(&crate::paths::signed_out_path(next.as_deref()));
    Ok(())
}

/// Orders a pet as the signed-in shopper (the same service call as `POST
/// /store/orders`). The order form carries an idempotency key made when it was
/// rendered, so a form sent twice (a double click, Back and send again) places one
/// order and the repeat is answered with it, as the REST API answers a retry.
#[server(prefix = "/_app", endpoint = "place_order")]
pub async fn place_order(
    pet_id: i64,
    // As typed: "2.0" or "" must be refused in words, not fail to be read.
    quantity: String,
    idempotency_key: Option<String>,
) -> Result<crate::model::Order, AppError> {
    use crate::model::{NewOrder, Role, typed_quantity};
    let call = call::Call::admit().await?;
    let caller = call.require(Role::Customer)?;
    let quantity = typed_quantity(&quantity).map_err(|problem| AppError::validation("quantity", problem))?;
    let order = NewOrder { pet_id, quantity, ship_date: None };
    let idempotency_key = idempotency_key.filter(|key| !key.is_empty());
    crate::services::orders::place(&call.db, call.now(), caller, order, idempotency_key.as_deref()).await
}

/// Orders per page of the order history.
pub const ORDERS_PAGE_SIZE: u32 = 20;

/// The signed-in shopper's orders, or every order for staff: newest first, cancelled
/// ones included (marked), one page at a time. The filters are the page's raw query
/// values (`state`: open, completed or cancelled; `pet`: part of a pet's name).
#[server(prefix = "/_app", endpoint = "orders")]
pub async fn list_orders(
    state: Option<String>,
    pet: Option<String>,
    cursor: Option<String>,
) -> Result<Page<crate::model::OrderView>, AppError> {
    use crate::model::Role;
    use crate::services::{orders, paging::PageRequest, validate};
    let call = call::Call::admit().await?;
    let caller = call.require(Role::Customer)?;
    let filter = validate::order_history_filter(state.as_deref(), pet.as_deref())?;
    let page = PageRequest { limit: ORDERS_PAGE_SIZE, ..PageRequest::parse(None, cursor.as_deref())? };
    orders::history(&call.db, caller, &filter, page).await
}

/// Cancels an order (a shopper's own; staff any). Cancelling one that is already
/// cancelled is answered with it, not refused (a second click, a second tab).
#[server(prefix = "/_app", endpoint = "cancel_order")]
pub async fn cancel_order(id: i64) -> Result<crate::model::Cancellation, AppError> {
    let call = call::Call::admit().await?;
    let caller = call.require(crate::model::Role::Customer)?;
    let cancellation = crate::services::orders::cancel(&call.db, call.now(), caller, id).await?;
    // The list is drawn on the server: shown again, the order is marked in its row.
    call.back_to_page("/orders");
    Ok(cancellation)
}

/// Staff: fulfils an order now.
#[server(prefix = "/_app", endpoint = "complete_order")]
pub async fn complete_order(id: i64) -> Result<crate::model::Order, AppError> {
    use crate::model::{OrderCompletion, Role};
    let call = call::Call::admit().await?;
    let caller = call.require(Role::Admin)?;
    let completion = OrderCompletion { complete: true, ship_date: None };
    let order = crate::services::orders::complete(&call.db, call.now(), caller, id, completion).await?;
    call.back_to_page("/orders");
    Ok(order)
}
