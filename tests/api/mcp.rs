//! `POST /ai/mcp`: the MCP Streamable HTTP transport and methods, against a real server.

use reqwest::header::HeaderMap;
use serde_json::{json, Value};

use crate::util::{As, TestServer};

const MCP: &str = "/ai/mcp";

struct Reply {
    status: u16,
    headers: HeaderMap,
    text: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }

    /// The JSON-RPC messages of an SSE body, in order.
    fn events(&self) -> Vec<Value> {
        assert_eq!(self.content_type(), "text/event-stream", "{}", self.text);
        self.text
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .map(|data| serde_json::from_str(data).unwrap())
            .collect()
    }

    fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }
}

async fn send(server: &TestServer, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut request = server
        .client
        .post(server.url(MCP))
        .header("content-type", "application/json");
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("accept"))
    {
        request = request.header("accept", "application/json, text/event-stream");
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request
        .body(body.to_string())
        .send()
        .await
        .expect("request");
    Reply {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        text: response.text().await.expect("body"),
    }
}

/// One request under 2025-11-25; returns the whole JSON-RPC response.
pub(crate) async fn rpc(server: &TestServer, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let reply = send(
        server,
        &[("mcp-protocol-version", "2025-11-25")],
        &body.to_string(),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.content_type(), "application/json", "JSON by default");
    reply.json()
}

pub(crate) async fn result(server: &TestServer, method: &str, params: Value) -> Value {
    let response = rpc(server, method, params).await;
    assert!(response.get("error").is_none(), "{response}");
    response["result"].clone()
}

async fn error_code(server: &TestServer, method: &str, params: Value) -> i64 {
    let response = rpc(server, method, params).await;
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error: {response}"))
}

async fn call(server: &TestServer, name: &str, arguments: Value) -> Value {
    result(
        server,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
    .await
}

fn text_json(result: &Value) -> Value {
    serde_json::from_str(result["content"][0]["text"].as_str().expect("text content")).unwrap()
}

#[tokio::test]
async fn initialize_negotiates_the_revision() {
    let server = TestServer::start().await;
    for (asked, answered) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
        // 2026-07-28 has no initialize: asking for it there gets the newest that has one.
        ("2026-07-28", "2025-11-25"),
    ] {
        let params = json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
        let init = result(&server, "initialize", params).await;
        assert_eq!(init["protocolVersion"], answered, "asked {asked}");
        assert_eq!(init["serverInfo"]["name"], "toolhost");
        assert_eq!(
            init["capabilities"],
            json!({"tools": {"listChanged": false}})
        );
    }
    assert_eq!(error_code(&server, "initialize", json!({})).await, -32602);
    // Stateless: nothing to carry between requests.
    let reply = send(&server, &[], r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await;
    assert!(reply.headers.get("mcp-session-id").is_none());
    assert_eq!(reply.json()["result"], json!({}));
}

#[tokio::test]
async fn an_unsupported_protocol_version_header_is_400() {
    let server = TestServer::start().await;
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    for version in ["2024-11-05", "2099-01-01", "nonsense"] {
        let reply = send(&server, &[("mcp-protocol-version", version)], ping).await;
        assert_eq!(reply.status, 400, "{version}");
        let error = &reply.json()["error"];
        assert_eq!(error["code"], -32022, "UnsupportedProtocolVersion");
        assert_eq!(error["data"]["requested"], version);
        assert_eq!(
            error["data"]["supported"],
            json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
        );
        assert_eq!(reply.json()["id"], 1, "answered under the request's id");
    }
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        assert_eq!(
            send(&server, &[("mcp-protocol-version", version)], ping)
                .await
                .status,
            200
        );
    }
}

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// A 2026-07-28 request as its clients send it: the envelope in `_meta`, the revision,
/// method and name headers; `tweak` edits the headers (`None` drops one).
async fn modern_with(
    server: &TestServer,
    method: &str,
    mut params: Value,
    tweak: &[(&str, Option<&str>)],
) -> Reply {
    let meta = params
        .as_object_mut()
        .unwrap()
        .entry("_meta")
        .or_insert_with(|| json!({}));
    meta[META_VERSION] = json!("2026-07-28");
    meta[META_CAPABILITIES] = json!({});
    meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "t", "version": "1"});
    let mut headers = vec![
        ("mcp-protocol-version", Some("2026-07-28")),
        ("mcp-method", Some(method)),
    ];
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        headers.push(("mcp-name", Some(name)));
    }
    for (name, value) in tweak {
        headers.retain(|(n, _)| n != name);
        headers.push((name, *value));
    }
    let headers: Vec<(&str, &str)> = headers
        .into_iter()
        .filter_map(|(n, v)| v.map(|v| (n, v)))
        .collect();
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": params});
    send(server, &headers, &body.to_string()).await
}

