//! Hostile callers and builders (issue 19): each attack, bounded in count and time, on loopback.

use std::time::Duration;

use serde_json::{json, Value};
use toolhost::config::Config;
use toolhost::server::Server;

use crate::util::{assert_error, seed_fixture, static_endpoint, As, TestServer};

/// Hang guard for the hostile tests: far above what each needs, so only a hang trips it.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// The issue's pattern: catastrophic for a backtracking engine, and its lookbehind is beyond a
/// linear-time one.
const LOOKBEHIND: &str = r"^(\w+\s?)*(?<!x)$";

fn with_pattern(slug: &str, pattern: &str) -> Value {
    let mut body = static_endpoint(slug);
    body["inputSchema"] = json!({
        "type": "object",
        "properties": {"text": {"type": "string", "pattern": pattern}},
    });
    body
}

#[tokio::test]
async fn schema_patterns_a_linear_engine_cannot_run_are_refused_at_publish() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("patterns").await;
    let (status, body) = server
        .call(
            "POST",
            "/ai/endpoints/create",
            As::Builder(&key),
            Some(&with_pattern("lookbehind", LOOKBEHIND)),
        )
        .await;
    assert_error(status, &body, 422, "invalid_schema");
    assert_eq!(body["error"]["details"]["field"], "inputSchema", "{body}");
    assert_eq!(
        body["error"]["details"]["pointer"], "/properties/text/pattern",
        "{body}"
    );
    // PATCH, on the output schema and in patternProperties.
    server
        .create(As::Builder(&key), &static_endpoint("patched"))
        .await;
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/patched",
            As::Builder(&key),
            Some(&json!({"outputSchema": {"patternProperties": {"(a)\\1": {}}}})),
        )
        .await;
    assert_error(status, &body, 422, "invalid_schema");
    assert_eq!(body["error"]["details"]["field"], "outputSchema", "{body}");
    assert_eq!(
        body["error"]["details"]["pointer"], "/patternProperties/(a)\\1",
        "{body}"
    );
    // A seed fixture with such a pattern stops start-up, naming it.
    let fixtures = tempfile::tempdir().unwrap();
    let mut fixture = with_pattern("seeded-lookbehind", LOOKBEHIND);
    fixture["outputSchema"] = json!({});
    fixture["exampleInput"] = json!({});
    fixture.as_object_mut().unwrap().remove("safetyAttestation");
    seed_fixture(fixtures.path(), &fixture);
    let data = tempfile::tempdir().unwrap();
    let mut config = Config::new(data.path());
    config.addr = "127.0.0.1:0".parse().unwrap();
    config.seed_dir = Some(fixtures.path().to_path_buf());
    let refused = Server::bind(config).await.err().expect("seeding refuses");
    assert!(
        refused.to_string().contains("/properties/text/pattern"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_backtracking_pattern_validates_a_large_input_without_stalling_the_server() {
    tokio::time::timeout(HANG_GUARD, async {
        let server = TestServer::start().await;
        let (_, key) = server.builder("slow-patterns").await;
        // Accepted by the linear engine; exponential in a backtracking one on a near miss.
        server
            .create(As::Builder(&key), &with_pattern("words", r"^(\w+\s?)*$"))
            .await;
        // 6.6 KB of words ending in a character the pattern refuses.
        let text = format!("{}!", "abcde ".repeat(1100));
        let near_miss = json!({ "text": text });
        let matching = json!({ "text": text.trim_end_matches('!') });
        let calls = [&near_miss, &matching, &near_miss].map(|body| {
            let client = server.client.clone();
            let url = server.url("/tools/words");
            let body = body.clone();
            tokio::spawn(async move {
                let response = client.post(url).json(&body).send().await.unwrap();
                crate::util::read(response).await
            })
        });
        let (health, _) = server.get("/healthz").await;
        assert_eq!(health, 200);
        let mut outcomes = Vec::new();
        for call in calls {
            outcomes.push(call.await.unwrap());
        }
        assert_error(outcomes[0].0, &outcomes[0].1, 422, "input_invalid");
        assert_eq!(
            outcomes[0].1["error"]["details"]["violations"][0]["pointer"], "/text",
            "{}",
            outcomes[0].1
        );
        assert_eq!(outcomes[1].0, 200, "{}", outcomes[1].1);
        assert_error(outcomes[2].0, &outcomes[2].1, 422, "input_invalid");
    })
    .await
    .expect("validation finished");
}

/// An admin-created JS endpoint (granted, not scanned) running `source`.
fn js(slug: &str, price: f64, source: &str) -> Value {
    json!({
        "slug": slug,
        "title": "Forger",
        "description": "Tries to forge what the server says.",
        "priceUsd": price,
        "handlerType": "js_request_response",
        "source": source,
    })
}

async fn credit(server: &TestServer) -> String {
    credit_of(server, 1.0).await.0
}

/// A developer credit of `usd`: its token and id.
pub(crate) async fn credit_of(server: &TestServer, usd: f64) -> (String, String) {
    let (status, body) = server
        .call(
            "POST",
            "/ai/admin/credits",
            As::Admin,
            Some(&json!({"amountUsd": usd})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    (
        body["credit"]["token"].as_str().unwrap().to_string(),
        body["credit"]["creditId"].as_str().unwrap().to_string(),
    )
}

/// The balance of credit `id`, in atomic units, as the admin lists it.
pub(crate) async fn credit_balance(server: &TestServer, id: &str) -> String {
    let (status, body) = server
        .call("GET", "/ai/admin/credits", As::Admin, None)
        .await;
    assert_eq!(status, 200, "{body}");
    let credits = body["credits"].as_array().unwrap();
    let credit = credits.iter().find(|c| c["creditId"] == id).unwrap();
    credit["balanceUnits"].as_str().unwrap().to_string()
}

/// A credit is reserved before the handler runs: six concurrent calls on a credit worth one
/// call run the handler once and the others are refused; a failing call gives the credit back.
#[tokio::test]
async fn a_credit_worth_one_call_runs_the_handler_once() {
    let server = TestServer::start().await;
    // Busy for 300 ms, so every call arrives while the first is still running.
    let slow = "export default (req) => { const end = Date.now() + 300; \
        while (Date.now() < end) {} \
        if (req.input.fail) throw new Error('failed on purpose'); return { done: true }; };";
    server.create(As::Admin, &js("one-call", 0.01, slow)).await;
    let (token, id) = credit_of(&server, 0.01).await;
    let call = |input: Value| {
        server
            .client
            .post(server.url("/tools/one-call"))
            .header("x-developer-credit", &token)
            .json(&input)
            .send()
    };
    let answers = tokio::time::timeout(
        HANG_GUARD,
        futures::future::join_all((0..6).map(|_| call(json!({})))),
    )
    .await
    .expect("the calls end");
    let mut served = 0;
    for answer in answers {
        let (status, body) = crate::util::read(answer.unwrap()).await;
        if status == 200 {
            served += 1;
            assert_eq!(body["receipt"]["paymentMethod"], "developer_credit");
        } else {
            assert_eq!(status, 402, "{body}");
            assert_eq!(body["code"], "insufficient_developer_credit", "{body}");
        }
    }
    assert_eq!(served, 1);
    assert_eq!(server.handler_runs("one-call").await, 1);
    assert_eq!(credit_balance(&server, &id).await, "0");

    // A failing call holds the credit while it runs and gives it back before answering.
    let (token, id) = credit_of(&server, 0.01).await;
    let call = |input: Value| {
        server
            .client
            .post(server.url("/tools/one-call"))
            .header("x-developer-credit", &token)
            .json(&input)
            .send()
    };
    let (status, body) = crate::util::read(call(json!({"fail": true})).await.unwrap()).await;
    assert_error(status, &body, 500, "handler_error");
    assert_eq!(credit_balance(&server, &id).await, "10000");
    let (status, body) = crate::util::read(call(json!({})).await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(credit_balance(&server, &id).await, "0");
    assert_eq!(server.handler_runs("one-call").await, 3);
}

async fn mcp_call(server: &TestServer, name: &str, meta: Value) -> Value {
    server.mcp_tools_call(name, json!({}), meta).await
}

#[tokio::test]
async fn handlers_cannot_forge_our_headers_proxy_controls_or_1xx_statuses() {
    let server = TestServer::start().await;
    for (i, (name, value)) in [
        ("x-receipt-id", "rcpt_forged"),
        ("X-Accel-Redirect", "/etc/passwd"),
        ("x-sendfile", "/etc/passwd"),
        ("x-toolhost-receipt", "1"),
        ("payment-response", "e30="),
        ("x-payment-response", "e30="),
        ("x-request-id", "forged"),
        ("connection", "upgrade"),
        ("transfer-encoding", "chunked"),
        ("content-length", "1"),
        ("set-cookie", "a=b"),
    ]
    .into_iter()
    .enumerate()
    {
        let slug = format!("forge-header-{i}");
        let source = format!(
            "export default (req, ctx) => ctx.respond(200, {{ok: true}}, {{{name:?}: {value:?}}});"
        );
        server.create(As::Admin, &js(&slug, 0.0, &source)).await;
        let response = server
            .client
            .post(server.url(&format!("/tools/{slug}")))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        let headers = response.headers().clone();
        let (status, body) = crate::util::read(response).await;
        assert_error(status, &body, 500, "invalid_handler_response");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&name.to_ascii_lowercase()),
            "{body}"
        );
        assert!(!headers.contains_key("x-accel-redirect") && !headers.contains_key("x-sendfile"));
        assert!(
            headers.get("x-request-id").is_some_and(|v| v != "forged"),
            "{headers:?}"
        );
    }
    for (i, status) in [101, 100, 199, 600].into_iter().enumerate() {
        let slug = format!("forge-status-{i}");
        let source = format!("export default (req, ctx) => ctx.respond({status}, {{}});");
        server.create(As::Admin, &js(&slug, 0.0, &source)).await;
        let (got, body) = server.post(&format!("/tools/{slug}"), &json!({})).await;
        assert_error(got, &body, 500, "invalid_handler_response");
    }
    // The statuses handlers keep.
    server
        .create(
            As::Admin,
            &js(
                "teapot",
                0.0,
                "export default (req, ctx) => ctx.respond(418, {tea: true}, {'x-cache': 'hit'});",
            ),
        )
        .await;
    let response = server
        .client
        .post(server.url("/tools/teapot"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 418);
    assert_eq!(response.headers()["x-cache"], "hit");
}

#[tokio::test]
async fn the_receipt_in_http_and_mcp_answers_is_always_the_real_one() {
    let server = TestServer::start().await;
    let forged =
        "export default () => ({ receipt: { receiptId: 'rcpt_forged', amountUsd: '0' } });";
    server
        .create(As::Admin, &js("forged-free", 0.0, forged))
        .await;
    server
        .create(As::Admin, &js("forged-paid", 0.01, forged))
        .await;

    // Free: no receipt is issued, and none is made up from the handler's body.
    let result = mcp_call(&server, "forged-free", json!({})).await;
    assert_eq!(result["isError"], false, "{result}");
    assert!(result["_meta"]["toolhost/receipt"].is_null(), "{result}");

    // Paid: the real receipt replaces the body's, over HTTP and MCP.
    let token = credit(&server).await;
    let response = server
        .client
        .post(server.url("/tools/forged-paid"))
        .header("x-developer-credit", &token)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let ids: Vec<String> = response
        .headers()
        .get_all("x-receipt-id")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    let (status, body) = crate::util::read(response).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!(body["receipt"]["receiptId"], ids[0].as_str());
    assert_ne!(ids[0], "rcpt_forged");
    let result = mcp_call(
        &server,
        "forged-paid",
        json!({"toolhost/developer-credit": token}),
    )
    .await;
    let receipt = &result["_meta"]["toolhost/receipt"];
    let id = receipt["receiptId"].as_str().expect("receipt id");
    assert_ne!(id, "rcpt_forged", "{result}");
    let (status, stored) = server.get(&format!("/ai/receipts/{id}")).await;
    assert_eq!(status, 200, "{stored}");
}

#[tokio::test]
async fn content_safety_scans_schemas() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("schema-writer").await;
    let cases = [
        (
            json!({"type": "object", "properties": {"key": {"type": "string",
                "default": "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"}}}),
            "secret.hex_private_key",
            "block",
        ),
        (
            json!({"type": "object", "examples": [{"card": "4111 1111 1111 1111"}]}),
            "private.card_number",
            "block",
        ),
        (
            json!({"type": "object", "properties": {"to": {"type": "string",
                "description": "Questions? Mail jane.doe@gmail.com"}}}),
            "private.email",
            "review",
        ),
    ];
    for (i, (schema, rule, outcome)) in cases.into_iter().enumerate() {
        for field in ["inputSchema", "outputSchema"] {
            let slug = format!("schema-{i}-{}", field.len());
            let mut body = static_endpoint(&slug);
            body[field] = schema.clone();
            let (status, text) = server
                .call_text(
                    "POST",
                    "/ai/endpoints/create",
                    As::Builder(&key),
                    Some(&body),
                )
                .await;
            let response: Value = serde_json::from_str(&text).unwrap();
            let findings = if outcome == "block" {
                assert_error(status, &response, 422, "content_blocked");
                response["error"]["details"]["findings"].clone()
            } else {
                assert_eq!(status, 200, "{response}");
                assert_eq!(response["endpoint"]["contentSafety"]["status"], "review");
                assert_eq!(response["endpoint"]["status"], "paused");
                response["endpoint"]["contentSafety"]["findings"].clone()
            };
            assert!(
                findings
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f["ruleId"] == rule && f["field"] == field && f["outcome"] == outcome),
                "{rule} in {field}: {findings}"
            );
            assert!(!text.contains("4111 1111 1111 1111") && !text.contains("0x4c0883a6910"));
        }
    }
    // PATCHing a schema is scanned too.
    server
        .create(As::Builder(&key), &static_endpoint("schema-patch"))
        .await;
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/schema-patch",
            As::Builder(&key),
            Some(&json!({"inputSchema": cases_card()})),
        )
        .await;
    assert_error(status, &body, 422, "content_blocked");
}

fn cases_card() -> Value {
    json!({"type": "object", "properties": {"n": {"enum": ["4111 1111 1111 1111"]}}})
}

#[tokio::test]
async fn quotes_do_not_reveal_endpoints_held_for_review() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("held").await;
    let (_, other) = server.builder("other").await;
    let mut body = static_endpoint("held-quote");
    body["priceUsd"] = json!(0.01);
    body["description"] = json!("Questions? Mail jane.doe@gmail.com");
    let created = server.create(As::Builder(&key), &body).await;
    assert_eq!(created["endpoint"]["contentSafety"]["status"], "review");
    let id = created["endpoint"]["id"].as_str().unwrap().to_string();
    let conversion = |service: &str| json!({"serviceId": service, "startNetwork": "eip155:8453", "startAsset": "ETH"});
    for who in [As::Nobody, As::Builder(&other)] {
        let (status, body) = server
            .call(
                "POST",
                "/ai/quote",
                who,
                Some(&json!({"slug": "held-quote"})),
            )
            .await;
        assert_error(status, &body, 404, "endpoint_not_found");
        assert!(!body.to_string().contains("Greeting"), "{body}");
        for service in ["held-quote", id.as_str()] {
            let (status, body) = server
                .call(
                    "POST",
                    "/ai/conversion/quote",
                    who,
                    Some(&conversion(service)),
                )
                .await;
            assert_error(status, &body, 404, "service_not_found");
        }
    }
    for who in [As::Admin, As::Builder(&key)] {
        let (status, body) = server
            .call(
                "POST",
                "/ai/quote",
                who,
                Some(&json!({"slug": "held-quote"})),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        let (status, body) = server
            .call("POST", "/ai/conversion/quote", who, Some(&conversion(&id)))
            .await;
        assert_eq!(status, 200, "{body}");
    }
}

#[tokio::test]
async fn anonymous_writes_are_rate_limited_per_client() {
    let server = TestServer::start_with(|c| {
        c.limits.anonymous_writes = Some(toolhost::config::RateLimit {
            per_minute: 60,
            burst: 3,
        })
    })
    .await;
    let quote = json!({"slug": "receipt-echo"});
    for _ in 0..3 {
        let (status, body) = server.post("/ai/quote", &quote).await;
        assert_eq!(status, 200, "{body}");
    }
    let response = server
        .client
        .post(server.url("/ai/quote"))
        .json(&quote)
        .send()
        .await
        .unwrap();
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    let (status, body) = crate::util::read(response).await;
    assert_error(status, &body, 429, "rate_limited");
    // Free calls, conversion quotes and registration attempts share the bucket.
    let (status, body) = server.post("/tools/receipt-echo", &json!({})).await;
    assert_error(status, &body, 429, "rate_limited");
    let (status, body) = server
        .post("/ai/builders/register", &json!({"name": "Spammer"}))
        .await;
    assert_error(status, &body, 429, "rate_limited");
    // Over MCP too, streamed answers included.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "receipt-echo", "arguments": {}}});
    for accept in ["application/json", "text/event-stream"] {
        let response = server
            .client
            .post(server.url("/ai/mcp"))
            .header("accept", accept)
            .header("mcp-protocol-version", "2025-11-25")
            .json(&call)
            .send()
            .await
            .unwrap();
        let text = response.text().await.unwrap();
        assert!(text.contains("rate_limited"), "{accept}: {text}");
    }
    // A paid endpoint's request that offers no payment costs the server as much as a free
    // call, and shares the bucket (issue 43).
    let (status, body) = server.post("/tools/receipt-echo-paid", &json!({})).await;
    assert_error(status, &body, 429, "rate_limited");
    // Reads, paid calls and admin work are not limited.
    let (status, _) = server.get("/ai/endpoints").await;
    assert_eq!(status, 200);
    let token = credit(&server).await;
    let response = server
        .client
        .post(server.url("/tools/receipt-echo-paid"))
        .header("x-developer-credit", token)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    // The bucket refills at one a second.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, body) = server.post("/tools/receipt-echo", &json!({})).await;
    assert_eq!(status, 200, "{body}");
}

/// Refused payments spend a bucket of their own per client: a client sending forged payments
/// is answered 429 before its next one is verified, while another client's payment, and the
/// same client's unpaid 402s and free calls, go on as before.
#[tokio::test]
async fn refused_payments_are_rate_limited_per_client() {
    let server = TestServer::start_with(|c| {
        c.limits.anonymous_writes = Some(toolhost::config::RateLimit {
            per_minute: 60,
            burst: 3,
        })
    })
    .await;
    let required = crate::payments::ask(&server, "/tools/receipt-echo-paid").await;
    let forger = alloy_signer_local::PrivateKeySigner::random();
    let victim = alloy_signer_local::PrivateKeySigner::random();
    let forged = || {
        crate::payments::pay(&forger, &required, 2, |authorization| {
            authorization.from = victim.address().to_checksum(None);
        })
    };
    for _ in 0..3 {
        let (status, _, body) =
            crate::util::post_paid(&server, "/tools/receipt-echo-paid", &forged(), json!({})).await;
        crate::util::assert_payment_required(status, &body, "invalid_exact_evm_payload_signature");
    }
    let (status, _, body) =
        crate::util::post_paid(&server, "/tools/receipt-echo-paid", &forged(), json!({})).await;
    assert_error(status, &body, 429, "rate_limited");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("refused"),
        "{body}"
    );
    // Another client pays as usual.
    let elsewhere = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .build()
        .unwrap();
    let (name, value) = crate::payments::pay(&victim, &required, 2, |_| {});
    let response = elsewhere
        .post(server.url("/tools/receipt-echo-paid"))
        .header(name, value)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    // The forger's free calls have their own tokens.
    let (status, body) = server.post("/tools/receipt-echo", &json!({})).await;
    assert_eq!(status, 200, "{body}");
}

