//! How `main` serves connections: its own accept loop over hyper's HTTP/1 server, so
//! that a connection is bounded as axum's `serve` cannot bound it.
//!
//! - A connection that has not sent a whole request head within the request timeout is
//!   closed: a new one that sends nothing or half its headers, and an idle one between
//!   requests (hyper's header read timeout, which needs a timer to run at all). A
//!   trusted proxy's connections may idle for ten minutes: a load balancer keeps them.
//! - Connections are counted per client address (an IPv6 /64; trusted proxies only in
//!   all) and in all (`slots`, with the fair give-way between networks), the total
//!   kept below the open-files limit, which is raised to its hard maximum at start: a
//!   crowd of silent connections cannot leave the server without a descriptor for the
//!   next one (`/healthz` included). A connection over its limit is closed at once.
//! - On shutdown the listener closes, each connection finishes the request it is in and
//!   closes, and `serve` returns when all are done.
//!
//! Each connection gets one copy of the application, called in place for each of its
//! requests. hyper calls a service through `&self`, so a service made for hyper is
//! cloned for every request (a tower service is called through `&mut self`). With the
//! whole application boxed behind its layers, that clone copied every layer's settings
//! and bumped every shared count in it (the same counts from both cores), about 1,300
//! of a cached read's instructions and an allocation (docs/PERFORMANCE.md, "What
//! changed"). Here the per-request clone is a count of this connection's own: an
//! HTTP/1 connection's requests are answered one after another, so its lock is never
//! contended.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use app::services::access::TrustedProxies;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use axum::response::Response;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::{Service, ServiceExt};

use crate::HttpService;
use crate::slots::{Budget, Refusal, Slots};

/// Descriptors kept for what is not a client's connection: the database's, the
/// webhooks' and Redis's connections, the log, the listener.
const DESCRIPTORS_KEPT: u64 = 64;

/// How long a trusted proxy's connection may wait for its next request: a load
/// balancer keeps connections to its servers open between requests, and one closed by
/// the server just as the balancer sends on it fails that request (AWS's balancers,
/// for one, wait 60 s before they close an idle one themselves).
pub const PROXY_IDLE: Duration = Duration::from_secs(600);

/// How the server bounds its connections.
#[derive(Clone, Debug)]
pub struct Limits {
    /// A request head must arrive within this (the request timeout), also between two
    /// requests of a connection; a trusted proxy's within [`PROXY_IDLE`].
    pub head_within: Duration,
    pub connections: Budget,
    /// Counted in all only: behind a proxy, its address is every client's.
    pub proxies: TrustedProxies,
}

impl Limits {
    /// The limits of `config`, with the total lowered to what the open-files limit
    /// leaves room for (raised to its hard maximum first).
    pub fn of(config: &crate::Config) -> Limits {
        let descriptors = raise_open_files_limit();
        let room = descriptors.map_or(u64::MAX, |limit| limit.saturating_sub(DESCRIPTORS_KEPT).max(limit / 2));
        let in_all = u64::from(config.max_connections).min(room).max(1) as usize;
        if (in_all as u64) < u64::from(config.max_connections) {
            tracing::info!(
                connections = in_all,
                open_files = descriptors,
                "serving at most {in_all} connections at once: the open-files limit (ulimit -n) leaves no room for more"
            );
        }
        let per_address = config.max_connections_per_address as usize;
        Limits {
            head_within: config.request_timeout,
            connections: Budget {
                in_all,
                per_address,
                // Blocks and networks are bounded by the total alone; they matter when
                // the total is reached (the network holding most gives way).
                per_block: usize::MAX,
                per_network: usize::MAX,
                per_key: None,
            },
            proxies: config.proxies(),
        }
    }
}

/// Raises this process's open-files limit to its hard maximum; the limit now (`None`
/// when unlimited).
fn raise_open_files_limit() -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.maximum != limit.current {
        let raised = Rlimit { current: limit.maximum, maximum: limit.maximum };
        if setrlimit(Resource::Nofile, raised).is_ok() {
            return limit.maximum;
        }
    }
    limit.current
}