async fn modern(server: &TestServer, method: &str, params: Value) -> Value {
    let reply = modern_with(server, method, params, &[]).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let response = reply.json();
    assert_eq!(response["id"], 5);
    response["result"].clone()
}

/// MCP 2026-07-28: no `initialize`; `server/discover`, and results that say what they are and
/// how long they may be cached. The older revisions' results are unchanged.
#[tokio::test]
async fn the_2026_revision_is_stateless() {
    let server = TestServer::start().await;
    let discover = modern(&server, "server/discover", json!({})).await;
    assert_eq!(
        discover["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    );
    assert_eq!(
        discover["capabilities"],
        json!({"tools": {"listChanged": false}})
    );
    assert_eq!(
        discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "toolhost"
    );
    assert_eq!(discover["resultType"], "complete");
    assert!(discover["ttlMs"].as_u64().is_some());
    assert_eq!(discover["cacheScope"], "public");

    let list = modern(&server, "tools/list", json!({})).await;
    assert!(list["tools"].as_array().is_some_and(|t| t.len() > 5));
    assert_eq!(
        (&list["resultType"], &list["ttlMs"], &list["cacheScope"]),
        (&json!("complete"), &json!(0), &json!("public"))
    );
    let free = modern(
        &server,
        "tools/call",
        json!({"name": "receipt-echo", "arguments": {"a": 1}}),
    )
    .await;
    assert_eq!(
        (&free["isError"], &free["resultType"]),
        (&json!(false), &json!("complete"))
    );
    assert!(
        free.get("ttlMs").is_none(),
        "a call result is not cacheable"
    );
    let unpaid = modern(
        &server,
        "tools/call",
        json!({"name": "receipt-echo-paid", "arguments": {}}),
    )
    .await;
    assert_eq!(unpaid["isError"], true);
    assert_eq!(unpaid["structuredContent"]["x402Version"], 2);
    assert_eq!(unpaid["resultType"], "complete");
    // An envelope-less request without a 2026 header is the older revisions', as they define it.
    let legacy = result(&server, "tools/list", json!({})).await;
    assert!(legacy.get("resultType").is_none() && legacy.get("ttlMs").is_none());
    assert_eq!(
        error_code(&server, "server/discover", json!({})).await,
        -32601,
        "discovery is 2026-07-28's"
    );
}

#[tokio::test]
async fn the_2026_revision_refuses_before_running_anything() {
    let server = TestServer::start().await;
    let refused = |reply: Reply, status: u16, code: i64| {
        assert_eq!(reply.status, status, "{}", reply.text);
        let response = reply.json();
        assert_eq!(response["error"]["code"], code, "{response}");
        assert_eq!(response["id"], 5, "under the request's id");
        response
    };
    let call = json!({"name": "receipt-echo", "arguments": {}});
    // The revision header must be there and agree with the envelope.
    for header in [None, Some("2025-11-25")] {
        let reply = modern_with(
            &server,
            "tools/list",
            json!({}),
            &[("mcp-protocol-version", header)],
        )
        .await;
        refused(reply, 400, -32020);
    }
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list",
        "params": {"_meta": {META_VERSION: "2099-01-01", META_CAPABILITIES: {}}}});
    let reply = send(
        &server,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
        &body.to_string(),
    )
    .await;
    refused(reply, 400, -32020);
    // An unserved revision in both: the served ones are named.
    let reply = send(
        &server,
        &[
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "tools/list"),
        ],
        &body.to_string(),
    )
    .await;
    let response = refused(reply, 400, -32022);
    assert_eq!(response["error"]["data"]["requested"], "2099-01-01");
    // A 2026 header needs the envelope, with the client's capabilities.
    let bare = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}});
    let reply = send(
        &server,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
        &bare.to_string(),
    )
    .await;
    refused(reply, 400, -32602);
    let no_capabilities = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list",
        "params": {"_meta": {META_VERSION: "2026-07-28"}}});
    let reply = send(
        &server,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
        &no_capabilities.to_string(),
    )
    .await;
    refused(reply, 400, -32602);
    // Mcp-Method and Mcp-Name mirror the body (values are case-sensitive, whitespace aside).
    for tweak in [
        [("mcp-method", None)],
        [("mcp-method", Some("TOOLS/CALL"))],
        [("mcp-name", None)],
        [("mcp-name", Some("receipt-echo-paid"))],
    ] {
        let reply = modern_with(&server, "tools/call", call.clone(), &tweak).await;
        refused(reply, 400, -32020);
    }
    let spaced = modern_with(
        &server,
        "tools/call",
        call.clone(),
        &[("mcp-name", Some("  receipt-echo "))],
    )
    .await;
    assert_eq!(spaced.status, 200, "{}", spaced.text);
    // Methods of the older revisions, and unknown ones: 404.
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "prompts/list",
        "nope",
    ] {
        refused(
            modern_with(&server, method, json!({}), &[]).await,
            404,
            -32601,
        );
    }
    // Errors of a method that runs stay in-band.
    let unknown = modern_with(&server, "tools/call", json!({"name": "no-such-tool"}), &[]).await;
    refused(unknown, 200, -32602);
}

