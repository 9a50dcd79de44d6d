//! Orders: placing, cancelling and completing, each in one write transaction that reads
//! and writes the order, the stock and the pet's status together (the rules themselves
//! are in `rules`). Placing honours an Idempotency-Key.

use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::db::{Conn, Db, sql};
use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::{
    Caller, Cancellation, EventType, NewOrder, Order, OrderCompletion, OrderFilter, OrderHistoryFilter, OrderState,
    OrderView, Page, Role, order_quantity,
};
use crate::services::clock::rfc3339;
use crate::services::events::{self, Audience};
use crate::services::inventory::{state_for_update, write_state, write_status_after_stock};
use crate::services::paging::PageRequest;
use crate::services::{rules, validate};

/// How long a retry with the same Idempotency-Key gets the first answer.
pub const IDEMPOTENCY_SECONDS: i64 = 24 * 3600;
const IDEMPOTENCY_KEY_MAX: usize = 255;

use crate::db::sql::orders::OrderRow;

impl OrderRow {
    fn state(&self) -> OrderState {
        match (self.cancelled_at, self.complete) {
            (Some(_), _) => OrderState::Cancelled,
            (None, true) => OrderState::Completed,
            (None, false) => OrderState::Open,
        }
    }

    fn to_view(&self, pet_name: Option<String>) -> OrderView {
        OrderView { order: self.to_api(), pet_name, placed_at: rfc3339(self.created_at), state: self.state() }
    }

    fn to_api(&self) -> Order {
        Order {
            id: self.id,
            pet_id: self.pet_id,
            quantity: self.quantity,
            ship_date: self.ship_date.clone(),
            complete: self.complete,
            unit_price: self.unit_price,
            total: self.total,
        }
    }
}

/// A ship date as given (RFC 3339 with an offset), kept in UTC.
fn ship_date(field: &str, raw: &str) -> AppResult<String> {
    OffsetDateTime::parse(raw, &Rfc3339)
        .ok()
        .and_then(|t| t.to_offset(time::UtcOffset::UTC).format(&Rfc3339).ok())
        .ok_or_else(|| {
            AppError::validation(field, "must be an ISO 8601 date-time with an offset, like 2027-01-31T12:00:00Z")
        })
}

fn check_idempotency_key(key: &str) -> AppResult<()> {
    if key.is_empty() || key.len() > IDEMPOTENCY_KEY_MAX || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(AppError::new(
            ErrorCode::BadRequest,
            format!("Idempotency-Key must be 1 to {IDEMPOTENCY_KEY_MAX} visible ASCII characters"),
        ));
    }
    Ok(())
}

/// "place order": with an `idempotency_key`, a retry of the same request by the same
/// key within 24 hours gets the first answer (success or refusal) and changes nothing;
/// the same idempotency key with another request is 409 `idempotency_key_reused`.
pub async fn place(
    db: &Db,
    now: i64,
    caller: Caller,
    new: NewOrder,
    idempotency_key: Option<&str>,
) -> AppResult<Order> {
    if let Some(key) = idempotency_key {
        check_idempotency_key(key)?;
    }
    // The request as sent identifies it; validation comes after the idempotency check,
    // so a reused key with another (even invalid) body is a 409, and a 422 is replayed.
    let request_hash: [u8; 32] = Sha256::digest(serde_json::to_vec(&new).unwrap_or_default()).into();
    if idempotency_key.is_none() {
        validated(&new)?; // fail fast, before taking the write lock
    }

    // Orders are the hot write: they share transactions in the database's queue.
    let key = idempotency_key.map(str::to_owned);
    let (outcome, placed_now) = db
        .write_reading_pet(new.pet_id, move |conn| {
            let (new, key) = (new.clone(), key.clone());
            Box::pin(async move { place_recorded(conn, now, caller, &new, key.as_deref(), request_hash).await })
        })
        .await?;
    if placed_now && outcome.is_ok() {
        metrics::counter!("petstore_orders_placed_total").increment(1);
    }
    outcome
}

