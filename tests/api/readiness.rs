//! The `x402-readiness-check` endpoint end to end: a real server checking its own discovery
//! URLs (loopback, so only with the dev flag) and refusing internal addresses by default.

use serde_json::{json, Value};

use crate::util::{assert_error, TestServer};

const CHECK: &str = "/tools/x402-readiness-check";
const PAY_TO: &str = "0x1111111111111111111111111111111111111111";

async fn dev_server(pay_to: Option<&str>) -> TestServer {
    let pay_to = pay_to.map(str::to_string);
    TestServer::start_with(move |config| {
        config.outbound.allow_loopback = true;
        config.payment.pay_to = pay_to;
    })
    .await
}

async fn report(server: &TestServer, url: &str) -> Value {
    let (status, body) = server.post(CHECK, &json!({ "url": url })).await;
    assert_eq!(status, 200, "{body}");
    body
}

fn check<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["id"] == id))
        .unwrap_or_else(|| panic!("no check {id} in {report}"))
}

#[tokio::test]
async fn own_manifest_is_recognised_and_ready_when_pay_to_is_set() {
    let server = dev_server(Some(PAY_TO)).await;
    let body = report(&server, &server.url("/ai/manifest")).await;
    assert_eq!(body["ok"], true);
    assert_eq!(body["kind"], "toolhost_manifest", "{body}");
    assert_eq!(body["ready"], true, "{body}");
    assert_eq!(body["finalUrl"], server.url("/ai/manifest"));
    assert_eq!(
        body["expectedDiscoveryUrls"],
        json!([
            server.url("/.well-known/x402"),
            server.url("/ai/manifest"),
            server.url("/ai/endpoints"),
            server.url("/ai/mcp"),
            server.url("/.well-known/mcp/server.json"),
        ])
    );
    assert!(body["nextActions"]
        .as_array()
        .is_some_and(|a| !a.is_empty()));
    server.stop().await;
}