/// A builder's tool may mirror arguments into `Mcp-Param-*` headers (`x-mcp-header` in its
/// input schema); under 2026-07-28 they must agree with the body, or the call never runs.
#[tokio::test]
async fn the_2026_revision_checks_param_headers_of_builder_tools() {
    let server = TestServer::start().await;
    let mut body = crate::util::static_endpoint("regional");
    body["inputSchema"] = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
    }});
    server.builder_with("regions", &body).await;
    let call = json!({"name": "regional", "arguments": {"region": "eu"}});
    let ok = modern_with(
        &server,
        "tools/call",
        call.clone(),
        &[("mcp-param-region", Some("eu"))],
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    assert_eq!(ok.json()["result"]["isError"], false);
    for header in [None, Some("us"), Some("=?base64?ZXU?=")] {
        let reply = modern_with(
            &server,
            "tools/call",
            call.clone(),
            &[("mcp-param-region", header)],
        )
        .await;
        assert_eq!(
            (reply.status, reply.json()["error"]["code"].clone()),
            (400, json!(-32020)),
            "{header:?}"
        );
    }
    let encoded = modern_with(
        &server,
        "tools/call",
        call,
        &[("mcp-param-region", Some("=?base64?ZXU=?="))],
    )
    .await;
    assert_eq!(encoded.status, 200, "{}", encoded.text);
    // The older revisions have no such headers.
    let legacy = result(
        &server,
        "tools/call",
        json!({"name": "regional", "arguments": {"region": "eu"}}),
    )
    .await;
    assert_eq!(legacy["isError"], false);
}

/// Every method but POST is 405 with `Allow: POST`, the one method the OpenAPI document lists
/// (OPTIONS and PUT once answered with the router's own `Allow: POST,GET,HEAD,DELETE`).
#[tokio::test]
async fn get_and_delete_are_405() {
    let server = TestServer::start().await;
    for method in [
        reqwest::Method::GET,
        reqwest::Method::DELETE,
        reqwest::Method::OPTIONS,
        reqwest::Method::PUT,
        reqwest::Method::HEAD,
    ] {
        let response = server
            .client
            .request(method.clone(), server.url(MCP))
            .header("accept", "text/event-stream")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 405, "{method}");
        assert_eq!(response.headers()["allow"], "POST");
    }
}

