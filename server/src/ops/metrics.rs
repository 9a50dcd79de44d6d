//! Prometheus metrics at `/metrics`. Counters and histograms are recorded through the
//! `metrics` facade (here for HTTP, in the services for orders and rate limits); gauges
//! that the database or the limiter already know are read at scrape time.
//!
//! `/metrics` needs the scrape token (`--metrics-token`, which reads nothing else) or an
//! admin key (`Authorization: Bearer …` as Prometheus sends with
//! `authorization: {credentials: …}`, or `X-API-Key`), read as the API reads it, but
//! is not rate-limited. Every counter is there from the start, at 0, so that a rate or
//! an alert over it has a series before the first event.

use std::sync::{Arc, LazyLock, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use app::model::Role;
use app::services::access::Counting;
use app::services::auth;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use dashmap::DashMap;
use metrics::SharedString;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::AppState;

const LATENCY_BUCKETS: &[f64] =
    &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

/// A round trip to Redis on loopback or a LAN: tenths of a millisecond; anything near
/// the client's timeout (0.5 s) is trouble.
const REDIS_BUCKETS: &[f64] = &[0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 0.5];

/// The process-wide recorder (the facade allows one), installed on first use. Render it
/// through `text`, which first hands over the answers the threads have gathered.
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full("http_request_duration_seconds".into()), LATENCY_BUCKETS)
            .expect("non-empty buckets")
            .set_buckets_for_metric(Matcher::Full("petstore_redis_seconds".into()), REDIS_BUCKETS)
            .expect("non-empty buckets")
            // An endpoint answers within its 10 s or not at all.
            .set_buckets_for_metric(Matcher::Full("petstore_webhook_delivery_seconds".into()), LATENCY_BUCKETS)
            .expect("non-empty buckets")
            .build_recorder();
        let handle = recorder.handle();
        // Another recorder already installed (a test harness): ours still renders.
        let _ = metrics::set_global_recorder(recorder);
        describe();
        start_at_zero();
        metrics::gauge!("petstore_build_info", "version" => crate::VERSION, "commit" => crate::COMMIT).set(1.0);
        handle
    })
}

/// The process's own series (`process_cpu_seconds_total`, `process_resident_memory_bytes`,
/// `process_open_fds`…), read from `/proc` at each scrape.
fn process() -> &'static metrics_process::Collector {
    static PROCESS: LazyLock<metrics_process::Collector> = LazyLock::new(metrics_process::Collector::default);
    &PROCESS
}

/// Every counter's series with the labels it can take, at 0: a counter that appears
/// only at its first event has no rate before it, and `increase()` misses that event.
fn start_at_zero() {
    let zero = |counter: metrics::Counter| counter.increment(0);
    zero(metrics::counter!("petstore_rate_limited_total", "code" => "rate_limited"));
    zero(metrics::counter!("petstore_rate_limited_total", "code" => "temporarily_banned"));
    zero(metrics::counter!("petstore_bans_total"));
    zero(metrics::counter!("petstore_orders_placed_total"));
    zero(metrics::counter!("petstore_backup_failures_total"));
    for outcome in ["succeeded", "failed"] {
        zero(metrics::counter!("petstore_webhook_deliveries_total", "outcome" => outcome));
    }
    for kind in ["full", "storage", "busy"] {
        zero(metrics::counter!("petstore_db_faults_total", "kind" => kind));
    }
    for how in ["kept", "assembled", "rendered"] {
        zero(metrics::counter!("petstore_pages_total", "how" => how));
    }
    for how in ["redis", "swap", "locked"] {
        zero(metrics::counter!("petstore_rate_limit_rounds_total", "how" => how));
    }
    for limit in ["all", "address"] {
        zero(metrics::counter!("petstore_connections_refused_total", "limit" => limit));
    }
}

