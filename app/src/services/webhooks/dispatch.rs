//! Delivering events to webhook endpoints, by every server over the store, each event
//! to each endpoint by one of them.
//!
//! A server's dispatcher, a few times a second (and at once when woken):
//! 1. makes out the deliveries of new events: for each event after the last one made
//!    out, one pending attempt per enabled endpoint that takes its type (and was there
//!    when it happened), in one write transaction with the mark of how far it got, so
//!    that however many servers do this, each event is made out once;
//! 2. claims due attempts, up to a few per endpoint, for a while (another server takes
//!    them over if this one dies meanwhile: at least once);
//! 3. sends each as a Standard Webhooks request: a POST of the envelope, signed,
//!    answered 2xx within 10 s or failed (a redirect is not followed);
//! 4. records what came back; a failure is retried with backoff and jitter (about 5 s,
//!    30 s, 2 min, 10 min, 30 min, 1 h, then every 3 h) until a day after the event,
//!    then it stays `failed`. An endpoint none of whose attempts succeeded for three
//!    days is disabled.
//!
//! One endpoint at a time holds only a few of the server's sends (a slow or dead one
//! never delays the others).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use crate::db::sql::webhooks::{Claimed, Outcome};
use crate::db::{Db, sql};
use crate::error::AppResult;
use crate::services::events::now_ms;

use super::{Targets, takes};

/// How long an endpoint has to answer.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// Bytes of an endpoint's answer kept with the attempt, for the staff's log: enough
/// for an error message, never a large page.
pub const ANSWER_KEPT: usize = 2_048;
/// How long a claim holds: twice what a sending may take ([`TIMEOUT`]); an attempt of
/// a server that died meanwhile is taken over after.
const CLAIM_MS: i64 = 20_000;
/// How often a dispatcher looks for work when nothing wakes it.
const TICK: Duration = Duration::from_millis(500);
/// Sends a server makes at once, and to one endpoint.
const SENDS: usize = 32;
const SENDS_PER_ENDPOINT: usize = 4;
/// Events made out in one transaction.
const FANOUT_BATCH: i64 = 500;
/// The retries' delays, in seconds; the last repeats until [`RETRY_FOR_MS`] has passed.
const BACKOFF: [i64; 7] = [5, 30, 120, 600, 1_800, 3_600, 10_800];
/// How often the backlog is measured for the metrics.
const BACKLOG_EVERY_MS: i64 = 5_000;
/// How long after its event an attempt is still retried.
pub const RETRY_FOR_MS: i64 = 24 * 3_600_000;
/// How long an endpoint may fail every attempt before it is disabled.
pub const DISABLE_AFTER_MS: i64 = 3 * 24 * 3_600_000;

/// Wakes every dispatcher of this process (an attempt was made due now).
static WAKE: LazyLock<tokio::sync::Notify> = LazyLock::new(tokio::sync::Notify::new);

pub fn wake() {
    WAKE.notify_waiters();
}

/// When the attempt after `attempt` (1 for the first) is due, from `now`, with `jitter`
/// (0 to 1) spreading it by ±20 %; `None` when it would be past the retry window.
pub fn retry_at(attempt: i64, now: i64, event_created_at: i64, jitter: f64) -> Option<i64> {
    let index = usize::try_from(attempt - 1).unwrap_or(0).min(BACKOFF.len() - 1);
    let delay_ms = BACKOFF[index] as f64 * 1_000.0 * 0.4f64.mul_add(jitter.clamp(0.0, 1.0), 0.8);
    let at = now + delay_ms as i64;
    (at <= event_created_at + RETRY_FOR_MS).then_some(at)
}

/// This server's dispatcher.
pub struct Dispatcher {
    db: Db,
    targets: Targets,
    client: reqwest::Client,
    /// Sends in flight per endpoint.
    busy: Mutex<HashMap<i64, usize>>,
    sends: Arc<tokio::sync::Semaphore>,
    /// When the backlog was last measured (Unix milliseconds).
    measured_at: std::sync::atomic::AtomicI64,
}

