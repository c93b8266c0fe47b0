//! The handler platform through the HTTP path: a builder's endpoint (fixtures/web-platform)
//! uses each WinterTC Minimum Common API global from a real isolate in a worker process.

use serde_json::{json, Value};

use crate::util::TestServer;

#[tokio::test]
async fn web_platform_globals_work_in_a_handler() {
    let server = TestServer::start().await;
    let endpoint = json!({
        "slug": "platform", "title": "Platform", "description": "Uses the web platform globals.",
        "priceUsd": 0, "handlerType": "js_request_response",
        "source": include_str!("../../fixtures/web-platform/handler.js"),
        "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
        "capabilities": {},
        "safetyAttestation": {"accepted": true},
    });
    server.builder_with("Platform", &endpoint).await;
    let expected: [(&str, Value); 9] = [
        (
            "url",
            json!(["https://example.com/b?x=1#f", "1", "a=1+2&b=%C3%A4"]),
        ),
        ("encoding", json!([[226, 130, 172], "€", "aGk=", "hi"])),
        ("clone", json!([5])),
        (
            "timers",
            json!([["micro", "timeout", "TimeoutError"], 2, "number"]),
        ),
        ("events", json!(["x", true, "AbortError"])),
        (
            "fetchTypes",
            json!([202, "b", {"a": 1}, "PUT", "hi", [97, 98]]),
        ),
        ("streams", json!([3, "ABC"])),
        ("intl", json!(["TypeError", true])),
        ("logs", json!("logged")),
    ];
    for (check, answer) in expected {
        let (status, body) = server
            .post("/tools/platform", &json!({"check": check}))
            .await;
        assert_eq!(status, 200, "{check}: {body}");
        assert_eq!(body, json!({ check: answer }), "{check}");
    }
}

/// A Workers-style handler answers with a standard `Response`; the caller gets its status, its
/// allowed headers and its JSON body over HTTP, and a 4xx of the handler's own is no sale.
#[tokio::test]
async fn a_handler_answers_with_a_web_response() {
    let server = TestServer::start().await;
    let endpoint = json!({
        "slug": "answers", "title": "Answers", "description": "Answers with a web Response.",
        "priceUsd": 0, "handlerType": "js_request_response",
        "source": "export default (req) => req.input.ok \
            ? Response.json({ done: true }, { status: 201, headers: { 'x-model': 'm1' } }) \
            : Response.json({ error: 'name required' }, { status: 400 });",
        "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
        "capabilities": {},
        "safetyAttestation": {"accepted": true},
    });
    server.builder_with("Answers", &endpoint).await;
    let response = server
        .client
        .post(server.url("/tools/answers"))
        .json(&json!({"ok": true}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 201, "{body}");
    assert_eq!(headers["x-model"], "m1");
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    assert_eq!(body["done"], true, "{body}");

    let (status, body) = server.post("/tools/answers", &json!({"ok": false})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"], "name required", "{body}");
}
