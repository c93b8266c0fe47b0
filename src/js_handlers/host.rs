//! What the sandbox's ops reach on the host: per-endpoint kv and files in the store, and the
//! SSRF-guarded outbound client. The sandbox has already checked the capability and the size
//! and path rules; here live the rules that need storage: expiry, quotas and paging.

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};
use sandbox::{
    EndpointCode, FileEntry, Host, HostAnswer, HostError, HostFuture, HostOp, KvAtomic, KvEntry,
    KvMutation, KvPage, KvVersioned,
};
use serde_json::Value;

use super::fetch::{self, Bodies};
use super::slots;
use crate::catalog::Registry;
use crate::config::Quotas;
use crate::handler_data::kv::{self, Committed, KvWriters, StoredText};
use crate::handler_data::write_pace::{json_len, WritePace};
use crate::handler_data::{host_error, now_secs, read_entry, storage_error, write_counted, Space};
use crate::net::OutboundClient;
use crate::store::{HandlerSpace, Store};

/// The most bytes of stored keys and values one `ctx.kv.list` page holds: a page of the
/// largest limit over the largest values would be 64 MiB, and a handler can ask for many at
/// once. A page that stops here has a cursor, as one that stops at its limit. Reading and
/// encoding one page is one turn of the server's shared work for `ctx` operations
/// (`sandbox::limits::fair`), which other builders' operations wait for: 256 KiB keeps that
/// turn short (a flood of 1 MiB pages kept other builders' operations waiting four times as
/// long, bench/RESULTS.md).
pub(crate) const MAX_LIST_PAGE_BYTES: usize = 256 << 10;

/// Rows a `ctx.kv.list` reads from the store at a time, at most.
const LIST_SCAN_ROWS: usize = 64;

/// Rows of a `ctx.kv.list`'s first read: later reads are sized by the bytes the page has left
/// at the entries' average size so far. A first read of 64 rows of 60 KiB values could copy 3.8
/// MiB out of the store to answer a page of four (the `kv.list` flood, bench/RESULTS.md).
const LIST_FIRST_SCAN_ROWS: usize = 8;

#[derive(Clone)]
pub struct StoreHost {
    store: Arc<dyn Store>,
    outbound: OutboundClient,
    quotas: Quotas,
    /// Each builder's bytes written per second, taken before a write runs.
    pace: Arc<WritePace>,
    /// Whether an op's endpoint still exists, and its outbound host allow-list, at call time.
    catalog: Arc<Registry>,
    /// The server's runtime, where store work runs (see [`StoreHost::on_server`]).
    server: tokio::runtime::Handle,
    /// This node's kv commits, queued per endpoint.
    kv_writers: Arc<KvWriters>,
    /// Response bodies of handlers' `fetch`, until read.
    bodies: Arc<Bodies>,
}

impl StoreHost {
    pub fn new(
        store: Arc<dyn Store>,
        outbound: OutboundClient,
        quotas: Quotas,
        catalog: Arc<Registry>,
    ) -> Self {
        Self {
            store,
            outbound,
            pace: Arc::new(WritePace::new(&quotas)),
            quotas,
            catalog,
            server: tokio::runtime::Handle::current(),
            kv_writers: Arc::default(),
            bodies: Arc::default(),
        }
    }

    /// Runs `work` on the server's runtime. In-process, ops are polled by an isolate thread's
    /// own small runtime, but store engines with connections (PostgreSQL) keep them on the
    /// server's: the work is spawned there, charged to the op's builder (see
    /// `sandbox::inherit_charge`). A worker's ops are taken by the server's runtime already
    /// and run in place: what the work reads is then encoded for the worker in the same turn of
    /// the builder's share, not held while the reply waits for a turn of its own.
    fn on_server<T, F, Fut>(&self, work: F) -> HostFuture<T>
    where
        T: Send + 'static,
        F: FnOnce(StoreHost) -> Fut,
        Fut: std::future::Future<Output = Result<T, HostError>> + Send + 'static,
    {
        let work = work(self.clone());
        if !sandbox::on_isolate_thread() {
            return Box::pin(work);
        }
        let task = self.server.spawn(sandbox::inherit_charge(work));
        Box::pin(async move {
            task.await
                .unwrap_or_else(|_| Err(host_error("internal", "host task failed")))
        })
    }

    /// Waits until the scope's builder may write `bytes` ([`WritePace`]), or refuses the write.
    async fn paced(&self, scope: &Scope, bytes: u64) -> Result<(), HostError> {
        let Some(builder) = &scope.builder else {
            return Ok(());
        };
        let wait = self.pace.take(builder, bytes)?;
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        Ok(())
    }

    async fn kv_get_now(&self, scope: &Scope, key: &str) -> Result<Option<KvVersioned>, HostError> {
        let store = self.store.as_ref();
        let builder = scope.builder.as_deref();
        kv::get_entry(store, &self.quotas, &scope.id, builder, key).await
    }

