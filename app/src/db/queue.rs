//! This process's writers of one database file, in one queue.
//!
//! SQLite lets one transaction write at a time. Left to race for that lock, writers
//! sleep in SQLite's busy handler (1 ms and longer between tries, even once the lock is
//! free), and every order paid a `BEGIN` and a `COMMIT` of its own. The queue instead
//! - runs the writes given to [`write`] (orders) one after another on one connection,
//!   as many to a transaction as queued while the last one ran or while its `BEGIN`
//!   waited for the store's lock (another server's batch, on PostgreSQL). A batch
//!   first runs its writes with nothing between them. If one fails, that transaction
//!   is rolled back and the batch runs once more, each write in a savepoint of its
//!   own, so that a failure undoes only itself (its `RELEASE` goes with the next
//!   write's `SAVEPOINT`, or with the `COMMIT`). A batch in which nothing fails, nearly
//!   every one (a refused order is an answer, not a failure), pays for no savepoint,
//!   which on PostgreSQL is a subtransaction and a round trip an order; and
//! - gives the writers of [`super::begin_write`] (everything else) their turn in the
//!   same first-come order, between two such transactions, so neither kind starves
//!   the other.
//!
//! Another process (the CLI) still meets this one in SQLite's busy handler.
//!
//! On SQLite the queue runs on a thread of its own ([`serve_on_own_thread`]) and on
//! the writers' own connection (`sqlite::Pools`), and a batch reads its orders' pets
//! ahead and writes its orders behind (`batch`): an
//! order's statements are hand-offs to the connection's thread, and each hand-off
//! woke two threads.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};

use axum::http::HeaderValue;
use tokio::sync::{mpsc, oneshot};

use super::{Conn, Db, Engine, batch, engine, outbox, sqlite};
use crate::error::{AppError, AppResult};

/// What a queued write runs: borrowing the transaction's connection, answering its
/// result. It may run twice: when a write of its batch fails, the first run is rolled
/// back (see the module's comment), so it must work from what it reads, not from what
/// an earlier run did. An `Err` undoes the write's statements; other writes of the
/// transaction are kept. A write must not answer `Ok` after a statement of its own
/// failed: on PostgreSQL the transaction is then unusable.
pub type Work<'c, T> = Pin<Box<dyn Future<Output = AppResult<T>> + Send + 'c>>;

/// At most this many writes share a transaction, which bounds how long the first of
/// them waits for the `COMMIT` of the last.
const BATCH_MAX: usize = 64;
/// Writers waiting beyond this many wait to be queued (back-pressure, not an error).
const QUEUE_MAX: usize = 1_024;

pub(super) enum Request {
    Write(Box<dyn Job>),
    /// A writer with a transaction of its own: answered when it may begin.
    Turn(oneshot::Sender<Turn>),
}

/// The queue's turn. The queue moves on when this is dropped, so a `WriteTx` holds it
/// until its transaction has ended.
pub struct Turn(#[allow(dead_code)] oneshot::Sender<()>);

/// A queued write: run (perhaps twice, see [`Work`]), then answered once.
pub(super) trait Job: Send {
    /// Whether it is to run now: not when its caller gave up (a timeout, a client
    /// gone) before its first run; a write that ran once runs again.
    fn due(&self) -> bool;
    /// The pet whose state it reads first, if any: read ahead with the batch's others
    /// (`batch`).
    fn pet(&self) -> Option<i64>;
    /// Runs the write in the batch's transaction, keeping its result for the answer;
    /// whether it succeeded.
    fn run<'c>(&'c mut self, conn: &'c mut Conn) -> Pin<Box<dyn Future<Output = bool> + Send + 'c>>;
    /// Answers the caller: its last run's result once the transaction committed
    /// (`committed` is `Ok`), or else the transaction's failure.
    fn answer(self: Box<Self>, committed: AppResult<()>);
}

struct Queued<T, F> {
    work: F,
    pet: Option<i64>,
    /// The request it was queued for: lines the write logs name it (taken on the
    /// request's task; the write runs on the queue's).
    request: Option<HeaderValue>,
    /// The last run's result (`None`: it never ran).
    outcome: Option<AppResult<T>>,
    reply: oneshot::Sender<AppResult<T>>,
}

impl<T, F> Job for Queued<T, F>
where
    T: Send + 'static,
    F: for<'c> Fn(&'c mut Conn) -> Work<'c, T> + Send + 'static,
{
    fn due(&self) -> bool {
        self.outcome.is_some() || !self.reply.is_closed()
    }

    fn pet(&self) -> Option<i64> {
        self.pet
    }

    fn run<'c>(&'c mut self, conn: &'c mut Conn) -> Pin<Box<dyn Future<Output = bool> + Send + 'c>> {
        let work = crate::request_id::within(self.request.clone(), (self.work)(conn));
        Box::pin(async move {
            let outcome = work.await;
            let succeeded = outcome.is_ok();
            self.outcome = Some(outcome);
            succeeded
        })
    }

    fn answer(self: Box<Self>, committed: AppResult<()>) {
        let Queued { outcome, reply, .. } = *self;
        let _ = reply.send(committed.and_then(|()| outcome.unwrap_or_else(|| Err(not_carried_out()))));
    }
}

