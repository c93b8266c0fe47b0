//! x402 payments end to end: real EIP-3009 authorizations signed with a local key, over v1 and
//! v2, every refusal reason, replay, concurrent double-spend, handler failure, developer credit
//! and a remote facilitator.

use alloy_signer_local::PrivateKeySigner;
use base64::Engine;
use serde_json::{json, Value};
use toolhost::x402::config::{FacilitatorConfig, NetworkConfig, RemoteConfig};
use toolhost::x402::schemes::exact_evm::signing::sign;
use toolhost::x402::schemes::exact_evm::Authorization;
use toolhost::x402::PaymentRequirements;

use crate::util::{
    assert_error, assert_payment_required, post_paid, read, seed_fixture, TestServer, ADMIN_TOKEN,
};

const PAID: &str = "/tools/receipt-echo-paid";

fn b64json(text: &str) -> Value {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("base64");
    serde_json::from_slice(&bytes).expect("json")
}

/// The v2 requirements the server asks for on `path`, from its `PAYMENT-REQUIRED` header.
pub(crate) async fn ask(server: &TestServer, path: &str) -> Value {
    ask_with(server, path, &json!({})).await
}

pub(crate) async fn ask_with(server: &TestServer, path: &str, input: &Value) -> Value {
    crate::util::payment_required(&server.client, &server.url(path), input).await
}

/// A payment header (name, value) for the first requirement of `required`, in `version`.
pub(crate) fn pay(
    signer: &PrivateKeySigner,
    required: &Value,
    version: u8,
    adjust: impl FnOnce(&mut Authorization),
) -> (&'static str, String) {
    let requirement: PaymentRequirements =
        serde_json::from_value(required["accepts"][0].clone()).unwrap();
    let network = NetworkConfig::base_sepolia();
    let payload = sign(signer, &network, &requirement, adjust).unwrap();
    let wire = match version {
        2 => {
            json!({"x402Version": 2, "resource": required["resource"], "accepted": requirement, "payload": payload})
        }
        _ => {
            json!({"x402Version": 1, "scheme": "exact", "network": network.v1_name, "payload": payload})
        }
    };
    let name = if version == 2 {
        "PAYMENT-SIGNATURE"
    } else {
        "X-PAYMENT"
    };
    (name, toolhost::x402::header::encode(&wire))
}

