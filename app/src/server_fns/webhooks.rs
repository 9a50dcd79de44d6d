//! The console's webhooks page: endpoints and their deliveries. Each server function
//! checks for an admin session and calls `services::webhooks`, as the REST API's
//! `/webhooks` handlers do; after a change the page is shown again (with a secret, the
//! answer goes along once in the flash, as a new key's does). Two functions take every
//! form (save, and an endpoint's actions), which keeps the WASM small.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::{Delivery, Page, Webhook};

#[cfg(feature = "ssr")]
use super::staff::staff;

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

/// What a console form did to an endpoint, for the page's note: the words, and a new
/// signing secret (registered or rotated), shown once. (Small, since the browser's
/// WASM holds a reader for every answer an island's form may get.)
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EndpointDone {
    pub id: i64,
    pub text: String,
    pub secret: Option<String>,
}

/// Registers an endpoint (no `id`, as `POST /webhooks`; its secret shown once) or
/// changes one's URL, event types and description (as `PATCH /webhooks/{id}`; an empty
/// description removes it).
#[server(prefix = "/_app", endpoint = "staff_save_webhook")]
pub async fn save_webhook(
    id: Option<i64>,
    url: String,
    events: Option<Vec<String>>,
    description: Option<String>,
) -> Result<EndpointDone, AppError> {
    use crate::model::{Field, NewWebhook, WebhookUpdate};
    use crate::services::webhooks;
    let call = staff().await?;
    let description = description.filter(|d| !d.trim().is_empty());
    let done = match id {
        None => {
            let new = NewWebhook { url, events: ticked(events), description };
            let created = webhooks::create(&call.db, call.webhook_targets, new).await?;
            let hook = created.webhook;
            call.no_store();
            let text = format!("Registered endpoint #{} ({}).", hook.id, hook.url);
            EndpointDone { id: hook.id, text, secret: Some(created.secret) }
        }
        Some(id) => {
            let description = Field::from_option(description);
            let change = WebhookUpdate { url: Some(url), events: Some(ticked(events)), enabled: None, description };
            webhooks::update(&call.db, call.webhook_targets, id, change).await?;
            EndpointDone { id, text: "Saved.".to_owned(), secret: None }
        }
    };
    call.back_to_page("/admin/webhooks");
    Ok(done)
}

/// One of an endpoint's actions (`action`): `test` sends a ping now, `disable` and
/// `enable`, `rotate` makes a new secret (shown once; the old one signs too for a
/// day), `delete`, and `retry` sends delivery `delivery` again now.
#[server(prefix = "/_app", endpoint = "staff_webhook_action")]
pub async fn webhook_action(id: i64, action: String, delivery: Option<i64>) -> Result<EndpointDone, AppError> {
    use crate::model::WebhookUpdate;
    use crate::services::webhooks;
    let call = staff().await?;
    let (db, targets) = (&call.db, call.webhook_targets);
    let said = |text: String| EndpointDone { id, text, secret: None };
    let done = match action.as_str() {
        "test" => {
            let ping = webhooks::test(db, id).await?;
            said(format!("Sent a ping to endpoint #{id} (event {}).", ping.event_id))
        }
        "enable" | "disable" => {
            let enabled = action == "enable";
            let change = WebhookUpdate { enabled: Some(enabled), ..WebhookUpdate::default() };
            webhooks::update(db, targets, id, change).await?;
            said(format!("{} endpoint #{id}.", if enabled { "Enabled" } else { "Disabled" }))
        }
        "rotate" => {
            let rotated = webhooks::rotate_secret(db, id).await?;
            call.no_store();
            let until = crate::model::utc_text(&rotated.previous_secret_expires_at.unwrap_or_default());
            let text = format!("New secret for endpoint #{id}: the previous one signs deliveries too until {until}.");
            EndpointDone { id, text, secret: Some(rotated.secret) }
        }
        "delete" => {
            webhooks::delete(db, id).await?;
            leptos_axum::redirect("/admin/webhooks");
            return Ok(said(format!("Deleted endpoint #{id}.")));
        }
        "retry" => {
            let delivery = delivery.ok_or_else(|| AppError::validation("delivery", "must be chosen"))?;
            let retried = webhooks::retry(db, id, delivery).await?;
            said(format!("Sending event {} again (attempt {}).", retried.event_id, retried.attempt))
        }
        _ => return Err(AppError::validation("action", "must be test, enable, disable, rotate, delete or retry")),
    };
    call.back_to_page("/admin/webhooks");
    Ok(done)
}