impl Db {
    /// Runs `work` in the next shared write transaction and answers once that has
    /// committed. A caller that gives up before its turn (a timeout, a client gone) writes
    /// nothing; one that gives up later leaves the write to finish.
    pub async fn write<T, F>(&self, work: F) -> AppResult<T>
    where
        T: Send + 'static,
        F: for<'c> Fn(&'c mut Conn) -> Work<'c, T> + Send + 'static,
    {
        self.queue_write(None, work).await
    }

    /// As [`write`](Db::write), for a write that first reads `pet_id`'s status, stock and
    /// price (`sql::inventory::state_and_price`): its batch reads them ahead, with the
    /// other writes' pets, in one statement.
    pub async fn write_reading_pet<T, F>(&self, pet_id: i64, work: F) -> AppResult<T>
    where
        T: Send + 'static,
        F: for<'c> Fn(&'c mut Conn) -> Work<'c, T> + Send + 'static,
    {
        self.queue_write(Some(pet_id), work).await
    }

    async fn queue_write<T, F>(&self, pet: Option<i64>, work: F) -> AppResult<T>
    where
        T: Send + 'static,
        F: for<'c> Fn(&'c mut Conn) -> Work<'c, T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel::<AppResult<T>>();
        let job = Queued { work, pet, request: crate::request_id::id(), outcome: None, reply };
        self.send(Request::Write(Box::new(job))).await?;
        answer.await.unwrap_or_else(|_| Err(not_carried_out()))
    }

    /// Waits for this process's turn to write (see the module's comment).
    pub(super) async fn turn(&self) -> AppResult<Turn> {
        let (give, taken) = oneshot::channel();
        self.send(Request::Turn(give)).await?;
        taken.await.map_err(|_| not_carried_out())
    }

    async fn send(&self, request: Request) -> AppResult<()> {
        let queue = self.queue();
        queue.send(request).await.map_err(|_| not_carried_out())
    }

    /// The queue, starting its writer task when there is none (the first write, or after
    /// the runtime that ran the last one ended, as between tests).
    fn queue(&self) -> mpsc::Sender<Request> {
        let mut slot = self.0.queue.lock().unwrap_or_else(|p| p.into_inner());
        match slot.as_ref() {
            Some(queue) if !queue.is_closed() => queue.clone(),
            _ => {
                let (queue, requests) = mpsc::channel(QUEUE_MAX);
                // The writer holds the pool, not the handle: a handle dropped everywhere
                // else ends its queue.
                let serving =
                    serve(self.0.write_pool.clone(), self.0.reopen.clone(), Arc::downgrade(&self.0), requests);
                match self.engine() {
                    Engine::Sqlite => serve_on_own_thread(serving),
                    // A PostgreSQL connection's socket belongs to the runtime that opened
                    // it; a runtime of the writer's own would strand those it opens when
                    // it ends. Its round trips are the network's anyway.
                    Engine::Postgres => drop(tokio::spawn(serving)),
                }
                *slot = Some(queue.clone());
                queue
            }
        }
    }
}

