//! A builder's JS endpoint from create to invoke: admin-granted capabilities, create-time files,
//! secrets in `ctx.env` but redacted from logs, invocation logs and events, code updates and
//! admin-set limits taking effect at once.

use serde_json::{json, Value};

use crate::util::{assert_error, As, TestServer};

const SECRET: &str = "sk-runtime-test-8f1c2e9a7b";

const SOURCE: &str = r#"
export default async function (req, ctx) {
  ctx.log.info("using key " + ctx.env.API_KEY + " in mode " + ctx.env.MODE);
  const words = (await ctx.files.read("data/words.txt")).split("\n").length;
  const seen = ((await ctx.kv.get("calls")) || 0) + 1;
  await ctx.kv.set("calls", seen);
  return { words, seen, keyLength: ctx.env.API_KEY.length };
}
"#;

#[tokio::test]
async fn builder_js_endpoint_runs_with_granted_capabilities_secrets_and_logs() {
    // A default handler time limit longer than the request deadline: a `timeout` answer (not
    // `request_timeout`) then proves the endpoint's own limit applied.
    let server = TestServer::start_with(|c| {
        c.runtime.pool.default_limits.timeout = std::time::Duration::from_secs(120);
        c.limits.request_timeout = std::time::Duration::from_secs(20);
    })
    .await;
    let endpoint = json!({
        "slug": "word-runner", "title": "Word runner", "description": "Counts bundled words.",
        "priceUsd": 0, "handlerType": "js_request_response", "source": SOURCE,
        "inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "required": ["words"]},
        "capabilities": {"kv": true, "files": true, "logs": true},
        "env": {"MODE": "fast"}, "files": {"data/words.txt": "alpha\nbeta\ngamma"},
        "safetyAttestation": {"accepted": true},
    });
    let (key, _) = server.builder_with("Runner", &endpoint).await;
    let owner = As::Builder(&key);
    let (status, _) = server
        .call(
            "POST",
            "/ai/endpoints/word-runner/secrets",
            owner,
            Some(&json!({"set": {"API_KEY": SECRET}})),
        )
        .await;
    assert_eq!(status, 200);

    // Requested is not granted: the endpoint is not callable until the admin grants it.
    let (status, body) = server.post("/tools/word-runner", &json!({})).await;
    assert_error(status, &body, 503, "awaiting_grant");

    server
        .grant(
            "word-runner",
            json!({"kv": true, "files": true, "logs": true}),
        )
        .await;
    for expected_seen in 1..=2 {
        let (status, body) = server.post("/tools/word-runner", &json!({})).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            body,
            json!({"words": 3, "seen": expected_seen, "keyLength": SECRET.len()})
        );
    }

    // Logs: newest first, with status, duration, request id and the redacted line.
    let (status, text) = server
        .call_text("GET", "/ai/endpoints/word-runner/logs", owner, None)
        .await;
    assert_eq!(status, 200);
    assert!(
        !text.contains(SECRET),
        "the secret never appears in logs: {text}"
    );
    let logs: Value = serde_json::from_str(&text).unwrap();
    let entries = logs["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "the refused call never ran: {logs}");
    assert_eq!(entries[0]["status"], 200);
    assert_eq!(entries[1]["status"], 200);
    assert!(
        entries[0]["requestId"]
            .as_str()
            .is_some_and(|id| !id.is_empty()),
        "{logs}"
    );
    let line = entries[0]["lines"][0]["message"].as_str().unwrap();
    assert_eq!(line, "using key [REDACTED] in mode fast");

    // Events: the owner sees the invocations.
    let kinds = server
        .event_kinds(owner, "since=1h&endpointSlug=word-runner")
        .await;
    let count = |k: &str| kinds.iter().filter(|x| *x == k).count();
    assert_eq!(
        (count("invocation_succeeded"), count("invocation_failed")),
        (2, 0),
        "{kinds:?}"
    );

    // New source that asks for nothing new takes effect on the next call (the old isolate is
    // retired), with the grant it had.
    let update =
        json!({"source": "export default async function () { return { words: 0, version: 2 }; }"});
    server.patch(owner, "word-runner", &update).await;
    let all = json!({"kv": true, "files": true, "logs": true});
    let (_, body) = server.post("/tools/word-runner", &json!({})).await;
    assert_eq!(body, json!({"words": 0, "version": 2}));

    // An admin-set time limit applies to the endpoint's next invocation.
    let looping = json!({"source": "export default async function () { for (;;) {} }"});
    server.patch(owner, "word-runner", &looping).await;
    let limits = json!({"limits": {"memoryMb": 32, "timeoutMs": 100}, "grantedCapabilities": all});
    server.patch(As::Admin, "word-runner", &limits).await;
    let (status, body) = server.post("/tools/word-runner", &json!({})).await;
    assert_error(status, &body, 504, "timeout");
}

