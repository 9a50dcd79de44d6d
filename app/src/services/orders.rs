//! Orders: placing, cancelling and completing, each in one write transaction that reads
//! and writes the order, the stock and the pet's status together (the rules themselves
//! are in `rules`). Placing honours an Idempotency-Key.

use sha2::{Digest, Sha256};
use sqlx::{QueryBuilder, Sqlite, SqliteConnection};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::db::Db;
use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::{
    Caller, Cancellation, NewOrder, Order, OrderCompletion, OrderFilter, OrderHistoryFilter, OrderState, OrderView,
    Page, Role,
};
use crate::services::clock::rfc3339;
use crate::services::inventory::{open_order_count, state_for_update, write_state};
use crate::services::paging::PageRequest;
use crate::services::{rules, validate};

pub const QUANTITY_MAX: i64 = 1_000;
/// How long a retry with the same Idempotency-Key gets the first answer.
pub const IDEMPOTENCY_SECONDS: i64 = 24 * 3600;
const IDEMPOTENCY_KEY_MAX: usize = 255;

#[derive(sqlx::FromRow)]
struct OrderRow {
    id: i64,
    pet_id: i64,
    key_id: i64,
    quantity: i64,
    ship_date: Option<String>,
    complete: bool,
    created_at: i64,
    cancelled_at: Option<i64>,
}

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
        }
    }
}

const COLUMNS: &str = "SELECT id, pet_id, key_id, quantity, ship_date, complete, created_at, cancelled_at FROM orders";

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
        .write(move |conn| {
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
    conn: &mut SqliteConnection,
    now: i64,
    caller: Caller,
    new: &NewOrder,
    idempotency_key: Option<&str>,
    request_hash: [u8; 32],
) -> AppResult<(AppResult<Order>, bool)> {
    if let Some(key) = idempotency_key {
        let record: Option<(Vec<u8>, i64, String)> = sqlx::query_as(
            "SELECT request_hash, status, body FROM idempotency_records
             WHERE key_id = ? AND idem_key = ? AND created_at > ?",
        )
        .bind(caller.key_id)
        .bind(key)
        .bind(now - IDEMPOTENCY_SECONDS)
        .fetch_optional(&mut *conn)
        .await?;
        if let Some((hash, status, body)) = record {
            if hash != request_hash {
                return Err(AppError::conflict(
                    ErrorCode::IdempotencyKeyReused,
                    "this Idempotency-Key was used for a different request",
                ));
            }
            return Ok((replay(status, &body), false));
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
                sqlx::query(
                    "INSERT OR REPLACE INTO idempotency_records
                       (key_id, idem_key, request_hash, status, body, created_at)
                     VALUES (?, ?, ?, ?, ?, ?)",
                )
                .bind(caller.key_id)
                .bind(key)
                .bind(request_hash.as_slice())
                .bind(status)
                .bind(body.map_err(|e| AppError::internal("idempotency record", e))?)
                .bind(now)
                .execute(&mut *conn)
                .await?;
            }
            Ok((outcome, true))
        }
    }
}

/// How many orders are open (neither complete nor cancelled), for the metrics.
pub async fn count_open(db: &Db) -> AppResult<i64> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE complete = 0 AND cancelled_at IS NULL")
        .fetch_one(db.pool())
        .await?)
}

/// The order request with its rules checked: a positive `petId`, 1 to 1,000 units, a
/// ship date in RFC 3339 (kept in UTC).
fn validated(new: &NewOrder) -> AppResult<NewOrder> {
    let pet_id = validate::id("petId", new.pet_id)?;
    if !(1..=QUANTITY_MAX).contains(&new.quantity) {
        return Err(AppError::validation("quantity", format!("must be from 1 to {QUANTITY_MAX}")));
    }
    let ship_date = new.ship_date.as_deref().map(|raw| ship_date("shipDate", raw)).transpose()?;
    Ok(NewOrder { pet_id, quantity: new.quantity, ship_date })
}

fn replay(status: i64, body: &str) -> AppResult<Order> {
    if status == 201 {
        serde_json::from_str::<Order>(body).map_err(|e| AppError::internal("idempotency replay", e))
    } else {
        Err(serde_json::from_str::<AppError>(body).map_err(|e| AppError::internal("idempotency replay", e))?)
    }
}

async fn place_in(conn: &mut SqliteConnection, now: i64, caller: Caller, request: &NewOrder) -> AppResult<Order> {
    let current = state_for_update(conn, request.pet_id).await.map_err(|err| match err.code {
        ErrorCode::NotFound => AppError::validation("petId", format!("pet {} does not exist", request.pet_id)),
        _ => err,
    })?;
    let next = rules::place_order(current, request.quantity)?;
    write_state(conn, request.pet_id, current, next).await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO orders (pet_id, key_id, quantity, ship_date, complete, created_at) VALUES (?, ?, ?, ?, 0, ?) RETURNING id",
    )
    .bind(request.pet_id)
    .bind(caller.key_id)
    .bind(request.quantity)
    .bind(&request.ship_date)
    .bind(now)
    .fetch_one(&mut *conn)
    .await?;
    Ok(Order {
        id,
        pet_id: request.pet_id,
        quantity: request.quantity,
        ship_date: request.ship_date.clone(),
        complete: false,
    })
}

