//! The [`Host`] trait: what the server provides to handlers (storage and outbound HTTP).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{EndpointCode, HostError};

/// A boxed future returned by [`Host`] methods; it runs on the isolate's thread.
pub type HostFuture<T> = Pin<Box<dyn Future<Output = Result<T, HostError>> + Send + 'static>>;

/// A stored kv value as its JSON text. Read answers carry it as it was stored: the server
/// neither parses it into a tree nor encodes it again for the worker (it is written into the
/// frame as it is), and the isolate reads it with `JSON.parse`. A `kv.list` page of large
/// values cost the server most of its time in that re-encoding (bench/RESULTS.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct KvValue(Box<serde_json::value::RawValue>);

impl KvValue {
    /// A value whose JSON text is already checked (read back from the store).
    pub fn from_raw(raw: Box<serde_json::value::RawValue>) -> Self {
        KvValue(raw)
    }

    /// The JSON text of `value`.
    pub fn of(value: &serde_json::Value) -> Self {
        KvValue(serde_json::value::to_raw_value(value).expect("a JSON value serializes"))
    }

    pub fn text(&self) -> &str {
        self.0.get()
    }

    /// The text, given up without a copy.
    pub fn into_text(self) -> String {
        String::from(Box::<str>::from(self.0))
    }

    /// The value parsed (for tests and checks; the call path passes the text).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_str(self.text()).expect("a checked JSON text parses")
    }
}

impl PartialEq for KvValue {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

/// One key-value pair of a [`KvPage`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KvEntry {
    /// The key, without any endpoint prefix.
    pub key: String,
    /// The stored JSON value.
    pub value: KvValue,
}

/// A page of `kv_list`; `cursor` is `Some` when more entries follow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KvPage {
    /// Entries in key order.
    pub entries: Vec<KvEntry>,
    /// Opaque continuation token for the next page.
    pub cursor: Option<String>,
}

/// A live kv entry with its versionstamp, as `ctx.kv.getEntry` gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KvVersioned {
    /// The stored JSON value.
    pub value: KvValue,
    /// The versionstamp of the commit that last wrote the entry (see [`KvAtomic`]).
    pub versionstamp: String,
}

/// One `ctx.kv.atomic()`: every check must hold, then every mutation lands, in order, all in
/// one commit; or nothing is written.
///
/// A versionstamp is 20 lowercase hex digits naming a commit of the endpoint's kv: each commit
/// (a plain `set` or `delete` too) takes the next one, so they are unique and increase in commit
/// order per endpoint, and compare as strings. [`HostOp::KvCommit`] answers the new one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KvAtomic {
    /// Preconditions on the state before the commit.
    pub checks: Vec<KvCheck>,
    /// Changes applied in order when every check holds.
    pub mutations: Vec<KvMutation>,
}

/// A precondition of a [`KvAtomic`]: the key's current versionstamp is `versionstamp` (`None`:
/// the key is absent or expired).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KvCheck {
    /// The key checked.
    pub key: String,
    /// The versionstamp it must have, or `None` for "absent".
    pub versionstamp: Option<String>,
}

/// A change of a [`KvAtomic`], as the glue sends it (`{"type":"set",...}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum KvMutation {
    /// Stores a value, optionally expiring after `ttl_seconds` (as `ctx.kv.set`).
    Set {
        /// The key written.
        key: String,
        /// The JSON value.
        value: serde_json::Value,
        /// Seconds until the entry expires; `None`: never.
        #[serde(
            rename = "ttlSeconds",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        ttl_seconds: Option<u64>,
    },
    /// Removes a key (nothing when absent).
    Delete {
        /// The key removed.
        key: String,
    },
    /// Adds `n` to the integer stored at `key` (0 when absent or expired). Both and the result
    /// are integers within ±[`MAX_SAFE_INTEGER`], so every value is exact in JavaScript.
    Sum {
        /// The counter's key.
        key: String,
        /// The amount added (negative subtracts).
        n: i64,
    },
}

impl KvMutation {
    /// The key the mutation writes.
    pub fn key(&self) -> &str {
        match self {
            KvMutation::Set { key, .. }
            | KvMutation::Delete { key }
            | KvMutation::Sum { key, .. } => key,
        }
    }
}