/// The writer behind a queue stopped before answering: its transaction failed to begin
/// or to commit (the cause is in the log), or the runtime is shutting down. Nothing
/// of the request was written.
fn not_carried_out() -> AppError {
    AppError::busy()
}

async fn serve(
    pool: super::Pool,
    reopen: sqlite::Reopen,
    db: Weak<super::Inner>,
    mut requests: mpsc::Receiver<Request>,
) {
    // A turn met while gathering a batch: it waits for that batch, then goes first.
    let mut held = None;
    loop {
        if let Some(give) = held.take() {
            give_turn(give).await;
        }
        let mut writes = Vec::with_capacity(BATCH_MAX);
        match requests.recv().await {
            None => return,
            Some(Request::Turn(give)) => held = Some(give),
            Some(Request::Write(job)) => {
                writes.push(job);
                held = gather(&mut requests, &mut writes);
                run_together(&pool, &reopen, &db, writes, &mut requests, &mut held).await;
            }
        }
    }
}

/// Runs a SQLite store's writer on a thread of its own, with a runtime of its own.
///
/// Each statement of a batch is a hand-off to the connection's thread and back. Woken
/// from that thread, a task on the shared runtime waits in its global queue behind the
/// request tasks, one wait after another for a whole batch: under 64 clients the orders
/// sat at about 3,000 a second with the server's two cores half idle. Here nothing else
/// runs, so the writer goes on as soon as its answer comes. The runtime has no IO
/// driver (sqlx's SQLite connections are threads of their own, tied to no runtime):
/// one with an IO driver is woken through an eventfd, 12 % of the server's samples in
/// `perf` with it, against a futex that is only touched when the thread sleeps.
fn serve_on_own_thread(serving: impl Future<Output = ()> + Send + 'static) {
    let started = std::thread::Builder::new().name("petstore-writer".into()).spawn(move || {
        match tokio::runtime::Builder::new_current_thread().enable_time().build() {
            Ok(runtime) => runtime.block_on(serving),
            // The queue's receiver is dropped: writes answer 503 (`not_carried_out`).
            Err(err) => tracing::error!(error = %err, "the write queue's runtime did not start"),
        }
    });
    if let Err(err) = started {
        tracing::error!(error = %err, "the write queue's thread did not start");
    }
}

/// Lets a writer of its own transaction begin, and waits until it has ended.
async fn give_turn(give: oneshot::Sender<Turn>) {
    let (done, ended) = oneshot::channel();
    if give.send(Turn(done)).is_ok() {
        let _ = ended.await;
    }
}

/// Moves the writes already waiting into `writes`, up to a batch, stopping at a turn
/// (answered: the writes before it go first).
fn gather(requests: &mut mpsc::Receiver<Request>, writes: &mut Vec<Box<dyn Job>>) -> Option<oneshot::Sender<Turn>> {
    while writes.len() < BATCH_MAX {
        match requests.try_recv() {
            Ok(Request::Write(job)) => writes.push(job),
            Ok(Request::Turn(give)) => return Some(give),
            Err(_) => break,
        }
    }
    None
}

