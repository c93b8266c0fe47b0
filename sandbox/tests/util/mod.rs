//! Shared helpers for the sandbox integration tests: an in-memory [`Host`] and shortcuts for
//! building endpoints and invoking them.

#![allow(dead_code, unreachable_pub)] // each test binary uses a different subset

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sandbox::{
    Capabilities, EndpointCode, FetchHead, FetchRequest, FileEntry, HandlerResponse, Host,
    HostAnswer, HostError, HostFuture, HostOp, Invocation, InvocationReport, KvAtomic, KvEntry,
    KvMutation, KvPage, KvValue, KvVersioned, Limits, Pool, PoolConfig, Sandbox, SandboxError,
    WorkerCommand, WorkerOptions,
};
use serde_json::{json, Value};

/// (endpoint, key or path).
type Scoped = (String, String);

/// One `http_get_json` call: endpoint, url, headers, timeout.
pub type HttpCall = (String, String, Vec<(String, String)>, Duration);

/// A body of [`MemoryHost::fetch_start`]: its endpoint and the chunks still to send, last
/// first (`None`: endless).
pub type OpenBody = (String, Option<Vec<Vec<u8>>>);

/// Storage keyed by (endpoint, key) so tests can check that endpoints never see each other's data.
#[derive(Default)]
pub struct MemoryHost {
    pub kv: Mutex<BTreeMap<Scoped, (Value, Option<u64>)>>,
    /// The versionstamp number of each kv entry (the server keeps one per endpoint; one
    /// counter for all is enough to tell commits apart here). Locked after `kv`.
    pub kv_versions: Mutex<BTreeMap<Scoped, u64>>,
    pub kv_seq: AtomicU64,
    pub files: Mutex<BTreeMap<Scoped, Vec<u8>>>,
    pub http_calls: Mutex<Vec<HttpCall>>,
    /// Every `fetch_start`, as the host got it.
    pub fetches: Mutex<Vec<(String, FetchRequest)>>,
    /// Bodies open on this host, by id.
    pub bodies: Mutex<HashMap<u64, OpenBody>>,
    /// Ids `fetch_cancel` was called with.
    pub cancelled: Mutex<Vec<u64>>,
    pub next_body: std::sync::atomic::AtomicU64,
    /// `kv_get`s of a `block-ms:<n>` key that have returned (see [`MemoryHost::kv_get`]).
    pub unblocked: AtomicUsize,
}

fn ready<T: Send + 'static>(value: Result<T, HostError>) -> HostFuture<T> {
    Box::pin(async move { value })
}

fn versionstamp(seq: u64) -> String {
    format!("{seq:020x}")
}

impl MemoryHost {
    /// Records that `key` was just written by a new commit; its versionstamp.
    fn stamp(&self, scoped: &Scoped) -> u64 {
        let seq = self.kv_seq.fetch_add(1, Ordering::SeqCst) + 1;
        self.kv_versions.lock().unwrap().insert(scoped.clone(), seq);
        seq
    }
}

