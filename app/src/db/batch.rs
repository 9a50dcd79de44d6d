//! What a batch of the write queue reads ahead and writes behind.
//!
//! An order reads its pet's status, stock and price, then writes its row and the stock
//! it left. One order at a time, each of those is a round trip to the connection's
//! thread (SQLite) or to PostgreSQL, one after another while the store's write lock is
//! held, and on SQLite each round trip is two threads woken. So a batch's first run
//! - reads the pets of all its orders in one statement as it begins ([`load`]), and
//!   [`sql::inventory::state_and_price`](super::sql::inventory::state_and_price)
//!   answers from that copy; and
//! - on SQLite, keeps its orders' rows and the stock they left ([`defer_order`]) and
//!   writes them all in two statements before the batch's events and its `COMMIT`
//!   ([`flush`]). An order's id is handed out as SQLite would (one past the highest
//!   the table ever had: it is `AUTOINCREMENT`), which the write lock makes safe.
//!   PostgreSQL writes each order at once, in one statement (its ids come from a
//!   sequence that other servers draw from too).
//!
//! The copy stays true while the batch runs: every write a queued job makes to a pet's
//! status or stock goes through `sql::inventory`'s `set_stock` and `set_status` or
//! `sql::orders::insert_taking_stock`, which keep it ([`stock_set`], [`status_set`]);
//! a price changes only in a transaction of its own. A statement that reads or writes
//! what the batch holds back (`set_status`, whose trigger counts the stock by status;
//! `set_stock`; a pet's card) writes it first ([`flush`]). A batch that is rolled back
//! runs again with none of this (the queue's `run_apart`): each write reads and
//! writes for itself, so nothing a rolled-back run left is seen.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use super::{Conn, Engine, sql};
use crate::model::PetStatus;

/// A pet's status, stock and price (`None`: it has none), as an order reads them.
pub type PetState = (PetStatus, i64, Option<i64>);

/// An order's row, written with the batch.
#[derive(Clone, Debug)]
pub struct HeldOrder {
    pub id: i64,
    pub pet_id: i64,
    pub key_id: i64,
    pub quantity: i64,
    pub ship_date: Option<String>,
    pub created_at: i64,
    pub unit_price: Option<i64>,
    pub total: Option<i64>,
}

#[derive(Default)]
struct Batch {
    /// The pets read ahead: `None` for one that does not exist.
    pets: HashMap<i64, Option<PetState>>,
    /// Orders not written yet, and the pets whose stock in `pets` is not written yet.
    orders: Vec<HeldOrder>,
    stock_unwritten: BTreeSet<i64>,
    /// The id the next held-back order gets (read at the first).
    next_order_id: Option<i64>,
}

tokio::task_local! {
    static BATCH: RefCell<Batch>;
}

/// Runs `batch` (the queue's first run of a batch) with a place for what it reads ahead
/// and holds back.
pub(super) async fn scope<T>(batch: impl Future<Output = T>) -> T {
    BATCH.scope(RefCell::new(Batch::default()), batch).await
}

/// Reads the state of `pet_ids` in one statement, for the batch's writes to find.
pub(super) async fn load(conn: &mut Conn, mut pet_ids: Vec<i64>) -> Result<(), sqlx::Error> {
    pet_ids.sort_unstable();
    pet_ids.dedup();
    if pet_ids.is_empty() {
        return Ok(());
    }
    let found = sql::inventory::states_and_prices(conn, &pet_ids).await?;
    let _ = BATCH.try_with(|batch| {
        let pets = &mut batch.borrow_mut().pets;
        pets.extend(pet_ids.iter().map(|id| (*id, None)));
        pets.extend(found.into_iter().map(|(id, status, stock, price)| (id, Some((status, stock, price)))));
    });
    Ok(())
}

/// The batch's copy of `pet_id`'s state: `Some(None)` when it read that the pet does
/// not exist, `None` when it did not read it (or no batch is running).
#[expect(clippy::option_option, reason = "not read, and read that there is none, differ")]
pub(super) fn pet(pet_id: i64) -> Option<Option<PetState>> {
    BATCH.try_with(|batch| batch.borrow().pets.get(&pet_id).copied()).ok().flatten()
}

/// A write set `pet_id`'s stock (written already).
pub(super) fn stock_set(pet_id: i64, stock: i64) {
    update(pet_id, |state| state.1 = stock);
}

/// A write set `pet_id`'s status (written already).
pub(super) fn status_set(pet_id: i64, status: PetStatus) {
    update(pet_id, |state| state.0 = status);
}

fn update(pet_id: i64, change: impl FnOnce(&mut PetState)) {
    let _ = BATCH.try_with(|batch| {
        if let Some(Some(state)) = batch.borrow_mut().pets.get_mut(&pet_id) {
            change(state);
        }
    });
}

/// Holds back an order (its `id` is handed out here) and the stock it left, for
/// [`flush`]; its id, or `None` when it is to be written now (no batch's first run, a
/// pet not read ahead, or PostgreSQL).
pub(super) async fn defer_order(conn: &mut Conn, mut order: HeldOrder, stock: i64) -> Result<Option<i64>, sqlx::Error> {
    if conn.engine() != Engine::Sqlite {
        return Ok(None);
    }
    let held = BATCH.try_with(|batch| {
        let batch = batch.borrow();
        (batch.pets.get(&order.pet_id).is_some_and(Option::is_some), batch.next_order_id)
    });
    let (true, next) = held.unwrap_or((false, None)) else { return Ok(None) };
    let next = match next {
        Some(next) => next,
        None => sql::orders::next_id(conn).await?,
    };
    order.id = next;
    let _ = BATCH.try_with(|batch| {
        let mut batch = batch.borrow_mut();
        batch.next_order_id = Some(next + 1);
        if let Some(Some(state)) = batch.pets.get_mut(&order.pet_id) {
            state.1 = stock;
        }
        batch.stock_unwritten.insert(order.pet_id);
        batch.orders.push(order);
    });
    Ok(Some(next))
}

/// Writes what the batch holds back: its orders in one statement, the stock they left
/// in another.
pub(super) async fn flush(conn: &mut Conn) -> Result<(), sqlx::Error> {
    let (orders, stocks) = BATCH
        .try_with(|batch| {
            let mut batch = batch.borrow_mut();
            // An order written at once after this one (a pet not read ahead) takes the
            // next id itself: the next held back reads it again.
            batch.next_order_id = None;
            let orders = std::mem::take(&mut batch.orders);
            let pets = std::mem::take(&mut batch.stock_unwritten);
            let stocks: Vec<(i64, i64)> = pets
                .into_iter()
                .filter_map(|pet| batch.pets.get(&pet).copied().flatten().map(|(_, stock, _)| (pet, stock)))
                .collect();
            (orders, stocks)
        })
        .unwrap_or_default();
    if !orders.is_empty() {
        sql::orders::insert_all(conn, &orders).await?;
    }
    if !stocks.is_empty() {
        sql::inventory::set_stocks(conn, &stocks).await?;
    }
    Ok(())
}