fn describe() {
    process().describe();
    metrics::describe_gauge!(
        "petstore_build_info",
        "Always 1; its labels say the release (version) and the commit this server was built from"
    );
    metrics::describe_counter!("http_requests_total", "HTTP requests answered, by method, route and status");
    metrics::describe_histogram!(
        "http_request_duration_seconds",
        metrics::Unit::Seconds,
        "Time to the response's head, by method, route and status"
    );
    metrics::describe_counter!("petstore_rate_limited_total", "Requests refused with 429, by error code");
    metrics::describe_counter!("petstore_bans_total", "Temporary bans started");
    metrics::describe_counter!(
        "petstore_connections_refused_total",
        "Connections closed at once for a limit, by which (all: --max-connections; address: one client's share)"
    );
    metrics::describe_counter!(
        "petstore_rate_limit_rounds_total",
        "Several servers: rounds of rate-limit counting, by how (redis; swap: stored over what this server last saw; locked: another server counted meanwhile, or the first round)"
    );
    metrics::describe_counter!(
        "petstore_pages_total",
        "Pages answered, by how (kept: the kept page; assembled: the kept page with a signed-in visitor's header; rendered: for this request)"
    );
    metrics::describe_counter!("petstore_orders_placed_total", "Orders placed (idempotent replays not counted)");
    metrics::describe_counter!(
        "petstore_webhook_deliveries_total",
        "Webhook delivery attempts this server made, by outcome (succeeded, failed)"
    );
    metrics::describe_histogram!(
        "petstore_webhook_delivery_seconds",
        "How long a webhook delivery attempt took, answered or not"
    );
    metrics::describe_gauge!("petstore_webhook_pending_deliveries", "Webhook delivery attempts waiting to be made");
    metrics::describe_gauge!(
        "petstore_webhook_oldest_pending_event_age_seconds",
        "Age of the oldest event with a webhook delivery attempt still waiting"
    );
    metrics::describe_gauge!(
        "petstore_outbox_events_not_made_out",
        "Events written to the outbox and not yet made out into webhook deliveries"
    );
    metrics::describe_gauge!(
        "petstore_db_pool_connections",
        "Database connections of this server, by state (idle, in_use)"
    );
    metrics::describe_gauge!("petstore_db_pool_max_connections", "Most database connections this server opens");
    metrics::describe_gauge!("petstore_banned_subjects", "Keys, addresses and networks banned right now");
    metrics::describe_gauge!(
        "petstore_backup_last_success_timestamp_seconds",
        "When the last scheduled backup of the SQLite store was written (Unix time; from the store, so every server of it tells)"
    );
    metrics::describe_gauge!(
        "petstore_backup_interval_seconds",
        "Every how many seconds a scheduled backup of the SQLite store is due (--backup-every of the server taking them); 0 when none runs"
    );
    metrics::describe_counter!("petstore_backup_failures_total", "Scheduled backups this server failed to take");
    metrics::describe_gauge!("petstore_open_orders", "Orders placed and not yet completed or cancelled");
    metrics::describe_counter!(
        "petstore_db_faults_total",
        "Write transactions whose BEGIN or COMMIT failed for a fault, the server's own included, by kind (full, storage: read-only, I/O error or cannot open, busy: a lock held past the busy timeout)"
    );
    metrics::describe_gauge!(
        "petstore_ready",
        "1 when /readyz would answer 200 (ready, or degraded without Redis), else 0"
    );
    metrics::describe_gauge!(
        "petstore_db_writes_failing",
        "1 while writes fail for a storage fault (/readyz is 503), else 0"
    );
    metrics::describe_histogram!(
        "petstore_redis_seconds",
        metrics::Unit::Seconds,
        "Round trips to Redis counting a request (shared rate limits, several servers)"
    );
    metrics::describe_gauge!(
        "petstore_redis_up",
        "1 while the shared rate-limit counters are in Redis, 0 while Redis is away (counted in PostgreSQL)"
    );
}

/// Histograms keep raw samples until they are drained; drain them even if nobody scrapes
/// (the threads' batches first, so that an idle thread's answers and an ended thread's
/// batch are not kept until a scrape either).
pub fn spawn_upkeep() -> tokio::task::JoinHandle<()> {
    let handle = handle();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tick.tick().await;
            hand_over_every_batch();
            handle.run_upkeep();
        }
    })
}

/// Counts one answer and its latency under its route's template
/// (`/api/v1/pets/{petId}`), never the raw path, so that the number of series stays
/// bounded: every label comes from a fixed set (the standard methods and `other`, the
/// routes and `unmatched`, the status codes), whatever a client puts in its request
/// line. Called by the operational layer (`ops::EveryRequest`) for every answer,
/// whoever made it: handlers, the guard's refusals, the body limit, timeouts, panics.
///
/// Gathered in this thread's batch and handed to the recorder `BATCH` answers at a
/// time, and at every scrape (`render`), so that a scrape counts every answer made
/// before it.
pub fn record(method: &Method, route: &str, status: StatusCode, elapsed: Duration) {
    let (method, seconds) = (method_label(method), elapsed.as_secs_f64());
    // A thread whose locals are being torn down hands the answer over at once.
    let batched = THIS_THREAD.try_with(|batch| lock(batch).add(method, route, status, seconds));
    if batched.is_err() {
        Tally { series: series(method, route, status), latencies: vec![seconds] }.hand_over();
    }
}

/// How many answers of one series a thread gathers before handing them over.
///
/// Why gather them: the series' counter and histogram are atomics that every thread
/// updates, and so was the lock of the map that finds them. Recorded at once, each
/// answer moved their cache lines from one core to the other: in a `perf` profile of
/// the pet read under wrk, the metrics' functions were 1.8 % of the server's samples,
/// mostly on those instructions (0.6 % gathered; docs/PERFORMANCE.md, "What changed").
/// A thread's batch is its own (its lock is taken by another thread only at a scrape),
/// and a batch is handed over while its lines stay on this core.
const BATCH: usize = 64;

