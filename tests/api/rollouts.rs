//! Gradual rollouts: a new revision serves a share of payers beside the serving one, each
//! payer always reaching the same revision whatever transport it calls through; both
//! revisions' calls are counted side by side; the owner raises the share, promotes or ends it;
//! bad requests are refused with a clear error and change nothing.

use serde_json::{json, Value};

use crate::util::{assert_error, As, TestServer};

/// Answers which version it is; the one named `fail_in` throws when asked to.
fn versioned(version: &str, fail_in: &str) -> String {
    format!(
        "export default async (req) => {{ if (req.input.fail && '{version}' === '{fail_in}') \
         throw new Error('failed on purpose'); return {{ version: '{version}' }}; }};"
    )
}

fn paid_tool(slug: &str, version: &str) -> Value {
    json!({
        "slug": slug, "title": "Versioned", "description": "Says which version answered.",
        "priceUsd": 0.01, "source": versioned(version, "v2"),
        "safetyAttestation": {"accepted": true},
    })
}

async fn credit(server: &TestServer) -> String {
    let body = json!({"amountUsd": 1});
    let (status, body) = server
        .call("POST", "/ai/admin/credits", As::Admin, Some(&body))
        .await;
    assert_eq!(status, 200, "{body}");
    body["credit"]["token"].as_str().unwrap().to_string()
}

/// A call paid with developer credit `token`: its status and answer.
async fn call_with(server: &TestServer, slug: &str, token: &str, input: Value) -> (u16, Value) {
    let response = server
        .client
        .post(server.url(&format!("/tools/{slug}")))
        .header("x-developer-credit", token)
        .json(&input)
        .send()
        .await
        .unwrap();
    let (status, body) = crate::util::read(response).await;
    (status.as_u16(), body)
}

async fn version_for(server: &TestServer, slug: &str, token: &str) -> String {
    let (status, body) = call_with(server, slug, token, json!({})).await;
    assert_eq!(status, 200, "{body}");
    body["version"].as_str().unwrap().to_string()
}

