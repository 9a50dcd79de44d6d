//! `/webhooks`: endpoints that receive the store's events (admin keys).

use app::error::{AppError, AppResult};
use app::model::{Delivery, NewWebhook, Webhook, WebhookUpdate, WebhookWithSecret};
use app::services::{paging::PageRequest, webhooks};
use axum::extract::{OriginalUri, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::auth::Admin;
use super::extract::{Id, Json, Query};
use super::{AuthErrors, BodyErrors, ListErrors, PageQuery, location, paged};
use crate::AppState;

/// The ids of a delivery's path, each a 400 naming it when it is no integer.
fn ids(webhook_id: &str, delivery_id: &str) -> AppResult<(i64, i64)> {
    let id = |name: &str, raw: &str| {
        raw.parse::<i64>().map_err(|_| {
            AppError::new(app::error::ErrorCode::BadRequest, format!("{name} must be a 64-bit integer (got {raw:?})"))
        })
    };
    Ok((id("webhookId", webhook_id)?, id("deliveryId", delivery_id)?))
}

/// Register a webhook endpoint
///
/// The store POSTs each event of the types named (`["*"]`: all) to the URL, signed per
/// the Standard Webhooks specification with the secret in this answer, which is shown
/// only here (`rotate-secret` makes a new one). The URL is `https`, or `http` to a
/// public address: loopback, private, link-local, carrier-grade NAT, multicast and
/// cloud-metadata addresses are refused (`invalid_webhook_url`), now and again at each
/// delivery. Events from now on are delivered, at least once each.
#[utoipa::path(post, path = "/webhooks", tag = "Store", operation_id = "createWebhook",
    request_body = NewWebhook,
    responses(
        (status = 201, description = "Registered; `secret` is shown this once", body = WebhookWithSecret,
            headers(("Location" = String, description = "URL of the new endpoint"))),
        (status = 422, description = "A field breaks its rules (`validation_failed`), or the URL may not receive webhooks (`invalid_webhook_url`)", body = AppError),
        BodyErrors,
        AuthErrors,
    ))]
pub async fn create_webhook(
    _: Admin,
    State(state): State<AppState>,
    Json(new): Json<NewWebhook>,
) -> AppResult<impl IntoResponse> {
    let created = webhooks::create(&state.db, state.config.webhook_targets(), new).await?;
    let headers = location(format!("/webhooks/{}", created.webhook.id));
    Ok((StatusCode::CREATED, headers, [(axum::http::header::CACHE_CONTROL, "no-store")], axum::Json(created)))
}

/// List webhook endpoints
///
/// Every endpoint, by id, with the event types it takes and whether it is enabled (and,
/// when the store disabled it, why). Secrets are shown only when made.
#[utoipa::path(get, path = "/webhooks", tag = "Store", operation_id = "listWebhooks",
    responses(
        (status = 200, description = "Every endpoint, by id (their secrets never)", body = Vec<Webhook>),
        AuthErrors,
    ))]
pub async fn list_webhooks(_: Admin, State(state): State<AppState>) -> AppResult<axum::Json<Vec<Webhook>>> {
    webhooks::list(&state.db).await.map(axum::Json)
}

/// Find a webhook endpoint
///
/// One endpoint, as the list shows it.
#[utoipa::path(get, path = "/webhooks/{webhookId}", tag = "Store", operation_id = "getWebhook",
    params(("webhookId" = i64, Path, description = "Id of the endpoint", minimum = 1)),
    responses(
        (status = 200, description = "The endpoint", body = Webhook),
        (status = 400, description = "`webhookId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such endpoint (`not_found`)", body = AppError),
        AuthErrors,
    ))]
pub async fn get_webhook(_: Admin, State(state): State<AppState>, Id(id): Id) -> AppResult<axum::Json<Webhook>> {
    webhooks::get(&state.db, id).await.map(axum::Json)
}

/// Change a webhook endpoint
///
/// What the body names changes (`url`, `events`, `enabled`, `description`); the rest
/// stays. Disabling gives up its pending deliveries; enabling again delivers the events
/// from then on.
#[utoipa::path(patch, path = "/webhooks/{webhookId}", tag = "Store", operation_id = "updateWebhook",
    params(("webhookId" = i64, Path, description = "Id of the endpoint", minimum = 1)),
    request_body = WebhookUpdate,
    responses(
        (status = 200, description = "The endpoint as it is now", body = Webhook),
        (status = 404, description = "No such endpoint (`not_found`)", body = AppError),
        (status = 422, description = "A field breaks its rules (`validation_failed`), or the URL may not receive webhooks (`invalid_webhook_url`)", body = AppError),
        BodyErrors,
        AuthErrors,
    ))]
pub async fn update_webhook(
    _: Admin,
    State(state): State<AppState>,
    Id(id): Id,
    Json(change): Json<WebhookUpdate>,
) -> AppResult<axum::Json<Webhook>> {
    webhooks::update(&state.db, state.config.webhook_targets(), id, change).await.map(axum::Json)
}

