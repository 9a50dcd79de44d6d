//! Server functions: the storefront's only way to the data. Each one is a thin call
//! into `services`, the same code the REST API runs. Mounted under `/_app`, apart
//! from the public REST API under `/api/v1`.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::{CategorySummary, Page, PetCard};

/// Cards per catalog page.
pub const CATALOG_PAGE_SIZE: u32 = 12;

#[cfg(feature = "ssr")]
fn pool() -> Result<crate::db::Pool, AppError> {
    use_context::<crate::db::Pool>().ok_or_else(|| AppError::internal("server function", "no database pool in context"))
}

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
    pets::list_cards(&pool()?, &filter, page).await
}

#[server(prefix = "/_app", endpoint = "pet")]
pub async fn pet(id: i64) -> Result<PetCard, AppError> {
    crate::services::pets::card(&pool()?, id).await
}

#[server(prefix = "/_app", endpoint = "categories")]
pub async fn categories() -> Result<Vec<CategorySummary>, AppError> {
    crate::services::categories::summaries(&pool()?).await
}
