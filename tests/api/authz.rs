//! The authorization matrix: every builder/admin route against no credential, a bad one,
//! another builder, the owner and the admin.

use serde_json::{json, Value};

use crate::util::{static_endpoint, As, TestServer};

/// One row: method, path, optional body, and the expected status per credential.
struct Row {
    method: &'static str,
    path: String,
    body: Option<Value>,
    nobody: u16,
    bad_key: u16,
    bad_admin: u16,
    other: u16,
    /// `None`: not tried on this row (a delete already done by the other allowed caller).
    owner: Option<u16>,
    admin: Option<u16>,
}

#[tokio::test]
async fn every_route_against_every_credential() {
    let server = TestServer::start().await;
    let (_, owner) = server.builder("Owner").await;
    let (_, other) = server.builder("Other").await;
    server
        .create(As::Builder(&owner), &static_endpoint("owned-one"))
        .await;
    // Separate endpoints for the destructive rows, one per caller allowed to delete.
    server
        .create(As::Builder(&owner), &static_endpoint("owned-del-owner"))
        .await;
    server
        .create(As::Builder(&owner), &static_endpoint("owned-del-admin"))
        .await;

    let e = "/ai/endpoints/owned-one";
    let patch = json!({"title": "Renamed"});
    let secrets = json!({"set": {"API_KEY": "value-1"}});
    let builder_body = json!({"name": "Partner"});
    let review = json!({"decision": "approve"});
    let rows = vec![
        Row {
            method: "GET",
            path: e.into(),
            body: None,
            nobody: 200,
            bad_key: 401,
            bad_admin: 401,
            other: 200,
            owner: Some(200),
            admin: Some(200),
        },
        Row {
            method: "PATCH",
            path: e.into(),
            body: Some(patch),
            nobody: 401,
            bad_key: 401,
            bad_admin: 401,
            other: 403,
            owner: Some(200),
            admin: Some(200),
        },
        Row {
            method: "GET",
            path: format!("{e}/secrets"),
            body: None,
            nobody: 401,
            bad_key: 401,
            bad_admin: 401,
            other: 403,
            owner: Some(200),
            admin: Some(200),
        },
        Row {
            method: "POST",
            path: format!("{e}/secrets"),
            body: Some(secrets),
            nobody: 401,
            bad_key: 401,
            bad_admin: 401,
            other: 403,
            owner: Some(200),
            admin: Some(200),
        },
        Row {
            method: "GET",
            path: format!("{e}/logs"),
            body: None,
            nobody: 401,
            bad_key: 401,
            bad_admin: 401,
            other: 403,
            owner: Some(200),
            admin: Some(200),
        },
        // The feed is the caller's own: another builder reads its own (200); the admin is no builder.
        Row {
            method: "GET",
            path: "/ai/builders/events?since=1d".into(),
            body: None,
            nobody: 401,
            bad_key: 401,
            bad_admin: 401,
            other: 200,
            owner: Some(200),
            admin: Some(401),
        },
        Row {
            method: "POST",
            path: "/ai/admin/builders".into(),
            body: Some(builder_body),
            nobody: 401,
            bad_key: 401,
            bad_admin: 401,
            other: 401,
            owner: Some(401),
            admin: Some(200),
        },
        Row {
            method: "GET",
            path: "/ai/admin/reviews".into(),
            body: None,
            nobody: 401,
            bad_key: 401,
            bad_admin: 401,
            other: 401,
            owner: Some(401),
            admin: Some(200),
        },
        // Not under review: the admin passes authorization and gets 409.
        Row {
            method: "POST",
            path: "/ai/admin/endpoints/owned-one/review".into(),
            body: Some(review),
            nobody: 401,
            bad_key: 401,
            bad_admin: 401,
            other: 401,
            owner: Some(401),
            admin: Some(409),
        },
        Row {
            method: "DELETE",
            path: "/ai/endpoints/owned-del-owner".into(),
            body: None,
            nobody: 401,
            bad_key: 401,
            bad_admin: 401,
            other: 403,
            owner: Some(200),
            admin: None,
        },
        Row {
            method: "DELETE",
            path: "/ai/endpoints/owned-del-admin".into(),
            body: None,
            nobody: 401,
            bad_key: 401,
            bad_admin: 401,
            other: 403,
            owner: None,
            admin: Some(200),
        },
    ];
    for row in rows {
        let body = row.body.as_ref();
        let cases = [
            ("nobody", As::Nobody, Some(row.nobody)),
            (
                "bad key",
                As::Builder("thb_0000000000000000000000000000000000000000000000000000000000000000"),
                Some(row.bad_key),
            ),
            (
                "bad admin",
                As::Header("x-admin-token", "wrong-token"),
                Some(row.bad_admin),
            ),
            ("other", As::Builder(&other), Some(row.other)),
            ("owner", As::Builder(&owner), row.owner),
            ("admin", As::Admin, row.admin),
        ];
        for (who, credential, expected) in cases {
            let Some(expected) = expected else { continue };
            let (status, response) = server.call(row.method, &row.path, credential, body).await;
            assert_eq!(
                status.as_u16(),
                expected,
                "{} {} as {who}: {response}",
                row.method,
                row.path
            );
            if status.as_u16() >= 400 {
                assert_eq!(response["ok"], false, "{response}");
                assert!(response["error"]["code"].is_string(), "{response}");
            }
        }
    }
}