impl Dispatcher {
    /// Starts the dispatcher of a server over `db`; it runs until the store is closed.
    pub fn spawn(db: Db, targets: Targets) -> AppResult<tokio::task::JoinHandle<()>> {
        let dispatcher = Arc::new(Dispatcher {
            client: client(targets)?,
            db,
            targets,
            busy: Mutex::new(HashMap::new()),
            sends: Arc::new(tokio::sync::Semaphore::new(SENDS)),
            measured_at: std::sync::atomic::AtomicI64::new(0),
        });
        Ok(tokio::spawn(dispatcher.run()))
    }

    async fn run(self: Arc<Dispatcher>) {
        let mut warned = false;
        loop {
            let woken = WAKE.notified();
            match self.round().await {
                Ok(()) => warned = false,
                Err(err) if self.db.is_closed() => {
                    tracing::debug!(error = %err, "webhook dispatcher stopped");
                    return;
                }
                Err(err) => {
                    if !warned {
                        tracing::warn!(error = %err, "delivering webhooks failed; retrying");
                        warned = true;
                    }
                }
            }
            if self.db.is_closed() {
                return;
            }
            tokio::select! {
                () = woken => {}
                () = tokio::time::sleep(TICK) => {}
            }
        }
    }

    /// One round: new events made out, due attempts claimed and sent, and every few
    /// seconds the backlog measured for the metrics.
    async fn round(self: &Arc<Dispatcher>) -> AppResult<()> {
        self.fan_out().await?;
        self.send_due().await?;
        let now = now_ms();
        if now - self.measured_at.load(std::sync::atomic::Ordering::Relaxed) >= BACKLOG_EVERY_MS {
            self.measured_at.store(now, std::sync::atomic::Ordering::Relaxed);
            let (pending, oldest) = sql::webhooks::backlog(&self.db).await?;
            let unsent = sql::events::latest_seq(&self.db).await? - sql::webhooks::fanned_out(&self.db).await?;
            metrics::gauge!("petstore_webhook_pending_deliveries").set(pending as f64);
            metrics::gauge!("petstore_outbox_events_not_made_out").set(unsent.max(0) as f64);
            let age = oldest.map_or(0.0, |oldest| (now - oldest).max(0) as f64 / 1_000.0);
            metrics::gauge!("petstore_webhook_oldest_pending_event_age_seconds").set(age);
        }
        Ok(())
    }

    /// Step 1: a pending attempt per endpoint for each event after the last made out.
    async fn fan_out(&self) -> AppResult<()> {
        loop {
            // Read first outside a transaction: most rounds find nothing to do.
            if sql::events::latest_seq(&self.db).await? <= sql::webhooks::fanned_out(&self.db).await? {
                return Ok(());
            }
            let mut tx = self.db.begin_write_outside_catalog().await?;
            let last = sql::webhooks::fanned_out_in(&mut tx).await?;
            let endpoints = sql::webhooks::enabled_in(&mut tx).await?;
            if endpoints.is_empty() {
                // Nothing to make out: past every event at once, none read (under
                // orders that is thousands a second, each read for nothing).
                let newest = sql::events::latest_seq_in(&mut tx).await?;
                if newest > last {
                    sql::webhooks::set_fanned_out(&mut tx, newest).await?;
                    tx.commit().await?;
                }
                return Ok(());
            }
            let events = sql::events::after_in(&mut tx, last, FANOUT_BATCH).await?;
            let Some(newest) = events.last().map(|event| event.seq) else { return Ok(()) };
            let now = now_ms();
            for event in &events {
                // A test's ping goes to its endpoint only (`super::test`).
                if event.kind == "ping" {
                    continue;
                }
                for endpoint in &endpoints {
                    if takes(&endpoint.events, &event.kind) && endpoint.created_at <= event.created_at {
                        sql::webhooks::insert_pending(&mut tx, endpoint.id, event.seq, 1, now, now).await?;
                    }
                }
            }
            sql::webhooks::set_fanned_out(&mut tx, newest).await?;
            tx.commit().await?;
            if events.len() < FANOUT_BATCH as usize {
                return Ok(());
            }
        }
    }

