//! Readiness checks against local peers (loopback only, with the dev flag on).

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};

use super::{check, Kind, ReadinessError, ReadinessReport};
use crate::error::ErrorCode;
use crate::net::test_server::{client, serve};

const PAY_TO: &str = "0x1111111111111111111111111111111111111111";
const USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";

fn v2_requirements() -> Value {
    json!({
        "x402Version": 2,
        "resource": {"url": "https://tools.example/tools/paid", "mimeType": "application/json"},
        "accepts": [{"scheme": "exact", "network": "eip155:84532", "amount": "1000", "asset": USDC, "payTo": PAY_TO, "maxTimeoutSeconds": 300}]
    })
}

fn v1_requirements() -> Value {
    json!({
        "x402Version": 1,
        "error": "X-PAYMENT header is required",
        "accepts": [{"scheme": "exact", "network": "base-sepolia", "maxAmountRequired": "1000", "resource": "https://tools.example/tools/paid", "asset": USDC, "payTo": PAY_TO, "maxTimeoutSeconds": 300}]
    })
}

async fn peer() -> String {
    let router = Router::new()
        .route(
            "/.well-known/mcp/server.json",
            get(|| async {
                Json(json!({
                    "$schema": "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
                    "name": "io.github.example/weather",
                    "description": "Weather tools",
                    "version": "1.0.2",
                    "remotes": [{"type": "streamable-http", "url": "https://weather.example/mcp"}]
                }))
            }),
        )
        .route(
            "/bad/server.json",
            get(|| async {
                Json(json!({
                    "$schema": "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
                    "name": "weather",
                    "version": "1.0.0",
                    "remotes": [{"type": "websocket", "url": "http://weather.example/mcp"}]
                }))
            }),
        )
        .route(
            "/.well-known/x402",
            get(|| async {
                let mut item = v2_requirements();
                item["resource"] = json!("https://tools.example/tools/paid");
                Json(json!({"x402Version": 2, "items": [item], "pagination": {"limit": 10}}))
            }),
        )
        .route(
            "/ai/manifest",
            get(|| async {
                Json(json!({
                    "service": {"name": "toolhost", "version": "0.1.0"},
                    "payment": {"x402Versions": [1, 2], "schemes": ["exact"], "networks": ["eip155:84532"], "assets": [USDC], "payTo": PAY_TO},
                    "mcp": "https://tools.example/ai/mcp",
                    "catalog": "https://tools.example/ai/endpoints",
                    "receipts": "https://tools.example/ai/receipts/{receiptId}"
                }))
            }),
        )
        .route(
            "/ai/manifest-unconfigured",
            get(|| async {
                Json(json!({
                    "service": {"name": "toolhost"},
                    "payment": {"x402Versions": [2], "schemes": ["exact"], "networks": [], "assets": [USDC], "payTo": null},
                    "mcp": {"url": "https://tools.example/ai/mcp"},
                    "catalog": "https://tools.example/ai/endpoints"
                }))
            }),
        )
        .route(
            "/tools/paid",
            get(|| async {
                let header_value = STANDARD.encode(v2_requirements().to_string());
                (StatusCode::PAYMENT_REQUIRED, [("payment-required", header_value)], Json(v1_requirements()))
            }),
        )
        .route(
            "/tools/post-only",
            get(|| async { StatusCode::METHOD_NOT_ALLOWED })
                .post(|| async { (StatusCode::PAYMENT_REQUIRED, Json(v1_requirements())) }),
        )
        .route(
            "/tools/malformed",
            get(|| async { (StatusCode::PAYMENT_REQUIRED, Json(json!({"x402Version": 1, "error": "pay up"}))) }),
        )
        .route(
            "/tools/moved",
            get(|| async { Redirect::permanent("/tools/post-only") }),
        )
        .route("/tools/bare", get(|| async { StatusCode::PAYMENT_REQUIRED }))
        .route(
            "/page",
            get(|| async { ([(header::CONTENT_TYPE, "text/html")], "<html>hello</html>").into_response() }),
        )
        .route("/mcp", get(|| async { StatusCode::METHOD_NOT_ALLOWED }).post(|body: Json<Value>| mcp(body, false)))
        .route("/mcp-sse", get(|| async { StatusCode::METHOD_NOT_ALLOWED }).post(|body: Json<Value>| mcp(body, true)))
        .route("/mcp-refusing", get(|| async { StatusCode::METHOD_NOT_ALLOWED }).post(|| async {
            Json(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}}))
        }))
        .route("/rpc-not-mcp", post(|Json(body): Json<Value>| async move {
            if body.get("method").is_some() {
                (StatusCode::INTERNAL_SERVER_ERROR, "oops").into_response()
            } else {
                Json(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}})).into_response()
            }
        }))
        .route(
            "/ai/endpoints",
            get(|| async {
                Json(json!({
                    "ok": true,
                    "schema": "example.x402.hosted-endpoint-catalog.v1",
                    "endpoints": [
                        {"slug": "free", "url": "https://tools.example/tools/free", "priceUsd": 0, "pricingMode": "free_public_utility", "inputSchema": {"type": "object"}},
                        {"slug": "paid", "url": "https://tools.example/tools/paid", "priceUsd": 0.001, "pricingMode": "fixed_price_success_receipt", "inputSchema": {"type": "object"}}
                    ]
                }))
            }),
        )
        .route(
            "/catalog-empty",
            get(|| async { Json(json!({"schema": "example.hosted-endpoint-catalog.v1", "endpoints": []})) }),
        );
    serve(router).await
}