/// An order the caller may see (customers: their own; others → 404). Cancelled orders
/// are gone from the API; the storefront's history (`cancelled`) still shows them.
async fn visible(conn: &mut SqliteConnection, caller: Caller, id: i64, cancelled: bool) -> AppResult<OrderRow> {
    let row: Option<OrderRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!("{COLUMNS} WHERE id = ?")))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    row.filter(|row| cancelled || row.cancelled_at.is_none())
        .filter(|row| caller.role == Role::Admin || row.key_id == caller.key_id)
        .ok_or_else(|| AppError::not_found("order", id))
}

pub async fn get(db: &Db, caller: Caller, id: i64) -> AppResult<Order> {
    let mut conn = db.pool().acquire().await?;
    Ok(visible(&mut conn, caller, id, false).await?.to_api())
}

/// A customer's own orders, or everyone's for an admin; newest last (by id).
pub async fn list(db: &Db, caller: Caller, filter: &OrderFilter, page: PageRequest) -> AppResult<Page<Order>> {
    let mut sql = QueryBuilder::<Sqlite>::new(COLUMNS);
    sql.push(" WHERE cancelled_at IS NULL AND id > ").push_bind(page.after);
    if caller.role != Role::Admin {
        sql.push(" AND key_id = ").push_bind(caller.key_id);
    }
    if let Some(complete) = filter.complete {
        sql.push(" AND complete = ").push_bind(complete);
    }
    if let Some(pet_id) = filter.pet_id {
        sql.push(" AND pet_id = ").push_bind(pet_id);
    }
    sql.push(" ORDER BY id LIMIT ").push_bind(page.fetch_limit());
    let rows: Vec<OrderRow> = sql.build_query_as().fetch_all(db.pool()).await?;
    let page = page.finish(rows, |row| row.id);
    Ok(Page { items: page.items.iter().map(OrderRow::to_api).collect(), next_cursor: page.next_cursor })
}

/// "cancel open order": its units go back to stock. An order cancelled before is
/// answered as it is (`already`), changing nothing; the REST API calls that a 404,
/// since cancelled orders are gone from it, and the storefront says so in words.
pub async fn cancel(db: &Db, now: i64, caller: Caller, id: i64) -> AppResult<Cancellation> {
    let mut tx = db.begin_write().await?;
    let order = visible(&mut tx, caller, id, true).await?;
    let pet_name = pet_name(&mut tx, order.pet_id).await?;
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
    write_state(&mut tx, order.pet_id, current, rules::cancel_order(current, order.quantity)).await?;
    sqlx::query("UPDATE orders SET cancelled_at = ? WHERE id = ?").bind(now).bind(id).execute(&mut *tx).await?;
    tx.commit().await?;
    let cancelled = OrderRow { cancelled_at: Some(now), ..order };
    Ok(Cancellation { order: cancelled.to_view(pet_name), already: false })
}

async fn pet_name(conn: &mut SqliteConnection, pet_id: i64) -> AppResult<Option<String>> {
    Ok(sqlx::query_scalar("SELECT name FROM pets WHERE id = ?").bind(pet_id).fetch_optional(&mut *conn).await?)
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
    #[derive(sqlx::FromRow)]
    struct Listed {
        #[sqlx(flatten)]
        order: OrderRow,
        pet_name: Option<String>,
    }
    let mut sql = QueryBuilder::<Sqlite>::new(
        "SELECT o.id, o.pet_id, o.key_id, o.quantity, o.ship_date, o.complete, o.created_at, o.cancelled_at,
                p.name AS pet_name
         FROM orders o LEFT JOIN pets p ON p.id = o.pet_id WHERE 1 = 1",
    );
    if page.after > 0 {
        sql.push(" AND o.id < ").push_bind(page.after);
    }
    if caller.role != Role::Admin {
        sql.push(" AND o.key_id = ").push_bind(caller.key_id);
    }
    match filter.state {
        None => {}
        Some(OrderState::Open) => {
            sql.push(" AND o.cancelled_at IS NULL AND o.complete = 0");
        }
        Some(OrderState::Completed) => {
            sql.push(" AND o.cancelled_at IS NULL AND o.complete = 1");
        }
        Some(OrderState::Cancelled) => {
            sql.push(" AND o.cancelled_at IS NOT NULL");
        }
    }
    if let Some(pet) = filter.pet.as_deref() {
        sql.push(" AND instr(p.name_key, ").push_bind(validate::fold(pet)).push(") > 0");
    }
    sql.push(" ORDER BY o.id DESC LIMIT ").push_bind(page.fetch_limit());
    let rows: Vec<Listed> = sql.build_query_as().fetch_all(db.pool()).await?;
    let page = page.finish(rows, |row| row.order.id);
    Ok(Page {
        items: page.items.into_iter().map(|row| row.order.to_view(row.pet_name)).collect(),
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
    sqlx::query("UPDATE orders SET complete = 1, ship_date = ? WHERE id = ?")
        .bind(&ship_date)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    let current = state_for_update(&mut tx, order.pet_id).await?;
    let others = open_order_count(&mut tx, order.pet_id).await?;
    write_state(&mut tx, order.pet_id, current, rules::complete_order(current, others)).await?;
    tx.commit().await?;
    Ok(Order { complete: true, ship_date: Some(ship_date), ..order.to_api() })
}