#[tokio::test]
async fn create_requires_a_valid_credential() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Maker").await;
    let body = static_endpoint("made-here");
    let cases = [
        (As::Nobody, 401, "unauthorized"),
        (As::Builder("thb_unknown"), 401, "invalid_builder_key"),
        (
            As::Header("x-admin-token", "nope"),
            401,
            "invalid_admin_token",
        ),
    ];
    for (who, status, code) in cases {
        let (s, b) = server
            .call("POST", "/ai/endpoints/create", who, Some(&body))
            .await;
        assert_eq!(
            (s.as_u16(), b["error"]["code"].as_str().unwrap()),
            (status, code),
            "{who:?}: {b}"
        );
    }
    // A valid admin token does not excuse a bad builder key sent beside it: a client sending a
    // wrong credential has a bug, and answering as admin would hide it.
    let response = server
        .client
        .post(server.url("/ai/endpoints/create"))
        .header("x-admin-token", crate::util::ADMIN_TOKEN)
        .header("x-builder-key", "thb_unknown")
        .json(&body)
        .send()
        .await
        .unwrap();
    let (s, b) = crate::util::read(response).await;
    assert_eq!(
        (s.as_u16(), b["error"]["code"].as_str()),
        (401, Some("invalid_builder_key")),
        "{b}"
    );
    let created = server.create(As::Builder(&key), &body).await;
    assert_eq!(created["endpoint"]["slug"], "made-here");
    assert_eq!(created["manage"]["owner"]["kind"], "builder");
    let admin_made = server.create(As::Admin, &json!({"slug": "admin-made", "title": "A", "priceUsd": 0, "handlerType": "receipt_echo"})).await;
    assert_eq!(admin_made["manage"]["owner"]["kind"], "admin");
}

#[tokio::test]
async fn missing_endpoints_are_404_for_owners_and_admin() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Maker").await;
    for who in [As::Builder(&key), As::Admin] {
        for (method, path) in [
            ("PATCH", "/ai/endpoints/nope-nope"),
            ("DELETE", "/ai/endpoints/nope-nope"),
            ("GET", "/ai/endpoints/nope-nope/secrets"),
            ("POST", "/ai/endpoints/nope-nope/secrets"),
            ("GET", "/ai/endpoints/nope-nope/logs"),
        ] {
            let (status, body) = server.call(method, path, who, Some(&json!({}))).await;
            assert_eq!(status, 404, "{method} {path} as {who:?}: {body}");
            assert_eq!(body["error"]["code"], "endpoint_not_found");
        }
    }
}

#[tokio::test]
async fn builders_cannot_touch_catalogued_endpoints() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Maker").await;
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/receipt-echo",
            As::Builder(&key),
            Some(&json!({"status": "paused"})),
        )
        .await;
    assert_eq!(
        (status.as_u16(), body["error"]["code"].as_str()),
        (403, Some("not_owner"))
    );
    let (status, _) = server
        .call(
            "DELETE",
            "/ai/endpoints/receipt-echo",
            As::Builder(&key),
            None,
        )
        .await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn only_owner_and_admin_see_the_manage_view() {
    let server = TestServer::start().await;
    let (_, owner) = server.builder("Owner").await;
    let (_, other) = server.builder("Other").await;
    server
        .create(
            As::Builder(&owner),
            &crate::util::js_endpoint("private-bits"),
        )
        .await;
    // Granted, so the public sees its record (one awaiting its grant is not found to them).
    server
        .grant("private-bits", json!({"kv": true, "httpGetJson": true}))
        .await;
    for (who, sees) in [
        (As::Nobody, false),
        (As::Builder(&other), false),
        (As::Builder(&owner), true),
        (As::Admin, true),
    ] {
        let (status, text) = server
            .call_text("GET", "/ai/endpoints/private-bits", who, None)
            .await;
        assert_eq!(status, 200);
        let body: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(body["manage"].is_object(), sees, "{who:?}: {body}");
        // Source and env are the owner's business.
        assert_eq!(text.contains("ctx.log('counting')"), sees, "{who:?}");
    }
}
