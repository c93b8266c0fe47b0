//! Several toolhost nodes on one PostgreSQL database, as separate processes: a payment is spent
//! once across all of them, a change on one is served by the others within a second, a node
//! killed under paid load loses nothing it answered, and a database outage is a retryable 503
//! that heals without restarting anyone.

use std::time::{Duration, Instant};

use alloy_signer_local::PrivateKeySigner;
use reqwest::StatusCode;
use serde_json::{json, Value};
use toolhost_testkit::PgCluster;

use crate::payments::pay;
use crate::util::node::Node;
use crate::util::{assert_error, assert_payment_required, read, static_endpoint};

const PAID: &str = "/tools/receipt-echo-paid";

/// Nodes started one after another with only the store and the admin token.
async fn nodes(url: &str, count: usize) -> Vec<Node> {
    (0..count).map(|_| Node::start(&["--store", url])).collect()
}

/// The v2 requirements `node` asks for on `path`.
async fn ask(node: &Node, path: &str) -> Value {
    crate::util::payment_required(&node.client, &node.url(path), &json!({})).await
}

async fn post_paid(node: &Node, header: &(&str, String), body: Value) -> (StatusCode, Value) {
    let response = node
        .client
        .post(node.url(PAID))
        .header(header.0, &header.1)
        .json(&body)
        .send()
        .await;
    match response {
        Ok(response) => read(response).await,
        // A node killed mid-request: no answer at all.
        Err(_) => (StatusCode::BAD_GATEWAY, Value::Null),
    }
}

