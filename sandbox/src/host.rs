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
}
