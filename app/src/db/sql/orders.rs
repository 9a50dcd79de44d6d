//! Orders, and the answers recorded under an Idempotency-Key.

use sqlx::{Database, Encode, QueryBuilder, Type};

use super::{Conn, on_conn, on_pool};
use crate::db::batch::{self, HeldOrder};
use crate::db::paging::PageRequest;
use crate::db::{Db, Engine};
use crate::error::{AppError, AppResult};
use crate::model::{Caller, NewOrder, OrderFilter, OrderHistoryFilter, OrderState, Role};

/// An order as stored.
#[derive(sqlx::FromRow)]
pub(crate) struct OrderRow {
    pub id: i64,
    pub pet_id: i64,
    pub key_id: i64,
    pub quantity: i64,
    pub ship_date: Option<String>,
    pub complete: bool,
    pub created_at: i64,
    pub cancelled_at: Option<i64>,
    pub unit_price: Option<i64>,
    pub total: Option<i64>,
}

const COLUMNS: &str =
    "SELECT id, pet_id, key_id, quantity, ship_date, complete, created_at, cancelled_at, unit_price, total FROM orders";

/// Inserts an open order, with what it costs (`unit_price` and its total, when the pet
/// has a price), and sets the pet's stock to what the order left (`stock`). In a batch
/// of the write queue on SQLite, both are held back and written with the batch's
/// others (`db::batch`). Else in one round trip: every round trip of an order is taken
/// while the store's write lock is held, one order after another. PostgreSQL takes the
/// `UPDATE` in a `WITH`; SQLite does not, and takes the two statements in one command
/// instead (all of whose rows `fetch_all` reads, so both run).
pub async fn insert_taking_stock(
    conn: &mut Conn,
    now: i64,
    key_id: i64,
    order: &NewOrder,
    price: Option<(i64, i64)>,
    stock: i64,
) -> AppResult<i64> {
    let held = HeldOrder {
        id: 0,
        pet_id: order.pet_id,
        key_id,
        quantity: order.quantity,
        ship_date: order.ship_date.clone(),
        created_at: now,
        unit_price: price.map(|(unit, _)| unit),
        total: price.map(|(_, total)| total),
    };
    if let Some(id) = batch::defer_order(conn, held, stock).await? {
        return Ok(id);
    }
    // A literal either way (sqlx takes static SQL), the INSERT written once.
    macro_rules! insert {
        () => {
            "INSERT INTO orders (pet_id, key_id, quantity, ship_date, complete, created_at, unit_price, total)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id"
        };
    }
    let sql = match conn.engine() {
        Engine::Postgres => concat!("WITH stock AS (UPDATE inventory SET quantity = $9 WHERE pet_id = $1) ", insert!()),
        Engine::Sqlite => concat!("UPDATE inventory SET quantity = $9 WHERE pet_id = $1; ", insert!()),
    };
    batch::flush(conn).await?;
    let ids: Vec<i64> = on_conn!(&mut *conn, |c| sqlx::query_scalar(sql)
        .bind(order.pet_id)
        .bind(key_id)
        .bind(order.quantity)
        .bind(&order.ship_date)
        .bind(false)
        .bind(now)
        .bind(price.map(|(unit, _)| unit))
        .bind(price.map(|(_, total)| total))
        .bind(stock)
        .fetch_all(c)
        .await)?;
    let id = ids.first().copied().ok_or_else(|| AppError::internal("placing an order", "the INSERT returned no id"))?;
    batch::stock_set(order.pet_id, stock);
    Ok(id)
}

/// The id SQLite would give the next order: one past the highest the table ever had
/// (`AUTOINCREMENT` keeps it in `sqlite_sequence`), inside the write transaction.
pub(in crate::db) async fn next_id(conn: &mut Conn) -> Result<i64, sqlx::Error> {
    let highest: i64 = on_conn!(conn, |c| sqlx::query_scalar(
        "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'orders'), 0),
                    COALESCE((SELECT MAX(id) FROM orders), 0))"
    )
    .fetch_one(c)
    .await)?;
    Ok(highest + 1)
}

/// Inserts open orders with their ids, in one statement.
pub(in crate::db) async fn insert_all(conn: &mut Conn, orders: &[HeldOrder]) -> Result<(), sqlx::Error> {
    on_conn!(conn, |c| {
        let mut sql = QueryBuilder::new(
            "INSERT INTO orders (id, pet_id, key_id, quantity, ship_date, complete, created_at, unit_price, total) ",
        );
        sql.push_values(orders, |mut row, order| {
            row.push_bind(order.id)
                .push_bind(order.pet_id)
                .push_bind(order.key_id)
                .push_bind(order.quantity)
                .push_bind(order.ship_date.clone())
                .push_bind(false)
                .push_bind(order.created_at)
                .push_bind(order.unit_price)
                .push_bind(order.total);
        });
        sql.build().execute(c).await.map(|_| ())
    })
}

pub async fn get(db: &Db, id: i64) -> AppResult<Option<OrderRow>> {
    let sql = format!("{COLUMNS} WHERE id = $1");
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(pool).await)?)
}

/// The order, inside a write transaction (which holds the write lock).
pub async fn get_for_update(conn: &mut Conn, id: i64) -> AppResult<Option<OrderRow>> {
    let sql = format!("{COLUMNS} WHERE id = $1");
    Ok(on_conn!(conn, |c| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(c).await)?)
}