/// Polls `probe` until it returns true; how long that took, or `None` after `limit`.
async fn within(limit: Duration, mut probe: impl AsyncFnMut() -> bool) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if probe().await {
            return Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

/// How long a change may take to reach another node. The requirement is 1 s; the feed polls
/// every 200 ms. A little slack for a loaded 2-core CI machine, and the measured figure is
/// printed.
const PROPAGATION: Duration = Duration::from_millis(1500);

#[tokio::test]
async fn one_payment_sent_to_three_nodes_is_served_once() {
    let url = PgCluster::shared().unwrap().fresh_url().await.unwrap();
    let nodes = nodes(&url, 3).await;
    let signer = PrivateKeySigner::random();
    for round in 0..3 {
        let required = ask(&nodes[round], PAID).await;
        let header = pay(&signer, &required, 2, |_| {});
        let answers = futures::future::join_all(
            nodes
                .iter()
                .map(|node| post_paid(node, &header, json!({"round": round}))),
        )
        .await;
        let served: Vec<&Value> = answers
            .iter()
            .filter(|(status, _)| *status == 200)
            .map(|(_, body)| body)
            .collect();
        assert_eq!(served.len(), 1, "{answers:?}");
        for (status, body) in answers.iter().filter(|(status, _)| *status != 200) {
            assert_payment_required(*status, body, "invalid_exact_evm_nonce_already_used");
        }
        // The receipt is shared: every node serves it.
        let receipt_id = served[0]["receipt"]["receiptId"].as_str().unwrap();
        for node in &nodes {
            let (status, receipt) = node.get(&format!("/ai/receipts/{receipt_id}")).await;
            assert_eq!(status, 200, "{receipt}");
        }
    }
}

/// A `payment-identifier` id answered by one node is replayed by the others (handler not run,
/// nothing charged again) and refused with another payment, all through the shared store.
#[tokio::test]
async fn a_payment_identifier_answered_on_one_node_replays_on_the_others() {
    let url = PgCluster::shared().unwrap().fresh_url().await.unwrap();
    let nodes = nodes(&url, 3).await;
    let signer = PrivateKeySigner::random();
    let required = ask(&nodes[0], PAID).await;
    let id = "pay_cluster_0123456789abcdef";
    let header = crate::payment_ids::pay_with_id(&signer, &required, id);
    let (status, first) = post_paid(&nodes[0], &header, json!({"n": 1})).await;
    assert_eq!(status, 200, "{first}");
    for node in &nodes[1..] {
        let (status, again) = post_paid(node, &header, json!({"n": 1})).await;
        assert_eq!((status, &again), (StatusCode::OK, &first));
    }
    let other = crate::payment_ids::pay_with_id(&signer, &required, id);
    let (status, body) = post_paid(&nodes[2], &other, json!({"n": 1})).await;
    assert_error(status, &body, 409, "payment_identifier_conflict");
    // Each node flushes its own invocation records before answering: read on all three, so
    // the last read counts every node's runs.
    let mut runs = 0;
    for node in nodes.iter().rev() {
        let (status, logs) = node
            .admin(
                "GET",
                "/ai/endpoints/receipt-echo-paid/logs?limit=100",
                None,
            )
            .await;
        assert_eq!(status, 200, "{logs}");
        runs = logs["entries"].as_array().unwrap().len();
    }
    assert_eq!(runs, 1, "the handler ran once across the nodes");
}

#[tokio::test]
async fn changes_on_one_node_are_served_by_the_others_within_a_second() {
    let url = PgCluster::shared().unwrap().fresh_url().await.unwrap();
    let nodes = nodes(&url, 3).await;
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);

    let (status, created) = a
        .admin(
            "POST",
            "/ai/endpoints/create",
            Some(&static_endpoint("hello-cluster")),
        )
        .await;
    assert_eq!(status, 200, "{created}");
    let seen = within(PROPAGATION, async || {
        b.post("/tools/hello-cluster", &json!({})).await.0 == 200
    })
    .await;
    println!("create on A answered on B after {seen:?}");
    assert!(seen.is_some(), "B never served the endpoint created on A");

    let (status, paused) = b
        .admin(
            "PATCH",
            "/ai/endpoints/hello-cluster",
            Some(&json!({"status": "paused"})),
        )
        .await;
    assert_eq!(status, 200, "{paused}");
    let seen = within(PROPAGATION, async || {
        a.post("/tools/hello-cluster", &json!({})).await.0 == 503
    })
    .await;
    println!("pause on B seen by A after {seen:?}");
    assert!(seen.is_some(), "A still served the endpoint paused on B");
    let (status, body) = a.post("/tools/hello-cluster", &json!({})).await;
    assert_error(status, &body, 503, "endpoint_paused");

    // C deletes it, once C has seen it too.
    let seen = within(PROPAGATION, async || {
        c.post("/tools/hello-cluster", &json!({})).await.0 == 503
    })
    .await;
    assert!(seen.is_some(), "C never saw the endpoint");
    let (status, body) = c.admin("DELETE", "/ai/endpoints/hello-cluster", None).await;
    assert_eq!(status, 200, "{body}");
    for node in [a, b] {
        let gone = within(PROPAGATION, async || {
            node.post("/tools/hello-cluster", &json!({})).await.0 == 404
        })
        .await;
        assert!(gone.is_some(), "a deleted endpoint was still served");
    }

    // Every node signs receipts with the cluster's one key.
    let keys: Vec<Value> = futures::future::join_all(nodes.iter().map(|n| n.get("/ai/manifest")))
        .await
        .into_iter()
        .map(|(_, manifest)| manifest["receipts"]["publicKey"].clone())
        .collect();
    assert!(keys[0].is_string());
    assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
}

