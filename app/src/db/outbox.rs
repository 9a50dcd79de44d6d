//! The outbox's writes. An event is stored by the transaction whose change it reports
//! ([`add`]): at once in a transaction of its own kind, but in a batch of the write
//! queue (orders) it waits for the batch's end and is stored with the batch's other
//! events in one statement, just before the `COMMIT`. Two `INSERT`s per order
//! (`order.created`, `inventory.updated`), each a round trip to SQLite's connection
//! thread, cost the orders as much again as the order itself; one per batch is
//! noise. A batch that is rolled back (one of its writes failed) takes its events with
//! it, and they are collected again when it runs again; there, a write rolled back to
//! its savepoint takes its own events with it ([`mark`], [`forget_after`]).

use std::cell::RefCell;

use super::{Conn, sql};
use crate::error::AppResult;

/// An event to store (`sql::events`'s columns but `seq`, which the store hands out).
#[derive(Clone, Debug)]
pub struct NewEvent {
    pub id: String,
    pub kind: &'static str,
    /// Unix milliseconds.
    pub created_at: i64,
    /// JSON.
    pub data: String,
    pub owner_key_id: Option<i64>,
    pub admin_only: bool,
}

tokio::task_local! {
    /// The events of the batch the write queue is running, in the order they were added.
    static BATCH: RefCell<Vec<NewEvent>>;
}

/// Stores `event` with the transaction `conn` is in (see the module's comment).
pub async fn add(conn: &mut Conn, event: NewEvent) -> AppResult<()> {
    let mut event = Some(event);
    let deferred = BATCH.try_with(|batch| batch.borrow_mut().extend(event.take())).is_ok();
    match event {
        Some(event) if !deferred => Ok(sql::events::insert_all(conn, std::slice::from_ref(&event)).await?),
        _ => Ok(()),
    }
}

/// Runs `batch` (the queue's transaction) with a place for its events.
pub(super) async fn collecting<T>(batch: impl Future<Output = T>) -> T {
    BATCH.scope(RefCell::new(Vec::new()), batch).await
}

/// How many events the batch holds: where a write's own begin.
pub(super) fn mark() -> usize {
    BATCH.try_with(|batch| batch.borrow().len()).unwrap_or(0)
}

/// Drops the events added after `mark` (their write was rolled back).
pub(super) fn forget_after(mark: usize) {
    let _ = BATCH.try_with(|batch| batch.borrow_mut().truncate(mark));
}

/// Stores the batch's events, in its transaction, before it commits.
pub(super) async fn store_batch(conn: &mut Conn) -> Result<(), sqlx::Error> {
    let events = BATCH.try_with(|batch| std::mem::take(&mut *batch.borrow_mut())).unwrap_or_default();
    sql::events::insert_all(conn, &events).await
}