#[tokio::test]
async fn origins_are_checked() {
    let server =
        TestServer::start_with(|c| c.mcp.allowed_origins = vec!["https://app.example".into()])
            .await;
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let foreign = send(&server, &[("origin", "https://evil.example")], ping).await;
    assert_eq!(foreign.status, 403);
    assert_eq!(foreign.json()["error"]["code"], -32000);
    assert_eq!(send(&server, &[("origin", "null")], ping).await.status, 403);
    assert_eq!(
        send(&server, &[("origin", "https://app.example")], ping)
            .await
            .status,
        200
    );
    assert_eq!(
        send(&server, &[("origin", &server.base)], ping)
            .await
            .status,
        200,
        "own origin"
    );
    assert_eq!(
        send(&server, &[], ping).await.status,
        200,
        "no Origin: not a browser"
    );
}

#[tokio::test]
async fn notifications_and_client_responses_get_202() {
    let server = TestServer::start().await;
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","id":"s1","result":{}}"#,
    ] {
        let reply = send(&server, &[("mcp-protocol-version", "2025-11-25")], body).await;
        assert_eq!(reply.status, 202, "{body}");
        assert!(reply.text.is_empty());
    }
}

#[tokio::test]
async fn json_rpc_errors() {
    let server = TestServer::start().await;
    // Unknown methods, including the newer revisions' discovery probe.
    assert_eq!(
        error_code(&server, "server/discover", json!({})).await,
        -32601
    );
    assert_eq!(
        error_code(&server, "resources/list", json!({})).await,
        -32601
    );
    // Bad params.
    let bad = send(
        &server,
        &[],
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]}"#,
    )
    .await;
    assert_eq!(
        (
            bad.status,
            bad.json()["error"]["code"].clone(),
            bad.json()["id"].clone()
        ),
        (200, json!(-32602), json!(3))
    );
    assert_eq!(
        error_code(&server, "tools/call", json!({"arguments": {}})).await,
        -32602
    );
    assert_eq!(
        error_code(
            &server,
            "tools/call",
            json!({"name": "receipt-echo", "arguments": [1]})
        )
        .await,
        -32602
    );
    assert_eq!(
        error_code(&server, "tools/list", json!({"cursor": 5})).await,
        -32602
    );
    // Parse error and invalid requests: 400 with id null when unknown.
    let parse = send(&server, &[], "{not json").await;
    assert_eq!(
        (parse.status, parse.json()["error"]["code"].clone()),
        (400, json!(-32700))
    );
    assert_eq!(parse.json()["id"], Value::Null);
    for body in [
        r#"{"id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
        "42",
        r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
    ] {
        let reply = send(&server, &[], body).await;
        assert_eq!(
            (reply.status, reply.json()["error"]["code"].clone()),
            (400, json!(-32600)),
            "{body}"
        );
    }
}

#[tokio::test]
async fn transport_refusals() {
    let server = TestServer::start().await;
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let response = server
        .client
        .post(server.url(MCP))
        .header("content-type", "text/plain")
        .body(ping)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 415);
    assert_eq!(
        send(&server, &[("accept", "text/html")], ping).await.status,
        406
    );
    assert_eq!(
        send(&server, &[("accept", "*/*")], ping)
            .await
            .content_type(),
        "application/json"
    );
}

