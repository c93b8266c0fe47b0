//! `/ai/invoke`, `/ai/quote`, `/ai/conversion/quote` and `/x402/quote` (against local sellers).

use alloy_signer_local::PrivateKeySigner;
use base64::Engine;
use serde_json::{json, Value};

use crate::payments::{ask, pay};
use crate::util::{assert_error, assert_payment_required, read, As, TestServer};

#[tokio::test]
async fn invoke_pays_with_a_quote_and_wraps_the_result() {
    let server = TestServer::start().await;
    let (status, quote) = server
        .post(
            "/ai/quote",
            &json!({"slug": "receipt-echo-paid", "input": {"a": 1}}),
        )
        .await;
    assert_eq!(status, 200, "{quote}");
    assert_eq!(quote["totalUnits"], "1000");
    assert_eq!(quote["priceUsd"], json!(0.001));
    assert_eq!(quote["paymentRequirements"]["accepts"][0]["amount"], "1000");
    assert_eq!(quote["x402V1Accepts"][0]["maxAmountRequired"], "1000");
    assert_eq!(quote["handoff"]["method"], "POST");
    assert_eq!(
        quote["handoff"]["url"],
        server.url("/tools/receipt-echo-paid")
    );
    assert!(quote["handoff"]["headers"]["PAYMENT-SIGNATURE"].is_string());
    let quote_id = quote["quoteId"].as_str().unwrap();
    assert_eq!(quote["handoff"]["invoke"]["body"]["quoteId"], quote_id);

    let invoke = json!({"slug": "receipt-echo-paid", "input": {"a": 1}, "quoteId": quote_id});
    let (status, body) = server.post("/ai/invoke", &invoke).await;
    assert_payment_required(status, &body, "payment_required");
    let signer = PrivateKeySigner::random();
    let required = ask(&server, "/tools/receipt-echo-paid").await;
    let (name, value) = pay(&signer, &required, 2, |_| {});
    let response = server
        .client
        .post(server.url("/ai/invoke"))
        .header(name, &value)
        .json(&invoke)
        .send()
        .await
        .unwrap();
    assert!(response.headers().contains_key("payment-response"));
    let (status, body) = read(response).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ok"], true);
    assert_eq!(body["result"]["echo"]["endpoint"], "receipt-echo-paid");
    assert_eq!(body["receipt"]["paymentMethod"], "x402");

    let (status, body) = server
        .post(
            "/ai/invoke",
            &json!({"slug": "receipt-echo", "quoteId": quote_id}),
        )
        .await;
    assert_error(status, &body, 409, "quote_mismatch");
    let (status, body) = server
        .post(
            "/ai/invoke",
            &json!({"slug": "receipt-echo", "quoteId": "qt_nope"}),
        )
        .await;
    assert_error(status, &body, 404, "quote_not_found");
    let (status, body) = server.post("/ai/invoke", &json!({"slug": "nope"})).await;
    assert_error(status, &body, 404, "endpoint_not_found");
    let (status, body) = server
        .post("/ai/invoke", &json!({"slug": "receipt-echo"}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["receipt"]["paymentMethod"], "free");
}

#[tokio::test]
async fn long_running_endpoints_require_streaming_and_stream_sse() {
    let server =
        TestServer::start_with(|c| c.long_running_after = std::time::Duration::from_secs(1)).await;
    let request = json!({"slug": "x402-readiness-check", "input": {"url": "http://127.0.0.1:9/x"}});
    let (status, body) = server.post("/ai/invoke", &request).await;
    assert_error(status, &body, 409, "streaming_required");
    let response = server
        .client
        .post(server.url("/ai/invoke"))
        .header("accept", "text/event-stream")
        .json(&request)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let text = response.text().await.unwrap();
    assert!(
        text.contains("event: progress") && text.contains("\"stage\":\"accepted\""),
        "{text}"
    );
    let last = text
        .split("\n\n")
        .filter(|e| e.contains("event: result") || e.contains("event: error"))
        .last()
        .unwrap();
    let data: Value =
        serde_json::from_str(last.lines().find_map(|l| l.strip_prefix("data: ")).unwrap()).unwrap();
    assert!(data["ok"].is_boolean(), "{data}");
    // Streaming a paid endpoint still answers 402 as plain HTTP first.
    let response = server
        .client
        .post(server.url("/ai/invoke"))
        .header("accept", "text/event-stream")
        .json(&json!({"slug": "receipt-echo-paid"}))
        .send()
        .await
        .unwrap();
    let (status, body) = read(response).await;
    assert_payment_required(status, &body, "payment_required");
}

/// Long-running is the endpoint's time limit against `--long-running-after-secs` (default 10 s):
/// the admin's `limits.timeoutMs` decides, on the default threshold.
#[tokio::test]
async fn an_endpoint_whose_time_limit_exceeds_the_threshold_is_long_running() {
    let server = TestServer::start().await;
    let mut body = crate::util::js_endpoint("slow-words");
    body["priceUsd"] = json!(0);
    body["pricingMode"] = json!("free_public_utility");
    body["source"] =
        json!("export default async function (req) { return { words: req.input.text.split(' ').length }; }");
    server.create(As::Admin, &body).await;
    let request = json!({"slug": "slow-words", "input": {"text": "a b c"}});
    // The sandbox default (2 s) and an admin limit of exactly 10 s are not over the threshold.
    for limits in [None, Some(10_000)] {
        if let Some(timeout_ms) = limits {
            server
                .patch(
                    As::Admin,
                    "slow-words",
                    &json!({"limits": {"memoryMb": 64, "timeoutMs": timeout_ms}}),
                )
                .await;
        }
        let (status, body) = server.post("/ai/invoke", &request).await;
        assert_eq!(status, 200, "{limits:?}: {body}");
        assert_eq!(body["result"]["words"], 3, "{body}");
    }
    server
        .patch(
            As::Admin,
            "slow-words",
            &json!({"limits": {"memoryMb": 64, "timeoutMs": 10_001}}),
        )
        .await;
    let (status, body) = server.post("/ai/invoke", &request).await;
    assert_error(status, &body, 409, "streaming_required");
    // Built-ins keep their own bounds: echo answers at once.
    let (status, body) = server
        .post("/ai/invoke", &json!({"slug": "receipt-echo"}))
        .await;
    assert_eq!(status, 200, "{body}");

    let response = server
        .client
        .post(server.url("/ai/invoke"))
        .header("accept", "text/event-stream")
        .json(&request)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let result = text
        .split("\n\n")
        .find(|e| e.contains("event: result"))
        .unwrap_or_else(|| panic!("no result event: {text}"));
    let data: Value = serde_json::from_str(
        result
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (data["ok"].clone(), data["result"]["words"].clone()),
        (json!(true), json!(3)),
        "{data}"
    );
}

#[tokio::test]
async fn conversion_quotes_route_toward_usdc() {
    let server = TestServer::start().await;
    let (status, body) = server
        .post("/ai/conversion/quote", &json!({"serviceId": "receipt-echo-paid", "startNetwork": "ethereum", "startAsset": "ETH", "amount": 10}))
        .await;
    assert_eq!(status, 200, "{body}");
    let route = &body["route"];
    assert_eq!(route["steps"].as_array().unwrap().len(), 2);
    assert_eq!(route["target"]["network"], "eip155:84532");
    assert!(route["pricesAsOf"].is_string());
    assert!(route["handoff"]["wallet"].is_object() && route["handoff"]["exchange"].is_object());
    let (status, body) = server
        .post("/ai/conversion/quote", &json!({"serviceId": "receipt-echo-paid", "startNetwork": "base-sepolia", "startAsset": "USDC"}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["route"]["steps"], json!([]));
    assert_eq!(body["route"]["requiredStartAmount"], "1000");
    let (status, body) = server
        .post("/ai/conversion/quote", &json!({"serviceId": "receipt-echo-paid", "startNetwork": "eip155:999", "startAsset": "ETH"}))
        .await;
    assert_error(status, &body, 422, "unknown_network");
    let (status, body) = server
        .post("/ai/conversion/quote", &json!({"serviceId": "receipt-echo-paid", "startNetwork": "base", "startAsset": "DOGE"}))
        .await;
    assert_error(status, &body, 422, "unknown_asset");
    let (status, body) = server
        .post(
            "/ai/conversion/quote",
            &json!({"serviceId": "nope", "startNetwork": "base", "startAsset": "USDC"}),
        )
        .await;
    assert_error(status, &body, 404, "service_not_found");
}

/// Local sellers: one speaking v2 (header), one v1 (body), one that does not charge.
async fn sellers() -> String {
    use axum::http::{HeaderMap, HeaderValue, StatusCode};
    use axum::routing::{get, post};
    let v2 = json!({"x402Version": 2, "error": "payment required",
        "resource": {"url": "http://seller/v2", "description": "Weather", "mimeType": "application/json"},
        "accepts": [{"scheme": "exact", "network": "eip155:8453", "amount": "25000",
            "asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "payTo": "0x000000000000000000000000000000000000dEaD",
            "maxTimeoutSeconds": 60, "extra": {"name": "USD Coin", "version": "2"}}]});
    let header = base64::engine::general_purpose::STANDARD.encode(v2.to_string());
    let v1 = json!({"x402Version": 1, "error": "X-PAYMENT header is required",
        "accepts": [{"scheme": "exact", "network": "base-sepolia", "maxAmountRequired": "1500", "resource": "http://seller/v1",
            "description": "Joke", "mimeType": "application/json", "payTo": "0x000000000000000000000000000000000000dEaD",
            "maxTimeoutSeconds": 60, "asset": "0x036CbD53842c5426634e7929541eC2318f3dCF7e", "extra": {"name": "USDC", "version": "2"}}]});
    let app = axum::Router::new()
        .route(
            "/v2",
            get(move || {
                let header = header.clone();
                async move {
                    let mut headers = HeaderMap::new();
                    headers.insert("payment-required", HeaderValue::from_str(&header).unwrap());
                    (StatusCode::PAYMENT_REQUIRED, headers, "{}")
                }
            }),
        )
        .route(
            "/v1",
            post(move || {
                let v1 = v1.clone();
                async move { (StatusCode::PAYMENT_REQUIRED, axum::Json(v1)) }
            }),
        )
        .route("/free", get(|| async { "hello" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

#[tokio::test]
async fn external_quotes_normalize_v1_and_v2_sellers() {
    let seller = sellers().await;
    let server = TestServer::start_with(|c| c.outbound.allow_loopback = true).await;
    let (status, body) = server
        .post(
            "/x402/quote",
            &json!({"url": format!("{seller}/v2"), "startNetwork": "base", "startAsset": "ETH"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let r = &body["requirement"];
    assert_eq!(
        (
            r["x402Version"].clone(),
            r["network"].clone(),
            r["networkName"].clone()
        ),
        (json!(2), json!("eip155:8453"), json!("base"))
    );
    assert_eq!(
        (
            r["amount"].clone(),
            r["assetSymbol"].clone(),
            r["usd"].clone()
        ),
        (json!("25000"), json!("USDC"), json!(0.025))
    );
    assert_eq!(r["resource"], "http://seller/v2");
    assert_eq!(body["conversion"]["plan"]["steps"][0]["kind"], "swap");
    let (status, body) = server
        .post(
            "/x402/quote",
            &json!({"url": format!("{seller}/v1"), "method": "POST", "body": {"q": 1}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let r = &body["requirement"];
    assert_eq!(
        (
            r["x402Version"].clone(),
            r["network"].clone(),
            r["amount"].clone()
        ),
        (json!(1), json!("eip155:84532"), json!("1500"))
    );
    assert_eq!(r["description"], "Joke");
    assert!(body["conversion"]["url"].is_string());
    let (status, body) = server
        .post("/x402/quote", &json!({"url": format!("{seller}/free")}))
        .await;
    assert_error(status, &body, 422, "not_payment_required");
    let (status, body) = server
        .post(
            "/x402/quote",
            &json!({"url": format!("{seller}/v1"), "method": "DELETE"}),
        )
        .await;
    assert_error(status, &body, 422, "invalid_method");
}

#[tokio::test]
async fn external_quotes_are_ssrf_guarded() {
    let seller = sellers().await;
    let server = TestServer::start().await;
    let (status, body) = server
        .post("/x402/quote", &json!({"url": format!("{seller}/v2")}))
        .await;
    assert_error(status, &body, 403, "ssrf_refused");
    let (status, body) = server
        .post(
            "/x402/quote",
            &json!({"url": "http://169.254.169.254/latest/meta-data"}),
        )
        .await;
    assert_error(status, &body, 403, "ssrf_refused");
}
