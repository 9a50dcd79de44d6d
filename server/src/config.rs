//! The server's settings: every one is a flag with an environment variable behind it
//! (flag wins), parsed by clap into [`Config`]. docs/operations.md's "Settings" table lists
//! them.
//! (`LEPTOS_*` variables, such as `LEPTOS_SITE_ROOT`, are read by Leptos itself.)

use std::net::SocketAddr;
use std::time::Duration;

use app::db::Durability;
use app::model::Currency;
use app::services::access::TrustedProxies;
use app::services::limits::BanPolicy;
use clap::{Args, ValueEnum};
use ipnet::IpNet;
use time::{Date, OffsetDateTime};

pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/petstore.db";

/// How log lines are written to standard error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// One readable line per event.
    #[default]
    Human,
    /// One JSON object per event, for log collectors.
    Json,
}

/// The settings the server runs with: every one a flag with an environment variable
/// behind it, parsed by clap; their defaults are said once, here ([`Config::default`]
/// is these defaults, read without the environment).
#[derive(Args, Clone, Debug)]
pub struct Config {
    /// Address to listen on [default: LEPTOS_SITE_ADDR, else 127.0.0.1:3000]
    #[arg(long, env = "PETSTORE_ADDR")]
    pub addr: Option<SocketAddr>,
    // The store and how it is opened (what the other subcommands read too).
    #[command(flatten)]
    pub store: Store,
    /// Redis for the rate-limit counters that several servers over one PostgreSQL
    /// database share (redis://host:port/db); without it they are kept in PostgreSQL
    #[arg(long, env = "PETSTORE_REDIS_URL")]
    pub redis_url: Option<String>,
    /// Take scheduled snapshots of the SQLite store into this folder (created if
    /// missing); of several servers over one store file, one takes them. Empty: none
    #[arg(long, env = "PETSTORE_BACKUP_DIR", value_parser = parse_folder)]
    pub backup_dir: Option<std::path::PathBuf>,
    /// How often a scheduled snapshot is taken (with --backup-dir), such as 6h, 15m or 2s
    #[arg(long, env = "PETSTORE_BACKUP_EVERY", default_value = "6h", value_parser = parse_interval)]
    pub backup_every: Duration,
    /// How many scheduled snapshots are kept; the oldest beyond them are deleted
    #[arg(long, env = "PETSTORE_BACKUP_KEEP", default_value_t = 28,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub backup_keep: u32,
    /// Where a new store's first admin key is written when standard output is not a
    /// terminal (mode 0600; only its path is printed) [default: first-admin-key beside a
    /// SQLite store, else in the working directory]
    #[arg(long, env = "PETSTORE_FIRST_ADMIN_KEY_FILE", value_name = "FILE")]
    pub first_admin_key_file: Option<std::path::PathBuf>,
    /// Load the demo catalog into an empty database
    #[arg(long, env = "PETSTORE_DEMO_DATA", default_value_t = true, action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub demo_data: bool,
    /// When GET /pets/{petId} was deprecated (its Deprecation header), YYYY-MM-DD
    #[arg(long = "deprecation-date", env = "PETSTORE_DEPRECATION_DATE", default_value = "2026-11-01",
          value_parser = parse_date)]
    pub deprecation: OffsetDateTime,
    /// From this date (midnight UTC) GET /pets/{petId} answers 410, YYYY-MM-DD
    #[arg(long = "sunset-date", env = "PETSTORE_SUNSET_DATE", default_value = "2027-06-30", value_parser = parse_date)]
    pub sunset: OffsetDateTime,
    /// Refusals in one rate-limit window after which the next request bans the key
    #[arg(long, env = "PETSTORE_BAN_AFTER", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub ban_after: u32,
    /// How long a ban lasts, in minutes
    #[arg(long, env = "PETSTORE_BAN_MINUTES", default_value_t = 15,
          value_parser = clap::value_parser!(i64).range(1..=525_600))]
    pub ban_minutes: i64,
    /// Longest a request may take, body upload included, in seconds; slower ones are cut
    /// off. A connection that has not sent a whole request head within it (a new one, or
    /// an idle one between requests) is closed
    #[arg(long, env = "PETSTORE_REQUEST_TIMEOUT", default_value = "30", value_parser = parse_timeout)]
    pub request_timeout: Duration,
    /// On SIGTERM or SIGINT, how long the server goes on serving with /readyz answering
    /// 503, so that a load balancer takes it out of rotation first (seconds, 0 to 300; a
    /// second signal ends it at once)
    #[arg(long, env = "PETSTORE_SHUTDOWN_DRAIN", default_value = "5", value_parser = parse_drain)]
    pub shutdown_drain: Duration,
    /// Connections served at once, in all (lowered to what the open-files limit leaves
    /// room for); beyond it a connection from the network holding most gives way, or
    /// the new one is closed
    #[arg(long, env = "PETSTORE_MAX_CONNECTIONS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Connections one client address (an IPv6 /64) may hold at once; trusted proxies
    /// are counted in all only
    #[arg(long, env = "PETSTORE_MAX_CONNECTIONS_PER_ADDRESS", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections_per_address: u32,
    /// Proxies whose X-Forwarded-For names the client (comma-separated networks, such as
    /// 10.0.0.0/8,::1); by default none, and the TCP peer is the client
    #[arg(long, env = "PETSTORE_TRUSTED_PROXIES", value_delimiter = ',', value_parser = TrustedProxies::parse_network)]
    pub trusted_proxies: Vec<IpNet>,
    /// The address the store is reached at, such as https://shop.example; with https the
    /// session cookie is Secure and __Host- prefixed (set it behind a TLS proxy)
    #[arg(long, env = "PETSTORE_PUBLIC_URL", value_parser = parse_public_url)]
    pub public_url: Option<String>,
    /// The currency of every price, an ISO 4217 code (EUR, USD, JPY…); prices are kept in
    /// its minor units (cents), so changing it changes no number, only how they read
    #[arg(long, env = "PETSTORE_CURRENCY", default_value = "EUR", value_parser = parse_currency)]
    pub currency: Currency,
    /// A secret that reads /metrics and nothing else (sent as `Authorization: Bearer
    /// <token>`), for Prometheus; admin keys read /metrics too. At least 32 characters;
    /// give it in the environment or an EnvironmentFile, not on a command line
    #[arg(long, env = "PETSTORE_METRICS_TOKEN", value_parser = parse_metrics_token, hide_env_values = true)]
    pub metrics_token: Option<MetricsToken>,
    /// Let webhooks reach loopback, private and link-local addresses (development and
    /// tests only: a webhook is a request the store makes on an admin's word)
    #[arg(long, env = "PETSTORE_WEBHOOKS_ALLOW_PRIVATE", action = clap::ArgAction::SetTrue)]
    pub webhooks_allow_private: bool,
}