/// Delete a webhook endpoint
///
/// No more deliveries; its delivery log goes with it.
#[utoipa::path(delete, path = "/webhooks/{webhookId}", tag = "Store", operation_id = "deleteWebhook",
    params(("webhookId" = i64, Path, description = "Id of the endpoint", minimum = 1)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "`webhookId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such endpoint (`not_found`)", body = AppError),
        AuthErrors,
    ))]
pub async fn delete_webhook(_: Admin, State(state): State<AppState>, Id(id): Id) -> AppResult<StatusCode> {
    webhooks::delete(&state.db, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Send a test event
///
/// A `ping` event, to this endpoint only, at once (enabled or not). Its attempt shows
/// in the delivery log like any other.
#[utoipa::path(post, path = "/webhooks/{webhookId}/test", tag = "Store", operation_id = "testWebhook",
    params(("webhookId" = i64, Path, description = "Id of the endpoint", minimum = 1)),
    responses(
        (status = 202, description = "Sent shortly; the pending attempt", body = Delivery),
        (status = 400, description = "`webhookId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such endpoint (`not_found`)", body = AppError),
        AuthErrors,
    ))]
pub async fn test_webhook(_: Admin, State(state): State<AppState>, Id(id): Id) -> AppResult<Response> {
    let delivery = webhooks::test(&state.db, id).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(delivery)).into_response())
}

/// Rotate a webhook's secret
///
/// A new secret, shown this once. The one before keeps signing too for 24 hours (the
/// `webhook-signature` header then carries both, space-separated), so a receiver can
/// switch without missing a delivery.
#[utoipa::path(post, path = "/webhooks/{webhookId}/rotate-secret", tag = "Store", operation_id = "rotateWebhookSecret",
    params(("webhookId" = i64, Path, description = "Id of the endpoint", minimum = 1)),
    responses(
        (status = 200, description = "The new secret, and until when the previous one signs too", body = WebhookWithSecret),
        (status = 400, description = "`webhookId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such endpoint (`not_found`)", body = AppError),
        AuthErrors,
    ))]
pub async fn rotate_webhook_secret(_: Admin, State(state): State<AppState>, Id(id): Id) -> AppResult<Response> {
    let rotated = webhooks::rotate_secret(&state.db, id).await?;
    Ok(([(axum::http::header::CACHE_CONTROL, "no-store")], axum::Json(rotated)).into_response())
}

/// List a webhook's deliveries
///
/// Every attempt to deliver an event to the endpoint, newest first: made (`succeeded`
/// or `failed`, with the endpoint's status, the time it took and what went wrong) or
/// still to make (`pending`, due at `nextAttemptAt`). A failed attempt is retried after
/// about 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then every 3 h, until a day after the
/// event. Paged like every list.
#[utoipa::path(get, path = "/webhooks/{webhookId}/deliveries", tag = "Store", operation_id = "listWebhookDeliveries",
    params(("webhookId" = i64, Path, description = "Id of the endpoint", minimum = 1), PageQuery),
    responses(
        (status = 200, description = "One page of attempts", body = Vec<Delivery>,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when there is a next page"))),
        (status = 400, description = "`webhookId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such endpoint (`not_found`)", body = AppError),
        ListErrors,
        AuthErrors,
    ))]
pub async fn list_webhook_deliveries(
    _: Admin,
    State(state): State<AppState>,
    uri: OriginalUri,
    Id(id): Id,
    Query(query): Query<PageQuery>,
) -> AppResult<Response> {
    let page = PageRequest::parse(query.limit.as_deref(), query.cursor.as_deref())?;
    Ok(paged(&uri, webhooks::deliveries(&state.db, id, page).await?))
}

/// Retry a delivery
///
/// Sends the delivery's event to the endpoint again now, as its next attempt (a pending
/// one is made due now).
#[utoipa::path(post, path = "/webhooks/{webhookId}/deliveries/{deliveryId}/retry", tag = "Store",
    operation_id = "retryWebhookDelivery",
    params(
        ("webhookId" = i64, Path, description = "Id of the endpoint", minimum = 1),
        ("deliveryId" = i64, Path, description = "Id of one of its deliveries", minimum = 1),
    ),
    responses(
        (status = 202, description = "Sent shortly; the pending attempt", body = Delivery),
        (status = 400, description = "An id is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such endpoint, or no such delivery of it (`not_found`)", body = AppError),
        (status = 409, description = "The endpoint is disabled (`invalid_transition`)", body = AppError),
        AuthErrors,
    ))]
pub async fn retry_webhook_delivery(
    _: Admin,
    State(state): State<AppState>,
    Path((webhook_id, delivery_id)): Path<(String, String)>,
) -> AppResult<Response> {
    let (webhook_id, delivery_id) = ids(&webhook_id, &delivery_id)?;
    let delivery = webhooks::retry(&state.db, webhook_id, delivery_id).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(delivery)).into_response())
}
