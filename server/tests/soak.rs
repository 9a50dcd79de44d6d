//! A soak: a minute (PETSTORE_SOAK_SECONDS) of mixed traffic from many clients against
//! the real binary: browsing the API and the pages, ordering, cancelling, restocking,
//! completing and signing up. Nothing may answer but 2xx, the expected 409s (stock ran
//! out, a pet is not for sale) and 429s (sign-ups are limited per IP), and resident
//! memory must level off.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::live::{Answer, Http, LiveServer};
use serde_json::json;

const PETS: i64 = 40;
const SHOPPERS: usize = 12;

/// Counts answers by operation and status; keeps the first unexpected ones.
#[derive(Default)]
struct Tally {
    counts: BTreeMap<(&'static str, u16), u64>,
    unexpected: Vec<String>,
}

impl Tally {
    fn see(&mut self, op: &'static str, answer: &Result<Answer, String>) {
        match answer {
            Ok((status, body)) => {
                *self.counts.entry((op, *status)).or_default() += 1;
                if !matches!(status, 200..=299 | 409 | 429) && self.unexpected.len() < 20 {
                    self.unexpected.push(format!("{op}: {status} {body}"));
                }
            }
            Err(err) if self.unexpected.len() < 20 => self.unexpected.push(format!("{op}: no answer: {err}")),
            Err(_) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_minute_of_mixed_traffic_answers_only_as_expected_and_memory_levels_off() {
    let seconds: u64 = std::env::var("PETSTORE_SOAK_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let dir = tempfile::tempdir().unwrap();
    let (mut server, admin) = LiveServer::start(dir.path());
    let admin = admin.unwrap();
    let http = server.client();

    let mut pets = Vec::new();
    for c in 0..4 {
        let category =
            http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": format!("Soak {c}")}))).await;
        for p in 0..PETS / 4 {
            let pet = json!({ "name": format!("Soaker {c}-{p}"), "categoryId": category["id"] });
            let id = http.expect(201, "POST", "/api/v1/pets", &admin, Some(&pet)).await["id"].as_i64().unwrap();
            http.expect(200, "PUT", &format!("/api/v1/store/inventory/{id}"), &admin, Some(&json!({"quantity": 50})))
                .await;
            pets.push(id);
        }
    }
    let mut shoppers = Vec::new();
    for n in 0..SHOPPERS {
        let key = json!({ "name": format!("shopper {n}"), "role": "customer", "plan": "enterprise",
                          "limits": { "perMinute": 100_000, "perDay": 10_000_000 } });
        shoppers.push(
            http.expect(201, "POST", "/api/v1/keys", &admin, Some(&key)).await["key"].as_str().unwrap().to_owned(),
        );
    }

    let tally = Arc::new(Mutex::new(Tally::default()));
    let running = Arc::new(AtomicBool::new(true));
    let mut tasks = Vec::new();
    for (n, key) in shoppers.into_iter().enumerate() {
        let (http, tally, running, pets) = (http.clone(), tally.clone(), running.clone(), pets.clone());
        tasks.push(tokio::spawn(async move { shop(n, &http, &key, &pets, &tally, &running).await }));
    }
    {
        let (http, admin, tally, running, pets) =
            (http.clone(), admin.clone(), tally.clone(), running.clone(), pets.clone());
        tasks.push(tokio::spawn(async move { run_the_store(&http, &admin, &pets, &tally, &running).await }));
    }
    {
        let (http, tally, running) = (http.clone(), tally.clone(), running.clone());
        tasks.push(tokio::spawn(async move {
            while running.load(Ordering::Relaxed) {
                let answer = http.send("POST", "/api/v1/keys", None, Some(&json!({"name": "soak sign-up"})), &[]).await;
                tally.lock().unwrap().see("sign up", &answer);
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }));
    }

    // Resident memory every 5 s.
    let started = Instant::now();
    let mut samples = Vec::new();
    while started.elapsed() < Duration::from_secs(seconds) {
        tokio::time::sleep(Duration::from_secs(5).min(Duration::from_secs(seconds))).await;
        samples.push((started.elapsed().as_secs(), server.rss_kib()));
    }
    running.store(false, Ordering::Relaxed);
    for task in tasks {
        task.await.unwrap();
    }
    assert!(server.terminate(), "SIGTERM ends the server cleanly");

    let tally = tally.lock().unwrap();
    let total: u64 = tally.counts.values().sum();
    println!("{total} requests in {seconds} s ({:.0}/s):", total as f64 / seconds as f64);
    for ((op, status), count) in &tally.counts {
        println!("  {op:<16} {status}  {count}");
    }
    println!("resident memory (s, MiB): {:?}", samples.iter().map(|(s, kib)| (s, kib / 1024)).collect::<Vec<_>>());
    assert!(tally.unexpected.is_empty(), "unexpected answers: {:#?}", tally.unexpected);
    for op in ["browse", "pet page", "order", "cancel", "restock", "complete", "sign up"] {
        let ok: u64 =
            tally.counts.iter().filter(|((o, s), _)| *o == op && (200..300).contains(s)).map(|(_, c)| c).sum();
        assert!(ok > 0, "{op} succeeded at least once");
    }
    // Memory levels off: the second half of the run grows by less than a quarter.
    let half = samples[samples.len() / 2].1;
    let last = samples.last().unwrap().1;
    assert!(last < half + half / 4 + 4 * 1024, "RSS grew from {half} KiB to {last} KiB");
}

/// A shopper: browses the API and the pages, orders, sometimes cancels.
async fn shop(n: usize, http: &Http, key: &str, pets: &[i64], tally: &Mutex<Tally>, running: &AtomicBool) {
    let mut i = n;
    let mut mine = Vec::new();
    while running.load(Ordering::Relaxed) {
        i = i.wrapping_mul(1_103_515_245).wrapping_add(12_345) % 1_000_003;
        let pet = pets[i % pets.len()];
        let answer = http.get("/api/v1/pets?limit=20&status=available", key).await;
        tally.lock().unwrap().see("browse", &answer);
        let page = if i.is_multiple_of(2) { "/".to_owned() } else { format!("/pets/{pet}") };
        let answer = http.send("GET", &page, None, None, &[]).await.map(|(status, _)| (status, json!(null)));
        tally.lock().unwrap().see("pet page", &answer);
        let body = json!({ "petId": pet, "quantity": 1 + i % 2 });
        let answer = http.send("POST", "/api/v1/store/orders", Some(key), Some(&body), &[]).await;
        // Shoppers cancel only orders of even-numbered pets, and staff complete only the
        // others', so no cancel races a completion (which would rightly be a 404 or 409).
        if let Ok((201, order)) = &answer
            && pets.iter().position(|p| *p == pet).is_some_and(|at| at % 2 == 0)
        {
            mine.push(order["id"].as_i64().unwrap());
        }
        tally.lock().unwrap().see("order", &answer);
        if i.is_multiple_of(3)
            && let Some(order) = mine.pop()
        {
            let answer = http.send("DELETE", &format!("/api/v1/store/orders/{order}"), Some(key), None, &[]).await;
            tally.lock().unwrap().see("cancel", &answer);
        }
    }
}

/// The staff: restock pets and complete the oldest open orders.
async fn run_the_store(http: &Http, admin: &str, pets: &[i64], tally: &Mutex<Tally>, running: &AtomicBool) {
    let mut n = 0;
    while running.load(Ordering::Relaxed) {
        let pet = pets[n % pets.len()];
        let answer = http
            .send("PUT", &format!("/api/v1/store/inventory/{pet}"), Some(admin), Some(&json!({"quantity": 50})), &[])
            .await;
        tally.lock().unwrap().see("restock", &answer);
        let odd = pets[(2 * n + 1) % pets.len()];
        if let Ok((200, orders)) =
            http.get(&format!("/api/v1/store/orders?complete=false&petId={odd}&limit=5"), admin).await
        {
            for order in orders.as_array().into_iter().flatten() {
                let path = format!("/api/v1/store/orders/{}", order["id"]);
                let answer = http.send("PATCH", &path, Some(admin), Some(&json!({"complete": true})), &[]).await;
                tally.lock().unwrap().see("complete", &answer);
            }
        }
        n += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