/// The largest integer a JavaScript number holds exactly (`Number.MAX_SAFE_INTEGER`, 2^53 - 1):
/// the range of `sum` amounts and results.
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Whether `text` has the shape of a versionstamp: 20 lowercase hex digits.
pub fn is_versionstamp(text: &str) -> bool {
    text.len() == 20 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
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

/// The head of a `fetch` response; its body is read with [`HostOp::FetchRead`].
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

/// One `ctx` operation of a handler: the whole interface between the sandbox and the server,
/// declared once. A new op is its JS glue, its `#[op2]`, one variant here (with its
/// [`HostAnswer`]) and one match arm in each [`Host`].
#[derive(Debug, Serialize, Deserialize)]
pub enum HostOp {
    /// Reads a key; answers [`HostAnswer::Value`], `None` when absent or expired.
    KvGet {
        /// The key, without any endpoint prefix.
        key: String,
    },
    /// Reads a key with its versionstamp; answers [`HostAnswer::Entry`].
    KvGetEntry {
        /// The key.
        key: String,
    },
    /// Commits all-or-nothing; answers [`HostAnswer::Committed`]: the commit's versionstamp
    /// when every check held, `None` when one did not (nothing written).
    KvCommit {
        /// The checks and mutations.
        atomic: KvAtomic,
    },
    /// Stores a value; answers [`HostAnswer::Done`].
    KvSet {
        /// The key.
        key: String,
        /// The JSON value.
        value: serde_json::Value,
        /// Seconds until it expires; `None`: never.
        ttl_seconds: Option<u64>,
    },
    /// Deletes a key; answers [`HostAnswer::Existed`].
    KvDelete {
        /// The key.
        key: String,
    },
    /// Lists keys starting with `prefix`, at most `limit`, resuming after `cursor`; answers
    /// [`HostAnswer::Page`].
    KvList {
        /// The key prefix.
        prefix: String,
        /// The most entries the page holds.
        limit: usize,
        /// Where the previous page stopped.
        cursor: Option<String>,
    },
    /// Reads a file; answers [`HostAnswer::File`], `None` when absent.
    FilesRead {
        /// The normalized path.
        path: String,
    },
    /// Creates or replaces a file; answers [`HostAnswer::Done`].
    FilesWrite {
        /// The normalized path.
        path: String,
        /// The file's bytes.
        #[serde(with = "crate::process::host_ops::base64_bytes")]
        data: Vec<u8>,
    },
    /// Lists files whose path starts with `prefix`; answers [`HostAnswer::Files`].
    FilesList {
        /// The normalized prefix.
        prefix: String,
    },
    /// Deletes a file; answers [`HostAnswer::Existed`].
    FilesDelete {
        /// The normalized path.
        path: String,
    },
    /// GETs `url` and parses the body as JSON; answers [`HostAnswer::Json`].
    HttpGetJson {
        /// An absolute http(s) URL.
        url: String,
        /// Request headers.
        headers: Vec<(String, String)>,
        /// How long it may take.
        timeout: Duration,
    },
    /// Sends a `fetch` request through the SSRF guard, limited to the endpoint's allowed hosts;
    /// answers [`HostAnswer::Head`] once the response head is there (the body stays with the
    /// host until read).
    FetchStart {
        /// The checked request.
        request: FetchRequest,
    },
    /// The next chunk of a response body (at most [`MAX_FETCH_CHUNK_BYTES`]); answers
    /// [`HostAnswer::Chunk`], `None` at its end. Fails with `response_too_large` past the
    /// request's cap and `timeout` past its time.
    FetchRead {
        /// The body's handle ([`FetchHead::id`]).
        id: u64,
    },
    /// Drops a response body not read to its end (unknown ids are ignored); answers
    /// [`HostAnswer::Done`]. Takes effect when [`Host::call`] is called, not when its future is
    /// polled: callers may drop the future.
    FetchCancel {
        /// The body's handle.
        id: u64,
    },
}

/// What a [`HostOp`] answers; each op's documentation names its variant.
#[derive(Debug, Serialize, Deserialize)]
pub enum HostAnswer {
    /// A kv value, `None` when absent.
    Value(Option<KvValue>),
    /// A kv entry with its versionstamp, `None` when absent.
    Entry(Option<KvVersioned>),
    /// A commit's versionstamp, `None` when a check failed.
    Committed(Option<String>),
    /// Done, nothing to answer.
    Done,
    /// Whether the key or file existed.
    Existed(bool),
    /// A page of kv entries.
    Page(KvPage),
    /// A file's bytes, `None` when absent.
    File(#[serde(with = "crate::process::host_ops::base64_opt_bytes")] Option<Vec<u8>>),
    /// Files listed.
    Files(Vec<FileEntry>),
    /// A parsed JSON body.
    Json(serde_json::Value),
    /// A `fetch` response head.
    Head(FetchHead),
    /// One chunk of a response body, `None` at its end.
    Chunk(#[serde(with = "crate::process::host_ops::base64_opt_bytes")] Option<Vec<u8>>),
}

impl HostAnswer {
    /// The answer `wrap` makes of `future`'s value: how a [`Host`] answers an op from a method
    /// of its own.
    pub fn later<T: Send + 'static>(
        future: HostFuture<T>,
        wrap: fn(T) -> HostAnswer,
    ) -> HostFuture<HostAnswer> {
        Box::pin(async move { future.await.map(wrap) })
    }
}

/// Implemented by the server (persistent, per-endpoint storage and the SSRF-guarded HTTP client).
///
/// The sandbox has checked the capability and validated sizes and paths before calling; the
/// endpoint is always the code the server gave the invoking isolate, never chosen by the
/// handler: its [`EndpointCode::id`] names the endpoint's data, its
/// [`EndpointCode::owner`] whose totals it counts toward.
pub trait Host: Send + Sync + 'static {
    /// Runs one operation of `endpoint`'s handler, made during the call numbered `call` (by
    /// the pool, unique while it runs), or [`NO_CALL`] while the module loads.
    fn call(&self, endpoint: &EndpointCode, call: u64, op: HostOp) -> HostFuture<HostAnswer>;
}

/// The call number of a host operation made outside any call: by a module's top level as it
/// loads (a cold start, or a warm-up before any call).
pub const NO_CALL: u64 = 0;

/// Largest chunk a [`HostOp::FetchRead`] answers with, so one chunk is one modest frame.
pub const MAX_FETCH_CHUNK_BYTES: usize = 64 * 1024;