#[tokio::test]
async fn http_get_json_honours_the_endpoint_host_allow_list() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let peer = listener.local_addr().unwrap();
    let app = axum::Router::new().route(
        "/data",
        axum::routing::get(|| async { axum::Json(json!({"n": 7})) }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let server = TestServer::start_with(|c| c.outbound.allow_loopback = true).await;
    let source = "export default async function (req, ctx) { try { return { body: await ctx.httpGetJson(req.input.url) }; } catch (e) { return { code: e.code }; } }";
    server
        .create(
            As::Admin,
            &json!({
                "slug": "fetcher", "title": "Fetcher", "description": "Fetches JSON.", "priceUsd": 0,
                "handlerType": "js_request_response", "source": source,
                "capabilities": {"httpGetJson": true}, "allowedHosts": ["api.example.com", "*.example.org"],
            }),
        )
        .await;
    let url = json!({"url": format!("http://{peer}/data")});
    let (_, body) = server.post("/tools/fetcher", &url).await;
    assert_eq!(body, json!({"code": "host_not_allowed"}));
    let patch = json!({"allowedHosts": ["127.0.0.1"]});
    server.patch(As::Admin, "fetcher", &patch).await;
    let (_, body) = server.post("/tools/fetcher", &url).await;
    assert_eq!(body, json!({"body": {"n": 7}}));
    let bad = json!({"allowedHosts": ["Not A Host"]});
    let (status, body) = server
        .call("PATCH", "/ai/endpoints/fetcher", As::Admin, Some(&bad))
        .await;
    assert_error(status, &body, 422, "invalid_field");
}

#[tokio::test]
async fn paid_js_handlers_see_who_paid_and_unpaid_calls_never_run() {
    let server = TestServer::start().await;
    let source = "export default async function (req, ctx) { return { payment: req.payment, headers: req.headers }; }";
    server
        .create(
            As::Admin,
            &json!({
                "slug": "paid-js", "title": "Paid JS", "description": "Shows its payment.", "priceUsd": 0.01,
                "handlerType": "js_request_response", "source": source,
            }),
        )
        .await;
    let (status, body) = server.post("/tools/paid-js", &json!({})).await;
    assert_eq!(status, 402, "{body}");
    let (status, logs) = server
        .call("GET", "/ai/endpoints/paid-js/logs", As::Admin, None)
        .await;
    assert_eq!(
        (status.as_u16(), logs["entries"].clone()),
        (200, json!([])),
        "an unpaid call never reaches the handler"
    );

    let (_, grant) = server
        .call(
            "POST",
            "/ai/admin/credits",
            As::Admin,
            Some(&json!({"amountUsd": 1})),
        )
        .await;
    let token = grant["credit"]["token"].as_str().unwrap().to_string();
    let (status, body) = server
        .call(
            "POST",
            "/tools/paid-js",
            As::Header("x-developer-credit", &token),
            Some(&json!({})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["payment"]["method"], "developer_credit");
    assert_eq!(body["payment"]["priceUsd"], "0.01");
    assert_eq!(body["payment"]["amount"], "10000");
    assert!(
        !body["payment"]["payer"].as_str().unwrap().contains(&token),
        "the credit token is masked"
    );
    assert!(
        body["headers"].get("x-developer-credit").is_none(),
        "payment proofs never reach handlers: {body}"
    );
    assert!(body["receipt"]["receiptId"].is_string(), "{body}");
}

#[tokio::test]
async fn a_busy_endpoint_answers_429_with_retry_after() {
    let server = TestServer::start_with(|c| {
        c.runtime.pool.max_concurrent_per_endpoint = 1;
        c.runtime.pool.instances_per_endpoint = 1;
        c.runtime.pool.default_limits.timeout = std::time::Duration::from_secs(3);
    })
    .await;
    let source = "export default async function () { for (;;) {} }";
    server
        .create(
            As::Admin,
            &json!({"slug": "hog", "title": "Hog", "description": "Spins.", "priceUsd": 0, "handlerType": "js_request_response", "source": source}),
        )
        .await;
    let calls = (0..4).map(|_| {
        server
            .client
            .post(server.url("/tools/hog"))
            .json(&json!({}))
            .send()
    });
    let responses = futures::future::join_all(calls).await;
    let mut statuses = Vec::new();
    for response in responses {
        let response = response.unwrap();
        if response.status() == 429 {
            assert_eq!(response.headers()["retry-after"], "1");
            let (status, body) = crate::util::read(response).await;
            assert_error(status, &body, 429, "overloaded");
            statuses.push(429);
        } else {
            statuses.push(response.status().as_u16());
        }
    }
    statuses.sort();
    assert_eq!(
        statuses,
        [429, 429, 429, 504],
        "one call runs (and times out), the rest are turned away"
    );
}

/// Sets or deletes `req.input.key` in `ctx.kv`; reports the operation's error code instead of
/// failing, so the test sees `quota_exceeded` itself.
const KV_WRITER: &str = r#"
export default async function (req, ctx) {
  const { op, key } = req.input;
  try {
    if (op === "set") await ctx.kv.set(key, "v");
    else await ctx.kv.delete(key);
    return { done: true };
  } catch (e) {
    return { done: false, code: e.code, message: e.message };
  }
}
"#;

#[tokio::test]
async fn kv_quota_totals_span_a_builders_endpoints_free_up_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // Two keys per endpoint, three for all of a builder's endpoints together.
    let start = || {
        let data = data.clone();
        TestServer::start_with(move |c| {
            c.data_dir = data;
            c.runtime.quotas.kv_keys = 2;
            c.runtime.quotas.builder_kv_keys = 3;
        })
    };
    let server = start().await;
    let endpoint = |slug: &str| {
        json!({
            "slug": slug, "title": "KV writer", "description": "Writes a key.", "priceUsd": 0,
            "handlerType": "js_request_response", "source": KV_WRITER,
            "capabilities": {"kv": true}, "safetyAttestation": {"accepted": true},
        })
    };
    let (_, key) = server.builder("Hoarder").await;
    let (_, other) = server.builder("Neighbour").await;
    for (slug, owner) in [("kv-a", &key), ("kv-b", &key), ("kv-c", &other)] {
        server.create(As::Builder(owner), &endpoint(slug)).await;
        server.grant(slug, json!({"kv": true})).await;
    }
    async fn kv(server: &TestServer, slug: &str, op: &str, key: &str) -> Value {
        let input = json!({"op": op, "key": key});
        let (status, body) = server.post(&format!("/tools/{slug}"), &input).await;
        assert_eq!(status, 200, "{body}");
        body
    }
    let stored = json!({"done": true});
    for (slug, k) in [("kv-a", "1"), ("kv-a", "2"), ("kv-b", "1")] {
        assert_eq!(kv(&server, slug, "set", k).await, stored);
    }
    // kv-b holds one key of its two, but the builder holds three of its three.
    let refused = kv(&server, "kv-b", "set", "2").await;
    assert_eq!(refused["code"], "quota_exceeded", "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("builder's total kv quota"),
        "{refused}"
    );
    // Another builder's endpoint is not affected.
    for k in ["1", "2"] {
        assert_eq!(kv(&server, "kv-c", "set", k).await, stored);
    }

    // The count survives a restart.
    server.stop().await;
    let server = start().await;
    assert_eq!(
        kv(&server, "kv-b", "set", "2").await["code"],
        "quota_exceeded"
    );
    // Deleting a key frees its room for any of the builder's endpoints.
    assert_eq!(kv(&server, "kv-a", "delete", "1").await, stored);
    assert_eq!(kv(&server, "kv-b", "set", "2").await, stored);
    // Deleting an endpoint frees all of its room.
    let (status, body) = server
        .call("DELETE", "/ai/endpoints/kv-a", As::Builder(&key), None)
        .await;
    assert_eq!(status, 200, "{body}");
    server.create(As::Builder(&key), &endpoint("kv-d")).await;
    server.grant("kv-d", json!({"kv": true})).await;
    assert_eq!(kv(&server, "kv-d", "set", "1").await, stored);
    assert_eq!(
        kv(&server, "kv-d", "set", "2").await["code"],
        "quota_exceeded",
        "kv-b 2 and kv-d 1: the builder's three"
    );
}