/// The API's listing: orders not cancelled after `page.after`, the caller's own unless
/// an admin's, by id, one more than the page holds.
pub async fn list(db: &Db, caller: Caller, filter: &OrderFilter, page: PageRequest) -> AppResult<Vec<OrderRow>> {
    Ok(on_pool!(db, |pool| {
        let mut sql = QueryBuilder::new(COLUMNS);
        push_list(&mut sql, caller, filter, page);
        sql.build_query_as().fetch_all(pool).await
    })?)
}

fn push_list<DB: Database>(sql: &mut QueryBuilder<DB>, caller: Caller, filter: &OrderFilter, page: PageRequest)
where
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    bool: for<'q> Encode<'q, DB> + Type<DB>,
{
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
}

#[derive(sqlx::FromRow)]
struct Listed {
    #[sqlx(flatten)]
    order: OrderRow,
    pet_name: Option<String>,
}

/// The storefront's history: newest first, before `page.after` (when not 0), cancelled
/// ones included, each with its pet's name (`pet_name_part`: folded, contained in it).
pub async fn history(
    db: &Db,
    caller: Caller,
    filter: &OrderHistoryFilter,
    pet_name_part: Option<&str>,
    page: PageRequest,
) -> AppResult<Vec<(OrderRow, Option<String>)>> {
    let rows: Vec<Listed> = on_pool!(db, |pool| {
        let mut sql = QueryBuilder::new("");
        push_history(&mut sql, caller, filter, pet_name_part, page);
        sql.build_query_as().fetch_all(pool).await
    })?;
    Ok(rows.into_iter().map(|row| (row.order, row.pet_name)).collect())
}

fn push_history<DB: Database>(
    sql: &mut QueryBuilder<DB>,
    caller: Caller,
    filter: &OrderHistoryFilter,
    pet_name_part: Option<&str>,
    page: PageRequest,
) where
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    String: for<'q> Encode<'q, DB> + Type<DB>,
{
    sql.push(
        "SELECT o.id, o.pet_id, o.key_id, o.quantity, o.ship_date, o.complete, o.created_at, o.cancelled_at,
                o.unit_price, o.total, p.name AS pet_name
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
            sql.push(" AND o.cancelled_at IS NULL AND o.complete = FALSE");
        }
        Some(OrderState::Completed) => {
            sql.push(" AND o.cancelled_at IS NULL AND o.complete = TRUE");
        }
        Some(OrderState::Cancelled) => {
            sql.push(" AND o.cancelled_at IS NOT NULL");
        }
    }
    if let Some(part) = pet_name_part {
        sql.push(" AND instr(p.name_key, ").push_bind(part.to_owned()).push(") > 0");
    }
    sql.push(" ORDER BY o.id DESC LIMIT ").push_bind(page.fetch_limit());
}

/// The open orders, from the running total the schema's triggers keep (migration
/// `…_open_orders.sql`): one row, however many orders.
pub async fn count_open(db: &Db) -> AppResult<i64> {
    Ok(on_pool!(db, |pool| sqlx::query_scalar("SELECT orders FROM open_orders").fetch_one(pool).await)?)
}

pub async fn set_cancelled(conn: &mut Conn, id: i64, at: i64) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query("UPDATE orders SET cancelled_at = $1 WHERE id = $2")
        .bind(at)
        .bind(id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(())
}

pub async fn set_complete(conn: &mut Conn, id: i64, ship_date: &str) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query("UPDATE orders SET complete = TRUE, ship_date = $1 WHERE id = $2")
        .bind(ship_date)
        .bind(id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(())
}

/// An answer recorded under an Idempotency-Key: the request's hash, the status and
/// the body sent.
pub struct Recorded {
    pub request_hash: Vec<u8>,
    pub status: i64,
    pub body: String,
}

/// The answer recorded for `key` of `key_id` since `since`, if any.
pub async fn recorded_answer(conn: &mut Conn, key_id: i64, key: &str, since: i64) -> AppResult<Option<Recorded>> {
    let row: Option<(Vec<u8>, i64, String)> = on_conn!(conn, |c| sqlx::query_as(
        "SELECT request_hash, status, body FROM idempotency_records
         WHERE key_id = $1 AND idem_key = $2 AND created_at > $3",
    )
    .bind(key_id)
    .bind(key)
    .bind(since)
    .fetch_optional(c)
    .await)?;
    Ok(row.map(|(request_hash, status, body)| Recorded { request_hash, status, body }))
}

/// Records (or, past its 24 hours, replaces) the answer for `key` of `key_id`.
pub async fn record_answer(conn: &mut Conn, key_id: i64, key: &str, answer: &Recorded, now: i64) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query(
        "INSERT INTO idempotency_records (key_id, idem_key, request_hash, status, body, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (key_id, idem_key) DO UPDATE SET
           request_hash = excluded.request_hash, status = excluded.status,
           body = excluded.body, created_at = excluded.created_at",
    )
    .bind(key_id)
    .bind(key)
    .bind(answer.request_hash.as_slice())
    .bind(answer.status)
    .bind(&answer.body)
    .bind(now)
    .execute(c)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(())
}