/// What opening a store reads: every subcommand that opens one takes these.
#[derive(Args, Clone, Debug)]
pub struct Store {
    /// The store: a SQLite file (sqlite://…, created if missing) or a PostgreSQL database
    /// (postgres://…, 15 or newer), which several servers may serve together
    #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL, value_parser = parse_database_url)]
    pub database_url: String,
    /// What an acknowledged write survives: full (a power cut loses nothing
    /// acknowledged) or normal (a power cut may lose the last writes; a crash never does)
    #[arg(long, env = "PETSTORE_DURABILITY", value_enum, default_value_t = Durability::default())]
    pub durability: Durability,
    /// Before applying a release's migrations to an existing SQLite store, write a
    /// snapshot of it beside it (`<store>.pre-<migration>`, the newest two kept)
    #[arg(long, env = "PETSTORE_SNAPSHOT_BEFORE_MIGRATING", default_value_t = true, action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub snapshot_before_migrating: bool,
}

impl Config {
    /// These settings over the store at `url`.
    pub fn over(self, database_url: impl Into<String>) -> Config {
        Config { store: Store { database_url: database_url.into(), ..self.store }, ..self }
    }

    /// Where scheduled snapshots go, if anywhere: an empty `--backup-dir` is none, so that
    /// `PETSTORE_BACKUP_DIR=` in an EnvironmentFile turns off what a unit set.
    pub fn backup_folder(&self) -> Option<&std::path::Path> {
        self.backup_dir.as_deref().filter(|dir| !dir.as_os_str().is_empty())
    }

    /// When a key or address is banned, and for how long.
    pub fn bans(&self) -> BanPolicy {
        BanPolicy { after_refusals: self.ban_after, seconds: self.ban_minutes * 60 }
    }

    /// Whose `X-Forwarded-For` is believed.
    pub fn proxies(&self) -> TrustedProxies {
        TrustedProxies::new(self.trusted_proxies.iter().copied())
    }

    /// Where webhooks may be sent.
    pub fn webhook_targets(&self) -> app::services::webhooks::Targets {
        app::services::webhooks::Targets { allow_private: self.webhooks_allow_private }
    }