/// Serves `app` on `listener` within `limits` until `shutdown` resolves, then lets the
/// connections finish their requests and returns once they are closed.
pub async fn serve<S: HttpService>(
    listener: TcpListener,
    app: S,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let slots = Slots::new(limits.connections);
    // Each connection holds a receiver until it closes: shutdown waits for them all.
    let (connections_closed, alive) = tokio::sync::watch::channel(());
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    accept_failed(&err).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let proxy = limits.proxies.trusts(peer.ip());
        let counted_as = (!proxy).then_some(peer.ip());
        let mut slot = match slots.take(counted_as, None) {
            Ok(slot) => slot,
            Err(refusal) => {
                refused(refusal, peer);
                continue;
            }
        };
        // Sends what is written at once: a page streamed in parts must not wait for the
        // client's acknowledgement of the part before (Nagle's algorithm, up to the
        // client's delayed-ACK time, 40 ms on Linux).
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!(error = %err, "could not set TCP_NODELAY on a connection");
        }
        let service = Connection { app: Arc::new(Mutex::new(app.clone())), peer }
            .map_request(|request: hyper::Request<hyper::body::Incoming>| request.map(Body::new));
        let head_within = if proxy { PROXY_IDLE.max(limits.head_within) } else { limits.head_within };
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(HeadTimer::new(head_within)).header_read_timeout(head_within);
        let connection = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let alive = alive.clone();
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            // Its place taken back (for a newcomer, or at shutdown): the request in
            // progress is answered, then the connection closes.
            let served = tokio::select! {
                served = connection.as_mut() => served,
                () = slot.taken_back() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(err) = served {
                tracing::trace!(error = %err, "a connection ended with an error");
            }
            drop(alive);
        });
    }
    drop((listener, alive));
    slots.take_back_all();
    connections_closed.closed().await;
}

/// One connection's timer for hyper's header read timeout, which asks for a new sleep at
/// each request head and drops it once the head is in. With hyper_util's tokio timer
/// each was an allocation, an entry put into the runtime's timer wheel and taken out
/// again (under its lock, from both cores): about 500 of a cached read's 42,000
/// instructions. Here one tokio sleep serves all of a connection's: a new one only
/// names a later deadline, and the connection's sleep, when it fires before the
/// deadline now asked for (once a timeout period, not once a request), is set again.
struct HeadTimer {
    sleep: Arc<Mutex<Pin<Box<tokio::time::Sleep>>>>,
}

impl HeadTimer {
    fn new(head_within: Duration) -> HeadTimer {
        let first = tokio::time::sleep(head_within);
        HeadTimer { sleep: Arc::new(Mutex::new(Box::pin(first))) }
    }
}

impl hyper::rt::Timer for HeadTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    fn sleep_until(&self, deadline: std::time::Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        let deadline = tokio::time::Instant::from_std(deadline);
        Box::pin(HeadSleep { deadline, sleep: self.sleep.clone() })
    }

    /// Tokio's clock (the same as the system's, but in tests with paused time).
    fn now(&self) -> std::time::Instant {
        tokio::time::Instant::now().into_std()
    }
}

/// A sleep hyper asked for: done at its deadline, woken by its connection's sleep.
struct HeadSleep {
    deadline: tokio::time::Instant,
    sleep: Arc<Mutex<Pin<Box<tokio::time::Sleep>>>>,
}

impl std::future::Future for HeadSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = self.deadline;
        let mut sleep = self.sleep.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // It never waits past this deadline; an earlier one stays, and wakes it early.
        if sleep.deadline() > deadline {
            sleep.as_mut().reset(deadline);
        }
        loop {
            match sleep.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(()) if tokio::time::Instant::now() >= deadline => return Poll::Ready(()),
                Poll::Ready(()) => sleep.as_mut().reset(deadline),
            }
        }
    }
}

impl hyper::rt::Sleep for HeadSleep {}

