//! Atomic kv over HTTP: `ctx.kv.getEntry` and `ctx.kv.atomic()` in a handler called through
//! `/tools/{slug}` (in worker processes, on sled or with `TOOLHOST_TEST_STORE=postgres`):
//! compare-and-set, hostile commits refused with nothing written, a quota no atomic can pass,
//! concurrent sums exact, and two nodes on one PostgreSQL database summing into one key.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost_testkit::PgCluster;

use crate::util::node::Node;
use crate::util::{As, TestServer};

/// One kv action per call, chosen by `req.input.op`; errors are returned with their code.
const COUNTER: &str = r#"
export default async function (req, ctx) {
  const { op } = req.input;
  try {
    if (op === "sum") return await ctx.kv.atomic().sum("total", req.input.n).commit();
    if (op === "read") return await ctx.kv.getEntry(req.input.key ?? "total");
    if (op === "cas") {
      return await ctx.kv.atomic()
        .check("doc", req.input.versionstamp)
        .set("doc", req.input.value)
        .sum("edits", 1)
        .commit();
    }
    if (op === "fill") {
      const atomic = ctx.kv.atomic();
      for (const key of req.input.keys) atomic.set(key, "v");
      return await atomic.commit();
    }
    if (op === "list") return await ctx.kv.list({});
    return { error: "unknown op" };
  } catch (e) {
    return { code: e.code ?? e.name, message: e.message };
  }
}
"#;

fn counter(slug: &str) -> Value {
    json!({
        "slug": slug, "title": "Counter", "description": "Sums into kv atomically.",
        "priceUsd": 0, "handlerType": "js_request_response", "source": COUNTER,
        "capabilities": {"kv": true}, "safetyAttestation": {"accepted": true},
    })
}

async fn call(server: &TestServer, slug: &str, input: Value) -> Value {
    let (status, body) = server.post(&format!("/tools/{slug}"), &input).await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn compare_and_set_over_http_and_hostile_commits_write_nothing() {
    let server = TestServer::start_with(|c| c.runtime.quotas.kv_keys = 5).await;
    server.create(As::Admin, &counter("cas")).await;

    let absent = call(&server, "cas", json!({"op": "read", "key": "doc"})).await;
    assert_eq!(
        absent,
        json!({"key": "doc", "value": null, "versionstamp": null})
    );
    let first = call(
        &server,
        "cas",
        json!({"op": "cas", "versionstamp": null, "value": 1}),
    )
    .await;
    assert_eq!(first["ok"], true, "{first}");
    let doc = call(&server, "cas", json!({"op": "read", "key": "doc"})).await;
    assert_eq!(doc["value"], 1);
    assert_eq!(doc["versionstamp"], first["versionstamp"]);
    // Two writers with the same versionstamp: one wins, the other is told so.
    let stamp = doc["versionstamp"].clone();
    let win = call(
        &server,
        "cas",
        json!({"op": "cas", "versionstamp": stamp, "value": 2}),
    )
    .await;
    let lose = call(
        &server,
        "cas",
        json!({"op": "cas", "versionstamp": stamp, "value": 3}),
    )
    .await;
    assert_eq!(win["ok"], true, "{win}");
    assert_eq!(lose, json!({"ok": false}));
    assert!(win["versionstamp"].as_str() > first["versionstamp"].as_str());
    let edits = call(&server, "cas", json!({"op": "read", "key": "edits"})).await;
    assert_eq!(edits["value"], 2, "the losing commit's sum was not written");

    // Past the endpoint's key quota (5; doc and edits are stored): refused whole.
    let keys: Vec<String> = (0..4).map(|i| format!("k{i}")).collect();
    let over = call(&server, "cas", json!({"op": "fill", "keys": keys})).await;
    assert_eq!(over["code"], "quota_exceeded", "{over}");
    // Too many operations, and a sum that is not a safe integer.
    let keys: Vec<String> = (0..101).map(|i| format!("k{i}")).collect();
    let many = call(&server, "cas", json!({"op": "fill", "keys": keys})).await;
    assert_eq!(many["code"], "too_large", "{many}");
    let unsafe_sum = call(
        &server,
        "cas",
        json!({"op": "sum", "n": 9007199254740992u64}),
    )
    .await;
    assert_eq!(unsafe_sum["code"], "TypeError", "{unsafe_sum}");
    let listed = call(&server, "cas", json!({"op": "list"})).await;
    let keys: Vec<&str> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["doc", "edits"], "nothing else was written");
}

/// Concurrent calls summing into one key through HTTP, each in its own isolate call: every
/// commit lands once, and the total is exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_sums_over_http_are_exact() {
    let server = Arc::new(TestServer::start().await);
    server.create(As::Admin, &counter("sums")).await;
    const CALLS: u64 = 120;
    // In flight at once: below the endpoint's admission limit (64), so none is turned away.
    let gate = Arc::new(tokio::sync::Semaphore::new(48));
    let started = Instant::now();
    let tasks: Vec<_> = (1..=CALLS)
        .map(|n| {
            let (server, gate) = (server.clone(), gate.clone());
            tokio::spawn(async move {
                let _permit = gate.acquire().await.unwrap();
                call(&server, "sums", json!({"op": "sum", "n": n})).await
            })
        })
        .collect();
    let mut stamps = Vec::new();
    for task in tasks {
        let body = task.await.unwrap();
        assert_eq!(body["ok"], true, "{body}");
        stamps.push(body["versionstamp"].as_str().unwrap().to_owned());
    }
    let elapsed = started.elapsed();
    stamps.sort();
    stamps.dedup();
    assert_eq!(stamps.len() as u64, CALLS, "one versionstamp per commit");
    let total = call(&server, "sums", json!({"op": "read"})).await;
    assert_eq!(total["value"], CALLS * (CALLS + 1) / 2);
    println!(
        "{CALLS} concurrent sums over HTTP in {elapsed:?} ({:.0}/s)",
        CALLS as f64 / elapsed.as_secs_f64()
    );
}

/// Two nodes (separate processes) on one PostgreSQL database summing into one key at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_on_one_database_sum_into_one_key_exactly() {
    let url = PgCluster::shared().unwrap().fresh_url().await.unwrap();
    let nodes: Vec<Arc<Node>> = (0..2)
        .map(|_| Arc::new(Node::start(&["--store", &url])))
        .collect();
    let (status, created) = nodes[0]
        .admin("POST", "/ai/endpoints/create", Some(&counter("shared-sum")))
        .await;
    assert_eq!(status, 200, "{created}");
    // The other node serves it once the change reaches it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while nodes[1]
        .post("/tools/shared-sum", &json!({"op": "read"}))
        .await
        .0
        != 200
    {
        assert!(
            Instant::now() < deadline,
            "node B never served the endpoint"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    const CALLS: u64 = 80;
    let started = Instant::now();
    let tasks: Vec<_> = (0..CALLS)
        .map(|i| {
            let node = nodes[(i % 2) as usize].clone();
            tokio::spawn(async move {
                let (status, body) = node
                    .post("/tools/shared-sum", &json!({"op": "sum", "n": 1}))
                    .await;
                assert_eq!(status, 200, "{body}");
                assert_eq!(body["ok"], true, "{body}");
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let elapsed = started.elapsed();
    for node in &nodes {
        let (_, total) = node.post("/tools/shared-sum", &json!({"op": "read"})).await;
        assert_eq!(total["value"], CALLS, "{total}");
    }
    println!("{CALLS} sums from two nodes on one database in {elapsed:?}");
}
