//! The console's webhooks page: endpoints and their deliveries. Each server function
//! checks for an admin session and calls `services::webhooks`, as the REST API's
//! `/webhooks` handlers do; after a change the page is shown again (with a secret, the
//! answer goes along once in the flash, as a new key's does).

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::{Delivery, Page, Webhook, WebhookWithSecret};

#[cfg(feature = "ssr")]
use super::staff::{form_id, staff};

/// Deliveries per page of an endpoint's log.
pub const DELIVERIES_PAGE_SIZE: u32 = 50;

/// An endpoint and one page of its deliveries, newest first.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EndpointLog {
    pub webhook: Webhook,
    pub deliveries: Page<Delivery>,
}

/// The event types a form's checkboxes named: "All events" (`*`) wins over the others
/// ticked with it; none ticked is the service's refusal ("at least one").
#[cfg(feature = "ssr")]
fn ticked(events: Option<Vec<String>>) -> Vec<String> {
    let events = events.unwrap_or_default();
    if events.iter().any(|kind| kind == "*") { vec!["*".to_owned()] } else { events }
}

/// Every endpoint, by id.
#[server(prefix = "/_app", endpoint = "staff_webhooks")]
pub async fn admin_webhooks() -> Result<Vec<Webhook>, AppError> {
    crate::services::webhooks::list(&staff().await?.db).await
}

/// One endpoint and a page of its deliveries.
#[server(prefix = "/_app", endpoint = "staff_webhook_log")]
pub async fn webhook_log(id: i64, cursor: Option<String>) -> Result<EndpointLog, AppError> {
    use crate::services::{paging::PageRequest, webhooks};
    let call = staff().await?;
    let page = PageRequest { limit: DELIVERIES_PAGE_SIZE, ..PageRequest::parse(None, cursor.as_deref())? };
    let webhook = webhooks::get(&call.db, id).await?;
    Ok(EndpointLog { deliveries: webhooks::deliveries(&call.db, id, page).await?, webhook })
}

/// Registers an endpoint (`POST /webhooks`); its secret is shown once.
#[server(prefix = "/_app", endpoint = "staff_create_webhook")]
pub async fn create_webhook(
    url: String,
    events: Option<Vec<String>>,
    description: Option<String>,
) -> Result<WebhookWithSecret, AppError> {
    use crate::model::NewWebhook;
    let call = staff().await?;
    let new = NewWebhook { url, events: ticked(events), description: description.filter(|d| !d.trim().is_empty()) };
    let created = crate::services::webhooks::create(&call.db, call.webhook_targets, new).await?;
    call.no_store();
    call.back_to_page("/admin/webhooks");
    Ok(created)
}

/// Changes an endpoint's URL, event types and description (`PATCH /webhooks/{id}`);
/// an empty description removes it.
#[server(prefix = "/_app", endpoint = "staff_edit_webhook")]
pub async fn edit_webhook(
    id: i64,
    url: String,
    events: Option<Vec<String>>,
    description: Option<String>,
) -> Result<Webhook, AppError> {
    use crate::model::{Field, WebhookUpdate};
    let call = staff().await?;
    let description = Field::from_option(description.filter(|d| !d.trim().is_empty()));
    let change = WebhookUpdate { url: Some(url), events: Some(ticked(events)), enabled: None, description };
    let saved = crate::services::webhooks::update(&call.db, call.webhook_targets, id, change).await?;
    call.back_to_page(&format!("/admin/webhooks/{id}"));
    Ok(saved)
}

/// Enables (`"true"`) or disables (`"false"`) an endpoint.
#[server(prefix = "/_app", endpoint = "staff_enable_webhook")]
pub async fn enable_webhook(id: i64, enabled: String) -> Result<Webhook, AppError> {
    use crate::model::WebhookUpdate;
    let call = staff().await?;
    let enabled = match enabled.as_str() {
        "true" => true,
        "false" => false,
        _ => return Err(AppError::validation("enabled", "must be true or false")),
    };
    let change = WebhookUpdate { enabled: Some(enabled), ..WebhookUpdate::default() };
    let saved = crate::services::webhooks::update(&call.db, call.webhook_targets, id, change).await?;
    call.back_to_page("/admin/webhooks");
    Ok(saved)
}

/// Sends the endpoint a `ping` now.
#[server(prefix = "/_app", endpoint = "staff_test_webhook")]
pub async fn test_webhook(id: i64) -> Result<Delivery, AppError> {
    let call = staff().await?;
    let delivery = crate::services::webhooks::test(&call.db, id).await?;
    call.back_to_page("/admin/webhooks");
    Ok(delivery)
}

/// A new signing secret, shown once; the old one signs too for a day.
#[server(prefix = "/_app", endpoint = "staff_rotate_webhook_secret")]
pub async fn rotate_webhook_secret(id: i64) -> Result<WebhookWithSecret, AppError> {
    let call = staff().await?;
    let rotated = crate::services::webhooks::rotate_secret(&call.db, id).await?;
    call.no_store();
    call.back_to_page("/admin/webhooks");
    Ok(rotated)
}

#[server(prefix = "/_app", endpoint = "staff_delete_webhook")]
pub async fn delete_webhook(id: i64) -> Result<(), AppError> {
    let call = staff().await?;
    crate::services::webhooks::delete(&call.db, id).await?;
    leptos_axum::redirect("/admin/webhooks");
    Ok(())
}

/// Sends a delivery's event to its endpoint again now. `id` is the delivery's (the
/// row the form is in), `webhook_id` its endpoint's.
#[server(prefix = "/_app", endpoint = "staff_retry_delivery")]
pub async fn retry_delivery(id: i64, webhook_id: String) -> Result<Delivery, AppError> {
    let call = staff().await?;
    let webhook_id = form_id("webhookId", &webhook_id)?;
    let retried = crate::services::webhooks::retry(&call.db, webhook_id, id).await?;
    call.back_to_page(&format!("/admin/webhooks/{webhook_id}"));
    Ok(retried)
}
