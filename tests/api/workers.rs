//! Handlers answering callers the ways builders expect, through the real server: a
//! Workers-style `export default { fetch(request, env, ctx) }` module, and a handler refusing
//! a caller by throwing a 4xx `status` (400 `handler_refused` in the one error shape), on
//! `/tools/{slug}`, `/ai/invoke` and MCP `tools/call`; paid calls refused that way charge
//! nothing, as a handler's own non-2xx answer; hostile thrown values and a `fetch` that never
//! settles end as a clean 500 or the time limit.

use alloy_signer_local::PrivateKeySigner;
use serde_json::{json, Value};

use crate::payments::{ask, pay};
use crate::util::{assert_error, assert_payment_required, post_paid, As, TestServer};

fn js(slug: &str, price: f64, source: &str) -> Value {
    json!({
        "slug": slug, "title": "Answers", "description": "Answers callers its own way.",
        "priceUsd": price, "source": source, "inputSchema": {"type": "object"},
        "capabilities": {"kv": true}, "safetyAttestation": {"accepted": true},
    })
}

/// MCP `tools/call` of `name`: the JSON-RPC result.
async fn mcp_call(server: &TestServer, name: &str, arguments: Value) -> Value {
    server.mcp_tools_call(name, arguments, json!({})).await
}

/// The JSON text of an MCP result's first content item.
fn mcp_text(result: &Value) -> Value {
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

const WORKER: &str = r#"export default {
  async fetch(request, env, ctx) {
    const input = await request.json();
    if (input.status) return Response.json({ refused: input.status }, { status: input.status });
    const last = await ctx.kv.get("last");
    ctx.waitUntil(ctx.kv.set("last", input.city));
    return Response.json({
      city: input.city,
      method: request.method,
      url: request.url,
      agent: request.headers.get("user-agent"),
      builderKey: request.headers.get("x-builder-key"),
      mode: env.MODE,
      token: env.TOKEN === undefined ? "missing" : "present",
      last,
    }, { status: 201, headers: { "x-model": "m1" } });
  },
};"#;

