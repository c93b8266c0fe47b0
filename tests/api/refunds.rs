//! Refunds end to end: the owner or the admin gives back what a receipt charged, once, with a
//! signed record linked from the receipt; credit goes back to the credit, revenue and payouts
//! count what is left, a builder paid out already owes its share from its balance; bad
//! requests change nothing, and concurrent refunds of one receipt make one refund.

use alloy_signer_local::PrivateKeySigner;
use base64::Engine;
use serde_json::{json, Value};

use crate::abuse::{credit_balance, credit_of};
use crate::payments::{ask, pay};
use crate::util::{assert_error, post_paid, read, static_endpoint, As, TestServer};

const SLUG: &str = "paid-greeting";

/// A server with a builder's endpoint at 0.0015 USD: the server and the builder's key.
async fn seller() -> (TestServer, String) {
    let server = TestServer::start().await;
    let mut endpoint = static_endpoint(SLUG);
    endpoint["priceUsd"] = json!(0.0015);
    let (key, _) = server.builder_with("Seller", &endpoint).await;
    (server, key)
}

/// One call paid with `credit`: its receipt id.
async fn call_with_credit(server: &TestServer, credit: &str) -> String {
    call_paying(server, ("x-developer-credit", credit.to_string())).await
}

/// One call paid with the payment header `header`: its receipt id.
async fn call_paying(server: &TestServer, header: (&str, String)) -> String {
    let path = format!("/tools/{SLUG}");
    let (status, _, body) = post_paid(server, &path, &header, json!({})).await;
    assert_eq!(status, 200, "{body}");
    body["receipt"]["receiptId"].as_str().unwrap().to_string()
}

async fn refund(server: &TestServer, receipt: &str, who: As<'_>, body: Value) -> (u16, Value) {
    let path = format!("/ai/receipts/{receipt}/refund");
    let (status, body) = server.call("POST", &path, who, Some(&body)).await;
    (status.as_u16(), body)
}

/// `(gross, fee, net)` of the builder's revenue.
async fn revenue(server: &TestServer, key: &str) -> (String, String, String) {
    let (status, body) = server
        .call("GET", "/ai/builders/revenue", As::Builder(key), None)
        .await;
    assert_eq!(status, 200, "{body}");
    let r = &body["revenue"];
    let text = |v: &Value| v.as_str().unwrap().to_string();
    (
        text(&r["grossUnits"]),
        text(&r["feeUnits"]),
        text(&r["netUnits"]),
    )
}