    /// Steps 2 and 3: claims what is due (a few per endpoint, as many as this server
    /// has room for) and sends each in a task of its own.
    async fn send_due(self: &Arc<Dispatcher>) -> AppResult<()> {
        let room = self.sends.available_permits();
        if room == 0 {
            return Ok(());
        }
        let now = now_ms();
        let mut tx = self.db.begin_write_outside_catalog().await?;
        let due = sql::webhooks::due_by_endpoint(&mut tx, now).await?;
        if due.is_empty() {
            return Ok(());
        }
        let mut claimed = Vec::new();
        for (endpoint, _) in due {
            let free = SENDS_PER_ENDPOINT.saturating_sub(self.in_flight(endpoint)).min(room - claimed.len().min(room));
            if free == 0 {
                continue;
            }
            claimed.extend(sql::webhooks::claim(&mut tx, endpoint, now, now + CLAIM_MS, free as i64).await?);
            if claimed.len() >= room {
                break;
            }
        }
        tx.commit().await?;
        for attempt in claimed {
            let Ok(permit) = self.sends.clone().try_acquire_owned() else { break };
            self.busy(attempt.webhook_id, 1);
            let dispatcher = self.clone();
            tokio::spawn(async move {
                let endpoint = attempt.webhook_id;
                if let Err(err) = dispatcher.deliver(attempt).await {
                    tracing::warn!(error = %err, webhook = endpoint, "recording a webhook delivery failed");
                }
                dispatcher.busy(endpoint, -1);
                drop(permit);
                // A place is free: what is due next goes now, not at the next tick
                // (which would hold an endpoint to 4 sends a tick, 8 a second).
                wake();
            });
        }
        Ok(())
    }

