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