    /// Commits in the endpoint's turn among this node's commits (see [`KvWriters`]).
    async fn kv_commit_now(&self, scope: &Scope, atomic: KvAtomic) -> Result<Committed, HostError> {
        let bytes = atomic.mutations.iter().map(written_bytes).sum();
        self.paced(scope, bytes).await?;
        let store = self.store.as_ref();
        let builder = scope.builder.as_deref();
        let writers = self.kv_writers.as_ref();
        kv::commit(store, &self.quotas, &scope.id, builder, &atomic, writers).await
    }

    /// One plain `set` or `delete`: an atomic of one mutation. Whether its key was live.
    async fn kv_write_now(&self, scope: &Scope, mutation: KvMutation) -> Result<bool, HostError> {
        let atomic = KvAtomic {
            checks: Vec::new(),
            mutations: vec![mutation],
        };
        match self.kv_commit_now(scope, atomic).await? {
            Committed::Done { existed, .. } => Ok(existed.first().copied().unwrap_or(false)),
            Committed::CheckFailed => {
                Err(host_error("internal", "a commit without checks failed one"))
            }
        }
    }

    /// A page of at most `limit` live entries and [`MAX_LIST_PAGE_BYTES`] of stored keys and
    /// values (at least one entry), read from the store [`LIST_SCAN_ROWS`] rows at a time, so
    /// neither the page nor the reading of it grows with the limit times the value size.
    async fn kv_list_now(
        &self,
        scope: &Scope,
        prefix: &str,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<KvPage, HostError> {
        let endpoint = scope.id.as_str();
        let mut after = cursor;
        let now = now_secs();
        let mut entries = Vec::new();
        let mut page_bytes = 0usize;
        let (mut read_rows, mut read_bytes) = (0usize, 0usize);
        let mut rows = (limit + 1).min(LIST_FIRST_SCAN_ROWS);
        loop {
            let page = self
                .store
                .handler_entries_under(HandlerSpace::Kv, endpoint, prefix, after.as_deref(), rows)
                .await
                .map_err(storage_error)?;
            let exhausted = page.len() < rows;
            for (key, bytes) in page {
                after = Some(key.clone());
                let size = key.len() + bytes.len();
                (read_rows, read_bytes) = (read_rows + 1, read_bytes + size);
                let Ok(Some(stored)) = StoredText::live(&bytes, now) else {
                    continue;
                };
                if entries.len() == limit
                    || (!entries.is_empty() && page_bytes + size > MAX_LIST_PAGE_BYTES)
                {
                    // One more live entry exists: the page ends at the previous one.
                    let last: &KvEntry = entries.last().expect("limit > 0");
                    return Ok(KvPage {
                        cursor: Some(last.key.clone()),
                        entries,
                    });
                }
                page_bytes += size;
                entries.push(KvEntry {
                    key,
                    value: stored.value(),
                });
            }
            if exhausted {
                return Ok(KvPage {
                    entries,
                    cursor: None,
                });
            }
            // Enough rows for what the page still holds (one past it, to know whether a cursor
            // is due), at the size of the rows read so far.
            let average = read_bytes.div_ceil(read_rows.max(1)).max(1);
            let fits = MAX_LIST_PAGE_BYTES.saturating_sub(page_bytes) / average + 1;
            rows = (limit + 1 - entries.len()).min(fits).min(LIST_SCAN_ROWS);
        }
    }

    /// Writes (`Some`) or removes (`None`) one file, counted against the endpoint's quotas and
    /// its owning builder's totals.
    async fn write_file(
        &self,
        scope: &Scope,
        path: &str,
        data: Option<Vec<u8>>,
    ) -> Result<bool, HostError> {
        let bytes = path.len() + data.as_ref().map_or(0, Vec::len);
        self.paced(scope, bytes as u64).await?;
        let store = self.store.as_ref();
        let builder = scope.builder.as_deref();
        write_counted(
            store,
            &self.quotas,
            Space::Files,
            &scope.id,
            builder,
            path,
            data,
        )
        .await
    }

    async fn files_list_now(
        &self,
        scope: &Scope,
        prefix: &str,
    ) -> Result<Vec<FileEntry>, HostError> {
        let endpoint = scope.id.as_str();
        let limit = self.quotas.files as usize;
        let entries = self
            .store
            .handler_entries_under(HandlerSpace::Files, endpoint, prefix, None, limit)
            .await
            .map_err(storage_error)?;
        Ok(entries
            .into_iter()
            .map(|(path, bytes)| FileEntry {
                path,
                size: bytes.len() as u64,
            })
            .collect())
    }

    /// Runs `op` of the endpoint `scope` names, on the server's runtime.
    fn run(
        &self,
        scope: Scope,
        allowed_hosts: Option<Vec<String>>,
        op: HostOp,
    ) -> HostFuture<HostAnswer> {
        match op {
            HostOp::KvGet { key } => self.on_server(|host| async move {
                let entry = host.kv_get_now(&scope, &key).await?;
                Ok(HostAnswer::Value(entry.map(|e| e.value)))
            }),
            HostOp::KvGetEntry { key } => self.on_server(|host| async move {
                Ok(HostAnswer::Entry(host.kv_get_now(&scope, &key).await?))
            }),
            HostOp::KvCommit { atomic } => self.on_server(|host| async move {
                Ok(HostAnswer::Committed(
                    match host.kv_commit_now(&scope, atomic).await? {
                        Committed::Done { versionstamp, .. } => Some(versionstamp),
                        Committed::CheckFailed => None,
                    },
                ))
            }),
            HostOp::KvSet {
                key,
                value,
                ttl_seconds,
            } => {
                let mutation = KvMutation::Set {
                    key,
                    value,
                    ttl_seconds,
                };
                self.on_server(|host| async move {
                    host.kv_write_now(&scope, mutation).await?;
                    Ok(HostAnswer::Done)
                })
            }
            HostOp::KvDelete { key } => {
                let mutation = KvMutation::Delete { key };
                self.on_server(|host| async move {
                    Ok(HostAnswer::Existed(
                        host.kv_write_now(&scope, mutation).await?,
                    ))
                })
            }
            HostOp::KvList {
                prefix,
                limit,
                cursor,
            } => self.on_server(|host| async move {
                let page = host.kv_list_now(&scope, &prefix, limit.max(1), cursor);
                Ok(HostAnswer::Page(page.await?))
            }),
            HostOp::FilesRead { path } => self.on_server(|host| async move {
                let file = read_entry(host.store.as_ref(), Space::Files, &scope.id, &path).await;
                Ok(HostAnswer::File(file.map_err(storage_error)?))
            }),
            HostOp::FilesWrite { path, data } => self.on_server(|host| async move {
                host.write_file(&scope, &path, Some(data)).await?;
                Ok(HostAnswer::Done)
            }),
            HostOp::FilesList { prefix } => self.on_server(|host| async move {
                Ok(HostAnswer::Files(
                    host.files_list_now(&scope, &prefix).await?,
                ))
            }),
            HostOp::FilesDelete { path } => self.on_server(|host| async move {
                Ok(HostAnswer::Existed(
                    host.write_file(&scope, &path, None).await?,
                ))
            }),
            HostOp::HttpGetJson {
                url,
                headers,
                timeout,
            } => HostAnswer::later(
                self.http_get_json(&url, headers, timeout, allowed_hosts),
                HostAnswer::Json,
            ),
            HostOp::FetchStart { request } => {
                let host = self.clone();
                let start = fetch::on_server(&self.server, async move {
                    host.bodies
                        .start(&host.outbound, allowed_hosts, &scope.id, request)
                        .await
                });
                HostAnswer::later(start, HostAnswer::Head)
            }
            HostOp::FetchRead { id } => {
                let bodies = self.bodies.clone();
                let read =
                    fetch::on_server(
                        &self.server,
                        async move { bodies.read(&scope.id, id).await },
                    );
                HostAnswer::later(read, HostAnswer::Chunk)
            }
            HostOp::FetchCancel { id } => {
                self.bodies.cancel(&scope.id, id);
                Box::pin(std::future::ready(Ok(HostAnswer::Done)))
            }
        }
    }

    fn http_get_json(
        &self,
        url: &str,
        headers: Vec<(String, String)>,
        timeout: Duration,
        allow: Option<Vec<String>>,
    ) -> HostFuture<Value> {
        let mut header_map = HeaderMap::new();
        for (name, value) in headers {
            match (
                HeaderName::try_from(name.as_str()),
                HeaderValue::try_from(value.as_str()),
            ) {
                (Ok(n), Ok(v)) => {
                    header_map.insert(n, v);
                }
                _ => {
                    return Box::pin(std::future::ready(Err(host_error(
                        "invalid_header",
                        format!("invalid header {name:?}"),
                    ))))
                }
            }
        }
        let outbound = self.outbound.clone();
        let url = url.to_string();
        Box::pin(async move {
            outbound
                .get_json(&url, header_map, Some(timeout), allow.as_deref())
                .await
                .map_err(|e| host_error(e.code().as_str(), e.to_string()))
        })
    }
}

/// The bytes a kv mutation writes: its key, and its value as the JSON text stored.
fn written_bytes(mutation: &KvMutation) -> u64 {
    let value = match mutation {
        KvMutation::Set { value, .. } => json_len(value),
        // The counter's new value: a safe integer, at most 17 characters, and its entry's frame.
        KvMutation::Sum { .. } => 20,
        KvMutation::Delete { .. } => 0,
    };
    mutation.key().len() as u64 + value
}

/// Whose data an op reaches, from the code the server gave the isolate (never from the
/// handler): the endpoint's id, which names its data and is never reused, and the builder whose
/// totals its writes count toward.
struct Scope {
    id: String,
    builder: Option<String>,
}

impl Host for StoreHost {
    /// Only ops of the endpoint the catalog has now under the code's slug and id run: an old
    /// call of a deleted endpoint (or of one deleted and created again under its slug) is
    /// refused with `endpoint_deleted`, and its data, kept under an id never reused, is out of
    /// every other endpoint's reach. Dropping a response body is always allowed.
    ///
    /// Which call an op is for was checked by the sandbox (a worker's ops name a call in
    /// progress there); data is the endpoint's, whichever of its calls asks.
    fn call(&self, endpoint: &EndpointCode, _call: u64, op: HostOp) -> HostFuture<HostAnswer> {
        // A trial revision's slot (`slug#rN`) is its endpoint's.
        let current = self
            .catalog
            .get(slots::slot_base(&endpoint.slug))
            .filter(|c| c.endpoint.id == endpoint.id);
        // A draft run's scratch (its code was given `kv`, `files` and `logs` only, checked in
        // the sandbox's ops): its own data under its own id, no endpoint's.
        let draft = slots::is_draft(&endpoint.slug, &endpoint.id);
        let allowed_hosts = match (&op, current) {
            // It only gives memory back.
            (HostOp::FetchCancel { .. }, _) => None,
            (HostOp::HttpGetJson { .. } | HostOp::FetchStart { .. }, None) if draft => {
                return Box::pin(std::future::ready(Err(host_error(
                    "capability_denied",
                    "a draft run reaches no network",
                ))))
            }
            (_, None) if draft => None,
            (_, None) => {
                return Box::pin(std::future::ready(Err(host_error(
                    "endpoint_deleted",
                    "this endpoint was deleted: its calls can no longer use ctx",
                ))))
            }
            (HostOp::HttpGetJson { .. } | HostOp::FetchStart { .. }, Some(current)) => {
                current.endpoint.allowed_hosts.clone()
            }
            (_, Some(_)) => None,
        };
        let scope = Scope {
            id: endpoint.id.clone(),
            builder: endpoint.owner.clone(),
        };
        self.run(scope, allowed_hosts, op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::handler_data::*;
    use crate::store::SledStore;

    /// The ops as plain methods for the tests below, for the endpoint with id `endpoint` (no
    /// catalog check: the catalog is empty; `call` is tested on its own).
    impl StoreHost {
        async fn op<T>(
            &self,
            endpoint: &str,
            op: HostOp,
            pick: fn(HostAnswer) -> Option<T>,
        ) -> Result<T, HostError> {
            let scope = Scope {
                id: endpoint.to_owned(),
                builder: None,
            };
            let answer = self.run(scope, None, op).await?;
            Ok(pick(answer).expect("the op's own answer"))
        }

        async fn kv_set(
            &self,
            endpoint: &str,
            key: &str,
            value: Value,
            ttl_seconds: Option<u64>,
        ) -> Result<(), HostError> {
            let op = HostOp::KvSet {
                key: key.into(),
                value,
                ttl_seconds,
            };
            self.op(endpoint, op, |a| {
                matches!(a, HostAnswer::Done).then_some(())
            })
            .await
        }

        async fn kv_get(&self, endpoint: &str, key: &str) -> Result<Option<Value>, HostError> {
            let op = HostOp::KvGet { key: key.into() };
            self.op(endpoint, op, |a| match a {
                HostAnswer::Value(v) => Some(v.map(|v| v.to_value())),
                _ => None,
            })
            .await
        }

        async fn kv_delete(&self, endpoint: &str, key: &str) -> Result<bool, HostError> {
            let op = HostOp::KvDelete { key: key.into() };
            self.op(endpoint, op, |a| match a {
                HostAnswer::Existed(e) => Some(e),
                _ => None,
            })
            .await
        }

        async fn kv_list(
            &self,
            endpoint: &str,
            prefix: &str,
            limit: usize,
            cursor: Option<String>,
        ) -> Result<KvPage, HostError> {
            let op = HostOp::KvList {
                prefix: prefix.into(),
                limit,
                cursor,
            };
            self.op(endpoint, op, |a| match a {
                HostAnswer::Page(p) => Some(p),
                _ => None,
            })
            .await
        }

        async fn files_write(
            &self,
            endpoint: &str,
            path: &str,
            data: Vec<u8>,
        ) -> Result<(), HostError> {
            let op = HostOp::FilesWrite {
                path: path.into(),
                data,
            };
            self.op(endpoint, op, |a| {
                matches!(a, HostAnswer::Done).then_some(())
            })
            .await
        }

        async fn files_list(
            &self,
            endpoint: &str,
            prefix: &str,
        ) -> Result<Vec<FileEntry>, HostError> {
            let op = HostOp::FilesList {
                prefix: prefix.into(),
            };
            self.op(endpoint, op, |a| match a {
                HostAnswer::Files(f) => Some(f),
                _ => None,
            })
            .await
        }

        async fn files_delete(&self, endpoint: &str, path: &str) -> Result<bool, HostError> {
            let op = HostOp::FilesDelete { path: path.into() };
            self.op(endpoint, op, |a| match a {
                HostAnswer::Existed(e) => Some(e),
                _ => None,
            })
            .await
        }
    }

    /// An op runs only for the endpoint the catalog has under the code's slug with the code's
    /// id: after a delete (and after another endpoint took the slug) an old call is refused,
    /// and the new endpoint's data is kept under its own id.
    #[tokio::test]
    async fn ops_of_a_deleted_endpoint_are_refused() {
        let h = host(Quotas::default()).await;
        let endpoint = |id: &str| -> crate::catalog::Endpoint {
            serde_json::from_value(serde_json::json!({
                "id": id, "slug": "tool", "title": "T", "description": "", "status": "active",
                "priceUsd": 0, "handlerType": "js_request_response", "inputSchema": {},
                "outputSchema": {}, "owner": {"kind": "admin"}, "revision": 1,
                "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
            }))
            .unwrap()
        };
        let code = |id: &str| EndpointCode {
            id: id.into(),
            slug: "tool".into(),
            version: format!("{id}-r1"),
            source: String::new(),
            capabilities: Default::default(),
            env: Default::default(),
            limits: None,
            owner: None,
        };
        let set = |code: EndpointCode, value: i64| {
            let h = h.clone();
            async move {
                let op = HostOp::KvSet {
                    key: "k".into(),
                    value: Value::from(value),
                    ttl_seconds: None,
                };
                h.call(&code, 1, op).await
            }
        };
        let refused = |result: Result<HostAnswer, HostError>| {
            let err = result.expect_err("refused");
            assert_eq!(err.code, "endpoint_deleted", "{}", err.message);
        };
        refused(set(code("ep_old"), 1).await);
        h.catalog
            .insert_new(endpoint("ep_old"), crate::store::Batch::new())
            .await
            .unwrap();
        set(code("ep_old"), 1).await.unwrap();
        h.catalog
            .remove("tool", "ep_old", crate::store::Batch::new())
            .await
            .unwrap();
        refused(set(code("ep_old"), 2).await);
        h.catalog
            .insert_new(endpoint("ep_new"), crate::store::Batch::new())
            .await
            .unwrap();
        refused(set(code("ep_old"), 3).await);
        // A forged code naming the new id under another slug is refused too.
        refused(
            h.call(
                &EndpointCode {
                    slug: "other".into(),
                    ..code("ep_new")
                },
                1,
                HostOp::KvGet { key: "k".into() },
            )
            .await,
        );
        set(code("ep_new"), 4).await.unwrap();
        assert_eq!(h.kv_get("ep_old", "k").await.unwrap(), Some(Value::from(1)));
        assert_eq!(h.kv_get("ep_new", "k").await.unwrap(), Some(Value::from(4)));
        // Dropping a response body is never refused.
        assert!(h
            .call(&code("ep_old"), 1, HostOp::FetchCancel { id: 7 })
            .await
            .is_ok());
    }

    async fn host(quotas: Quotas) -> StoreHost {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let config = Config::new("/nonexistent");
        let catalog = Arc::new(Registry::load(store.clone()).await.unwrap());
        StoreHost::new(
            store,
            OutboundClient::new(&config.outbound),
            quotas,
            catalog,
        )
    }

    #[tokio::test]
    async fn kv_is_scoped_per_endpoint_and_pages() {
        let h = host(Quotas::default()).await;
        for i in 0..5 {
            h.kv_set("a", &format!("k{i}"), Value::from(i), None)
                .await
                .unwrap();
        }
        h.kv_set("ab", "k0", Value::from("other endpoint"), None)
            .await
            .unwrap();
        assert_eq!(h.kv_get("a", "k0").await.unwrap(), Some(Value::from(0)));
        assert_eq!(h.kv_get("b", "k0").await.unwrap(), None);
        let page = h.kv_list("a", "k", 2, None).await.unwrap();
        assert_eq!(
            page.entries
                .iter()
                .map(|e| e.key.as_str())
                .collect::<Vec<_>>(),
            ["k0", "k1"]
        );
        let page = h.kv_list("a", "k", 2, page.cursor).await.unwrap();
        assert_eq!(
            page.entries
                .iter()
                .map(|e| e.key.as_str())
                .collect::<Vec<_>>(),
            ["k2", "k3"]
        );
        let page = h.kv_list("a", "k", 2, page.cursor).await.unwrap();
        assert_eq!(
            page.entries
                .iter()
                .map(|e| e.key.as_str())
                .collect::<Vec<_>>(),
            ["k4"]
        );
        assert!(page.cursor.is_none());
        assert!(h.kv_delete("a", "k4").await.unwrap());
        assert!(!h.kv_delete("a", "k4").await.unwrap());
    }

    /// A page stops at its byte cap with a cursor, however high its limit, and paging on
    /// reaches every entry once.
    #[tokio::test]
    async fn kv_list_pages_are_bounded_in_bytes() {
        let h = host(Quotas::default()).await;
        let value = Value::from("v".repeat(60 * 1024));
        for i in 0..40 {
            h.kv_set("a", &format!("k{i:02}"), value.clone(), None)
                .await
                .unwrap();
        }
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let page = h.kv_list("a", "", 1000, cursor).await.unwrap();
            let bytes: usize = page.entries.iter().map(|e| e.key.len() + 60 * 1024).sum();
            assert!(bytes <= MAX_LIST_PAGE_BYTES, "a page of {bytes} bytes");
            assert!(!page.entries.is_empty());
            seen.extend(page.entries.into_iter().map(|e| e.key));
            cursor = page.cursor;
            if cursor.is_none() {
                break;
            }
        }
        let expected: Vec<String> = (0..40).map(|i| format!("k{i:02}")).collect();
        assert_eq!(seen, expected);
    }

    /// Reads sized by the page's bytes left still page through small entries, expired ones
    /// among them, exactly: all of them in one page under a high limit, each once in pages
    /// of a low one (the first read is a few rows, later ones up to 64).
    #[tokio::test]
    async fn kv_list_pages_small_entries_whatever_the_reads() {
        let h = host(Quotas::default()).await;
        for i in 0..300 {
            let ttl = (i % 7 == 0).then_some(0);
            h.kv_set("a", &format!("k{i:03}"), Value::from(i), ttl)
                .await
                .unwrap();
        }
        let live: Vec<String> = (0..300)
            .filter(|i| i % 7 != 0)
            .map(|i| format!("k{i:03}"))
            .collect();
        let page = h.kv_list("a", "", 1000, None).await.unwrap();
        assert_eq!(page.cursor, None);
        let keys: Vec<String> = page.entries.into_iter().map(|e| e.key).collect();
        assert_eq!(keys, live);
        for limit in [1, 9, 100] {
            let (mut seen, mut cursor) = (Vec::new(), None);
            loop {
                let page = h.kv_list("a", "", limit, cursor).await.unwrap();
                assert!(page.entries.len() <= limit);
                seen.extend(page.entries.into_iter().map(|e| e.key));
                cursor = page.cursor;
                if cursor.is_none() {
                    break;
                }
            }
            assert_eq!(seen, live, "limit {limit}");
        }
    }

    #[tokio::test]
    async fn kv_ttl_expires() {
        let h = host(Quotas::default()).await;
        h.kv_set("a", "gone", Value::from(1), Some(0))
            .await
            .unwrap();
        h.kv_set("a", "kept", Value::from(2), Some(3600))
            .await
            .unwrap();
        assert_eq!(h.kv_get("a", "gone").await.unwrap(), None);
        assert_eq!(h.kv_get("a", "kept").await.unwrap(), Some(Value::from(2)));
        let page = h.kv_list("a", "", 10, None).await.unwrap();
        assert_eq!(page.entries.len(), 1);
    }

    #[tokio::test]
    async fn quotas_hold_and_free_up() {
        let h = host(Quotas {
            kv_keys: 2,
            kv_bytes: 1000,
            files: 1,
            file_bytes: 10,
            ..Quotas::default()
        })
        .await;
        h.kv_set("a", "1", Value::from(1), None).await.unwrap();
        h.kv_set("a", "2", Value::from(2), None).await.unwrap();
        // Overwriting an existing key does not need a new slot.
        h.kv_set("a", "2", Value::from(3), None).await.unwrap();
        let err = h.kv_set("a", "3", Value::from(3), None).await.unwrap_err();
        assert_eq!(err.code, "quota_exceeded");
        h.kv_set("b", "3", Value::from(3), None).await.unwrap();
        h.kv_delete("a", "1").await.unwrap();
        h.kv_set("a", "3", Value::from(3), None).await.unwrap();

        h.files_write("a", "x.txt", b"12345".to_vec())
            .await
            .unwrap();
        assert_eq!(
            h.files_write("a", "y.txt", b"1".to_vec())
                .await
                .unwrap_err()
                .code,
            "quota_exceeded"
        );
        assert_eq!(
            h.files_write("a", "x.txt", vec![0; 11])
                .await
                .unwrap_err()
                .code,
            "quota_exceeded"
        );
        let listed = h.files_list("a", "").await.unwrap();
        assert_eq!(
            listed,
            vec![FileEntry {
                path: "x.txt".into(),
                size: 5
            }]
        );
    }

    #[tokio::test]
    async fn forgetting_an_endpoint_frees_its_quota_and_uploads_count() {
        let h = host(Quotas {
            kv_keys: 1,
            kv_bytes: 1000,
            files: 2,
            file_bytes: 1000,
            ..Quotas::default()
        })
        .await;
        h.kv_set("a", "1", Value::from(1), None).await.unwrap();
        h.files_write("a", "x", b"1".to_vec()).await.unwrap();
        forget_endpoint(h.store.as_ref(), "a").await.unwrap();
        assert_eq!(h.kv_get("a", "1").await.unwrap(), None);
        assert!(h.files_list("a", "").await.unwrap().is_empty());
        h.kv_set("a", "2", Value::from(2), None).await.unwrap();

        // Files uploaded with the endpoint count like the handler's own.
        let uploads: [Change<'_>; 2] = [
            ("up1", Some(b"1".as_slice())),
            ("up2", Some(b"2".as_slice())),
        ];
        let store = h.store.as_ref();
        write_counted_all(store, &h.quotas, Space::Files, "a", None, &uploads)
            .await
            .unwrap();
        assert_eq!(
            h.files_write("a", "more", b"3".to_vec())
                .await
                .unwrap_err()
                .code,
            "quota_exceeded"
        );
    }

    #[tokio::test]
    async fn a_batch_over_quota_writes_nothing() {
        let h = host(Quotas {
            kv_keys: 10,
            kv_bytes: 1000,
            files: 2,
            file_bytes: 1000,
            ..Quotas::default()
        })
        .await;
        let (store, quotas) = (h.store.as_ref(), &h.quotas);
        h.files_write("a", "kept", b"1".to_vec()).await.unwrap();
        let too_many: [Change<'_>; 2] =
            [("x", Some(b"2".as_slice())), ("y", Some(b"3".as_slice()))];
        let err = check_counted(store, quotas, Space::Files, "a", None, &too_many)
            .await
            .unwrap_err();
        assert_eq!(err.code, "quota_exceeded");
        let err = write_counted_all(store, quotas, Space::Files, "a", None, &too_many)
            .await
            .unwrap_err();
        assert_eq!(err.code, "quota_exceeded");
        assert_eq!(h.files_list("a", "").await.unwrap().len(), 1);
        // Removing one in the same batch makes room: the totals after the whole set count.
        let swap: [Change<'_>; 3] = [
            ("kept", None),
            ("x", Some(b"2".as_slice())),
            ("y", Some(b"3".as_slice())),
        ];
        assert_eq!(
            write_counted_all(store, quotas, Space::Files, "a", None, &swap)
                .await
                .unwrap(),
            1
        );
        let paths: Vec<String> = h
            .files_list("a", "")
            .await
            .unwrap()
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(paths, ["x", "y"]);
        assert!(!h.files_delete("a", "kept").await.unwrap());
        assert!(h.files_delete("a", "x").await.unwrap());
        h.files_write("a", "z", b"4".to_vec()).await.unwrap();
    }

    /// A builder's totals in `space`, as stored.
    async fn totals(store: &dyn Store, space: Space, builder: &str) -> Totals {
        read_totals(store, space, builder).await.unwrap().1
    }

    #[tokio::test]
    async fn builder_totals_span_endpoints_and_free_up() {
        let h = host(Quotas {
            kv_keys: 2,
            builder_kv_keys: 3,
            file_bytes: 10,
            builder_file_bytes: 15,
            ..Quotas::default()
        })
        .await;
        let (store, quotas) = (h.store.as_ref(), &h.quotas);
        let kv = |slug: &'static str, builder: &'static str, key: &'static str| async move {
            write_counted(
                store,
                quotas,
                Space::Kv,
                slug,
                Some(builder),
                key,
                Some(b"1".to_vec()),
            )
            .await
        };
        kv("a", "b1", "x").await.unwrap();
        kv("a", "b1", "y").await.unwrap();
        kv("b", "b1", "x").await.unwrap();
        // Each endpoint is within its own quota (2 keys); the builder's total (3) is not.
        let err = kv("b", "b1", "y").await.unwrap_err();
        assert_eq!(err.code, "quota_exceeded");
        assert!(
            err.message.contains("builder's total kv quota"),
            "{}",
            err.message
        );
        let stored = |key| async move { read_entry(store, Space::Kv, "b", key).await };
        assert!(stored("x").await.unwrap().is_some());
        assert!(
            stored("y").await.unwrap().is_none(),
            "the refused write wrote nothing"
        );
        // Overwriting in place raises nothing: it passes at the limit.
        kv("b", "b1", "x").await.unwrap();
        // Another builder, and an endpoint of nobody's, have their own room.
        kv("c", "b2", "x").await.unwrap();
        kv("c", "b2", "y").await.unwrap();
        write_counted(
            store,
            quotas,
            Space::Kv,
            "d",
            None,
            "x",
            Some(b"1".to_vec()),
        )
        .await
        .unwrap();
        assert_eq!(
            totals(store, Space::Kv, "b1").await,
            Totals { count: 3, bytes: 3 }
        );
        assert_eq!(
            totals(store, Space::Kv, "b2").await,
            Totals { count: 2, bytes: 2 }
        );

        // Removing a key frees its room, for any endpoint of the builder.
        write_counted(store, quotas, Space::Kv, "a", Some("b1"), "x", None)
            .await
            .unwrap();
        kv("b", "b1", "y").await.unwrap();
        let err = kv("b", "b1", "z").await.unwrap_err();
        assert_eq!(err.code, "quota_exceeded");
        // Forgetting an endpoint frees all of its room.
        forget_endpoint(store, "a").await.unwrap();
        assert_eq!(
            totals(store, Space::Kv, "b1").await,
            Totals { count: 2, bytes: 2 }
        );
        forget_endpoint(store, "b").await.unwrap();
        assert_eq!(totals(store, Space::Kv, "b1").await, Totals::default());
        let stored = store.builder_usage(HandlerSpace::Kv, "b1").await.unwrap();
        assert!(stored.is_none());

        // Files count by bytes across endpoints; a refused upload set writes nothing.
        let five: [Change<'_>; 1] = [("f", Some(b"12345".as_slice()))];
        for slug in ["a", "b", "c"] {
            write_counted_all(store, quotas, Space::Files, slug, Some("b1"), &five)
                .await
                .unwrap();
        }
        let two: [Change<'_>; 2] = [("g", Some(b"1".as_slice())), ("h", Some(b"1".as_slice()))];
        let err = check_counted(store, quotas, Space::Files, "a", Some("b1"), &two)
            .await
            .unwrap_err();
        assert!(
            err.message.contains("builder's total files quota"),
            "{}",
            err.message
        );
        assert!(
            write_counted_all(store, quotas, Space::Files, "a", Some("b1"), &two)
                .await
                .is_err()
        );
        assert_eq!(h.files_list("a", "").await.unwrap().len(), 1);
        assert_eq!(
            totals(store, Space::Files, "b1").await,
            Totals {
                count: 3,
                bytes: 15
            }
        );
        // Replacing a file by a smaller one in the same set makes room.
        let swap: [Change<'_>; 2] = [
            ("f", Some(b"1".as_slice())),
            ("g", Some(b"1234".as_slice())),
        ];
        write_counted_all(store, quotas, Space::Files, "a", Some("b1"), &swap)
            .await
            .unwrap();
        assert_eq!(
            totals(store, Space::Files, "b1").await,
            Totals {
                count: 4,
                bytes: 15
            }
        );
    }

    #[tokio::test]
    async fn usage_from_before_builder_totals_joins_its_owner() {
        let h = host(Quotas {
            builder_kv_keys: 2,
            ..Quotas::default()
        })
        .await;
        let (store, quotas) = (h.store.as_ref(), &h.quotas);
        // Written without an owner, as every endpoint was before builder totals existed.
        for key in ["x", "y"] {
            write_counted(
                store,
                quotas,
                Space::Kv,
                "a",
                None,
                key,
                Some(b"12".to_vec()),
            )
            .await
            .unwrap();
        }
        assert_eq!(totals(store, Space::Kv, "b1").await, Totals::default());
        let owners = [("a", Some("b1")), ("b", Some("b1")), ("seeded", None)];
        assert_eq!(count_toward_owners(store, owners).await.unwrap(), 1);
        assert_eq!(
            totals(store, Space::Kv, "b1").await,
            Totals { count: 2, bytes: 4 }
        );
        // Running it again changes nothing.
        assert_eq!(count_toward_owners(store, owners).await.unwrap(), 0);
        assert_eq!(
            totals(store, Space::Kv, "b1").await,
            Totals { count: 2, bytes: 4 }
        );
        let err = write_counted(
            store,
            quotas,
            Space::Kv,
            "b",
            Some("b1"),
            "z",
            Some(b"1".to_vec()),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code, "quota_exceeded");
        // A write naming another owner moves the endpoint's whole usage to it.
        write_counted(store, quotas, Space::Kv, "a", Some("b2"), "x", None)
            .await
            .unwrap();
        assert_eq!(totals(store, Space::Kv, "b1").await, Totals::default());
        assert_eq!(
            totals(store, Space::Kv, "b2").await,
            Totals { count: 1, bytes: 2 }
        );
        forget_endpoint(store, "a").await.unwrap();
        assert_eq!(totals(store, Space::Kv, "b2").await, Totals::default());
    }

    /// Concurrent writes to several endpoints of one builder all land, and the totals are exact:
    /// each batch guards the builder's totals, and a writer that lost the race reads again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_writes_across_a_builders_endpoints_keep_exact_totals() {
        let h = host(Quotas::default()).await;
        let mut tasks = Vec::new();
        for i in 0..48 {
            let store = h.store.clone();
            let quotas = h.quotas.clone();
            tasks.push(tokio::spawn(async move {
                let slug = format!("e{}", i % 6);
                let value = vec![b'x'; 10 + i];
                write_counted(
                    store.as_ref(),
                    &quotas,
                    Space::Kv,
                    &slug,
                    Some("b1"),
                    &format!("k{i}"),
                    Some(value),
                )
                .await
            }));
        }
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        let bytes: u64 = (0..48).map(|i| 10 + i as u64).sum();
        assert_eq!(
            totals(h.store.as_ref(), Space::Kv, "b1").await,
            Totals { count: 48, bytes }
        );
    }
}
