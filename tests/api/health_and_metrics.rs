//! `/healthz`, `/metrics` and the request id: what an operator watches.

use serde_json::Value;

use crate::util::TestServer;

#[tokio::test]
async fn healthz() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/healthz").await;
    assert_eq!(status, 200);
    assert_eq!(body["ok"], true);
}

#[tokio::test]
async fn metrics_count_requests_by_route_and_status() {
    let server = TestServer::start().await;
    server.get("/ai/endpoints").await;
    server.get("/ai/endpoints/nope").await;
    server.get("/tools/receipt-echo").await;
    let text = server.text("/metrics").await;
    assert!(
        text.contains(
            r#"toolhost_http_requests_total{method="GET",route="/ai/endpoints",status="200"} 1"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"route="/ai/endpoints/{slug}",status="404""#),
        "{text}"
    );
    assert!(
        text.contains(r#"toolhost_http_request_duration_seconds_bucket{le="#)
            || text.contains("toolhost_http_request_duration_seconds_bucket{"),
        "{text}"
    );
    assert!(text.contains(r#"route="/tools/{slug}""#), "{text}");
}

/// Every route the service mounts is documented, and every documented path is really mounted.
#[tokio::test]
async fn openapi_covers_every_route() {
    let server = TestServer::start().await;
    let (status, doc) = server.get("/openapi.json").await;
    assert_eq!(status, 200);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = doc["paths"].as_object().unwrap();
    let mounted = [
        ("get", "/healthz"),
        ("get", "/metrics"),
        ("get", "/ai/endpoints"),
        ("get", "/ai/endpoints/{slug}"),
        ("get", "/ai/manifest"),
        ("get", "/.well-known/x402"),
        ("get", "/.well-known/mcp/server.json"),
        ("get", "/ai/templates/creator-skill"),
        ("get", "/tools/{slug}"),
        ("post", "/tools/{slug}"),
        ("get", "/ai/receipts/{receiptId}"),
        ("get", "/ai/content-safety/policy"),
        ("post", "/ai/mcp"),
        ("post", "/ai/admin/credits"),
        ("get", "/ai/admin/credits"),
        ("get", "/x402/supported"),
        ("post", "/ai/invoke"),
        ("post", "/ai/quote"),
        ("post", "/ai/conversion/quote"),
        ("post", "/x402/quote"),
        ("get", "/ai/builders/revenue"),
        ("get", "/ai/builders/payout-settings"),
        ("post", "/ai/builders/payout-settings"),
        ("get", "/ai/builders/payouts"),
        ("post", "/ai/builders/payouts"),
        ("post", "/ai/admin/payouts/{packetId}/paid"),
        ("get", "/ai/admin/revenue"),
        ("post", "/ai/endpoints/create"),
        ("patch", "/ai/endpoints/{slug}"),
        ("delete", "/ai/endpoints/{slug}"),
        ("get", "/ai/endpoints/{slug}/secrets"),
        ("post", "/ai/endpoints/{slug}/secrets"),
        ("get", "/ai/endpoints/{slug}/logs"),
        ("post", "/ai/builders/register"),
        ("post", "/ai/builders/keys/rotate"),
        ("get", "/ai/builders/events"),
        ("post", "/ai/admin/builders"),
        ("post", "/ai/admin/endpoints/{slug}/review"),
        ("get", "/ai/admin/reviews"),
        ("get", "/toolhost.d.ts"),
    ];
    for (method, path) in mounted {
        assert!(
            paths.get(path).and_then(|p| p.get(method)).is_some(),
            "{method} {path} missing from OpenAPI"
        );
    }
    for (path, item) in paths {
        for method in item.as_object().unwrap().keys() {
            let concrete = path
                .replace("{slug}", "receipt-echo")
                .replace("{receiptId}", "x");
            let request = server.client.request(
                method.to_uppercase().parse().unwrap(),
                server.url(&concrete),
            );
            let response = request
                .header("content-type", "application/json")
                .body("{}")
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            assert!(
                !(status == 404 && body["error"]["code"] == "route_not_found") && status != 405,
                "{method} {path} is documented but not mounted ({status})"
            );
        }
    }
}
