//! Three real servers over one PostgreSQL database, as a load balancer would spread
//! clients over them: every promise of contract.md's "Several servers" holds across
//! them, with the rate-limit counters in Redis and without it (in PostgreSQL), and
//! while Redis goes away and comes back. Needs the test run's PostgreSQL and Redis
//! (`scripts/with-databases.sh`, as `make test` runs it).

mod common;
#[path = "../../app/tests/support/soft_passkey.rs"]
mod soft_passkey;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::live::{Http, LiveServer};
use common::receiver::{Receiver, ids};
use http_body_util::BodyExt;
use serde_json::json;

/// Room for a loaded machine around promises of 1 s (and short enough that a promise
/// broken by seconds fails).
const DEADLINE: Duration = Duration::from_secs(3);

struct Cluster {
    servers: Vec<LiveServer>,
    http: Vec<Http>,
    admin: String,
    database_url: String,
    _dir: tempfile::TempDir,
}

/// Three servers over a new PostgreSQL database, counting in `redis` when given.
async fn cluster(redis: Option<&str>) -> Cluster {
    let database_url = app::db::testing::new_postgres_database().await;
    let dir = tempfile::tempdir().unwrap();
    let start = |dir: &std::path::Path| {
        LiveServer::start_with(dir, |command| {
            command.env("DATABASE_URL", &database_url).env("PETSTORE_WEBHOOKS_ALLOW_PRIVATE", "true");
            if let Some(redis) = redis {
                command.env("PETSTORE_REDIS_URL", redis);
            }
        })
    };
    // The first start creates the first admin key; the others find it there.
    let (first, admin) = start(dir.path());
    let admin = admin.expect("the first start prints the first admin key");
    let mut servers = vec![first];
    for _ in 0..2 {
        let (server, again) = start(dir.path());
        assert!(again.is_none(), "one first admin key for the store");
        servers.push(server);
    }
    let http = servers.iter().map(LiveServer::client).collect();
    Cluster { servers, http, admin, database_url, _dir: dir }
}

impl Cluster {
    /// The server the `n`th request goes to (round robin, as a load balancer).
    fn at(&self, n: usize) -> &Http {
        &self.http[n % self.http.len()]
    }

    async fn pet_with_stock(&self, name: &str, stock: i64) -> i64 {
        pet_with_stock(&self.http, &self.admin, name, stock).await
    }

    /// A customer key of `plan` (Enterprise with room for any test).
    async fn key(&self, plan: &str) -> (i64, String) {
        let mut body = json!({"name": format!("{plan} key"), "role": "customer", "plan": plan});
        if plan == "enterprise" {
            body["limits"] = json!({"perMinute": 100_000, "perDay": 1_000_000});
        }
        let created = self.at(0).expect(201, "POST", "/api/v1/keys", &self.admin, Some(&body)).await;
        (created["id"].as_i64().unwrap(), created["key"].as_str().unwrap().to_owned())
    }

    /// One number from the database itself.
    async fn scalar(&self, sql: &str) -> i64 {
        let pool = sqlx::PgPool::connect(&self.database_url).await.unwrap();
        let n = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned())).fetch_one(&pool).await.unwrap();
        pool.close().await;
        n
    }
}

/// A pet of a category of its own with `stock` units, made by `admin` through each
/// server in turn.
async fn pet_with_stock(http: &[Http], admin: &str, name: &str, stock: i64) -> i64 {
    let at = |n: usize| &http[n % http.len()];
    let body = json!({"name": name});
    let category = at(0).expect(201, "POST", "/api/v1/categories", admin, Some(&body)).await;
    let body = json!({"name": name, "categoryId": category["id"]});
    let pet = at(1).expect(201, "POST", "/api/v1/pets", admin, Some(&body)).await;
    let id = pet["id"].as_i64().unwrap();
    let path = format!("/api/v1/store/inventory/{id}");
    at(2).expect(200, "PUT", &path, admin, Some(&json!({"quantity": stock}))).await;
    id
}