/// One transaction for `writes`; each caller is answered once it has committed (or
/// failed: then every write of it is undone and each caller told so). First without
/// savepoints, the pets its writes read fetched in one statement and its orders written
/// together (`batch`); if a write fails, once more with a savepoint each (the module's
/// comment), each write reading and writing for itself.
async fn run_together(
    pool: &super::Pool,
    reopen: &sqlite::Reopen,
    db: &Weak<super::Inner>,
    mut writes: Vec<Box<dyn Job>>,
    requests: &mut mpsc::Receiver<Request>,
    held: &mut Option<oneshot::Sender<Turn>>,
) {
    // A failed BEGIN or COMMIT tells the store's health (`health`) what failed.
    let failed = |err: sqlx::Error| {
        if let Some(db) = db.upgrade() {
            Db(db).note_failed(&err);
        }
        AppError::from(err)
    };
    let together = outbox::collecting(batch::scope(async {
        let mut tx = engine::begin_write(pool, reopen).await.map_err(failed)?;
        // The writes that came while the store's lock was awaited join this batch (on
        // PostgreSQL, another server's batch may have held it a while): each
        // transaction carries as many as it can, and two servers take turns at the
        // lock with full batches rather than each with the few that had come when it
        // asked.
        if held.is_none() {
            *held = gather(requests, &mut writes);
        }
        let pets = writes.iter().filter(|write| write.due()).filter_map(|write| write.pet()).collect();
        if batch::load(&mut tx, pets).await.is_err() {
            // As a write's own read failing would: each runs again apart, reading for
            // itself, and meets the fault as its own.
            let _ = tx.rollback().await;
            return Ok(false);
        }
        for write in writes.iter_mut().filter(|write| write.due()) {
            if !write.run(&mut tx).await {
                // Undone with the others' statements; all run again, apart.
                let _ = tx.rollback().await;
                return Ok(false);
            }
        }
        // The orders held back (see `batch`): if writing them fails, each write runs
        // again apart, and the one at fault fails alone.
        if batch::flush(&mut tx).await.is_err() {
            let _ = tx.rollback().await;
            return Ok(false);
        }
        // The batch's events, in one statement (see `outbox`).
        outbox::store_batch(&mut tx).await.map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        Ok(true)
    }))
    .await;
    let committed = match together {
        Ok(true) => Ok(()),
        Ok(false) => outbox::collecting(run_apart(pool, reopen, &failed, &mut writes)).await,
        Err(err) => Err(err),
    };
    // Also after a failed COMMIT: whether it took effect is unknown.
    if let Some(db) = db.upgrade() {
        let db = Db(db);
        db.bump();
        if committed.is_ok() {
            db.note_committed();
        }
    }
    for write in writes {
        write.answer(committed.clone());
    }
}

/// The batch again, after one of its writes failed: each write in a savepoint, so that
/// one that fails undoes only itself.
async fn run_apart(
    pool: &super::Pool,
    reopen: &sqlite::Reopen,
    failed: &impl Fn(sqlx::Error) -> AppError,
    writes: &mut [Box<dyn Job>],
) -> AppResult<()> {
    let mut tx = engine::begin_write(pool, reopen).await.map_err(failed)?;
    // Whether the last write's savepoint is still open: a write that succeeds leaves
    // its `RELEASE` to go with the next one's `SAVEPOINT`, or to the `COMMIT`.
    let mut last_open = false;
    for write in writes.iter_mut().filter(|write| write.due()) {
        engine::savepoint(&mut tx, last_open).await.map_err(|_| broken())?;
        let events = outbox::mark();
        last_open = write.run(&mut tx).await;
        if !last_open {
            outbox::forget_after(events);
            engine::undo_savepoint(&mut tx).await.map_err(|_| broken())?;
        }
    }
    outbox::store_batch(&mut tx).await.map_err(failed)?;
    tx.commit().await.map_err(failed)
}