/// 2025-03-26 has JSON-RPC batches; 2025-06-18 removed them, so they are refused there.
#[tokio::test]
async fn batches_only_under_2025_03_26() {
    let server = TestServer::start().await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "nope"},
        {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "receipt-echo", "arguments": {}}},
    ])
    .to_string();
    for headers in [&[][..], &[("mcp-protocol-version", "2025-03-26")][..]] {
        let reply = send(&server, headers, &batch).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        let replies = reply.json();
        let replies = replies.as_array().unwrap();
        assert_eq!(
            replies.len(),
            4,
            "no answer to the notification: {replies:?}"
        );
        assert_eq!(replies[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        assert_eq!(replies[1]["error"]["code"], -32601);
        assert_eq!(
            replies[2]["error"]["code"], -32600,
            "initialize must not be batched"
        );
        assert_eq!(replies[3]["result"]["isError"], false);
    }
    for version in ["2025-06-18", "2025-11-25"] {
        let reply = send(&server, &[("mcp-protocol-version", version)], &batch).await;
        assert_eq!(
            (reply.status, reply.json()["error"]["code"].clone()),
            (400, json!(-32600)),
            "{version}"
        );
    }
    assert_eq!(send(&server, &[], "[]").await.status, 400);
    // At most 16 messages: each answer is built before the batch's leaves (a batch of 2,000
    // `tools/list` was answered with 45 MB).
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let reply = send(&server, &[], &json!(vec![list.clone(); 16]).to_string()).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let reply = send(&server, &[], &json!(vec![list; 17]).to_string()).await;
    assert_eq!(
        (reply.status, reply.json()["error"]["code"].clone()),
        (400, json!(-32600)),
        "{}",
        reply.text
    );
    let notes = r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
    assert_eq!(send(&server, &[], notes).await.status, 202);
}

#[tokio::test]
async fn sse_when_only_event_stream_is_accepted() {
    let server = TestServer::start().await;
    let reply = send(
        &server,
        &[("accept", "text/event-stream")],
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#,
    )
    .await;
    assert_eq!(reply.status, 200);
    let events = reply.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["id"], "a");
    assert!(events[0]["result"]["tools"]
        .as_array()
        .is_some_and(|t| !t.is_empty()));
}

#[tokio::test]
async fn progress_is_streamed_when_asked_for() {
    let server = TestServer::start().await;
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "receipt-echo", "arguments": {"a": 1}, "_meta": {"progressToken": "tok"}}});
    let reply = send(&server, &[], &body.to_string()).await;
    let events = reply.events();
    assert_eq!(events.len(), 3, "{events:?}");
    for (event, progress) in events.iter().zip([0, 1]) {
        assert_eq!(event["method"], "notifications/progress");
        assert_eq!(event["params"]["progressToken"], "tok");
        assert_eq!(event["params"]["progress"], progress);
    }
    assert_eq!(events[2]["id"], 9);
    assert_eq!(events[2]["result"]["isError"], false);
    // When only JSON is accepted the answer is plain JSON, token or not.
    let json_only = send(
        &server,
        &[("accept", "application/json")],
        &body.to_string(),
    )
    .await;
    assert_eq!(json_only.content_type(), "application/json");
    assert_eq!(json_only.json()["result"]["isError"], false);
}

#[tokio::test]
async fn tools_list_pages_with_a_cursor() {
    let server = TestServer::start_with(|c| c.mcp.page_size = 3).await;
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let page = result(&server, "tools/list", params).await;
        let tools = page["tools"].as_array().unwrap();
        assert!(tools.len() <= 3);
        names.extend(
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string()),
        );
        pages += 1;
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    let catalog = server.get("/ai/endpoints").await.1["endpoints"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(
        names.len(),
        catalog + 5,
        "every endpoint plus the service tools: {names:?}"
    );
    assert_eq!(pages, names.len().div_ceil(3));
    assert_eq!(
        &names[..5],
        [
            "catalog_search",
            "receipt_lookup",
            "quote",
            "conversion_quote",
            "x402_quote"
        ]
    );
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len());
    assert_eq!(
        error_code(&server, "tools/list", json!({"cursor": "garbage"})).await,
        -32602
    );
}