/// A stateless MCP server over Streamable HTTP: initialize and tools/list, answered as JSON or,
/// with `sse`, as one SSE event after a progress notification.
async fn mcp(Json(message): Json<Value>, sse: bool) -> axum::response::Response {
    let id = message.get("id").cloned();
    let result = match message.get("method").and_then(Value::as_str) {
        Some("initialize") => json!({
            "protocolVersion": message.pointer("/params/protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": "weather", "version": "1.0.2"}
        }),
        Some("tools/list") => {
            json!({"tools": [{"name": "forecast", "inputSchema": {"type": "object"}}]})
        }
        Some(_) if id.is_none() => return StatusCode::ACCEPTED.into_response(),
        _ => json!({}),
    };
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
    if sse {
        let body = format!(
            "event: message\ndata: {}\n\nevent: message\ndata: {answer}\n\n",
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}})
        );
        ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
    } else {
        Json(answer).into_response()
    }
}

async fn run(url: &str) -> ReadinessReport {
    check(&client(true), url).await.expect("report")
}

fn check_passed(report: &ReadinessReport, id: &str) -> bool {
    match report.checks.iter().find(|c| c.id == id) {
        Some(c) => c.passed,
        None => panic!("no check {id} in {:#?}", report.checks),
    }
}

fn note<'a>(report: &'a ReadinessReport, id: &str) -> &'a str {
    report
        .checks
        .iter()
        .find(|c| c.id == id)
        .map_or("", |c| c.note.as_str())
}

#[tokio::test]
async fn mcp_server_json_ready() {
    let base = peer().await;
    let r = run(&format!("{base}/.well-known/mcp/server.json")).await;
    assert_eq!(r.kind, Kind::McpServerJson);
    assert!(r.ready, "{:#?}", r.checks);
    for id in [
        "fetch",
        "schema",
        "name",
        "version",
        "description",
        "remotes_or_packages",
        "remotes",
    ] {
        assert!(check_passed(&r, id), "{id}");
    }
    assert!(r
        .next_actions
        .iter()
        .any(|a| a.contains("https://weather.example/mcp")));
}

#[tokio::test]
async fn mcp_server_json_with_problems() {
    let base = peer().await;
    let r = run(&format!("{base}/bad/server.json")).await;
    assert_eq!(r.kind, Kind::McpServerJson);
    assert!(!r.ready);
    assert!(!check_passed(&r, "name"));
    assert!(!check_passed(&r, "description"));
    assert!(!check_passed(&r, "remotes"));
    assert!(note(&r, "remotes").contains("remotes[0].type \"websocket\""));
    assert!(note(&r, "remotes").contains("not an absolute https URL"));
    assert!(check_passed(&r, "version"));
}

#[tokio::test]
async fn x402_discovery_ready() {
    let base = peer().await;
    let r = run(&format!("{base}/.well-known/x402")).await;
    assert_eq!(r.kind, Kind::X402Discovery);
    assert!(r.ready, "{:#?}", r.checks);
    for id in [
        "x402_version",
        "resources_listed",
        "resource_urls",
        "payment_requirements",
    ] {
        assert!(check_passed(&r, id), "{id}");
    }
    assert!(r
        .next_actions
        .iter()
        .any(|a| a.contains("https://tools.example/tools/paid")));
}

