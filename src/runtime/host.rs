//! What the sandbox's ops reach on the host: per-endpoint kv and files in the store, and the
//! SSRF-guarded outbound client. The sandbox has already checked the capability and the size
//! and path rules; here live the rules that need storage: expiry, quotas and paging.

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};
use sandbox::{
    FetchHead, FetchRequest, FileEntry, Host, HostError, HostFuture, KvAtomic, KvEntry, KvMutation,
    KvPage, KvVersioned,
};
use serde_json::Value;

use super::fetch::{self, Bodies};
use crate::catalog::Registry;
use crate::config::Quotas;
use crate::net::OutboundClient;
use crate::storage::kv::{self, Committed, KvWriters, Stored};
use crate::storage::{host_error, now_secs, scoped_key, storage_error, write_counted, Space};
use crate::store::{Store, Tree};

/// The most bytes of stored keys and values one `ctx.kv.list` page holds: a page of the
/// largest limit over the largest values would be 64 MiB, and a handler can ask for many at
/// once. A page that stops here has a cursor, as one that stops at its limit.
pub(crate) const MAX_LIST_PAGE_BYTES: usize = 1 << 20;

/// Rows a `ctx.kv.list` reads from the store at a time.
const LIST_SCAN_ROWS: usize = 64;

#[derive(Clone)]
pub struct StoreHost {
    store: Arc<dyn Store>,
    outbound: OutboundClient,
    quotas: Quotas,
    /// Where each endpoint's outbound host allow-list is read, at call time.
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
            quotas,
            catalog,
            server: tokio::runtime::Handle::current(),
            kv_writers: Arc::default(),
            bodies: Arc::default(),
        }
    }

    /// Runs `work` on the server's runtime. Ops are polled by an isolate thread's own small
    /// runtime, but store engines with connections (PostgreSQL) keep them on the server's.
    fn on_server<T, F, Fut>(&self, work: F) -> HostFuture<T>
    where
        T: Send + 'static,
        F: FnOnce(StoreHost) -> Fut,
        Fut: std::future::Future<Output = Result<T, HostError>> + Send + 'static,
    {
        let task = self.server.spawn(work(self.clone()));
        Box::pin(async move {
            task.await
                .unwrap_or_else(|_| Err(host_error("internal", "host task failed")))
        })
    }

    /// The endpoint's owning builder, as the catalog has it now: whose totals its writes count
    /// toward.
    fn builder_of(&self, slug: &str) -> Option<String> {
        let compiled = self.catalog.get(slug)?;
        compiled.endpoint.owner_builder().map(str::to_owned)
    }

    async fn kv_get_now(&self, slug: &str, key: &str) -> Result<Option<KvVersioned>, HostError> {
        let builder = self.builder_of(slug);
        let store = self.store.as_ref();
        kv::get_entry(store, &self.quotas, slug, builder.as_deref(), key).await
    }

    /// Commits in the endpoint's turn among this node's commits (see [`KvWriters`]).
    async fn kv_commit_now(&self, slug: &str, atomic: KvAtomic) -> Result<Committed, HostError> {
        let builder = self.builder_of(slug);
        let store = self.store.as_ref();
        let writers = self.kv_writers.as_ref();
        kv::commit(
            store,
            &self.quotas,
            slug,
            builder.as_deref(),
            &atomic,
            writers,
        )
        .await
    }

    /// One plain `set` or `delete`: an atomic of one mutation. Whether its key was live.
    async fn kv_write_now(&self, slug: &str, mutation: KvMutation) -> Result<bool, HostError> {
        let atomic = KvAtomic {
            checks: Vec::new(),
            mutations: vec![mutation],
        };
        match self.kv_commit_now(slug, atomic).await? {
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
        slug: &str,
        prefix: &str,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<KvPage, HostError> {
        let scan_prefix = scoped_key(slug, prefix);
        let mut after = cursor.map(|c| scoped_key(slug, &c));
        let now = now_secs();
        let mut entries = Vec::new();
        let mut page_bytes = 0usize;
        let rows = (limit + 1).min(LIST_SCAN_ROWS);
        loop {
            let page = self
                .store
                .scan_prefix(Tree::HandlerKv, &scan_prefix, after.as_deref(), rows)
                .await
                .map_err(storage_error)?;
            let exhausted = page.len() < rows;
            for (key, bytes) in page {
                after = Some(key.clone());
                let Ok(Some(stored)) = Stored::live(&bytes, now) else {
                    continue;
                };
                let key = String::from_utf8_lossy(&key[slug.len() + 1..]).into_owned();
                let size = key.len() + bytes.len();
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
                    value: stored.v,
                });
            }
            if exhausted {
                return Ok(KvPage {
                    entries,
                    cursor: None,
                });
            }
        }
    }

    /// Writes (`Some`) or removes (`None`) one file, counted against the endpoint's quotas and
    /// its owning builder's totals.
    async fn write_file(
        &self,
        slug: &str,
        path: &str,
        data: Option<Vec<u8>>,
    ) -> Result<bool, HostError> {
        let builder = self.builder_of(slug);
        let store = self.store.as_ref();
        write_counted(
            store,
            &self.quotas,
            Space::Files,
            slug,
            builder.as_deref(),
            path,
            data,
        )
        .await
    }

    async fn files_list_now(&self, slug: &str, prefix: &str) -> Result<Vec<FileEntry>, HostError> {
        let entries = self
            .store
            .scan_prefix(
                Tree::HandlerFiles,
                &scoped_key(slug, prefix),
                None,
                self.quotas.files as usize,
            )
            .await
            .map_err(storage_error)?;
        Ok(entries
            .into_iter()
            .map(|(key, bytes)| FileEntry {
                path: String::from_utf8_lossy(&key[slug.len() + 1..]).into_owned(),
                size: bytes.len() as u64,
            })
            .collect())
    }
}