#[tokio::test]
async fn tool_definitions_carry_schemas_prices_and_x402_terms() {
    let server = TestServer::start().await;
    let tools = result(&server, "tools/list", json!({})).await["tools"]
        .as_array()
        .unwrap()
        .clone();
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))
            .clone()
    };
    let free = tool("x402-readiness-check");
    assert_eq!(free["title"], "x402 / MCP readiness check");
    assert!(free["description"]
        .as_str()
        .unwrap()
        .ends_with("Free: no payment needed."));
    assert_eq!(free["inputSchema"]["required"], json!(["url"]));
    assert_eq!(free["outputSchema"]["type"], "object");
    assert_eq!(free["annotations"]["openWorldHint"], true);
    assert_eq!(free["_meta"]["toolhost/pricing"]["priceUsd"], 0);
    assert!(free["_meta"].get("x402").is_none());

    let paid = tool("receipt-echo-paid");
    assert!(
        paid["description"]
            .as_str()
            .unwrap()
            .contains("Price: 0.001 USD per successful call"),
        "{paid}"
    );
    assert_eq!(paid["inputSchema"]["type"], "object");
    assert!(
        paid.get("outputSchema").is_none(),
        "paid tools publish it in _meta"
    );
    assert_eq!(paid["_meta"]["toolhost/outputSchema"]["type"], "object");
    assert_eq!(paid["annotations"]["idempotentHint"], false);
    let x402 = &paid["_meta"]["x402"];
    assert_eq!(x402["x402Version"], 2);
    assert_eq!(x402["accepts"][0]["scheme"], "exact");
    assert_eq!(x402["accepts"][0]["network"], "eip155:84532");
    assert_eq!(x402["accepts"][0]["amount"], "1000");
    assert_eq!(
        x402["resource"]["url"],
        format!("{}/tools/receipt-echo-paid", server.base)
    );
}

#[tokio::test]
async fn calling_tools() {
    let server = TestServer::start().await;
    let free = call(&server, "receipt-echo", json!({"hello": "world"})).await;
    assert_eq!(free["isError"], false);
    assert_eq!(
        free["structuredContent"]["echo"]["endpoint"],
        "receipt-echo"
    );
    assert_eq!(text_json(&free), free["structuredContent"]);
    assert_eq!(free["_meta"]["toolhost/receipt"]["charged"], false);

    // An unknown tool is a protocol error; a failing tool is a result.
    assert_eq!(
        error_code(
            &server,
            "tools/call",
            json!({"name": "nope", "arguments": {}})
        )
        .await,
        -32602
    );
    let failing = call(&server, "x402-readiness-check", json!({})).await;
    assert_eq!(failing["isError"], true);
    assert!(failing.get("structuredContent").is_none());
    assert_eq!(text_json(&failing)["error"]["code"], "input_invalid");

    // Paid without payment: the requirements, structured and as text.
    let unpaid = call(&server, "receipt-echo-paid", json!({"hello": "world"})).await;
    assert_eq!(unpaid["isError"], true);
    assert_eq!(text_json(&unpaid), unpaid["structuredContent"]);
    let required = &unpaid["structuredContent"];
    assert!(
        required["x402Version"] == 2 || required["error"]["code"] == "payment_required",
        "{required}"
    );

    // Payment in _meta must be a PaymentPayload object.
    let bad_payment =
        json!({"name": "receipt-echo-paid", "arguments": {}, "_meta": {"x402/payment": "0xsig"}});
    assert_eq!(error_code(&server, "tools/call", bad_payment).await, -32602);
}

