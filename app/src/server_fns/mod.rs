//! Server functions: the storefront's only way to the data. Each one is a thin call
//! into `services`, the same code the REST API runs. Mounted under `/_app`, apart
//! from the public REST API under `/api/v1`.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::{CategorySummary, Page, PetCard};

pub mod docs;
pub mod staff;

pub use staff::*;

/// Cards per catalog page.
pub const CATALOG_PAGE_SIZE: u32 = 12;

#[cfg(feature = "ssr")]
pub(crate) mod call;

/// One page of the catalog. The arguments are the page's raw query values, so a bad
/// one gets the same 422 message as on the REST API.
#[server(prefix = "/_app", endpoint = "catalog")]
pub async fn catalog(
    status: Option<String>,
    category: Option<String>,
    q: Option<String>,
    cursor: Option<String>,
) -> Result<Page<PetCard>, AppError> {
    use crate::services::{paging::PageRequest, pets, validate};
    let filter = validate::pet_filter(status.as_deref(), category.as_deref(), q.as_deref(), None)?;
    let page = PageRequest { limit: CATALOG_PAGE_SIZE, ..PageRequest::parse(None, cursor.as_deref())? };
    pets::list_cards(&call::Call::new()?.pool, &filter, page).await
}

#[server(prefix = "/_app", endpoint = "pet")]
pub async fn pet(id: i64) -> Result<PetCard, AppError> {
    crate::services::pets::card(&call::Call::new()?.pool, id).await
}

#[server(prefix = "/_app", endpoint = "categories")]
pub async fn categories() -> Result<Vec<CategorySummary>, AppError> {
    crate::services::categories::summaries(&call::Call::new()?.pool).await
}

/// Who is signed in on this browser, if anyone.
#[server(prefix = "/_app", endpoint = "viewer")]
pub async fn viewer() -> Result<Option<crate::model::Caller>, AppError> {
    call::Call::new()?.caller().await
}

/// Signs in with a key: checks it like the REST API does, then starts a session.
#[server(prefix = "/_app", endpoint = "sign_in")]
pub async fn sign_in(key: String) -> Result<(), AppError> {
    use crate::services::auth::{Authenticator, Presented};
    let key = key.trim();
    if key.is_empty() {
        return Err(AppError::validation("key", "paste the API key you were given"));
    }
    let call = call::Call::new()?;
    let auth = call::service::<Authenticator>("authenticator")?;
    let caller = auth.authenticate(Presented::Key(key)).await?.ok_or_else(crate::services::auth::invalid_key)?;
    call.start_session(caller.key_id).await?;
    leptos_axum::redirect("/");
    Ok(())
}

/// Signs up for a Free key (limited per IP, like `POST /api/v1/keys`) and signs in.
#[server(prefix = "/_app", endpoint = "sign_up")]
pub async fn sign_up(name: Option<String>) -> Result<crate::model::CreatedApiKey, AppError> {
    use crate::services::{keys, limits::RateLimiter};
    let call = call::Call::new()?;
    let limiter = call::service::<std::sync::Arc<RateLimiter>>("limiter")?;
    let name = name.filter(|n| !n.trim().is_empty());
    let created = keys::sign_up(&call.pool, &limiter, call.now(), &call.ip, crate::model::SignUp { name }).await?;
    call.start_session(created.key_info.id).await?;
    Ok(created)
}

#[server(prefix = "/_app", endpoint = "sign_out")]
pub async fn sign_out() -> Result<(), AppError> {
    call::Call::new()?.end_session().await?;
    leptos_axum::redirect("/");
    Ok(())
}

/// An order as the storefront lists it, with its pet's name.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OrderView {
    pub order: crate::model::Order,
    pub pet_name: Option<String>,
}

/// Orders a pet as the signed-in shopper (the same service call as `POST /store/orders`).
#[server(prefix = "/_app", endpoint = "place_order")]
pub async fn place_order(pet_id: i64, quantity: i64) -> Result<crate::model::Order, AppError> {
    use crate::model::{NewOrder, Role};
    let call = call::Call::new()?;
    let caller = call.require(Role::Customer).await?;
    crate::services::orders::place(&call.pool, call.now(), caller, NewOrder { pet_id, quantity, ship_date: None }, None)
        .await
}

/// The signed-in shopper's orders, or every order for staff, newest first; the
/// filters are the raw values of `GET /store/orders`'s (`complete`, `petId`).
#[server(prefix = "/_app", endpoint = "orders")]
pub async fn list_orders(complete: Option<String>, pet_id: Option<String>) -> Result<Vec<OrderView>, AppError> {
    use crate::model::{PetFilter, Role};
    use crate::services::{orders, paging::PageRequest, pets, validate};
    let call = call::Call::new()?;
    let caller = call.require(Role::Customer).await?;
    let filter = validate::order_filter(complete.as_deref(), pet_id.as_deref())?;
    let pool = &call.pool;
    let mut page = PageRequest { limit: 100, after: 0 };
    let mut views = Vec::new();
    loop {
        let found = orders::list(pool, caller, &filter, page).await?;
        // One query for the names of this page's pets (at most 100 ids, the filter's cap).
        let mut ids: Vec<i64> = found.items.iter().map(|order| order.pet_id).collect();
        ids.sort_unstable();
        ids.dedup();
        let names = if ids.is_empty() {
            Vec::new()
        } else {
            let filter = PetFilter { ids: Some(ids), ..PetFilter::default() };
            pets::list(pool, &filter, PageRequest { limit: 100, after: 0 }).await?.items
        };
        for order in &found.items {
            let pet_name = names.iter().find(|pet| pet.id == order.pet_id).map(|pet| pet.name.clone());
            views.push(OrderView { order: order.clone(), pet_name });
        }
        match (found.next_cursor, found.items.last()) {
            (Some(_), Some(last)) => page.after = last.id,
            _ => break,
        }
    }
    views.reverse();
    Ok(views)
}

#[server(prefix = "/_app", endpoint = "cancel_order")]
pub async fn cancel_order(id: i64) -> Result<(), AppError> {
    let call = call::Call::new()?;
    let caller = call.require(crate::model::Role::Customer).await?;
    crate::services::orders::cancel(&call.pool, call.now(), caller, id).await
}

/// Staff: fulfils an order now.
#[server(prefix = "/_app", endpoint = "complete_order")]
pub async fn complete_order(id: i64) -> Result<crate::model::Order, AppError> {
    use crate::model::{OrderCompletion, Role};
    let call = call::Call::new()?;
    let caller = call.require(Role::Admin).await?;
    let completion = OrderCompletion { complete: true, ship_date: None };
    crate::services::orders::complete(&call.pool, call.now(), caller, id, completion).await
}