/// The refund record's signature is the service key's over its canonical JSON.
async fn assert_signed(server: &TestServer, refund: &Value) {
    let (_, manifest) = server.get("/ai/manifest").await;
    let b64 = base64::engine::general_purpose::STANDARD;
    let public_key = manifest["receipts"]["publicKey"].as_str().unwrap();
    assert_eq!(refund["signature"]["publicKey"], public_key);
    let key: [u8; 32] = b64.decode(public_key).unwrap().try_into().unwrap();
    let key = ed25519_dalek::VerifyingKey::from_bytes(&key).unwrap();
    let signature: [u8; 64] = b64
        .decode(refund["signature"]["value"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    let mut unsigned = refund.clone();
    unsigned.as_object_mut().unwrap().remove("signature");
    let message = toolhost::receipts::canonical_json(&unsigned);
    key.verify_strict(
        message.as_bytes(),
        &ed25519_dalek::Signature::from_bytes(&signature),
    )
    .expect("the refund's signature verifies");
}

#[tokio::test]
async fn a_credit_payment_is_refunded_once_and_revenue_follows() {
    let (server, key) = seller().await;
    let (other_key, _) = server
        .builder_with("Other", &static_endpoint("other-greeting"))
        .await;
    let (token, credit_id) = credit_of(&server, 0.01).await;
    let first = call_with_credit(&server, &token).await;
    let second = call_with_credit(&server, &token).await;
    assert_eq!(credit_balance(&server, &credit_id).await, "7000");
    assert_eq!(
        revenue(&server, &key).await,
        ("3000".into(), "300".into(), "2700".into())
    );

    // Bad requests: each refused with its code, and nothing changes.
    let reason = json!({"reason": "the answer was wrong"});
    let path = format!("/ai/receipts/{first}/refund");
    let (status, body) = server.call("POST", &path, As::Nobody, Some(&reason)).await;
    assert_eq!(status, 401, "{body}");
    let (status, body) = refund(&server, &first, As::Builder(&other_key), reason.clone()).await;
    assert_error(status.try_into().unwrap(), &body, 403, "not_owner");
    for (bad, code) in [
        (json!({"reason": " "}), "invalid_field"),
        (json!({"reason": "x".repeat(501)}), "invalid_field"),
        (
            json!({"reason": "r", "amountUsd": 0.0016}),
            "invalid_amount",
        ),
        (json!({"reason": "r", "amountUsd": 0}), "invalid_amount"),
        (json!({"reason": "r", "amountUsd": "lots"}), "invalid_body"),
        (json!({"reason": "r", "extra": 1}), "invalid_body"),
    ] {
        let (status, body) = refund(&server, &first, As::Builder(&key), bad.clone()).await;
        assert_error(status.try_into().unwrap(), &body, 422, code);
    }
    let (status, body) = refund(&server, "rcpt_0000", As::Admin, reason.clone()).await;
    assert_error(status.try_into().unwrap(), &body, 404, "receipt_not_found");
    let (status, free) = server.post("/tools/receipt-echo", &json!({"x": 1})).await;
    assert_eq!(status, 200, "{free}");
    let free_id = free["receipt"]["receiptId"].as_str().unwrap();
    let (status, body) = refund(&server, free_id, As::Admin, reason.clone()).await;
    assert_error(status.try_into().unwrap(), &body, 409, "not_refundable");
    assert_eq!(credit_balance(&server, &credit_id).await, "7000");
    let (status, _) = server.get(&format!("/ai/receipts/{first}/refund")).await;
    assert_eq!(status, 404);

    // Eight owners at once, each with its own reason: one refund, the money back once.
    let attempts = (0..8).map(|i| {
        let server = &server;
        let (key, first) = (&key, &first);
        async move {
            let body = json!({"reason": format!("attempt {i}"), "amountUsd": 0.0005});
            refund(server, first, As::Builder(key), body).await
        }
    });
    let answers = futures::future::join_all(attempts).await;
    let made: Vec<&Value> = answers
        .iter()
        .filter(|(s, _)| *s == 200)
        .map(|(_, b)| b)
        .collect();
    assert_eq!(made.len(), 1, "{answers:?}");
    for (status, body) in answers.iter().filter(|(s, _)| *s != 200) {
        assert_error((*status).try_into().unwrap(), body, 409, "already_refunded");
    }
    // An entry of its own in the receipt log, proven against the log's key.
    let (_, manifest) = server.get("/ai/manifest").await;
    let verifier = toolhost_tlog::Verifier::parse(
        manifest["receipts"]["log"]["verifierKey"].as_str().unwrap(),
    )
    .unwrap();
    let refund_log = made[0]["refundLog"].clone();
    crate::receipt_log::check(&verifier, &made[0]["refund"], &refund_log);
    let made = made[0]["refund"].clone();
    assert_eq!(credit_balance(&server, &credit_id).await, "7500");
    assert_eq!(
        (
            &made["amount"],
            &made["charged"],
            &made["returnedTo"],
            &made["refundedBy"],
            &made["afterPayout"]
        ),
        (
            &json!("500"),
            &json!("1500"),
            &json!("credit"),
            &json!("owner"),
            &json!(false)
        )
    );
    assert_signed(&server, &made).await;
    // The same request again answers the refund made, and moves nothing.
    let same = json!({"reason": made["reason"], "amountUsd": 0.0005});
    let (status, again) = refund(&server, &first, As::Builder(&key), same).await;
    assert_eq!((status, &again["refund"]), (200, &made));
    assert_eq!(credit_balance(&server, &credit_id).await, "7500");
    // Linked from the receipt, which is unchanged; served on its own.
    let response = server
        .client
        .get(server.url(&format!("/ai/receipts/{first}")))
        .send()
        .await
        .unwrap();
    let link = response.headers()["link"].to_str().unwrap().to_string();
    assert_eq!(
        link,
        format!("</ai/receipts/{first}/refund>; rel=\"refund\"")
    );
    let (_, receipt) = read(response).await;
    assert_eq!(receipt["amount"], "1500");
    let (status, served) = server.get(&format!("/ai/receipts/{first}/refund")).await;
    assert_eq!((status.as_u16(), &served["refund"]), (200, &made));
    assert_eq!(served["refundLog"]["leafIndex"], refund_log["leafIndex"]);
    crate::receipt_log::check(&verifier, &made, &served["refundLog"]);
    // Revenue counts what is left: 1000 + 1500 units, the fee on each.
    assert_eq!(
        revenue(&server, &key).await,
        ("2500".into(), "250".into(), "2250".into())
    );
    let (_, events) = server
        .call("GET", "/ai/builders/events", As::Builder(&key), None)
        .await;
    let refunded: Vec<&Value> = (events["events"].as_array().unwrap().iter())
        .filter(|e| e["kind"] == "receipt_refunded")
        .collect();
    assert_eq!(refunded.len(), 1, "{events}");
    assert_eq!(refunded[0]["data"]["refundId"], made["refundId"]);

    // The admin refunds the second whole.
    let (status, body) = refund(&server, &second, As::Admin, reason.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["refund"]["amount"], "1500");
    assert_eq!(body["refund"]["refundedBy"], "admin");
    assert_eq!(credit_balance(&server, &credit_id).await, "9000");
    assert_eq!(
        revenue(&server, &key).await,
        ("1000".into(), "100".into(), "900".into())
    );
    // Another refund of a refunded receipt is refused, and changes nothing.
    let (status, body) = refund(&server, &second, As::Admin, json!({"reason": "again"})).await;
    assert_error(status.try_into().unwrap(), &body, 409, "already_refunded");
    assert_eq!(credit_balance(&server, &credit_id).await, "9000");
}

#[tokio::test]
async fn a_recorded_payment_refund_moves_nothing_and_leaves_revenue() {
    let (server, key) = seller().await;
    let required = ask(&server, &format!("/tools/{SLUG}")).await;
    let receipt = call_paying(
        &server,
        pay(&PrivateKeySigner::random(), &required, 2, |_| {}),
    )
    .await;
    let (status, body) = refund(
        &server,
        &receipt,
        As::Builder(&key),
        json!({"reason": "sorry"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["refund"]["returnedTo"], "recorded");
    assert_eq!(body["refund"]["paymentMethod"], "x402");
    assert!(body["refund"]["transaction"].is_null());
    assert_eq!(
        revenue(&server, &key).await,
        ("0".into(), "0".into(), "0".into())
    );
}

#[tokio::test]
async fn a_paid_out_sale_is_refunded_from_the_builders_balance() {
    let (server, key) = seller().await;
    let settings = json!({"payTo": "0x000000000000000000000000000000000000dEaD", "network": "eip155:84532", "minimumUsd": 0.0001});
    let (status, body) = server
        .call(
            "POST",
            "/ai/builders/payout-settings",
            As::Builder(&key),
            Some(&settings),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (token, _) = credit_of(&server, 0.01).await;
    let first = call_with_credit(&server, &token).await;
    let (status, body) = server
        .call("POST", "/ai/builders/payouts", As::Builder(&key), None)
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["packet"]["amount"], "1350");

    // Paid out, and nothing unpaid to cover its share: the owner may not; nothing changes.
    let whole = json!({"reason": "refund after payout"});
    let (status, body) = refund(&server, &first, As::Builder(&key), whole.clone()).await;
    assert_error(
        status.try_into().unwrap(),
        &body,
        409,
        "refund_exceeds_balance",
    );
    assert_eq!(body["error"]["details"]["owedUnits"], "1350");
    let (status, _) = server.get(&format!("/ai/receipts/{first}/refund")).await;
    assert_eq!(status, 404);

    // Two more sales cover it.
    call_with_credit(&server, &token).await;
    call_with_credit(&server, &token).await;
    let (status, body) = refund(&server, &first, As::Builder(&key), whole).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["refund"]["afterPayout"], true);
    let (_, payouts) = server
        .call("GET", "/ai/builders/payouts", As::Builder(&key), None)
        .await;
    assert_eq!(
        (&payouts["unpaidNetUnits"], &payouts["owedNetUnits"]),
        (&json!("2700"), &json!("1350"))
    );
    // The next packet deducts the debt, once.
    let (status, body) = server
        .call("POST", "/ai/builders/payouts", As::Builder(&key), None)
        .await;
    assert_eq!(status, 200, "{body}");
    let packet = &body["packet"];
    assert_eq!(
        (
            &packet["amount"],
            &packet["recovered"],
            &packet["recoveredReceiptIds"]
        ),
        (&json!("1350"), &json!("1350"), &json!([first]))
    );
    let (_, payouts) = server
        .call("GET", "/ai/builders/payouts", As::Builder(&key), None)
        .await;
    assert_eq!(payouts["owedNetUnits"], "0");
    // Paid out in all: 1350 + 1350 = the net of what is left of the sales (0 + 1350 + 1350).
    let paid: u64 = (payouts["packets"].as_array().unwrap().iter())
        .map(|p| p["amount"].as_str().unwrap().parse::<u64>().unwrap())
        .sum();
    let (_, _, net) = revenue(&server, &key).await;
    assert_eq!(paid.to_string(), net);

    // The admin may refund beyond the balance: the debt waits for later sales.
    let fourth = call_with_credit(&server, &token).await;
    let (status, body) = server
        .call("POST", "/ai/builders/payouts", As::Builder(&key), None)
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = refund(&server, &fourth, As::Admin, json!({"reason": "admin"})).await;
    assert_eq!(status, 200, "{body}");
    let (_, payouts) = server
        .call("GET", "/ai/builders/payouts", As::Builder(&key), None)
        .await;
    assert_eq!(
        (&payouts["unpaidNetUnits"], &payouts["owedNetUnits"]),
        (&json!("0"), &json!("1350"))
    );
}

/// `toolhost receipt refund`: the owner's key, or the admin's token; refusals exit non-zero
/// with the server's code.
#[tokio::test]
async fn the_cli_refunds() {
    let (server, key) = seller().await;
    let (token, credit_id) = credit_of(&server, 0.01).await;
    let first = call_with_credit(&server, &token).await;
    let second = call_with_credit(&server, &token).await;
    let home = tempfile::tempdir().unwrap();
    // Run beside the in-process server, on the same runtime: never block it.
    let cli = async |args: &[&str], env: &[(&str, &str)]| {
        let output = tokio::process::Command::new(crate::util::node::BIN)
            .args(["receipt", "refund"])
            .args(args)
            .args(["--server", &server.base, "--json"])
            .env_remove("TOOLHOST_BUILDER_KEY")
            .env_remove("TOOLHOST_ADMIN_TOKEN")
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path())
            .envs(env.iter().copied())
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        (output.status.success(), stdout)
    };
    let owner = [("TOOLHOST_BUILDER_KEY", key.as_str())];
    let (ok, stdout) = cli(
        &[&first, "--reason", "late", "--amount-usd", "0.0005"],
        &owner,
    )
    .await;
    assert!(ok, "{stdout}");
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(answer["refund"]["amount"], "500");
    let (ok, stdout) = cli(&[&first, "--reason", "another"], &owner).await;
    assert!(!ok && stdout.contains("already_refunded"), "{stdout}");
    // Without a key: refused before anything is sent.
    let (ok, _) = cli(&[&second, "--reason", "x"], &[]).await;
    assert!(!ok);
    let (ok, stdout) = cli(
        &[
            &second,
            "--reason",
            "admin",
            "--admin-token",
            crate::util::ADMIN_TOKEN,
        ],
        &[],
    )
    .await;
    assert!(ok, "{stdout}");
    assert!(stdout.contains("\"refundedBy\":\"admin\""), "{stdout}");
    assert_eq!(credit_balance(&server, &credit_id).await, "9000");
}
