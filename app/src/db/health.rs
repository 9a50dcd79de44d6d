//! Whether this store can write: `/readyz` says not ready from the first write whose
//! `BEGIN` or `COMMIT` failed for lack of space, a read-only volume or an I/O error
//! until the store's own one-row write, tried every [`PROBE_EVERY`] meanwhile, commits:
//! it turns ready by itself once the fault ends, whether or not clients write. The
//! fault is logged once when it starts and once when it ends, and each failed `BEGIN`
//! or `COMMIT` is counted (in WAL mode these are where SQLite meets the disk on a write;
//! a statement's own failure is answered the same way but neither counted nor logged).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::{Db, Failure, sql};

/// How often a failing store tries to write.
pub const PROBE_EVERY: Duration = Duration::from_millis(500);

#[derive(Default)]
pub(super) struct WriteHealth {
    /// A storage fault: not ready.
    failing: AtomicBool,
    /// Writers that waited their whole busy timeout for a lock another connection
    /// holds: said once in the log, not once a request.
    waiting_for_lock: AtomicBool,
}

impl Db {
    /// Whether the last write this store tried to commit failed for a storage fault
    /// (and none has committed since).
    pub fn writes_failing(&self) -> bool {
        self.0.health.failing.load(Ordering::Acquire)
    }

    /// After a write committed: the lock is free (again). A storage fault is ended
    /// by the probe's write only: a transaction that changed nothing commits without
    /// touching the disk, and proves nothing.
    pub(super) fn note_committed(&self) {
        if self.0.health.waiting_for_lock.swap(false, Ordering::AcqRel) {
            tracing::warn!("writes work again: the lock was released");
        }
    }

    /// After the probe's write committed: the storage takes writes again.
    fn note_recovered(&self) {
        if self.0.health.failing.swap(false, Ordering::AcqRel) {
            // Connections opened during the fault may be read-only (see `Reopen`).
            self.0.reopen.all_opened_until_now();
            tracing::warn!("writes work again: the store is ready");
        }
    }

    /// After a `BEGIN` or `COMMIT` failed with `err`: counted by kind; a storage fault
    /// makes the store not ready until a write commits again. Each fault is logged when
    /// it starts (and by `note_committed` when it ends).
    pub(super) fn note_failed(&self, err: &sqlx::Error) {
        let Some(failure) = Failure::of(err) else { return };
        // The request that met the fault first, if a request's write did (not a batch's).
        let request = crate::request_id::current();
        metrics::counter!("petstore_db_faults_total", "kind" => failure.as_str()).increment(1);
        if failure == Failure::Busy {
            if !self.0.health.waiting_for_lock.swap(true, Ordering::AcqRel) {
                tracing::warn!(request, error = %err, "writes wait past the busy timeout for a lock another connection holds: \
                    refused with 503 until it is released");
            }
            return;
        }
        if failure == Failure::Storage {
            // A connection opened meanwhile may be read-only for good (see `Reopen`).
            self.0.reopen.all_opened_until_now();
        }
        if !self.0.health.failing.swap(true, Ordering::AcqRel) {
            tracing::error!(request, error = %err, kind = failure.as_str(),
                "writes fail for a storage fault: not ready until one commits again");
            self.0.runtime.spawn(self.clone().probe());
        }
    }

    /// After a write was refused for lack of space (507), wherever the engine said so:
    /// SQLite says it at `COMMIT` (counted there, by `note_failed`), PostgreSQL at the
    /// statement that needed a new page. Not ready until a write commits again.
    pub fn note_out_of_space(&self) {
        if !self.0.health.failing.swap(true, Ordering::AcqRel) {
            tracing::error!("a write was refused for lack of space: not ready until one commits again");
            self.0.runtime.spawn(self.clone().probe());
        }
    }

    /// Tries a write every [`PROBE_EVERY`] while writes fail; ends once one commits
    /// (which ends the fault) or the pool is closed.
    async fn probe(self) {
        while self.writes_failing() && !self.pool().is_closed() {
            tokio::time::sleep(PROBE_EVERY).await;
            let Ok(mut tx) = self.begin_write_outside_catalog().await else { continue };
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
            match sql::touch_write_probe(&mut tx, i64::try_from(now).unwrap_or(i64::MAX)).await {
                Ok(()) if tx.commit().await.is_ok() => self.note_recovered(),
                Ok(()) => {}
                // SQLite may begin a write on a connection it opened read-only during
                // the fault and refuse only its statement: that connection would take
                // every probe after the fault ends. Replace it, and its like.
                Err(err) if Failure::of(&err) == Some(Failure::Storage) => self.0.reopen.all_opened_until_now(),
                Err(_) => {}
            }
        }
    }
}
