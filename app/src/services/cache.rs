//! Read caches for the catalog (a pet, a page of pets, the category summaries), so that
//! a busy storefront or integration costs no database round trip per read.
//!
//! An entry is served only while it is of the current generation of the data
//! (`db::data_version`):
//! - every write this process commits moves the generation on, so this process never
//!   serves what it has itself overwritten, and a client that wrote reads its write;
//! - a change to the catalog made by another process (the sqlite3 prompt today,
//!   another server once several share one database) moves it on within
//!   `db::CATALOG_WATCH_INTERVAL` (`db::watch_catalog`).
//!
//! Entries do not otherwise expire: under a steady stream of reads and no writes, none
//! of them goes to the database. Errors are not cached. Each cache is bounded: when
//! full it is emptied and refills.

use std::future::Future;
use std::hash::Hash;

use dashmap::DashMap;

use crate::db::{DataVersion, Pool, data_version};

pub struct ReadCache<K, V> {
    entries: DashMap<(u64, K), Entry<V>>,
    capacity: usize,
}

struct Entry<V> {
    generation: u64,
    value: V,
}

impl<K: Eq + Hash, V: Clone> ReadCache<K, V> {
    pub fn new(capacity: usize) -> ReadCache<K, V> {
        ReadCache { entries: DashMap::new(), capacity }
    }

