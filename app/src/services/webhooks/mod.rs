//! Webhooks (contract.md, "Events"): endpoints staff register for the store's events,
//! each delivered by one server (`dispatch`), signed per the Standard Webhooks
//! specification with the endpoint's secret, retried on failure for a day, and logged
//! attempt by attempt.

pub mod dispatch;
pub mod target;

use std::collections::BTreeSet;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::db::sql::webhooks::{DeliveryRow, WebhookRow};
use crate::db::{Db, sql};
use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::{Delivery, DeliveryStatus, EventType, NewWebhook, Page, Webhook, WebhookUpdate, WebhookWithSecret};
use crate::services::events::{self, Audience, now_ms, rfc3339_ms};
use crate::services::paging::{PageRequest, encode_cursor};
use crate::services::{keys, validate};
pub use target::Targets;

/// How long a rotated-out secret keeps signing beside the new one.
pub const ROTATION_OVERLAP_MS: i64 = 24 * 3_600_000;
/// Endpoints a store may have.
pub const MAX_ENDPOINTS: usize = 100;

/// A new secret: `whsec_` and 24 random bytes in base64 (Standard Webhooks).
fn new_secret() -> AppResult<String> {
    Ok(format!("whsec_{}", STANDARD.encode(keys::random_bytes::<24>()?)))
}

/// The event types a request names, checked: known types (`ping` is no subscription),
/// or `*` alone; stored space-separated.
fn event_types(field: &str, requested: &[String]) -> AppResult<String> {
    if requested.is_empty() {
        return Err(AppError::validation(field, "must name at least one event type, or \"*\" for all"));
    }
    if requested.iter().any(|kind| kind == "*") {
        return if requested.len() == 1 {
            Ok("*".to_owned())
        } else {
            Err(AppError::validation(field, "\"*\" stands alone: it means every event type"))
        };
    }
    let mut kinds = BTreeSet::new();
    for kind in requested {
        match kind.parse::<EventType>() {
            Ok(parsed) if parsed != EventType::Ping => {
                kinds.insert(parsed.as_str());
            }
            _ => {
                let known: Vec<&str> = EventType::subscribable().map(EventType::as_str).collect();
                return Err(AppError::validation(
                    field,
                    format!("{kind:?} is no event type; the types are {}", known.join(", ")),
                ));
            }
        }
    }
    Ok(kinds.into_iter().collect::<Vec<_>>().join(" "))
}

/// Whether an endpoint subscribed to `events` (as stored) takes `kind`.
pub fn takes(events: &str, kind: &str) -> bool {
    events == "*" || events.split(' ').any(|taken| taken == kind)
}

fn to_api(row: &WebhookRow) -> Webhook {
    Webhook {
        id: row.id,
        url: row.url.clone(),
        events: row.events.split(' ').map(str::to_owned).collect(),
        description: row.description.clone(),
        enabled: row.enabled,
        disabled_reason: row.disabled_reason.clone(),
        created_at: rfc3339_ms(row.created_at),
    }
}

fn not_found(id: i64) -> AppError {
    AppError::not_found("webhook", id)
}

/// `POST /webhooks`.
pub async fn create(db: &Db, targets: Targets, new: NewWebhook) -> AppResult<WebhookWithSecret> {
    let url = targets.check_url(&new.url).await?;
    let events = event_types("events", &new.events)?;
    let description = validate::description("description", new.description.as_deref())?;
    let secret = new_secret()?;
    let mut tx = db.begin_write_outside_catalog().await?;
    if sql::webhooks::list(db).await?.len() >= MAX_ENDPOINTS {
        return Err(AppError::new(
            ErrorCode::ValidationFailed,
            format!("a store has at most {MAX_ENDPOINTS} webhook endpoints; delete one first"),
        ));
    }
    let id = sql::webhooks::insert(&mut tx, &url, &events, description.as_deref(), &secret, now_ms()).await?;
    let row = sql::webhooks::get_in(&mut tx, id).await?.ok_or_else(|| not_found(id))?;
    tx.commit().await?;
    Ok(WebhookWithSecret { webhook: to_api(&row), secret, previous_secret_expires_at: None })
}

pub async fn list(db: &Db) -> AppResult<Vec<Webhook>> {
    Ok(sql::webhooks::list(db).await?.iter().map(to_api).collect())
}