/// A change made on one node lets the calls another node runs finish on the old revision; a
/// delete made on one node stops them there too (answered 404 once the node learns of it).
#[tokio::test]
async fn a_delete_on_one_node_stops_the_calls_of_the_others_and_a_change_does_not() {
    let url = PgCluster::shared().unwrap().fresh_url().await.unwrap();
    let nodes = nodes(&url, 2).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let endpoint = json!({
        "slug": "lingering", "title": "Lingering", "description": "Waits, then answers.",
        "priceUsd": 0, "handlerType": "js_request_response",
        "source": "export default async (req) => { await new Promise(r => setTimeout(r, req.input.wait ?? 0)); return 'done'; }",
        "safetyAttestation": {"accepted": true},
    });
    let (status, created) = a
        .admin("POST", "/ai/endpoints/create", Some(&endpoint))
        .await;
    assert_eq!(status, 200, "{created}");
    let served = within(PROPAGATION, async || {
        b.post("/tools/lingering", &json!({})).await.0 == 200
    })
    .await;
    assert!(served.is_some(), "B never served the endpoint created on A");

    let wait = json!({"wait": 1500});
    let call_on_b = || b.post("/tools/lingering", &wait);
    let change_on_a = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        a.admin(
            "PATCH",
            "/ai/endpoints/lingering",
            Some(&json!({"description": "Waits a while, then answers."})),
        )
        .await
    };
    let ((status, body), (changed, _)) = tokio::join!(call_on_b(), change_on_a);
    assert_eq!(changed, 200);
    assert_eq!((status, body), (StatusCode::OK, json!("done")));

    let started = Instant::now();
    let delete_on_a = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        a.admin("DELETE", "/ai/endpoints/lingering", None).await
    };
    let ((status, body), (deleted, _)) = tokio::join!(call_on_b(), delete_on_a);
    assert_eq!(deleted, 200);
    assert_error(status, &body, 404, "endpoint_not_found");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "stopped before its end: {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_node_with_a_key_that_disagrees_with_the_cluster_refuses_to_start() {
    let url = PgCluster::shared().unwrap().fresh_url().await.unwrap();
    let first = Node::start(&["--store", &url, "--secrets-master-key", &"ab".repeat(32)]);
    let refused = Node::try_start(&["--store", &url, "--secrets-master-key", &"cd".repeat(32)]);
    let output = refused
        .err()
        .expect("a node with another master key started");
    assert!(output.contains("secrets_master_key"), "{output}");
    // Without the key, a node cannot open the cluster's secrets either: it must be given.
    let output = Node::try_start(&["--store", &url])
        .err()
        .expect("started without the key");
    assert!(
        output.contains("given to its nodes by configuration"),
        "{output}"
    );
    let same = Node::start(&["--store", &url, "--secrets-master-key", &"ab".repeat(32)]);
    assert_eq!(same.get("/healthz").await.0, 200);
    drop(first);
}

#[tokio::test]
async fn killing_one_node_under_paid_load_loses_no_answered_receipt() {
    let url = PgCluster::shared().unwrap().fresh_url().await.unwrap();
    let mut nodes = nodes(&url, 3).await;
    let required = ask(&nodes[0], PAID).await;
    let victim = nodes.pop().unwrap();
    let victim_base = victim.base.clone();
    let victim = std::sync::Arc::new(std::sync::Mutex::new(Some(victim)));

    // 12 callers, round-robin over the three nodes, 8 paid calls each; the third node is
    // killed once 30 calls have been answered.
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let survivors: Vec<String> = nodes.iter().map(|n| n.base.clone()).collect();
    let callers = (0..12).map(|caller| {
        let bases = [
            survivors[0].clone(),
            survivors[1].clone(),
            victim_base.clone(),
        ];
        let required = required.clone();
        let answered = answered.clone();
        let victim = victim.clone();
        async move {
            let client = reqwest::Client::new();
            let mut served = Vec::new();
            for i in 0..8 {
                let signer = PrivateKeySigner::random();
                let header = pay(&signer, &required, 2, |_| {});
                let base = &bases[(caller + i) % 3];
                let response = client
                    .post(format!("{base}{PAID}"))
                    .header(header.0, &header.1)
                    .json(&json!({"caller": caller, "i": i}))
                    .send()
                    .await;
                if let Ok(response) = response {
                    let (status, body) = read(response).await;
                    if status == 200 {
                        let receipt_id = body["receipt"]["receiptId"].as_str().unwrap();
                        served.push((receipt_id.to_string(), body["receiptLog"].clone()));
                    }
                }
                if answered.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 30 {
                    if let Some(node) = victim.lock().unwrap().take() {
                        node.kill();
                    }
                }
            }
            served
        }
    });
    let served: Vec<(String, Value)> = futures::future::join_all(callers)
        .await
        .into_iter()
        .flatten()
        .collect();
    assert!(
        victim.lock().unwrap().is_none(),
        "the node was never killed"
    );
    assert!(
        served.len() >= 40,
        "only {} calls were served",
        served.len()
    );
    // Every answered receipt is kept, in the receipt log the survivors serve at the leaf its
    // answer named, and the log extends every head handed out before the kill.
    crate::receipt_log::answered_receipts_hold(&nodes[1], &served).await;
    // The survivors keep serving.
    for node in &nodes {
        let header = pay(&PrivateKeySigner::random(), &required, 2, |_| {});
        assert_eq!(post_paid(node, &header, json!({})).await.0, 200);
    }
}