/// Polls `check` until it holds; fails after [`DEADLINE`].
async fn within<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while !check().await {
        assert!(started.elapsed() < DEADLINE, "{what}: not within {DEADLINE:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits, if needed, until the UTC minute has 40 s left: a burst that must meet one
/// minute's limit must not straddle two minutes.
async fn early_in_a_minute() {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let into = now.as_secs() % 60;
    if into > 20 {
        tokio::time::sleep(Duration::from_secs(60 - into) + Duration::from_millis(200)).await;
    }
}

async fn no_order_oversells(cluster: &Cluster) {
    let pet = cluster.pet_with_stock("Rex", 10).await;
    let (_, buyer) = cluster.key("enterprise").await;
    let orders = (0..100).map(|n| {
        let (http, buyer) = (cluster.at(n).clone(), buyer.clone());
        async move {
            let body = json!({"petId": pet, "quantity": 1});
            http.send("POST", "/api/v1/store/orders", Some(&buyer), Some(&body), &[]).await.expect("an answer").0
        }
    });
    let statuses = futures::future::join_all(orders).await;
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 10, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 409).count(), 90, "{statuses:?}");
    for http in &cluster.http {
        let stock = http.expect(200, "GET", &format!("/api/v1/store/inventory/{pet}"), &cluster.admin, None).await;
        assert_eq!(stock["quantity"], 0);
    }
    assert_eq!(cluster.scalar(&format!("SELECT COUNT(*) FROM orders WHERE pet_id = {pet}")).await, 10);
}

async fn a_free_key_gets_exactly_its_limit_then_a_ban_everywhere(cluster: &Cluster) {
    let (_, free) = cluster.key("free").await;
    early_in_a_minute().await;
    let requests = (0..200).map(|n| {
        let (http, free) = (cluster.at(n).clone(), free.clone());
        async move { http.send("GET", "/api/v1/pets?limit=1", Some(&free), None, &[]).await.expect("an answer") }
    });
    let answers = futures::future::join_all(requests).await;
    let ok = answers.iter().filter(|(status, _)| *status == 200).count();
    assert_eq!(ok, 60, "a Free key's minute, across the three servers");
    assert!(answers.iter().all(|(status, _)| *status == 200 || *status == 429));
    assert!(answers.iter().any(|(_, body)| body["code"] == "temporarily_banned"), "limited ten times, then banned");
    for http in &cluster.http {
        let (status, body) = http.get("/api/v1/pets?limit=1", &free).await.unwrap();
        assert_eq!((status, body["code"].as_str()), (429, Some("temporarily_banned")), "the ban holds on every server");
    }
}

async fn a_revoked_key_is_refused_everywhere(cluster: &Cluster) {
    let (id, key) = cluster.key("enterprise").await;
    // Each server has it cached as working.
    for http in &cluster.http {
        assert_eq!(http.get("/api/v1/pets?limit=1", &key).await.unwrap().0, 200);
    }
    cluster.at(0).expect(200, "DELETE", &format!("/api/v1/keys/{id}"), &cluster.admin, None).await;
    for http in &cluster.http {
        within("a revoked key refused", || async { http.get("/api/v1/pets?limit=1", &key).await.unwrap().0 == 401 })
            .await;
    }
}

async fn a_catalog_change_is_seen_everywhere(cluster: &Cluster) {
    let pet = cluster.pet_with_stock("Fido", 1).await;
    let path = format!("/api/v1/pets/{pet}");
    // Cached on every server (the pet read and the catalog page).
    for http in &cluster.http {
        http.expect(200, "GET", &path, &cluster.admin, None).await;
        http.send("GET", "/", None, None, &[]).await.unwrap();
    }
    let category = cluster.at(0).expect(200, "GET", &path, &cluster.admin, None).await["categoryId"].clone();
    let renamed = json!({"name": "Odif", "categoryId": category});
    cluster.at(0).expect(200, "PUT", &path, &cluster.admin, Some(&renamed)).await;
    for http in &cluster.http {
        within("a rename seen", || async {
            let (status, pet) = http.get(&path, &cluster.admin).await.unwrap();
            status == 200 && pet["name"] == "Odif"
        })
        .await;
    }
}