thread_local! {
    /// This thread's batch, listed in `BATCHES` for the scrapes.
    static THIS_THREAD: Arc<Mutex<Batch>> = {
        let batch = Arc::new(Mutex::new(Batch::default()));
        lock(&BATCHES).push(batch.clone());
        batch
    };
}

/// Every thread's batch, for a scrape to hand over (a thread's that has ended too).
static BATCHES: Mutex<Vec<Arc<Mutex<Batch>>>> = Mutex::new(Vec::new());

/// `mutex`'s contents, whatever a thread that panicked while holding it left: counts.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One thread's answers not yet handed to the recorder, by series.
#[derive(Default)]
struct Batch {
    tallies: Vec<Tally>,
}

struct Tally {
    series: Arc<Series>,
    /// Each answer's latency, in seconds.
    latencies: Vec<f64>,
}

impl Batch {
    fn add(&mut self, method: &'static str, route: &str, status: StatusCode, seconds: f64) {
        let found = self.tallies.iter().position(|tally| tally.series.is(method, route, status));
        let tally = match found {
            Some(n) => &mut self.tallies[n],
            None => {
                let series = series(method, route, status);
                let latencies = Vec::with_capacity(BATCH);
                self.tallies.push(Tally { series, latencies });
                self.tallies.last_mut().expect("just pushed")
            }
        };
        tally.latencies.push(seconds);
        if tally.latencies.len() >= BATCH {
            tally.hand_over();
        }
    }

    fn hand_over(&mut self) {
        self.tallies.iter_mut().for_each(Tally::hand_over);
    }
}

impl Tally {
    fn hand_over(&mut self) {
        if self.latencies.is_empty() {
            return;
        }
        self.series.requests.increment(self.latencies.len() as u64);
        for seconds in self.latencies.drain(..) {
            self.series.duration.record(seconds);
        }
    }
}

/// Hands every thread's batch to the recorder, and forgets those of threads that have
/// ended (after handing theirs over).
fn hand_over_every_batch() {
    lock(&BATCHES).retain(|batch| {
        lock(batch).hand_over();
        Arc::strong_count(batch) > 1
    });
}

/// The series of `method`, `route` and `status`, registered on first use.
fn series(method: &'static str, route: &str, status: StatusCode) -> Arc<Series> {
    let find = |all: &[Arc<Series>]| all.iter().find(|s| s.is(method, route, status)).cloned();
    let found = SERIES.get(route).and_then(|all| find(&all));
    found.unwrap_or_else(|| {
        let mut all = SERIES.entry(route.to_owned()).or_default();
        // Registered meanwhile by another thread, or now.
        if let Some(series) = find(&all) {
            return series;
        }
        let series = Arc::new(Series::register(method, route, status));
        all.push(series.clone());
        series
    })
}

/// A method as a label: one of HTTP's own, or `other` for any a client invents.
fn method_label(method: &Method) -> &'static str {
    const STANDARD: [Method; 9] = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::PATCH,
        Method::OPTIONS,
        Method::CONNECT,
        Method::TRACE,
    ];
    const LABELS: [&str; 9] = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"];
    STANDARD.iter().position(|standard| standard == method).map_or("other", |n| LABELS[n])
}

/// The site's routes' layer: tells the operational layer which route matched (only
/// the router knows, and the operational layer is outside it).
pub async fn note_route(request: Request, next: axum::middleware::Next) -> Response {
    if let Some(path) = request.extensions().get::<MatchedPath>() {
        super::scope::note_route(path.clone());
    }
    next.run(request).await
}

/// The handles of every series seen so far, by route (looked up by a thread for a
/// series new to its batch): the facade's own look-up (by name and labels, on every
/// call) builds, sorts and hashes a key and copies its labels, which was about 4 % of
/// the server's CPU per API request (docs/PERFORMANCE.md).
static SERIES: LazyLock<DashMap<String, Vec<Arc<Series>>>> = LazyLock::new(DashMap::new);

/// One route's counter and histogram for one method and status.
struct Series {
    method: &'static str,
    route: Box<str>,
    status: StatusCode,
    requests: metrics::Counter,
    duration: metrics::Histogram,
}

impl Series {
    fn is(&self, method: &str, route: &str, status: StatusCode) -> bool {
        self.method == method && self.status == status && *self.route == *route
    }