    /// The cached value for `key`, or the answer of the read `read` starts (cached when
    /// it is a success).
    pub async fn get_or_read<R, F, E>(&self, pool: &Pool, key: K, read: R) -> Result<V, E>
    where
        R: FnOnce() -> F,
        F: Future<Output = Result<V, E>>,
    {
        let DataVersion { file, generation } = data_version(pool);
        let key = (file, key);
        if let Some(entry) = self.entries.get(&key) {
            if entry.generation == generation {
                return Ok(entry.value.clone());
            }
        }
        // Made only on a miss, and boxed: a read's future (sqlx's) is large, and as a
        // part of this one it would be copied with every caller's future on every hit.
        let value = Box::pin(read()).await?;
        if self.entries.len() >= self.capacity {
            self.entries.clear();
        }
        self.entries.insert(key, Entry { generation, value: value.clone() });
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::db;
    use crate::error::AppResult;

    /// A read's answer, typed as the services' are.
    fn ok<T>(value: T) -> AppResult<T> {
        Ok(value)
    }

    async fn pool() -> (tempfile::TempDir, Pool) {
        let dir = tempfile::tempdir().unwrap();
        let pool = db::connect(&format!("sqlite://{}", dir.path().join("t.db").display())).await.unwrap();
        (dir, pool)
    }

    #[tokio::test]
    async fn serves_the_cached_value_until_a_write_commits() {
        let (_dir, pool) = pool().await;
        let cache = ReadCache::<i64, usize>::new(10);
        let reads = AtomicUsize::new(0);
        let read = || async { ok(reads.fetch_add(1, Ordering::SeqCst)) };
        assert_eq!(cache.get_or_read(&pool, 1, read).await.unwrap(), 0);
        assert_eq!(cache.get_or_read(&pool, 1, read).await.unwrap(), 0, "cached");
        assert_eq!(cache.get_or_read(&pool, 2, read).await.unwrap(), 1, "another key");

        // A rolled-back write changes nothing; a committed one makes every entry stale.
        drop(db::begin_write(&pool).await.unwrap());
        assert_eq!(cache.get_or_read(&pool, 1, read).await.unwrap(), 0);
        db::begin_write(&pool).await.unwrap().commit().await.unwrap();
        assert_eq!(cache.get_or_read(&pool, 1, read).await.unwrap(), 2);
        assert_eq!(cache.get_or_read(&pool, 1, read).await.unwrap(), 2);
    }

    #[tokio::test]
    async fn a_write_during_the_read_keeps_its_result_from_being_served() {
        let (_dir, pool) = pool().await;
        let cache = ReadCache::<i64, &str>::new(10);
        let racing = async {
            // The write commits after the read started.
            db::begin_write(&pool).await.unwrap().commit().await.unwrap();
            ok("read before the write")
        };
        assert_eq!(cache.get_or_read(&pool, 1, || racing).await.unwrap(), "read before the write");
        assert_eq!(cache.get_or_read(&pool, 1, || async { ok("fresh") }).await.unwrap(), "fresh");
    }

    #[tokio::test]
    async fn a_commit_whose_caller_gives_up_still_moves_the_generation() {
        let (_dir, pool) = pool().await;
        let before = db::data_version(&pool);
        let tx = db::begin_write(&pool).await.unwrap();
        // The caller is dropped after one poll, with COMMIT under way (a timeout, a
        // client gone); whether or not it had finished, the generation must move on.
        let mut commit = Box::pin(tx.commit());
        let _ = std::future::poll_fn(|cx| std::task::Poll::Ready(commit.as_mut().poll(cx))).await;
        drop(commit);
        for _ in 0..200 {
            if db::data_version(&pool) != before {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the generation did not move on, so entries read before the write stay valid");
    }

    #[tokio::test]
    async fn errors_are_not_kept() {
        let (_dir, pool) = pool().await;
        let cache = ReadCache::<i64, &str>::new(10);
        let failed = cache.get_or_read(&pool, 1, || async { Err(crate::error::AppError::not_found("pet", 1)) }).await;
        assert!(failed.is_err());
        assert_eq!(cache.get_or_read(&pool, 1, || async { ok("first") }).await.unwrap(), "first");
        assert_eq!(cache.get_or_read(&pool, 1, || async { ok("second") }).await.unwrap(), "first");
    }

    #[tokio::test]
    async fn writes_outside_the_catalog_keep_entries() {
        let (_dir, pool) = pool().await;
        let cache = ReadCache::<i64, &str>::new(10);
        assert_eq!(cache.get_or_read(&pool, 1, || async { ok("first") }).await.unwrap(), "first");
        db::begin_write_outside_catalog(&pool).await.unwrap().commit().await.unwrap();
        assert_eq!(cache.get_or_read(&pool, 1, || async { ok("second") }).await.unwrap(), "first");
    }

    #[tokio::test]
    async fn a_catalog_change_by_another_process_is_seen_within_the_watch_interval() {
        let (dir, pool) = pool().await;
        let watcher = tokio::spawn(db::watch_catalog(pool.clone()));
        let cache = ReadCache::<i64, &str>::new(10);
        assert_eq!(cache.get_or_read(&pool, 1, || async { ok("before") }).await.unwrap(), "before");
        tokio::time::sleep(3 * db::CATALOG_WATCH_INTERVAL).await;
        assert_eq!(
            cache.get_or_read(&pool, 1, || async { ok("unchanged") }).await.unwrap(),
            "before",
            "nothing changed"
        );

        // Another process: a connection of its own, outside this process's queue and
        // generation, as the sqlite3 prompt would write.
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let mut other = <sqlx::SqliteConnection as sqlx::Connection>::connect(&url).await.unwrap();
        sqlx::query("INSERT INTO categories (name, name_key) VALUES ('Owls', 'owls')")
            .execute(&mut other)
            .await
            .unwrap();
        tokio::time::sleep(3 * db::CATALOG_WATCH_INTERVAL).await;
        assert_eq!(cache.get_or_read(&pool, 1, || async { ok("after") }).await.unwrap(), "after");
        watcher.abort();
    }

    #[tokio::test]
    async fn databases_do_not_share_entries_and_a_full_cache_starts_over() {
        let ((_a, one), (_b, other)) = (pool().await, pool().await);
        let cache = ReadCache::<i64, &str>::new(2);
        assert_eq!(cache.get_or_read(&one, 1, || async { ok("one") }).await.unwrap(), "one");
        assert_eq!(cache.get_or_read(&other, 1, || async { ok("other") }).await.unwrap(), "other");
        assert_eq!(cache.entries.len(), 2);
        assert_eq!(cache.get_or_read(&one, 2, || async { ok("two") }).await.unwrap(), "two");
        assert_eq!(cache.entries.len(), 1, "emptied when full, then the new entry");
    }
}
