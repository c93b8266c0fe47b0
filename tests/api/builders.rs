//! Builder registration, keys and the event feed.

use serde_json::{json, Value};

use crate::util::{
    assert_error, assert_payment_required, dir_contains, kinds, static_endpoint, As, TestServer,
};

#[tokio::test]
async fn register_needs_payment_or_credit() {
    let server = TestServer::start().await;
    let (status, body) = server
        .post("/ai/builders/register", &json!({"name": "Acme"}))
        .await;
    assert_payment_required(status, &body, "payment_required");
    assert_eq!(body["accepts"][0]["maxAmountRequired"], "1000000");
    let (status, body) = server
        .post("/ai/builders/register", &json!({"name": ""}))
        .await;
    assert_error(status, &body, 422, "invalid_builder");
    let (status, body) = server
        .post(
            "/ai/builders/register",
            &json!({"name": "Acme", "extra": 1}),
        )
        .await;
    assert_error(status, &body, 422, "invalid_body");
    // A proof that is not an x402 payment payload is malformed.
    let (status, body) = server
        .call(
            "POST",
            "/ai/builders/register",
            As::Header("x-payment", "proof"),
            Some(&json!({"name": "Acme"})),
        )
        .await;
    assert_error(status, &body, 400, "invalid_payload");
}

#[tokio::test]
async fn register_with_x402_or_developer_credit() {
    let server = TestServer::start().await;
    let signer = alloy_signer_local::PrivateKeySigner::random();
    let required =
        crate::payments::ask_with(&server, "/ai/builders/register", &json!({"name": "Acme"})).await;
    assert_eq!(required["accepts"][0]["amount"], "1000000");
    let (name, value) = crate::payments::pay(&signer, &required, 2, |_| {});
    let response = server
        .client
        .post(server.url("/ai/builders/register"))
        .header(name, &value)
        .json(&json!({"name": "Acme"}))
        .send()
        .await
        .unwrap();
    assert!(response.headers().contains_key("payment-response"));
    let (status, body) = crate::util::read(response).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["builderKey"].as_str().unwrap().len() > 20);
    assert_eq!(body["builder"]["registeredVia"], "x402");
    assert_eq!(body["receipt"]["purpose"], "builder_registration");
    assert_eq!(body["receipt"]["amount"], "1000000");
    // The same payment cannot register twice.
    let response = server
        .client
        .post(server.url("/ai/builders/register"))
        .header(name, &value)
        .json(&json!({"name": "Acme 2"}))
        .send()
        .await
        .unwrap();
    let (status, body) = crate::util::read(response).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
    // Developer credit pays too.
    let response = server
        .client
        .post(server.url("/ai/admin/credits"))
        .header("x-admin-token", crate::util::ADMIN_TOKEN)
        .json(&json!({"amountUsd": 1}))
        .send()
        .await
        .unwrap();
    let (_, credit) = crate::util::read(response).await;
    let token = credit["credit"]["token"].as_str().unwrap();
    let response = server
        .client
        .post(server.url("/ai/builders/register"))
        .header("x-developer-credit", token)
        .json(&json!({"name": "Beta"}))
        .send()
        .await
        .unwrap();
    let (status, body) = crate::util::read(response).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["builder"]["registeredVia"], "developer_credit");
    assert_eq!(body["receipt"]["paymentMethod"], "developer_credit");
}

