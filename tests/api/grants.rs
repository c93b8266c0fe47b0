//! Capability grants before going public: an endpoint whose requested capabilities are not all
//! granted is `awaiting_grant` (unlisted everywhere, every call 503 `awaiting_grant`) but
//! visible to its owner; the admin lists pending requests and grants or refuses with a note,
//! which the owner reads in its events.

use serde_json::{json, Value};

use crate::util::{assert_error, As, TestServer};

const COUNTER: &str = "export default async (req, ctx) => { const n = ((await ctx.kv.get('n')) ?? 0) + 1; await ctx.kv.set('n', n); return { n }; };";

fn counter(slug: &str) -> Value {
    json!({
        "slug": slug, "title": "Counter", "description": "Counts its calls.",
        "priceUsd": 0.002, "source": COUNTER,
        "capabilities": {"kv": true},
        "safetyAttestation": {"accepted": true},
    })
}

/// The slugs of the public catalog, MCP `tools/list` and the x402 discovery document.
async fn public_slugs(server: &TestServer) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (status, catalog) = server.get("/ai/endpoints").await;
    assert_eq!(status, 200, "{catalog}");
    let catalog = catalog["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["slug"].as_str().unwrap().to_string())
        .collect();
    let tools = server
        .mcp_tools_list()
        .await
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let (status, discovery) = server.get("/.well-known/x402").await;
    assert_eq!(status, 200, "{discovery}");
    let discovery = discovery["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["resource"].as_str().unwrap_or_default().to_string())
        .collect();
    (catalog, tools, discovery)
}

async fn assert_unlisted(server: &TestServer, slug: &str) {
    let (catalog, tools, discovery) = public_slugs(server).await;
    assert!(!catalog.iter().any(|s| s == slug), "{catalog:?}");
    assert!(!tools.iter().any(|s| s == slug), "{tools:?}");
    assert!(
        !discovery
            .iter()
            .any(|s| s.ends_with(&format!("/tools/{slug}"))),
        "{discovery:?}"
    );
}

async fn assert_listed(server: &TestServer, slug: &str) {
    let (catalog, tools, discovery) = public_slugs(server).await;
    assert!(catalog.iter().any(|s| s == slug), "{catalog:?}");
    assert!(tools.iter().any(|s| s == slug), "{tools:?}");
    assert!(
        discovery
            .iter()
            .any(|s| s.ends_with(&format!("/tools/{slug}"))),
        "{discovery:?}"
    );
}

/// The newest event of `kind` the owner reads.
async fn last_event(server: &TestServer, key: &str, kind: &str) -> Value {
    let (status, feed) = server
        .call(
            "GET",
            "/ai/builders/events?since=1h",
            As::Builder(key),
            None,
        )
        .await;
    assert_eq!(status, 200, "{feed}");
    feed["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} event in {feed}"))
        .clone()
}