async fn rollout(server: &TestServer, who: As<'_>, slug: &str) -> Value {
    let path = format!("/ai/endpoints/{slug}/rollout");
    let (status, body) = server.call("GET", &path, who, None).await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn set_rollout(
    server: &TestServer,
    who: As<'_>,
    slug: &str,
    body: Value,
) -> (reqwest::StatusCode, Value) {
    let path = format!("/ai/endpoints/{slug}/rollout");
    server.call("POST", &path, who, Some(&body)).await
}

#[tokio::test]
async fn a_rollout_serves_its_share_of_payers_each_always_on_one_revision() {
    let server = TestServer::start().await;
    let (key, _) = server
        .builder_with("roller", &paid_tool("versioned", "v1"))
        .await;
    let owner = As::Builder(&key);
    // Deployed to half the payers; the first revision serves the rest.
    let deployed = server
        .patch(
            owner,
            "versioned",
            &json!({"source": versioned("v2", "v2"), "rolloutShare": 50}),
        )
        .await;
    assert_eq!(deployed["manage"]["revision"], 1, "{deployed}");
    assert_eq!(deployed["manage"]["rollout"]["revision"], 2, "{deployed}");
    assert_eq!(deployed["manage"]["rollout"]["share"], 50, "{deployed}");
    let kinds = server.event_kinds(owner, "limit=1").await;
    assert_eq!(kinds, ["rollout_started"]);

    // Each payer sees one version on every call, over HTTP and over MCP alike.
    let mut payers = Vec::new();
    for _ in 0..24 {
        let token = credit(&server).await;
        let first = version_for(&server, "versioned", &token).await;
        assert_eq!(version_for(&server, "versioned", &token).await, first);
        payers.push((token, first));
    }
    let on_new = payers.iter().filter(|(_, v)| v == "v2").count();
    // Binomial(24, 1/2): outside 3..=21 about once in 30,000 runs.
    assert!((3..=21).contains(&on_new), "{on_new} of 24 payers on v2");
    for (token, version) in payers.iter().take(4) {
        let result = server
            .mcp_tools_call(
                "versioned",
                json!({}),
                json!({"toolhost/developer-credit": token}),
            )
            .await;
        let answer = &result["structuredContent"];
        assert_eq!(&answer["version"], version, "{result}");
    }
    // x402 payers are told apart by their address: each keeps its revision too.
    for _ in 0..3 {
        let signer = alloy_signer_local::PrivateKeySigner::random();
        let mut seen = Vec::new();
        for _ in 0..2 {
            let required = crate::payments::ask(&server, "/tools/versioned").await;
            let header = crate::payments::pay(&signer, &required, 2, |_| {});
            let (status, _, body) =
                crate::util::post_paid(&server, "/tools/versioned", &header, json!({})).await;
            assert_eq!(status, 200, "{body}");
            seen.push(body["version"].clone());
        }
        assert_eq!(seen[0], seen[1], "one payer, two revisions");
    }

    // A failure of the new revision is counted against it, and its payer is not charged.
    let (new_payer, _) = payers.iter().find(|(_, v)| v == "v2").unwrap();
    let (status, body) = call_with(&server, "versioned", new_payer, json!({"fail": true})).await;
    assert_eq!(status, 500, "{body}");
    let counted = rollout(&server, owner, "versioned").await;
    let running = &counted["rollout"];
    assert_eq!(running["revision"], 2, "{counted}");
    assert_eq!(running["serving"]["revision"], 1, "{counted}");
    let new_calls = running["candidate"]["calls"].as_u64().unwrap();
    let old_calls = running["serving"]["calls"].as_u64().unwrap();
    // Every payer called twice, four more over MCP, six x402 calls, and one failure.
    assert_eq!(new_calls + old_calls, 24 * 2 + 4 + 6 + 1, "{counted}");
    assert!(new_calls > on_new as u64 * 2, "{counted}");
    assert_eq!(running["candidate"]["serverErrors"], 1, "{counted}");
    assert_eq!(running["serving"]["serverErrors"], 0, "{counted}");
    assert!(running["candidate"]["errorRate"].as_f64().unwrap() > 0.0);
    assert!(
        running["candidate"]["p50Ms"].as_f64().is_some(),
        "{counted}"
    );
    assert!(running["serving"]["p99Ms"].as_f64().is_some(), "{counted}");

    // Raising the share keeps everyone already on the new revision there.
    let (status, raised) = set_rollout(&server, owner, "versioned", json!({"share": 80})).await;
    assert_eq!(status, 200, "{raised}");
    assert_eq!(raised["manage"]["rollout"]["share"], 80, "{raised}");
    let mut now_new = 0;
    for (token, before) in &payers {
        let after = version_for(&server, "versioned", token).await;
        if before == "v2" {
            assert_eq!(
                after, "v2",
                "a payer left the new revision when the share rose"
            );
        }
        now_new += usize::from(after == "v2");
    }
    assert!(now_new >= on_new, "{now_new} < {on_new}");
    // The counts go on across a change of share.
    let counted = rollout(&server, owner, "versioned").await;
    let total = |r: &Value| {
        r["candidate"]["calls"].as_u64().unwrap() + r["serving"]["calls"].as_u64().unwrap()
    };
    assert_eq!(total(&counted["rollout"]), 24 * 3 + 4 + 6 + 1, "{counted}");

    // Promoted, it serves every payer; the rollout is over.
    let path = "/ai/endpoints/versioned/rollout/promote";
    let (status, promoted) = server.call("POST", path, owner, None).await;
    assert_eq!(status, 200, "{promoted}");
    assert_eq!(promoted["manage"]["revision"], 2, "{promoted}");
    assert!(promoted["manage"]["rollout"].is_null(), "{promoted}");
    for (token, _) in &payers {
        assert_eq!(version_for(&server, "versioned", token).await, "v2");
    }
    assert!(rollout(&server, owner, "versioned").await["rollout"].is_null());
    let kinds = server.event_kinds(owner, "limit=200").await;
    for kind in ["rollout_changed", "rollout_promoted"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} missing: {kinds:?}");
    }
}

async fn managed(server: &TestServer, owner: As<'_>) -> Value {
    let (status, body) = server
        .call("GET", "/ai/endpoints/careful", owner, None)
        .await;
    assert_eq!(status, 200, "{body}");
    body["manage"].clone()
}

