//! The [`Host`] trait: what the server provides to handlers (storage and outbound HTTP).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::HostError;

/// A boxed future returned by [`Host`] methods; it runs on the isolate's thread.
pub type HostFuture<T> = Pin<Box<dyn Future<Output = Result<T, HostError>> + Send + 'static>>;

/// One key-value pair of a [`KvPage`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KvEntry {
    /// The key, without any endpoint prefix.
    pub key: String,
    /// The stored JSON value.
    pub value: serde_json::Value,
}

/// A page of `kv_list`; `cursor` is `Some` when more entries follow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KvPage {
    /// Entries in key order.
    pub entries: Vec<KvEntry>,
    /// Opaque continuation token for the next page.
    pub cursor: Option<String>,
}

/// One file of `files_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Normalized path relative to the endpoint's file area.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

/// One outbound request of a handler's `fetch`, checked by the sandbox (capability, URL shape,
/// headers, body size) and again by the server for a worker's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchRequest {
    /// An HTTP method token, upper-cased for the standard ones (`GET`, `POST`, `PATCH`, …).
    pub method: String,
    /// An absolute http(s) URL without credentials.
    pub url: String,
    /// Header names and values, in order; none of the names the client owns.
    pub headers: Vec<(String, String)>,
    /// The body, already buffered (at most the configured request body size).
    #[serde(with = "crate::process::host_ops::base64_opt_bytes")]
    pub body: Option<Vec<u8>>,
    /// Follow redirects (each hop checked like the first); `false`: answer the 3xx itself.
    pub follow_redirects: bool,
    /// How long the request and the reading of its body may take in all.
    pub timeout: Duration,
    /// Largest body the response may have; past it reading fails with `response_too_large`.
    pub max_response_bytes: usize,
}

/// The head of a `fetch` response; its body is read with [`Host::fetch_read`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchHead {
    /// The handle of the body, valid for the endpoint that started the request only.
    pub id: u64,
    /// The HTTP status.
    pub status: u16,
    /// The status's reason phrase.
    pub status_text: String,
    /// Response headers, in order.
    pub headers: Vec<(String, String)>,
    /// The URL that answered, after redirects.
    pub url: String,
    /// Whether a redirect was followed.
    pub redirected: bool,
}

/// Implemented by the server (persistent, per-endpoint storage and the SSRF-guarded HTTP client).
///
/// The sandbox has checked the capability and validated sizes and paths before calling any of
/// these; `endpoint` is always the slug of the invoking endpoint, never chosen by the handler.
pub trait Host: Send + Sync + 'static {
    /// Reads a key; `None` when absent or expired.
    fn kv_get(&self, endpoint: &str, key: &str) -> HostFuture<Option<serde_json::Value>>;
    /// Stores a value, optionally expiring after `ttl_seconds`.
    fn kv_set(
        &self,
        endpoint: &str,
        key: &str,
        value: serde_json::Value,
        ttl_seconds: Option<u64>,
    ) -> HostFuture<()>;
    /// Deletes a key; `true` when it existed.
    fn kv_delete(&self, endpoint: &str, key: &str) -> HostFuture<bool>;
    /// Lists keys starting with `prefix`, at most `limit`, resuming after `cursor`.
    fn kv_list(
        &self,
        endpoint: &str,
        prefix: &str,
        limit: usize,
        cursor: Option<String>,
    ) -> HostFuture<KvPage>;
    /// Reads a file; `None` when absent.
    fn files_read(&self, endpoint: &str, path: &str) -> HostFuture<Option<Vec<u8>>>;
    /// Creates or replaces a file.
    fn files_write(&self, endpoint: &str, path: &str, data: Vec<u8>) -> HostFuture<()>;
    /// Lists files whose path starts with `prefix`.
    fn files_list(&self, endpoint: &str, prefix: &str) -> HostFuture<Vec<FileEntry>>;
    /// Deletes a file; `true` when it existed.
    fn files_delete(&self, endpoint: &str, path: &str) -> HostFuture<bool>;
    /// GETs `url` and parses the body as JSON.
    fn http_get_json(
        &self,
        endpoint: &str,
        url: &str,
        headers: Vec<(String, String)>,
        timeout: Duration,
    ) -> HostFuture<serde_json::Value>;
    /// Sends a `fetch` request through the SSRF guard, limited to the endpoint's allowed hosts,
    /// and answers once the response head is there; the body stays with the host until read.
    fn fetch_start(&self, endpoint: &str, request: FetchRequest) -> HostFuture<FetchHead>;
    /// The next chunk of a response body (at most [`MAX_FETCH_CHUNK_BYTES`]), `None` at its
    /// end. Fails with `response_too_large` past the request's cap and `timeout` past its time.
    fn fetch_read(&self, endpoint: &str, id: u64) -> HostFuture<Option<Vec<u8>>>;
    /// Drops a response body not read to its end; unknown ids are ignored. Takes effect when
    /// called, not when the future is polled: callers may drop the future.
    fn fetch_cancel(&self, endpoint: &str, id: u64) -> HostFuture<()>;
}

/// Largest chunk [`Host::fetch_read`] answers with, so one chunk is one modest frame.
pub const MAX_FETCH_CHUNK_BYTES: usize = 64 * 1024;
