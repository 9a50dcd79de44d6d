//! The pet store server. `server` (or `server serve`) serves; `server keys …` manages
//! API keys. Settings are flags or environment variables (`config::Config`, docs/operations.md).

use std::io::IsTerminal;

use anyhow::{Context, bail};

use app::model::{Limits, NewApiKey, Plan, Role};
use app::services::clock::Clock;
use app::services::keys;
use clap::{Parser, Subcommand};
use leptos::prelude::get_configuration;
use server::config::{LogFormat, Store};
use server::{AppState, Config};
use tracing_subscriber::EnvFilter;

/// mimalloc rather than glibc's malloc: in a `perf` profile of `GET /pets/{petId}` under
/// load (2026-11-22), glibc's allocation and freeing were about 13 % of the server's
/// CPU. Not measured apart since (docs/PERFORMANCE.md). Built without its
/// transparent-huge-page advice (`no_thp`): on a kernel that gives huge pages when asked
/// (Debian's `madvise` setting), each 2 MiB page it touched was resident whole, 14 MiB
/// of a 53 MiB idle server and 18 of 78 MiB under load, for no measurable speed.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "server",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("PETSTORE_COMMIT"), ")"),
    about = "The pet store: storefront and REST API over SQLite or PostgreSQL",
    // `server --addr …` serves; a subcommand takes its own flags after its name, and its
    // `--help` lists only those it reads.
    args_conflicts_with_subcommands = true,
    after_help = "Besides the flags' own variables, the server reads:\n  \
        RUST_LOG           the log filter (default info,sqlx=warn; warn turns the request lines off)\n  \
        LEPTOS_SITE_ROOT   where the built WASM, CSS and assets are (default site/ beside the binary, else target/site)\n  \
        LEPTOS_SITE_ADDR   the address to listen on when --addr is not given (default 127.0.0.1:3000)\n\n\
        The settings are explained in docs/operations.md."
)]
struct Cli {
    #[command(flatten)]
    config: Config,
    /// Log format on standard error (the level is set with RUST_LOG)
    #[arg(long, env = "PETSTORE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Human, global = true)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the store (the default: `server` alone serves too).
    Serve(Box<Config>),
    /// Manage API keys in the database at DATABASE_URL.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Copy a whole SQLite store into an empty PostgreSQL database (ids, keys, orders,
    /// sessions, rate-limit counters and bans), then verify it.
    MigrateData {
        /// The SQLite store to copy (sqlite://…); it is only read, and may be in use.
        #[arg(long, value_name = "SQLITE_URL")]
        from: String,
        /// The PostgreSQL database to fill (postgres://…): new (no tables) or migrated
        /// with no rows.
        #[arg(long, value_name = "POSTGRES_URL")]
        to: String,
    },
    /// Apply the migrations the database at DATABASE_URL lacks, then exit (an existing
    /// SQLite store is snapshotted first): migrate once before rolling out a release.
    Migrate(Store),
    /// Write a consistent snapshot of the SQLite store at DATABASE_URL to FILE while
    /// servers keep serving and taking orders; it is checked before it gets its name.
    /// (For a PostgreSQL store it prints the pg_dump command to use instead.)
    Backup {
        #[command(flatten)]
        store: Store,
        /// Where to write the snapshot (a new file, checked before it gets this name)
        #[arg(long, value_name = "FILE")]
        to: std::path::PathBuf,
        /// Replace FILE if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Put a backup in the place of the SQLite store at DATABASE_URL, which no process may
    /// have open (stop the servers first). What it replaces is kept beside it, as
    /// `<store>.before-restore-<time>`; the migrations the backup lacks are applied.
    Restore {
        #[command(flatten)]
        store: Store,
        /// The backup to restore (a file `server backup` or a scheduled snapshot wrote)
        #[arg(long, value_name = "FILE")]
        from: std::path::PathBuf,
    },
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Create a key and print only the secret on standard output.
    Create {
        #[command(flatten)]
        store: Store,
        #[arg(long)]
        name: String,
        #[arg(long, value_enum)]
        role: Role,
        #[arg(long, value_enum, default_value = "free")]
        plan: Plan,
        /// Enterprise only: requests per minute.
        #[arg(long)]
        per_minute: Option<u32>,
        /// Enterprise only: requests per day.
        #[arg(long)]
        per_day: Option<u32>,
    },
    /// List the keys (never their secrets).
    List(Store),
    /// Revoke a key by id.
    Revoke {
        #[command(flatten)]
        store: Store,
        id: i64,
    },
}

impl KeysCommand {
    fn store(&self) -> &Store {
        match self {
            KeysCommand::Create { store, .. } | KeysCommand::List(store) | KeysCommand::Revoke { store, .. } => store,
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // Held to the end of main: dropping it writes out the lines still queued.
    let _log_writer = init_logging(cli.log_format);
    match cli.command {
        None => serve(cli.config).await,
        Some(Command::Serve(config)) => serve(*config).await,
        Some(Command::Keys(command)) => manage_keys(command).await,
        Some(Command::MigrateData { from, to }) => migrate_data(&from, &to).await,
        Some(Command::Migrate(store)) => migrate(&store).await,
        Some(Command::Backup { store, to, force }) => backup(&store, &to, force).await,
        Some(Command::Restore { store, from }) => restore(&store, &from).await,
    }
}

/// Logs go to standard error (stdout carries only what scripts read: keys, the address),
/// written by a thread of their own (`server::ops::log_writer`): a request only appends
/// its line to a buffer, and never waits for standard error.
fn init_logging(format: LogFormat) -> server::ops::log_writer::FlushOnDrop {
    let (writer, guard) = server::ops::log_writer::spawn(std::io::stderr(), format);
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    // Not the formatter's own report of a failed write: it goes to standard error with
    // `eprintln!`, which panics when that fails too.
    let logs = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_env_filter(filter)
        .log_internal_errors(false)
        // Colours for a person at a terminal only (and not with NO_COLOR set): in a file
        // or a collector's pipe the escape codes are noise (and a third of a line's bytes).
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()));
    match format {
        LogFormat::Human => logs.event_format(server::ops::log_format::TextFormat::new()).init(),
        LogFormat::Json => logs.json().flatten_event(true).with_current_span(true).with_span_list(false).init(),
    }
    guard
}

async fn open(store: &Store) -> anyhow::Result<app::db::Db> {
    let opening =
        app::db::Opening { durability: store.durability, snapshot_before_migrating: store.snapshot_before_migrating };
    app::db::Db::open(&store.database_url, opening)
        .await
        .with_context(|| format!("opening the database {}", server::config::redacted(&store.database_url)))
}

/// The file of the SQLite store at `url`, which must exist: a mistyped path must not
/// copy or back up an empty store made for the occasion.
fn existing_sqlite_store(url: &str) -> anyhow::Result<std::path::PathBuf> {
    let path = app::db::sqlite_file(url)?;
    if !path.is_file() {
        bail!("no SQLite store at {}", path.display());
    }
    Ok(path)
}

/// `server migrate`: opening a store migrates it; this says to which migration.
async fn migrate(store: &Store) -> anyhow::Result<()> {
    let db = open(store).await?;
    let newest = db.newest_migration().await.context("reading the migrations applied");
    db.close().await;
    eprintln!("the database is at migration {}, this release's newest", newest?);
    Ok(())
}

/// `server backup`: a snapshot of a SQLite store; a PostgreSQL store's operator is
/// told which tool does it.
async fn backup(store: &Store, to: &std::path::Path, force: bool) -> anyhow::Result<()> {
    if app::db::Engine::of_url(&store.database_url)? == app::db::Engine::Postgres {
        bail!("{}", postgres_backups(&store.database_url, &to.display().to_string()));
    }
    existing_sqlite_store(&store.database_url)?;
    let db = open(store).await?;
    let pool = db.sqlite_pool().expect("a SQLite store");
    let written = app::db::backup::backup(pool, to, force).await;
    db.close().await;
    let snapshot = written?;
    eprintln!(
        "wrote {}: {} bytes, {} pets, {} orders, schema at migration {} ({})",
        snapshot.path.display(),
        snapshot.bytes,
        snapshot.pets,
        snapshot.orders,
        snapshot.migration.0,
        snapshot.migration.1
    );
    Ok(())
}

/// What to tell the operator who asks the server to back up a PostgreSQL store.
fn postgres_backups(url: &str, file: &str) -> String {
    let url = server::config::redacted(url);
    format!(
        "a PostgreSQL store is backed up with PostgreSQL's own tools, for example:\n  \
         pg_dump --format=custom --file={file} '{url}'\n\
         or, to restore to any point in time, base backups with WAL archiving:\n  \
         pg_basebackup --pgdata=base-backup --wal-method=stream --checkpoint=fast --dbname='{url}'\n\
         (docs/operations.md, \"Backups\", gives both recipes)"
    )
}

/// `server restore`: a backup in the place of a SQLite store, then migrated as any
/// store is when it is opened.
async fn restore(store: &Store, from: &std::path::Path) -> anyhow::Result<()> {
    if app::db::Engine::of_url(&store.database_url)? == app::db::Engine::Postgres {
        bail!(
            "a backup goes into a PostgreSQL database with migrate-data:\n  server migrate-data --from sqlite://{} --to '{}'",
            from.display(),
            server::config::redacted(&store.database_url)
        );
    }
    let target = app::db::sqlite_file(&store.database_url)?;
    let stamp = app::services::clock::compact_utc(Clock::system().now());
    let (snapshot, kept) = app::db::backup::restore(from, &target, &stamp).await?;
    let db = open(store).await.context("opening the restored store")?;
    db.close().await;
    eprintln!(
        "restored {} from {}: {} pets, {} orders (backed up at migration {}, now migrated to this release)",
        target.display(),
        from.display(),
        snapshot.pets,
        snapshot.orders,
        snapshot.migration.0
    );
    if let Some(kept) = kept {
        eprintln!("the store it replaced is kept at {}", kept.display());
    }
    Ok(())
}

/// `server migrate-data`: SQLite → PostgreSQL, every table, then the row counts.
async fn migrate_data(from: &str, to: &str) -> anyhow::Result<()> {
    use app::db::{Db, Engine};
    if Engine::of_url(from)? != Engine::Sqlite || Engine::of_url(to)? != Engine::Postgres {
        bail!("migrate-data copies --from a sqlite:// store --to a postgres:// database");
    }
    existing_sqlite_store(from)?;
    let source = Db::connect(from).await.with_context(|| format!("opening {}", server::config::redacted(from)))?;
    let target = Db::connect(to).await.with_context(|| format!("opening {}", server::config::redacted(to)))?;
    let copied = app::db::copy::sqlite_to_postgres(&source, &target).await?;
    for (table, rows) in &copied {
        eprintln!("{table:>20}  {rows} rows");
    }
    eprintln!("copied and verified: {} rows in {} tables", copied.iter().map(|(_, n)| n).sum::<i64>(), copied.len());
    Ok(())
}

async fn manage_keys(command: KeysCommand) -> anyhow::Result<()> {
    let db = open(command.store()).await?;
    let now = Clock::system().now();
    match command {
        KeysCommand::Create { store: _, name, role, plan, per_minute, per_day } => {
            let limits = match (per_minute, per_day) {
                (None, None) => None,
                (Some(per_minute), Some(per_day)) => Some(Limits { per_minute, per_day }),
                _ => bail!("give both --per-minute and --per-day"),
            };
            let created =
                keys::create(&db, now, NewApiKey { name, role, plan, limits }).await.context("creating the key")?;
            // Only the secret on stdout, so that scripts can capture it.
            println!("{}", created.key);
            eprintln!("created key {} ({}, {})", created.key_info.id, role.as_str(), plan.as_str());
        }
        KeysCommand::List(_) => {
            println!(
                "{:>5}  {:<9} {:<11} {:>9} {:>9}  {:<20}  {:<20}  name",
                "id", "role", "plan", "per min", "per day", "created", "revoked"
            );
            for row in keys::list_all(&db).await.context("listing the keys")? {
                let key = row.to_api();
                println!(
                    "{:>5}  {:<9} {:<11} {:>9} {:>9}  {:<20}  {:<20}  {}",
                    key.id,
                    key.role.as_str(),
                    key.plan.as_str(),
                    key.limits.per_minute,
                    key.limits.per_day,
                    key.created_at,
                    key.revoked_at.as_deref().unwrap_or("-"),
                    key.name
                );
            }
        }
        KeysCommand::Revoke { store: _, id } => {
            let row = keys::revoke(&db, now, id).await.with_context(|| format!("revoking key {id}"))?;
            eprintln!("revoked key {} ({}); a running server stops accepting it within a second", row.id, row.name);
        }
    }
    db.close().await;
    Ok(())
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let leptos = get_configuration(None).context("reading the Leptos configuration")?;
    let mut options = leptos.leptos_options;
    let addr = config.addr.unwrap_or(options.site_addr);
    options.site_addr = addr;
    let config = Config { addr: Some(addr), ..config };
    let store_file = match app::db::Engine::of_url(&config.store.database_url)? {
        app::db::Engine::Sqlite => Some(app::db::sqlite_file(&config.store.database_url)?),
        app::db::Engine::Postgres if config.backup_folder().is_some() => bail!(
            "--backup-dir takes snapshots of a SQLite store; {}",
            postgres_backups(&config.store.database_url, "petstore.dump")
        ),
        app::db::Engine::Postgres => None,
    };
    // The built site, whole, or no start (server::site says where it looks); with
    // `make build-release`'s content hashes the pages name `petstore.<hash>.wasm`,
    // which browsers may cache for good.
    let site = server::site::Search::of_this_process(&options).find().map_err(anyhow::Error::msg)?;
    site.link(&mut options).context("keeping the asset names' hashes")?;
    tracing::info!(site = %site.root.display(), hashed_names = site.hashes.is_some(), "serving the built site");

    let db = open(&config.store).await?;
    let clock = Clock::system();
    // Once per store, whichever of several servers starting together gets there first.
    let first_start = async {
        if config.demo_data && app::services::demo::seed_if_empty(&db).await? {
            tracing::info!("loaded the demo catalog into the empty database");
        }
        if keys::count(&db).await? > 0 {
            return Ok(None);
        }
        let admin = NewApiKey {
            name: "First admin".into(),
            role: Role::Admin,
            plan: Plan::Enterprise,
            limits: Some(Limits { per_minute: 10_000, per_day: 1_000_000 }),
        };
        keys::create(&db, clock.now(), admin).await.map(Some)
    };
    let first_admin =
        db.alone(first_start).await.context("loading the demo catalog or creating the first admin key")?;
    if let Some(created) = first_admin {
        let beside_store =
            store_file.as_deref().and_then(std::path::Path::parent).filter(|dir| !dir.as_os_str().is_empty());
        let file = config
            .first_admin_key_file
            .clone()
            .unwrap_or_else(|| beside_store.unwrap_or(std::path::Path::new(".")).join("first-admin-key"));
        hand_over_first_admin_key(&created.key, &file);
    }

    let scheduled_backups = match config.backup_folder().map(std::path::Path::to_owned).zip(store_file.clone()) {
        Some((dir, store)) => {
            // Each snapshot is taken by this binary's `backup` in a child process.
            let program = std::env::current_exe().context("finding this binary, which takes the scheduled backups")?;
            let (every, keep, database_url) =
                (config.backup_every, config.backup_keep as usize, config.store.database_url.clone());
            Some((store, app::services::backups::Schedule { dir, every, keep, program, database_url }))
        }
        None => None,
    };
    if scheduled_backups.is_none()
        && store_file.is_some()
        && let Err(err) = app::services::backups::note_off(&db, clock.now()).await
    {
        tracing::warn!(error = %err, "could not note in the store that no backups are scheduled");
    }
    let state = AppState::new(db.clone(), config, clock).await.context("loading the rate-limit counters")?;
    let flusher = state.access.limiter.clone().spawn_flusher(db.clone());
    let upkeep = server::ops::metrics::spawn_upkeep();
    let backups = scheduled_backups
        .map(|(store, schedule)| app::services::backups::spawn(db.clone(), state.clock.clone(), store, schedule));
    let limiter = state.access.limiter.clone();
    let feed = state.feed.clone();
    let (stopping, drain) = (state.stopping.clone(), state.config.shutdown_drain);
    let limits = server::serve::Limits::of(&state.config);
    let router = server::app(state, options);
    // Listened for before the port opens: whoever sees it open may signal at once.
    let mut signals = StopSignals::listen().context("listening for SIGINT and SIGTERM")?;
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("binding {addr}"))?;
    // The bound address, which differs from `addr` when its port is 0.
    let addr = listener.local_addr().context("reading the bound address")?;
    println!("Pet Store is running at http://{addr}/ (REST API at http://{addr}/api/v1)");
    server::serve::serve(listener, router, limits, async move {
        signals.next().await;
        // Out of the load balancer's rotation first (`/readyz` 503), still serving what
        // it sends meanwhile; a second signal cuts the wait short.
        stopping.store(true, std::sync::atomic::Ordering::Relaxed);
        if !drain.is_zero() {
            tracing::info!(seconds = drain.as_secs(), "draining: /readyz answers 503, requests are still served");
            tokio::select! {
                () = tokio::time::sleep(drain) => {}
                () = signals.next() => {}
            }
        }
        // Event streams stay open until told: end them, or the shutdown waits.
        feed.close();
    })
    .await;
    // No requests run any more: this last flush (which waits for a running one) saves
    // everything, and only then is the periodic flusher stopped.
    limiter.flush(&db).await.context("saving the rate-limit counters")?;
    flusher.abort();
    upkeep.abort();
    if let Some(backups) = backups {
        backups.stop().await;
    }
    db.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// The first admin key, to the operator only: on a terminal it is shown; anywhere else
/// (a service manager's journal, a container's log) standard output is kept, so it goes
/// to `path`, a file only this user can read, and only its path is printed.
fn hand_over_first_admin_key(key: &str, path: &std::path::Path) {
    if std::io::stdout().is_terminal() {
        println!("Created the first admin key (shown only this once; keep it safe):\n\n    {key}\n");
        return;
    }
    // Said whole, so that whoever reads the line need not know the working directory.
    let path = &std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    match write_secret(path, key) {
        Ok(()) => println!(
            "Wrote the first admin key to {} (readable only by this user: keep the key elsewhere, then delete the file)",
            path.display()
        ),
        Err(err) => tracing::error!(
            path = %path.display(),
            error = %err,
            "could not write the first admin key; create an admin key with `server keys create --role admin --name …`"
        ),
    }
}

/// `text` in a file at `path` that only this user may read: written whole to a new
/// hidden file of mode 0600 beside it (created exclusively, so never through a link
/// planted there, and never readable by others, not even for a moment), then renamed
/// over `path` (which replaces a file or link there, never writes through it).
fn write_secret(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let name = path.file_name().map_or_else(|| "secret".into(), |name| name.to_string_lossy().into_owned());
    let partial = path.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    let _ = std::fs::remove_file(&partial);
    let written = (|| {
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&partial)?;
        writeln!(file, "{text}")?;
        file.sync_all()?;
        std::fs::rename(&partial, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

/// SIGINT and SIGTERM, listened for from the moment this is made. It is made before the
/// address is printed: a signal sent as soon as that line is read (by a test, a
/// supervisor) must be handled, not meet the default action, which ends the process at
/// once without the last flush of the rate-limit counters or the log.
struct StopSignals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn listen() -> std::io::Result<StopSignals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(StopSignals { interrupt: signal(SignalKind::interrupt())?, terminate: signal(SignalKind::terminate())? })
    }

    /// Resolves at the next SIGINT or SIGTERM (one that came before this is called
    /// counts): stop accepting, let in-flight requests finish.
    async fn next(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {},
            _ = self.terminate.recv() => {},
        }
        tracing::info!("shutting down");
    }
}
