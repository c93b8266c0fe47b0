//! Metered prices end to end (`pricingMode` `metered_success_receipt`, x402 `upto`): the
//! endpoint says how it charges wherever it is listed; the payer signs a Permit2 permit of the
//! maximum; the handler reports what the call cost with `ctx.charge`; the call is charged
//! that, between the endpoint's minimum and the maximum, by x402 or developer credit; the
//! receipt says the maximum, the charge and the units; bad permits change nothing.

use alloy_signer_local::PrivateKeySigner;
use serde_json::{json, Value};
use toolhost::x402::schemes::upto_evm::{signing::sign, Authorization};
use toolhost::x402::{config::NetworkConfig, PaymentRequirements};

use crate::abuse::{credit_balance, credit_of};
use crate::payments::ask_with;
use crate::util::{assert_error, post_paid, As, TestServer};

const SLUG: &str = "metered-pages";

/// Charges 0.001 USD a page, one `ctx.charge` per page.
const PAGES: &str = r#"export default async function (req, ctx) {
  for (let i = 1; i <= req.input.pages; i++) ctx.charge(0.001, { units: 1, note: `page ${i}` });
  return { pages: req.input.pages, payment: req.payment };
}"#;

/// A JS endpoint metered by the page: at most 0.005 USD, at least 0.0005.
fn metered_endpoint(source: &str) -> Value {
    json!({
        "slug": SLUG,
        "title": "Pages",
        "description": "Fetches pages; costs what it fetched.",
        "priceUsd": 0.005,
        "pricingMode": "metered_success_receipt",
        "metering": {"unit": "page fetched", "minimumUsd": 0.0005},
        "source": source,
        "inputSchema": {"type": "object", "properties": {"pages": {"type": "integer"}}},
        "safetyAttestation": {"accepted": true},
    })
}

/// A `PAYMENT-SIGNATURE` of an `upto` permit for the first requirement of `required`.
fn pay_upto(
    signer: &PrivateKeySigner,
    required: &Value,
    adjust: impl FnOnce(&mut Authorization),
) -> (&'static str, String) {
    let requirement: PaymentRequirements =
        serde_json::from_value(required["accepts"][0].clone()).unwrap();
    let payload = sign(signer, &NetworkConfig::base_sepolia(), &requirement, adjust).unwrap();
    let wire = json!({"x402Version": 2, "resource": required["resource"], "accepted": requirement, "payload": payload});
    ("PAYMENT-SIGNATURE", toolhost::x402::header::encode(&wire))
}

async fn call(server: &TestServer, header: &(&str, String), pages: u64) -> (u16, Value) {
    let path = format!("/tools/{SLUG}");
    let (status, _, body) = post_paid(server, &path, header, json!({"pages": pages})).await;
    (status.as_u16(), body)
}

/// A 402 refusal with the x402 reason `code` (its `error` is the reason string, x402 v1's
/// shape, with `code` beside it).
fn assert_refused(status: u16, body: &Value, code: &str) {
    assert_eq!((status, body["code"].as_str()), (402, Some(code)), "{body}");
}

/// The endpoint's call log as its owner reads it.
async fn owner_logs(server: &TestServer, key: &str) -> Value {
    let path = format!("/ai/endpoints/{SLUG}/logs?limit=10");
    server.call("GET", &path, As::Builder(key), None).await.1
}