    fn in_flight(&self, endpoint: i64) -> usize {
        self.busy.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&endpoint).copied().unwrap_or(0)
    }

    fn busy(&self, endpoint: i64, change: isize) {
        let mut busy = self.busy.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = busy.entry(endpoint).or_default();
        *count = count.saturating_add_signed(change);
        if *count == 0 {
            busy.remove(&endpoint);
        }
    }

    /// Steps 3 and 4 for one attempt.
    async fn deliver(&self, attempt: Claimed) -> AppResult<()> {
        let started = Instant::now();
        let sent = self.send(&attempt).await;
        let duration = Duration::as_millis(&started.elapsed()) as i64;
        let outcome_label = if sent.is_ok() { "succeeded" } else { "failed" };
        metrics::counter!("petstore_webhook_deliveries_total", "outcome" => outcome_label).increment(1);
        metrics::histogram!("petstore_webhook_delivery_seconds").record(started.elapsed().as_secs_f64());
        let now = now_ms();
        let retry = match &sent {
            Ok(_) => None,
            Err(_) => retry_at(attempt.attempt, now, attempt.event_created_at, jitter()),
        };
        let (response_status, error, response_body) = match &sent {
            Ok(answer) => (Some(i64::from(answer.status)), None, answer.body.as_deref()),
            Err(failure) => (failure.status.map(i64::from), Some(failure.why.as_str()), failure.body.as_deref()),
        };
        let outcome = Outcome {
            status: outcome_label,
            attempted_at: now,
            response_status,
            duration_ms: duration,
            error,
            response_body,
            retry_at: retry,
        };
        let mut tx = self.db.begin_write_outside_catalog().await?;
        if !sql::webhooks::finish(&mut tx, attempt.id, &outcome).await? {
            // Finished meanwhile by another server (this one's claim had run out).
            return Ok(());
        }
        if let Some(at) = retry {
            sql::webhooks::insert_pending(&mut tx, attempt.webhook_id, attempt.event_seq, attempt.attempt + 1, now, at)
                .await?;
        }
        if let Some(mut endpoint) = sql::webhooks::get_in(&mut tx, attempt.webhook_id).await? {
            let before = (endpoint.failing_since, endpoint.enabled);
            match sent {
                Ok(_) => endpoint.failing_since = None,
                Err(_) => {
                    let since = *endpoint.failing_since.get_or_insert(now);
                    if now - since >= DISABLE_AFTER_MS && endpoint.enabled {
                        endpoint.enabled = false;
                        endpoint.disabled_reason =
                            Some("every delivery failed for three days; enable it again once it answers".into());
                        sql::webhooks::abandon_pending(&mut tx, endpoint.id, now, "the endpoint was disabled").await?;
                        // Its host, never the whole URL: a path or query often holds a token.
                        let host = host_of(&endpoint.url);
                        tracing::warn!(
                            webhook = endpoint.id,
                            host,
                            "disabled a webhook endpoint after three days of failures"
                        );
                    }
                }
            }
            if (endpoint.failing_since, endpoint.enabled) != before {
                sql::webhooks::update(&mut tx, &endpoint).await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// The request itself: the endpoint's answer when it is 2xx.
    async fn send(&self, attempt: &Claimed) -> Result<Answered, Failure> {
        let url = reqwest::Url::parse(&attempt.url)
            .map_err(|err| Failure::new(format!("the URL is no longer valid: {err}")))?;
        // An address in the URL itself is not resolved: judged here. (A name is judged
        // by the resolver, at each connection.)
        if let Some(ip) = url.host_str().and_then(|host| host.trim_matches(['[', ']']).parse::<IpAddr>().ok()) {
            self.targets.check_ip(ip).map_err(|why| Failure::new(format!("{ip} is {why}: not connected")))?;
        }
        let body = crate::services::events::envelope_json(&crate::services::events::StoredEvent {
            seq: attempt.event_seq,
            id: attempt.event_id.clone(),
            kind: attempt.event_type.clone(),
            created_at: attempt.event_created_at,
            data: attempt.data.clone(),
            owner_key_id: None,
            admin_only: false,
        });
        let timestamp = now_ms() / 1_000;
        let signature = sign(attempt, timestamp, body.as_bytes()).map_err(Failure::new)?;
        let answer = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", &attempt.event_id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body)
            .send()
            .await;
        match answer {
            Ok(response) if response.status().is_success() => {
                Ok(Answered { status: response.status().as_u16(), body: excerpt(response).await })
            }
            Ok(response) if response.status().is_redirection() => Err(Failure {
                status: Some(response.status().as_u16()),
                why: "the endpoint answered with a redirect, which is not followed".into(),
                body: excerpt(response).await,
            }),
            Ok(response) => Err(Failure {
                status: Some(response.status().as_u16()),
                why: format!("the endpoint answered {}", response.status()),
                body: excerpt(response).await,
            }),
            Err(err) if err.is_timeout() => Err(Failure::new(format!("no answer within {} s", TIMEOUT.as_secs()))),
            // Without the URL (reqwest's own words name it, token and all).
            Err(err) => Err(Failure::new(format!("could not connect: {}", error_chain(&err.without_url())))),
        }
    }
}

/// A webhook URL's host, as the log names an endpoint.
fn host_of(url: &str) -> String {
    reqwest::Url::parse(url).ok().and_then(|url| url.host_str().map(str::to_owned)).unwrap_or_else(|| "?".to_owned())
}

/// A 2xx answer: its status and the start of its body.
struct Answered {
    status: u16,
    body: Option<String>,
}

/// Why an attempt failed, and the endpoint's status and the start of its body when it
/// answered.
struct Failure {
    status: Option<u16>,
    why: String,
    body: Option<String>,
}

impl Failure {
    fn new(why: String) -> Failure {
        Failure { status: None, why, body: None }
    }
}

/// The first [`ANSWER_KEPT`] bytes of an answer's body, as text (a character cut in
/// two, bytes that are not UTF-8 and NUL, which PostgreSQL's `TEXT` refuses, read as
/// U+FFFD); `None` for an empty body. The rest is not read, and a body slower than the
/// sending's time limit ends the read.
async fn excerpt(mut response: reqwest::Response) -> Option<String> {
    let mut kept = Vec::new();
    while kept.len() < ANSWER_KEPT {
        match response.chunk().await {
            Ok(Some(chunk)) => kept.extend_from_slice(&chunk[..chunk.len().min(ANSWER_KEPT - kept.len())]),
            Ok(None) | Err(_) => break,
        }
    }
    (!kept.is_empty()).then(|| String::from_utf8_lossy(&kept).replace('\0', "\u{FFFD}"))
}

/// An error with its causes, as one line (reqwest's own says "error sending request").
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The `webhook-signature` header: `v1,<signature>` by the endpoint's secret, and by the
/// previous one too (space-separated) during a rotation's overlap.
fn sign(attempt: &Claimed, timestamp: i64, body: &[u8]) -> Result<String, String> {
    let by = |secret: &str| {
        standardwebhooks::Webhook::new(secret)
            .and_then(|key| key.sign(&attempt.event_id, timestamp, body))
            .map_err(|err| format!("signing failed: {err}"))
    };
    let mut signature = by(&attempt.secret)?;
    if let (Some(previous), Some(until)) = (&attempt.previous_secret, attempt.previous_until)
        && until > now_ms()
    {
        signature.push(' ');
        signature.push_str(&by(previous)?);
    }
    Ok(signature)
}

/// A number from 0 to 1 for spreading retries.
fn jitter() -> f64 {
    crate::services::keys::random_bytes::<2>().map_or(0.5, |bytes| f64::from(u16::from_le_bytes(bytes)) / 65_535.0)
}

/// The HTTP client of deliveries: no redirects, no proxies from the environment, the
/// timeout, and every name resolved to allowed addresses only.
fn client(targets: Targets) -> AppResult<reqwest::Client> {
    // rustls needs its cryptography chosen once per process (ring; a second call is
    // a no-op).
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(TIMEOUT)
        .connect_timeout(TIMEOUT)
        .user_agent("PetStore-Webhooks/1.0")
        .dns_resolver(Arc::new(Resolver { targets }))
        .build()
        .map_err(|err| crate::error::AppError::internal("the webhook client", err))
}

/// Resolves names for the client, leaving out the addresses a webhook must not reach.
struct Resolver {
    targets: Targets,
}

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let targets = self.targets;
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                targets.resolve(name.as_str(), 0).await.map_err(Box::<dyn std::error::Error + Send + Sync>::from)?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_answer_is_kept_as_text_postgresql_can_store_cut_at_its_limit() {
        let answer = |body: Vec<u8>| reqwest::Response::from(axum::http::Response::new(body));
        assert_eq!(excerpt(answer(b"ok\0done".to_vec())).await.as_deref(), Some("ok\u{FFFD}done"));
        assert_eq!(excerpt(answer(vec![0xff, b'a'])).await.as_deref(), Some("\u{FFFD}a"));
        assert_eq!(excerpt(answer(vec![b'x'; 5_000])).await.map(|kept| kept.len()), Some(ANSWER_KEPT));
        assert_eq!(excerpt(answer(Vec::new())).await, None);
    }

    #[test]
    fn an_endpoint_is_logged_by_its_host_alone() {
        assert_eq!(host_of("https://hooks.example.com/T0KEN/abc?sig=1"), "hooks.example.com");
        assert_eq!(host_of("http://user:pw@[2001:db8::1]:8080/x"), "[2001:db8::1]");
        assert_eq!(host_of("nonsense"), "?");
    }

    #[test]
    fn retries_back_off_with_jitter_for_a_day() {
        let created = 0;
        assert_eq!(retry_at(1, 0, created, 0.5), Some(5_000));
        assert_eq!(retry_at(1, 0, created, 0.0), Some(4_000));
        assert_eq!(retry_at(1, 0, created, 1.0), Some(6_000));
        assert_eq!(retry_at(2, 0, created, 0.5), Some(30_000));
        assert_eq!(retry_at(6, 0, created, 0.5), Some(3_600_000));
        assert_eq!(retry_at(7, 0, created, 0.5), Some(10_800_000));
        assert_eq!(retry_at(20, 0, created, 0.5), Some(10_800_000), "every 3 h after the sixth");
        // Nothing past a day after the event: the attempt stays failed.
        assert_eq!(retry_at(9, RETRY_FOR_MS - 1_000, created, 0.5), None);
    }
}