impl Host for StoreHost {
    fn kv_get(&self, endpoint: &str, key: &str) -> HostFuture<Option<Value>> {
        let (endpoint, key) = (endpoint.to_owned(), key.to_owned());
        self.on_server(|host| async move {
            let entry = host.kv_get_now(&endpoint, &key).await?;
            Ok(entry.map(|e| e.value))
        })
    }

    fn kv_get_entry(&self, endpoint: &str, key: &str) -> HostFuture<Option<KvVersioned>> {
        let (endpoint, key) = (endpoint.to_owned(), key.to_owned());
        self.on_server(|host| async move { host.kv_get_now(&endpoint, &key).await })
    }

    fn kv_commit(&self, endpoint: &str, atomic: KvAtomic) -> HostFuture<Option<String>> {
        let endpoint = endpoint.to_owned();
        self.on_server(|host| async move {
            Ok(match host.kv_commit_now(&endpoint, atomic).await? {
                Committed::Done { versionstamp, .. } => Some(versionstamp),
                Committed::CheckFailed => None,
            })
        })
    }

    fn kv_set(
        &self,
        endpoint: &str,
        key: &str,
        value: Value,
        ttl_seconds: Option<u64>,
    ) -> HostFuture<()> {
        let endpoint = endpoint.to_owned();
        let mutation = KvMutation::Set {
            key: key.to_owned(),
            value,
            ttl_seconds,
        };
        self.on_server(|host| async move { host.kv_write_now(&endpoint, mutation).await.map(drop) })
    }

    fn kv_delete(&self, endpoint: &str, key: &str) -> HostFuture<bool> {
        let endpoint = endpoint.to_owned();
        let mutation = KvMutation::Delete {
            key: key.to_owned(),
        };
        self.on_server(|host| async move { host.kv_write_now(&endpoint, mutation).await })
    }

    fn kv_list(
        &self,
        endpoint: &str,
        prefix: &str,
        limit: usize,
        cursor: Option<String>,
    ) -> HostFuture<KvPage> {
        let (endpoint, prefix) = (endpoint.to_owned(), prefix.to_owned());
        self.on_server(|host| async move {
            host.kv_list_now(&endpoint, &prefix, limit.max(1), cursor)
                .await
        })
    }

    fn files_read(&self, endpoint: &str, path: &str) -> HostFuture<Option<Vec<u8>>> {
        let key = scoped_key(endpoint, path);
        self.on_server(|host| async move {
            host.store
                .get(Tree::HandlerFiles, &key)
                .await
                .map_err(storage_error)
        })
    }

    fn files_write(&self, endpoint: &str, path: &str, data: Vec<u8>) -> HostFuture<()> {
        let (endpoint, path) = (endpoint.to_owned(), path.to_owned());
        self.on_server(|host| async move {
            host.write_file(&endpoint, &path, Some(data))
                .await
                .map(drop)
        })
    }

    fn files_list(&self, endpoint: &str, prefix: &str) -> HostFuture<Vec<FileEntry>> {
        let (endpoint, prefix) = (endpoint.to_owned(), prefix.to_owned());
        self.on_server(|host| async move { host.files_list_now(&endpoint, &prefix).await })
    }

    fn files_delete(&self, endpoint: &str, path: &str) -> HostFuture<bool> {
        let (endpoint, path) = (endpoint.to_owned(), path.to_owned());
        self.on_server(|host| async move { host.write_file(&endpoint, &path, None).await })
    }

    fn http_get_json(
        &self,
        endpoint: &str,
        url: &str,
        headers: Vec<(String, String)>,
        timeout: Duration,
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
        let allow = self
            .catalog
            .get(endpoint)
            .and_then(|c| c.endpoint.allowed_hosts.clone());
        let url = url.to_string();
        Box::pin(async move {
            outbound
                .get_json(&url, header_map, Some(timeout), allow.as_deref())
                .await
                .map_err(|e| host_error(e.code().as_str(), e.to_string()))
        })
    }

    fn fetch_start(&self, endpoint: &str, request: FetchRequest) -> HostFuture<FetchHead> {
        let allow = self
            .catalog
            .get(endpoint)
            .and_then(|c| c.endpoint.allowed_hosts.clone());
        let (host, slug) = (self.clone(), endpoint.to_owned());
        fetch::on_server(&self.server, async move {
            host.bodies
                .start(&host.outbound, allow, &slug, request)
                .await
        })
    }

    fn fetch_read(&self, endpoint: &str, id: u64) -> HostFuture<Option<Vec<u8>>> {
        let (bodies, slug) = (self.bodies.clone(), endpoint.to_owned());
        fetch::on_server(&self.server, async move { bodies.read(&slug, id).await })
    }

    fn fetch_cancel(&self, endpoint: &str, id: u64) -> HostFuture<()> {
        self.bodies.cancel(endpoint, id);
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::storage::*;
    use crate::store::SledStore;

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
        read_json(store, &builder_usage_key(space.name(), builder))
            .await
            .unwrap()
            .1
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
        let stored = |key| async move { store.get(Tree::HandlerKv, &scoped_key("b", key)).await };
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
        assert!(store
            .get(Tree::Meta, &builder_usage_key("kv", "b1"))
            .await
            .unwrap()
            .is_none());

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