#[tokio::test]
async fn toolhost_manifest_ready_and_unconfigured() {
    let base = peer().await;
    let r = run(&format!("{base}/ai/manifest")).await;
    assert_eq!(r.kind, Kind::ToolhostManifest);
    assert!(r.ready, "{:#?}", r.checks);
    assert_eq!(r.checks.len(), 10);

    let r = run(&format!("{base}/ai/manifest-unconfigured")).await;
    assert_eq!(r.kind, Kind::ToolhostManifest);
    assert!(!r.ready);
    assert!(!check_passed(&r, "pay_to"));
    assert!(!check_passed(&r, "payment_networks"));
    assert!(!check_passed(&r, "receipts_url"));
    assert!(
        check_passed(&r, "mcp_url"),
        "an object with url is accepted"
    );
}

#[tokio::test]
async fn paid_endpoint_with_v2_header_and_v1_body() {
    let base = peer().await;
    let r = run(&format!("{base}/tools/paid")).await;
    assert_eq!(r.kind, Kind::PaidEndpoint);
    assert!(r.ready, "{:#?}", r.checks);
    for id in [
        "http_402",
        "v2_payment_required_header",
        "v1_body_requirements",
        "payment_requirements",
    ] {
        assert!(check_passed(&r, id), "{id}");
    }
    assert_eq!(
        r.final_url.as_deref(),
        Some(format!("{base}/tools/paid").as_str())
    );
    assert!(r.next_actions[0].contains("/.well-known/x402"));
}

#[tokio::test]
async fn paid_endpoint_answering_post_only() {
    let base = peer().await;
    let r = run(&format!("{base}/tools/post-only")).await;
    assert_eq!(r.kind, Kind::PaidEndpoint);
    assert!(r.ready, "{:#?}", r.checks);
    assert!(note(&r, "http_402").starts_with("POST {}"));
    assert!(r
        .next_actions
        .iter()
        .any(|a| a.contains("PAYMENT-REQUIRED")));
}

#[tokio::test]
async fn post_probe_goes_where_the_get_was_redirected() {
    let base = peer().await;
    let r = run(&format!("{base}/tools/moved")).await;
    assert_eq!(r.kind, Kind::PaidEndpoint);
    assert!(r.ready, "{:#?}", r.checks);
    assert_eq!(r.final_url, Some(format!("{base}/tools/post-only")));
}

#[tokio::test]
async fn malformed_paid_endpoints_are_not_ready() {
    let base = peer().await;
    let r = run(&format!("{base}/tools/malformed")).await;
    assert_eq!(r.kind, Kind::PaidEndpoint);
    assert!(!r.ready);
    assert!(!check_passed(&r, "v1_body_requirements"));
    assert_eq!(
        note(&r, "v1_body_requirements"),
        "accepts is missing or empty"
    );

    let r = run(&format!("{base}/tools/bare")).await;
    assert_eq!(r.kind, Kind::PaidEndpoint);
    assert!(!r.ready);
    assert!(!check_passed(&r, "payment_requirements"));
}

#[tokio::test]
async fn non_json_page_is_unknown() {
    let base = peer().await;
    let r = run(&format!("{base}/page")).await;
    assert_eq!(r.kind, Kind::Unknown);
    assert!(!r.ready);
    assert!(check_passed(&r, "fetch"));
    assert!(!check_passed(&r, "json"));
    assert!(note(&r, "json").contains("text/html"));
    assert!(!check_passed(&r, "recognized"));
    assert!(note(&r, "recognized").contains("POST {} answered HTTP 405"));

    // JSON-RPC to `{}` but no JSON-RPC answer to initialize: not an MCP endpoint, said so.
    let r = run(&format!("{base}/rpc-not-mcp")).await;
    assert_eq!(r.kind, Kind::Unknown);
    assert!(note(&r, "recognized").contains("nor an MCP endpoint"));
    assert!(r
        .next_actions
        .iter()
        .any(|a| a.contains("MCP JSON-RPC endpoint")));
}