#[tokio::test]
async fn a_database_outage_answers_503_and_heals_without_a_restart() {
    let cluster = PgCluster::create().unwrap();
    let node = Node::start(&["--store", &cluster.url()]);
    let (status, created) = node
        .admin(
            "POST",
            "/ai/endpoints/create",
            Some(&static_endpoint("outage")),
        )
        .await;
    assert_eq!(status, 200, "{created}");
    let required = ask(&node, PAID).await;

    // Free calls (each stores its receipt) keep coming while the database stops and starts:
    // every answer is a 200 or a retryable 503, never a 500, and no 200 loses its receipt.
    let stop_load = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = {
        let (client, url, stop) = (
            node.client.clone(),
            node.url("/tools/receipt-echo"),
            stop_load.clone(),
        );
        tokio::spawn(async move {
            let mut answers = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::SeqCst) && answers.len() < 5000 {
                let response = client
                    .post(&url)
                    .json(&json!({"n": answers.len()}))
                    .send()
                    .await;
                let (status, body) = read(response.expect("the node stays up")).await;
                answers.push((status, body));
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            answers
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Blocking here is fine: the node under test is another process.
    cluster.stop().unwrap();
    // Reads served from memory still work; anything that needs the store is a retryable 503.
    let header = pay(&PrivateKeySigner::random(), &required, 2, |_| {});
    let (status, body) = post_paid(&node, &header, json!({})).await;
    assert_error(status, &body, 503, "store_unavailable");
    let (status, body) = node.get("/ai/receipts/rcpt_none").await;
    assert_error(status, &body, 503, "store_unavailable");
    tokio::time::sleep(Duration::from_millis(300)).await;

    cluster.start().unwrap();
    let healed = within(Duration::from_secs(15), async || {
        let header = pay(&PrivateKeySigner::random(), &required, 2, |_| {});
        post_paid(&node, &header, json!({})).await.0 == 200
    })
    .await;
    assert!(
        healed.is_some(),
        "the node did not recover after the database came back"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop_load.store(true, std::sync::atomic::Ordering::SeqCst);
    let answers = load.await.unwrap();
    let unavailable = answers.iter().filter(|(s, _)| *s == 503).count();
    assert!(unavailable > 0, "the load never met the outage");
    for (status, body) in &answers {
        match status.as_u16() {
            200 => {
                let id = body["receipt"]["receiptId"].as_str().unwrap();
                let (status, _) = node.get(&format!("/ai/receipts/{id}")).await;
                assert_eq!(
                    status, 200,
                    "receipt {id} answered during the outage is lost"
                );
            }
            _ => assert_eq!(
                (status.as_u16(), body["error"]["code"].as_str()),
                (503, Some("store_unavailable")),
                "{body}\nnode log:\n{}",
                node.log()
            ),
        }
    }
    assert_eq!(answers.last().unwrap().0, 200, "the load did not recover");

    // The payment refused during the outage was not spent: it is served now.
    let (status, body) = post_paid(&node, &header, json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(node.post("/tools/outage", &json!({})).await.0, 200);
}

/// A rollout started on one node is routed alike by every node: a payer reaches the same
/// revision whichever node it calls, and each node's counts add up in the view of any.
#[tokio::test]
async fn a_rollout_routes_a_payer_alike_on_every_node_and_counts_add_up() {
    let url = PgCluster::shared().unwrap().fresh_url().await.unwrap();
    let nodes = nodes(&url, 2).await;
    let versioned =
        |version: &str| format!("export default async () => ({{ version: '{version}' }});");
    let create = json!({
        "slug": "rolled", "title": "Rolled", "description": "Says its version.",
        "priceUsd": 0.01, "handlerType": "js_request_response", "source": versioned("v1"),
    });
    let (status, body) = nodes[0]
        .admin("POST", "/ai/endpoints/create", Some(&create))
        .await;
    assert_eq!(status, 200, "{body}");
    let patch = json!({"source": versioned("v2"), "rolloutShare": 50});
    let (status, body) = nodes[0]
        .admin("PATCH", "/ai/endpoints/rolled", Some(&patch))
        .await;
    assert_eq!(status, 200, "{body}");
    let followed = within(PROPAGATION, async || {
        let (_, seen) = nodes[1].admin("GET", "/ai/endpoints/rolled", None).await;
        seen["manage"]["rollout"]["revision"] == 2
    })
    .await;
    assert!(followed.is_some(), "the other node never saw the rollout");
    let call = |node: &Node, token: String| {
        let request = node
            .client
            .post(node.url("/tools/rolled"))
            .header("x-developer-credit", token)
            .json(&json!({}))
            .send();
        async move {
            let (status, body) = read(request.await.expect("request")).await;
            assert_eq!(status, 200, "{body}");
            body["version"].as_str().unwrap().to_string()
        }
    };
    let mut on_new = 0;
    for _ in 0..12 {
        let (status, credit) = nodes[0]
            .admin("POST", "/ai/admin/credits", Some(&json!({"amountUsd": 1})))
            .await;
        assert_eq!(status, 200, "{credit}");
        let token = credit["credit"]["token"].as_str().unwrap().to_string();
        let first = call(&nodes[0], token.clone()).await;
        assert_eq!(
            call(&nodes[1], token).await,
            first,
            "one payer, two revisions"
        );
        on_new += usize::from(first == "v2");
    }
    assert!((1..12).contains(&on_new), "{on_new} of 12 payers on v2");
    let counted = within(Duration::from_secs(5), async || {
        let (_, status) = nodes[1]
            .admin("GET", "/ai/endpoints/rolled/rollout", None)
            .await;
        let rollout = &status["rollout"];
        let calls = |r: &Value| r["calls"].as_u64().unwrap_or(0);
        calls(&rollout["serving"]) + calls(&rollout["candidate"]) == 24
            && calls(&rollout["candidate"]) == 2 * on_new as u64
    })
    .await;
    assert!(
        counted.is_some(),
        "both nodes' counts never added up to 24 calls"
    );
}

/// The PostgreSQL backup the README documents: `pg_dump` while a node serves paid calls,
/// `pg_restore` into a new database, and a node on that database serves every receipt
/// answered before the dump under the same keys (the cluster's keys are in the database).
#[tokio::test]
async fn a_pg_dump_taken_while_serving_restores_into_a_database_a_node_serves() {
    let cluster = tokio::task::spawn_blocking(PgCluster::create)
        .await
        .unwrap()
        .unwrap();
    let node = Node::start(&["--store", &cluster.url()]);
    let (status, credit) = node
        .admin("POST", "/ai/admin/credits", Some(&json!({"amountUsd": 1})))
        .await;
    assert_eq!(status, 200, "{credit}");
    let token = credit["credit"]["token"].as_str().unwrap().to_owned();
    let paid = |n: u32| {
        let request = (node.client.post(node.url(PAID)))
            .header("x-developer-credit", &token)
            .json(&json!({"n": n}));
        async move {
            let (status, body) = read(request.send().await.unwrap()).await;
            assert_eq!(status, 200, "{body}");
            body["receipt"]["receiptId"].as_str().unwrap().to_owned()
        }
    };
    let mut answered = Vec::new();
    for n in 0..5 {
        answered.push(paid(n).await);
    }
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("toolhost.dump");
    let dumping = {
        let mut command = cluster.client_tool("pg_dump");
        command
            .args(["--format=custom", "--file"])
            .arg(&dump)
            .arg(cluster.url());
        tokio::task::spawn_blocking(move || command.output().unwrap())
    };
    // Calls go on while it dumps.
    let during = futures::future::join_all((5..15).map(paid)).await;
    let output = dumping.await.unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (_, manifest) = node.get("/ai/manifest").await;
    drop(node);

    let restored_url = cluster.create_database("restored").unwrap();
    let restored = cluster
        .client_tool("pg_restore")
        .arg(format!("--dbname={restored_url}"))
        .arg(&dump)
        .output()
        .unwrap();
    assert!(
        restored.status.success(),
        "{}",
        String::from_utf8_lossy(&restored.stderr)
    );
    let node = Node::start(&["--store", &restored_url]);
    let (_, again) = node.get("/ai/manifest").await;
    assert_eq!(
        again["receipts"]["publicKey"],
        manifest["receipts"]["publicKey"]
    );
    for id in &answered {
        let (status, receipt) = node.get(&format!("/ai/receipts/{id}")).await;
        assert_eq!(status, 200, "{id}: {receipt}");
        let (status, proof) = node.get(&format!("/ai/receipts/{id}/inclusion")).await;
        assert_eq!(status, 200, "{id}: {proof}");
    }
    // Those answered during the dump are there or not, each whole: a sale for each receipt.
    let mut kept = 0;
    for id in &during {
        kept += u64::from(node.get(&format!("/ai/receipts/{id}")).await.0 == 200);
    }
    let (_, revenue) = node.admin("GET", "/ai/admin/revenue", None).await;
    assert_eq!(revenue["platformEndpoints"]["count"], 5 + kept, "{revenue}");
    eprintln!(
        "restored: {kept} of {} calls answered during the dump",
        during.len()
    );
}

/// Nodes on one database append to one receipt log: every paid answer's proof verifies with
/// the one key, no leaf is given twice, and each node serves the same checkpoint. Free calls'
/// receipts are proven in each node's own batches, under the one batches' key, and stay out of
/// the log.
#[tokio::test]
async fn nodes_append_to_one_receipt_log() {
    let url = PgCluster::shared().unwrap().fresh_url().await.unwrap();
    let nodes = nodes(&url, 2).await;
    let (_, manifest) = nodes[0].get("/ai/manifest").await;
    let vkey = manifest["receipts"]["log"]["verifierKey"].clone();
    let (_, other) = nodes[1].get("/ai/manifest").await;
    assert_eq!(other["receipts"]["log"]["verifierKey"], vkey);
    let verifier = toolhost_tlog::Verifier::parse(vkey.as_str().unwrap()).unwrap();
    let required = ask(&nodes[0], PAID).await;
    let client = reqwest::Client::new();
    let calls = (0..30).map(|n| {
        let header = pay(&PrivateKeySigner::random(), &required, 2, |_| {});
        let request = client
            .post(nodes[n % 2].url(PAID))
            .header(header.0, &header.1)
            .json(&json!({"n": n}));
        async move { read(request.send().await.unwrap()).await }
    });
    let answers = futures::future::join_all(calls).await;
    let mut leaves = Vec::new();
    for (status, answer) in &answers {
        assert_eq!(*status, 200, "{answer}");
        crate::receipt_log::check(&verifier, &answer["receipt"], &answer["receiptLog"]);
        leaves.push(answer["receiptLog"]["leafIndex"].as_u64().unwrap());
    }
    let batches = manifest["receipts"]["log"]["batches"]["verifierKey"].clone();
    assert_eq!(other["receipts"]["log"]["batches"]["verifierKey"], batches);
    let batches = toolhost_tlog::Verifier::parse(batches.as_str().unwrap()).unwrap();
    let inputs: Vec<Value> = (0..10).map(|n| json!({"n": n})).collect();
    let free = (inputs.iter().enumerate())
        .map(|(n, input)| nodes[n % 2].post("/tools/receipt-echo", input));
    for (status, answer) in futures::future::join_all(free).await {
        assert_eq!(status, 200, "{answer}");
        crate::receipt_log::check(&batches, &answer["receipt"], &answer["receiptLog"]);
    }
    leaves.sort_unstable();
    assert_eq!(leaves, (0..30).collect::<Vec<u64>>());
    let mut checkpoints = Vec::new();
    for node in &nodes {
        let response = node
            .client
            .get(node.url("/ai/receipts/log/checkpoint"))
            .send()
            .await
            .unwrap();
        checkpoints.push(response.text().await.unwrap());
    }
    assert_eq!(checkpoints[0], checkpoints[1]);
    assert!(checkpoints[0].contains("\n30\n"), "{}", checkpoints[0]);
}

/// A refund asked of three nodes at once (each with its own reason) is made once: one answer,
/// the credit given back once, the same record served by every node.
#[tokio::test]
async fn a_refund_sent_to_three_nodes_is_made_once() {
    let url = PgCluster::shared().unwrap().fresh_url().await.unwrap();
    let nodes = nodes(&url, 3).await;
    let (status, issued) = nodes[0]
        .admin(
            "POST",
            "/ai/admin/credits",
            Some(&json!({"amountUsd": 0.01})),
        )
        .await;
    assert_eq!(status, 200, "{issued}");
    let credit = (
        "x-developer-credit",
        issued["credit"]["token"].as_str().unwrap().to_string(),
    );
    let credit_id = issued["credit"]["creditId"].clone();
    let balance = async || {
        let (_, listed) = nodes[2].admin("GET", "/ai/admin/credits", None).await;
        let credits = listed["credits"].as_array().unwrap();
        let credit = credits.iter().find(|c| c["creditId"] == credit_id).unwrap();
        credit["balanceUnits"].as_str().unwrap().to_string()
    };
    for round in 0..3 {
        let (status, paid) = post_paid(&nodes[round], &credit, json!({"round": round})).await;
        assert_eq!(status, 200, "{paid}");
        let receipt = paid["receipt"]["receiptId"].as_str().unwrap().to_string();
        let before: u64 = balance().await.parse().unwrap();
        let path = format!("/ai/receipts/{receipt}/refund");
        let answers = futures::future::join_all(nodes.iter().enumerate().map(|(i, node)| {
            let body = json!({"reason": format!("node {i}")});
            let path = path.clone();
            async move { node.admin("POST", &path, Some(&body)).await }
        }))
        .await;
        let made: Vec<&Value> = (answers.iter())
            .filter(|(status, _)| *status == 200)
            .map(|(_, body)| body)
            .collect();
        assert_eq!(made.len(), 1, "{answers:?}");
        for (status, body) in answers.iter().filter(|(status, _)| *status != 200) {
            assert_error(*status, body, 409, "already_refunded");
        }
        assert_eq!(balance().await.parse::<u64>().unwrap(), before + 1000);
        for node in &nodes {
            let (status, served) = node.get(&path).await;
            assert_eq!(status, 200, "{served}");
            assert_eq!(served["refund"]["refundId"], made[0]["refund"]["refundId"]);
        }
    }
}