/// `grossUnits` of the builder's revenue.
async fn gross(server: &TestServer, key: &str) -> String {
    let (status, body) = server
        .call("GET", "/ai/builders/revenue", As::Builder(key), None)
        .await;
    assert_eq!(status, 200, "{body}");
    body["revenue"]["grossUnits"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_metered_call_is_charged_what_it_reports_within_its_bounds() {
    let server = TestServer::start().await;
    let (key, created) = server.builder_with("Meter", &metered_endpoint(PAGES)).await;
    assert_eq!(
        created["endpoint"]["pricingMode"],
        "metered_success_receipt"
    );

    // Listed as metered: the record, the catalog, the 402 and the MCP tool say so.
    let (_, record) = server.get(&format!("/ai/endpoints/{SLUG}")).await;
    assert_eq!(record["endpoint"]["metering"]["unit"], "page fetched");
    assert_eq!(record["example"]["pricingMode"], "metered_success_receipt");
    let (_, listing) = server
        .get("/ai/endpoints?pricingMode=metered_success_receipt")
        .await;
    let slugs: Vec<&str> = listing["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, [SLUG]);
    let required = ask_with(&server, &format!("/tools/{SLUG}"), &json!({"pages": 1})).await;
    let accepts = &required["accepts"][0];
    assert_eq!(accepts["scheme"], "upto");
    assert_eq!(accepts["amount"], "5000");
    // Recording only: a facilitator address no one can send from.
    assert_eq!(
        accepts["extra"]["facilitatorAddress"],
        "0x0000000000000000000000000000000000000000"
    );
    let pricing = &required["extensions"]["bazaar"]["info"]["pricing"];
    assert_eq!(pricing["mode"], "metered", "{required}");
    assert_eq!(pricing["unit"], "page fetched");
    let metering = &required["extensions"]["toolhost/metering"]["info"];
    assert_eq!(metering["unit"], "page fetched");
    assert_eq!(metering["maxUsd"], 0.005);
    let tools = crate::mcp::result(&server, "tools/list", json!({})).await;
    let tool = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == SLUG)
        .unwrap()
        .clone();
    assert_eq!(
        tool["_meta"]["toolhost/pricing"]["pricingMode"],
        "metered_success_receipt"
    );
    assert!(
        tool["description"]
            .as_str()
            .unwrap()
            .contains("metered by page fetched, at most 0.005 USD"),
        "{tool}"
    );

    // Two pages: 0.002 of the 0.005 signed for.
    let signer = PrivateKeySigner::random();
    let (status, body) = call(&server, &pay_upto(&signer, &required, |_| {}), 2).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["payment"]["priceUsd"], "0.005",
        "the handler sees the maximum"
    );
    assert_eq!(body["payment"]["metered"]["unit"], "page fetched");
    let receipt = &body["receipt"];
    assert_eq!(receipt["amount"], "2000");
    assert_eq!(receipt["priceUsd"], "0.002");
    assert_eq!(receipt["charged"], true);
    assert_eq!(receipt["payer"], signer.address().to_checksum(None));
    assert_eq!(receipt["settlement"]["status"], "recorded");
    assert_eq!(
        receipt["metering"],
        json!({"maxUsd": "0.005", "maxAmount": "5000", "unit": "page fetched", "units": "2", "note": "page 2", "capped": false})
    );
    // The stored receipt is the one answered, signed.
    let (_, stored) = server
        .get(&format!(
            "/ai/receipts/{}",
            receipt["receiptId"].as_str().unwrap()
        ))
        .await;
    assert_eq!(stored, *receipt);

    // Nine pages: more than the maximum, charged the maximum, and the owner is told.
    let (status, body) = call(&server, &pay_upto(&signer, &required, |_| {}), 9).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["receipt"]["amount"], "5000");
    assert_eq!(body["receipt"]["metering"]["capped"], true);
    assert_eq!(body["receipt"]["metering"]["units"], "9");
    let logs = owner_logs(&server, &key).await;
    assert!(
        logs.to_string()
            .contains("the call reported 0.009 USD, more than the most it can cost"),
        "{logs}"
    );

    // Nothing reported: the minimum.
    let (status, body) = call(&server, &pay_upto(&signer, &required, |_| {}), 0).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["receipt"]["amount"], "500");
    assert_eq!(body["receipt"]["metering"]["units"], "0");
    assert_eq!(gross(&server, &key).await, "7500");

    // Bad permits: each refused with its reason, nothing charged, the handler not run.
    let runs = server.handler_runs(SLUG).await;
    let stranger = PrivateKeySigner::random().address().to_string();
    let now = toolhost::x402::verify::unix_now();
    type Adjust = Box<dyn FnOnce(&mut Authorization)>;
    let cases: Vec<(&str, Adjust)> = vec![
        // A maximum below the one asked for.
        (
            "permit2_amount_mismatch",
            Box::new(|a| a.permitted.amount = "4000".into()),
        ),
        ("invalid_permit2_spender", {
            let s = stranger.clone();
            Box::new(move |a| a.spender = s)
        }),
        ("upto_facilitator_mismatch", {
            let s = stranger.clone();
            Box::new(move |a| a.witness.facilitator = Some(s))
        }),
        (
            "permit2_deadline_expired",
            Box::new(move |a| a.deadline = (now - 1).to_string()),
        ),
    ];
    for (code, adjust) in cases {
        let (status, body) = call(&server, &pay_upto(&signer, &required, adjust), 2).await;
        assert_refused(status, &body, code);
    }
    // An `exact` authorization does not pay a metered endpoint.
    let mut exact = required.clone();
    exact["accepts"][0]["scheme"] = json!("exact");
    let header = crate::payments::pay(&signer, &exact, 2, |_| {});
    let (status, body) = call(&server, &header, 2).await;
    assert_refused(status, &body, "invalid_scheme");
    // The same permit twice: the second is a used nonce.
    let header = pay_upto(&signer, &required, |_| {});
    assert_eq!(call(&server, &header, 1).await.0, 200);
    let (status, body) = call(&server, &header, 1).await;
    assert_refused(status, &body, "invalid_exact_evm_nonce_already_used");
    assert_eq!(server.handler_runs(SLUG).await, runs + 1);
    assert_eq!(gross(&server, &key).await, "8500");
}