async fn an_idempotent_retry_on_another_server_gets_the_first_answer(cluster: &Cluster) {
    let pet = cluster.pet_with_stock("Tom", 5).await;
    let (_, buyer) = cluster.key("enterprise").await;
    let body = json!({"petId": pet, "quantity": 2});
    let headers = [("idempotency-key", "retry-7")];
    // The same request to the three at once (a client retrying on a timeout), then
    // once more afterwards: one order, and every answer the same.
    let at_once = cluster.http.iter().map(|http| {
        let (http, buyer, body) = (http.clone(), buyer.clone(), body.clone());
        async move { http.send("POST", "/api/v1/store/orders", Some(&buyer), Some(&body), &headers).await.unwrap() }
    });
    let answers = futures::future::join_all(at_once).await;
    assert_eq!(answers[0].0, 201, "{}", answers[0].1);
    assert!(answers.iter().all(|answer| *answer == answers[0]), "{answers:?}");
    let later = cluster.at(1).send("POST", "/api/v1/store/orders", Some(&buyer), Some(&body), &headers).await.unwrap();
    assert_eq!(later, answers[0], "the first answer, replayed");
    assert_eq!(cluster.scalar(&format!("SELECT COUNT(*) FROM orders WHERE pet_id = {pet}")).await, 1);
}

async fn a_browser_session_works_on_every_server(cluster: &Cluster) {
    let (_, key) = cluster.key("enterprise").await;
    let form = format!("key={key}");
    let headers = [("content-type", "application/x-www-form-urlencoded"), ("accept", "application/json")];
    let (status, set_cookie, _) =
        cluster.at(0).send_raw("POST", "/_app/sign_in", form.into_bytes(), &headers).await.unwrap();
    assert_eq!(status, 200);
    let cookie = session_cookie(&set_cookie);
    for http in &cluster.http {
        let (status, _, page) = http.send_raw("GET", "/", Vec::new(), &[("cookie", &cookie)]).await.unwrap();
        assert_eq!(status, 200);
        assert!(String::from_utf8_lossy(&page).contains("Signed in"), "signed in on every server");
    }
}

/// Orders placed on all three servers: the receiver gets each one's `order.created`
/// exactly once (one server delivers it, never all), and a stream open on one server
/// sees an order placed on another within the promised second.
async fn each_event_is_delivered_once_and_streamed_everywhere(cluster: &Cluster) {
    let receiver = Receiver::start(Vec::new()).await;
    let hook = json!({"url": receiver.url, "events": ["order.created"]});
    cluster.at(0).expect(201, "POST", "/api/v1/webhooks", &cluster.admin, Some(&hook)).await;
    let pet = cluster.pet_with_stock("Echo", 100).await;
    let (_, buyer) = cluster.key("enterprise").await;
    let (status, mut stream) = cluster.at(2).open("/api/v1/events", &buyer).await.unwrap();
    assert_eq!(status, 200);

    let orders = (0..30).map(|n| {
        let (http, buyer) = (cluster.at(n).clone(), buyer.clone());
        async move {
            let body = json!({"petId": pet, "quantity": 1});
            http.expect(201, "POST", "/api/v1/store/orders", &buyer, Some(&body)).await["id"].as_i64().unwrap()
        }
    });
    let placed = futures::future::join_all(orders).await;
    let one = format!("\"id\":{}", placed[0]);
    let seen_by_stream = tokio::time::timeout(DEADLINE, async {
        let mut text = String::new();
        while !text.contains(&one) {
            let frame = stream.frame().await.expect("the stream stays open").unwrap();
            if let Ok(data) = frame.into_data() {
                text.push_str(&String::from_utf8_lossy(&data));
            }
        }
    })
    .await;
    assert!(seen_by_stream.is_ok(), "an order placed on server 0 streamed by server 2");

    let got = receiver
        .wait_for(Duration::from_secs(10), |got| {
            let distinct: std::collections::HashSet<String> = ids(got).into_iter().collect();
            distinct.len() >= placed.len()
        })
        .await;
    // Room for a second server to (wrongly) send the same events again.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let all = ids(&receiver.received());
    assert_eq!(all.len(), placed.len(), "each event delivered once, by one server ({} at first)", got.len());
}

