//! Read caches for the catalog (a pet, a pet as the API's JSON, a page of pets, a page
//! of pets as the API's JSON, the category summaries), so that a busy storefront or
//! integration costs no database round trip per read. They belong to the store's
//! handle (`db::Db`), and the services fill them (`services::pets`,
//! `services::categories`): two stores in one process share nothing.
//!
//! An entry is served only while it is of the current generation of the data
//! (`Db::generation`, kept with every value), or a later one:
//! - every write this process commits moves the generation on, so this process never
//!   serves what it has itself overwritten, and a client that wrote reads its write;
//! - a change to the catalog made by another process (the sqlite3 prompt today,
//!   another server once several share one database) moves it on within
//!   `db::CATALOG_WATCH_INTERVAL` (`Db::watch_catalog`).
//!
//! Under a steady stream of reads and no writes, none of them goes to the database.
//! Concurrent misses of one key read it once: the first caller holds a placeholder
//! (quick_cache's) that the others wait for, and they get its value, or its error (an
//! error is handed to them and then dropped, never kept). Each cache is bounded by
//! quick_cache's policy (CLOCK-Pro: an entry read once is the first to go, one read
//! again is kept), so a burst of one-off keys cannot push out what is read often. A
//! stale value is replaced under its own key, and an entry of a past generation that
//! nobody reads again is evicted in its turn, within the bound.
//!
//! Why quick_cache, not moka (which the page cache in `server::pages` uses): a hit here
//! is a hash, a shard's read lock and a clone. moka's hit also logged the read for its
//! policy and ran that log now and then: on the pet read about 900 instructions for
//! each of its two caches (this one and the key cache; docs/PERFORMANCE.md, "What
//! changed", 23).

use std::hash::Hash;

use crate::db::Db;
use crate::db::sql::pets::Keyset;
use crate::error::{AppError, AppResult};
use crate::model::{CategorySummary, PetCard, PetFilter};

/// A page of cards, or of pets as the API's JSON, as it is cached: the filter (its
/// search text folded, so that "Rex" and "rex" share an entry), where the page starts
/// and how many it holds.
pub type CardsKey = (PetFilter, Keyset, u32);

/// A page of pets as the API sends it (`services::pets::list_as_json`): the JSON array
/// of its pets, and the cursor of the page after it, if any.
#[derive(Clone, Debug)]
pub struct JsonPage {
    pub json: axum::body::Bytes,
    pub next_cursor: Option<std::sync::Arc<str>>,
}

/// What a key holds: a value with the generation it was read at, or a read's failure on
/// its way to the callers that waited for that read (removed as soon as it is handed
/// over).
#[derive(Clone)]
enum Entry<V> {
    Read(u64, V),
    Failed(AppError),
}

impl<V> Entry<V> {
    /// Whether a caller at `generation` may be served it.
    fn serves(&self, generation: u64) -> bool {
        matches!(self, Entry::Read(read_at, _) if *read_at >= generation)
    }
}

/// What an entry weighs: 1 for a cache bounded by its number of entries, about its
/// bytes (key and value) for one bounded by weight. Never 0: quick_cache never evicts
/// an entry of weight 0.
struct Weigh<K, V>(fn(&K, &V) -> u32);

impl<K, V> Clone for Weigh<K, V> {
    fn clone(&self) -> Weigh<K, V> {
        Weigh(self.0)
    }
}

impl<K, V> quick_cache::Weighter<K, Entry<V>> for Weigh<K, V> {
    fn weight(&self, key: &K, entry: &Entry<V>) -> u64 {
        match entry {
            Entry::Read(_, value) => u64::from((self.0)(key, value).max(1)),
            Entry::Failed(_) => 1,
        }
    }
}

/// The most a weighed cache's shard holds, at least (quick_cache splits the bound
/// between its shards, one per lock, and turns away a value heavier than a shard's
/// share: a page of the longest cards is about 400 KB).
const SHARD_MIN_WEIGHT: u64 = 2 << 20;

pub struct ReadCache<K, V> {
    entries: quick_cache::sync::Cache<K, Entry<V>, Weigh<K, V>>,
}