/// A savepoint could not be opened or closed: the connection failed under the batch
/// (on PostgreSQL, it dropped). All is rolled back, and each caller told to retry.
fn broken() -> AppError {
    AppError::unavailable("the store's connection failed; nothing was written")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::db::sql;

    async fn pool() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::connect(&crate::db::testing::scratch_url(dir.path()).await).await.unwrap();
        create_notes(&db).await;
        (dir, db)
    }

    /// The tests' own table, made by the writers' connection, as the store's own
    /// schema changes (migrations) are made before anything else runs.
    ///
    /// Never on the readers' pool, and this module's pets are written by the writer
    /// too: SQLite (3.40 and 3.51 both) fails to prepare an insert into `pets` with
    /// "no such table: pets" on a connection whose schema another connection changed
    /// since it last read it, if that connection has not yet opened the full-text
    /// index the insert's trigger writes (FTS5's constructor hits the stale schema
    /// and the prepare is not retried). Which reader a query gets is up to the pool,
    /// so a test that made its table on one reader and its pet on another failed now
    /// and then (in 3 to 5 of 100 runs of the `db::` tests beside two busy cores).
    async fn create_notes(db: &Db) {
        let mut tx = db.begin_write().await.unwrap();
        crate::on_conn!(&mut *tx, |c| sqlx::query("CREATE TABLE notes (n BIGINT NOT NULL)")
            .execute(c)
            .await
            .map(|_| ()))
        .unwrap();
        tx.commit().await.unwrap();
    }

    /// How a test's write ends.
    #[derive(Clone, Copy)]
    enum Ending {
        Kept,
        /// It answers `Err` after writing its row and its event.
        Refused,
        /// Its statement fails (on PostgreSQL, that leaves the transaction unusable
        /// until it is rolled back).
        FailedStatement,
    }
    use Ending::*;

    fn note(pool: &Db, n: i64, ending: Ending) -> impl Future<Output = AppResult<i64>> + use<> {
        let pool = pool.clone();
        let row = if matches!(ending, FailedStatement) { None } else { Some(n) };
        async move {
            pool.write(move |conn| {
                Box::pin(async move {
                    crate::on_conn!(conn, |c| sqlx::query("INSERT INTO notes (n) VALUES ($1)")
                        .bind(row)
                        .execute(c)
                        .await
                        .map(|_| ()))?;
                    // And its event (stored with the batch's others, before the commit).
                    let event = outbox::NewEvent {
                        id: format!("evt_note_{n}"),
                        kind: "note",
                        created_at: 0,
                        data: n.to_string(),
                        owner_key_id: None,
                        admin_only: false,
                    };
                    outbox::add(conn, event).await?;
                    match ending {
                        Refused => Err(AppError::validation("n", "refused after writing")),
                        _ => Ok(n),
                    }
                })
            })
            .await
        }
    }

    async fn notes(pool: &Db) -> Vec<i64> {
        crate::on_pool!(pool, |p| sqlx::query_scalar("SELECT n FROM notes ORDER BY n").fetch_all(p).await).unwrap()
    }

    /// The notes' events, in the order of their `seq`.
    async fn noted_events(pool: &Db) -> Vec<String> {
        crate::on_pool!(pool, |p| sqlx::query_scalar("SELECT data FROM events ORDER BY seq").fetch_all(p).await)
            .unwrap()
    }

    /// A pet with `stock` units, written outside the queue, as another request's own
    /// transaction would be.
    async fn stocked_pet(pool: &Db, stock: i64) -> i64 {
        let mut tx = pool.begin_write().await.unwrap();
        let pet = crate::on_conn!(&mut *tx, |c| async {
            sqlx::query("INSERT INTO categories (name, name_key) VALUES ('Dogs', 'dogs')").execute(&mut *c).await?;
            let pet: i64 = sqlx::query_scalar(
                "INSERT INTO pets (name, name_key, category_id, status) VALUES ('Rex', 'rex', 1, 'available') RETURNING id",
            )
            .fetch_one(&mut *c)
            .await?;
            sqlx::query("INSERT INTO inventory (pet_id, quantity) VALUES ($1, $2)")
                .bind(pet)
                .bind(stock)
                .execute(&mut *c)
                .await?;
            Ok::<_, sqlx::Error>(pet)
        }
        .await)
        .unwrap();
        tx.commit().await.unwrap();
        pet
    }

    /// A write that takes one unit of `pet`'s stock, answering the stock it read.
    fn take_one(pool: &Db, pet: i64, ending: Ending) -> impl Future<Output = AppResult<i64>> + use<> {
        let pool = pool.clone();
        async move {
            pool.write_reading_pet(pet, move |conn| {
                Box::pin(async move {
                    let (_, stock, _) = sql::inventory::state_and_price(conn, pet).await?.expect("the pet exists");
                    sql::inventory::set_stock(conn, pet, stock - 1).await?;
                    match ending {
                        Refused => Err(AppError::validation("stock", "refused after writing")),
                        _ => Ok(stock),
                    }
                })
            })
            .await
        }
    }

    /// Queues `writes` behind a turn held meanwhile, so that they make one batch.
    async fn in_one_batch<T: Send + 'static>(
        pool: &Db,
        writes: Vec<impl Future<Output = AppResult<T>> + Send + 'static>,
    ) -> Vec<AppResult<T>> {
        let turn = pool.begin_write().await.unwrap();
        let writes: Vec<_> = writes.into_iter().map(tokio::spawn).collect();
        tokio::task::yield_now().await;
        drop(turn);
        futures::future::join_all(writes).await.into_iter().map(Result::unwrap).collect()
    }

    async fn stock(pool: &Db, pet: i64) -> i64 {
        crate::on_pool!(pool, |p| sqlx::query_scalar("SELECT quantity FROM inventory WHERE pet_id = $1")
            .bind(pet)
            .fetch_one(p)
            .await)
        .unwrap()
    }

    #[tokio::test]
    async fn writes_of_one_batch_read_the_stock_the_ones_before_them_left() {
        let (_dir, pool) = pool().await;
        let pet = stocked_pet(&pool, 10).await;
        let before = pool.generation();
        let read = in_one_batch(&pool, (0..5).map(|_| take_one(&pool, pet, Kept)).collect()).await;
        assert_eq!(read, [Ok(10), Ok(9), Ok(8), Ok(7), Ok(6)], "each read what the write before it left");
        assert_eq!(stock(&pool, pet).await, 5);
        assert_eq!(pool.generation(), before + 1, "one transaction for the five");
    }

    #[tokio::test]
    async fn a_batch_run_again_reads_its_pets_afresh() {
        let (_dir, pool) = pool().await;
        let pet = stocked_pet(&pool, 10).await;
        // The first run takes three units and is rolled back (the second write fails);
        // run again, each write reads what the store holds, not what the first run left.
        let read = in_one_batch(
            &pool,
            vec![take_one(&pool, pet, Kept), take_one(&pool, pet, Refused), take_one(&pool, pet, Kept)],
        )
        .await;
        assert_eq!(read[0], Ok(10));
        assert_eq!(read[1].as_ref().unwrap_err().field(), Some("stock"));
        assert_eq!(read[2], Ok(9));
        assert_eq!(stock(&pool, pet).await, 8);
    }

    #[tokio::test]
    async fn a_failed_write_undoes_only_itself() {
        let (_dir, pool) = pool().await;
        let before = pool.generation();
        let outcomes =
            in_one_batch(&pool, vec![note(&pool, 1, Kept), note(&pool, 2, Refused), note(&pool, 3, Kept)]).await;
        assert_eq!(outcomes[0], Ok(1));
        assert_eq!(outcomes[1].as_ref().unwrap_err().field(), Some("n"));
        assert_eq!(outcomes[2], Ok(3));
        assert_eq!(notes(&pool).await, vec![1, 3]);
        assert_eq!(noted_events(&pool).await, ["1", "3"], "the undone write's event went with it");
        assert_ne!(pool.generation(), before, "the read caches see the write");
    }

    #[tokio::test]
    async fn a_batch_with_a_failure_runs_again_each_write_in_a_savepoint() {
        let (_dir, pool) = pool().await;
        // One batch: failures first, in the middle (after writing, and a statement that
        // fails) and last; each write's savepoint, when it is kept, is released by the
        // next one's opening or by the COMMIT. What this can see: a failure undoing more
        // or less than itself, a write kept twice (it ran again after a rollback), an
        // event of an undone run kept, a RELEASE too many, a transaction left unusable.
        let outcomes = in_one_batch(
            &pool,
            vec![
                note(&pool, 1, Refused),
                note(&pool, 2, Kept),
                note(&pool, 8, FailedStatement),
                note(&pool, 3, Kept),
                note(&pool, 4, Refused),
                note(&pool, 5, Kept),
                note(&pool, 6, Refused),
            ],
        )
        .await;
        let kept: Vec<bool> = outcomes.iter().map(Result::is_ok).collect();
        assert_eq!(kept, [false, true, false, true, false, true, false]);
        assert_eq!(outcomes[0].as_ref().unwrap_err().field(), Some("n"), "each failure answered as its own");
        assert_eq!(outcomes[2].as_ref().unwrap_err().status, 500);
        assert_eq!(outcomes[3], Ok(3));
        assert_eq!(notes(&pool).await, vec![2, 3, 5], "each failure undid only itself, and each write is kept once");
        assert_eq!(noted_events(&pool).await, ["2", "3", "5"]);
        // The connection is clean afterwards: the next transaction writes as usual.
        assert_eq!(note(&pool, 7, Kept).await, Ok(7));
        assert_eq!(notes(&pool).await, vec![2, 3, 5, 7]);
    }

    #[tokio::test]
    async fn writes_queued_while_the_lock_is_awaited_join_the_batch_that_awaits_it() {
        let dir = tempfile::tempdir().unwrap();
        let url = crate::db::testing::scratch_url(dir.path()).await;
        let pool = Db::connect(&url).await.unwrap();
        create_notes(&pool).await;
        // Another process (another server, on PostgreSQL) holds the store's lock.
        let other = Db::connect(&url).await.unwrap();
        let held = other.begin_write().await.unwrap();
        let first = tokio::spawn(note(&pool, 1, Kept));
        tokio::time::sleep(Duration::from_millis(100)).await;
        let before = pool.generation();
        let later: Vec<_> = (2..=5).map(|n| tokio::spawn(note(&pool, n, Kept))).collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        held.commit().await.unwrap();
        assert_eq!(first.await.unwrap(), Ok(1));
        for write in later {
            write.await.unwrap().unwrap();
        }
        assert_eq!(notes(&pool).await, vec![1, 2, 3, 4, 5]);
        assert_eq!(pool.generation(), before + 1, "one transaction for the five");
    }

    #[tokio::test]
    async fn writes_and_turns_keep_their_order() {
        let (_dir, pool) = pool().await;
        // While a writer holds the turn, 100 writes queue, then a writer of its own
        // transaction, then one more write (each `yield_now` lets the tasks spawned
        // before it reach the queue, on the test's one-thread runtime).
        let first = pool.begin_write().await.unwrap();
        let writes: Vec<_> = (0..100).map(|n| tokio::spawn(note(&pool, n, Kept))).collect();
        tokio::task::yield_now().await;
        let own = tokio::spawn({
            let pool = pool.clone();
            async move {
                let mut tx = pool.begin_write().await.unwrap();
                let seen: Vec<i64> = crate::on_conn!(&mut *tx, |c| {
                    let seen = sqlx::query_scalar("SELECT n FROM notes ORDER BY n").fetch_all(&mut *c).await.unwrap();
                    sqlx::query("INSERT INTO notes (n) VALUES (1000)").execute(c).await.unwrap();
                    seen
                });
                tx.commit().await.unwrap();
                seen
            }
        });
        tokio::task::yield_now().await;
        let last = tokio::spawn(note(&pool, 2000, Kept));
        tokio::task::yield_now().await;
        drop(first);

        assert_eq!(own.await.unwrap(), (0..100).collect::<Vec<_>>(), "the writes queued before it, and no other");
        for write in writes {
            write.await.unwrap().unwrap();
        }
        assert_eq!(last.await.unwrap(), Ok(2000));
        assert_eq!(notes(&pool).await.len(), 102);
        let events: Vec<String> = (0..100).chain([2000]).map(|n| n.to_string()).collect();
        assert_eq!(noted_events(&pool).await, events, "each batch's events in the order of its writes");
    }

    #[tokio::test]
    async fn a_caller_that_gave_up_before_its_turn_writes_nothing() {
        let (_dir, pool) = pool().await;
        // A writer holds the turn, so the next write waits in the queue; its caller
        // gives up there.
        let tx = pool.begin_write().await.unwrap();
        let abandoned = tokio::time::timeout(Duration::from_millis(50), note(&pool, 1, Kept)).await;
        assert!(abandoned.is_err(), "the write waited behind the turn");
        drop(tx);
        assert_eq!(note(&pool, 2, Kept).await, Ok(2));
        assert_eq!(notes(&pool).await, vec![2]);
    }
}