    /// Whether browsers reach the store over HTTPS (so cookies may be `Secure`).
    pub fn is_https(&self) -> bool {
        self.public_url.as_deref().is_some_and(|url| url.starts_with("https://"))
    }

    /// The store's own address, for the examples of the docs page: `--public-url`, else
    /// `http://` and the address it listens on (an unspecified one read as `localhost`).
    pub fn origin(&self) -> String {
        if let Some(url) = &self.public_url {
            return url.clone();
        }
        let addr = self.addr.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 3000)));
        if addr.ip().is_unspecified() { format!("http://localhost:{}", addr.port()) } else { format!("http://{addr}") }
    }
}

/// A database URL as it may be logged: without its password, whether it is in the
/// user information (`user:secret@host`) or a parameter (`?password=secret`, as
/// libpq's `password` and `sslpassword`).
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let (rest, query) = rest.split_once('?').map_or((rest, None), |(rest, query)| (rest, Some(query)));
    let (authority, path) = rest.split_once('/').map_or((rest, None), |(a, p)| (a, Some(p)));
    let authority = match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _password)) => format!("{user}:***@{host}"),
            None => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    let mut redacted = match path {
        Some(path) => format!("{scheme}://{authority}/{path}"),
        None => format!("{scheme}://{authority}"),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if is_password_parameter(name) => format!("{name}=***"),
                _ => pair.to_owned(),
            })
            .collect();
        redacted.push('?');
        redacted.push_str(&pairs.join("&"));
    }
    redacted
}

/// A URL parameter that holds a password, however its name is written (`%70assword`).
fn is_password_parameter(name: &str) -> bool {
    let decoded: Vec<(String, String)> = serde_urlencoded::from_str(name).unwrap_or_default();
    decoded.first().is_some_and(|(name, _)| {
        let name = name.to_ascii_lowercase();
        name == "password" || name == "sslpassword"
    })
}

/// The flags' defaults, read as if no flag and no variable were given (what tests and
/// benchmarks start from).
impl Default for Config {
    fn default() -> Self {
        #[derive(clap::Parser)]
        struct Defaults {
            #[command(flatten)]
            config: Config,
        }
        let command = <Defaults as clap::CommandFactory>::command().mut_args(|arg| arg.env(None));
        let matches = command.get_matches_from(["server"]);
        <Config as clap::FromArgMatches>::from_arg_matches(&matches).expect("the defaults parse")
    }
}

/// A `YYYY-MM-DD` date, as midnight UTC.
pub fn parse_date(raw: &str) -> Result<OffsetDateTime, String> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    Date::parse(raw, &format)
        .map(|date| date.midnight().assume_utc())
        .map_err(|e| format!("expected a date like 2027-06-30 ({e})"))
}

/// A database URL this server can serve: `sqlite:` (a file, `sqlite::memory:`) or
/// `postgres://` (`postgresql://`). Any other scheme would be read by sqlx as a file
/// path (a `mysql:` directory in the working directory), so it stops the server at once
/// instead.
pub fn parse_database_url(raw: &str) -> Result<String, String> {
    if ["sqlite:", "postgres://", "postgresql://"].iter().any(|scheme| raw.starts_with(scheme)) {
        return Ok(raw.to_owned());
    }
    let scheme = raw.split_once(':').map_or("no scheme", |(scheme, _)| scheme);
    Err(format!(
        "expected a URL like sqlite://data/petstore.db or postgres://user@host/petstore (supported schemes: \
         sqlite:, postgres://), got {scheme:?}"
    ))
}

/// A duration such as `6h`, `15m`, `2s` or `1h 30m`, from one second to 30 days.
fn parse_interval(raw: &str) -> Result<Duration, String> {
    let span = humantime::parse_duration(raw.trim())
        .map_err(|err| format!("expected a duration such as 6h, 15m or 2s: {err}"))?;
    if span < Duration::from_secs(1) || span > Duration::from_secs(30 * 86_400) {
        return Err(format!("expected from 1s to 30 days, got {raw:?}"));
    }
    Ok(Duration::from_secs(span.as_secs()))
}

/// A folder's path; empty is taken too, and means none ([`Config::backup_folder`]).
fn parse_folder(raw: &str) -> Result<std::path::PathBuf, String> {
    Ok(std::path::PathBuf::from(raw.trim()))
}

