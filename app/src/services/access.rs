//! Who is calling and how often they may: the one gate every surface passes through,
//! the REST API's guard, the storefront's server functions and `/metrics` alike, so
//! that a key's limits and bans hold whichever way it comes in.
//!
//! A request counts against one subject (contract.md, "Limits"):
//! - a valid key (presented, or behind a browser session): the key's plan;
//! - no key: the client's address, at the Free plan's numbers;
//! - a key that does not work (unknown, revoked, a failed sign-in): the client's
//!   address again, but in a bucket of its own, so that guessing is throttled and then
//!   banned without banning that address's public reads and sign-ups (behind a proxy or
//!   NAT, that address is every visitor).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use ipnet::IpNet;

use crate::db::Db;
use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::{Caller, Limits, Plan};
use crate::services::auth::{Authenticator, Presented};
use crate::services::clock::Clock;
use crate::services::limits::{RateLimiter, Verdict, WindowState};
use crate::services::sessions;

/// A client as the limits see it: its address, with an IPv6 address grouped by its /64
/// (one home or host is usually given a whole /64, so single addresses would let one
/// client spread its requests over 2^64 subjects).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientAddr(IpAddr);

impl ClientAddr {
    pub fn new(addr: IpAddr) -> ClientAddr {
        match addr.to_canonical() {
            IpAddr::V6(v6) => ClientAddr(IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !(u64::MAX as u128)))),
            v4 @ IpAddr::V4(_) => ClientAddr(v4),
        }
    }

    /// A request that came with no peer address (an in-process call).
    pub fn unknown() -> ClientAddr {
        ClientAddr(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
    }

    /// The address as counted (an IPv6 one with its last 64 bits zero); `None` for an
    /// in-process call.
    pub fn ip(self) -> Option<IpAddr> {
        (self != ClientAddr::unknown()).then_some(self.0)
    }
}

impl fmt::Display for ClientAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IpAddr::V4(v4) => write!(f, "{v4}"),
            IpAddr::V6(v6) => write!(f, "{v6}/64"),
        }
    }
}

/// The proxies whose `X-Forwarded-For` is believed (the `--trusted-proxies` setting;
/// empty by default, when the TCP peer is the client).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies(Arc<[IpNet]>);

impl TrustedProxies {
    pub fn new(networks: impl IntoIterator<Item = IpNet>) -> TrustedProxies {
        TrustedProxies(networks.into_iter().collect())
    }

    /// One network of the setting: a CIDR block (`10.0.0.0/8`) or a single address.
    pub fn parse_network(text: &str) -> Result<IpNet, String> {
        let text = text.trim();
        text.parse::<IpNet>()
            .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
            .map_err(|_| format!("expected a network like 10.0.0.0/8 or an address, got {text:?}"))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn trusts(&self, addr: IpAddr) -> bool {
        let addr = addr.to_canonical();
        self.0.iter().any(|network| network.contains(&addr))
    }

    /// The client behind a request from `peer`: the peer itself, unless it is a trusted
    /// proxy; then the nearest address in `X-Forwarded-For` (read from the right, the
    /// side our own proxies append to) that is not a trusted proxy. A client can write
    /// anything at the left end of that header, so nothing left of the first address we
    /// do not trust is believed. The headers are read as bytes, hop by hop: whatever a
    /// client wrote (bytes that are not ASCII among them) spoils only its own hops,
    /// never the ones our proxies appended to its right.
    pub fn client<'h>(&self, peer: Option<IpAddr>, forwarded_for: impl Iterator<Item = &'h [u8]>) -> ClientAddr {
        let Some(mut client) = peer else { return ClientAddr::unknown() };
        if self.0.is_empty() || !self.trusts(client) {
            return ClientAddr::new(client);
        }
        let hops: Vec<&[u8]> = forwarded_for.flat_map(|header| header.split(|byte| *byte == b',')).collect();
        for hop in hops.into_iter().rev() {
            match parse_hop(hop) {
                Some(addr) if self.trusts(addr) => client = addr,
                Some(addr) => return ClientAddr::new(addr),
                // Garbage from whoever stands left of our last proxy: that proxy's
                // own peer is the client we know.
                None => break,
            }
        }
        ClientAddr::new(client)
    }
}

/// One `X-Forwarded-For` entry: an address, perhaps with a port (`1.2.3.4:5678`,
/// `[2001:db8::1]:443`).
fn parse_hop(hop: &[u8]) -> Option<IpAddr> {
    let hop = std::str::from_utf8(hop).ok()?.trim();
    hop.parse::<IpAddr>().ok().or_else(|| hop.parse::<std::net::SocketAddr>().ok().map(|addr| addr.ip()))
}

