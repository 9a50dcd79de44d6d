//! Crash safety: the server is killed with SIGKILL while clients place orders and set
//! stock. After it, the database is intact, every order answered 201 is there with its
//! stock taken, no order answered with an error is, and stock writes are never torn.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::live::LiveServer;
use serde_json::{Value, json};

const ORDER_PETS: usize = 12;
const STOCK_PETS: usize = 6;
const START_STOCK: i64 = 1_000;

/// What a client saw of one order request.
enum Seen {
    Created { order_id: i64 },
    Refused { status: u16 },
    NoAnswer,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_server_loses_no_acknowledged_write_and_keeps_no_refused_one() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, admin) = LiveServer::start(dir.path());
    let admin = admin.expect("the first start creates an admin key");
    let http = server.client();

    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Crash"}))).await;
    let category_id = category["id"].as_i64().unwrap();
    let mut pets = Vec::new();
    for n in 0..ORDER_PETS + STOCK_PETS {
        let pet = json!({ "name": format!("Pet {n}"), "categoryId": category_id });
        let id = http.expect(201, "POST", "/api/v1/pets", &admin, Some(&pet)).await["id"].as_i64().unwrap();
        let stock = json!({ "quantity": START_STOCK });
        http.expect(200, "PUT", &format!("/api/v1/store/inventory/{id}"), &admin, Some(&stock)).await;
        pets.push(id);
    }
    let (order_pets, stock_pets) = pets.split_at(ORDER_PETS);

    let running = Arc::new(AtomicBool::new(true));
    // Order clients: every request has its own Idempotency-Key, so that its row can be
    // found after the crash. Every 7th asks for more than any pet has left (409).
    let order_clients: Vec<_> = (0..6)
        .map(|client| {
            let (http, admin, running, order_pets) =
                (http.clone(), admin.clone(), running.clone(), order_pets.to_vec());
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut n = 0usize;
                while running.load(Ordering::Relaxed) {
                    let pet_id = order_pets[(client * 7 + n) % order_pets.len()];
                    let quantity = if n % 7 == 6 { 1_000 } else { 1 + (n % 3) as i64 };
                    let idem = format!("crash-{client}-{n}");
                    let body = json!({ "petId": pet_id, "quantity": quantity });
                    let answer = http
                        .send("POST", "/api/v1/store/orders", Some(&admin), Some(&body), &[("idempotency-key", &idem)])
                        .await;
                    let outcome = match answer {
                        Ok((201, order)) => Seen::Created { order_id: order["id"].as_i64().unwrap() },
                        Ok((status, _)) => Seen::Refused { status },
                        Err(_) => Seen::NoAnswer,
                    };
                    let stop = matches!(outcome, Seen::NoAnswer);
                    seen.push((idem, pet_id, quantity, outcome));
                    if stop {
                        break;
                    }
                    n += 1;
                }
                seen
            })
        })
        .collect();
    // Stock clients: each sets its pets to 1, 2, 3, … in turn; after the crash a pet's
    // stock is at least the last value acknowledged and at most the last one sent.
    let stock_clients: Vec<_> = stock_pets
        .chunks(3)
        .map(|mine| {
            let (http, admin, running, mine) = (http.clone(), admin.clone(), running.clone(), mine.to_vec());
            tokio::spawn(async move {
                let mut acked: HashMap<i64, i64> = HashMap::new();
                let mut sent: HashMap<i64, i64> = HashMap::new();
                let mut value = 0;
                'outer: while running.load(Ordering::Relaxed) {
                    value += 1;
                    for &pet in &mine {
                        sent.insert(pet, value);
                        let body = json!({ "quantity": value });
                        match http
                            .send("PUT", &format!("/api/v1/store/inventory/{pet}"), Some(&admin), Some(&body), &[])
                            .await
                        {
                            Ok((200, _)) => {
                                acked.insert(pet, value);
                            }
                            Ok((status, body)) => panic!("setting stock answered {status}: {body}"),
                            Err(_) => break 'outer,
                        }
                    }
                }
                (acked, sent)
            })
        })
        .collect();

    tokio::time::sleep(Duration::from_millis(1_500)).await;
    server.kill_9();
    running.store(false, Ordering::Relaxed);

    let mut requests = Vec::new();
    for client in order_clients {
        requests.extend(client.await.unwrap());
    }
    let mut stock_seen = Vec::new();
    for client in stock_clients {
        stock_seen.push(client.await.unwrap());
    }
    let created = requests.iter().filter(|r| matches!(r.3, Seen::Created { .. })).count();
    let refused = requests.iter().filter(|r| matches!(r.3, Seen::Refused { .. })).count();
    let cut = requests.len() - created - refused;
    println!("before the kill: {created} orders placed, {refused} refused, {cut} cut off");
    assert!(created > 20, "the clients placed orders before the kill ({created})");
    assert!(refused > 2, "and had some refused ({refused})");
    assert!(requests.iter().all(|r| !matches!(r.3, Seen::Refused { status } if status >= 500)), "no 5xx");

    // The database as the crash left it, before the server touches it again.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", server.db_path.display())).await.unwrap();
    let integrity: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&pool).await.unwrap();
    assert_eq!(integrity, "ok");
    let orders: Vec<(i64, i64, i64)> =
        sqlx::query_as("SELECT id, pet_id, quantity FROM orders").fetch_all(&pool).await.unwrap();
    let records: Vec<(String, i64, String)> =
        sqlx::query_as("SELECT idem_key, status, body FROM idempotency_records").fetch_all(&pool).await.unwrap();
    let stock: HashMap<i64, i64> =
        sqlx::query_as("SELECT pet_id, quantity FROM inventory").fetch_all(&pool).await.unwrap().into_iter().collect();
    pool.close().await;

    let stored: HashMap<i64, (i64, i64)> = orders.iter().map(|&(id, pet, qty)| (id, (pet, qty))).collect();
    let record_of: HashMap<&str, (i64, Value)> = records
        .iter()
        .map(|(key, status, body)| (key.as_str(), (*status, serde_json::from_str(body).unwrap())))
        .collect();
    let mut explained = HashSet::new();
    for (idem, pet_id, quantity, outcome) in &requests {
        match outcome {
            Seen::Created { order_id } => {
                assert_eq!(stored.get(order_id), Some(&(*pet_id, *quantity)), "acknowledged order {order_id} is kept");
                explained.insert(*order_id);
            }
            Seen::Refused { status } => {
                // Its record (if it was written) holds the refusal, never an order.
                if let Some((recorded, _)) = record_of.get(idem.as_str()) {
                    assert_eq!(recorded, &i64::from(*status), "{idem}");
                }
            }
            Seen::NoAnswer => {
                // Cut off by the kill: either fully there or not at all.
                if let Some((201, order)) = record_of.get(idem.as_str()) {
                    explained.insert(order["id"].as_i64().unwrap());
                }
            }
        }
    }
    for id in stored.keys() {
        assert!(explained.contains(id), "order {id} exists but no client was told it was placed or left waiting");
    }
    for pet in order_pets {
        let taken: i64 = orders.iter().filter(|o| o.1 == *pet).map(|o| o.2).sum();
        assert_eq!(stock[pet], START_STOCK - taken, "pet {pet}: stock matches the orders kept");
    }
    for (acked, sent) in &stock_seen {
        for (pet, last_sent) in sent {
            let now = stock[pet];
            match acked.get(pet) {
                Some(last_acked) => {
                    assert!(
                        (*last_acked..=*last_sent).contains(&now),
                        "pet {pet}: {now} not in {last_acked}..={last_sent}"
                    )
                }
                None => assert!(now == START_STOCK || now == *last_sent, "pet {pet}: {now}"),
            }
        }
    }

    // And the server comes back over it, serving what it acknowledged.
    let (server, _) = LiveServer::start(dir.path());
    let http = server.client();
    for (_, _, _, outcome) in requests.iter().take(50) {
        if let Seen::Created { order_id } = outcome {
            http.expect(200, "GET", &format!("/api/v1/store/orders/{order_id}"), &admin, None).await;
        }
    }
}

