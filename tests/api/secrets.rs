//! Endpoint secrets: write-only values, encrypted at rest, never in any response.

use serde_json::json;

use crate::util::{assert_error, dir_contains, js_endpoint, As, TestServer};

const VALUE: &str = "sv-9f8e7d6c5b4a-secret-value";

#[tokio::test]
async fn secret_values_never_leave_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = TestServer::start_in(&data).await;
    let (key, _) = server.builder_with("Maker", &js_endpoint("vaulted")).await;
    server
        .grant("vaulted", json!({"kv": true, "httpGetJson": true}))
        .await;
    let owner = As::Builder(&key);
    let path = "/ai/endpoints/vaulted/secrets";

    let (status, text) = server
        .call_text(
            "POST",
            path,
            owner,
            Some(&json!({"set": {"API_KEY": VALUE, "OTHER": "x-other-value"}})),
        )
        .await;
    assert_eq!(status, 200, "{text}");
    assert!(!text.contains(VALUE), "POST echoed a value: {text}");
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    let names: Vec<&str> = body["secrets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["API_KEY", "OTHER"]);
    assert!(
        body["secrets"][0]["createdAt"].is_string() && body["secrets"][0]["updatedAt"].is_string()
    );
    assert!(body["secrets"][0].get("value").is_none());
    // Secrets are the endpoint's, not a revision's: the same revision serves (the sandbox
    // still retires isolates holding the old env, by the record's generation).
    let (_, record) = server
        .call("GET", "/ai/endpoints/vaulted", owner, None)
        .await;
    assert_eq!(record["manage"]["revision"], 1, "{record}");
    assert_eq!(record["manage"]["secrets"].as_array().unwrap().len(), 2);

    // Every read a builder or admin can make, none with the value.
    for (method, path, who) in [
        ("GET", path, owner),
        ("GET", path, As::Admin),
        ("GET", "/ai/endpoints/vaulted", owner),
        ("GET", "/ai/endpoints/vaulted", As::Admin),
        ("GET", "/ai/endpoints/vaulted", As::Nobody),
        ("GET", "/ai/endpoints", As::Nobody),
        ("GET", "/ai/endpoints/vaulted/logs", owner),
        ("GET", "/ai/builders/events?since=1d", owner),
        ("GET", "/ai/admin/reviews", As::Admin),
        ("GET", "/openapi.json", As::Nobody),
    ] {
        let (status, text) = server.call_text(method, path, who, None).await;
        assert_eq!(status, 200, "{method} {path}: {text}");
        assert!(!text.contains(VALUE), "{method} {path} leaked the secret");
    }
    let (_, text) = server
        .call_text(
            "PATCH",
            "/ai/endpoints/vaulted",
            owner,
            Some(&json!({"title": "Renamed"})),
        )
        .await;
    assert!(!text.contains(VALUE));

    // Delete one; setting and deleting the same name at once is refused.
    let (_, body) = server
        .call("POST", path, owner, Some(&json!({"delete": ["OTHER"]})))
        .await;
    assert_eq!(body["secrets"].as_array().unwrap().len(), 1);
    let (status, body) = server
        .call(
            "POST",
            path,
            owner,
            Some(&json!({"set": {"A": "1"}, "delete": ["A"]})),
        )
        .await;
    assert_error(status, &body, 422, "invalid_secret");
    let (status, body) = server
        .call(
            "POST",
            path,
            owner,
            Some(&json!({"set": {"bad-name": "1"}})),
        )
        .await;
    assert_error(status, &body, 422, "invalid_secret");
    let (status, body) = server
        .call("POST", path, owner, Some(&json!({"set": {"EMPTY": ""}})))
        .await;
    assert_error(status, &body, 422, "invalid_secret");

    // At rest: encrypted, and the generated master key is owner-only.
    server.stop().await;
    if crate::util::on_postgres() {
        let cluster = toolhost_testkit::PgCluster::shared().unwrap();
        assert!(
            !dir_contains(&cluster.data_dir(), VALUE.as_bytes()),
            "plaintext secret in the database's files"
        );
        return;
    }
    let master = data.join("secrets_master_key");
    assert_eq!(std::fs::read_to_string(&master).unwrap().trim().len(), 64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&master).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    assert!(
        !dir_contains(&data.join("store"), VALUE.as_bytes()),
        "plaintext secret on disk"
    );
}

#[tokio::test]
async fn a_configured_master_key_is_used_and_a_bad_one_refused() {
    let key = "ab".repeat(32);
    let server = TestServer::start_with(move |c| c.secrets_master_key = Some(key)).await;
    assert!(!server.data_dir.join("secrets_master_key").exists());
    server.stop().await;

    let dir = tempfile::tempdir().unwrap();
    let mut config = toolhost::config::Config::new(dir.path().join("data"));
    config.addr = "127.0.0.1:0".parse().unwrap();
    config.secrets_master_key = Some("not-hex".into());
    assert!(toolhost::server::Server::bind(config).await.is_err());
}