/// A whole number of seconds from 0 to 300.
fn parse_drain(raw: &str) -> Result<Duration, String> {
    match raw.trim().parse::<u64>() {
        Ok(seconds @ 0..=300) => Ok(Duration::from_secs(seconds)),
        _ => Err(format!("expected whole seconds from 0 to 300, got {raw:?}")),
    }
}

/// A whole number of seconds from 1 to 3600.
fn parse_timeout(raw: &str) -> Result<Duration, String> {
    match raw.trim().parse::<u64>() {
        Ok(seconds @ 1..=3600) => Ok(Duration::from_secs(seconds)),
        _ => Err(format!("expected whole seconds from 1 to 3600, got {raw:?}")),
    }
}

/// `https://shop.example` or `http://localhost:3000`: a scheme and a host (and port),
/// nothing after them; kept without a trailing slash. It goes into cookies, headers,
/// the OpenAPI document and pages, so it is parsed as a URI, not taken as text.
pub fn parse_public_url(raw: &str) -> Result<String, String> {
    let refused = || format!("expected a scheme and host like https://shop.example, got {raw:?}");
    let url = raw.trim().trim_end_matches('/');
    let uri: axum::http::Uri = url.parse().map_err(|_| refused())?;
    // Only a host and a valid port: no user, and nothing the URI parser let through
    // that a rebuilt authority would not hold (a port beyond 65535, say).
    let plain_host = uri.authority().is_some_and(|authority| {
        let port = authority.port_u16().filter(|port| *port > 0).map(|port| format!(":{port}"));
        !authority.host().is_empty()
            && authority.as_str() == format!("{}{}", authority.host(), port.unwrap_or_default())
    });
    let scheme_ok = matches!(uri.scheme_str(), Some("http" | "https"));
    let nothing_after = uri.path_and_query().is_none_or(|rest| rest.as_str().is_empty() || rest.as_str() == "/");
    if scheme_ok && plain_host && nothing_after && !url.contains(['"', '<', '>', '\\', ' ', '\t']) {
        Ok(url.to_owned())
    } else {
        Err(refused())
    }
}

/// The scrape secret of `--metrics-token`, kept as its SHA-256; never printed (its
/// `Debug` says only that one is set).
#[derive(Clone)]
pub struct MetricsToken([u8; 32]);

impl MetricsToken {
    /// Whether `presented` is the token, in a time that depends neither on where they
    /// differ nor on their lengths (digests are compared).
    pub fn matches(&self, presented: &str) -> bool {
        use subtle::ConstantTimeEq;
        bool::from(digest(presented).ct_eq(&self.0))
    }
}

fn digest(text: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes()).into()
}

impl std::fmt::Debug for MetricsToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MetricsToken(***)")
    }
}

pub fn parse_metrics_token(raw: &str) -> Result<MetricsToken, String> {
    let token = raw.trim();
    if token.chars().count() < 32 || !token.chars().all(|c| c.is_ascii_graphic()) {
        return Err(
            "expected at least 32 visible ASCII characters, such as the output of `openssl rand -hex 32`".into()
        );
    }
    Ok(MetricsToken(digest(token)))
}

