//! Shared helpers for integration tests: a real server on an ephemeral port with a temp data dir.

#![allow(dead_code, unreachable_pub)]

pub mod hostile;
pub mod node;

use std::path::{Path, PathBuf};

use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::sync::oneshot;
use toolhost::config::{Config, StoreLocation};
use toolhost::server::Server;

pub const ADMIN_TOKEN: &str = "test-admin-token";

/// Whether this run keeps the servers' state in PostgreSQL (`TOOLHOST_TEST_STORE=postgres`):
/// `scripts/test.sh` runs the API suite once on each engine.
pub fn on_postgres() -> bool {
    std::env::var("TOOLHOST_TEST_STORE").is_ok_and(|v| v == "postgres")
}

/// The database of the server whose data dir is `data_dir`: a schema of its own in the test
/// process's shared cluster, remembered in the data dir so a restarted server finds its state.
async fn postgres_url_for(data_dir: &Path) -> String {
    let remembered = data_dir.join("test-store-url");
    if let Ok(url) = std::fs::read_to_string(&remembered) {
        return url;
    }
    let cluster = toolhost_testkit::PgCluster::shared().expect("a PostgreSQL cluster for tests");
    let url = cluster.fresh_url().await.expect("a fresh schema");
    std::fs::create_dir_all(data_dir).expect("data dir");
    std::fs::write(&remembered, &url).expect("remember the store URL");
    url
}

/// A credential to send: none, the admin token, or a builder key.
#[derive(Clone, Copy, Debug)]
pub enum As<'a> {
    Nobody,
    Admin,
    Builder(&'a str),
    /// A header with an arbitrary value (e.g. a wrong admin token).
    Header(&'a str, &'a str),
}

pub struct TestServer {
    pub base: String,
    pub client: reqwest::Client,
    pub data_dir: PathBuf,
    /// The server's state, for tests that drive its background work directly.
    pub app: toolhost::app::AppState,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// Starts a server on the data dir `data`, which outlives it: tests read the disk after
    /// [`stop`](Self::stop).
    pub async fn start_in(data: &Path) -> Self {
        let data = data.to_path_buf();
        Self::start_with(move |c| c.data_dir = data).await
    }

    /// Starts a server whose config `adjust` may change (limits, seed dir, dev flags).
    pub async fn start_with(adjust: impl FnOnce(&mut Config)) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config = Config::new(dir.path().join("data"));
        config.addr = "127.0.0.1:0".parse().unwrap();
        config.admin_token = Some(ADMIN_TOKEN.to_string());
        // Suites send many free calls from one loopback address; the limit's own tests
        // (tests/api/abuse.rs) turn it back on.
        config.limits.anonymous_writes = None;
        config.runtime.isolation = sandbox_isolation();
        adjust(&mut config);
        if on_postgres() {
            config.store = StoreLocation::Postgres(postgres_url_for(&config.data_dir).await);
        }
        let data_dir = config.data_dir.clone();
        let server = Server::bind(config).await.expect("server starts");
        let base = format!("http://{}", server.local_addr());
        let app = server.app.clone();
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(async move {
            server
                .run(async {
                    let _ = rx.await;
                })
                .await
                .expect("server runs");
        });
        Self {
            base,
            client: reqwest::Client::new(),
            data_dir,
            app,
            shutdown: Some(tx),
            handle: Some(handle),
            _dir: dir,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        read(
            self.client
                .get(self.url(path))
                .send()
                .await
                .expect("request"),
        )
        .await
    }

    pub async fn post(&self, path: &str, body: &Value) -> (StatusCode, Value) {
        read(
            self.client
                .post(self.url(path))
                .json(body)
                .send()
                .await
                .expect("request"),
        )
        .await
    }

    /// Any method, with a credential and an optional JSON body.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        who: As<'_>,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        let (status, text) = self.call_text(method, path, who, body).await;
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Like [`call`] but returns the raw body text, for asserting what never appears in it.
    pub async fn call_text(
        &self,
        method: &str,
        path: &str,
        who: As<'_>,
        body: Option<&Value>,
    ) -> (StatusCode, String) {
        let mut request = self.client.request(method.parse().unwrap(), self.url(path));
        request = match who {
            As::Nobody => request,
            As::Admin => request.header("x-admin-token", ADMIN_TOKEN),
            As::Builder(key) => request.header("x-builder-key", key),
            As::Header(name, value) => request.header(name, value),
        };
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.expect("request");
        let status = response.status();
        (status, response.text().await.expect("body"))
    }