/// Whom a request is counted against (the rate limiter's row key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    Key(i64),
    /// A request that needs no key, or came without one.
    Client(ClientAddr),
    /// A request with a key that does not work, or a failed sign-in.
    FailedAuth(ClientAddr),
    /// Sign-ups, limited further (`keys::SIGN_UPS_PER_IP`).
    SignUp(ClientAddr),
}

impl Subject {
    pub fn id(&self) -> String {
        match self {
            // Pushed, not `format!` (its machinery was 430 of a read's instructions).
            Subject::Key(id) => {
                let mut key = String::with_capacity(24);
                key.push_str("key:");
                key.push_str(itoa::Buffer::new().format(*id));
                key
            }
            Subject::Client(addr) => format!("ip:{addr}"),
            Subject::FailedAuth(addr) => format!("badkey:{addr}"),
            Subject::SignUp(addr) => format!("signup:{addr}"),
        }
    }
}

/// What a request presented to say who it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Credentials<'a> {
    Nothing,
    Key(&'a str),
    /// A browser session's token (the storefront's cookie).
    Session(&'a str),
}

impl<'a> From<Presented<'a>> for Credentials<'a> {
    fn from(presented: Presented<'a>) -> Self {
        match presented {
            Presented::Nothing => Credentials::Nothing,
            Presented::Key(key) => Credentials::Key(key),
        }
    }
}

/// Whether a request uses up its subject's allowance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// It counts in both windows (every API request and server function call).
    Counted,
    /// Only a ban refuses it (rendering a page, a Prometheus scrape); it counts nowhere,
    /// unless its key does not work: a failed attempt counts on every surface.
    BansOnly,
}

/// A request let through: who it is (or why its key does not work, for the handler to
/// answer) and the window its `X-RateLimit-*` headers describe.
#[derive(Debug)]
pub struct Admitted {
    pub caller: AppResult<Option<Caller>>,
    pub window: WindowState,
}

/// A request refused: 429 (`rate_limited` or `temporarily_banned`), or 503 when the
/// shared counters cannot be reached (then no window is known).
#[derive(Debug)]
pub struct Refused {
    pub error: AppError,
    pub window: Option<WindowState>,
    /// The key it was counted against, if any (for the dashboard's traffic).
    pub key_id: Option<i64>,
}

/// The Free plan's numbers, for subjects that are not keys.
pub fn free_limits() -> Limits {
    Plan::Free.limits().expect("Free has fixed limits")
}

/// The verdict as the answer a refused request gets. `what` names what was counted
/// ("requests", "sign-ups from this address").
pub fn decide(verdict: Verdict, what: &str) -> Result<WindowState, Box<Refused>> {
    match verdict {
        Verdict::Allowed(window) => Ok(window),
        Verdict::Limited { window, retry_after } => Err(Box::new(Refused {
            error: AppError::too_many(
                ErrorCode::RateLimited,
                format!("too many {what}: the limit is {} (retry in {})", window.limit, in_words(retry_after)),
                retry_after,
            ),
            window: Some(window),
            key_id: None,
        })),
        Verdict::Banned { window, retry_after } => Err(Box::new(Refused {
            error: AppError::too_many(
                ErrorCode::TemporarilyBanned,
                format!("too many {what} after being limited: blocked for another {}", in_words(retry_after)),
                retry_after,
            ),
            window: Some(window),
            key_id: None,
        })),
    }
}