fn parse_currency(raw: &str) -> Result<Currency, String> {
    Currency::from_code(raw).ok_or_else(|| "must be an ISO 4217 currency code: three letters, such as EUR".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_urls_are_logged_without_their_passwords() {
        assert_eq!(redacted("postgres://shop:s3cret@db:5432/store"), "postgres://shop:***@db:5432/store");
        assert_eq!(
            redacted("postgres://shop@db/store?sslmode=require&password=s3cret"),
            "postgres://shop@db/store?sslmode=require&password=***"
        );
        assert_eq!(
            redacted("postgres://db/store?PassWord=a&%70assword=b&sslpassword=c"),
            "postgres://db/store?PassWord=***&%70assword=***&sslpassword=***"
        );
        assert_eq!(redacted("postgres://db?password=s3cret"), "postgres://db?password=***");
        assert_eq!(redacted("sqlite://data/petstore.db?mode=rwc"), "sqlite://data/petstore.db?mode=rwc");
        assert_eq!(redacted("not a url"), "not a url");
    }
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        config: Config,
    }

    fn parse(args: &[&str]) -> Result<Config, clap::Error> {
        Cli::try_parse_from(std::iter::once("server").chain(args.iter().copied())).map(|cli| cli.config)
    }

    fn midnight(year: i32, month: time::Month, day: u8) -> OffsetDateTime {
        Date::from_calendar_date(year, month, day).unwrap().midnight().assume_utc()
    }

    #[test]
    fn dates_parse_to_midnight_utc() {
        assert_eq!(parse_date("2027-06-30").unwrap(), midnight(2027, time::Month::June, 30));
        assert_eq!(Config::default().sunset, midnight(2027, time::Month::June, 30));
        assert!(parse_date("30/06/2027").unwrap_err().starts_with("expected a date"));
    }

    #[test]
    fn the_defaults_are_config_default() {
        // Only meaningful when the environment sets none of the variables.
        if std::env::vars().any(|(k, _)| k.starts_with("PETSTORE_") || k == "DATABASE_URL") {
            return;
        }
        let parsed = parse(&[]).unwrap();
        let default = Config::default();
        assert_eq!(parsed.store.database_url, default.store.database_url);
        assert_eq!((parsed.deprecation, parsed.sunset), (default.deprecation, default.sunset));
        assert_eq!(parsed.bans(), default.bans());
        assert_eq!(default.bans(), BanPolicy::default());
        assert_eq!(default.request_timeout, Duration::from_secs(30));
        assert_eq!(parsed.request_timeout, default.request_timeout);
        assert!(parsed.demo_data && parsed.addr.is_none());
        assert_eq!(parsed.currency, Currency::default());
        assert_eq!(default.currency.code, "EUR");
        assert!(!default.webhooks_allow_private);
        assert!(default.metrics_token.is_none());
        assert_eq!(default.backup_folder(), None);
        assert_eq!(parse(&["--backup-dir="]).unwrap().backup_folder(), None, "empty is none");
        let set = parse(&["--backup-dir=/srv/backups"]).unwrap();
        assert_eq!(set.backup_folder(), Some(std::path::Path::new("/srv/backups")));
    }

    #[test]
    fn flags_set_every_field() {
        let config = parse(&[
            "--addr=0.0.0.0:8080",
            "--database-url=sqlite://x.db",
            "--demo-data=off",
            "--sunset-date=2028-01-02",
            "--ban-after=3",
            "--ban-minutes=2",
            "--request-timeout=5",
            "--currency=jpy",
            "--webhooks-allow-private",
            "--trusted-proxies=10.0.0.0/8,::1",
            "--public-url=https://shop.example/",
            "--metrics-token=0123456789abcdef0123456789abcdef",
        ])
        .unwrap();
        assert_eq!(config.addr, Some("0.0.0.0:8080".parse().unwrap()));
        assert_eq!(config.store.database_url, "sqlite://x.db");
        assert!(!config.demo_data);
        assert_eq!(config.sunset, midnight(2028, time::Month::January, 2));
        assert_eq!(config.bans(), BanPolicy { after_refusals: 3, seconds: 120 });
        assert_eq!(config.request_timeout, Duration::from_secs(5));
        assert_eq!(config.proxies(), TrustedProxies::new(["10.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()]));
        assert_eq!(config.public_url.as_deref(), Some("https://shop.example"));
        assert!(config.is_https());
        assert_eq!(config.currency, Currency { code: "JPY".into(), digits: 0 });
        assert!(config.webhooks_allow_private);
        let token = config.metrics_token.unwrap();
        assert!(token.matches("0123456789abcdef0123456789abcdef") && !token.matches("0123456789abcdef"));
        assert_eq!(format!("{token:?}"), "MetricsToken(***)");
    }

    #[test]
    fn bad_values_are_refused_with_the_flag_named() {
        for bad in [
            "--ban-after=0",
            "--ban-minutes=-1",
            "--sunset-date=tomorrow",
            "--request-timeout=0",
            "--demo-data=maybe",
            "--addr=x",
            "--trusted-proxies=10.0.0.0/40",
            "--public-url=shop.example",
            "--public-url=https://shop.example/store",
            "--public-url=https://shop.example:99999",
            "--public-url=https://shop\"example",
            "--public-url=ftp://shop.example",
            "--public-url=https://user@shop.example",
            "--ban-minutes=9999999999",
            "--database-url=mysql://user@host:3306/db",
            "--database-url=data/petstore.db",
            "--currency=EURO",
            "--currency=€",
            "--metrics-token=short",
            "--metrics-token=a token with spaces in it, long enough though",
        ] {
            let err = parse(&[bad]).err().unwrap_or_else(|| panic!("{bad} was accepted")).to_string();
            let flag = bad.split('=').next().unwrap();
            assert!(err.contains(flag), "{bad}: {err}");
        }
    }
}