    fn register(method: &'static str, route: &str, status: StatusCode) -> Series {
        handle(); // handles taken before the recorder is installed would count nothing
        let labels = [
            ("method", SharedString::from(method)),
            ("route", SharedString::from(route.to_owned())),
            ("status", SharedString::from(status.as_str().to_owned())),
        ];
        Series {
            method,
            route: route.into(),
            status,
            requests: metrics::counter!("http_requests_total", &labels),
            duration: metrics::histogram!("http_request_duration_seconds", &labels),
        }
    }
}

/// `GET /metrics`: the Prometheus text format. A scrape counts against no limit, but
/// a banned key is refused like everywhere else (and a wrong key counts as a failed
/// attempt from its address).
pub async fn render(State(state): State<AppState>, request: Request) -> Response {
    let (extensions, headers) = (request.extensions(), request.headers());
    let key = crate::api::auth::presented_key(headers);
    let scraper = match (&state.config.metrics_token, &key) {
        (Some(token), auth::Presented::Key(presented)) => token.matches(presented),
        _ => false,
    };
    if !scraper {
        // Anything else is read as an API key: a wrong one counts as a failed attempt.
        let client = state.access.client(extensions, headers);
        let caller = match state.access.admit(key.into(), client, Counting::BansOnly).await {
            Ok(admitted) => admitted.caller.and_then(|caller| auth::require(caller, Role::Admin)),
            Err(refused) => Err(refused.error),
        };
        if let Err(err) = caller {
            return err.into_response();
        }
    }
    record_gauges(&state).await;
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], text()).into_response()
}

/// The metrics as Prometheus text, with every answer made before this call.
fn text() -> String {
    hand_over_every_batch();
    handle().render()
}

/// What other parts already know, read when scraped.
async fn record_gauges(state: &AppState) {
    process().collect();
    let ready = super::health::readiness(state).await.is_ok();
    metrics::gauge!("petstore_ready").set(if ready { 1.0 } else { 0.0 });
    let size = state.db.pool().size();
    let idle = u32::try_from(state.db.pool().num_idle()).unwrap_or(u32::MAX);
    metrics::gauge!("petstore_db_pool_connections", "state" => "idle").set(f64::from(idle));
    metrics::gauge!("petstore_db_pool_connections", "state" => "in_use").set(f64::from(size.saturating_sub(idle)));
    metrics::gauge!("petstore_db_pool_max_connections").set(f64::from(state.db.pool().max_connections()));
    if let Ok(banned) = state.access.limiter.banned_now().await {
        metrics::gauge!("petstore_banned_subjects").set(banned as f64);
    }
    if let Some(up) = state.access.limiter.redis_up() {
        metrics::gauge!("petstore_redis_up").set(if up { 1.0 } else { 0.0 });
    }
    metrics::gauge!("petstore_db_writes_failing").set(if state.db.writes_failing() { 1.0 } else { 0.0 });
    if let Ok((last, every)) = app::services::backups::last_success(&state.db).await {
        if let Some(at) = last {
            metrics::gauge!("petstore_backup_last_success_timestamp_seconds").set(at as f64);
        }
        // 0 once no schedule runs: a gauge once set stays in the scrape.
        metrics::gauge!("petstore_backup_interval_seconds").set(every.unwrap_or(0) as f64);
    }
    if let Ok(open) = app::services::orders::count_open(&state.db).await {
        metrics::gauge!("petstore_open_orders").set(open as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `http_requests_total` and histogram count lines of `route` in `text`.
    fn counts(text: &str, route: &str) -> (String, String) {
        let find = |prefix: &str| {
            let line = text.lines().find(|line| line.starts_with(prefix) && line.contains(route));
            line.map(|line| line.rsplit(' ').next().unwrap_or_default().to_owned()).unwrap_or_default()
        };
        (find("http_requests_total{"), find("http_request_duration_seconds_count{"))
    }

    #[test]
    fn a_scrape_counts_every_answer_made_before_it_on_every_thread() {
        let route = "/test/batched";
        let answer = |n: u32| record(&Method::GET, route, StatusCode::OK, Duration::from_micros(100 + u64::from(n)));
        // Fewer than a batch on threads that have ended, and on this one, which goes on.
        let threads: Vec<_> = (0..3).map(|_| std::thread::spawn(move || (0..10).for_each(answer))).collect();
        threads.into_iter().for_each(|thread| thread.join().unwrap());
        (0..5).for_each(answer);
        assert_eq!(counts(&text(), route), ("35".to_owned(), "35".to_owned()));
        // More than a batch: what was handed over on the way and what was left, once.
        (0..(BATCH as u32 * 2 + 7)).for_each(answer);
        assert_eq!(counts(&text(), route), ("170".to_owned(), "170".to_owned()));
        // The ended threads' batches are forgotten once handed over.
        let listed =
            lock(&BATCHES).iter().filter(|batch| lock(batch).tallies.iter().any(|t| *t.series.route == *route)).count();
        assert_eq!(listed, 1, "only this thread's batch is still listed");
    }
}