/// A v2 payment `header` with its (unsigned) `resource.url` set to `url`: the same signed
/// authorization, made out for another endpoint.
pub(crate) fn made_out_for(header: &(&'static str, String), url: &str) -> (&'static str, String) {
    let (name, value) = header;
    let mut wire = toolhost::x402::header::decode(value).unwrap().raw;
    wire["resource"]["url"] = json!(url);
    (name, toolhost::x402::header::encode(&wire))
}

#[tokio::test]
async fn pays_over_v2_and_v1_and_gets_verifiable_receipts() {
    let server = TestServer::start().await;
    let (_, manifest) = server.get("/ai/manifest").await;
    let public_key = manifest["receipts"]["publicKey"]
        .as_str()
        .unwrap()
        .to_string();
    let pay_to = manifest["payment"]["payTo"].as_str().unwrap().to_string();
    let signer = PrivateKeySigner::random();
    let required = ask(&server, PAID).await;
    assert_eq!(required["x402Version"], 2);
    assert_eq!(required["resource"]["url"], server.url(PAID));
    assert_eq!(required["accepts"][0]["amount"], "1000");
    assert_eq!(required["accepts"][0]["network"], "eip155:84532");
    assert_eq!(required["accepts"][0]["payTo"], pay_to);
    for (version, response_header) in [(2u8, "payment-response"), (1, "x-payment-response")] {
        let header = pay(&signer, &required, version, |_| {});
        let (status, headers, body) =
            post_paid(&server, PAID, &header, json!({"n": version})).await;
        assert_eq!(status, 200, "{body}");
        let settlement = b64json(headers[response_header].to_str().unwrap());
        assert_eq!(settlement["success"], true);
        assert_eq!(settlement["payer"], signer.address().to_checksum(None));
        assert_eq!(
            settlement["network"],
            if version == 2 {
                "eip155:84532"
            } else {
                "base-sepolia"
            }
        );
        let receipt = &body["receipt"];
        assert_eq!(
            headers["x-receipt-id"].to_str().unwrap(),
            receipt["receiptId"].as_str().unwrap()
        );
        assert_eq!(receipt["paymentMethod"], "x402");
        assert_eq!(receipt["x402Version"], version);
        assert_eq!(receipt["charged"], true);
        assert_eq!(receipt["amount"], "1000");
        assert_eq!(receipt["priceUsd"], "0.001");
        assert_eq!(receipt["network"], "eip155:84532");
        assert_eq!(receipt["settlement"]["status"], "recorded");
        assert_eq!(receipt["settlement"]["onChain"], false);
        assert_eq!(receipt["endpointSlug"], "receipt-echo-paid");
        assert_eq!(receipt["requestSha256"].as_str().unwrap().len(), 64);
        let (status, stored) = server
            .get(&format!(
                "/ai/receipts/{}",
                receipt["receiptId"].as_str().unwrap()
            ))
            .await;
        assert_eq!(status, 200);
        assert_eq!(&stored, receipt);
        let parsed: toolhost::receipts::Receipt = serde_json::from_value(stored).unwrap();
        assert!(
            toolhost::receipts::verify_receipt(&parsed, &public_key),
            "signature checks offline"
        );
    }
    let (status, body) = server.get("/ai/receipts/rcpt_nope").await;
    assert_error(status, &body, 404, "receipt_not_found");
}

#[tokio::test]
async fn refusals_carry_x402_reasons() {
    let server = TestServer::start().await;
    let signer = PrivateKeySigner::random();
    let required = ask(&server, PAID).await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let stranger = PrivateKeySigner::random().address().to_string();
    type Adjust = Box<dyn FnOnce(&mut Authorization)>;
    let cases: Vec<(&str, Adjust)> = vec![
        (
            "invalid_exact_evm_payload_recipient_mismatch",
            Box::new(move |a| a.to = stranger),
        ),
        (
            "invalid_exact_evm_payload_authorization_value_mismatch",
            Box::new(|a| a.value = "999".into()),
        ),
        (
            "invalid_exact_evm_payload_authorization_valid_after",
            Box::new(move |a| a.valid_after = (now + 120).to_string()),
        ),
        (
            "invalid_exact_evm_payload_authorization_valid_before",
            Box::new(move |a| a.valid_before = (now - 1).to_string()),
        ),
        // Still valid, but not for the 30 s settling may take.
        (
            "invalid_exact_evm_payload_authorization_valid_before",
            Box::new(move |a| a.valid_before = (now + 5).to_string()),
        ),
    ];
    for (reason, adjust) in cases {
        let header = pay(&signer, &required, 2, adjust);
        let (status, headers, body) = post_paid(&server, PAID, &header, json!({})).await;
        assert_payment_required(status, &body, reason);
        assert_eq!(
            b64json(headers["payment-required"].to_str().unwrap())["error"],
            reason
        );
    }
    // A signature by someone other than `from`.
    let (name, value) = pay(&signer, &required, 1, |_| {});
    let mut wire = b64json(&value);
    wire["payload"]["authorization"]["from"] =
        json!(PrivateKeySigner::random().address().to_string());
    let forged = (name, toolhost::x402::header::encode(&wire));
    let (status, _, body) = post_paid(&server, PAID, &forged, json!({})).await;
    assert_payment_required(status, &body, "invalid_exact_evm_payload_signature");
    // The same signature made malleable (s in the upper half, v flipped): it recovers the
    // payer, but the token contract would refuse it.
    let (name, value) = pay(&signer, &required, 1, |_| {});
    let mut wire = b64json(&value);
    let low: alloy_primitives::Signature = wire["payload"]["signature"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let order = alloy_primitives::U256::from_str_radix(
        "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141",
        16,
    )
    .unwrap();
    let high = alloy_primitives::Signature::new(low.r(), order - low.s(), !low.v());
    wire["payload"]["signature"] = json!(high.to_string());
    let malleable = (name, toolhost::x402::header::encode(&wire));
    let (status, _, body) = post_paid(&server, PAID, &malleable, json!({})).await;
    assert_payment_required(status, &body, "invalid_exact_evm_payload_signature");
    // Unknown network and scheme.
    let mut wire = b64json(&pay(&signer, &required, 1, |_| {}).1);
    wire["network"] = json!("base");
    let (status, _, body) = post_paid(
        &server,
        PAID,
        &("X-PAYMENT", toolhost::x402::header::encode(&wire)),
        json!({}),
    )
    .await;
    assert_payment_required(status, &body, "invalid_network");
    wire["network"] = json!("base-sepolia");
    wire["scheme"] = json!("deferred");
    let (status, _, body) = post_paid(
        &server,
        PAID,
        &("X-PAYMENT", toolhost::x402::header::encode(&wire)),
        json!({}),
    )
    .await;
    assert_payment_required(status, &body, "invalid_scheme");
    // A scheme we do not speak is refused as such whatever its payload looks like, not
    // called malformed.
    wire["payload"] = json!({"permit2Authorization": {"permitted": {"amount": "1000"}}});
    let (status, _, body) = post_paid(
        &server,
        PAID,
        &("X-PAYMENT", toolhost::x402::header::encode(&wire)),
        json!({}),
    )
    .await;
    assert_payment_required(status, &body, "invalid_scheme");
    // Malformed headers are 400 in the ordinary error shape.
    for bad in [
        "not base64!",
        "bm90IGpzb24=",
        &base64::engine::general_purpose::STANDARD.encode(r#"{"x402Version":2}"#),
    ] {
        let (status, _, body) = post_paid(
            &server,
            PAID,
            &("PAYMENT-SIGNATURE", bad.to_string()),
            json!({}),
        )
        .await;
        assert_error(status, &body, 400, "invalid_payload");
    }
    // Replay: the same payment twice.
    let header = pay(&signer, &required, 2, |_| {});
    let (status, _, _) = post_paid(&server, PAID, &header, json!({})).await;
    assert_eq!(status, 200);
    let (status, _, body) = post_paid(&server, PAID, &header, json!({})).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
}

#[tokio::test]
async fn concurrent_requests_with_one_payment_are_served_once() {
    let server = TestServer::start().await;
    let signer = PrivateKeySigner::random();
    let required = ask(&server, PAID).await;
    let header = pay(&signer, &required, 2, |_| {});
    let requests = (0..12).map(|i| post_paid(&server, PAID, &header, json!({"i": i})));
    let results = futures::future::join_all(requests).await;
    let served = results.iter().filter(|(s, _, _)| *s == 200).count();
    assert_eq!(
        served,
        1,
        "{:?}",
        results.iter().map(|r| r.0).collect::<Vec<_>>()
    );
    for (status, _, body) in results.iter().filter(|(s, _, _)| *s != 200) {
        assert_payment_required(*status, body, "invalid_exact_evm_nonce_already_used");
    }
}

/// A paid JS endpoint whose handler throws, beside the paid receipt echo at the same price.
pub(crate) fn failing_catalog() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("catalog")).unwrap();
    std::fs::create_dir_all(dir.path().join("handlers")).unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/catalog/30-receipt-echo-paid.json");
    std::fs::copy(root, dir.path().join("catalog/30-receipt-echo-paid.json")).unwrap();
    std::fs::write(
        dir.path().join("handlers/fails.js"),
        "export default async function (req, ctx) { throw new Error('boom'); }\n",
    )
    .unwrap();
    let fixture = json!({
        "slug": "paid-fails", "title": "Fails", "description": "Always throws", "priceUsd": 0.001,
        "handlerType": "js_request_response", "tags": [],
        "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
        "capabilities": {"kv": false, "files": false, "httpGetJson": false, "logs": false},
        "source": "handlers/fails.js", "exampleInput": {}
    });
    seed_fixture(dir.path(), &fixture);
    dir
}

/// A failing handler settles nothing and issues no receipt, and its nonce claim is released:
/// the same signed authorization then pays for a successful call.
#[tokio::test]
async fn handler_failure_charges_nothing_and_releases_the_nonce() {
    let fixtures = failing_catalog();
    let seed = fixtures.path().to_path_buf();
    let server = TestServer::start_with(move |c| c.seed_dir = Some(seed)).await;
    let signer = PrivateKeySigner::random();
    let required = ask(&server, "/tools/paid-fails").await;
    let header = pay(&signer, &required, 2, |_| {});
    for _ in 0..2 {
        let (status, headers, body) =
            post_paid(&server, "/tools/paid-fails", &header, json!({})).await;
        assert!(status.is_server_error(), "{status} {body}");
        assert!(headers.get("payment-response").is_none() && headers.get("x-receipt-id").is_none());
        assert!(body.get("receipt").is_none());
    }
    // The same authorization, made out for the echo of the same price.
    let header = made_out_for(&header, &server.url(PAID));
    let (status, headers, body) = post_paid(&server, PAID, &header, json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert!(headers.contains_key("payment-response"));
    let (status, _, body) = post_paid(&server, PAID, &header, json!({})).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
}

#[tokio::test]
async fn developer_credit_pays_until_it_runs_out() {
    let server = TestServer::start().await;
    let (status, body) = server
        .post("/ai/admin/credits", &json!({"amountUsd": 0.0025}))
        .await;
    assert_error(status, &body, 401, "unauthorized");
    let issue = |body: Value| {
        server
            .client
            .post(server.url("/ai/admin/credits"))
            .header("x-admin-token", ADMIN_TOKEN)
            .json(&body)
            .send()
    };
    let (status, body) = read(issue(json!({"amountUsd": 0})).await.unwrap()).await;
    assert_error(status, &body, 422, "invalid_amount");
    // More than a balance keeps exactly (schemathesis found it answered 500).
    let (status, body) = read(
        issue(json!({"amountUsd": 10_000_000_000_000_u64}))
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &body, 422, "invalid_amount");
    let (status, body) = read(
        issue(json!({"amountUsd": 0.0025, "note": "tests"}))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let token = body["credit"]["token"].as_str().unwrap().to_string();
    let credit_id = body["credit"]["creditId"].as_str().unwrap().to_string();
    let spend = || {
        server
            .client
            .post(server.url(PAID))
            .header("x-developer-credit", &token)
            .json(&json!({"x": 1}))
            .send()
    };
    for _ in 0..2 {
        let (status, body) = read(spend().await.unwrap()).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["receipt"]["paymentMethod"], "developer_credit");
        assert_eq!(body["receipt"]["settlement"]["status"], "debited");
        let payer = body["receipt"]["payer"].as_str().unwrap();
        assert!(
            payer.starts_with("cred_") && payer.contains('…') && payer != credit_id,
            "{payer}"
        );
    }
    let (status, body) = read(spend().await.unwrap()).await;
    assert_payment_required(status, &body, "insufficient_developer_credit");
    let response = server
        .client
        .post(server.url(PAID))
        .header("x-developer-credit", "thdc_nope")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let (status, body) = read(response).await;
    assert_payment_required(status, &body, "invalid_developer_credit");
    let response = server
        .client
        .get(server.url("/ai/admin/credits"))
        .header("x-admin-token", ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    let (_, list) = read(response).await;
    assert_eq!(list["credits"][0]["balanceUnits"], "500");
    assert!(
        !list.to_string().contains(&token),
        "tokens are never listed"
    );
}

/// A stand-in facilitator on loopback: accepts every payment except one marked by value, and
/// counts settlements.
async fn fake_facilitator(settled: std::sync::Arc<std::sync::atomic::AtomicUsize>) -> String {
    use axum::routing::{get, post};
    let app = axum::Router::new()
        .route("/supported", get(|| async { axum::Json(json!({"kinds": [{"x402Version": 2, "scheme": "exact", "network": "eip155:84532"}]})) }))
        .route(
            "/verify",
            post(|axum::Json(body): axum::Json<Value>| async move {
                assert!(body["paymentRequirements"]["payTo"].is_string() && body["paymentPayload"]["payload"].is_object());
                let authorization = &body["paymentPayload"]["payload"]["authorization"];
                axum::Json(match authorization["validAfter"].as_str() {
                    Some("1") => json!({"isValid": false, "invalidReason": "invalid_exact_evm_insufficient_balance"}),
                    Some("2") => json!({"isValid": false, "invalidReason": "a_reason_x402_does_not_name"}),
                    _ => json!({"isValid": true, "payer": authorization["from"]}),
                })
            }),
        )
        .route(
            "/settle",
            post(move |axum::Json(body): axum::Json<Value>| {
                let settled = settled.clone();
                async move {
                    settled.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    axum::Json(json!({"success": true, "transaction": format!("0x{}", "ab".repeat(32)), "network": "eip155:84532",
                        "payer": body["paymentPayload"]["payload"]["authorization"]["from"]}))
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

#[tokio::test]
async fn remote_facilitator_verifies_and_settles() {
    let settled = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let url = fake_facilitator(settled.clone()).await;
    let server = TestServer::start_with(move |c| {
        c.payment.facilitator = FacilitatorConfig::Remote(RemoteConfig::open(url))
    })
    .await;
    let (status, supported) = server.get("/x402/supported").await;
    assert_eq!(
        (status.as_u16(), supported["kinds"][0]["network"].clone()),
        (200, json!("eip155:84532"))
    );
    let signer = PrivateKeySigner::random();
    let required = ask(&server, PAID).await;
    let header = pay(&signer, &required, 2, |_| {});
    let (status, headers, body) = post_paid(&server, PAID, &header, json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["receipt"]["settlement"]["onChain"], true);
    assert_eq!(body["receipt"]["settlement"]["status"], "settled");
    assert_eq!(body["receipt"]["settlement"]["facilitator"], "remote");
    assert_eq!(
        b64json(headers["payment-response"].to_str().unwrap())["transaction"],
        format!("0x{}", "ab".repeat(32))
    );
    // Replay protection stays ours.
    let (status, _, body) = post_paid(&server, PAID, &header, json!({})).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
    // The facilitator's refusal reaches the caller: a reason x402 names as itself, any other as
    // `payment_rejected` with the facilitator's reason in the message.
    let refused = pay(&signer, &required, 2, |a| a.valid_after = "1".into());
    let (status, _, body) = post_paid(&server, PAID, &refused, json!({})).await;
    assert_payment_required(status, &body, "invalid_exact_evm_insufficient_balance");
    let refused = pay(&signer, &required, 2, |a| a.valid_after = "2".into());
    let (status, _, body) = post_paid(&server, PAID, &refused, json!({})).await;
    assert_payment_required(status, &body, "payment_rejected");
    assert!(body["message"]
        .as_str()
        .unwrap()
        .contains("a_reason_x402_does_not_name"));
    assert_eq!(settled.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// A stand-in facilitator that verifies everything and answers `/settle` with `answer` after
/// `delay`, counting the `/settle` calls.
async fn scripted_facilitator(
    answer: Value,
    delay: std::time::Duration,
    settles: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) -> String {
    use axum::routing::post;
    let app = axum::Router::new()
        .route(
            "/verify",
            post(|axum::Json(body): axum::Json<Value>| async move {
                axum::Json(json!({"isValid": true,
                    "payer": body["paymentPayload"]["payload"]["authorization"]["from"]}))
            }),
        )
        .route(
            "/settle",
            post(move || {
                let (answer, settles) = (answer.clone(), settles.clone());
                async move {
                    settles.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    tokio::time::sleep(delay).await;
                    axum::Json(answer)
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// A settlement that fails after the handler ran burns the authorization: the answer says it is
/// spent, and replaying it is refused as a used nonce, before the handler runs again.
#[tokio::test]
async fn a_failed_settlement_burns_the_authorization() {
    let settles = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let answer = json!({"success": false, "errorReason": "settlement_failed", "transaction": "", "network": "eip155:84532"});
    let url = scripted_facilitator(answer, std::time::Duration::ZERO, settles.clone()).await;
    let server = TestServer::start_with(move |c| {
        c.payment.facilitator = FacilitatorConfig::Remote(RemoteConfig::open(url))
    })
    .await;
    let signer = PrivateKeySigner::random();
    let required = ask(&server, PAID).await;
    let header = pay(&signer, &required, 2, |_| {});
    let (status, headers, body) = post_paid(&server, PAID, &header, json!({})).await;
    assert_payment_required(status, &body, "settlement_failed");
    assert!(
        body["message"].as_str().unwrap().contains("spent"),
        "{body}"
    );
    assert!(headers.get("x-receipt-id").is_none() && body.get("receipt").is_none());
    assert_eq!(server.handler_runs("receipt-echo-paid").await, 1);
    for _ in 0..2 {
        let (status, _, body) = post_paid(&server, PAID, &header, json!({})).await;
        assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
    }
    assert_eq!(
        server.handler_runs("receipt-echo-paid").await,
        1,
        "the handler ran again"
    );
    assert_eq!(settles.load(std::sync::atomic::Ordering::SeqCst), 1);
    // Still burned after a recovery pass (which releases orphaned claims, not burned ones).
    let recovery = toolhost::payments::recovery::Recovery::new(
        server.app.store.clone(),
        server.app.payments.facilitator.clone(),
        server.app.receipt_signer.clone(),
        server.app.urls.clone(),
        std::time::Duration::ZERO,
        std::time::Duration::from_secs(60),
        server.app.config.platform_fee_bps,
    );
    let report = recovery
        .recover_claims(toolhost::payments::recovery::Cutoffs::exclusive_start(
            toolhost::payments::nonces::now_ms(),
            std::time::Duration::ZERO,
        ))
        .await
        .unwrap();
    assert_eq!(report, Default::default());
    let (status, _, body) = post_paid(&server, PAID, &header, json!({})).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
    // A new authorization buys the call again.
    let fresh = pay(&signer, &required, 2, |_| {});
    let (status, _, body) = post_paid(&server, PAID, &fresh, json!({})).await;
    assert_payment_required(status, &body, "settlement_failed");
    assert_eq!(server.handler_runs("receipt-echo-paid").await, 2);
}

/// The request deadline passing while the payment settles does not cut the answer: the payer,
/// charged, gets the result and the receipt (200), not a 504.
#[tokio::test]
async fn a_settlement_outliving_the_request_deadline_still_answers_with_the_receipt() {
    let settles = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let answer = json!({"success": true, "transaction": format!("0x{}", "cd".repeat(32)), "network": "eip155:84532"});
    let url = scripted_facilitator(
        answer,
        std::time::Duration::from_millis(1500),
        settles.clone(),
    )
    .await;
    let server = TestServer::start_with(move |c| {
        c.payment.facilitator = FacilitatorConfig::Remote(RemoteConfig::open(url));
        c.limits.request_timeout = std::time::Duration::from_millis(500);
    })
    .await;
    let signer = PrivateKeySigner::random();
    let required = ask(&server, PAID).await;
    let header = pay(&signer, &required, 2, |_| {});
    let started = std::time::Instant::now();
    let (status, headers, body) = post_paid(&server, PAID, &header, json!({"slow": true})).await;
    assert_eq!(status, 200, "{body}");
    assert!(started.elapsed() >= std::time::Duration::from_millis(1500));
    assert!(headers.contains_key("payment-response"));
    let receipt = &body["receipt"];
    assert_eq!(receipt["settlement"]["status"], "settled", "{receipt}");
    assert_eq!(receipt["settlement"]["collected"], true);
    assert_eq!(
        headers["x-receipt-id"],
        receipt["receiptId"].as_str().unwrap()
    );
    let (status, stored) = server
        .get(&format!(
            "/ai/receipts/{}",
            receipt["receiptId"].as_str().unwrap()
        ))
        .await;
    assert_eq!(status, 200);
    assert_eq!(&stored, receipt);
    assert_eq!(settles.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// A v2 payment names the resource it pays for (the 402's `resource`): presented to another
/// endpoint of the same price it is refused, and it still pays for the endpoint it names.
#[tokio::test]
async fn a_v2_payment_for_one_endpoint_does_not_buy_another_of_the_same_price() {
    let server = TestServer::start().await;
    let mut twin = crate::util::static_endpoint("same-price-twin");
    twin["priceUsd"] = json!(0.001);
    server.create(crate::util::As::Admin, &twin).await;
    let required = ask(&server, PAID).await;
    let twin_required = ask(&server, "/tools/same-price-twin").await;
    assert_eq!(twin_required["accepts"], required["accepts"], "same terms");
    let header = pay(&PrivateKeySigner::random(), &required, 2, |_| {});
    let (status, _, body) = post_paid(&server, "/tools/same-price-twin", &header, json!({})).await;
    assert_payment_required(status, &body, "invalid_payload");
    let (status, _, body) = post_paid(&server, PAID, &header, json!({})).await;
    assert_eq!(status, 200, "{body}");
    server.stop().await;
}
