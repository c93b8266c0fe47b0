//! `kill -9` under paid load, then a restart on the same data dir: nothing answered is lost,
//! nothing is served twice, and payments cut off by the crash become usable again.
//!
//! The real `toolhost` binary serves on loopback (port 0; the test reads the bound address from
//! its "listening" line) with a temp data dir. Sixteen tasks send concurrent x402 v2 calls to
//! the seeded paid echo, each with a fresh authorization whose nonce the test chose, and two
//! more call a paid JS endpoint that takes 1.2 s (so some call is surely inside its handler,
//! holding its claim, at the kill); once at least 40 are answered (or 5 s passed) the process
//! gets SIGKILL with calls still in flight.
//! Before the restart the test opens the store itself and notes what each unanswered payment's
//! nonce holds: a claim record (the call died mid-way), a receipt id (committed, the answer
//! lost), or nothing. Then, on the restarted server:
//! - every receipt answered 200 is served by `GET /ai/receipts/{id}` (and its nonce was already
//!   spent on disk): an answered call whose writes were not yet durable would fail here;
//! - every answered payment, replayed, is refused with `invalid_exact_evm_nonce_already_used`;
//! - every unanswered payment, sent twice, is served at most once: refused both times if it had
//!   committed (and its receipt is served), otherwise served once and refused the second time.
//!   Those that died holding a claim prove start-up recovery released it (the embedded store is
//!   exclusive, so every claim found at start-up is an orphan).
//!
//! The same for atomic kv: a handler's committed `ctx.kv.atomic()` is on disk before its call
//! is answered, and a commit cut off by the kill is either all there or not there at all.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use alloy_primitives::B256;
use alloy_signer_local::PrivateKeySigner;
use serde_json::{json, Value};
use toolhost::payments::nonces::{self, Stored};
use toolhost::store::{NonceClaims, SledStore, Store};

use crate::payments::{made_out_for, pay};
use crate::util::node::Node;
use crate::util::{assert_payment_required, read, ADMIN_TOKEN};

const PAID: &str = "/tools/receipt-echo-paid";
const SLOW: &str = "/tools/slow-paid";
const TASKS: usize = 16;
const SLOW_TASKS: usize = 2;
const ANSWERS_BEFORE_KILL: usize = 40;

