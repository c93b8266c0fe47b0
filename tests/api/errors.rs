use std::time::Duration;

use serde_json::json;

use crate::util::{assert_error, read, TestServer};

#[tokio::test]
async fn malformed_json_is_400() {
    let server = TestServer::start().await;
    let response = server
        .client
        .post(server.url("/tools/receipt-echo"))
        .header("content-type", "application/json")
        .body("{\"a\": ")
        .send()
        .await
        .unwrap();
    let (status, body) = read(response).await;
    assert_error(status, &body, 400, "malformed_json");
}

#[tokio::test]
async fn non_json_content_type_is_415() {
    let server = TestServer::start().await;
    let response = server
        .client
        .post(server.url("/tools/receipt-echo"))
        .header("content-type", "text/plain")
        .body("hello")
        .send()
        .await
        .unwrap();
    let (status, body) = read(response).await;
    assert_error(status, &body, 415, "unsupported_media_type");
}

#[tokio::test]
async fn oversized_body_is_413() {
    let server = TestServer::start_with(|c| c.limits.body_bytes = 1024).await;
    let big = json!({"blob": "x".repeat(4096)});
    let (status, body) = server.post("/tools/receipt-echo", &big).await;
    assert_error(status, &body, 413, "body_too_large");
    // Just under the limit still works.
    let (status, _) = server
        .post("/tools/receipt-echo", &json!({"blob": "x".repeat(900)}))
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn unknown_route_and_wrong_method() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/no/such/route").await;
    assert_error(status, &body, 404, "route_not_found");
    let response = server
        .client
        .delete(server.url("/ai/manifest"))
        .send()
        .await
        .unwrap();
    let (status, body) = read(response).await;
    assert_error(status, &body, 405, "method_not_allowed");
    let response = server
        .client
        .put(server.url("/tools/receipt-echo"))
        .send()
        .await
        .unwrap();
    let (status, body) = read(response).await;
    assert_error(status, &body, 405, "method_not_allowed");
}

#[tokio::test]
async fn slow_request_hits_the_deadline_with_504() {
    // A readiness check of a local peer that never answers in time.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let peer = listener.local_addr().unwrap();
    let slow = axum::Router::new().route(
        "/",
        axum::routing::get(|| async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            "late"
        }),
    );
    tokio::spawn(async move { axum::serve(listener, slow).await.unwrap() });
    let server = TestServer::start_with(|c| {
        c.limits.request_timeout = Duration::from_millis(300);
        c.outbound.allow_loopback = true;
    })
    .await;
    let (status, body) = server
        .post(
            "/tools/x402-readiness-check",
            &json!({"url": format!("http://{peer}/")}),
        )
        .await;
    assert_error(status, &body, 504, "request_timeout");
}

#[tokio::test]
async fn every_error_carries_a_request_id() {
    let server = TestServer::start().await;
    let response = server.client.get(server.url("/nope")).send().await.unwrap();
    assert!(response.headers().get("x-request-id").is_some());
    let response = server
        .client
        .get(server.url("/nope"))
        .header("x-request-id", "caller-chosen-id")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-request-id"], "caller-chosen-id");
}
