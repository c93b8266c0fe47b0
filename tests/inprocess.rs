//! Fast in-process HTTP tests: the router driven with `tower::ServiceExt::oneshot`, no socket,
//! no server process. For behaviour that does not depend on the connection (routing, the error
//! shape, credentials, validation, the documents the service publishes); anything about
//! sockets, timeouts, concurrency or restarts belongs in the end-to-end suite (`tests/api`).

use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use tower::ServiceExt;

use toolhost::app::App;
use toolhost::config::Config;
use toolhost::router::build_router;

const ADMIN_TOKEN: &str = "in-process-admin-token-0123456789";

/// A service on a throwaway data dir, as its router.
async fn service() -> (tempfile::TempDir, Router) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path().join("data"));
    config.admin_token = Some(ADMIN_TOKEN.into());
    let (app, _) = App::open(config, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    (dir, build_router(Arc::new(app)))
}

async fn send(router: &Router, request: Request<Body>) -> (StatusCode, Value) {
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 16 << 20)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

fn post_json(path: &str, body: &str) -> Request<Body> {
    Request::post(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn assert_error(body: &Value, code: &str) {
    assert_eq!(body["ok"], false, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");
}

#[tokio::test]
async fn health_and_the_published_documents() {
    let (_dir, router) = service().await;
    let (status, _) = send(&router, get("/healthz")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, openapi) = send(&router, get("/openapi.json")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(openapi["paths"]["/tools/{slug}"].is_object());
    // Create and PATCH document the source's language and its two values.
    let schemas = &openapi["components"]["schemas"];
    assert_eq!(
        schemas["SourceLanguage"]["enum"],
        json!(["javascript", "typescript"]),
        "{schemas}"
    );
    for body in ["CreateRequest", "PatchRequest"] {
        assert!(
            schemas[body]["properties"]["sourceLanguage"].is_object(),
            "{body}: {}",
            schemas[body]
        );
    }
    let (status, manifest) = send(&router, get("/ai/manifest")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(manifest.is_object());
    let (status, catalog) = send(&router, get("/ai/endpoints")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!catalog["endpoints"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_the_error_shape() {
    let (_dir, router) = service().await;
    let (status, body) = send(&router, get("/no/such/route")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, "route_not_found");
    let request = Request::builder()
        .method(Method::DELETE)
        .uri("/ai/manifest")
        .body(Body::empty())
        .unwrap();
    let (status, body) = send(&router, request).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_error(&body, "method_not_allowed");
    let (status, body) = send(&router, get("/tools/no-such-tool")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, "endpoint_not_found");
}

#[tokio::test]
async fn credentials_are_checked_on_every_guarded_route() {
    let (_dir, router) = service().await;
    let (status, body) = send(&router, get("/ai/admin/reviews")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_error(&body, "unauthorized");
    let wrong = Request::get("/ai/admin/reviews")
        .header("x-admin-token", "not-the-token")
        .body(Body::empty())
        .unwrap();
    let (status, body) = send(&router, wrong).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_error(&body, "invalid_admin_token");
    let right = Request::get("/ai/admin/reviews")
        .header("x-admin-token", ADMIN_TOKEN)
        .body(Body::empty())
        .unwrap();
    let (status, _) = send(&router, right).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = send(
        &router,
        Request::get("/ai/builders/revenue")
            .header("x-builder-key", "thb_unknown")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_error(&body, "invalid_builder_key");
}

/// Whichever credential a route needs, a wrong one sent beside it is 401: a builder-only route
/// with a stale admin token, an admin-only route with an unknown builder key.
#[tokio::test]
async fn a_wrong_credential_beside_a_right_one_is_never_ignored() {
    let (_dir, router) = service().await;
    let made = Request::post("/ai/admin/builders")
        .header("x-admin-token", ADMIN_TOKEN)
        .header("content-type", "application/json")
        .body(Body::from(r#"{"name":"Maker"}"#))
        .unwrap();
    let (status, made) = send(&router, made).await;
    assert_eq!(status, StatusCode::OK, "{made}");
    let key = made["builderKey"].as_str().unwrap();
    let with = |path: &str, headers: &[(&str, &str)]| {
        let mut request = Request::get(path);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(Body::empty()).unwrap()
    };
    let (status, _) = send(
        &router,
        with("/ai/builders/revenue", &[("x-builder-key", key)]),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = send(
        &router,
        with(
            "/ai/builders/revenue",
            &[("x-builder-key", key), ("x-admin-token", "not-the-token")],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_error(&body, "invalid_admin_token");
    let (status, body) = send(
        &router,
        with(
            "/ai/admin/reviews",
            &[
                ("x-admin-token", ADMIN_TOKEN),
                ("x-builder-key", "thb_unknown"),
            ],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_error(&body, "invalid_builder_key");
}

#[tokio::test]
async fn bad_bodies_are_refused_before_anything_runs() {
    let (_dir, router) = service().await;
    let (status, body) = send(&router, post_json("/tools/receipt-echo", "{not json")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, "malformed_json");
    let text = Request::post("/tools/receipt-echo")
        .header(header::CONTENT_TYPE, "text/plain")
        .body(Body::from("hello"))
        .unwrap();
    let (status, body) = send(&router, text).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_error(&body, "unsupported_media_type");
    let (status, body) = send(
        &router,
        post_json(
            "/ai/invoke",
            &json!({"slug": "receipt-echo", "extra": 1}).to_string(),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
}

#[tokio::test]
async fn a_query_string_that_does_not_parse_is_invalid_query_in_the_error_shape() {
    let (_dir, router) = service().await;
    for query in ["limit=abc", "limit=-1"] {
        let request = Request::get(format!("/ai/endpoints/receipt-echo/logs?{query}"))
            .header("x-admin-token", ADMIN_TOKEN)
            .body(Body::empty())
            .unwrap();
        let (status, body) = send(&router, request).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert_error(&body, "invalid_query");
    }
    let (status, body) = send(&router, get("/ai/endpoints?pricingMode=x&form=nope")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_error(&body, "invalid_query");
}

#[tokio::test]
async fn a_free_call_runs_the_pipeline_and_a_paid_one_asks_for_payment() {
    let (_dir, router) = service().await;
    let (status, body) = send(&router, post_json("/tools/receipt-echo", r#"{"a":1}"#)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["ok"], true);
    assert!(body["receipt"]["receiptId"].is_string(), "{body}");
    // The first paid endpoint of the seed catalog answers 402 with x402 requirements.
    let (_, catalog) = send(&router, get("/ai/endpoints")).await;
    let paid = catalog["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["pricingMode"] == "fixed_price_success_receipt")
        .expect("a paid endpoint in the seed catalog");
    let slug = paid["slug"].as_str().unwrap();
    let response = unpaid_call(&router, slug).await;
    assert!(response.headers().contains_key("payment-required"));
}

/// The value of a metric line `name value` in a Prometheus text exposition.
fn metric(exposition: &str, name: &str) -> Option<f64> {
    exposition.lines().find_map(|line| {
        line.strip_prefix(name)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

#[tokio::test]
async fn metrics_report_the_isolate_pool() {
    let (_dir, router) = service().await;
    let scrape = |router: Router| async move {
        let response = router.oneshot(get("/metrics")).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let bytes = axum::body::to_bytes(response.into_body(), 16 << 20)
            .await
            .unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    };
    let before = scrape(router.clone()).await;
    assert_eq!(
        metric(&before, "toolhost_sandbox_abandoned_isolates"),
        Some(0.0)
    );
    assert_eq!(
        metric(&before, "toolhost_sandbox_engine_resets_total"),
        Some(0.0)
    );
    let invocations_before = metric(&before, "toolhost_sandbox_invocations_total").unwrap();
    // One JS call, paid with an admin-issued developer credit.
    let issue = Request::post("/ai/admin/credits")
        .header("x-admin-token", ADMIN_TOKEN)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(r#"{"amountUsd": 1}"#))
        .unwrap();
    let (status, body) = send(&router, issue).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let token = body["credit"]["token"].as_str().unwrap();
    let call = Request::post("/tools/text-summary")
        .header(header::CONTENT_TYPE, "application/json")
        .header("x-developer-credit", token)
        .body(Body::from(r#"{"text": "One sentence. Another one."}"#))
        .unwrap();
    let (status, body) = send(&router, call).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let after = scrape(router.clone()).await;
    assert!(
        metric(&after, "toolhost_sandbox_live_isolates").unwrap() >= 1.0,
        "{after}"
    );
    assert!(
        metric(&after, "toolhost_sandbox_invocations_total").unwrap() > invocations_before,
        "{after}"
    );
    assert!(metric(&after, "toolhost_sandbox_live_heap_bytes").unwrap() > 0.0);
}

/// `slug` called without payment: its 402.
async fn unpaid_call(router: &Router, slug: &str) -> axum::response::Response {
    let response = router
        .clone()
        .oneshot(post_json(&format!("/tools/{slug}"), "{}"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::PAYMENT_REQUIRED);
    response
}

/// What `slug`'s unpaid call, its quote and the discovery list offer now: the 402's
/// `PAYMENT-REQUIRED` header (decoded) and body, the quote's requirements, and the discovery
/// items of both transports.
async fn offered(router: &Router, slug: &str) -> [Value; 5] {
    use base64::Engine;
    let response = unpaid_call(router, slug).await;
    let header = response.headers()["payment-required"].as_bytes().to_vec();
    let header: Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(header)
            .unwrap(),
    )
    .unwrap();
    let body: Value = serde_json::from_slice(
        &axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap(),
    )
    .unwrap();
    let (status, quote) = send(
        router,
        post_json("/ai/quote", &json!({ "slug": slug }).to_string()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{quote}");
    let mut items = Vec::new();
    for kind in ["http", "mcp"] {
        let (status, list) = send(router, get(&format!("/discovery/resources?type={kind}"))).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        let item = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| {
                i["resource"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!("/tools/{slug}"))
                    || i["extensions"]["bazaar"]["info"]["input"]["toolName"] == slug
            })
            .unwrap_or_else(|| panic!("{slug} in the {kind} discovery list: {list}"))
            .clone();
        items.push(item);
    }
    let [http, mcp] = <[Value; 2]>::try_from(items).unwrap();
    [
        header,
        body,
        quote["paymentRequirements"].clone(),
        http,
        mcp,
    ]
}

/// Offers are built once per endpoint revision and kept (`payments::offers`): the first 402,
/// quote and discovery item after an edit must show the new price, description and schema,
/// never what was kept from before.
#[tokio::test]
async fn an_edited_endpoint_offers_its_new_terms_at_once() {
    let (_dir, router) = service().await;
    let slug = "receipt-echo-paid";
    let [header, body, quote, http, mcp] = offered(&router, slug).await;
    for (what, offer) in [("header", &header), ("quote", &quote)] {
        assert_eq!(offer["accepts"][0]["amount"], "1000", "{what}: {offer}");
    }
    assert_eq!(body["accepts"][0]["maxAmountRequired"], "1000", "{body}");
    assert_eq!(body["paymentRequired"], header);
    let schema = json!({"type": "object", "description": "Edited: a greeting", "properties": {"hello": {"type": "string"}}});
    let patch = Request::patch(format!("/ai/endpoints/{slug}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header("x-admin-token", ADMIN_TOKEN)
        .body(Body::from(
            json!({"priceUsd": 0.0025, "description": "Edited description.", "inputSchema": schema})
                .to_string(),
        ))
        .unwrap();
    let (status, edited) = send(&router, patch).await;
    assert_eq!(status, StatusCode::OK, "{edited}");

    let [header, body, quote, http_after, mcp_after] = offered(&router, slug).await;
    for (what, offer) in [
        ("header", &header),
        ("quote", &quote),
        ("http item", &http_after),
        ("mcp item", &mcp_after),
    ] {
        assert_eq!(offer["accepts"][0]["amount"], "2500", "{what}: {offer}");
    }
    assert_eq!(body["accepts"][0]["maxAmountRequired"], "2500", "{body}");
    assert_eq!(body["accepts"][0]["description"], "Edited description.");
    assert_eq!(body["paymentRequired"], header);
    assert_eq!(quote, {
        let mut v2 = header.clone();
        v2["error"] = json!("");
        v2
    });
    assert_eq!(header["resource"]["description"], "Edited description.");
    assert_eq!(
        header["extensions"]["bazaar"]["schema"]["properties"]["input"]["properties"]["body"],
        schema
    );
    assert_eq!(http_after["extensions"], header["extensions"]);
    assert_eq!(http_after["description"], "Edited description.");
    assert_eq!(
        mcp_after["extensions"]["bazaar"]["info"]["input"]["inputSchema"],
        schema
    );
    assert_eq!(
        mcp_after["extensions"]["bazaar"]["info"]["input"]["description"],
        "Edited description."
    );
    assert_ne!(http_after, http);
    assert_ne!(mcp_after, mcp);
}