#[tokio::test]
async fn service_tools() {
    let server = TestServer::start().await;
    let found = call(
        &server,
        "catalog_search",
        json!({"query": "echo", "pricingMode": "fixed_price_success_receipt"}),
    )
    .await;
    assert_eq!(found["isError"], false);
    let endpoints = found["structuredContent"]["endpoints"].as_array().unwrap();
    assert_eq!(endpoints.len(), 1, "{endpoints:?}");
    assert_eq!(endpoints[0]["toolName"], "receipt-echo-paid");
    assert_eq!(endpoints[0]["priceUsd"], 0.001);

    let limited = call(&server, "catalog_search", json!({"limit": 2})).await;
    assert_eq!(
        limited["structuredContent"]["endpoints"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(limited["structuredContent"]["total"].as_u64().unwrap() > 2);

    let bad = call(&server, "catalog_search", json!({"pricingMode": "cheap"})).await;
    assert_eq!(
        (
            bad["isError"].clone(),
            text_json(&bad)["error"]["code"].clone()
        ),
        (json!(true), json!("input_invalid"))
    );

    let missing = call(
        &server,
        "receipt_lookup",
        json!({"receiptId": "rcpt_missing"}),
    )
    .await;
    assert_eq!(missing["isError"], true);
    assert_eq!(text_json(&missing)["error"]["code"], "receipt_not_found");
    let (status, _) = server.get("/ai/receipts/rcpt_missing").await;
    assert_eq!(status, 404, "same lookup as the HTTP route");
}

/// A JS endpoint answers over MCP exactly what it answers over HTTP: one pipeline.
#[tokio::test]
async fn js_endpoints_answer_as_over_http() {
    let server = TestServer::start().await;
    let input = json!({"b": [1, 2, {"z": null}], "a": "héllo"});
    let (status, http) = server.post("/tools/developer-utility", &input).await;
    assert_eq!(status, 200, "{http}");
    let mcp = call(&server, "developer-utility", input).await;
    assert_eq!(mcp["isError"], false, "{mcp}");
    assert_eq!(mcp["structuredContent"]["sha256"], http["sha256"]);
    assert_eq!(mcp["structuredContent"]["depth"], http["depth"]);
}

/// Paused endpoints leave the tool list; calling one anyway gets the pipeline's 503 as a
/// failing result, as HTTP callers get the 503.
#[tokio::test]
async fn paused_endpoints_are_not_listed_and_fail_as_results() {
    let server = TestServer::start().await;
    server
        .patch(As::Admin, "receipt-echo", &json!({"status": "paused"}))
        .await;
    let tools = result(&server, "tools/list", json!({})).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"receipt-echo"), "{names:?}");
    let paused = call(&server, "receipt-echo", json!({})).await;
    assert_eq!(paused["isError"], true);
    assert_eq!(text_json(&paused)["error"]["code"], "endpoint_paused");
}

/// The x402 MCP transport end to end: the unpaid call returns the v2 PaymentRequired; the same
/// call with a signed EIP-3009 authorization in `_meta["x402/payment"]` succeeds with the
/// settlement and the receipt in `_meta`; replaying that payment is refused as a payment error.
#[tokio::test]
async fn paid_tool_calls_with_x402_in_meta() {
    use alloy_signer_local::PrivateKeySigner;
    use toolhost::x402::config::NetworkConfig;
    use toolhost::x402::schemes::exact_evm::signing::sign;
    use toolhost::x402::PaymentRequirements;

    let server = TestServer::start().await;
    let input = json!({"hello": "world"});
    let unpaid = call(&server, "receipt-echo-paid", input.clone()).await;
    assert_eq!(unpaid["isError"], true);
    let required = unpaid["structuredContent"].clone();
    assert_eq!(required["x402Version"], 2, "{required}");
    assert_eq!(text_json(&unpaid), required);
    let tools = result(&server, "tools/list", json!({})).await;
    let listed = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "receipt-echo-paid")
        .unwrap()
        .clone();
    assert_eq!(
        listed["_meta"]["x402"]["accepts"], required["accepts"],
        "advertised = asked"
    );

    let requirement: PaymentRequirements =
        serde_json::from_value(required["accepts"][0].clone()).unwrap();
    let signer = PrivateKeySigner::random();
    let payload = sign(
        &signer,
        &NetworkConfig::base_sepolia(),
        &requirement,
        |_| {},
    )
    .unwrap();
    let payment = json!({"x402Version": 2, "resource": required["resource"], "accepted": requirement, "payload": payload});
    let params = json!({"name": "receipt-echo-paid", "arguments": input, "_meta": {"x402/payment": payment}});
    let paid = result(&server, "tools/call", params.clone()).await;
    assert_eq!(paid["isError"], false, "{paid}");
    assert_eq!(
        paid["structuredContent"]["echo"]["endpoint"],
        "receipt-echo-paid"
    );
    let settlement = &paid["_meta"]["x402/payment-response"];
    assert_eq!(settlement["success"], true, "{paid}");
    let receipt = &paid["_meta"]["toolhost/receipt"];
    let receipt_id = receipt["receiptId"].as_str().expect("receipt id");
    // Its place in the receipt log, as over HTTP (checked in receipt_log.rs).
    assert_eq!(
        paid["_meta"]["toolhost/receiptLog"], paid["structuredContent"]["receiptLog"],
        "{paid}"
    );
    assert!(
        paid["_meta"]["toolhost/receiptLog"]["leafIndex"].is_u64(),
        "{paid}"
    );
    assert_eq!(
        receipt["payer"].as_str().unwrap().to_lowercase(),
        signer.address().to_string().to_lowercase()
    );

    let looked_up = call(&server, "receipt_lookup", json!({"receiptId": receipt_id})).await;
    assert_eq!(looked_up["isError"], false, "{looked_up}");
    let (status, http) = server.get(&format!("/ai/receipts/{receipt_id}")).await;
    assert_eq!(status, 200);
    assert_eq!(
        looked_up["structuredContent"], http,
        "same record as the HTTP route"
    );

    let replay = result(&server, "tools/call", params).await;
    assert_eq!(replay["isError"], true);
    assert_eq!(replay["structuredContent"]["x402Version"], 2);
    assert!(
        replay["structuredContent"]["error"]
            .as_str()
            .is_some_and(|e| !e.is_empty()),
        "{replay}"
    );
}

