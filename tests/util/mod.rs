//! Shared helpers for integration tests: a real server on an ephemeral port with a temp data dir.

#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;

use reqwest::StatusCode;
use serde_json::Value;
use tokio::sync::oneshot;
use toolhost::config::Config;
use toolhost::server::Server;

pub const ADMIN_TOKEN: &str = "test-admin-token";

pub struct TestServer {
    pub base: String,
    pub client: reqwest::Client,
    pub data_dir: PathBuf,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// Starts a server whose config `adjust` may change (limits, seed dir, dev flags).
    pub async fn start_with(adjust: impl FnOnce(&mut Config)) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config = Config::new(dir.path().join("data"));
        config.addr = "127.0.0.1:0".parse().unwrap();
        config.admin_token = Some(ADMIN_TOKEN.to_string());
        adjust(&mut config);
        let data_dir = config.data_dir.clone();
        let server = Server::bind(config).await.expect("server starts");
        let base = format!("http://{}", server.local_addr());
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

    /// Stops accepting, waits for in-flight requests and the store flush.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(handle) = self.handle.take() {
            handle.await.expect("server task");
        }
    }
}

/// Status and JSON body (`Value::Null` for an empty or non-JSON body).
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