#[tokio::test]
async fn admin_onboarding_returns_a_key_once_and_rotation_revokes_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = TestServer::start_in(&data).await;
    let (status, body) = server
        .call(
            "POST",
            "/ai/admin/builders",
            As::Admin,
            Some(&json!({"name": "Partner", "contact": "ops@partner.test"})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let key = body["builderKey"].as_str().unwrap().to_string();
    assert!(key.starts_with("thb_") && key.len() == 68);
    assert_eq!(body["builder"]["registeredVia"], "admin");
    assert!(key.starts_with(body["builder"]["keyPrefix"].as_str().unwrap()));
    assert!(body["builder"].get("keyHash").is_none());

    let (status, rotated) = server
        .call("POST", "/ai/builders/keys/rotate", As::Builder(&key), None)
        .await;
    assert_eq!(status, 200, "{rotated}");
    let new_key = rotated["builderKey"].as_str().unwrap().to_string();
    assert_ne!(new_key, key);
    assert_eq!(rotated["builder"]["id"], body["builder"]["id"]);

    // The old key is revoked everywhere: 401 (no longer a valid credential, spec 5 rule 1),
    // with a code of its own so the builder knows to switch keys.
    let (status, response) = server
        .call("POST", "/ai/builders/keys/rotate", As::Builder(&key), None)
        .await;
    assert_error(status, &response, 401, "builder_key_revoked");
    let (status, response) = server
        .call(
            "POST",
            "/ai/endpoints/create",
            As::Builder(&key),
            Some(&static_endpoint("with-old-key")),
        )
        .await;
    assert_error(status, &response, 401, "builder_key_revoked");
    server
        .create(As::Builder(&new_key), &static_endpoint("with-new-key"))
        .await;
    let (status, _) = server
        .call("POST", "/ai/builders/keys/rotate", As::Nobody, None)
        .await;
    assert_eq!(status, 401);

    // The key survives a restart only as a hash: nothing in the data dir holds it.
    server.stop().await;
    assert!(
        !dir_contains(&data, &new_key.as_bytes()[4..]),
        "the plaintext key reached the disk"
    );
}

#[tokio::test]
async fn events_are_scoped_filtered_and_paged() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Owner").await;
    let (_, other) = server.builder("Other").await;
    server
        .create(As::Builder(&key), &static_endpoint("ev-one"))
        .await;
    server
        .create(As::Builder(&key), &static_endpoint("ev-two"))
        .await;
    let resume = json!({"status": "active", "title": "New"});
    server
        .patch(As::Builder(&key), "ev-one", &json!({"status": "paused"}))
        .await;
    server.patch(As::Builder(&key), "ev-one", &resume).await;
    server
        .call("DELETE", "/ai/endpoints/ev-two", As::Admin, None)
        .await;

    assert_eq!(
        server.event_kinds(As::Builder(&key), "since=7d").await,
        [
            "endpoint_deleted",
            "endpoint_resumed",
            "endpoint_updated",
            "endpoint_paused",
            "endpoint_created",
            "endpoint_created"
        ]
    );
    assert_eq!(
        server
            .event_kinds(As::Builder(&key), "since=1h&endpointSlug=ev-two")
            .await,
        ["endpoint_deleted", "endpoint_created"]
    );
    assert!(
        server.event_kinds(As::Builder(&other), "").await.is_empty(),
        "another builder sees nothing"
    );

    // Paging: limit 4, then the rest from the cursor.
    let (_, first) = server
        .call(
            "GET",
            "/ai/builders/events?since=2w&limit=4",
            As::Builder(&key),
            None,
        )
        .await;
    assert_eq!(kinds(&first).len(), 4);
    let cursor = first["nextCursor"].as_str().unwrap();
    let (_, rest) = server
        .call(
            "GET",
            &format!("/ai/builders/events?since=2w&limit=4&cursor={cursor}"),
            As::Builder(&key),
            None,
        )
        .await;
    assert_eq!(kinds(&rest), ["endpoint_created", "endpoint_created"]);
    assert_eq!(rest["nextCursor"], Value::Null);

    for bad in ["7x", "7", "d", "-1d", "0d", "1.5h", "soon"] {
        let (status, body) = server
            .call(
                "GET",
                &format!("/ai/builders/events?since={bad}"),
                As::Builder(&key),
                None,
            )
            .await;
        assert_error(status, &body, 400, "invalid_since");
    }
    for (s, unit) in [
        ("30s", "s"),
        ("5m", "m"),
        ("2h", "h"),
        ("1d", "d"),
        ("1w", "w"),
    ] {
        let (status, _) = server
            .call(
                "GET",
                &format!("/ai/builders/events?since={s}"),
                As::Builder(&key),
                None,
            )
            .await;
        assert_eq!(status, 200, "unit {unit}");
    }
    let (status, body) = server
        .call(
            "GET",
            "/ai/builders/events?cursor=xyz",
            As::Builder(&key),
            None,
        )
        .await;
    assert_error(status, &body, 400, "invalid_cursor");
}

/// A builder starts from the creator-skill template (spec 2.4), creates it and agents call it with
/// situation, goal, audience, constraints and extra fields.
#[tokio::test]
async fn a_creator_skill_endpoint_from_the_template_answers() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Coach").await;
    let (status, template) = server.get("/ai/templates/creator-skill").await;
    assert_eq!(status, 200, "{template}");
    let schema = &template["create"]["inputSchema"];
    assert_eq!(schema["properties"]["constraints"]["type"], "array");
    assert_eq!(
        schema["properties"]["constraints"]["items"]["type"],
        "string"
    );
    assert_eq!(schema["additionalProperties"], true);
    for field in ["situation", "goal", "audience"] {
        assert_eq!(schema["properties"][field]["type"], "string", "{field}");
    }
    let mut body = template["create"].clone();
    body["slug"] = json!("launch-coach");
    body["safetyAttestation"] = json!({"accepted": true});
    let created = server.create(As::Builder(&key), &body).await;
    assert_eq!(created["endpoint"]["status"], "active", "{created}");
    assert_eq!(
        created["endpoint"]["contentSafety"]["status"], "passed",
        "{created}"
    );

    let (status, answer) = server
        .post("/tools/launch-coach", &template["exampleInput"])
        .await;
    assert_eq!(status, 200, "{answer}");
    let steps = answer["steps"].as_array().unwrap();
    assert!(steps.len() >= 3, "{answer}");
    // "no video" leaves the video step out; the extra field is accepted and seen.
    assert_eq!(answer["skipped"], json!(["video"]), "{answer}");
    assert!(steps.iter().all(|s| s["id"] != "video"), "{answer}");
    assert_eq!(answer["extraFieldsSeen"], json!(["timezone"]), "{answer}");
    assert!(answer["summary"]
        .as_str()
        .unwrap()
        .contains("sell my first online course"));
    // constraints must be an array of strings.
    let (status, refused) = server
        .post(
            "/tools/launch-coach",
            &json!({"situation": "s", "goal": "g", "constraints": "no video"}),
        )
        .await;
    assert_error(status, &refused, 422, "input_invalid");
}
