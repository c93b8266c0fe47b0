//! Content safety on builder creates and updates: block, review, approve, reject.

use serde_json::{json, Value};

use crate::util::{assert_error, js_endpoint, static_endpoint, As, TestServer};

fn listed(catalog: &Value, slug: &str) -> bool {
    catalog["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["slug"] == slug)
}

#[tokio::test]
async fn blocked_content_is_refused_with_masked_findings() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Maker").await;
    let aws = "AKIAIOSFODNN7EXAMPLE";
    let cases = [
        (
            "source",
            json!({"source": format!("const k = '{aws}';")}),
            "secret.aws_access_key",
        ),
        (
            "env.PK",
            json!({"env": {"PK": "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"}}),
            "secret.hex_private_key",
        ),
        (
            "files/keys.pem",
            json!({"files": {"keys.pem": "-----BEGIN EC PRIVATE KEY-----\nMHc..."}}),
            "secret.pem_private_key",
        ),
        (
            "description",
            json!({"description": "Pay with card 4111 1111 1111 1111"}),
            "private.card_number",
        ),
        (
            "tags[0]",
            json!({"tags": ["we sell ransomware"]}),
            "illegal.malware",
        ),
    ];
    for (i, (field, patch, rule)) in cases.into_iter().enumerate() {
        let mut body = js_endpoint(&format!("blocked-{i}"));
        for (k, v) in patch.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (status, text) = server
            .call_text(
                "POST",
                "/ai/endpoints/create",
                As::Builder(&key),
                Some(&body),
            )
            .await;
        let response: Value = serde_json::from_str(&text).unwrap();
        assert_error(status, &response, 422, "content_blocked");
        let findings = response["error"]["details"]["findings"].as_array().unwrap();
        // A secret pasted into `env` is pointed to the secrets route; nothing else is.
        let moved = &response["error"]["details"]["moveToSecrets"];
        if field == "env.PK" {
            assert_eq!(moved, &json!(["PK"]), "{response}");
            let message = response["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("/ai/endpoints/{slug}/secrets"),
                "{message}"
            );
        } else {
            assert!(moved.is_null(), "{field}: {response}");
        }
        assert!(
            findings
                .iter()
                .any(|f| f["ruleId"] == rule && f["field"] == field && f["outcome"] == "block"),
            "{rule} in {field}: {findings:?}"
        );
        assert!(
            !text.contains(aws) && !text.contains("4111 1111 1111 1111"),
            "excerpt not masked: {text}"
        );
        let (status, _) = server.get(&format!("/ai/endpoints/blocked-{i}")).await;
        assert_eq!(status, 404, "nothing was stored");
    }

    // Updates are scanned too, and a blocked update changes nothing.
    server
        .create(As::Builder(&key), &static_endpoint("clean-one"))
        .await;
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/clean-one",
            As::Builder(&key),
            Some(&json!({"title": "ghp_16C7e42F292c6912E7710c838347Ae178B4a0000"})),
        )
        .await;
    assert_error(status, &body, 422, "content_blocked");
    let (_, record) = server.get("/ai/endpoints/clean-one").await;
    assert_eq!(record["endpoint"]["title"], "Greeting");
}