/// A developer credit pays through `_meta["toolhost/developer-credit"]`.
#[tokio::test]
async fn paid_tool_calls_with_developer_credit_in_meta() {
    let server = TestServer::start().await;
    let (status, body) = server
        .call(
            "POST",
            "/ai/admin/credits",
            As::Admin,
            Some(&json!({"amountUsd": 0.001})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let token = body["credit"]["token"].as_str().unwrap();
    let params = json!({"name": "receipt-echo-paid", "arguments": {"x": 1}, "_meta": {"toolhost/developer-credit": token}});
    let paid = result(&server, "tools/call", params.clone()).await;
    assert_eq!(paid["isError"], false, "{paid}");
    assert_eq!(
        paid["_meta"]["toolhost/receipt"]["paymentMethod"],
        "developer_credit"
    );
    let spent = result(&server, "tools/call", params).await;
    assert_eq!(spent["isError"], true, "the credit is used up: {spent}");
}

/// The quote tools run the quote routes' own handlers.
#[tokio::test]
async fn quote_tools() {
    let server = TestServer::start().await;
    let tools = result(&server, "tools/list", json!({})).await;
    let quote_tool = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "quote")
        .unwrap()
        .clone();
    assert_eq!(quote_tool["inputSchema"]["type"], "object");
    assert!(
        quote_tool["inputSchema"]["properties"]
            .get("slug")
            .is_some(),
        "{quote_tool}"
    );

    let quote = call(&server, "quote", json!({"slug": "receipt-echo-paid"})).await;
    assert_eq!(quote["isError"], false, "{quote}");
    let (status, http) = server
        .post("/ai/quote", &json!({"slug": "receipt-echo-paid"}))
        .await;
    assert_eq!(status, 200);
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&quote["structuredContent"]),
        keys(&http),
        "same shape as the HTTP route"
    );

    let conversion = call(
        &server,
        "conversion_quote",
        json!({"serviceId": "receipt-echo-paid", "startNetwork": "eip155:84532", "startAsset": "USDC"}),
    )
    .await;
    assert_eq!(conversion["isError"], false, "{conversion}");
    assert_eq!(conversion["structuredContent"]["slug"], "receipt-echo-paid");

    let unknown = call(&server, "quote", json!({"slug": "nope"})).await;
    assert_eq!(unknown["isError"], true);
    assert_eq!(text_json(&unknown)["error"]["code"], "endpoint_not_found");

    // Outbound requests stay SSRF-guarded: loopback is refused, as over HTTP.
    let external = call(
        &server,
        "x402_quote",
        json!({"url": format!("{}/tools/receipt-echo-paid", server.base)}),
    )
    .await;
    assert_eq!(external["isError"], true, "{external}");
}