#[tokio::test]
async fn rollouts_refuse_bad_requests_and_change_nothing() {
    let server = TestServer::start().await;
    let (key, _) = server
        .builder_with("careful", &paid_tool("careful", "v1"))
        .await;
    let owner = As::Builder(&key);
    let (_, stranger) = server.builder("stranger").await;
    server
        .patch(owner, "careful", &json!({"source": versioned("v2", "")}))
        .await;
    let before = managed(&server, owner).await;
    assert_eq!(before["revision"], 2);

    for share in [0, 101, -5] {
        let (status, body) = set_rollout(
            &server,
            owner,
            "careful",
            json!({"revision": 1, "share": share}),
        )
        .await;
        assert_error(status, &body, 422, "invalid_field");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("1 to 100"),
            "{body}"
        );
        let path = "/ai/endpoints/careful";
        let patch = json!({"source": versioned("v3", ""), "rolloutShare": share});
        let (status, body) = server.call("PATCH", path, owner, Some(&patch)).await;
        assert_error(status, &body, 422, "invalid_field");
    }
    let (status, body) = set_rollout(
        &server,
        owner,
        "careful",
        json!({"revision": 99, "share": 10}),
    )
    .await;
    assert_error(status, &body, 404, "revision_not_found");
    let (status, body) = set_rollout(
        &server,
        owner,
        "careful",
        json!({"revision": 2, "share": 10}),
    )
    .await;
    assert_error(status, &body, 409, "rollout_refused");
    assert_eq!(body["error"]["details"]["reason"], "serving", "{body}");
    let (status, body) = set_rollout(&server, owner, "careful", json!({"share": 10})).await;
    assert_error(status, &body, 422, "invalid_field");
    // A new price cannot be rolled out: an agent is quoted one price for the tool.
    let patch = json!({"source": versioned("v3", ""), "priceUsd": 0.02, "rolloutShare": 10});
    let (status, body) = server
        .call("PATCH", "/ai/endpoints/careful", owner, Some(&patch))
        .await;
    assert_error(status, &body, 409, "rollout_refused");
    assert_eq!(
        body["error"]["details"]["reason"], "price_differs",
        "{body}"
    );
    // Nor one that asks for what the endpoint was never granted.
    let patch =
        json!({"source": versioned("v3", ""), "capabilities": {"kv": true}, "rolloutShare": 10});
    let (status, body) = server
        .call("PATCH", "/ai/endpoints/careful", owner, Some(&patch))
        .await;
    assert_error(status, &body, 409, "rollout_refused");
    assert_eq!(body["error"]["details"]["reason"], "needs_grant", "{body}");
    assert_eq!(body["error"]["details"]["missing"], json!(["kv"]), "{body}");
    for (method, path) in [
        ("POST", "/ai/endpoints/careful/rollout/promote"),
        ("DELETE", "/ai/endpoints/careful/rollout"),
    ] {
        let (status, body) = server.call(method, path, owner, None).await;
        assert_error(status, &body, 409, "no_rollout");
    }
    let (status, body) = set_rollout(
        &server,
        As::Builder(&stranger),
        "careful",
        json!({"revision": 1, "share": 10}),
    )
    .await;
    assert_error(status, &body, 403, "not_owner");
    // Nothing above changed the endpoint.
    assert_eq!(managed(&server, owner).await, before);

    // An old revision can be rolled out again, and ended: the serving one serves everyone.
    let (status, started) = set_rollout(
        &server,
        owner,
        "careful",
        json!({"revision": 1, "share": 100}),
    )
    .await;
    assert_eq!(status, 200, "{started}");
    let token = credit(&server).await;
    assert_eq!(version_for(&server, "careful", &token).await, "v1");
    let (status, ended) = server
        .call("DELETE", "/ai/endpoints/careful/rollout", owner, None)
        .await;
    assert_eq!(status, 200, "{ended}");
    assert!(ended["manage"]["rollout"].is_null(), "{ended}");
    assert_eq!(version_for(&server, "careful", &token).await, "v2");

    // A deploy made whole while a rollout runs serves at once and ends the rollout.
    let patch = json!({"source": versioned("v3", ""), "rolloutShare": 100});
    let rolling = server.patch(owner, "careful", &patch).await;
    assert_eq!(rolling["manage"]["rollout"]["revision"], 3, "{rolling}");
    assert_eq!(version_for(&server, "careful", &token).await, "v3");
    // A change made on the rolling-out revision builds on it (its source stays v3).
    let whole = server
        .patch(
            owner,
            "careful",
            &json!({"baseRevision": 3, "title": "Versioned, whole"}),
        )
        .await;
    assert_eq!(whole["manage"]["revision"], 4, "{whole}");
    assert!(whole["manage"]["rollout"].is_null(), "{whole}");
    assert_eq!(version_for(&server, "careful", &token).await, "v3");
    let kinds = server.event_kinds(owner, "").await;
    assert_eq!(
        kinds.iter().filter(|k| *k == "rollout_ended").count(),
        2,
        "{kinds:?}"
    );
}

/// A rollout and its counts outlive a restart; a deleted endpoint's counts are wiped with it.
#[tokio::test]
async fn a_rollout_and_its_counts_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let key = {
        let server = TestServer::start_in(dir.path()).await;
        let (key, _) = server
            .builder_with("steady", &paid_tool("steady", "v1"))
            .await;
        let patch = json!({"source": versioned("v2", ""), "rolloutShare": 100});
        server.patch(As::Builder(&key), "steady", &patch).await;
        let token = credit(&server).await;
        assert_eq!(version_for(&server, "steady", &token).await, "v2");
        let counted = rollout(&server, As::Builder(&key), "steady").await;
        assert_eq!(counted["rollout"]["candidate"]["calls"], 1, "{counted}");
        server.stop().await;
        key
    };
    let server = TestServer::start_in(dir.path()).await;
    let owner = As::Builder(&key);
    let token = credit(&server).await;
    assert_eq!(version_for(&server, "steady", &token).await, "v2");
    let counted = rollout(&server, owner, "steady").await;
    assert_eq!(counted["rollout"]["candidate"]["calls"], 2, "{counted}");
    assert_eq!(counted["rollout"]["share"], 100, "{counted}");
    let (status, body) = server
        .call("DELETE", "/ai/endpoints/steady", owner, None)
        .await;
    assert_eq!(status, 200, "{body}");
    let id = body["endpoint"]["id"].as_str().map(str::to_string);
    let left = server
        .app
        .store
        .scan_prefix(toolhost::store::Tree::Logs, b"rollout/", None, 100)
        .await
        .unwrap();
    assert!(
        left.is_empty(),
        "counts left after delete ({id:?}): {}",
        left.len()
    );
}
