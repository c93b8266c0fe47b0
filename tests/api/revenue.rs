//! Builders' money end to end: paid calls to a builder's endpoint show up in revenue, collected
//! and uncollected apart; a payout packet pays each collected receipt once and never a payment
//! that was only recorded; every figure reconciles with the receipts.

use alloy_signer_local::PrivateKeySigner;
use serde_json::{json, Value};

use crate::payments::{ask, pay};
use crate::util::{assert_error, static_endpoint, As, TestServer};

#[tokio::test]
async fn revenue_and_payouts_reconcile_with_receipts() {
    let server = TestServer::start().await;
    let mut endpoint = static_endpoint("paid-greeting");
    endpoint["priceUsd"] = json!(0.0015);
    let (key, _) = server.builder_with("Seller", &endpoint).await;

    let signer = PrivateKeySigner::random();
    let required = ask(&server, "/tools/paid-greeting").await;
    let mut recorded = Vec::new();
    for _ in 0..3 {
        let (name, value) = pay(&signer, &required, 2, |_| {});
        let response = server
            .client
            .post(server.url("/tools/paid-greeting"))
            .header(name, value)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        let (status, body) = crate::util::read(response).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["receipt"]["settlement"]["collected"], false);
        recorded.push(body["receipt"]["receiptId"].as_str().unwrap().to_string());
    }
    let (status, body) = server
        .call(
            "GET",
            "/ai/builders/revenue?since=30d",
            As::Builder(&key),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let revenue = &body["revenue"];
    assert_eq!(
        (
            revenue["grossUnits"].clone(),
            revenue["feeUnits"].clone(),
            revenue["netUnits"].clone()
        ),
        (json!("4500"), json!("450"), json!("4050"))
    );
    assert_eq!(revenue["count"], 3);
    assert_eq!(revenue["byEndpoint"]["paid-greeting"]["count"], 3);
    // The default local facilitator only records payments: nothing of it is collected.
    let part = |v: &Value| {
        (
            v["grossUnits"].clone(),
            v["feeUnits"].clone(),
            v["netUnits"].clone(),
            v["count"].clone(),
        )
    };
    assert_eq!(
        part(&revenue["collected"]),
        (json!("0"), json!("0"), json!("0"), json!(0))
    );
    assert_eq!(
        part(&revenue["uncollected"]),
        (json!("4500"), json!("450"), json!("4050"), json!(3))
    );
    assert_eq!(
        part(&revenue["uncollectedByState"]["recorded"]),
        part(&revenue["uncollected"])
    );
    assert_eq!(revenue["uncollectedByState"]["pending"]["count"], 0);
    assert_eq!(
        revenue["byEndpoint"]["paid-greeting"]["uncollected"]["netUnits"],
        "4050"
    );
    let (status, body) = server
        .call(
            "GET",
            "/ai/builders/revenue?since=forever",
            As::Builder(&key),
            None,
        )
        .await;
    assert_error(status, &body, 400, "invalid_since");
    // One parser behind both feeds: every window is accepted or refused alike on each.
    for (since, expected) in [
        ("90s", 200),
        ("15m", 200),
        ("2w", 200),
        ("0d", 400),
        ("7y", 400),
    ] {
        for route in ["/ai/builders/revenue", "/ai/builders/events"] {
            let (status, body) = server
                .call(
                    "GET",
                    &format!("{route}?since={since}"),
                    As::Builder(&key),
                    None,
                )
                .await;
            assert_eq!(status, expected, "{route}?since={since}: {body}");
        }
    }
    let (status, body) = server
        .call("GET", "/ai/builders/revenue", As::Nobody, None)
        .await;
    assert_error(status, &body, 401, "unauthorized");

    let (status, body) = server
        .call("POST", "/ai/builders/payouts", As::Builder(&key), None)
        .await;
    assert_error(status, &body, 409, "payout_settings_missing");
    let bad = json!({"payTo": "0x000000000000000000000000000000000000dead", "network": "eip155:84532", "minimumUsd": 0.004});
    let (status, body) = server
        .call(
            "POST",
            "/ai/builders/payout-settings",
            As::Builder(&key),
            Some(&bad),
        )
        .await;
    assert_error(status, &body, 422, "invalid_pay_to");
    let good = json!({"payTo": "0x000000000000000000000000000000000000dEaD", "network": "eip155:84532", "minimumUsd": 0.002});
    let (status, body) = server
        .call(
            "POST",
            "/ai/builders/payout-settings",
            As::Builder(&key),
            Some(&good),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    // Recorded-only money is never paid out.
    let (status, body) = server
        .call("POST", "/ai/builders/payouts", As::Builder(&key), None)
        .await;
    assert_error(status, &body, 409, "nothing_collectable");
    assert_eq!(body["error"]["details"]["uncollectedNetUnits"], "4050");
    let (_, body) = server
        .call("GET", "/ai/builders/payouts", As::Builder(&key), None)
        .await;
    assert_eq!(
        (
            body["unpaidNetUnits"].clone(),
            body["unpaidReceipts"].clone(),
            body["uncollectedNetUnits"].clone(),
            body["uncollectedReceipts"].clone()
        ),
        (json!("0"), json!(0), json!("4050"), json!(3))
    );

    // Developer credit is collected money (the platform holds the credit's value).
    let (status, body) = server
        .call(
            "POST",
            "/ai/admin/credits",
            As::Admin,
            Some(&json!({"amountUsd": 0.003})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let credit = body["credit"]["token"].as_str().unwrap().to_string();
    let mut receipts = Vec::new();
    for _ in 0..2 {
        let response = server
            .client
            .post(server.url("/tools/paid-greeting"))
            .header("x-developer-credit", &credit)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        let (status, body) = crate::util::read(response).await;
        assert_eq!(status, 200, "{body}");
        receipts.push(body["receipt"]["receiptId"].as_str().unwrap().to_string());
    }
    let (_, body) = server
        .call("GET", "/ai/builders/revenue", As::Builder(&key), None)
        .await;
    let revenue = &body["revenue"];
    assert_eq!(
        part(&revenue["collected"]),
        (json!("3000"), json!("300"), json!("2700"), json!(2))
    );
    assert_eq!(
        part(&revenue["uncollected"]),
        (json!("4500"), json!("450"), json!("4050"), json!(3))
    );
    // Collected and uncollected reconcile with the totals, in every figure.
    for (total, field) in [
        ("grossUnits", "grossUnits"),
        ("feeUnits", "feeUnits"),
        ("netUnits", "netUnits"),
    ] {
        let units = |v: &Value| v[field].as_str().unwrap().parse::<u64>().unwrap();
        assert_eq!(
            units(&revenue["collected"]) + units(&revenue["uncollected"]),
            revenue[total].as_str().unwrap().parse::<u64>().unwrap(),
            "{field}: {revenue}"
        );
    }
    assert_eq!(revenue["count"], 5);

    let (status, body) = server
        .call("POST", "/ai/builders/payouts", As::Builder(&key), None)
        .await;
    assert_eq!(status, 200, "{body}");
    let packet = &body["packet"];
    assert_eq!(
        (packet["amount"].clone(), packet["status"].clone()),
        (json!("2700"), json!("pending"))
    );
    assert_eq!(
        (packet["gross"].clone(), packet["fee"].clone()),
        (json!("3000"), json!("300"))
    );
    let mut ids: Vec<String> = packet["receiptIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    ids.sort();
    receipts.sort();
    assert_eq!(ids, receipts);
    assert!(recorded.iter().all(|id| !ids.contains(id)));
    assert!(packet["signature"]["value"].is_string());
    // Each receipt is paid out once: nothing collected is left for a second packet.
    let (status, body) = server
        .call("POST", "/ai/builders/payouts", As::Builder(&key), None)
        .await;
    assert_error(status, &body, 409, "nothing_collectable");
    let packet_id = packet["packetId"].as_str().unwrap();
    let tx = json!({"transaction": format!("0x{}", "cd".repeat(32))});
    let path = format!("/ai/admin/payouts/{packet_id}/paid");
    let (status, body) = server
        .call("POST", &path, As::Builder(&key), Some(&tx))
        .await;
    assert_error(status, &body, 401, "unauthorized");
    let (status, body) = server.call("POST", &path, As::Admin, Some(&tx)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["packet"]["status"], "paid");
    let (status, body) = server.call("POST", &path, As::Admin, Some(&tx)).await;
    assert_error(status, &body, 409, "already_paid");
    let (_, body) = server
        .call("GET", "/ai/builders/payouts", As::Builder(&key), None)
        .await;
    assert_eq!(
        (
            body["unpaidNetUnits"].clone(),
            body["packets"][0]["status"].clone()
        ),
        (json!("0"), json!("paid"))
    );

    // The owner's feed tells the money story: three sales, a packet created, then paid.
    let kinds = server
        .event_kinds(As::Builder(&key), "since=1h&limit=200")
        .await;
    let count = |k: &str| kinds.iter().filter(|x| *x == k).count();
    assert_eq!(count("payment_settled"), 5, "{kinds:?}");
    assert_eq!(
        (count("payout_created"), count("payout_paid")),
        (1, 1),
        "{kinds:?}"
    );
}

/// The admin's revenue view counts a registration fee paid on a deployment that cannot settle
/// (recorded only) as uncollected, one paid with developer credit as collected, and builders'
/// sales likewise; every part reconciles with its totals.
#[tokio::test]
async fn admin_revenue_counts_registration_fees_and_sales_collected_or_not() {
    let server = TestServer::start().await;
    // A registration fee paid with x402 on the default local facilitator: recorded only.
    let registration = json!({"name": "Paying builder"});
    let required = crate::payments::ask_with(&server, "/ai/builders/register", &registration).await;
    let fee: u64 = required["accepts"][0]["amount"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let header = pay(&PrivateKeySigner::random(), &required, 2, |_| {});
    let (status, _, body) =
        crate::util::post_paid(&server, "/ai/builders/register", &header, registration).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["receipt"]["settlement"]["collected"], false);
    // One paid with developer credit: collected.
    let (status, body) = server
        .call(
            "POST",
            "/ai/admin/credits",
            As::Admin,
            Some(&json!({"amountUsd": fee as f64 / 1e6 + 0.0015})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let credit = body["credit"]["token"].as_str().unwrap().to_string();
    let response = server
        .client
        .post(server.url("/ai/builders/register"))
        .header("x-developer-credit", &credit)
        .json(&json!({"name": "Credit builder"}))
        .send()
        .await
        .unwrap();
    let (status, body) = crate::util::read(response).await;
    assert_eq!(status, 200, "{body}");
    // A builder's endpoint sold once each way.
    let mut endpoint = static_endpoint("admin-view");
    endpoint["priceUsd"] = json!(0.0015);
    server.builder_with("Seller", &endpoint).await;
    let required = ask(&server, "/tools/admin-view").await;
    let header = pay(&PrivateKeySigner::random(), &required, 2, |_| {});
    let (status, _, body) =
        crate::util::post_paid(&server, "/tools/admin-view", &header, json!({})).await;
    assert_eq!(status, 200, "{body}");
    let response = server
        .client
        .post(server.url("/tools/admin-view"))
        .header("x-developer-credit", &credit)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let (status, body) = crate::util::read(response).await;
    assert_eq!(status, 200, "{body}");

    let (status, body) = server
        .call("GET", "/ai/admin/revenue", As::Nobody, None)
        .await;
    assert_error(status, &body, 401, "unauthorized");
    let (status, view) = server
        .call("GET", "/ai/admin/revenue?since=1d", As::Admin, None)
        .await;
    assert_eq!(status, 200, "{view}");
    let fees = &view["registrationFees"];
    let units = |v: &Value, field: &str| v[field].as_str().unwrap().parse::<u64>().unwrap();
    assert_eq!(fees["count"], 2, "{fees}");
    assert_eq!(
        (
            units(&fees["collected"], "grossUnits"),
            fees["collected"]["count"].clone()
        ),
        (fee, json!(1))
    );
    assert_eq!(
        (
            units(&fees["uncollected"], "grossUnits"),
            fees["uncollected"]["count"].clone()
        ),
        (fee, json!(1))
    );
    assert_eq!(fees["uncollectedByState"]["recorded"]["count"], 1);
    assert_eq!(units(fees, "grossUnits"), 2 * fee);
    let sales = &view["builderSales"];
    assert_eq!(
        (
            sales["collected"]["grossUnits"].clone(),
            sales["collected"]["feeUnits"].clone(),
            sales["uncollected"]["grossUnits"].clone(),
            sales["uncollected"]["feeUnits"].clone()
        ),
        (json!("1500"), json!("150"), json!("1500"), json!("150"))
    );
    assert_eq!(view["platformEndpoints"]["count"], 0);
    for report in [fees, sales] {
        for field in ["grossUnits", "feeUnits", "netUnits"] {
            assert_eq!(
                units(&report["collected"], field) + units(&report["uncollected"], field),
                units(report, field),
                "{field}: {report}"
            );
        }
    }
}