pub async fn get(db: &Db, id: i64) -> AppResult<Webhook> {
    sql::webhooks::get(db, id).await?.map(|row| to_api(&row)).ok_or_else(|| not_found(id))
}

/// `PATCH /webhooks/{webhookId}`: what the request names changes. Disabling gives up
/// its pending deliveries; enabling (again) clears what the store said when it
/// disabled it, and starts with the events from then on.
pub async fn update(db: &Db, targets: Targets, id: i64, change: WebhookUpdate) -> AppResult<Webhook> {
    let url = match &change.url {
        Some(url) => Some(targets.check_url(url).await?),
        None => None,
    };
    let events = change.events.as_deref().map(|events| event_types("events", events)).transpose()?;
    let description = match &change.description {
        crate::model::Field::Set(text) => {
            Some(validate::description("description", Some(text))?.filter(|t| !t.is_empty()))
        }
        crate::model::Field::Clear => Some(None),
        crate::model::Field::Keep => None,
    };
    let mut tx = db.begin_write_outside_catalog().await?;
    let mut row = sql::webhooks::get_in(&mut tx, id).await?.ok_or_else(|| not_found(id))?;
    row.url = url.unwrap_or(row.url);
    row.events = events.unwrap_or(row.events);
    row.description = description.unwrap_or(row.description);
    if let Some(enabled) = change.enabled {
        if !enabled && row.enabled {
            sql::webhooks::abandon_pending(&mut tx, id, now_ms(), "the endpoint was disabled").await?;
        }
        if enabled {
            row.disabled_reason = None;
            row.failing_since = None;
        }
        row.enabled = enabled;
    }
    sql::webhooks::update(&mut tx, &row).await?;
    tx.commit().await?;
    Ok(to_api(&row))
}

pub async fn delete(db: &Db, id: i64) -> AppResult<()> {
    let mut tx = db.begin_write_outside_catalog().await?;
    if !sql::webhooks::delete(&mut tx, id).await? {
        return Err(not_found(id));
    }
    tx.commit().await?;
    Ok(())
}

/// `POST /webhooks/{webhookId}/rotate-secret`: a new secret, shown once; the one before
/// keeps signing too for a day, so receivers can switch without missing a delivery.
pub async fn rotate_secret(db: &Db, id: i64) -> AppResult<WebhookWithSecret> {
    let secret = new_secret()?;
    let mut tx = db.begin_write_outside_catalog().await?;
    let mut row = sql::webhooks::get_in(&mut tx, id).await?.ok_or_else(|| not_found(id))?;
    let until = now_ms() + ROTATION_OVERLAP_MS;
    row.previous_secret = Some(std::mem::replace(&mut row.secret, secret.clone()));
    row.previous_until = Some(until);
    sql::webhooks::update(&mut tx, &row).await?;
    tx.commit().await?;
    Ok(WebhookWithSecret { webhook: to_api(&row), secret, previous_secret_expires_at: Some(rfc3339_ms(until)) })
}

/// `POST /webhooks/{webhookId}/test`: a `ping` event, to this endpoint only, now.
pub async fn test(db: &Db, id: i64) -> AppResult<Delivery> {
    let mut tx = db.begin_write_outside_catalog().await?;
    let row = sql::webhooks::get_in(&mut tx, id).await?.ok_or_else(|| not_found(id))?;
    let ping = serde_json::json!({ "webhookId": id, "message": "A test from the pet store" });
    let event = events::record(&mut tx, EventType::Ping, &ping, Audience::Admins).await?;
    let seq = sql::events::seq_in(&mut tx, &event).await?;
    let now = now_ms();
    let delivery = sql::webhooks::insert_pending(&mut tx, row.id, seq, 1, now, now).await?;
    let shown = sql::webhooks::delivery_in(&mut tx, delivery).await?.ok_or_else(|| not_found(id))?;
    tx.commit().await?;
    dispatch::wake();
    delivery_to_api(shown)
}