#[tokio::test]
async fn review_holds_the_endpoint_until_an_admin_decides() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Maker").await;
    let owner = As::Builder(&key);
    let flagged = |slug: &str| {
        let mut body = static_endpoint(slug);
        body["description"] = json!("Questions? Mail jane.doe@gmail.com");
        body
    };
    let created = server.create(owner, &flagged("held-one")).await;
    let record = &created["endpoint"];
    assert_eq!(record["status"], "paused");
    assert_eq!(record["contentSafety"]["status"], "review");
    assert_eq!(
        record["contentSafety"]["findings"][0]["ruleId"],
        "private.email"
    );
    assert_eq!(
        record["contentSafety"]["findings"][0]["field"],
        "description"
    );
    assert!(
        !record.to_string().contains("jane.doe@gmail.com")
            || record["description"].as_str().unwrap().contains("jane")
    );

    // Unlisted and not found for the public; visible to the owner and the admin.
    let (_, catalog) = server.get("/ai/endpoints").await;
    assert!(!listed(&catalog, "held-one"));
    let (status, _) = server.get("/ai/endpoints/held-one").await;
    assert_eq!(status, 404);
    let (status, _) = server.post("/tools/held-one", &json!({})).await;
    assert_eq!(status, 404);
    let (status, _) = server
        .call("GET", "/ai/endpoints/held-one", owner, None)
        .await;
    assert_eq!(status, 200);
    let (_, queue) = server
        .call("GET", "/ai/admin/reviews", As::Admin, None)
        .await;
    assert_eq!(queue["endpoints"][0]["endpoint"]["slug"], "held-one");

    // The owner cannot resume it; an unrelated edit keeps it under review.
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/held-one",
            owner,
            Some(&json!({"status": "active"})),
        )
        .await;
    assert_error(status, &body, 409, "under_review");
    let body = server
        .patch(owner, "held-one", &json!({"title": "Renamed"}))
        .await;
    assert_eq!(body["endpoint"]["contentSafety"]["status"], "review");

    let (status, body) = server
        .call(
            "POST",
            "/ai/admin/endpoints/held-one/review",
            As::Admin,
            Some(&json!({"decision": "approve", "note": "public support address"})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["endpoint"]["status"], "active");
    assert_eq!(body["endpoint"]["contentSafety"]["status"], "approved");
    let (_, catalog) = server.get("/ai/endpoints").await;
    assert!(listed(&catalog, "held-one"));
    let (status, _) = server.post("/tools/held-one", &json!({})).await;
    assert_eq!(status, 200);
    let (status, body) = server
        .call(
            "POST",
            "/ai/admin/endpoints/held-one/review",
            As::Admin,
            Some(&json!({"decision": "approve"})),
        )
        .await;
    assert_error(status, &body, 409, "not_under_review");

    // Rejection: stays paused and unlisted; only deletion is left.
    server.create(owner, &flagged("held-two")).await;
    let (_, body) = server
        .call(
            "POST",
            "/ai/admin/endpoints/held-two/review",
            As::Admin,
            Some(&json!({"decision": "reject"})),
        )
        .await;
    assert_eq!(body["endpoint"]["contentSafety"]["status"], "rejected");
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/held-two",
            owner,
            Some(&json!({"description": "clean now"})),
        )
        .await;
    assert_error(status, &body, 409, "content_rejected");
    let (status, _) = server
        .call("DELETE", "/ai/endpoints/held-two", owner, None)
        .await;
    assert_eq!(status, 200);

    // Fixing the flagged field clears the review (the endpoint stays paused until resumed).
    server.create(owner, &flagged("held-three")).await;
    let body = server
        .patch(
            owner,
            "held-three",
            &json!({"description": "No contact here."}),
        )
        .await;
    assert_eq!(body["endpoint"]["contentSafety"]["status"], "passed");
    assert_eq!(body["endpoint"]["status"], "paused");

    let kinds = server.event_kinds(owner, "endpointSlug=held-one").await;
    assert!(
        kinds.iter().any(|k| k == "safety_flagged") && kinds.iter().any(|k| k == "safety_approved"),
        "{kinds:?}"
    );
}

#[tokio::test]
async fn clean_builder_content_passes_and_admin_content_is_not_scanned() {
    let server = TestServer::start().await;
    let (_, created) = server.builder_with("Maker", &js_endpoint("clean-js")).await;
    // Clean, but it requests capabilities the admin has not granted yet.
    assert_eq!(created["endpoint"]["status"], "awaiting_grant");
    assert_eq!(created["endpoint"]["contentSafety"]["status"], "passed");
    assert_eq!(created["endpoint"]["contentSafety"]["findings"], json!([]));
    assert!(created["endpoint"]["contentSafety"]["attestedAt"].is_string());

    let mut body = static_endpoint("admin-contact");
    body["description"] = json!("Mail jane.doe@gmail.com");
    let created = server.create(As::Admin, &body).await;
    assert_eq!(created["endpoint"]["contentSafety"], Value::Null);
    assert_eq!(created["endpoint"]["status"], "active");

    let (_, catalog) = server.get("/ai/endpoints?form=legacy").await;
    assert!(catalog["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e.get("contentSafety").is_none()));
}
