//! Test calls (`X-Toolhost-Test: 1`): the owner or the admin calls an endpoint, a paid one
//! included, without paying; nobody else may. A test call leaves no receipt and no sale, is
//! marked in the owner's logs and events, and its answer carries `X-Toolhost-Test: 1`. Revenue
//! is broken down by payment method, and the parts reconcile with the totals.

use alloy_signer_local::PrivateKeySigner;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::payments::{ask, pay};
use crate::util::{assert_error, read, static_endpoint, As, TestServer, ADMIN_TOKEN};

const PAID: &str = "/tools/paid-greeting";

fn paid_greeting() -> Value {
    let mut endpoint = static_endpoint("paid-greeting");
    endpoint["priceUsd"] = json!(0.002);
    endpoint
}

/// POSTs `body` to `path` with `headers`: status, whether the answer says it was a test, body.
pub(crate) async fn post(
    server: &TestServer,
    path: &str,
    headers: &[(&str, &str)],
    body: Value,
) -> (StatusCode, bool, Value) {
    let mut request = server.client.post(server.url(path)).json(&body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let test = response
        .headers()
        .get("x-toolhost-test")
        .is_some_and(|v| v == "1");
    let (status, body) = read(response).await;
    (status, test, body)
}

async fn revenue(server: &TestServer, key: &str) -> Value {
    let (status, body) = server
        .call(
            "GET",
            "/ai/builders/revenue?since=1d",
            As::Builder(key),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["revenue"].clone()
}

fn units(value: &Value) -> u64 {
    value.as_str().unwrap().parse().unwrap()
}

/// The parts of `byPaymentMethod` add up to the report's totals, figure by figure.
#[track_caller]
fn assert_reconciles(report: &Value) {
    let methods = report["byPaymentMethod"].as_object().unwrap();
    for figure in ["grossUnits", "feeUnits", "netUnits"] {
        let sum: u64 = methods.values().map(|p| units(&p[figure])).sum();
        assert_eq!(sum, units(&report[figure]), "{figure}: {report}");
    }
    let count: u64 = methods.values().map(|p| p["count"].as_u64().unwrap()).sum();
    assert_eq!(count, report["count"].as_u64().unwrap(), "{report}");
}

#[tokio::test]
async fn the_owner_and_the_admin_test_a_paid_endpoint_for_free_and_nobody_else_may() {
    let server = TestServer::start().await;
    let (key, _) = server.builder_with("Seller", &paid_greeting()).await;
    let (_, stranger) = server.builder("Stranger").await;
    let test = ("x-toolhost-test", "1");

    // Refusals: no credential, another builder, a wrong value; nothing ran.
    let (status, marked, body) = post(&server, PAID, &[test], json!({})).await;
    assert_error(status, &body, 403, "test_call_not_allowed");
    assert!(!marked, "a refused test call is no test call");
    let (status, _, body) = post(
        &server,
        PAID,
        &[test, ("x-builder-key", &stranger)],
        json!({}),
    )
    .await;
    assert_error(status, &body, 403, "test_call_not_allowed");
    let (status, _, body) = post(
        &server,
        "/ai/invoke",
        &[test, ("x-builder-key", &stranger)],
        json!({"slug": "paid-greeting"}),
    )
    .await;
    assert_error(status, &body, 403, "test_call_not_allowed");
    let (status, _, body) = post(
        &server,
        PAID,
        &[("x-toolhost-test", "true"), ("x-builder-key", &key)],
        json!({}),
    )
    .await;
    assert_error(status, &body, 400, "invalid_test_header");
    let (status, _, body) = post(
        &server,
        PAID,
        &[test, ("x-builder-key", "thbk_not-a-key")],
        json!({}),
    )
    .await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(server.handler_runs("paid-greeting").await, 0);

    // Without the header the owner is a buyer like any other.
    let (status, _, body) = post(&server, PAID, &[("x-builder-key", &key)], json!({})).await;
    assert_eq!(status, 402, "{body}");

    // The owner and the admin, on both call routes: the result, no receipt, marked.
    let (status, marked, body) =
        post(&server, PAID, &[test, ("x-builder-key", &key)], json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert!(marked);
    assert_eq!(body["greeting"], "hello");
    assert!(body.get("receipt").is_none(), "{body}");
    let (status, marked, body) = post(
        &server,
        "/ai/invoke",
        &[test, ("x-admin-token", ADMIN_TOKEN)],
        json!({"slug": "paid-greeting"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(marked);
    assert_eq!(body["result"]["greeting"], "hello");
    assert_eq!(body["receipt"], Value::Null);
    // A refusal after the test was allowed is marked too.
    let (status, marked, body) =
        post(&server, PAID, &[test, ("x-builder-key", &key)], json!([1])).await;
    assert_error(status, &body, 422, "input_invalid");
    assert!(marked);

    // A paused endpoint: its owner may still test it, buyers get 503.
    server
        .patch(
            As::Builder(&key),
            "paid-greeting",
            &json!({"status": "paused"}),
        )
        .await;
    let (status, _, body) = post(&server, PAID, &[], json!({})).await;
    assert_error(status, &body, 503, "endpoint_paused");
    let (status, marked, body) =
        post(&server, PAID, &[test, ("x-builder-key", &key)], json!({})).await;
    assert_eq!((status.as_u16(), marked), (200, true), "{body}");

    // Marked in the owner's logs and events; no receipt, no sale, no payment event.
    let (status, logs) = server
        .call(
            "GET",
            "/ai/endpoints/paid-greeting/logs",
            As::Builder(&key),
            None,
        )
        .await;
    assert_eq!(status, 200, "{logs}");
    let entries = logs["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3, "{logs}");
    assert!(entries.iter().all(|e| e["test"] == true), "{logs}");
    let (status, feed) = server
        .call(
            "GET",
            "/ai/builders/events?since=1h&endpointSlug=paid-greeting",
            As::Builder(&key),
            None,
        )
        .await;
    assert_eq!(status, 200, "{feed}");
    let events = feed["events"].as_array().unwrap();
    let calls: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "invocation_succeeded")
        .collect();
    assert_eq!(calls.len(), 3, "{feed}");
    assert!(calls.iter().all(|e| e["data"]["test"] == true), "{feed}");
    assert!(!events.iter().any(|e| e["kind"] == "payment_settled"));
    let report = revenue(&server, &key).await;
    assert_eq!(report["count"], 0, "{report}");
    assert_reconciles(&report);
}

#[tokio::test]
async fn test_calls_spend_the_clients_anonymous_write_tokens() {
    let server = TestServer::start_with(|c| {
        c.limits.anonymous_writes = Some(toolhost::config::RateLimit {
            per_minute: 1,
            burst: 2,
        })
    })
    .await;
    let (key, _) = server.builder_with("Busy", &paid_greeting()).await;
    let owner = [("x-toolhost-test", "1"), ("x-builder-key", key.as_str())];
    for _ in 0..2 {
        let (status, _, body) = post(&server, PAID, &owner, json!({})).await;
        assert_eq!(status, 200, "{body}");
    }
    let (status, marked, body) = post(&server, PAID, &owner, json!({})).await;
    assert_error(status, &body, 429, "rate_limited");
    assert!(marked);
}

#[tokio::test]
async fn revenue_is_broken_down_by_payment_method_and_reconciles() {
    let server = TestServer::start().await;
    let (key, _) = server.builder_with("Seller", &paid_greeting()).await;

    // Two x402 payments (recorded only: this server settles nothing on-chain)…
    let signer = PrivateKeySigner::random();
    let required = ask(&server, PAID).await;
    for _ in 0..2 {
        let (name, value) = pay(&signer, &required, 2, |_| {});
        let (status, _, body) = post(&server, PAID, &[(name, &value)], json!({})).await;
        assert_eq!(status, 200, "{body}");
    }
    // …one call on the admin's developer credit, and a test call that counts nowhere.
    let (status, credit) = server
        .call(
            "POST",
            "/ai/admin/credits",
            As::Admin,
            Some(&json!({"amountUsd": 0.01})),
        )
        .await;
    assert_eq!(status, 200, "{credit}");
    let token = credit["credit"]["token"].as_str().unwrap();
    let (status, _, body) = post(&server, PAID, &[("x-developer-credit", token)], json!({})).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = post(
        &server,
        PAID,
        &[("x-toolhost-test", "1"), ("x-builder-key", &key)],
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{body}");

    let report = revenue(&server, &key).await;
    assert_eq!(report["count"], 3, "{report}");
    let by = &report["byPaymentMethod"];
    assert_eq!(
        (
            &by["x402Recorded"]["count"],
            &by["developerCredit"]["count"],
            &by["x402OnChain"]["count"]
        ),
        (&json!(2), &json!(1), &json!(0)),
        "{report}"
    );
    assert_eq!(by["x402Recorded"]["grossUnits"], "4000");
    assert_eq!(by["developerCredit"]["grossUnits"], "2000");
    assert_eq!(
        by["developerCredit"]["netUnits"], "1800",
        "10% platform fee"
    );
    assert_reconciles(&report);

    let (status, admin) = server
        .call("GET", "/ai/admin/revenue?since=1d", As::Admin, None)
        .await;
    assert_eq!(status, 200, "{admin}");
    let sales = &admin["builderSales"];
    assert_eq!(sales["byPaymentMethod"], report["byPaymentMethod"]);
    assert_reconciles(sales);
    assert_reconciles(&admin["registrationFees"]);
    assert_reconciles(&admin["platformEndpoints"]);
}