/// `GET /webhooks/{webhookId}/deliveries`: the attempts, newest first, paged.
pub async fn deliveries(db: &Db, id: i64, page: PageRequest) -> AppResult<Page<Delivery>> {
    sql::webhooks::get(db, id).await?.ok_or_else(|| not_found(id))?;
    let mut rows = sql::webhooks::deliveries(db, id, page.after, page.fetch_limit()).await?;
    let more = rows.len() > page.limit as usize;
    rows.truncate(page.limit as usize);
    let next_cursor = rows.last().filter(|_| more).map(|last| encode_cursor(last.id));
    Ok(Page { items: rows.into_iter().map(delivery_to_api).collect::<AppResult<_>>()?, next_cursor })
}

/// `POST /webhooks/{webhookId}/deliveries/{deliveryId}/retry`: the event is sent to the
/// endpoint again now (as the next attempt; a pending one is made due now).
pub async fn retry(db: &Db, id: i64, delivery_id: i64) -> AppResult<Delivery> {
    let mut tx = db.begin_write_outside_catalog().await?;
    let row = sql::webhooks::get_in(&mut tx, id).await?.ok_or_else(|| not_found(id))?;
    let delivery = sql::webhooks::delivery_in(&mut tx, delivery_id)
        .await?
        .filter(|delivery| delivery.webhook_id == row.id)
        .ok_or_else(|| AppError::not_found("delivery", delivery_id))?;
    if !row.enabled {
        return Err(AppError::conflict(
            ErrorCode::InvalidTransition,
            format!("webhook {id} is disabled; enable it before retrying a delivery"),
        ));
    }
    let now = now_ms();
    let retried = match sql::webhooks::pending_for(&mut tx, row.id, delivery.event_seq).await? {
        Some((pending, _)) => {
            sql::webhooks::make_due(&mut tx, pending, now).await?;
            pending
        }
        None => {
            let attempt = sql::webhooks::last_attempt(&mut tx, row.id, delivery.event_seq).await? + 1;
            sql::webhooks::insert_pending(&mut tx, row.id, delivery.event_seq, attempt, now, now).await?
        }
    };
    let shown = sql::webhooks::delivery_in(&mut tx, retried).await?.ok_or_else(|| not_found(id))?;
    tx.commit().await?;
    dispatch::wake();
    delivery_to_api(shown)
}

fn delivery_to_api(row: DeliveryRow) -> AppResult<Delivery> {
    let status: DeliveryStatus =
        row.status.parse().map_err(|_| AppError::internal("a delivery's status", row.status.clone()))?;
    let event_type: EventType =
        row.event_type.parse().map_err(|_| AppError::internal("an event's type", row.event_type.clone()))?;
    let sent = events::envelope_json(&sql::events::StoredEvent {
        seq: row.event_seq,
        id: row.event_id.clone(),
        kind: row.event_type.clone(),
        created_at: row.event_created_at,
        data: row.event_data,
        owner_key_id: None,
        admin_only: false,
    });
    let payload = serde_json::from_str(&sent).map_err(|e| AppError::internal("an event's body", e))?;
    Ok(Delivery {
        id: row.id,
        event_id: row.event_id,
        event_type,
        attempt: row.attempt,
        status,
        response_status: row.response_status,
        duration_ms: row.duration_ms,
        error: row.error,
        payload,
        response_body: row.response_body,
        created_at: rfc3339_ms(row.attempted_at.unwrap_or(row.created_at)),
        next_attempt_at: row.due_at.map(rfc3339_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscriptions_name_known_types_or_everything() {
        let types = |names: &[&str]| event_types("events", &names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>());
        assert_eq!(
            types(&["order.created", "inventory.out_of_stock", "order.created"]).unwrap(),
            "inventory.out_of_stock order.created"
        );
        assert_eq!(types(&["*"]).unwrap(), "*");
        for bad in [&["*", "order.created"][..], &[][..], &["ping"][..], &["order.made"][..]] {
            assert_eq!(types(bad).unwrap_err().code, ErrorCode::ValidationFailed, "{bad:?}");
        }
        assert!(takes("*", "pet.created") && takes("order.created pet.created", "pet.created"));
        assert!(!takes("order.created", "order.cancelled"));
    }

    #[test]
    fn secrets_are_standard_webhooks_secrets() {
        let secret = new_secret().unwrap();
        assert!(secret.starts_with("whsec_"));
        assert_eq!(STANDARD.decode(&secret[6..]).unwrap().len(), 24);
        assert!(standardwebhooks::Webhook::new(&secret).is_ok());
    }
}