/// What `accept` failing means: a connection that went before it was taken is nothing;
/// anything else (out of descriptors) is said, and accepting waits a moment.
async fn accept_failed(err: &std::io::Error) {
    use std::io::ErrorKind;
    if matches!(err.kind(), ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset) {
        return;
    }
    tracing::error!(error = %err, "accepting a connection failed; trying again in a second");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// A connection over its limits: closed at once (dropped), counted, and said at debug
/// level (a flood must not flood the log too).
fn refused(refusal: Refusal, peer: SocketAddr) {
    let why = match refusal {
        Refusal::InAll => "all",
        Refusal::Client | Refusal::Key => "address",
    };
    metrics::counter!("petstore_connections_refused_total", "limit" => why).increment(1);
    tracing::debug!(%peer, limit = why, "closed a connection over its limit");
}

/// One connection's copy of the application (cloned for each request by hyper: a
/// count, not the application), which tells each request the client's address
/// (`ConnectInfo`, as axum's `into_make_service_with_connect_info` does).
#[derive(Clone)]
pub struct Connection<S> {
    app: Arc<Mutex<S>>,
    peer: SocketAddr,
}

impl<S> Connection<S> {
    /// The copy, whatever a request that panicked in it left: services of settings and
    /// counts, which a panic cannot leave half-changed.
    fn app(&self) -> MutexGuard<'_, S> {
        self.app.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<S: HttpService> Service<Request> for Connection<S> {
    type Response = Response;
    type Error = Infallible;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.app().poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        request.extensions_mut().insert(ConnectInfo(self.peer));
        self.app().call(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::body::Body;
    use http_body_util::BodyExt;
    use hyper_util::rt::TokioIo;

    /// An application that counts its copies and answers with the client's address.
    struct Counted(Arc<AtomicUsize>);

    impl Clone for Counted {
        fn clone(&self) -> Counted {
            self.0.fetch_add(1, Ordering::SeqCst);
            Counted(self.0.clone())
        }
    }

    impl Service<Request> for Counted {
        type Response = Response;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Response, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: Request) -> Self::Future {
            let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|info| info.0.to_string());
            std::future::ready(Ok(Response::new(Body::from(peer.unwrap_or_default()))))
        }
    }

    /// `count` requests on one new connection: what each answered.
    async fn on_one_connection(addr: SocketAddr, count: usize) -> (SocketAddr, Vec<String>) {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let local = stream.local_addr().unwrap();
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
        tokio::spawn(connection);
        let mut answers = Vec::new();
        for _ in 0..count {
            let request = axum::http::Request::get("/").header("host", "test").body(Body::empty()).unwrap();
            let response = sender.send_request(request).await.unwrap();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            answers.push(String::from_utf8(body.to_vec()).unwrap());
        }
        (local, answers)
    }

    /// hyper's sleeps end at their deadlines, each later one than the last, through the
    /// connection's one tokio sleep.
    #[tokio::test(start_paused = true)]
    async fn a_connection_s_head_sleeps_end_at_their_deadlines() {
        use hyper::rt::Timer;
        let timer = HeadTimer::new(Duration::from_secs(30));
        let started = tokio::time::Instant::now();
        let first = timer.sleep(Duration::from_secs(30));
        drop(first); // a head came in time
        tokio::time::advance(Duration::from_secs(10)).await;
        // The next head's: the connection's sleep fires 20 s from now, early for it.
        timer.sleep(Duration::from_secs(30)).await;
        assert_eq!(started.elapsed(), Duration::from_secs(40));
        // Asked for sooner than the connection's sleep: woken at its own deadline.
        let shorter = HeadTimer::new(Duration::from_secs(30));
        let started = tokio::time::Instant::now();
        shorter.sleep(Duration::from_secs(5)).await;
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test]
    async fn the_application_is_copied_once_a_connection_and_told_the_client() {
        let copies = Arc::new(AtomicUsize::new(0));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let limits = Limits::of(&crate::Config::default());
        tokio::spawn(serve(listener, Counted(copies.clone()), limits, std::future::pending()));

        let (first, first_answers) = on_one_connection(addr, 3).await;
        let (second, second_answers) = on_one_connection(addr, 2).await;
        assert_eq!(first_answers, vec![first.to_string(); 3]);
        assert_eq!(second_answers, vec![second.to_string(); 2]);
        // Five requests on two connections: one copy each (served by axum's
        // `into_make_service_with_connect_info`, seven: one more for each request).
        assert_eq!(copies.load(Ordering::SeqCst), 2);
    }
}