impl Host for MemoryHost {
    /// Keyed by slug, so tests can check that endpoints never see each other's data.
    fn call(&self, endpoint: &EndpointCode, _call: u64, op: HostOp) -> HostFuture<HostAnswer> {
        let e = endpoint.slug.as_str();
        let done = |_: ()| HostAnswer::Done;
        match op {
            HostOp::KvGet { key } => HostAnswer::later(self.kv_get(e, &key), |value| {
                HostAnswer::Value(value.as_ref().map(KvValue::of))
            }),
            HostOp::KvGetEntry { key } => {
                HostAnswer::later(self.kv_get_entry(e, &key), HostAnswer::Entry)
            }
            HostOp::KvCommit { atomic } => {
                HostAnswer::later(self.kv_commit(e, atomic), HostAnswer::Committed)
            }
            HostOp::KvSet {
                key,
                value,
                ttl_seconds,
            } => HostAnswer::later(self.kv_set(e, &key, value, ttl_seconds), done),
            HostOp::KvDelete { key } => {
                HostAnswer::later(self.kv_delete(e, &key), HostAnswer::Existed)
            }
            HostOp::KvList {
                prefix,
                limit,
                cursor,
            } => HostAnswer::later(self.kv_list(e, &prefix, limit, cursor), HostAnswer::Page),
            HostOp::FilesRead { path } => {
                HostAnswer::later(self.files_read(e, &path), HostAnswer::File)
            }
            HostOp::FilesWrite { path, data } => {
                HostAnswer::later(self.files_write(e, &path, data), done)
            }
            HostOp::FilesList { prefix } => {
                HostAnswer::later(self.files_list(e, &prefix), HostAnswer::Files)
            }
            HostOp::FilesDelete { path } => {
                HostAnswer::later(self.files_delete(e, &path), HostAnswer::Existed)
            }
            HostOp::HttpGetJson {
                url,
                headers,
                timeout,
            } => HostAnswer::later(
                self.http_get_json(e, &url, headers, timeout),
                HostAnswer::Json,
            ),
            HostOp::FetchStart { request } => {
                HostAnswer::later(self.fetch_start(e, request), HostAnswer::Head)
            }
            HostOp::FetchRead { id } => {
                HostAnswer::later(self.fetch_read(e, id), HostAnswer::Chunk)
            }
            HostOp::FetchCancel { id } => HostAnswer::later(self.fetch_cancel(e, id), done),
        }
    }
}