    /// Onboards a builder through the admin route; returns its id and key.
    pub async fn builder(&self, name: &str) -> (String, String) {
        let (status, body) = self
            .call(
                "POST",
                "/ai/admin/builders",
                As::Admin,
                Some(&serde_json::json!({"name": name})),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        (
            body["builder"]["id"].as_str().unwrap().to_string(),
            body["builderKey"].as_str().unwrap().to_string(),
        )
    }

    /// Creates an endpoint as `who` from `body`, asserting 200; returns the response.
    pub async fn create(&self, who: As<'_>, body: &Value) -> Value {
        let (status, response) = self
            .call("POST", "/ai/endpoints/create", who, Some(body))
            .await;
        assert_eq!(status, 200, "{response}");
        response
    }

    /// Onboards a builder and creates an endpoint from `body` as it; returns the builder's key
    /// and the create response.
    pub async fn builder_with(&self, name: &str, body: &Value) -> (String, Value) {
        let (_, key) = self.builder(name).await;
        let created = self.create(As::Builder(&key), body).await;
        (key, created)
    }

    /// PATCHes `/ai/endpoints/{slug}` as `who`, asserting 200; returns the response.
    pub async fn patch(&self, who: As<'_>, slug: &str, body: &Value) -> Value {
        let (status, response) = self
            .call("PATCH", &format!("/ai/endpoints/{slug}"), who, Some(body))
            .await;
        assert_eq!(status, 200, "PATCH {slug}: {response}");
        response
    }

    /// The admin grants `capabilities` (already requested) to an endpoint.
    pub async fn grant(&self, slug: &str, capabilities: Value) -> Value {
        self.patch(
            As::Admin,
            slug,
            &json!({ "grantedCapabilities": capabilities }),
        )
        .await
    }

    /// The kinds of the events `who` reads at `/ai/builders/events?{query}`, newest first.
    pub async fn event_kinds(&self, who: As<'_>, query: &str) -> Vec<String> {
        let (status, feed) = self
            .call("GET", &format!("/ai/builders/events?{query}"), who, None)
            .await;
        assert_eq!(status, 200, "{feed}");
        kinds(&feed)
    }

    /// `GET path`'s body as text (pages, metrics).
    /// Calls `POST path` 20 times, 100 ms apart, asserting each answers 200: a neighbour's
    /// calls while something hostile runs beside it. Returns how many answered.
    pub async fn neighbour_answers(&self, path: &str, input: Value) -> usize {
        let mut answered = 0;
        for _ in 0..20 {
            let (status, body) = self.post(path, &input).await;
            assert_eq!(status, 200, "{body}");
            answered += 1;
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        answered
    }

    /// MCP `tools/call` of `name` (revision 2025-11-25, `_meta` as given): the JSON-RPC
    /// result of a 200.
    pub async fn mcp_tools_call(&self, name: &str, arguments: Value, meta: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta}});
        self.mcp(&body).await
    }

    /// MCP `tools/list`'s tools (the first page).
    pub async fn mcp_tools_list(&self) -> Vec<Value> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        self.mcp(&body).await["tools"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// One MCP request (2025-11-25), answered 200; its `result`.
    async fn mcp(&self, body: &Value) -> Value {
        let response = self
            .client
            .post(self.url("/ai/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(body)
            .send()
            .await
            .unwrap();
        let (status, reply) = read(response).await;
        assert_eq!(status, 200, "{reply}");
        reply["result"].clone()
    }

    pub async fn text(&self, path: &str) -> String {
        let response = self
            .client
            .get(self.url(path))
            .send()
            .await
            .expect("request");
        response.text().await.expect("body")
    }

    /// Stops accepting, waits for in-flight requests and the store flush.
    /// How many times `slug`'s handler ran: its invocation log entries, as the admin reads them
    /// (the route flushes the recorder first, so every finished call is counted).
    pub async fn handler_runs(&self, slug: &str) -> usize {
        let path = format!("/ai/endpoints/{slug}/logs?limit=100");
        let (status, body) = self.call("GET", &path, As::Admin, None).await;
        assert_eq!(status, 200, "{body}");
        body["entries"].as_array().expect("entries").len()
    }

    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(handle) = self.handle.take() {
            handle.await.expect("server task");
        }
    }
}

/// The kinds of an events feed's events, in feed order.
pub fn kinds(feed: &Value) -> Vec<String> {
    feed["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["kind"].as_str().expect("kind").to_string())
        .collect()
}

/// Writes `fixture` as `catalog/<slug>.json` of the seed dir `dir`.
pub fn seed_fixture(dir: &Path, fixture: &Value) {
    let catalog = dir.join("catalog");
    std::fs::create_dir_all(&catalog).expect("seed dir");
    let slug = fixture["slug"].as_str().expect("fixture slug");
    std::fs::write(catalog.join(format!("{slug}.json")), fixture.to_string()).expect("fixture");
}

/// Status and JSON body (`Value::Null` for an empty or non-JSON body).
/// POSTs `body` to `path` with one payment header (`(name, value)`): status, headers, JSON body.
pub async fn post_paid(
    server: &TestServer,
    path: &str,
    header: &(&str, String),
    body: Value,
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let response = server
        .client
        .post(server.url(path))
        .header(header.0, &header.1)
        .json(&body)
        .send()
        .await
        .expect("request");
    let headers = response.headers().clone();
    let (status, body) = read(response).await;
    (status, headers, body)
}

/// POSTs `input` to `url`, expects 402, and returns the v2 payment requirements from its
/// `PAYMENT-REQUIRED` header.
pub async fn payment_required(client: &reqwest::Client, url: &str, input: &Value) -> Value {
    let response = client.post(url).json(input).send().await.expect("request");
    assert_eq!(response.status(), 402);
    let header = response.headers()["payment-required"]
        .to_str()
        .expect("ascii header");
    let bytes =
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, header).expect("base64");
    serde_json::from_slice(&bytes).expect("json")
}

pub async fn read(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    let bytes = response.bytes().await.expect("body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// Asserts the one error shape with the given status and code.
#[track_caller]
pub fn assert_error(status: StatusCode, body: &Value, expected_status: u16, code: &str) {
    assert_eq!(status.as_u16(), expected_status, "status; body: {body}");
    assert_eq!(body["ok"], Value::Bool(false), "ok flag; body: {body}");
    assert_eq!(body["error"]["code"], code, "error code; body: {body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "message; body: {body}"
    );
}

/// Asserts a 422 `compile_error` whose hint mentions `word` (what the builder should change).
pub fn assert_compile_error_hinting(status: StatusCode, body: &Value, word: &str) {
    assert_error(status, body, 422, "compile_error");
    let hint = body["error"]["details"]["hint"]
        .as_str()
        .unwrap_or_default();
    assert!(
        hint.contains(word),
        "hint should mention {word}; body: {body}"
    );
}

/// Asserts an x402 402 answer: the v1 body (`x402Version:1`, `error` as the reason string,
/// `accepts`), our `ok:false`/`code`/`message`, and the v2 object as `paymentRequired`.
#[track_caller]
pub fn assert_payment_required(status: StatusCode, body: &Value, code: &str) {
    assert_eq!(status.as_u16(), 402, "status; body: {body}");
    assert_eq!(body["ok"], Value::Bool(false), "ok flag; body: {body}");
    assert_eq!(body["x402Version"], 1, "body: {body}");
    assert_eq!(body["error"], code, "reason; body: {body}");
    assert_eq!(body["code"], code, "code; body: {body}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "message; body: {body}"
    );
    assert!(
        body["accepts"].as_array().is_some_and(|a| !a.is_empty()),
        "accepts; body: {body}"
    );
    assert_eq!(body["paymentRequired"]["x402Version"], 2, "body: {body}");
}

/// A valid builder create body for a free `static_json` endpoint.
pub fn static_endpoint(slug: &str) -> Value {
    serde_json::json!({
        "slug": slug,
        "title": "Greeting",
        "description": "Returns a fixed greeting.",
        "priceUsd": 0,
        "handlerType": "static_json",
        "response": {"greeting": "hello"},
        "tags": ["demo"],
        "safetyAttestation": {"accepted": true},
    })
}

/// A valid builder create body for a paid JS endpoint asking for capabilities.
pub fn js_endpoint(slug: &str) -> Value {
    serde_json::json!({
        "slug": slug,
        "title": "Word count",
        "description": "Counts words in a text.",
        "priceUsd": 0.002,
        "pricingMode": "fixed_price_success_receipt",
        "handlerType": "js_request_response",
        "source": "export default async function (req, ctx) { ctx.log('counting'); return { words: String(req.text || '').split(/\\s+/).length }; }",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "outputSchema": {"type": "object"},
        "capabilities": {"kv": true, "httpGetJson": true},
        "env": {"MODE": "fast"},
        "files": {"data/stopwords.txt": "a\nan\nthe"},
        "safetyAttestation": {"accepted": true},
    })
}

/// Whether any file under `dir` contains `needle` (to prove a secret never reached the disk).
pub fn dir_contains(dir: &std::path::Path, needle: &[u8]) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|entry| {
        let path = entry.path();
        if path.is_dir() {
            dir_contains(&path, needle)
        } else {
            std::fs::read(&path)
                .map(|bytes| bytes.windows(needle.len()).any(|w| w == needle))
                .unwrap_or(false)
        }
    })
}

/// Where test servers run JavaScript: in a worker process of the `toolhost` binary, as
/// `toolhost serve` does, unless `TOOLHOST_TEST_SANDBOX=in-process`. One worker, not the
/// server's default two: each starts a runtime of its own, and the suite starts many servers
/// at once (the sandbox crate's tests cover several workers).
pub fn sandbox_isolation() -> sandbox::Isolation {
    if std::env::var("TOOLHOST_TEST_SANDBOX").as_deref() == Ok("in-process") {
        return sandbox::Isolation::InProcess;
    }
    sandbox::Isolation::Workers(sandbox::WorkerOptions {
        command: sandbox::WorkerCommand {
            program: env!("CARGO_BIN_EXE_toolhost").into(),
            args: vec!["sandbox-worker".to_owned()],
            log_filter: "warn".to_owned(),
        },
        count: 1,
        recycle_after_dropped: sandbox::WorkerOptions::DEFAULT_RECYCLE_AFTER_DROPPED,
    })
}