/// Reads `stream` to its end; the bytes read, or `None` if it stayed open past `limit`.
async fn read_to_close(stream: &mut tokio::net::TcpStream, limit: Duration) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut seen = Vec::new();
    tokio::time::timeout(limit, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .ok()
    .map(|()| seen)
}

#[tokio::test]
async fn connections_that_hold_back_their_request_head_are_closed() {
    use tokio::io::AsyncWriteExt;
    let server = TestServer::start_with(|c| {
        c.limits.header_read_timeout = Duration::from_millis(300);
    })
    .await;
    let addr = server.base.trim_start_matches("http://").to_string();
    let started = std::time::Instant::now();
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ")
            .await
            .unwrap();
        held.push(stream);
    }
    // Connected but silent is held back too.
    held.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    for stream in &mut held {
        let closed = read_to_close(stream, Duration::from_secs(10)).await;
        assert!(closed.is_some(), "a held-back connection stayed open");
    }
    assert!(started.elapsed() >= Duration::from_millis(300));
    // A whole request on a fresh connection is served.
    let (status, _) = server.get("/healthz").await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn connections_over_the_cap_get_an_overload_answer() {
    tokio::time::timeout(HANG_GUARD, async {
        let server = TestServer::start_with(|c| c.limits.max_connections = Some(2)).await;
        let addr = server.base.trim_start_matches("http://").to_string();
        let mut held = Vec::new();
        for _ in 0..2 {
            held.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
        }
        // A fresh client, so no pooled connection is reused.
        let fresh = || {
            reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .unwrap()
        };
        let response = fresh().get(server.url("/healthz")).send().await.unwrap();
        assert_eq!(response.headers()["retry-after"], "1");
        let (status, body) = crate::util::read(response).await;
        assert_error(status, &body, 503, "overloaded");
        // A raw over-cap connection gets the same answer, then is closed.
        let mut extra = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let answer = read_to_close(&mut extra, Duration::from_secs(10))
            .await
            .unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(answer.contains("\"overloaded\""), "{answer}");
        drop(held);
        // Once the held connections are gone, requests are served again.
        let mut served = false;
        for _ in 0..100 {
            let response = fresh().get(server.url("/healthz")).send().await.unwrap();
            if response.status() == 200 {
                served = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            served,
            "requests are served after the held connections close"
        );
    })
    .await
    .expect("finished");
}

#[tokio::test]
async fn in_flight_requests_finish_on_shutdown() {
    let server = TestServer::start().await;
    server
        .create(
            As::Admin,
            &js(
                "slow",
                0.0,
                "export default () => { const end = Date.now() + 300; while (Date.now() < end) {} return {done: true}; };",
            ),
        )
        .await;
    let client = server.client.clone();
    let url = server.url("/tools/slow");
    let call = tokio::spawn(async move { client.post(url).json(&json!({})).send().await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    tokio::time::timeout(HANG_GUARD, server.stop())
        .await
        .expect("shutdown finished");
    let response = call.await.unwrap().expect("answered");
    assert_eq!(response.status(), 200);
}

/// A grant covers what the endpoint may reach (its own kv, files, the network), not one
/// version of its code: new code that asks for nothing new serves at once with it (a deploy
/// never takes a live tool offline); asking for more waits for the admin while the granted
/// revision serves on.
#[tokio::test]
async fn a_grant_covers_capabilities_and_new_code_keeps_it() {
    let server = TestServer::start().await;
    let reads_kv = "export default async (req, ctx) => ({ n: (await ctx.kv.get('n')) ?? 0 });";
    let mut body = crate::util::js_endpoint("granted-kv");
    body["priceUsd"] = json!(0);
    body.as_object_mut().unwrap().remove("pricingMode");
    body["source"] = json!(reads_kv);
    body["capabilities"] = json!({"kv": true});
    let (key, _) = server.builder_with("grantee", &body).await;
    server.grant("granted-kv", json!({"kv": true})).await;
    let (status, result) = server.post("/tools/granted-kv", &json!({})).await;
    assert_eq!(status, 200, "{result}");

    // New code keeps the grant and serves at once.
    let changed = "export default async (req, ctx) => ({ n: (await ctx.kv.get('n')) ?? 1 });";
    let patched = server
        .patch(As::Builder(&key), "granted-kv", &json!({"source": changed}))
        .await;
    assert_eq!(patched["endpoint"]["capabilities"]["kv"], true, "{patched}");
    assert_eq!(patched["endpoint"]["status"], "active");
    let (status, result) = server.post("/tools/granted-kv", &json!({})).await;
    assert_eq!(
        (status.as_u16(), &result["n"]),
        (200, &json!(1)),
        "{result}"
    );

    // More capabilities wait for the admin; the new code with them does not run meanwhile.
    let wants_files = "export default async (req, ctx) => ({ n: 2, f: await ctx.files.list() });";
    let patched = server
        .patch(
            As::Builder(&key),
            "granted-kv",
            &json!({"source": wants_files, "capabilities": {"kv": true, "files": true}}),
        )
        .await;
    assert_eq!(
        patched["endpoint"]["capabilities"]["files"], false,
        "{patched}"
    );
    assert_eq!(patched["manage"]["source"], changed);
    let (status, result) = server.post("/tools/granted-kv", &json!({})).await;
    assert_eq!(
        (status.as_u16(), &result["n"]),
        (200, &json!(1)),
        "{result}"
    );
}

#[tokio::test]
async fn receipts_of_recorded_only_payments_say_nothing_was_collected() {
    let server = TestServer::start().await;
    let required = crate::payments::ask(&server, "/tools/receipt-echo-paid").await;
    let signer = alloy_signer_local::PrivateKeySigner::random();
    let header = crate::payments::pay(&signer, &required, 2, |_| {});
    let (status, _, body) =
        crate::util::post_paid(&server, "/tools/receipt-echo-paid", &header, json!({})).await;
    assert_eq!(status, 200, "{body}");
    let settlement = &body["receipt"]["settlement"];
    assert_eq!(settlement["status"], "recorded", "{body}");
    assert_eq!(settlement["onChain"], false);
    assert_eq!(settlement["collected"], false);
    let id = body["receipt"]["receiptId"].as_str().unwrap();
    let (_, stored) = server.get(&format!("/ai/receipts/{id}")).await;
    assert_eq!(stored["settlement"]["collected"], false, "{stored}");
    // A free call's receipt has nothing to collect and says nothing about it.
    let (_, free) = server.post("/tools/receipt-echo", &json!({})).await;
    assert!(
        free["receipt"]["settlement"].get("collected").is_none(),
        "{free}"
    );
}

/// Quotes expire and are deleted; receipts of free calls and events are kept for their
/// retention only; paid receipts stay. The sweep runs by hand, as of a time far ahead.
#[tokio::test]
async fn sweeps_delete_expired_quotes_and_old_free_records_and_keep_paid_receipts() {
    let server = TestServer::start().await;
    let (status, free) = server.post("/tools/receipt-echo", &json!({"a": 1})).await;
    assert_eq!(status, 200, "{free}");
    let free = free["receipt"]["receiptId"].as_str().unwrap().to_string();
    // Proven by its batch, as long as it is kept.
    let (status, body) = server.get(&format!("/ai/receipts/{free}/inclusion")).await;
    assert_eq!(status, 200, "{body}");
    let token = credit(&server).await;
    let response = server
        .client
        .post(server.url("/tools/receipt-echo-paid"))
        .header("x-developer-credit", &token)
        .json(&json!({"a": 1}))
        .send()
        .await
        .unwrap();
    let (status, paid) = crate::util::read(response).await;
    assert_eq!(status, 200, "{paid}");
    let paid = paid["receipt"]["receiptId"].as_str().unwrap().to_string();
    let (status, quote) = server
        .post("/ai/quote", &json!({"slug": "receipt-echo", "input": {}}))
        .await;
    assert_eq!(status, 200, "{quote}");
    let quote = quote["quoteId"].as_str().unwrap().to_string();
    let (_, key) = server.builder("sweeper").await;
    server
        .create(As::Builder(&key), &static_endpoint("swept-events"))
        .await;
    let events = || server.call("GET", "/ai/builders/events", As::Builder(&key), None);
    let (status, feed) = events().await;
    assert_eq!(status, 200, "{feed}");
    assert!(!feed["events"].as_array().unwrap().is_empty(), "{feed}");

    // As of now nothing is old enough.
    let now = time::OffsetDateTime::now_utc();
    let swept = toolhost::maintenance::sweep(&server.app, now)
        .await
        .unwrap();
    assert_eq!(swept, toolhost::maintenance::Swept::default());
    let invoke = json!({"slug": "receipt-echo", "input": {}, "quoteId": quote});
    let (status, body) = server.post("/ai/invoke", &invoke).await;
    assert_eq!(status, 200, "{body}");

    // 91 days later: past the quote's expiry, the free receipt's 30 days and the events' 90.
    let later = now + time::Duration::days(91);
    let swept = toolhost::maintenance::sweep(&server.app, later)
        .await
        .unwrap();
    assert_eq!(swept.quotes, 1, "{swept:?}");
    // The free receipt above, and the one the quoted invoke issued.
    assert_eq!(swept.free_receipts, 2, "{swept:?}");
    assert!(swept.events >= 1, "{swept:?}");
    let (status, body) = server.get(&format!("/ai/receipts/{free}")).await;
    assert_error(status, &body, 404, "receipt_not_found");
    // Nothing of it is left: its batch's proof went with it, and it never was in the log,
    // which only the paid receipt is in.
    let (status, body) = server.get(&format!("/ai/receipts/{free}/inclusion")).await;
    assert_error(status, &body, 404, "not_in_log");
    let store = server.app.store.as_ref();
    let proof = store.receipt_proof(&free).await.unwrap();
    assert!(proof.is_none(), "the free receipt's proof is left");
    let appended = store.log_entries(0, 10_000).await.unwrap();
    let pending = store.log_pending(None, 10_000).await.unwrap();
    assert!(!appended.is_empty(), "the paid receipt is in the log");
    let entries = (appended.iter().map(|(_, entry)| entry)).chain(pending.iter().map(|(_, e)| e));
    assert!(
        pending.iter().all(|(name, _)| !name.starts_with(&free))
            && store.log_leaves(&[&free]).await.unwrap()[0].is_none(),
        "the free receipt is in the receipt log"
    );
    for entry in entries {
        let named = entry.windows(free.len()).any(|w| w == free.as_bytes());
        assert!(!named, "the free receipt is in the receipt log");
    }
    let (status, body) = server.get(&format!("/ai/receipts/{paid}/inclusion")).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = server.get(&format!("/ai/receipts/{paid}")).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = server.post("/ai/invoke", &invoke).await;
    assert_error(status, &body, 404, "quote_not_found");
    let (_, feed) = events().await;
    assert_eq!(feed["events"], json!([]), "{feed}");
    // Nothing left to sweep, and the paid receipt is never a candidate.
    let swept = toolhost::maintenance::sweep(&server.app, later)
        .await
        .unwrap();
    assert_eq!(swept, toolhost::maintenance::Swept::default());
    let (status, _) = server.get(&format!("/ai/receipts/{paid}")).await;
    assert_eq!(status, 200);
}

/// A builder's isolates are bounded by its quota: with one isolate per builder, a second
/// endpoint of the same builder is refused 429 `overloaded` with `Retry-After` while the first
/// is busy, and takes its isolate once it is idle.
#[tokio::test]
async fn a_builders_isolates_stay_within_its_quota() {
    let server = TestServer::start_with(|c| {
        c.runtime.pool.max_isolates_per_owner = 1;
        c.runtime.pool.instances_per_endpoint = 1;
    })
    .await;
    let (_, key) = server.builder("greedy").await;
    let busy = "export default () => { const end = Date.now() + 600; \
        while (Date.now() < end) {} return { done: true }; };";
    for slug in ["greedy-a", "greedy-b"] {
        let mut body = js(slug, 0.0, busy);
        body["safetyAttestation"] = json!({"accepted": true});
        server.create(As::Builder(&key), &body).await;
    }
    let call = |slug: &str| {
        server
            .client
            .post(server.url(&format!("/tools/{slug}")))
            .json(&json!({}))
            .send()
    };
    // One call first: until one of its calls has ended, a builder's calls go one at a time
    // (docs/tenants.md), and the second would wait for the first instead.
    let (status, body) = crate::util::read(call("greedy-a").await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    let (a, b) = tokio::time::timeout(
        HANG_GUARD,
        futures::future::join(call("greedy-a"), async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            call("greedy-b").await
        }),
    )
    .await
    .expect("the calls end");
    let (status, body) = crate::util::read(a.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    let b = b.unwrap();
    assert!(b.headers().contains_key("retry-after"));
    let (status, body) = crate::util::read(b).await;
    assert_error(status, &body, 429, "overloaded");
    let (status, body) = crate::util::read(call("greedy-b").await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    let stats = server.app.runtime.pool().stats().await;
    assert_eq!(stats.live_isolates, 1, "{stats:?}");
    assert!(stats.evictions >= 1, "{stats:?}");
}