impl<K, V> ReadCache<K, V>
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    pub fn new(capacity: u64) -> ReadCache<K, V> {
        let items = usize::try_from(capacity).unwrap_or(usize::MAX);
        ReadCache { entries: quick_cache::sync::Cache::with_weighter(items, capacity, Weigh(|_, _| 1)) }
    }

    /// A cache bounded by the weight of its entries (`weigh`: about the bytes of a key
    /// and its value) rather than their number, for values whose size varies widely.
    pub fn weighed(max_weight: u64, weigh: fn(&K, &V) -> u32) -> ReadCache<K, V> {
        let shards = usize::try_from(max_weight / SHARD_MIN_WEIGHT).unwrap_or(1).clamp(1, 64);
        let options = quick_cache::OptionsBuilder::new()
            // quick_cache sizes its tables from this guess: values of about 500 bytes.
            .estimated_items_capacity(usize::try_from(max_weight / 512).unwrap_or(usize::MAX).max(16))
            .weight_capacity(max_weight)
            .shards(shards)
            .build()
            .expect("the read cache's options are complete");
        let entries =
            quick_cache::sync::Cache::with_options(options, Weigh(weigh), Default::default(), Default::default());
        ReadCache { entries }
    }

    /// The cached value for `key`, or the answer of the read `read` starts (cached when
    /// it is a success; callers asking meanwhile wait for it).
    pub async fn get_or_read<R, F>(&self, db: &Db, key: K, read: R) -> AppResult<V>
    where
        R: FnOnce() -> F,
        F: Future<Output = AppResult<V>>,
    {
        // Taken before reading: a value read at this generation or a later one is
        // fresh enough for this caller (it holds every write answered before it came).
        let generation = db.generation();
        let stale = match self.entries.get(&key) {
            Some(Entry::Read(read_at, value)) if read_at >= generation => return Ok(value),
            Some(_) => true,
            None => false,
        };
        // Boxed: a read's (sqlx's) futures are large, and as a part of this one they
        // would be copied with every caller's future on every hit.
        Box::pin(self.read_on_miss(key, generation, stale, read)).await
    }

    async fn read_on_miss<R, F>(&self, key: K, generation: u64, stale: bool, read: R) -> AppResult<V>
    where
        R: FnOnce() -> F,
        F: Future<Output = AppResult<V>>,
    {
        if stale {
            // So that this caller reads under a placeholder. A placeholder another
            // caller holds is left alone (`remove_if` sees only values).
            self.entries.remove_if(&key, |entry| !entry.serves(generation));
        }
        match self.entries.get_value_or_guard_async(&key).await {
            Ok(Entry::Read(read_at, value)) if read_at >= generation => Ok(value),
            // The read this caller waited for failed.
            Ok(Entry::Failed(err)) => Err(err),
            // Another caller's read, begun before a write this caller must see, was the
            // one that loaded: read afresh.
            Ok(Entry::Read(..)) => {
                let value = read().await?;
                self.entries.insert(key, Entry::Read(generation, value.clone()));
                Ok(value)
            }
            Err(placeholder) => match read().await {
                Ok(value) => {
                    // Err: the placeholder was removed meanwhile; this caller still
                    // answers with its value.
                    let _ = placeholder.insert(Entry::Read(generation, value.clone()));
                    Ok(value)
                }
                Err(err) => {
                    // Handed to the callers waiting for this read, then dropped.
                    if placeholder.insert(Entry::Failed(err.clone())).is_ok() {
                        self.entries.remove_if(&key, |entry| matches!(entry, Entry::Failed(_)));
                    }
                    Err(err)
                }
            },
        }
    }
}

/// What the pages of cards may take in all.
const PAGES_MAX_BYTES: u64 = 16 << 20;

/// What the single cards may take in all.
const CARDS_MAX_BYTES: u64 = 16 << 20;

/// What the pets as the API's JSON may take in all.
const PET_JSON_MAX_BYTES: u64 = 16 << 20;