/// `kill -9` of one server while orders pour in: every order acknowledged is stored,
/// the other two keep answering, and no stock is oversold.
async fn a_server_killed_under_load_loses_nothing(mut cluster: Cluster) {
    let mut pets = Vec::new();
    for n in 0..5 {
        pets.push(cluster.pet_with_stock(&format!("Load {n}"), 40).await);
    }
    let (_, buyer) = cluster.key("enterprise").await;
    let (clients, loaded_pets) = (cluster.http.clone(), pets.clone());
    let load = tokio::spawn(async move {
        let pets = loaded_pets;
        let orders = (0..300).map(|n| {
            let (http, buyer, pet) = (clients[n % 3].clone(), buyer.clone(), pets[n % 5]);
            async move {
                tokio::time::sleep(Duration::from_millis(n as u64 * 2)).await;
                let body = json!({"petId": pet, "quantity": 1});
                (n % 3, http.send("POST", "/api/v1/store/orders", Some(&buyer), Some(&body), &[]).await)
            }
        });
        futures::future::join_all(orders).await
    });
    tokio::time::sleep(Duration::from_millis(250)).await;
    cluster.servers[2].kill_9();
    let answers = load.await.unwrap();
    let acknowledged: Vec<i64> = answers
        .iter()
        .filter_map(|(_, answer)| match answer {
            Ok((201, order)) => order["id"].as_i64(),
            _ => None,
        })
        .collect();
    for (server, answer) in &answers {
        if *server != 2 {
            let status = answer.as_ref().expect("the two others keep answering").0;
            assert!(status == 201 || status == 409, "{status}");
        }
    }
    let ids = acknowledged.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let stored = cluster.scalar(&format!("SELECT COUNT(*) FROM orders WHERE id IN ({ids})")).await;
    assert_eq!(stored, acknowledged.len() as i64, "every acknowledged order is stored");
    let loaded = pets.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let oversold = cluster
        .scalar(&format!(
            "SELECT COUNT(*) FROM inventory i WHERE i.pet_id IN ({loaded}) AND (i.quantity < 0 OR i.quantity + (
               SELECT COALESCE(SUM(o.quantity), 0) FROM orders o WHERE o.pet_id = i.pet_id) <> 40)"
        ))
        .await;
    assert_eq!(oversold, 0, "stock plus orders is what each pet had");
    assert_eq!(cluster.at(0).get("/api/v1/pets?limit=1", &cluster.admin).await.unwrap().0, 200);
}