/// Places the order and records the answer under its idempotency key, or replays the
/// answer recorded for it. `Ok` carries the client's answer and whether this call
/// placed it; `Err` (a failure of ours, or a key reused) writes nothing.
async fn place_recorded(
    conn: &mut Conn,
    now: i64,
    caller: Caller,
    new: &NewOrder,
    idempotency_key: Option<&str>,
    request_hash: [u8; 32],
) -> AppResult<(AppResult<Order>, bool)> {
    if let Some(key) = idempotency_key {
        let recorded = sql::orders::recorded_answer(conn, caller.key_id, key, now - IDEMPOTENCY_SECONDS).await?;
        if let Some(recorded) = recorded {
            if recorded.request_hash != request_hash {
                return Err(AppError::conflict(
                    ErrorCode::IdempotencyKeyReused,
                    "this Idempotency-Key was used for a different request",
                ));
            }
            return Ok((replay(recorded.status, &recorded.body), false));
        }
    }
    let outcome = match validated(new) {
        Ok(request) => place_in(conn, now, caller, &request).await,
        Err(err) => Err(err),
    };
    match outcome {
        // A failure of ours: rolled back and not recorded, so a retry tries again.
        Err(err) if err.status >= 500 => Err(err),
        // A placed order, or a refusal (which wrote nothing but this record).
        outcome => {
            if let Some(key) = idempotency_key {
                let (status, body) = match &outcome {
                    Ok(order) => (201, serde_json::to_string(order)),
                    Err(err) => (i64::from(err.status), serde_json::to_string(err)),
                };
                let body = body.map_err(|e| AppError::internal("idempotency record", e))?;
                let answer = sql::orders::Recorded { request_hash: request_hash.to_vec(), status, body };
                sql::orders::record_answer(conn, caller.key_id, key, &answer, now).await?;
            }
            Ok((outcome, true))
        }
    }
}

/// How many orders are open (neither complete nor cancelled), for the metrics.
pub async fn count_open(db: &Db) -> AppResult<i64> {
    sql::orders::count_open(db).await
}

/// The order request with its rules checked: a positive `petId`, 1 to 1,000 units, a
/// ship date in RFC 3339 (kept in UTC).
fn validated(new: &NewOrder) -> AppResult<NewOrder> {
    let pet_id = validate::id("petId", new.pet_id)?;
    let quantity = order_quantity(new.quantity).map_err(|problem| AppError::validation("quantity", problem))?;
    let ship_date = new.ship_date.as_deref().map(|raw| ship_date("shipDate", raw)).transpose()?;
    Ok(NewOrder { pet_id, quantity, ship_date })
}

fn replay(status: i64, body: &str) -> AppResult<Order> {
    if status == 201 {
        serde_json::from_str::<Order>(body).map_err(|e| AppError::internal("idempotency replay", e))
    } else {
        Err(serde_json::from_str::<AppError>(body).map_err(|e| AppError::internal("idempotency replay", e))?)
    }
}

async fn place_in(conn: &mut Conn, now: i64, caller: Caller, request: &NewOrder) -> AppResult<Order> {
    let (status, stock, price) = sql::inventory::state_and_price(conn, request.pet_id)
        .await?
        .ok_or_else(|| AppError::validation("petId", format!("pet {} does not exist", request.pet_id)))?;
    let current = rules::PetState { status, stock };
    let next = rules::place_order(current, request.quantity)?;
    // What it costs is fixed now: a later price change does not touch it.
    let cost = price.map(|unit| (unit, unit * request.quantity));
    // The order's row and the stock it took (one statement where the engine allows).
    let id = sql::orders::insert_taking_stock(conn, now, caller.key_id, request, cost, next.stock).await?;
    let order = Order {
        id,
        pet_id: request.pet_id,
        quantity: request.quantity,
        ship_date: request.ship_date.clone(),
        complete: false,
        unit_price: cost.map(|(unit, _)| unit),
        total: cost.map(|(_, total)| total),
    };
    // The order's event, then the stock's it moved (`write_status_after_stock`'s).
    events::record(conn, EventType::OrderCreated, &order, Audience::Owner(caller.key_id)).await?;
    write_status_after_stock(conn, request.pet_id, current, next).await?;
    Ok(order)
}

/// An order the caller may see (customers: their own; others → 404). Cancelled orders
/// are gone from the API; the storefront's history (`cancelled`) still shows them.
async fn visible(conn: &mut Conn, caller: Caller, id: i64, cancelled: bool) -> AppResult<OrderRow> {
    shown(sql::orders::get_for_update(conn, id).await?, caller, id, cancelled)
}

fn shown(row: Option<OrderRow>, caller: Caller, id: i64, cancelled: bool) -> AppResult<OrderRow> {
    row.filter(|row| cancelled || row.cancelled_at.is_none())
        .filter(|row| caller.role == Role::Admin || row.key_id == caller.key_id)
        .ok_or_else(|| AppError::not_found("order", id))
}