impl MemoryHost {
    /// The key `panic-now` makes this method panic, like a buggy server would. A key
    /// `block-ms:<n>` blocks the calling isolate thread in native code for `n` ms before it
    /// answers, like an engine that does not honour `terminate_execution` (busy in garbage
    /// collection, or in a long native operation): the watchdog cannot stop it.
    fn kv_get(&self, endpoint: &str, key: &str) -> HostFuture<Option<Value>> {
        assert_ne!(key, "panic-now", "test host panics on request");
        if let Some(ms) = key.strip_prefix("block-ms:") {
            std::thread::sleep(Duration::from_millis(ms.parse().expect("block-ms:<n>")));
            self.unblocked.fetch_add(1, Ordering::SeqCst);
        }
        if let Some(ms) = key.strip_prefix("sleep-ms:") {
            // Answers later without blocking anything: an operation that stays in progress.
            let ms = ms.parse().expect("sleep-ms:<n>");
            return Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(None)
            });
        }
        let kv = self.kv.lock().unwrap();
        ready(Ok(kv
            .get(&(endpoint.to_owned(), key.to_owned()))
            .map(|(v, _)| v.clone())))
    }

    fn kv_set(&self, endpoint: &str, key: &str, value: Value, ttl: Option<u64>) -> HostFuture<()> {
        if key == "quota" {
            return ready(Err(HostError::new("quota_exceeded", "kv quota exceeded")));
        }
        let scoped = (endpoint.to_owned(), key.to_owned());
        let mut kv = self.kv.lock().unwrap();
        self.stamp(&scoped);
        kv.insert(scoped, (value, ttl));
        ready(Ok(()))
    }

    fn kv_get_entry(&self, endpoint: &str, key: &str) -> HostFuture<Option<KvVersioned>> {
        let scoped = (endpoint.to_owned(), key.to_owned());
        let kv = self.kv.lock().unwrap();
        let versions = self.kv_versions.lock().unwrap();
        ready(Ok(kv.get(&scoped).map(|(value, _)| KvVersioned {
            value: KvValue::of(value),
            versionstamp: versionstamp(versions.get(&scoped).copied().unwrap_or(0)),
        })))
    }

    /// Checks and mutations under one lock; a `sum` over a non-integer fails the commit.
    fn kv_commit(&self, endpoint: &str, atomic: KvAtomic) -> HostFuture<Option<String>> {
        let scoped = |key: &str| (endpoint.to_owned(), key.to_owned());
        let mut kv = self.kv.lock().unwrap();
        let mut versions = self.kv_versions.lock().unwrap();
        for check in &atomic.checks {
            let key = scoped(&check.key);
            let current = kv
                .contains_key(&key)
                .then(|| versionstamp(versions.get(&key).copied().unwrap_or(0)));
            if current != check.versionstamp {
                return ready(Ok(None));
            }
        }
        let mut next = kv.clone();
        for mutation in &atomic.mutations {
            let key = scoped(mutation.key());
            match mutation {
                KvMutation::Set {
                    value, ttl_seconds, ..
                } => {
                    next.insert(key, (value.clone(), *ttl_seconds));
                }
                KvMutation::Delete { .. } => {
                    next.remove(&key);
                }
                KvMutation::Sum { n, .. } => {
                    let old = next.get(&key).map_or(Some(0), |(v, _)| v.as_i64());
                    let Some(old) = old else {
                        return ready(Err(HostError::new("invalid_sum", "not an integer")));
                    };
                    next.insert(key, (Value::from(old + n), None));
                }
            }
        }
        let seq = self.kv_seq.fetch_add(1, Ordering::SeqCst) + 1;
        for mutation in &atomic.mutations {
            let key = scoped(mutation.key());
            if next.contains_key(&key) {
                versions.insert(key, seq);
            } else {
                versions.remove(&key);
            }
        }
        *kv = next;
        ready(Ok(Some(versionstamp(seq))))
    }

    fn kv_delete(&self, endpoint: &str, key: &str) -> HostFuture<bool> {
        let scoped = (endpoint.to_owned(), key.to_owned());
        let mut kv = self.kv.lock().unwrap();
        self.kv_versions.lock().unwrap().remove(&scoped);
        ready(Ok(kv.remove(&scoped).is_some()))
    }

    fn kv_list(
        &self,
        endpoint: &str,
        prefix: &str,
        limit: usize,
        cursor: Option<String>,
    ) -> HostFuture<KvPage> {
        let kv = self.kv.lock().unwrap();
        let mut entries: Vec<KvEntry> = kv
            .iter()
            .filter(|((e, k), _)| e == endpoint && k.starts_with(prefix))
            .filter(|((_, k), _)| cursor.as_ref().is_none_or(|c| k > c))
            .map(|((_, k), (v, _))| KvEntry {
                key: k.clone(),
                value: KvValue::of(v),
            })
            .take(limit + 1)
            .collect();
        let cursor = if entries.len() > limit {
            entries.truncate(limit);
            entries.last().map(|e| e.key.clone())
        } else {
            None
        };
        ready(Ok(KvPage { entries, cursor }))
    }

    fn files_read(&self, endpoint: &str, path: &str) -> HostFuture<Option<Vec<u8>>> {
        let files = self.files.lock().unwrap();
        ready(Ok(files
            .get(&(endpoint.to_owned(), path.to_owned()))
            .cloned()))
    }

    fn files_write(&self, endpoint: &str, path: &str, data: Vec<u8>) -> HostFuture<()> {
        self.files
            .lock()
            .unwrap()
            .insert((endpoint.to_owned(), path.to_owned()), data);
        ready(Ok(()))
    }

    fn files_list(&self, endpoint: &str, prefix: &str) -> HostFuture<Vec<FileEntry>> {
        let files = self.files.lock().unwrap();
        let list = files
            .iter()
            .filter(|((e, p), _)| e == endpoint && p.starts_with(prefix))
            .map(|((_, p), data)| FileEntry {
                path: p.clone(),
                size: data.len() as u64,
            })
            .collect();
        ready(Ok(list))
    }

    fn files_delete(&self, endpoint: &str, path: &str) -> HostFuture<bool> {
        let removed = self
            .files
            .lock()
            .unwrap()
            .remove(&(endpoint.to_owned(), path.to_owned()))
            .is_some();
        ready(Ok(removed))
    }

    /// `https://api.test/...` answers with an echo; `https://slow.test/...` answers after
    /// 300 ms; `https://hang.test/...` never answers; `https://panic.test/...` panics while
    /// polled; anything else is refused like the server's SSRF guard would.
    fn http_get_json(
        &self,
        endpoint: &str,
        url: &str,
        headers: Vec<(String, String)>,
        timeout: Duration,
    ) -> HostFuture<Value> {
        self.http_calls.lock().unwrap().push((
            endpoint.to_owned(),
            url.to_owned(),
            headers.clone(),
            timeout,
        ));
        if url.starts_with("https://hang.test/") {
            return Box::pin(std::future::pending());
        }
        if url.starts_with("https://panic.test/") {
            return Box::pin(async { panic!("test host panics while polled") });
        }
        if url.starts_with("https://slow.test/") {
            return Box::pin(async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                Ok(json!("slow"))
            });
        }
        if url.starts_with("https://api.test/") {
            let headers: HashMap<_, _> = headers.into_iter().collect();
            return ready(Ok(json!({ "url": url, "headers": headers })));
        }
        ready(Err(HostError::new(
            "ssrf_refused",
            "destination not allowed",
        )))
    }

    /// `https://api.test/...` answers 200 with a JSON echo of the request in chunks of 5
    /// bytes; `https://endless.test/` answers 200 with a body that never ends (64 KiB
    /// chunks); `https://moved.test/` answers 302; `https://hang.test/` never answers; anything
    /// else is refused like the server's SSRF guard would.
    fn fetch_start(&self, endpoint: &str, request: FetchRequest) -> HostFuture<FetchHead> {
        self.fetches
            .lock()
            .unwrap()
            .push((endpoint.to_owned(), request.clone()));
        let (status, chunks) = if request.url.starts_with("https://api.test/") {
            let echo = json!({
                "method": request.method,
                "url": request.url,
                "headers": request.headers,
                "body": request.body.as_deref().map(String::from_utf8_lossy),
            });
            let bytes = serde_json::to_vec(&echo).unwrap();
            (200, Some(bytes.chunks(5).map(<[u8]>::to_vec).collect()))
        } else if request.url.starts_with("https://endless.test/") {
            (200, None)
        } else if request.url.starts_with("https://moved.test/") {
            (302, Some(Vec::new()))
        } else if request.url.starts_with("https://hang.test/") {
            return Box::pin(std::future::pending());
        } else {
            return ready(Err(HostError::new(
                "ssrf_refused",
                "destination not allowed",
            )));
        };
        let mut bodies = self.bodies.lock().unwrap();
        let id = self.next_body.fetch_add(1, Ordering::SeqCst) + 1;
        let chunks = chunks.map(|c: Vec<Vec<u8>>| c.into_iter().rev().collect());
        bodies.insert(id, (endpoint.to_owned(), chunks));
        ready(Ok(FetchHead {
            id,
            status,
            status_text: if status == 200 { "OK" } else { "Found" }.to_owned(),
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
            url: request.url,
            redirected: false,
        }))
    }

    fn fetch_read(&self, endpoint: &str, id: u64) -> HostFuture<Option<Vec<u8>>> {
        let mut bodies = self.bodies.lock().unwrap();
        let Some((owner, chunks)) = bodies.get_mut(&id).filter(|(e, _)| e == endpoint) else {
            return ready(Err(HostError::new("invalid_argument", "no such response")));
        };
        assert_eq!(owner, endpoint);
        let chunk = match chunks {
            None => Some(vec![b'x'; 64 * 1024]),
            Some(chunks) => chunks.pop(),
        };
        if chunk.is_none() {
            bodies.remove(&id);
        }
        ready(Ok(chunk))
    }

    fn fetch_cancel(&self, endpoint: &str, id: u64) -> HostFuture<()> {
        let mut bodies = self.bodies.lock().unwrap();
        if bodies.get(&id).is_some_and(|(e, _)| e == endpoint) {
            bodies.remove(&id);
            self.cancelled.lock().unwrap().push(id);
        }
        ready(Ok(()))
    }
}