/// Events of acknowledged orders survive `kill -9`: the server is killed while clients
/// order and a slow receiver takes its webhooks; once it is started again, every order
/// answered 201 reaches the receiver as an `order.created` (at least once), and no
/// event is sent for an order that was refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn events_of_acknowledged_orders_are_delivered_after_a_kill_and_a_restart() {
    use common::receiver::{Receiver, envelopes};
    let receiver = Receiver::start_slow(Vec::new(), Duration::from_millis(100)).await;
    let dir = tempfile::tempdir().unwrap();
    let allow = |command: &mut std::process::Command| {
        command.env("PETSTORE_WEBHOOKS_ALLOW_PRIVATE", "true");
    };
    let (mut server, admin) = LiveServer::start_with(dir.path(), allow);
    let admin = admin.expect("the first start creates an admin key");
    let http = server.client();
    let hook = json!({ "url": receiver.url, "events": ["order.created"] });
    http.expect(201, "POST", "/api/v1/webhooks", &admin, Some(&hook)).await;
    let category = http.expect(201, "POST", "/api/v1/categories", &admin, Some(&json!({"name": "Crash"}))).await;
    let pet = json!({ "name": "Pet", "categoryId": category["id"] });
    let pet = http.expect(201, "POST", "/api/v1/pets", &admin, Some(&pet)).await["id"].as_i64().unwrap();
    http.expect(200, "PUT", &format!("/api/v1/store/inventory/{pet}"), &admin, Some(&json!({ "quantity": 100_000 })))
        .await;

    let running = Arc::new(AtomicBool::new(true));
    let clients: Vec<_> = (0..4)
        .map(|client| {
            let (http, admin, running) = (http.clone(), admin.clone(), running.clone());
            tokio::spawn(async move {
                let (mut created, mut refused) = (HashSet::new(), 0);
                let mut n = 0;
                while running.load(Ordering::Relaxed) {
                    // Every 5th asks for more than there is: refused, no event.
                    let quantity = if (client + n) % 5 == 4 { 1_000_000 } else { 1 };
                    let body = json!({ "petId": pet, "quantity": quantity });
                    match http.send("POST", "/api/v1/store/orders", Some(&admin), Some(&body), &[]).await {
                        Ok((201, order)) => {
                            created.insert(order["id"].as_i64().unwrap());
                        }
                        Ok(_) => refused += 1,
                        Err(_) => break,
                    }
                    n += 1;
                }
                (created, refused)
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(800)).await;
    server.kill_9();
    running.store(false, Ordering::Relaxed);
    let mut acknowledged = HashSet::new();
    let mut refused = 0;
    for client in clients {
        let (created, refused_here) = client.await.unwrap();
        acknowledged.extend(created);
        refused += refused_here;
    }
    assert!(acknowledged.len() > 10 && refused > 0, "{} acknowledged, {refused} refused", acknowledged.len());
    let before_restart = receiver.received().len();

    let (server, again) = LiveServer::start_with(dir.path(), allow);
    assert!(again.is_none());
    // What the killed server had claimed is taken over once its claim runs out (20 s).
    let got = receiver
        .wait_for(Duration::from_secs(45), |got| {
            let sent: HashSet<i64> = envelopes(got).iter().map(|event| event["data"]["id"].as_i64().unwrap()).collect();
            acknowledged.is_subset(&sent)
        })
        .await;
    assert!(got.len() > before_restart, "some were delivered by the restarted server");
    let sent: HashSet<i64> = envelopes(&got).iter().map(|event| event["data"]["id"].as_i64().unwrap()).collect();
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", server.db_path.display())).await.unwrap();
    let stored: HashSet<i64> =
        sqlx::query_scalar("SELECT id FROM orders").fetch_all(&pool).await.unwrap().into_iter().collect();
    pool.close().await;
    assert!(sent.is_subset(&stored), "no event for an order that is not stored");
}