/// About the memory a card takes.
fn card_bytes(card: &PetCard) -> usize {
    let text = card.name.len() + card.category_name.len() + card.description.as_ref().map_or(0, String::len);
    std::mem::size_of::<PetCard>() + text + card.photo_hash.as_ref().map_or(0, String::len)
}

fn one_card_bytes(_: &i64, card: &PetCard) -> u32 {
    u32::try_from(std::mem::size_of::<(i64, u64)>() + card_bytes(card)).unwrap_or(u32::MAX)
}

/// About the memory a pet's JSON takes: its bytes, and the entry that holds them.
fn json_bytes(_: &i64, json: &axum::body::Bytes) -> u32 {
    u32::try_from(std::mem::size_of::<(i64, u64, axum::body::Bytes)>() + json.len()).unwrap_or(u32::MAX)
}

/// About the memory a page's key takes: the entry's fixed part, the search texts and
/// the ids (up to 100). An empty page weighs this much too.
fn page_key_bytes((filter, _, _): &CardsKey) -> usize {
    std::mem::size_of::<(CardsKey, u64)>()
        + filter.q.as_ref().map_or(0, String::len)
        + filter.text.as_ref().map_or(0, String::len)
        + filter.ids.as_ref().map_or(0, |ids| ids.len() * std::mem::size_of::<i64>())
}

/// About the memory a page of cards takes, with its key. (A `&Vec`: the weigher's type
/// is `fn(&K, &V)`.)
#[allow(clippy::ptr_arg)]
fn cards_bytes(key: &CardsKey, cards: &Vec<PetCard>) -> u32 {
    let size = page_key_bytes(key) + std::mem::size_of::<Vec<PetCard>>() + cards.iter().map(card_bytes).sum::<usize>();
    u32::try_from(size).unwrap_or(u32::MAX)
}

/// What the pages of pets as the API's JSON may take in all.
const LIST_JSON_MAX_BYTES: u64 = 16 << 20;

/// About the memory a page of pets as JSON takes, with its key: its bytes, its cursor.
fn json_page_bytes(key: &CardsKey, page: &JsonPage) -> u32 {
    let size = page_key_bytes(key)
        + std::mem::size_of::<JsonPage>()
        + page.json.len()
        + page.next_cursor.as_deref().map_or(0, str::len);
    u32::try_from(size).unwrap_or(u32::MAX)
}

/// The catalog's read caches, one set per store.
pub struct Caches {
    /// Pets by id, bounded by their size (a card is 200 bytes, or 8 KB with the longest
    /// description).
    pub(crate) cards: ReadCache<i64, PetCard>,
    /// Pages of pets by filter, order and start, each with one card more than the page
    /// shows when there is a next page; bounded by their size (a page of 100 cards is
    /// 10 KB, or 400 KB with the longest descriptions, and visitors choose the keys).
    pub(crate) pages: ReadCache<CardsKey, Vec<PetCard>>,
    /// The category summaries (every storefront page shows them).
    pub(crate) summaries: ReadCache<(), Vec<CategorySummary>>,
    /// Pets by id as the API's JSON (`pets::get_as_json`), bounded by their length.
    pub(crate) pet_json: ReadCache<i64, axum::body::Bytes>,
    /// Pages of pets as the API's JSON (`pets::list_as_json`), keyed as `pages`,
    /// bounded by their length.
    pub(crate) list_json: ReadCache<CardsKey, JsonPage>,
}