pub async fn get(db: &Db, caller: Caller, id: i64) -> AppResult<Order> {
    let row = sql::orders::get(db, id).await?;
    Ok(shown(row, caller, id, false)?.to_api())
}

/// A customer's own orders, or everyone's for an admin; newest last (by id).
pub async fn list(db: &Db, caller: Caller, filter: &OrderFilter, page: PageRequest) -> AppResult<Page<Order>> {
    let rows = sql::orders::list(db, caller, filter, page).await?;
    let page = page.finish(rows, |row| row.id);
    Ok(Page { items: page.items.iter().map(OrderRow::to_api).collect(), next_cursor: page.next_cursor })
}

/// "cancel open order": its units go back to stock. An order cancelled before is
/// answered as it is (`already`), changing nothing; the REST API calls that a 404,
/// since cancelled orders are gone from it, and the storefront says so in words.
pub async fn cancel(db: &Db, now: i64, caller: Caller, id: i64) -> AppResult<Cancellation> {
    let mut tx = db.begin_write().await?;
    let order = visible(&mut tx, caller, id, true).await?;
    let pet_name = sql::pets::name(&mut tx, order.pet_id).await?;
    if order.cancelled_at.is_some() {
        return Ok(Cancellation { order: order.to_view(pet_name), already: true });
    }
    if order.complete {
        return Err(AppError::conflict(
            ErrorCode::OrderCompleted,
            format!("order {id} is completed and cannot be cancelled"),
        ));
    }
    let current = state_for_update(&mut tx, order.pet_id).await?;
    sql::orders::set_cancelled(&mut tx, id, now).await?;
    events::record(&mut tx, EventType::OrderCancelled, &order.to_api(), Audience::Owner(order.key_id)).await?;
    write_state(&mut tx, order.pet_id, current, rules::cancel_order(current, order.quantity)).await?;
    tx.commit().await?;
    let cancelled = OrderRow { cancelled_at: Some(now), ..order };
    Ok(Cancellation { order: cancelled.to_view(pet_name), already: false })
}

/// The storefront's order history: a customer's own orders or, for an admin, everyone's,
/// newest first, cancelled ones included, each with its pet's name; one page at a
/// time, `page.after` (when not 0) being the last (oldest) order of the page before.
pub async fn history(
    db: &Db,
    caller: Caller,
    filter: &OrderHistoryFilter,
    page: PageRequest,
) -> AppResult<Page<OrderView>> {
    let pet_name_part = filter.pet.as_deref().map(validate::fold);
    let rows = sql::orders::history(db, caller, filter, pet_name_part.as_deref(), page).await?;
    let page = page.finish(rows, |(order, _)| order.id);
    Ok(Page {
        items: page.items.into_iter().map(|(order, pet_name)| order.to_view(pet_name)).collect(),
        next_cursor: page.next_cursor,
    })
}

/// "complete order" (admin): marks it complete with its ship date; a pet with no stock
/// and no other open order is then sold.
pub async fn complete(db: &Db, now: i64, caller: Caller, id: i64, completion: OrderCompletion) -> AppResult<Order> {
    if !completion.complete {
        return Err(AppError::validation("complete", "must be true: completing is the only change an order takes"));
    }
    let given_ship_date = completion.ship_date.as_deref().map(|raw| ship_date("shipDate", raw)).transpose()?;
    let mut tx = db.begin_write().await?;
    let order = visible(&mut tx, caller, id, false).await?;
    if order.complete {
        return Err(AppError::conflict(ErrorCode::OrderCompleted, format!("order {id} is already completed")));
    }
    let ship_date = given_ship_date.or(order.ship_date.clone()).unwrap_or_else(|| rfc3339(now));
    sql::orders::set_complete(&mut tx, id, &ship_date).await?;
    let current = state_for_update(&mut tx, order.pet_id).await?;
    let others = sql::inventory::open_orders(&mut tx, order.pet_id).await?;
    let completed = Order { complete: true, ship_date: Some(ship_date), ..order.to_api() };
    events::record(&mut tx, EventType::OrderCompleted, &completed, Audience::Owner(order.key_id)).await?;
    write_state(&mut tx, order.pet_id, current, rules::complete_order(current, others)).await?;
    tx.commit().await?;
    Ok(completed)
}