/// Limits small enough to keep hostile tests quick.
pub fn test_config() -> PoolConfig {
    PoolConfig {
        default_limits: Limits {
            heap_bytes: 32 * 1024 * 1024,
            timeout: Duration::from_millis(1500),
        },
        ..PoolConfig::default()
    }
}

pub fn pool_with(config: PoolConfig) -> (Pool, Arc<MemoryHost>) {
    let host = Arc::new(MemoryHost::default());
    (Pool::new(config, host.clone()), host)
}

pub fn pool() -> (Pool, Arc<MemoryHost>) {
    pool_with(test_config())
}

pub fn all_caps() -> Capabilities {
    Capabilities {
        kv: true,
        files: true,
        http_get_json: true,
        fetch: true,
        logs: true,
    }
}

pub fn endpoint(slug: &str, source: &str) -> EndpointCode {
    EndpointCode {
        id: format!("ep-{slug}"),
        slug: slug.to_owned(),
        version: "v1".to_owned(),
        source: source.to_owned(),
        capabilities: Capabilities::default(),
        env: BTreeMap::new(),
        limits: None,
        owner: None,
    }
}

pub fn granted(slug: &str, source: &str) -> EndpointCode {
    EndpointCode {
        capabilities: all_caps(),
        ..endpoint(slug, source)
    }
}

