//! `/store/inventory`: stock per pet. Setting it recomputes the pet's status.

use app::error::{AppError, AppResult};
use app::model::{InventoryItem, InventoryUpdate};
use app::services::{inventory, paging::PageRequest};
use axum::extract::{OriginalUri, State};
use axum::response::Response;

use super::auth::{Admin, Customer};
use super::extract::{Id, Json, Query};
use super::{AuthErrors, BodyErrors, ListErrors, PageQuery, paged};
use crate::AppState;

/// List stock
///
/// One entry per pet, ordered by pet id, paged like `GET /pets`.
#[utoipa::path(get, path = "/store/inventory", tag = "Store", operation_id = "listInventory",
    params(PageQuery),
    responses(
        (status = 200, description = "One page of inventory entries", body = Vec<InventoryItem>,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when there is a next page"))),
        ListErrors,
        AuthErrors,
    ))]
pub async fn list_inventory(
    _: Customer,
    State(state): State<AppState>,
    uri: OriginalUri,
    Query(query): Query<PageQuery>,
) -> AppResult<Response> {
    let page = PageRequest::parse(query.limit.as_deref(), query.cursor.as_deref())?;
    Ok(paged(&uri, inventory::list(&state.db, page).await?))
}

/// Find a pet's stock
///
/// Any key. How many units of the pet are in stock, and its status.
#[utoipa::path(get, path = "/store/inventory/{petId}", tag = "Store", operation_id = "getInventory",
    params(("petId" = i64, Path, description = "Id of the pet", minimum = 1)),
    responses(
        (status = 200, description = "The pet's inventory entry", body = InventoryItem),
        (status = 400, description = "`petId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such pet (`not_found`)", body = AppError),
        AuthErrors,
    ))]
pub async fn get_inventory(
    _: Customer,
    State(state): State<AppState>,
    Id(id): Id,
) -> AppResult<axum::Json<InventoryItem>> {
    inventory::get(&state.db, id).await.map(axum::Json)
}

/// Set a pet's stock
///
/// A quantity above 0 makes the pet `available`; 0 makes it `pending` while open
/// orders hold it, else `sold`.
#[utoipa::path(put, path = "/store/inventory/{petId}", tag = "Store", operation_id = "setInventory",
    params(("petId" = i64, Path, description = "Id of the pet", minimum = 1)),
    request_body = InventoryUpdate,
    responses(
        (status = 200, description = "The updated entry", body = InventoryItem),
        (status = 404, description = "No such pet (`not_found`)", body = AppError),
        BodyErrors,
        AuthErrors,
    ))]
pub async fn set_inventory(
    _: Admin,
    State(state): State<AppState>,
    Id(id): Id,
    Json(update): Json<InventoryUpdate>,
) -> AppResult<axum::Json<InventoryItem>> {
    inventory::set(&state.db, id, update).await.map(axum::Json)
}