/// `90` → "1 min 30 s", as people read a wait.
pub fn in_words(seconds: i64) -> String {
    let seconds = seconds.max(1);
    match (seconds / 3600, seconds % 3600 / 60, seconds % 60) {
        (0, 0, s) => format!("{s} s"),
        (0, m, 0) => format!("{m} min"),
        (0, m, s) => format!("{m} min {s} s"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}

/// The gate: authentication, limits and bans, and where a request comes from.
#[derive(Clone)]
pub struct Access {
    pub auth: Authenticator,
    pub limiter: Arc<RateLimiter>,
    pub proxies: TrustedProxies,
    db: Db,
    clock: Clock,
}

impl Access {
    pub fn new(db: Db, clock: Clock, limiter: Arc<RateLimiter>, proxies: TrustedProxies) -> Access {
        Access { auth: Authenticator::new(db.clone(), clock.clone()), limiter, proxies, db, clock }
    }

    /// The client behind a request (see [`TrustedProxies::client`]).
    pub fn client(&self, extensions: &axum::http::Extensions, headers: &axum::http::HeaderMap) -> ClientAddr {
        let peer = extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|info| info.0.ip());
        if self.proxies.is_empty() {
            return peer.map_or_else(ClientAddr::unknown, ClientAddr::new);
        }
        let forwarded = headers.get_all("x-forwarded-for").into_iter().map(axum::http::HeaderValue::as_bytes);
        self.proxies.client(peer, forwarded)
    }

    /// Finds out who presented `credentials` and counts the request against its
    /// subject (or, with [`Counting::BansOnly`], only refuses it during a ban).
    pub async fn admit(
        &self,
        credentials: Credentials<'_>,
        client: ClientAddr,
        counting: Counting,
    ) -> Result<Admitted, Box<Refused>> {
        let caller = match credentials {
            Credentials::Nothing => Ok(None),
            Credentials::Key(key) => self.auth.authenticate(Presented::Key(key)).await,
            // Boxed: a session is read from the database, whose (large) future would
            // otherwise be part of every request's.
            Credentials::Session(token) => Box::pin(sessions::caller(&self.db, self.clock.now(), token)).await,
        };
        let (subject, limits) = match &caller {
            Ok(Some(caller)) => (Subject::Key(caller.key_id), caller.limits),
            Err(err) if err.code == ErrorCode::InvalidApiKey => (Subject::FailedAuth(client), free_limits()),
            _ => (Subject::Client(client), free_limits()),
        };
        let key_id = match subject {
            Subject::Key(id) => Some(id),
            _ => None,
        };
        let verdict = match (counting, subject) {
            (Counting::Counted, _) | (_, Subject::FailedAuth(_)) => self.limiter.check(&subject.id(), limits).await,
            (Counting::BansOnly, _) => self.limiter.peek(&subject.id(), limits).await,
        }
        .map_err(|error| {
            // The shared counters could not be stored (their database's volume is
            // full): a read is not refused as if it wrote, but told to retry.
            let error = if error.code == ErrorCode::InsufficientStorage {
                AppError::unavailable("the store cannot count requests right now (its storage is full); retry shortly")
            } else {
                error
            };
            Box::new(Refused { error, window: None, key_id })
        })?;
        let what = if matches!(subject, Subject::FailedAuth(_)) {
            "requests with a key that does not work"
        } else {
            "requests"
        };
        decide(verdict, what)
            .map(|window| Admitted { caller, window })
            .map_err(|refused| Box::new(Refused { key_id, ..*refused }))
    }

    /// Whether `credentials` still name a caller (a key not revoked, a session not
    /// ended), counting nothing: for what stays open after its request was admitted (an
    /// event stream). `Err` when that cannot be told now (the store is unreachable).
    pub async fn still_valid(&self, credentials: Credentials<'_>) -> AppResult<bool> {
        let caller = match credentials {
            Credentials::Nothing => return Ok(true),
            Credentials::Key(key) => self.auth.authenticate(Presented::Key(key)).await,
            Credentials::Session(token) => sessions::caller(&self.db, self.clock.now(), token).await,
        };
        match caller {
            Ok(caller) => Ok(caller.is_some()),
            Err(err) if err.code == ErrorCode::InvalidApiKey => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// A sign-in that named no key at all: counted as a wrong key is (429 when the
    /// address's failed attempts are over their limit), so that no sign-in is free.
    pub async fn failed_sign_in(&self, client: ClientAddr) -> AppResult<()> {
        let verdict = self.limiter.check(&Subject::FailedAuth(client).id(), free_limits()).await?;
        decide(verdict, "requests with a key that does not work").map(|_| ()).map_err(|refused| refused.error)
    }

    /// A caller who proved who they are without their key (a passkey, a recovery
    /// code): counted as a request with that key, so that a banned or exhausted key
    /// cannot sign in this way either.
    pub async fn sign_in_as(&self, caller: Caller) -> AppResult<Caller> {
        let verdict = self.limiter.check(&Subject::Key(caller.key_id).id(), caller.limits).await?;
        decide(verdict, "requests").map(|_| caller).map_err(|refused| refused.error)
    }

    /// A key typed into the sign-in form: counted as a request with that key (a banned
    /// or exhausted key cannot sign in), and a wrong one as a failed attempt from
    /// `client` (throttled, then banned).
    pub async fn sign_in(&self, key: &str, client: ClientAddr) -> AppResult<Caller> {
        let admitted = self.admit(Credentials::Key(key), client, Counting::Counted).await.map_err(|r| r.error)?;
        admitted.caller?.ok_or_else(crate::services::auth::missing_key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn ipv6_clients_are_grouped_by_their_64() {
        let one = ClientAddr::new(ip("2001:db8:1:2:aaaa::1"));
        let other = ClientAddr::new(ip("2001:db8:1:2:ffff:ffff:ffff:ffff"));
        assert_eq!(one, other);
        assert_ne!(one, ClientAddr::new(ip("2001:db8:1:3::1")));
        assert_eq!(one.to_string(), "2001:db8:1:2::/64");
        // An IPv4 client seen through an IPv6 socket is that IPv4 client.
        assert_eq!(ClientAddr::new(ip("::ffff:192.0.2.7")).to_string(), "192.0.2.7");
        assert_eq!(ClientAddr::new(ip("192.0.2.7")).to_string(), "192.0.2.7");
    }

    /// The headers as the proxies' bytes.
    fn hops<'h>(headers: &'h [&'h str]) -> impl Iterator<Item = &'h [u8]> {
        headers.iter().map(|header| header.as_bytes())
    }

    #[test]
    fn forwarded_for_counts_only_from_trusted_proxies() {
        let none = TrustedProxies::default();
        let peer = Some(ip("127.0.0.1"));
        assert_eq!(none.client(peer, hops(&["203.0.113.9"])).to_string(), "127.0.0.1", "off by default");

        let proxies =
            TrustedProxies::new(["127.0.0.0/8", "10.0.0.0/8"].map(|n| TrustedProxies::parse_network(n).unwrap()));
        assert_eq!(proxies.client(peer, hops(&["203.0.113.9"])).to_string(), "203.0.113.9");
        // The nearest untrusted hop, whatever the client wrote further left.
        assert_eq!(proxies.client(peer, hops(&["6.6.6.6, 203.0.113.9, 10.1.2.3"])).to_string(), "203.0.113.9");
        // Several headers are one list; ports are allowed.
        assert_eq!(proxies.client(peer, hops(&["198.51.100.1:5000", "10.0.0.1"])).to_string(), "198.51.100.1");
        // Not from a trusted peer: the header is the client's own word, ignored.
        assert_eq!(proxies.client(Some(ip("192.0.2.1")), hops(&["203.0.113.9"])).to_string(), "192.0.2.1");
        // Garbage, or only proxies: the last proxy's peer.
        assert_eq!(proxies.client(peer, hops(&["nonsense, 10.0.0.2"])).to_string(), "10.0.0.2");
        assert_eq!(proxies.client(peer, hops(&[])).to_string(), "127.0.0.1");
        assert_eq!(proxies.client(peer, hops(&["[2001:db8::5]:443"])).to_string(), "2001:db8::/64");
        // Bytes that are not ASCII spoil only the hop they are in: the hops our proxies
        // appended to its right still name the client (a banned one cannot pass as the
        // proxy by writing them).
        let spoiled: [&[u8]; 1] = [b"1.2.3.4\xff, 203.0.113.9, 10.0.0.7"];
        assert_eq!(proxies.client(peer, spoiled.into_iter()).to_string(), "203.0.113.9");
        let spoiled: [&[u8]; 2] = [b"\xfe\xff", b"198.51.100.4"];
        assert_eq!(proxies.client(peer, spoiled.into_iter()).to_string(), "198.51.100.4");
        // A spoiled hop that is the nearest: its proxy's peer is the client we know.
        let spoiled: [&[u8]; 1] = [b"203.0.113.9, \xff\xfe, 10.0.0.7"];
        assert_eq!(proxies.client(peer, spoiled.into_iter()).to_string(), "10.0.0.7");
    }

    #[test]
    fn networks_parse_as_blocks_or_single_addresses() {
        assert_eq!(TrustedProxies::parse_network(" 10.0.0.0/8 ").unwrap().to_string(), "10.0.0.0/8");
        assert_eq!(TrustedProxies::parse_network("::1").unwrap().to_string(), "::1/128");
        assert!(TrustedProxies::parse_network("10.0.0.0/33").is_err());
        assert!(TrustedProxies::parse_network("proxy.internal").is_err());
    }

    #[test]
    fn waits_read_as_people_say_them() {
        assert_eq!(in_words(0), "1 s");
        assert_eq!(in_words(42), "42 s");
        assert_eq!(in_words(900), "15 min");
        assert_eq!(in_words(899), "14 min 59 s");
        assert_eq!(in_words(86_399), "23 h 59 min");
    }
}