#[tokio::test]
async fn a_developer_credit_pays_what_a_metered_call_used() {
    let server = TestServer::start().await;
    server.builder_with("Meter", &metered_endpoint(PAGES)).await;
    let (token, credit_id) = credit_of(&server, 0.01).await;
    let header = ("x-developer-credit", token);
    let (status, body) = call(&server, &header, 3).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["receipt"]["amount"], "3000");
    assert_eq!(body["receipt"]["paymentMethod"], "developer_credit");
    // The maximum was held while the call ran; what it did not use went back.
    assert_eq!(credit_balance(&server, &credit_id).await, "7000");
    // A credit that cannot cover the maximum is refused, though the call might cost less.
    let (small, small_id) = credit_of(&server, 0.004).await;
    let (status, body) = call(&server, &("x-developer-credit", small), 1).await;
    assert_refused(status, &body, "insufficient_developer_credit");
    assert_eq!(credit_balance(&server, &small_id).await, "4000");
}

/// A handler that throws everything it can at `ctx.charge`: each bad argument is refused where
/// it is made (the handler sees the error), a flood of the largest charges is capped at the
/// endpoint's maximum, a charge after the call has returned changes nothing, and the receipt,
/// the credit and the revenue agree on what was charged.
const HOSTILE_CHARGES: &str = r#"export default async function (req, ctx) {
  const refused = [];
  const tries = [
    [NaN], [Infinity], [-Infinity], [-0.001], ["0.001"], [null], [{}], [1e308], [2 ** 70],
    [0.001, { units: NaN }], [0.001, { units: -1 }], [0.001, { units: Infinity }],
    [0.001, { units: "3" }], [0.001, { note: 42 }], [0.001, "units"],
  ];
  for (const args of tries) {
    try { ctx.charge(...args); refused.push(false); } catch (e) { refused.push(e.name); }
  }
  if (req.input.pages === 1) {
    // Within bounds: one page's worth after all the refusals.
    ctx.charge(0.001, { units: 1, note: "x".repeat(100000) });
  } else {
    for (let i = 0; i < 100000; i++) ctx.charge(1000, { units: 1e300 });
  }
  setTimeout(() => { try { ctx.charge(1000); } catch {} }, 0);
  return { refused };
}"#;

#[tokio::test]
async fn hostile_charges_are_refused_capped_and_never_change_a_finished_call() {
    let server = TestServer::start().await;
    let (key, _) = server
        .builder_with("Meter", &metered_endpoint(HOSTILE_CHARGES))
        .await;
    let (token, credit_id) = credit_of(&server, 0.05).await;
    let header = ("x-developer-credit", token);

    let (status, body) = call(&server, &header, 1).await;
    assert_eq!(status, 200, "{body}");
    let refused: Vec<&str> = (body["refused"].as_array().unwrap().iter())
        .map(|r| r.as_str().unwrap_or("accepted"))
        .collect();
    assert!(
        refused
            .iter()
            .all(|r| *r == "RangeError" || *r == "TypeError"),
        "every bad charge is refused: {body}"
    );
    assert_eq!(refused.len(), 15);
    // The one good charge: 0.001 (above the 0.0005 minimum), its note cut to length.
    assert_eq!(body["receipt"]["amount"], "1000", "{body}");
    let metering = &body["receipt"]["metering"];
    assert_eq!(metering["units"], "1", "{body}");
    assert_eq!(metering["capped"], false);
    assert!(metering["note"].as_str().unwrap().len() <= 200, "{body}");
    assert_eq!(credit_balance(&server, &credit_id).await, "49000");

    // 100,000 charges of 1,000 USD: the maximum, 0.005, and marked capped.
    let (status, body) = call(&server, &header, 2).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["receipt"]["amount"], "5000", "{body}");
    assert_eq!(body["receipt"]["metering"]["capped"], true, "{body}");
    // The timer's charge after each call returned changed neither call.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(credit_balance(&server, &credit_id).await, "44000");
    assert_eq!(gross(&server, &key).await, "6000");
}