async fn queue(server: &TestServer) -> Vec<String> {
    let (status, body) = server
        .call("GET", "/ai/admin/grants", As::Admin, None)
        .await;
    assert_eq!(status, 200, "{body}");
    body["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["endpoint"]["slug"].as_str().unwrap().to_string())
        .collect()
}

async fn decide(server: &TestServer, who: As<'_>, slug: &str, body: Value) -> (u16, Value) {
    let path = format!("/ai/admin/endpoints/{slug}/grant");
    let (status, body) = server.call("POST", &path, who, Some(&body)).await;
    (status.as_u16(), body)
}

#[tokio::test]
async fn an_endpoint_waits_unlisted_for_its_grant_and_the_owner_sees_the_answer() {
    let server = TestServer::start().await;
    let (key, created) = server.builder_with("Counter Co", &counter("counter")).await;
    let owner = As::Builder(&key);
    assert_eq!(created["endpoint"]["status"], "awaiting_grant", "{created}");
    let grant = &created["manage"]["capabilityGrant"];
    assert_eq!(grant["state"], "pending", "{created}");
    assert_eq!(grant["missing"], json!(["kv"]));
    assert_eq!(grant["requested"]["kv"], true);
    assert_eq!(grant["granted"]["kv"], false);
    assert_eq!(
        last_event(&server, &key, "capabilities_requested").await["data"]["missing"],
        json!(["kv"])
    );
    // Its creation says what the record says, not `active`.
    assert_eq!(
        last_event(&server, &key, "endpoint_created").await["data"]["status"],
        "awaiting_grant"
    );

    // Not public: not in the catalog, MCP or discovery, not found to others, not callable.
    assert_unlisted(&server, "counter").await;
    let (status, body) = server.get("/ai/endpoints/counter").await;
    assert_error(status, &body, 404, "endpoint_not_found");
    let (status, body) = server.post("/tools/counter", &json!({})).await;
    assert_error(status, &body, 503, "awaiting_grant");
    assert_eq!(body["error"]["details"]["missing"], json!(["kv"]));
    let (status, body) = server.post("/ai/invoke", &json!({"slug": "counter"})).await;
    assert_error(status, &body, 503, "awaiting_grant");
    let response = server
        .client
        .post(server.url("/ai/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "counter", "arguments": {}}}))
        .send()
        .await
        .unwrap();
    let (_, reply) = crate::util::read(response).await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text: Value =
        serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["error"]["code"], "awaiting_grant", "{reply}");
    // Not even as the owner's test call: its handler would be refused what it asked for.
    let (status, body) = server
        .call(
            "POST",
            "/tools/counter",
            As::Header("x-toolhost-test", "1"),
            None,
        )
        .await;
    assert_error(status, &body, 403, "test_call_not_allowed");
    let (status, _, body) = crate::test_calls::post(
        &server,
        "/tools/counter",
        &[("x-builder-key", &key), ("x-toolhost-test", "1")],
        json!({}),
    )
    .await;
    assert_error(status, &body, 503, "awaiting_grant");

    // Its owner sees it with what is missing.
    let (status, body) = server
        .call("GET", "/ai/endpoints/counter", owner, None)
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["endpoint"]["status"], "awaiting_grant");
    assert_eq!(body["manage"]["capabilityGrant"]["missing"], json!(["kv"]));
    let (status, body) = server
        .call("GET", "/ai/builders/endpoints", owner, None)
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["endpoints"][0]["endpoint"]["status"], "awaiting_grant");
    assert_eq!(
        body["endpoints"][0]["manage"]["capabilityGrant"]["state"],
        "pending"
    );

    // Only the admin lists and decides.
    assert_eq!(queue(&server).await, ["counter"]);
    let (status, body) = server.call("GET", "/ai/admin/grants", owner, None).await;
    assert_error(status, &body, 401, "unauthorized");
    let (status, body) = decide(&server, owner, "counter", json!({"decision": "grant"})).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"]["code"], "unauthorized");
    let (status, body) = decide(
        &server,
        As::Admin,
        "counter",
        json!({"decision": "grant", "note": "x".repeat(1001)}),
    )
    .await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (422, &json!("invalid_field"))
    );
    let (status, body) = decide(&server, As::Admin, "nope", json!({"decision": "grant"})).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("endpoint_not_found"))
    );

    // A refusal keeps it waiting, out of the queue, and tells the owner why.
    let (status, body) = decide(
        &server,
        As::Admin,
        "counter",
        json!({"decision": "refuse", "note": "kv is not needed to count; say why"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["endpoint"]["status"], "awaiting_grant");
    assert_eq!(body["manage"]["capabilityGrant"]["state"], "refused");
    assert_eq!(
        body["manage"]["capabilityGrant"]["decision"]["note"],
        "kv is not needed to count; say why"
    );
    assert!(queue(&server).await.is_empty());
    let refused = last_event(&server, &key, "capabilities_refused").await;
    assert_eq!(refused["endpointSlug"], "counter");
    assert_eq!(
        refused["data"]["note"],
        "kv is not needed to count; say why"
    );
    assert_eq!(refused["data"]["refused"], json!(["kv"]));
    let (status, body) = server.post("/tools/counter", &json!({})).await;
    assert_error(status, &body, 503, "awaiting_grant");

    // A changed request is a new one: back in the queue.
    server
        .patch(
            owner,
            "counter",
            &json!({"capabilities": {"kv": true, "logs": true}}),
        )
        .await;
    assert_eq!(queue(&server).await, ["counter"]);
    let requested = last_event(&server, &key, "capabilities_requested").await;
    assert_eq!(requested["data"]["missing"], json!(["kv", "logs"]));

    // A grant makes it public and callable; the owner reads the note.
    let (status, body) = decide(
        &server,
        As::Admin,
        "counter",
        json!({"decision": "grant", "note": "fine"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["endpoint"]["status"], "active");
    assert_eq!(body["manage"]["capabilityGrant"]["state"], "granted");
    assert_eq!(body["manage"]["grantedCapabilities"]["logs"], true);
    let granted = last_event(&server, &key, "capabilities_granted").await;
    assert_eq!(granted["data"]["note"], "fine");
    assert_eq!(granted["data"]["status"], "active");
    assert!(queue(&server).await.is_empty());
    assert_listed(&server, "counter").await;
    let (status, body) = server.get("/ai/endpoints/counter").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["endpoint"]["status"], "active");
    let (status, body) = server
        .call(
            "POST",
            "/tools/counter",
            As::Header("x-toolhost-test", "1"),
            None,
        )
        .await;
    assert_error(status, &body, 403, "test_call_not_allowed");
    let (status, _, body) = crate::test_calls::post(
        &server,
        "/tools/counter",
        &[
            ("x-admin-token", crate::util::ADMIN_TOKEN),
            ("x-toolhost-test", "1"),
        ],
        json!({}),
    )
    .await;
    assert_eq!((status.as_u16(), &body["n"]), (200, &json!(1)), "{body}");
    let (status, body) = decide(&server, As::Admin, "counter", json!({"decision": "grant"})).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (409, &json!("not_awaiting_grant"))
    );

    // Asking for one more capability makes a revision that waits for the admin; the one
    // granted serves on, listed.
    let patched = server
        .patch(
            owner,
            "counter",
            &json!({"capabilities": {"kv": true, "logs": true, "fetch": true}}),
        )
        .await;
    assert_eq!(patched["endpoint"]["status"], "active", "{patched}");
    let waiting = &patched["manage"]["capabilityGrant"]["pendingRevision"];
    assert_eq!(waiting["missing"], json!(["fetch"]), "{patched}");
    assert_eq!(waiting["state"], "pending");
    assert_listed(&server, "counter").await;
    let (status, _, body) = crate::test_calls::post(
        &server,
        "/tools/counter",
        &[("x-builder-key", &key), ("x-toolhost-test", "1")],
        json!({}),
    )
    .await;
    assert_eq!((status.as_u16(), &body["n"]), (200, &json!(2)), "{body}");
    assert_eq!(queue(&server).await, ["counter"]);

    // Asking for less needs no decision: the next revision serves at once.
    let patched = server
        .patch(owner, "counter", &json!({"capabilities": {"kv": true}}))
        .await;
    assert_eq!(patched["endpoint"]["status"], "active", "{patched}");
    assert_eq!(patched["manage"]["pendingRevision"], Value::Null);
    assert!(queue(&server).await.is_empty());
    assert_listed(&server, "counter").await;
}

#[tokio::test]
async fn a_paused_endpoint_awaiting_its_grant_shows_paused_and_a_grant_keeps_it_paused() {
    let server = TestServer::start().await;
    let (key, _) = server
        .builder_with("Pauser", &counter("paused-counter"))
        .await;
    let owner = As::Builder(&key);
    let paused = server
        .patch(owner, "paused-counter", &json!({"status": "paused"}))
        .await;
    assert_eq!(paused["endpoint"]["status"], "paused");
    assert_eq!(paused["manage"]["capabilityGrant"]["state"], "pending");
    assert_eq!(queue(&server).await, ["paused-counter"]);
    let (status, body) = decide(
        &server,
        As::Admin,
        "paused-counter",
        json!({"decision": "grant"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["endpoint"]["status"], "paused");
    let (status, body) = server.post("/tools/paused-counter", &json!({})).await;
    assert_error(status, &body, 503, "endpoint_paused");
    // `status` is the owner's to set; `awaiting_grant` is not a status one can ask for.
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/paused-counter",
            owner,
            Some(&json!({"status": "awaiting_grant"})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
}