/// One authorization, its nonce, and what became of it.
#[derive(Clone)]
struct Payment {
    header: (&'static str, String),
    nonce: B256,
    /// The endpoint it is made out for (a v2 payment names its resource).
    path: &'static str,
}

async fn post(client: &reqwest::Client, url: &str, payment: &Payment) -> Option<(u16, Value)> {
    let response = client
        .post(url)
        .header(payment.header.0, &payment.header.1)
        .json(&json!({"crash": "test"}))
        .send()
        .await
        .ok()?;
    let status = response.status().as_u16();
    let body = response.bytes().await.ok()?;
    Some((status, serde_json::from_slice(&body).unwrap_or(Value::Null)))
}

/// A paid JS endpoint (same price as the echo) whose handler runs for 1.2 s.
async fn create_slow_endpoint(client: &reqwest::Client, node: &Node) {
    let (status, body) = read(
        client
            .post(node.url("/ai/admin/builders"))
            .header("x-admin-token", ADMIN_TOKEN)
            .json(&json!({"name": "slow"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let key = body["builderKey"].as_str().unwrap().to_string();
    let (status, body) = read(
        client
            .post(node.url("/ai/endpoints/create"))
            .header("x-builder-key", key)
            .json(&json!({
                "slug": "slow-paid",
                "title": "Slow echo",
                "description": "Answers after a while.",
                "priceUsd": 0.001,
                "pricingMode": "fixed_price_success_receipt",
                "handlerType": "js_request_response",
                "source": "export default async function (req) { const until = Date.now() + 1200; while (Date.now() < until) {} return { ok: true }; }",
                "inputSchema": {"type": "object"},
                "safetyAttestation": {"accepted": true},
            }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_under_paid_load_loses_no_receipt_and_serves_each_payment_at_most_once() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let node = Node::start_in(&data, &[]);
    let client = reqwest::Client::new();
    let required = crate::util::payment_required(&client, &node.url(PAID), &json!({})).await;
    let asset = required["accepts"][0]["asset"]
        .as_str()
        .unwrap()
        .to_string();
    create_slow_endpoint(&client, &node).await;
    let signer = Arc::new(PrivateKeySigner::random());
    let new_payment = {
        let (signer, required, base) = (signer.clone(), required.clone(), node.url(""));
        move |path: &'static str| {
            let nonce = B256::from(rand::random::<[u8; 32]>());
            let header = pay(&signer, &required, 2, |a| a.nonce = nonce.to_string());
            let header = made_out_for(&header, &format!("{base}{path}"));
            Payment {
                header,
                nonce,
                path,
            }
        }
    };

    // Load: each task sends one payment at a time until told to stop.
    let stop = Arc::new(AtomicBool::new(false));
    let answered_count = Arc::new(AtomicUsize::new(0));
    // Each answered payment, its receipt's id and its proof in the receipt log (if any).
    let answered: Arc<Mutex<Vec<(Payment, String, Value)>>> = Arc::default();
    let in_flight: Arc<Mutex<HashMap<B256, (Payment, &'static str)>>> = Arc::default();
    let tasks: Vec<_> = (0..TASKS + SLOW_TASKS)
        .map(|i| {
            let path = if i < TASKS { PAID } else { SLOW };
            let url = node.url(path);
            let (stop, answered_count, answered, in_flight) = (
                stop.clone(),
                answered_count.clone(),
                answered.clone(),
                in_flight.clone(),
            );
            let (client, new_payment) = (client.clone(), new_payment.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let payment = new_payment(path);
                    in_flight
                        .lock()
                        .unwrap()
                        .insert(payment.nonce, (payment.clone(), path));
                    let Some((status, body)) = post(&client, &url, &payment).await else {
                        // No answer: the server died with this call in flight.
                        return;
                    };
                    assert_eq!(status, 200, "a paid call under load: {body}");
                    let receipt_id = body["receipt"]["receiptId"].as_str().unwrap().to_string();
                    in_flight.lock().unwrap().remove(&payment.nonce);
                    let proof = body["receiptLog"].clone();
                    answered.lock().unwrap().push((payment, receipt_id, proof));
                    answered_count.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let load_deadline = Instant::now() + Duration::from_secs(5);
    while answered_count.load(Ordering::SeqCst) < ANSWERS_BEFORE_KILL
        && Instant::now() < load_deadline
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop.store(true, Ordering::SeqCst);
    node.kill();
    let killed_at = answered_count.load(Ordering::SeqCst);
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("load task ends once the server is gone")
            .expect("load task");
    }
    let answered = std::mem::take(&mut *answered.lock().unwrap());
    let in_flight: Vec<(Payment, &str)> = in_flight.lock().unwrap().values().cloned().collect();
    assert!(
        killed_at >= ANSWERS_BEFORE_KILL,
        "only {killed_at} answers in 5 s"
    );
    assert!(!in_flight.is_empty(), "calls were in flight at the kill");

    // What the disk holds for each payment, read with the store the server uses.
    let key = |p: &Payment| nonces::key(84532, &asset, signer.address(), p.nonce);
    let (answered_spent, in_flight_stored) = {
        let store = SledStore::open(&data.join("store")).expect("store opens after the kill");
        let mut answered_spent = 0;
        for (payment, receipt_id, _) in &answered {
            let stored = store.nonce(&key(payment)).await.unwrap();
            if stored.as_deref() == Some(receipt_id.as_bytes()) {
                answered_spent += 1;
            }
        }
        let mut in_flight_stored = Vec::new();
        for (payment, _) in &in_flight {
            let stored = store.nonce(&key(payment)).await.unwrap();
            in_flight_stored.push(stored.map(|b| Stored::parse(&b).unwrap()));
        }
        store.close().await.unwrap();
        (answered_spent, in_flight_stored)
    };
    assert_eq!(
        answered_spent,
        answered.len(),
        "every answered payment's nonce is spent by its receipt on disk"
    );
    let orphaned = in_flight_stored
        .iter()
        .filter(|s| matches!(s, Some(Stored::Claim(_))))
        .count();
    let committed = in_flight_stored
        .iter()
        .filter(|s| matches!(s, Some(Stored::Spent(_))))
        .count();
    eprintln!(
        "killed after {killed_at} answers; {} unanswered: {orphaned} holding a claim, {committed} committed, {} never claimed",
        in_flight.len(),
        in_flight.len() - orphaned - committed
    );
    assert!(
        orphaned > 0,
        "some call died holding its nonce claim (16 concurrent calls, each claim durable)"
    );

    // Restart on the same data dir: start-up recovery runs before the first request is served.
    let node = Node::start_in(&data, &[]);
    // An answered payment is spent: its receipt is kept (checked with the log below).
    for (payment, _, _) in &answered {
        let (status, body) = post(&client, &node.url(payment.path), payment)
            .await
            .unwrap();
        assert_payment_required(
            status.try_into().unwrap(),
            &body,
            "invalid_exact_evm_nonce_already_used",
        );
    }
    for ((payment, path), stored) in in_flight.iter().zip(&in_flight_stored) {
        let first = post(&client, &node.url(path), payment).await.unwrap();
        let second = post(&client, &node.url(path), payment).await.unwrap();
        assert_payment_required(
            second.0.try_into().unwrap(),
            &second.1,
            "invalid_exact_evm_nonce_already_used",
        );
        match stored {
            Some(Stored::Spent(receipt_id)) => {
                assert_payment_required(
                    first.0.try_into().unwrap(),
                    &first.1,
                    "invalid_exact_evm_nonce_already_used",
                );
                let response = client
                    .get(node.url(&format!("/ai/receipts/{receipt_id}")))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(response.status(), 200, "committed receipt {receipt_id}");
            }
            // A claim released by recovery, or never made: usable again, exactly once.
            _ => assert_eq!(first.0, 200, "{stored:?}: {}", first.1),
        }
    }
    // Every answered receipt is in the log at the leaf its answer named, and the log's head
    // extends every head the answers handed out before the kill.
    let proofs: Vec<(String, Value)> = (answered.iter())
        .map(|(_, receipt_id, proof)| (receipt_id.clone(), proof.clone()))
        .collect();
    crate::receipt_log::answered_receipts_hold(&node, &proofs).await;
    node.kill();
    eprintln!("kill -9 test took {:?}", started.elapsed());
    assert!(started.elapsed() < Duration::from_secs(60));
}

/// Each call commits `check(call:ID, null) + set(call:ID) + sum(total, 1)` at once; `read`
/// answers one key's entry.
const KV_COMMITS: &str = r#"
export default async function (req, ctx) {
  const { op, id } = req.input;
  if (op === "read") return await ctx.kv.getEntry(id);
  return await ctx.kv.atomic()
    .check(`call:${id}`, null)
    .set(`call:${id}`, id)
    .sum("total", 1)
    .commit();
}
"#;

/// `kill -9` while 12 tasks commit atomics through a free JS endpoint; after the restart every
/// answered commit is there, and the total counts exactly the calls whose key is there (no
/// commit half-applied, none applied twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_under_kv_commits_loses_no_answered_commit_and_applies_none_in_part() {
    const KV_TASKS: u64 = 12;
    const COMMITS_BEFORE_KILL: usize = 60;
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let node = Node::start_in(&data, &[]);
    let (status, body) = node
        .admin(
            "POST",
            "/ai/endpoints/create",
            Some(&json!({
                "slug": "commits", "title": "Commits", "description": "Atomic kv commits.",
                "priceUsd": 0, "handlerType": "js_request_response", "source": KV_COMMITS,
                "capabilities": {"kv": true}, "safetyAttestation": {"accepted": true},
            })),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    let url = node.url("/tools/commits");
    let answered = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..KV_TASKS)
        .map(|task| {
            let (client, url) = (node.client.clone(), url.clone());
            let (answered, stop) = (answered.clone(), stop.clone());
            tokio::spawn(async move {
                let mut sent = Vec::new();
                for n in 0.. {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let id = format!("t{task}-{n}");
                    sent.push(id.clone());
                    let Ok(response) = client
                        .post(&url)
                        .json(&json!({"op": "commit", "id": id}))
                        .send()
                        .await
                    else {
                        break;
                    };
                    let status = response.status();
                    let Ok(body) = response.json::<Value>().await else {
                        break;
                    };
                    assert_eq!(status, 200, "{body}");
                    assert_eq!(body["ok"], true, "{body}");
                    answered.lock().unwrap().push(id);
                }
                sent
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while answered.lock().unwrap().len() < COMMITS_BEFORE_KILL && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    node.kill();
    stop.store(true, Ordering::SeqCst);
    let answered: Vec<String> = answered.lock().unwrap().clone();
    let mut sent = Vec::new();
    for task in tasks {
        sent.extend(task.await.unwrap());
    }
    assert!(
        answered.len() >= COMMITS_BEFORE_KILL,
        "only {} commits answered in 10 s",
        answered.len()
    );

    let node = Node::start_in(&data, &[]);
    let read = |id: String| {
        let node = &node;
        async move {
            let (status, entry) = node
                .post("/tools/commits", &json!({"op": "read", "id": id}))
                .await;
            assert_eq!(status, 200, "{entry}");
            entry
        }
    };
    for id in &answered {
        let entry = read(format!("call:{id}")).await;
        assert_eq!(
            entry["value"],
            id.as_str(),
            "answered commit {id} is on disk"
        );
    }
    let mut present = 0;
    for id in &sent {
        if !read(format!("call:{id}")).await["value"].is_null() {
            present += 1;
        }
    }
    let total = read("total".to_owned()).await;
    assert_eq!(
        total["value"], present,
        "the total counts exactly the commits whose key is there"
    );
    eprintln!(
        "kv kill -9: {} answered, {} sent, {present} on disk after the restart, in {:?}",
        answered.len(),
        sent.len(),
        started.elapsed()
    );
    node.kill();
}

/// Charges what its input says (`cost`, USD), at most its 0.005.
const METERED: &str = "export default (req, ctx) => { ctx.charge(req.input.cost, { units: 1 }); return { ok: true }; }";

/// Where a node keeps its state: the embedded store in its data dir, or a PostgreSQL database.
enum Engine {
    Sled,
    Postgres(String),
}

impl Engine {
    fn args(&self) -> Vec<String> {
        match self {
            Engine::Sled => Vec::new(),
            Engine::Postgres(url) => vec!["--store".into(), url.clone()],
        }
    }

    /// The store the node used, opened by the test once the node is dead.
    async fn open(&self, data: &std::path::Path) -> Arc<dyn Store> {
        match self {
            Engine::Sled => Arc::new(SledStore::open(&data.join("store")).expect("store opens")),
            Engine::Postgres(url) => Arc::new(
                toolhost_store::PgStore::connect(url)
                    .await
                    .expect("database opens"),
            ),
        }
    }
}

/// A metered endpoint's calls (x402 `upto` and developer credit, some reporting more than the
/// maximum) and its owner's partial refunds of answered calls, all at once, then `kill -9`. On
/// disk: every answered receipt with the amount answered, every answered refund; after the
/// restart the builder's revenue is exactly what the receipts on disk charged less what the
/// refunds on disk gave back, and the credit reconciles: balance + held + charged − refunded
/// = granted.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_under_metered_calls_and_refunds_keeps_the_money_exact() {
    metered_money_survives_kill_9(Engine::Sled).await;
}

/// The same on PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_under_metered_calls_and_refunds_keeps_the_money_exact_on_postgres() {
    let url = toolhost_testkit::PgCluster::shared()
        .unwrap()
        .fresh_url()
        .await
        .unwrap();
    metered_money_survives_kill_9(Engine::Postgres(url)).await;
}

async fn metered_money_survives_kill_9(engine: Engine) {
    use toolhost::x402::schemes::upto_evm;

    const SLUG: &str = "metered-crash";
    const GRANTED: u64 = 50_000_000;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let node = Node::start_in(&data, &engine.args());
    let client = reqwest::Client::new();
    let admin = |method: &str, path: &str, body: Value| {
        client
            .request(method.parse().unwrap(), node.url(path))
            .header("x-admin-token", ADMIN_TOKEN)
            .json(&body)
            .send()
    };
    let (_, builder) = read(
        admin("POST", "/ai/admin/builders", json!({"name": "meter"}))
            .await
            .unwrap(),
    )
    .await;
    let key = builder["builderKey"].as_str().unwrap().to_string();
    let (status, body) = read(
        client
            .post(node.url("/ai/endpoints/create"))
            .header("x-builder-key", &key)
            .json(&json!({
                "slug": SLUG, "title": "Metered", "priceUsd": 0.005,
                "metering": {"unit": "unit"}, "source": METERED,
                "inputSchema": {"type": "object"}, "safetyAttestation": {"accepted": true},
            }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, credit) = read(
        admin(
            "POST",
            "/ai/admin/credits",
            json!({"amountUsd": GRANTED as f64 / 1e6}),
        )
        .await
        .unwrap(),
    )
    .await;
    let token = credit["credit"]["token"].as_str().unwrap().to_string();
    let credit_id = credit["credit"]["creditId"].as_str().unwrap().to_string();
    let url = node.url(&format!("/tools/{SLUG}"));
    let required = crate::util::payment_required(&client, &url, &json!({"cost": 0})).await;
    let requirement: toolhost::x402::PaymentRequirements =
        serde_json::from_value(required["accepts"][0].clone()).unwrap();
    let signer = Arc::new(PrivateKeySigner::random());

    let stop = Arc::new(AtomicBool::new(false));
    // Answered calls (receipt id → amount) and refunds (receipt id → amount).
    let receipts: Arc<Mutex<HashMap<String, u64>>> = Arc::default();
    let refunds: Arc<Mutex<HashMap<String, u64>>> = Arc::default();
    let callers: Vec<_> = (0..8)
        .map(|i| {
            let (client, url, stop, receipts) = (client.clone(), url.clone(), stop.clone(), receipts.clone());
            let (signer, required, requirement, token) =
                (signer.clone(), required.clone(), requirement.clone(), token.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    // 100 to 6,000 units: above 5,000 the call is charged its maximum.
                    let cost = f64::from(rand::random::<u16>() % 5_900 + 100) / 1e6;
                    let mut request = client.post(&url).json(&json!({"cost": cost}));
                    request = if i % 2 == 0 {
                        let payload = upto_evm::signing::sign(
                            &signer,
                            &toolhost::x402::config::NetworkConfig::base_sepolia(),
                            &requirement,
                            |_| {},
                        )
                        .unwrap();
                        let wire = json!({"x402Version": 2, "resource": required["resource"], "accepted": requirement, "payload": payload});
                        request.header("PAYMENT-SIGNATURE", toolhost::x402::header::encode(&wire))
                    } else {
                        request.header("x-developer-credit", &token)
                    };
                    let Ok(response) = request.send().await else { return };
                    let Ok(body) = response.json::<Value>().await else { return };
                    let receipt = &body["receipt"];
                    let expected = ((cost * 1e6).round() as u64).min(5000);
                    assert_eq!(receipt["amount"], expected.to_string(), "{body}");
                    receipts.lock().unwrap().insert(
                        receipt["receiptId"].as_str().unwrap().to_string(),
                        expected,
                    );
                }
            })
        })
        .collect();
    let refunders: Vec<_> = (0..2)
        .map(|_| {
            let (client, base, stop, key) =
                (client.clone(), node.url(""), stop.clone(), key.clone());
            let (receipts, refunds) = (receipts.clone(), refunds.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let pick = {
                        let done = refunds.lock().unwrap();
                        let answered = receipts.lock().unwrap();
                        answered
                            .iter()
                            .find(|(id, _)| !done.contains_key(*id))
                            .map(|(id, amount)| (id.clone(), *amount))
                    };
                    let Some((receipt, charged)) = pick else {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        continue;
                    };
                    let amount = rand::random::<u64>() % charged + 1;
                    let Ok(response) = client
                        .post(format!("{base}/ai/receipts/{receipt}/refund"))
                        .header("x-builder-key", &key)
                        .json(&json!({"reason": "crash", "amountUsd": amount as f64 / 1e6}))
                        .send()
                        .await
                    else {
                        return;
                    };
                    let status = response.status().as_u16();
                    let Ok(body) = response.json::<Value>().await else {
                        return;
                    };
                    // Another refunder may have taken the same receipt a moment before.
                    if status == 409 && body["error"]["code"] == "already_refunded" {
                        continue;
                    }
                    assert_eq!(status, 200, "{body}");
                    assert_eq!(body["refund"]["amount"], amount.to_string());
                    refunds.lock().unwrap().insert(receipt, amount);
                }
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(8);
    while (receipts.lock().unwrap().len() < 40 || refunds.lock().unwrap().len() < 8)
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop.store(true, Ordering::SeqCst);
    node.kill();
    for task in callers.into_iter().chain(refunders) {
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("tasks end once the server is gone")
            .expect("task");
    }
    let (answered, refunded) = (
        std::mem::take(&mut *receipts.lock().unwrap()),
        std::mem::take(&mut *refunds.lock().unwrap()),
    );
    assert!(
        answered.len() >= 40 && refunded.len() >= 8,
        "{} calls, {} refunds answered",
        answered.len(),
        refunded.len()
    );

    // On disk: this endpoint's receipts, the refunds, and the credit's holds.
    let (on_disk, refunds_on_disk, credit_charged, held) = {
        let store = engine.open(&data).await;
        let mut on_disk: HashMap<String, (u64, bool)> = HashMap::new();
        for (id, bytes) in store.receipts_after(None, 100_000).await.unwrap() {
            let receipt: Value = serde_json::from_slice(&bytes).unwrap();
            if receipt["endpointSlug"] == SLUG {
                let amount = receipt["amount"].as_str().unwrap().parse().unwrap();
                let by_credit = receipt["paymentMethod"] == "developer_credit";
                on_disk.insert(id, (amount, by_credit));
            }
        }
        // Every refund is of a receipt on disk: read theirs, a page of ids at a time.
        let mut refunds_on_disk: HashMap<String, u64> = HashMap::new();
        let ids: Vec<&str> = on_disk.keys().map(String::as_str).collect();
        for page in ids.chunks(toolhost::store::GET_MANY_KEYS) {
            for bytes in store.refunds(page).await.unwrap().into_iter().flatten() {
                let refund: Value = serde_json::from_slice(&bytes).unwrap();
                refunds_on_disk.insert(
                    refund["receiptId"].as_str().unwrap().to_string(),
                    refund["amount"].as_str().unwrap().parse().unwrap(),
                );
            }
        }
        let credit_charged: u64 = on_disk.values().filter(|(_, c)| *c).map(|(a, _)| a).sum();
        let mut held = 0;
        for (_, bytes) in store.credit_holds(None, 100_000).await.unwrap() {
            let hold: Value = serde_json::from_slice(&bytes).unwrap();
            if hold["creditId"] == credit_id.as_str() {
                held += hold["units"].as_u64().unwrap();
            }
        }
        store.close().await.unwrap();
        (on_disk, refunds_on_disk, credit_charged, held)
    };
    for (id, amount) in &answered {
        assert_eq!(
            on_disk.get(id).map(|(a, _)| a),
            Some(amount),
            "answered receipt {id} on disk"
        );
    }
    for (id, amount) in &refunded {
        assert_eq!(
            refunds_on_disk.get(id),
            Some(amount),
            "answered refund of {id} on disk"
        );
    }
    eprintln!(
        "{} calls and {} refunds answered; on disk {} receipts, {} refunds, {held} units held",
        answered.len(),
        refunded.len(),
        on_disk.len(),
        refunds_on_disk.len()
    );
    let charged: u64 = on_disk.values().map(|(a, _)| a).sum();
    let given_back: u64 = refunds_on_disk.values().sum();
    let credit_given_back: u64 = refunds_on_disk
        .iter()
        .filter(|(id, _)| on_disk.get(*id).is_some_and(|(_, c)| *c))
        .map(|(_, a)| a)
        .sum();

    // Restarted: revenue and the credit reconcile with what is on disk.
    let node = Node::start_in(&data, &engine.args());
    let (status, revenue) = read(
        client
            .get(node.url("/ai/builders/revenue"))
            .header("x-builder-key", &key)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{revenue}");
    assert_eq!(
        revenue["revenue"]["grossUnits"],
        (charged - given_back).to_string(),
        "{revenue}"
    );
    assert_eq!(revenue["revenue"]["count"], on_disk.len(), "{revenue}");
    // Nothing was paid out yet: what payouts would pay (the collected part, the credit's
    // sales) plus what is left uncollected (the x402 sales, recorded only) is the whole net.
    let (status, payouts) = read(
        client
            .get(node.url("/ai/builders/payouts"))
            .header("x-builder-key", &key)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{payouts}");
    let units = |v: &Value| v.as_str().unwrap().parse::<u64>().unwrap();
    assert_eq!(
        units(&payouts["unpaidNetUnits"]) + units(&payouts["uncollectedNetUnits"]),
        units(&revenue["revenue"]["netUnits"]),
        "{payouts} {revenue}"
    );
    assert_eq!(
        units(&payouts["unpaidNetUnits"]),
        units(&revenue["revenue"]["collected"]["netUnits"])
    );
    let (_, credits) = read(
        client
            .get(node.url("/ai/admin/credits"))
            .header("x-admin-token", ADMIN_TOKEN)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let balance: u64 = credits["credits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["creditId"] == credit_id.as_str())
        .unwrap()["balanceUnits"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(balance + held + credit_charged - credit_given_back, GRANTED);
    node.kill();
}