/// toolhost publishes what its readiness check asks of others, and passes its own check on
/// every discovery URL it names (the x402 discovery document, manifest, endpoint catalog, MCP
/// endpoint and its server.json), and on a paid endpoint, with every check green.
#[tokio::test]
async fn toolhost_passes_its_own_readiness_check() {
    let server = dev_server(Some(PAY_TO)).await;
    let (status, x402) = server.get("/.well-known/x402").await;
    assert_eq!(status, 200, "{x402}");
    let listed: Vec<&str> = x402["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["resource"].as_str().unwrap())
        .collect();
    // Paid endpoints and registration, each with the requirements its 402 carries; no free ones.
    assert!(
        listed.contains(&server.url("/tools/receipt-echo-paid").as_str()),
        "{x402}"
    );
    assert!(
        listed.contains(&server.url("/ai/builders/register").as_str()),
        "{x402}"
    );
    assert!(
        !listed.contains(&server.url("/tools/receipt-echo").as_str()),
        "{x402}"
    );
    let (_, unpaid) = server.post("/tools/receipt-echo-paid", &json!({})).await;
    let paid = x402["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == server.url("/tools/receipt-echo-paid"))
        .unwrap();
    assert_eq!(
        paid["accepts"], unpaid["paymentRequired"]["accepts"],
        "{unpaid}"
    );
    let (status, server_json) = server.get("/.well-known/mcp/server.json").await;
    assert_eq!(status, 200, "{server_json}");
    assert_eq!(server_json["remotes"][0]["url"], server.url("/ai/mcp"));

    let expected =
        report(&server, &server.url("/ai/manifest")).await["expectedDiscoveryUrls"].clone();
    let mut urls: Vec<String> = expected
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_string())
        .collect();
    urls.push(server.url("/tools/receipt-echo-paid"));
    assert_eq!(urls.len(), 6, "{expected}");
    let kinds = [
        ("/.well-known/x402", "x402_discovery"),
        ("/ai/manifest", "toolhost_manifest"),
        ("/ai/endpoints", "endpoint_catalog"),
        // A GET is 405 (no server-initiated stream, as Streamable HTTP allows); the check
        // connects with POST initialize and tools/list, as MCP clients do.
        ("/ai/mcp", "mcp_endpoint"),
        ("/.well-known/mcp/server.json", "mcp_server_json"),
        ("/tools/receipt-echo-paid", "paid_endpoint"),
    ];
    for url in urls {
        let body = report(&server, &url).await;
        let kind = kinds
            .iter()
            .find(|(path, _)| url.ends_with(path))
            .map(|(_, kind)| *kind);
        assert_eq!(body["kind"].as_str(), kind, "{url}: {body}");
        let failed: Vec<&Value> = body["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["passed"] != true)
            .collect();
        assert!(
            failed.is_empty(),
            "{url}: failed checks {failed:?} in {body}"
        );
        assert!(
            !body["checks"].as_array().unwrap().is_empty(),
            "{url}: {body}"
        );
        assert_eq!(body["ready"], true, "{url}: {body}");
    }
    server.stop().await;
}

/// toolhost's own MCP endpoint speaks 2026-07-28, so the check connects with `server/discover`
/// (the envelope in `_meta`, the revision and method in headers) and lists the tools statelessly;
/// a 2025-only server falls back to `initialize` (src/readiness/tests.rs).
#[tokio::test]
async fn own_mcp_endpoint_is_probed_as_2026_07_28() {
    let server = dev_server(Some(PAY_TO)).await;
    let body = report(&server, &server.url("/ai/mcp")).await;
    assert_eq!(body["kind"], "mcp_endpoint", "{body}");
    assert_eq!(body["ready"], true, "{body}");
    let note = |id: &str| {
        check(&body, id)["note"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        note("mcp_initialize").contains("POST server/discover answered HTTP 200"),
        "{body}"
    );
    assert!(
        note("mcp_protocol_version").contains("2026-07-28"),
        "{body}"
    );
    assert!(note("mcp_server_info").contains("toolhost"), "{body}");
    assert!(note("mcp_tools").contains("tool(s)"), "{body}");
    server.stop().await;
}

/// Without a configured payTo a dev server (test network only) receives at the address of a key
/// generated into its data dir, so its manifest still names one.
#[tokio::test]
async fn own_manifest_without_configured_pay_to_names_the_dev_address() {
    let server = dev_server(None).await;
    let body = report(&server, &server.url("/ai/manifest")).await;
    assert_eq!(body["kind"], "toolhost_manifest");
    assert_eq!(check(&body, "pay_to")["passed"], true, "{body}");
    // Kept in the data dir on the embedded store; in the shared store on PostgreSQL.
    assert_eq!(
        server.data_dir.join("dev_pay_to_key").exists(),
        !crate::util::on_postgres()
    );
    server.stop().await;
}

#[tokio::test]
async fn own_paid_endpoint_is_recognised_by_its_402() {
    let server = dev_server(Some(PAY_TO)).await;
    let body = report(&server, &server.url("/tools/receipt-echo-paid")).await;
    assert_eq!(body["kind"], "paid_endpoint", "{body}");
    assert_eq!(check(&body, "http_402")["passed"], true);
    server.stop().await;
}

#[tokio::test]
async fn get_form_takes_the_url_from_the_query() {
    let server = dev_server(None).await;
    let target = server.url("/ai/manifest");
    let (status, body) = server.get(&format!("{CHECK}?url={target}")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["kind"], "toolhost_manifest");
    server.stop().await;
}

#[tokio::test]
async fn internal_addresses_are_refused_by_default() {
    let server = TestServer::start().await;
    let port = server
        .base
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_string();
    for (url, reason) in [
        (server.url("/ai/manifest"), "a loopback address"),
        (
            format!("http://2130706433:{port}/ai/manifest"),
            "a loopback address",
        ),
        (
            "http://169.254.169.254/latest/meta-data/".to_string(),
            "a link-local address",
        ),
        (
            "http://10.0.0.1/.well-known/x402".to_string(),
            "a private address",
        ),
    ] {
        let body = report(&server, &url).await;
        assert_eq!(body["kind"], "unknown", "{url}");
        assert_eq!(body["ready"], false);
        let fetch = check(&body, "fetch");
        assert_eq!(fetch["passed"], false);
        assert!(
            fetch["note"].as_str().is_some_and(|n| n.ends_with(reason)),
            "{url}: {fetch}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn non_http_url_is_422() {
    let server = TestServer::start().await;
    let (status, body) = server
        .post(CHECK, &json!({ "url": "ftp://example.com/file" }))
        .await;
    assert_error(status, &body, 422, "invalid_url");
    server.stop().await;
}
