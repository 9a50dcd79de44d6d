//! `/store/orders`: customers place, see and cancel their own orders; admins see all,
//! complete and cancel any.

use app::error::{AppError, AppResult, ErrorCode};
use app::model::{NewOrder, Order, OrderCompletion};
use app::services::{orders, paging::PageRequest, validate};
use axum::extract::{OriginalUri, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::IntoParams;

use super::auth::{Admin, Customer};
use super::extract::{Id, Json, Query};
use super::{AuthErrors, BodyErrors, ListErrors, location, paged};
use crate::AppState;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct OrderListQuery {
    /// Only completed (`true`) or open (`false`) orders.
    #[param(value_type = Option<bool>)]
    pub complete: Option<String>,
    /// Only orders for this pet.
    #[param(value_type = Option<i64>, minimum = 1)]
    pub pet_id: Option<String>,
    /// Page size, 1 to 100 (default 20).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100)]
    pub limit: Option<String>,
    /// Opaque cursor from the previous page's `Link: rel="next"` header.
    #[param(min_length = 1)]
    pub cursor: Option<String>,
}

/// Place an order
///
/// Reserves `quantity` units: the pet must be `available` with enough stock; its stock
/// drops, and when the last unit goes the pet becomes `pending`. Send an
/// `Idempotency-Key` header to make retries safe: the same key and body from the same
/// API key within 24 hours get the first answer and create nothing.
#[utoipa::path(post, path = "/store/orders", tag = "Store", operation_id = "placeOrder",
    request_body = NewOrder,
    params(("Idempotency-Key" = Option<String>, Header, description = "1 to 255 visible ASCII characters; retries with the same key and body replay the first answer for 24 hours",
        min_length = 1, max_length = 255, pattern = "^[!-~]{1,255}$")),
    responses(
        (status = 201, description = "Placed", body = Order, headers(("Location" = String, description = "URL of the order"))),
        (status = 409, description = "`pet_not_available`, `insufficient_stock`, or `idempotency_key_reused`", body = AppError),
        BodyErrors,
        AuthErrors,
    ))]
pub async fn place_order(
    Customer(caller): Customer,
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(new): Json<NewOrder>,
) -> AppResult<Response> {
    let idempotency_key = match headers.get("idempotency-key") {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .map_err(|_| AppError::new(ErrorCode::BadRequest, "Idempotency-Key must be visible ASCII"))?,
        ),
    };
    let order = orders::place(&state.db, state.clock.now(), caller, new, idempotency_key).await?;
    Ok((StatusCode::CREATED, location(format!("/store/orders/{}", order.id)), axum::Json(order)).into_response())
}

/// List orders
///
/// A customer key sees its own orders, an admin key all. Ordered by id, paged like
/// `GET /pets`.
#[utoipa::path(get, path = "/store/orders", tag = "Store", operation_id = "listOrders",
    params(OrderListQuery),
    responses(
        (status = 200, description = "One page of orders", body = Vec<Order>,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when there is a next page"))),
        ListErrors,
        AuthErrors,
    ))]
pub async fn list_orders(
    Customer(caller): Customer,
    State(state): State<AppState>,
    uri: OriginalUri,
    Query(query): Query<OrderListQuery>,
) -> AppResult<Response> {
    let filter = validate::order_filter(query.complete.as_deref(), query.pet_id.as_deref())?;
    let page = PageRequest::parse(query.limit.as_deref(), query.cursor.as_deref())?;
    Ok(paged(&uri, orders::list(&state.db, caller, &filter, page).await?))
}

/// Find an order
///
/// Customers see only their own orders: another's is 404.
#[utoipa::path(get, path = "/store/orders/{orderId}", tag = "Store", operation_id = "getOrder",
    params(("orderId" = i64, Path, description = "Id of the order", minimum = 1)),
    responses(
        (status = 200, description = "The order", body = Order),
        (status = 400, description = "`orderId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such order, or not yours (`not_found`)", body = AppError),
        AuthErrors,
    ))]
pub async fn get_order(
    Customer(caller): Customer,
    State(state): State<AppState>,
    Id(id): Id,
) -> AppResult<axum::Json<Order>> {
    orders::get(&state.db, caller, id).await.map(axum::Json)
}

/// Complete an order (admin)
///
/// Body `{"complete": true, "shipDate"?}`. The ship date defaults to the requested one,
/// else the completion time. A pet with no stock and no other open order becomes `sold`.
#[utoipa::path(patch, path = "/store/orders/{orderId}", tag = "Store", operation_id = "completeOrder",
    params(("orderId" = i64, Path, description = "Id of the order", minimum = 1)),
    request_body = OrderCompletion,
    responses(
        (status = 200, description = "The completed order", body = Order),
        (status = 404, description = "No such order (`not_found`)", body = AppError),
        (status = 409, description = "Already completed (`order_completed`)", body = AppError),
        BodyErrors,
        AuthErrors,
    ))]
pub async fn complete_order(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Id(id): Id,
    Json(completion): Json<OrderCompletion>,
) -> AppResult<axum::Json<Order>> {
    orders::complete(&state.db, state.clock.now(), caller, id, completion).await.map(axum::Json)
}

/// Cancel an order
///
/// Cancels an open order (a customer its own, an admin any); its units go back to
/// stock and a `pending` pet with stock is `available` again.
#[utoipa::path(delete, path = "/store/orders/{orderId}", tag = "Store", operation_id = "cancelOrder",
    params(("orderId" = i64, Path, description = "Id of the order", minimum = 1)),
    responses(
        (status = 204, description = "Cancelled"),
        (status = 400, description = "`orderId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such order, or not yours (`not_found`)", body = AppError),
        (status = 409, description = "Completed orders cannot be cancelled (`order_completed`)", body = AppError),
        AuthErrors,
    ))]
pub async fn cancel_order(
    Customer(caller): Customer,
    State(state): State<AppState>,
    Id(id): Id,
) -> AppResult<StatusCode> {
    let cancellation = orders::cancel(&state.db, state.clock.now(), caller, id).await?;
    if cancellation.already {
        // Cancelled orders are gone from the API.
        return Err(AppError::not_found("order", id));
    }
    Ok(StatusCode::NO_CONTENT)
}