async fn promises_hold(redis: Option<&str>) {
    let cluster = cluster(redis).await;
    no_order_oversells(&cluster).await;
    a_free_key_gets_exactly_its_limit_then_a_ban_everywhere(&cluster).await;
    a_revoked_key_is_refused_everywhere(&cluster).await;
    a_catalog_change_is_seen_everywhere(&cluster).await;
    an_idempotent_retry_on_another_server_gets_the_first_answer(&cluster).await;
    a_browser_session_works_on_every_server(&cluster).await;
    each_event_is_delivered_once_and_streamed_everywhere(&cluster).await;
    a_server_killed_under_load_loses_nothing(cluster).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_promise_holds_with_counters_in_redis() {
    let redis =
        std::env::var(REDIS).unwrap_or_else(|_| panic!("{REDIS} is not set: run through scripts/with-databases.sh"));
    promises_hold(Some(&redis)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_promise_holds_with_counters_in_postgres() {
    promises_hold(None).await;
}

const REDIS: &str = "PETSTORE_TEST_REDIS";

/// Two stores (two PostgreSQL databases) whose servers share one Redis: a key's id, or
/// a client's address, means another caller in each, and they count apart.
#[tokio::test]
async fn two_stores_sharing_one_redis_count_apart() {
    use app::model::Limits;
    use app::services::limits::{BanPolicy, RateLimiter, Verdict};
    let redis =
        std::env::var(REDIS).unwrap_or_else(|_| panic!("{REDIS} is not set: run through scripts/with-databases.sh"));
    let bans = BanPolicy { after_refusals: 10, seconds: 900 };
    let limits = Limits { per_minute: 3, per_day: 100 };
    let mut limiters = Vec::new();
    for _ in 0..2 {
        let db = app::db::Db::connect(&app::db::testing::new_postgres_database().await).await.unwrap();
        let clock = app::services::clock::Clock::system();
        limiters.push(RateLimiter::open(clock, bans, &db, Some(&redis)).await.unwrap());
    }
    let allowed = |verdict: &Verdict| matches!(verdict, Verdict::Allowed(_));
    for _ in 0..3 {
        assert!(allowed(&limiters[0].check("key:1", limits).await.unwrap()));
    }
    assert!(!allowed(&limiters[0].check("key:1", limits).await.unwrap()), "the first store's key 1 is done");
    assert!(limiters[1].redis_up().unwrap_or(false), "the second store counts in Redis");
    assert!(allowed(&limiters[1].check("key:1", limits).await.unwrap()), "the second store's key 1 is another");
}

/// A Redis of this test's own, which it stops and starts again.
struct OwnRedis {
    port: u16,
    child: Option<Child>,
}

impl OwnRedis {
    fn start(port: u16) -> OwnRedis {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server runs (make db-tools)");
        OwnRedis { port, child: Some(child) }
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        self.stop();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_redis_is_away_the_servers_count_in_postgres_and_come_back_by_themselves() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut redis = OwnRedis::start(port);
    let url = format!("redis://127.0.0.1:{}/", redis.port);
    let ready = |http: Http| async move { http.send("GET", "/readyz", None, None, &[]).await.unwrap() };
    let cluster = cluster(Some(&url)).await;
    let (_, key) = cluster.key("pro").await;
    for http in &cluster.http {
        within("Redis answering", || async { ready(http.clone()).await == (200, json!({"status": "ready"})) }).await;
        assert_eq!(http.get("/api/v1/pets?limit=1", &key).await.unwrap().0, 200);
    }

    redis.stop();
    // Requests go on (counted in PostgreSQL), and the servers stay ready, saying so.
    for (n, http) in cluster.http.iter().enumerate() {
        let (status, _) = http.get("/api/v1/pets?limit=1", &key).await.unwrap();
        assert_eq!(status, 200, "server {n} answers without Redis");
        let degraded = json!({"status": "ready", "degraded": ["redis"]});
        within("Redis named degraded", || async { ready(http.clone()).await == (200, degraded.clone()) }).await;
    }
    let counted = cluster
        .scalar("SELECT CAST(COALESCE(SUM(day_count), 0) AS BIGINT) FROM rate_limit_usage WHERE subject LIKE 'key:%'")
        .await;
    assert!(counted >= 3, "counted in PostgreSQL meanwhile: {counted}");

    let _back = OwnRedis::start(port);
    for http in &cluster.http {
        within("back to Redis", || async { ready(http.clone()).await == (200, json!({"status": "ready"})) }).await;
        assert_eq!(http.get("/api/v1/pets?limit=1", &key).await.unwrap().0, 200);
    }
}

/// The session cookie an answer sets, as a browser would send it back.
fn session_cookie(headers: &hyper::HeaderMap) -> String {
    headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find(|value| value.contains("petstore_session="))
        .and_then(|value| value.split(';').next())
        .expect("a session cookie")
        .to_owned()
}

/// A passkey account made through one server and signed in through another, each
/// ceremony begun on one and finished on the other, then an order placed through a
/// third with the session: a ceremony's state lives in the database, not in a server's
/// memory. The servers share one `--public-url`, as behind a load balancer (the
/// relying party is its host).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passkey_signs_up_on_one_server_signs_in_on_another_and_orders_on_a_third() {
    use soft_passkey::{Answer, SoftPasskey};
    const PUBLIC_URL: &str = "http://localhost:8443";
    let database_url = app::db::testing::new_postgres_database().await;
    let dir = tempfile::tempdir().unwrap();
    let start = || {
        LiveServer::start_with(dir.path(), |command| {
            command.env("DATABASE_URL", &database_url).env("PETSTORE_PUBLIC_URL", PUBLIC_URL);
        })
    };
    let (first, admin) = start();
    let admin = admin.expect("the first start prints the first admin key");
    let servers = [first, start().0, start().0];
    let http: Vec<Http> = servers.iter().map(LiveServer::client).collect();
    let call = |n: usize, path: &'static str, fields: Vec<(&'static str, String)>, cookie: Option<String>| {
        let http = &http[n];
        async move {
            let body = serde_urlencoded::to_string(&fields).unwrap().into_bytes();
            let mut headers =
                vec![("content-type", "application/x-www-form-urlencoded"), ("accept", "application/json")];
            headers.extend(cookie.as_deref().map(|cookie| ("cookie", cookie)));
            let (status, headers, body) = http.send_raw("POST", path, body, &headers).await.unwrap();
            assert_eq!(status, 200, "{path} on server {n}: {}", String::from_utf8_lossy(&body));
            (headers, serde_json::from_slice::<serde_json::Value>(&body).unwrap_or_default())
        }
    };
    let mut passkey = SoftPasskey::new();
    let (_, ceremony) = call(0, "/_app/passkey_sign_up_begin", vec![], None).await;
    let answer = passkey.create(ceremony["options"].as_str().unwrap(), &Answer::honest_at(PUBLIC_URL));
    let token = ceremony["token"].as_str().unwrap().to_owned();
    let (_, account) =
        call(1, "/_app/passkey_sign_up_finish", vec![("token", token), ("credential", answer)], None).await;
    let key_id = account["caller"]["key_id"].as_i64().expect("the new account's key");
    assert_eq!(account["recovery_codes"].as_array().map(Vec::len), Some(10));

    let (_, ceremony) = call(1, "/_app/passkey_sign_in_begin", vec![], None).await;
    let answer = passkey.get(ceremony["options"].as_str().unwrap(), &Answer::honest_at(PUBLIC_URL));
    let token = ceremony["token"].as_str().unwrap().to_owned();
    let (headers, _) =
        call(0, "/_app/passkey_sign_in_finish", vec![("token", token), ("credential", answer)], None).await;
    let cookie = session_cookie(&headers);

    let pet = pet_with_stock(&http, &admin, "Keyed", 2).await;
    let order = vec![("pet_id", pet.to_string()), ("quantity", "1".to_owned())];
    let (_, placed) = call(2, "/_app/place_order", order, Some(cookie)).await;
    assert_eq!(placed["petId"].as_i64(), Some(pet));
    let pool = sqlx::PgPool::connect(&database_url).await.unwrap();
    let owner: i64 =
        sqlx::query_scalar("SELECT key_id FROM orders WHERE pet_id = $1").bind(pet).fetch_one(&pool).await.unwrap();
    assert_eq!(owner, key_id, "the order is the account's key's");
    pool.close().await;
}

/// Servers started together over a new database load the demo catalog once and create
/// one first admin key between them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_starting_together_set_a_new_store_up_once() {
    let database_url = app::db::testing::new_postgres_database().await;
    let dir = tempfile::tempdir().unwrap();
    let starts: Vec<_> = (0..3)
        .map(|_| {
            let (url, path) = (database_url.clone(), dir.path().to_owned());
            std::thread::spawn(move || {
                LiveServer::start_with(&path, |command| {
                    command.env("DATABASE_URL", &url).env("PETSTORE_DEMO_DATA", "true");
                })
            })
        })
        .collect();
    let started: Vec<(LiveServer, Option<String>)> = starts.into_iter().map(|start| start.join().unwrap()).collect();
    let admins: Vec<&String> = started.iter().filter_map(|(_, admin)| admin.as_ref()).collect();
    assert_eq!(admins.len(), 1, "one first admin key");
    let pool = sqlx::PgPool::connect(&database_url).await.unwrap();
    let counts: (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM categories), (SELECT COUNT(*) FROM pets), (SELECT COUNT(*) FROM api_keys)",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(counts, (5, 13, 1), "the demo catalog and the first key, once");
    for (server, _) in &started {
        server.client().expect(200, "GET", "/api/v1/categories", admins[0], None).await;
    }
}