#[tokio::test]
async fn metering_is_checked_and_can_be_changed() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Meter").await;
    let refused = |body: Value| {
        let server = &server;
        let key = key.clone();
        async move {
            let (status, answer) = server
                .call(
                    "POST",
                    "/ai/endpoints/create",
                    As::Builder(&key),
                    Some(&body),
                )
                .await;
            assert_error(status, &answer, 422, "invalid_field");
            answer["error"]["details"].to_string()
        }
    };
    let mut body = metered_endpoint(PAGES);
    body["metering"]["minimumUsd"] = json!(0.006);
    assert!(refused(body).await.contains("metering.minimumUsd"));
    let mut body = metered_endpoint(PAGES);
    body.as_object_mut().unwrap().remove("metering");
    assert!(refused(body).await.contains("metering"));
    let mut body = metered_endpoint(PAGES);
    body["priceUsd"] = json!(0);
    body.as_object_mut().unwrap().remove("pricingMode");
    assert!(refused(body).await.contains("priceUsd"));
    let mut body = metered_endpoint(PAGES);
    body["pricingMode"] = json!("fixed_price_success_receipt");
    assert!(refused(body).await.contains("pricingMode"));

    // A fixed price again, then metered again.
    server
        .create(As::Builder(&key), &metered_endpoint(PAGES))
        .await;
    let metered = ask_with(&server, &format!("/tools/{SLUG}"), &json!({})).await;
    let patched = server
        .patch(
            As::Builder(&key),
            SLUG,
            &json!({"pricingMode": "fixed_price_success_receipt"}),
        )
        .await;
    assert_eq!(
        patched["endpoint"]["pricingMode"],
        "fixed_price_success_receipt"
    );
    assert!(patched["endpoint"].get("metering").is_none(), "{patched}");
    let required = ask_with(&server, &format!("/tools/{SLUG}"), &json!({})).await;
    assert_eq!(required["accepts"][0]["scheme"], "exact");
    // An `upto` permit does not pay a fixed price.
    let permit = pay_upto(&PrivateKeySigner::random(), &metered, |_| {});
    let (status, body) = call(&server, &permit, 2).await;
    assert_refused(status, &body, "invalid_scheme");
    // Its handler's ctx.charge is ignored, and its owner told so.
    let header = crate::payments::pay(&PrivateKeySigner::random(), &required, 2, |_| {});
    let (status, body) = call(&server, &header, 2).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["receipt"]["amount"], "5000");
    assert!(body["receipt"].get("metering").is_none());
    let logs = owner_logs(&server, &key).await;
    assert!(
        logs.to_string().contains("ctx.charge was ignored"),
        "{logs}"
    );
    let patched = server
        .patch(
            As::Builder(&key),
            SLUG,
            &json!({"metering": {"unit": "page", "unitPriceUsd": 0.001}}),
        )
        .await;
    assert_eq!(
        patched["endpoint"]["pricingMode"],
        "metered_success_receipt"
    );
    assert_eq!(patched["endpoint"]["metering"]["unitPriceUsd"], 0.001);
}

#[tokio::test]
async fn a_native_handler_is_metered_by_its_units() {
    let server = TestServer::start().await;
    let body = json!({
        "slug": "echo-metered",
        "title": "Echo",
        "description": "Echoes a summary, priced by the KiB.",
        "priceUsd": 0.01,
        "handlerType": "receipt_echo",
        "metering": {"unit": "KiB of input", "unitPriceUsd": 0.001},
    });
    server.create(As::Admin, &body).await;
    let (token, credit_id) = credit_of(&server, 0.05).await;
    let input = json!({"text": "x".repeat(2500)});
    let (status, _, body) = post_paid(
        &server,
        "/tools/echo-metered",
        &("x-developer-credit", token),
        input,
    )
    .await;
    assert_eq!(status.as_u16(), 200, "{body}");
    assert_eq!(body["receipt"]["metering"]["units"], "3");
    assert_eq!(body["receipt"]["amount"], "3000");
    assert_eq!(credit_balance(&server, &credit_id).await, "47000");
}