/// The `req` of a call of endpoint `test` with `input`, as the server builds it.
pub fn request_value(input: Value) -> Value {
    json!({
        "input": input,
        "method": "POST",
        "query": {},
        "headers": {},
        "endpoint": { "slug": "test" },
        "url": "http://127.0.0.1/tools/test",
        "requestId": "req-1",
        "payment": null,
    })
}

/// A call whose `req` is `request`.
pub fn invocation_of(request: &Value) -> Invocation {
    Invocation {
        request: serde_json::value::to_raw_value(request).expect("a request serializes"),
        request_id: "req-1".to_owned(),
        load_only: false,
    }
}

pub fn request(input: Value) -> Invocation {
    invocation_of(&request_value(input))
}

pub async fn invoke(pool: &Pool, code: &EndpointCode, input: Value) -> InvocationReport {
    pool.invoke(code, request(input)).await
}

/// The body of a successful invocation, or a panic showing the error.
pub async fn body(pool: &Pool, code: &EndpointCode, input: Value) -> Value {
    ok(invoke(pool, code, input).await).body
}

pub fn ok(report: InvocationReport) -> HandlerResponse {
    match report.result {
        Ok(response) => response,
        Err(err) => panic!("expected success, got {err:?} (logs: {:?})", report.logs),
    }
}

pub fn err(report: InvocationReport) -> SandboxError {
    match report.result {
        Ok(response) => panic!("expected an error, got {response:?}"),
        Err(err) => err,
    }
}

pub const ECHO: &str = "export default async function (req, ctx) { return { echo: req.input }; }";

/// A well-behaved endpoint must still answer after whatever a neighbour did.
pub async fn assert_neighbour_ok(pool: &Pool) {
    let neighbour = endpoint("neighbour", ECHO);
    let answer = body(pool, &neighbour, json!({ "n": 42 })).await;
    assert_eq!(answer, json!({ "echo": { "n": 42 } }));
}

/// How the tests start a worker process: this crate's `sandbox-worker` binary.
pub fn worker_command() -> WorkerCommand {
    WorkerCommand {
        program: env!("CARGO_BIN_EXE_sandbox-worker").into(),
        args: Vec::new(),
        log_filter: "warn".into(),
    }
}

/// The two places handlers run, configured alike: on threads of this process, and in one
/// worker process; each with its own in-memory host.
pub fn both_modes(config: PoolConfig) -> Vec<(&'static str, Sandbox, Arc<MemoryHost>)> {
    let workers = sandbox::Isolation::Workers(WorkerOptions {
        command: worker_command(),
        count: 1,
        recycle_after_dropped: WorkerOptions::DEFAULT_RECYCLE_AFTER_DROPPED,
    });
    [
        ("in-process", sandbox::Isolation::InProcess),
        ("worker", workers),
    ]
    .into_iter()
    .map(|(mode, isolation)| {
        let host = Arc::new(MemoryHost::default());
        let sandbox = Sandbox::new(config.clone(), host.clone(), isolation);
        (mode, sandbox, host)
    })
    .collect()
}

/// A `/proc/<pid>/status` figure in bytes (`VmRSS:`, `VmHWM:`), of `pid` ("self" for this
/// process).
pub fn resident(pid: &str, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"));
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}