impl Default for Caches {
    fn default() -> Caches {
        Caches {
            cards: ReadCache::weighed(CARDS_MAX_BYTES, one_card_bytes),
            pages: ReadCache::weighed(PAGES_MAX_BYTES, cards_bytes),
            summaries: ReadCache::new(4),
            pet_json: ReadCache::weighed(PET_JSON_MAX_BYTES, json_bytes),
            list_json: ReadCache::weighed(LIST_JSON_MAX_BYTES, json_page_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::db;

    /// A read's answer, typed as the services' are.
    fn ok<T>(value: T) -> AppResult<T> {
        Ok(value)
    }

    async fn store() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::connect(&crate::db::testing::scratch_url(dir.path()).await).await.unwrap();
        (dir, db)
    }

    #[tokio::test]
    async fn serves_the_cached_value_until_a_write_commits() {
        let (_dir, db) = store().await;
        let cache = ReadCache::<i64, usize>::new(10);
        let reads = AtomicUsize::new(0);
        let read = || async { ok(reads.fetch_add(1, Ordering::SeqCst)) };
        assert_eq!(cache.get_or_read(&db, 1, read).await.unwrap(), 0);
        assert_eq!(cache.get_or_read(&db, 1, read).await.unwrap(), 0, "cached");
        assert_eq!(cache.get_or_read(&db, 2, read).await.unwrap(), 1, "another key");

        // A rolled-back write changes nothing; a committed one makes every entry stale.
        drop(db.begin_write().await.unwrap());
        assert_eq!(cache.get_or_read(&db, 1, read).await.unwrap(), 0);
        db.begin_write().await.unwrap().commit().await.unwrap();
        assert_eq!(cache.get_or_read(&db, 1, read).await.unwrap(), 2);
        assert_eq!(cache.get_or_read(&db, 1, read).await.unwrap(), 2);
    }

    /// `callers` callers missing key 1 at once, whose read answers `answer` slowly
    /// enough that all of them arrive while the first runs: what each got, and how
    /// many reads ran.
    async fn concurrent_misses(
        db: &Db,
        cache: &Arc<ReadCache<i64, usize>>,
        callers: usize,
        answer: fn(usize) -> AppResult<usize>,
    ) -> (Vec<AppResult<usize>>, usize) {
        let reads = Arc::new(AtomicUsize::new(0));
        let callers: Vec<_> = (0..callers)
            .map(|_| {
                let (db, cache, reads) = (db.clone(), cache.clone(), reads.clone());
                tokio::spawn(async move {
                    cache
                        .get_or_read(&db, 1, || async {
                            let read = reads.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            answer(read)
                        })
                        .await
                })
            })
            .collect();
        let mut answers = Vec::new();
        for caller in callers {
            answers.push(caller.await.unwrap());
        }
        (answers, reads.load(Ordering::SeqCst))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_misses_read_once() {
        let (_dir, db) = store().await;
        let cache = Arc::new(ReadCache::<i64, usize>::new(10));
        let (answers, reads) = concurrent_misses(&db, &cache, 32, ok).await;
        assert!(answers.into_iter().all(|answer| answer.unwrap() == 0));
        assert_eq!(reads, 1, "one read for 32 concurrent misses");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_misses_share_a_failed_read_and_the_failure_is_not_kept() {
        let (_dir, db) = store().await;
        let cache = Arc::new(ReadCache::<i64, usize>::new(10));
        let failing = |_| Err(crate::error::AppError::unavailable("the store is away"));
        let (answers, reads) = concurrent_misses(&db, &cache, 16, failing).await;
        assert!(answers.iter().all(Result::is_err));
        assert_eq!(reads, 1, "one failed read for 16 concurrent misses");
        assert_eq!(cache.get_or_read(&db, 1, || async { ok(7) }).await.unwrap(), 7, "the failure was not kept");
    }

    #[tokio::test]
    async fn a_write_during_the_read_keeps_its_result_from_being_served() {
        let (_dir, db) = store().await;
        let cache = ReadCache::<i64, &str>::new(10);
        let racing = async {
            // The write commits after the read started.
            db.begin_write().await.unwrap().commit().await.unwrap();
            ok("read before the write")
        };
        assert_eq!(cache.get_or_read(&db, 1, || racing).await.unwrap(), "read before the write");
        assert_eq!(cache.get_or_read(&db, 1, || async { ok("fresh") }).await.unwrap(), "fresh");
    }

    #[tokio::test]
    async fn a_commit_whose_caller_gives_up_still_moves_the_generation() {
        let (_dir, db) = store().await;
        let before = db.generation();
        let tx = db.begin_write().await.unwrap();
        // The caller is dropped after one poll, with COMMIT under way (a timeout, a
        // client gone); whether or not it had finished, the generation must move on.
        let mut commit = Box::pin(tx.commit());
        let _ = std::future::poll_fn(|cx| std::task::Poll::Ready(commit.as_mut().poll(cx))).await;
        drop(commit);
        for _ in 0..200 {
            if db.generation() != before {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the generation did not move on, so entries read before the write stay valid");
    }

    #[tokio::test]
    async fn errors_are_not_kept() {
        let (_dir, db) = store().await;
        let cache = ReadCache::<i64, &str>::new(10);
        let failed = cache.get_or_read(&db, 1, || async { Err(crate::error::AppError::not_found("pet", 1)) }).await;
        assert!(failed.is_err());
        assert_eq!(cache.get_or_read(&db, 1, || async { ok("first") }).await.unwrap(), "first");
        assert_eq!(cache.get_or_read(&db, 1, || async { ok("second") }).await.unwrap(), "first");
    }

    #[tokio::test]
    async fn writes_outside_the_catalog_keep_entries() {
        let (_dir, db) = store().await;
        let cache = ReadCache::<i64, &str>::new(10);
        assert_eq!(cache.get_or_read(&db, 1, || async { ok("first") }).await.unwrap(), "first");
        db.begin_write_outside_catalog().await.unwrap().commit().await.unwrap();
        assert_eq!(cache.get_or_read(&db, 1, || async { ok("second") }).await.unwrap(), "first");
    }

    #[tokio::test]
    async fn a_catalog_change_by_another_process_is_seen_within_the_watch_interval() {
        let (dir, db) = store().await;
        let started = db.generation();
        let watcher = tokio::spawn(db.clone().watch_catalog());
        // Its first read moves the generation on once (what was cached before it may
        // predate a change): wait for it, however slow the machine.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while db.generation() == started {
            assert!(tokio::time::Instant::now() < deadline, "the watcher never made its first read");
            tokio::time::sleep(db::CATALOG_WATCH_INTERVAL / 10).await;
        }
        let cache = ReadCache::<i64, &str>::new(10);
        assert_eq!(cache.get_or_read(&db, 1, || async { ok("before") }).await.unwrap(), "before");
        tokio::time::sleep(3 * db::CATALOG_WATCH_INTERVAL).await;
        assert_eq!(cache.get_or_read(&db, 1, || async { ok("unchanged") }).await.unwrap(), "before", "nothing changed");

        // Another process (or server): a handle of its own on the same store, outside
        // this one's queue and generation, writing plain SQL as a database prompt would.
        let other = Db::connect(&db::testing::scratch_url(dir.path()).await).await.unwrap();
        crate::on_pool!(other, |pool| sqlx::query("INSERT INTO categories (name, name_key) VALUES ('Owls', 'owls')")
            .execute(pool)
            .await
            .map(|_| ()))
        .unwrap();
        // Promised within the watch interval; polled, with room for a loaded machine.
        let mut seen = "before";
        for _ in 0..20 {
            tokio::time::sleep(db::CATALOG_WATCH_INTERVAL).await;
            seen = cache.get_or_read(&db, 1, || async { ok("after") }).await.unwrap();
            if seen == "after" {
                break;
            }
        }
        assert_eq!(seen, "after", "not seen within 2 s");
        watcher.abort();
    }

    #[tokio::test]
    async fn empty_pages_weigh_something_and_are_evicted_in_their_turn() {
        // quick_cache never evicts an entry of weight 0: a page that found nothing (a
        // search for a random word) must weigh its key, or such pages pile up for good.
        let (_dir, db) = store().await;
        let cache: ReadCache<CardsKey, Vec<PetCard>> = ReadCache::weighed(64 << 10, cards_bytes);
        for n in 0..5_000 {
            let filter = crate::model::PetFilter { q: Some(format!("word{n}")), ..Default::default() };
            let key = (filter, crate::db::sql::pets::Keyset::Id(0), 20);
            cache.get_or_read(&db, key, || async { ok(Vec::new()) }).await.unwrap();
        }
        let kept = cache.entries.len();
        assert!(kept > 0 && kept < 1_000, "{kept} empty pages kept in 64 KiB");
    }
}