#[tokio::test]
async fn a_workers_style_module_is_published_and_answers_on_every_route() {
    let server = TestServer::start().await;
    let mut body = js("worker", 0.0, WORKER);
    body["env"] = json!({"MODE": "fast"});
    let (key, _) = server.builder_with("Worker", &body).await;
    server.grant("worker", json!({"kv": true})).await;
    let (status, _) = server
        .call(
            "POST",
            "/ai/endpoints/worker/secrets",
            As::Builder(&key),
            Some(&json!({"set": {"TOKEN": "tok-secret-1"}})),
        )
        .await;
    assert_eq!(status, 200);

    // /tools/{slug}: the Response's status, allowed headers and JSON body; the Request has
    // the input as its JSON body, the tool's URL and only the visible caller headers.
    let response = server
        .client
        .post(server.url("/tools/worker"))
        .header("user-agent", "agent/1.0")
        .header("x-builder-key", &key)
        .json(&json!({"city": "Oslo"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(response.headers()["x-model"], "m1");
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["city"], "Oslo", "{answer}");
    assert_eq!(answer["method"], "POST");
    assert_eq!(answer["url"], server.url("/tools/worker"));
    assert_eq!(answer["agent"], "agent/1.0");
    assert_eq!(
        answer["builderKey"],
        Value::Null,
        "credentials never reach a handler"
    );
    assert_eq!(
        (&answer["mode"], &answer["token"]),
        (&json!("fast"), &json!("present"))
    );
    assert_eq!(answer["last"], Value::Null);

    // /ai/invoke: the same handler, the same Request (POST with the input).
    let (status, body) = server
        .post(
            "/ai/invoke",
            &json!({"slug": "worker", "input": {"city": "Rome"}}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        (&body["ok"], &body["result"]["city"]),
        (&json!(true), &json!("Rome"))
    );
    assert_eq!(body["result"]["url"], server.url("/tools/worker"));
    // The first call's ctx.waitUntil write was done.
    assert_eq!(body["result"]["last"], "Oslo");

    // MCP: a 2xx is a result, the handler's own 4xx an error result with its body.
    let result = mcp_call(&server, "worker", json!({"city": "Lima"})).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structuredContent"]["city"], "Lima", "{result}");
    let result = mcp_call(&server, "worker", json!({"status": 409})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(mcp_text(&result), json!({"refused": 409}));
    let (status, body) = server.post("/tools/worker", &json!({"status": 409})).await;
    assert_eq!((status.as_u16(), body), (409, json!({"refused": 409})));
}

/// Throws what the input asks for; the secret is the endpoint's.
const REFUSES: &str = "export default async function (req, ctx) {\n\
  const { want } = req.input;\n\
  if (want === 'error') throw Object.assign(new Error('bad city for ' + ctx.env.TOKEN), { status: 400 });\n\
  if (want === 'response') throw new Response('no such city', { status: 404 });\n\
  if (want === 'server') throw Object.assign(new Error('upstream down'), { status: 503 });\n\
  if (want === 'huge') throw { status: 422, message: 'x'.repeat(100000) };\n\
  if (want === 'status-throws') throw { get status() { throw new Error('boom'); }, message: 'odd' };\n\
  if (want === 'status-loops') throw { get status() { for (;;) {} } };\n\
  if (want === 'respond') return ctx.respond(400, { reason: 'bad city' });\n\
  return { ok: true };\n\
}\n";

#[tokio::test]
async fn a_thrown_4xx_status_refuses_the_caller_on_every_route() {
    let server = TestServer::start().await;
    let (key, _) = server
        .builder_with("Refuser", &js("refuser", 0.0, REFUSES))
        .await;
    server.grant("refuser", json!({"kv": true})).await;
    let owner = As::Builder(&key);
    let secret = "tok-refuser-77f1";
    let (status, _) = server
        .call(
            "POST",
            "/ai/endpoints/refuser/secrets",
            owner,
            Some(&json!({"set": {"TOKEN": secret}})),
        )
        .await;
    assert_eq!(status, 200);

    // HTTP: the thrown status, `handler_refused`, the thrown message with secrets redacted,
    // and nothing else (no position, no stack).
    let (status, text) = server
        .call_text(
            "POST",
            "/tools/refuser",
            As::Nobody,
            Some(&json!({"want": "error"})),
        )
        .await;
    assert_eq!(status, 400, "{text}");
    assert!(!text.contains(secret), "{text}");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_error(status, &body, 400, "handler_refused");
    assert_eq!(body["error"]["message"], "bad city for [REDACTED]");
    assert_eq!(body["error"].as_object().unwrap().len(), 2, "{body}");
    let (status, body) = server
        .post("/tools/refuser", &json!({"want": "response"}))
        .await;
    assert_error(status, &body, 404, "handler_refused");
    assert_eq!(body["error"]["message"], "no such city");
    let (status, body) = server
        .post("/tools/refuser", &json!({"want": "huge"}))
        .await;
    assert_error(status, &body, 422, "handler_refused");
    assert_eq!(
        body["error"]["message"].as_str().unwrap().chars().count(),
        2049
    );
    // A thrown status outside 4xx stays a handler fault.
    let (status, body) = server
        .post("/tools/refuser", &json!({"want": "server"}))
        .await;
    assert_error(status, &body, 500, "handler_error");

    // /ai/invoke: the same error answer.
    let (status, body) = server
        .post(
            "/ai/invoke",
            &json!({"slug": "refuser", "input": {"want": "error"}}),
        )
        .await;
    assert_error(status, &body, 400, "handler_refused");
    assert_eq!(body["error"]["message"], "bad city for [REDACTED]");

    // MCP: an error result whose text is the same error body.
    let result = mcp_call(&server, "refuser", json!({"want": "response"})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        mcp_text(&result)["error"],
        json!({"code": "handler_refused", "message": "no such city"})
    );

    // The owner sees the refusal in the logs and events: code, message, position.
    let (status, text) = server
        .call_text("GET", "/ai/endpoints/refuser/logs?limit=100", owner, None)
        .await;
    assert_eq!(status, 200);
    assert!(!text.contains(secret), "{text}");
    let logs: Value = serde_json::from_str(&text).unwrap();
    let refused = logs["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["status"] == 400)
        .unwrap_or_else(|| panic!("{logs}"));
    assert_eq!(refused["error"]["code"], "handler_refused", "{logs}");
    assert_eq!(refused["error"]["message"], "bad city for [REDACTED]");
    assert_eq!(refused["error"]["line"], 3, "{refused}");
    assert!(refused["error"]["column"].as_u64().is_some(), "{refused}");
    let (_, feed) = server
        .call(
            "GET",
            "/ai/builders/events?since=1h&endpointSlug=refuser",
            owner,
            None,
        )
        .await;
    assert!(
        feed["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "invocation_failed"
                && e["data"]["status"] == 400
                && e["data"]["error"]["code"] == "handler_refused"),
        "{feed}"
    );
}

#[tokio::test]
async fn hostile_thrown_values_and_stuck_fetches_end_cleanly() {
    let server = TestServer::start().await;
    let (_, _) = server
        .builder_with("Hostile", &js("hostile-refuser", 0.0, REFUSES))
        .await;
    server.grant("hostile-refuser", json!({"kv": true})).await;
    let (status, body) = server
        .post("/tools/hostile-refuser", &json!({"want": "status-throws"}))
        .await;
    assert_error(status, &body, 500, "handler_error");
    assert_eq!(body["error"]["message"], "handler error: odd");
    let (status, body) = server
        .post("/tools/hostile-refuser", &json!({"want": "status-loops"}))
        .await;
    assert_error(status, &body, 504, "timeout");

    let stuck = "export default { fetch: () => new Promise(() => {}) };";
    server
        .builder_with(
            "Stuck",
            &json!({
                "slug": "stuck-worker", "title": "Stuck", "description": "Never answers.",
                "priceUsd": 0, "source": stuck, "safetyAttestation": {"accepted": true},
            }),
        )
        .await;
    let (status, body) = server.post("/tools/stuck-worker", &json!({})).await;
    assert_error(status, &body, 504, "timeout");
    // The server still answers the well-behaved.
    let (status, body) = server
        .post("/tools/hostile-refuser", &json!({"want": "ok"}))
        .await;
    assert_eq!((status.as_u16(), body), (200, json!({"ok": true})));
}

/// A paid call its handler refuses by throwing is treated as a handler's own non-2xx answer
/// (`ctx.respond(400)` or a 4xx `Response`): nothing settled, no receipt, the payment's nonce
/// released, so the same signed authorization then pays for a call that succeeds, once.
#[tokio::test]
async fn a_refused_paid_call_charges_nothing_like_a_non_2xx_answer() {
    let server = TestServer::start().await;
    server
        .builder_with("Seller", &js("paid-refuser", 0.002, REFUSES))
        .await;
    server.grant("paid-refuser", json!({"kv": true})).await;
    let path = "/tools/paid-refuser";
    let signer = PrivateKeySigner::random();
    let required = ask(&server, path).await;
    let header = pay(&signer, &required, 2, |_| {});
    for (want, status, code) in [
        ("respond", 400, None),
        ("error", 400, Some("handler_refused")),
        ("response", 404, Some("handler_refused")),
    ] {
        let (got, headers, body) = post_paid(&server, path, &header, json!({"want": want})).await;
        assert_eq!(got.as_u16(), status, "{want}: {body}");
        if let Some(code) = code {
            assert_eq!(body["error"]["code"], code, "{want}: {body}");
        }
        assert!(
            headers.get("payment-response").is_none() && headers.get("x-receipt-id").is_none(),
            "{want}: {headers:?}"
        );
        assert!(body.get("receipt").is_none(), "{want}: {body}");
    }
    let (status, headers, body) = post_paid(&server, path, &header, json!({"want": "ok"})).await;
    assert_eq!(status, 200, "{body}");
    assert!(headers.contains_key("payment-response"));
    assert_eq!(body["receipt"]["charged"], true, "{body}");
    let (status, _, body) = post_paid(&server, path, &header, json!({"want": "ok"})).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
}
