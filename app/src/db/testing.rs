//! Throwaway stores for tests, on the engine the test run picks: a SQLite file by
//! default, or with `PETSTORE_TEST_ENGINE=postgres` a new PostgreSQL database on the
//! server `PETSTORE_TEST_POSTGRES` names (a URL whose user may create databases).
//! `make test` starts such a server (`scripts/with-databases.sh`) and runs the
//! engine-neutral suites once per engine.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::Connection;

/// The variable naming the PostgreSQL server of the test run.
pub const POSTGRES_SERVER: &str = "PETSTORE_TEST_POSTGRES";
/// The variable naming the engine of the test run's stores: `sqlite` (the default) or
/// `postgres`.
pub const ENGINE: &str = "PETSTORE_TEST_ENGINE";

/// Whether this test run's stores are on PostgreSQL.
pub fn on_postgres() -> bool {
    std::env::var(ENGINE).is_ok_and(|engine| engine == "postgres")
}

/// The test run's PostgreSQL server; a test that needs one fails without it (run it
/// through `scripts/with-databases.sh`, as `make test` does).
pub fn postgres_server() -> String {
    std::env::var(POSTGRES_SERVER)
        .ok()
        .filter(|url| !url.is_empty())
        .unwrap_or_else(|| panic!("{POSTGRES_SERVER} is not set: run the tests through scripts/with-databases.sh"))
}

/// A new, empty PostgreSQL database on the test run's server: its URL.
pub async fn new_postgres_database() -> String {
    let server = postgres_server();
    // Unique across the test processes sharing the server (the pid) and within one.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!("petstore_test_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let mut conn = sqlx::PgConnection::connect(&server).await.expect("the test PostgreSQL server answers");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut conn)
        .await
        .expect("a test database is created");
    let _ = conn.close().await;
    with_database(&server, &name)
}

/// The URL of a new, empty store for a test whose files live in `dir`. Asked again
/// for the same `dir`, it answers the same store (a test that restarts the app).
pub async fn scratch_url(dir: &Path) -> String {
    if !on_postgres() {
        return format!("sqlite://{}", dir.join("test.db").display());
    }
    let marker = dir.join("postgres.url");
    if let Ok(url) = std::fs::read_to_string(&marker) {
        return url;
    }
    let url = new_postgres_database().await;
    std::fs::write(&marker, &url).expect("the test dir takes the store's URL");
    url
}

/// `server` (a PostgreSQL URL) naming database `name` instead of its own.
fn with_database(server: &str, name: &str) -> String {
    let (base, query) = server.split_once('?').map_or((server, None), |(base, query)| (base, Some(query)));
    let authority_end = base.find("://").map_or(0, |i| i + 3);
    let host_and_path = &base[authority_end..];
    let host = host_and_path.split_once('/').map_or(host_and_path, |(host, _)| host);
    let mut url = format!("{}{host}/{name}", &base[..authority_end]);
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    url
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_server_url_names_the_new_database() {
        let url = super::with_database("postgres://u@127.0.0.1:5499/postgres?sslmode=disable", "t1");
        assert_eq!(url, "postgres://u@127.0.0.1:5499/t1?sslmode=disable");
        assert_eq!(super::with_database("postgres://u@h:1", "t2"), "postgres://u@h:1/t2");
    }
}