#[tokio::test]
async fn mcp_endpoint_is_probed_with_initialize_as_json_or_sse() {
    let base = peer().await;
    for path in ["/mcp", "/mcp-sse"] {
        let r = run(&format!("{base}{path}")).await;
        assert_eq!(r.kind, Kind::McpEndpoint, "{path}");
        assert!(r.ready, "{path}: {:#?}", r.checks);
        for id in [
            "fetch",
            "mcp_initialize",
            "mcp_protocol_version",
            "mcp_server_info",
            "mcp_tools",
        ] {
            assert!(check_passed(&r, id), "{path}: {id}");
        }
        assert!(note(&r, "fetch").contains("405"), "{path}");
        // It answers `server/discover` without `supportedVersions` (a 2025 server): the check
        // fell back to `initialize`.
        assert!(
            note(&r, "mcp_initialize").contains("POST initialize answered HTTP 200"),
            "{path}"
        );
        assert!(note(&r, "mcp_tools").contains("1 tool(s)"), "{path}");
        assert_eq!(r.final_url, Some(format!("{base}{path}")));
        assert!(r.next_actions.iter().any(|a| a.contains("server.json")));
    }
    assert!(note(&run(&format!("{base}/mcp-sse")).await, "mcp_initialize").contains("SSE"));

    let r = run(&format!("{base}/mcp-refusing")).await;
    assert_eq!(r.kind, Kind::McpEndpoint);
    assert!(!r.ready);
    assert!(!check_passed(&r, "mcp_initialize"));
    assert!(note(&r, "mcp_initialize").contains("Invalid Request"));
}

#[tokio::test]
async fn endpoint_catalog_ready_and_empty() {
    let base = peer().await;
    let r = run(&format!("{base}/ai/endpoints")).await;
    assert_eq!(r.kind, Kind::EndpointCatalog);
    assert!(r.ready, "{:#?}", r.checks);
    for id in [
        "fetch",
        "endpoints_listed",
        "endpoint_urls",
        "endpoint_prices",
        "input_schemas",
    ] {
        assert!(check_passed(&r, id), "{id}");
    }
    assert!(
        r.next_actions
            .iter()
            .any(|a| a.contains("https://tools.example/tools/paid")),
        "the paid entry is the one to check next: {:?}",
        r.next_actions
    );

    let r = run(&format!("{base}/catalog-empty")).await;
    assert_eq!(r.kind, Kind::EndpointCatalog);
    assert!(!r.ready);
    assert!(!check_passed(&r, "endpoints_listed"));
}

#[tokio::test]
async fn internal_addresses_are_a_failed_check_not_an_error() {
    let base = peer().await;
    let strict = client(false);
    for (url, reason) in [
        (
            "http://10.0.0.1/.well-known/x402".to_string(),
            "a private address",
        ),
        (
            "http://169.254.169.254/latest/meta-data/".to_string(),
            "a link-local address",
        ),
        (format!("{base}/tools/paid"), "a loopback address"),
    ] {
        let r = check(&strict, &url).await.expect("report");
        assert_eq!(r.kind, Kind::Unknown);
        assert!(!r.ready);
        assert_eq!(r.final_url, None);
        assert_eq!(r.checks.len(), 1);
        assert!(!r.checks[0].passed);
        assert!(r.checks[0].note.ends_with(reason), "{}", r.checks[0].note);
        assert!(r.next_actions[0].contains("public host"));
    }
}

#[tokio::test]
async fn invalid_input_is_an_error() {
    for url in [
        "not a url",
        "",
        "ftp://example.com/x",
        "mailto:a@example.com",
        "/relative",
    ] {
        assert_eq!(
            check(&client(true), url).await.unwrap_err(),
            ReadinessError::InvalidUrl,
            "{url}"
        );
    }
    let api: crate::error::ApiError = ReadinessError::InvalidUrl.into();
    assert_eq!(api.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(api.code, ErrorCode::InvalidUrl);
}

#[tokio::test]
async fn report_serializes_in_camel_case() {
    let base = peer().await;
    let r = run(&format!("{base}/tools/paid?x=1")).await;
    let v = serde_json::to_value(&r).expect("json");
    assert_eq!(v["ok"], true);
    assert_eq!(v["kind"], "paid_endpoint");
    assert_eq!(v["finalUrl"], format!("{base}/tools/paid?x=1"));
    assert_eq!(
        v["expectedDiscoveryUrls"],
        json!([
            format!("{base}/.well-known/x402"),
            format!("{base}/ai/manifest"),
            format!("{base}/ai/endpoints"),
            format!("{base}/ai/mcp"),
            format!("{base}/.well-known/mcp/server.json"),
        ])
    );
    assert!(v["nextActions"].is_array());
    assert!(v["checks"][0]["id"].is_string());
}
