//! What the sandbox's ops reach on the host: per-endpoint kv and files in the store, and the
//! SSRF-guarded outbound client. The sandbox has already checked the capability and the size
//! and path rules; here live the rules that need storage: expiry, quotas and paging.

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};
use sandbox::{FileEntry, Host, HostError, HostFuture, KvEntry, KvPage};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::Registry;
use crate::net::OutboundClient;
use crate::store::{Batch, Store, StoreError, Tree};

/// Storage quotas per endpoint.
#[derive(Clone, Debug)]
pub struct Quotas {
    pub kv_keys: u64,
    pub kv_bytes: u64,
    pub files: u64,
    pub file_bytes: u64,
}

impl Default for Quotas {
    fn default() -> Self {
        Self {
            kv_keys: 10_000,
            kv_bytes: 16 * 1024 * 1024,
            files: 100,
            file_bytes: 16 * 1024 * 1024,
        }
    }
}

#[derive(Clone)]
pub struct StoreHost {
    store: Arc<dyn Store>,
    outbound: OutboundClient,
    quotas: Quotas,
    /// Where each endpoint's outbound host allow-list is read, at call time.
    catalog: Arc<Registry>,
    /// The server's runtime, where store work runs (see [`StoreHost::on_server`]).
    server: tokio::runtime::Handle,
}

/// A kv value with its expiry (unix seconds).
#[derive(Serialize, Deserialize)]
struct Stored {
    v: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exp: Option<u64>,
}

/// Running totals kept beside the data so quota checks never scan.
#[derive(Serialize, Deserialize, Default, Clone, Copy)]
struct Usage {
    count: u64,
    bytes: u64,
}

/// Key of an endpoint's entry; slugs never contain `/`, so prefixes cannot collide.
pub fn scoped_key(slug: &str, key: &str) -> Vec<u8> {
    format!("{slug}/{key}").into_bytes()
}

fn usage_key(kind: &str, slug: &str) -> Vec<u8> {
    format!("usage/{kind}/{slug}").into_bytes()
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn host_error(code: &str, message: impl Into<String>) -> HostError {
    HostError {
        code: code.to_string(),
        message: message.into(),
    }
}

fn storage_error(e: StoreError) -> HostError {
    tracing::error!(error = %e, "handler storage failed");
    host_error("storage_error", "storage is unavailable")
}

/// The two per-endpoint storage spaces, each with its own quota.
#[derive(Clone, Copy, Debug)]
pub enum Space {
    Kv,
    Files,
}

impl Space {
    fn tree(self) -> Tree {
        match self {
            Space::Kv => Tree::HandlerKv,
            Space::Files => Tree::HandlerFiles,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Space::Kv => "kv",
            Space::Files => "files",
        }
    }

    /// (entries, bytes) allowed per endpoint.
    fn limits(self, quotas: &Quotas) -> (u64, u64) {
        match self {
            Space::Kv => (quotas.kv_keys, quotas.kv_bytes),
            Space::Files => (quotas.files, quotas.file_bytes),
        }
    }
}

/// One change to an endpoint's space: the key and its new value, `None` to remove it.
pub type Change<'a> = (&'a str, Option<&'a [u8]>);

/// Writes or removes (`value: None`) one entry of an endpoint and adjusts its usage totals in the
/// same atomic batch, retrying when a concurrent writer changed the totals first. Returns
/// whether the entry existed before.
pub async fn write_counted(
    store: &dyn Store,
    quotas: &Quotas,
    space: Space,
    slug: &str,
    key: &str,
    value: Option<Vec<u8>>,
) -> Result<bool, HostError> {
    let existed = write_counted_all(store, quotas, space, slug, &[(key, value.as_deref())]).await?;
    Ok(existed == 1)
}

/// Like [`write_counted`] for several entries (distinct keys) at once: all of them land with the
/// adjusted totals, or nothing changes (`quota_exceeded` when the totals after the whole set
/// would pass the quota). Endpoint assets uploaded with a create or update go through here, so
/// quotas count them. Returns how many of the entries existed before.
pub async fn write_counted_all(
    store: &dyn Store,
    quotas: &Quotas,
    space: Space,
    slug: &str,
    changes: &[Change<'_>],
) -> Result<usize, HostError> {
    for _ in 0..16 {
        let (batch, existed) = counted_batch(store, quotas, space, slug, changes).await?;
        match store.apply(batch).await {
            Ok(()) => return Ok(existed),
            Err(StoreError::ConditionFailed(_)) => continue,
            Err(e) => return Err(storage_error(e)),
        }
    }
    Err(host_error(
        "storage_busy",
        "too many concurrent writes; try again",
    ))
}

/// Whether [`write_counted_all`] would accept `changes` now; writes nothing.
pub async fn check_counted(
    store: &dyn Store,
    quotas: &Quotas,
    space: Space,
    slug: &str,
    changes: &[Change<'_>],
) -> Result<(), HostError> {
    counted_batch(store, quotas, space, slug, changes)
        .await
        .map(drop)
}

/// The batch that applies `changes` and the new usage totals, guarded by the totals and entries
/// as read (a concurrent writer makes it fail, and the caller reads again), with how many of the
/// entries existed.
async fn counted_batch(
    store: &dyn Store,
    quotas: &Quotas,
    space: Space,
    slug: &str,
    changes: &[Change<'_>],
) -> Result<(Batch, usize), HostError> {
    let (tree, kind, limits) = (space.tree(), space.name(), space.limits(quotas));
    let usage_key = usage_key(kind, slug);
    let old_usage_bytes = store
        .get(Tree::Meta, &usage_key)
        .await
        .map_err(storage_error)?;
    let usage: Usage = old_usage_bytes
        .as_deref()
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or_default();
    let Usage {
        mut count,
        mut bytes,
    } = usage;
    let mut existed = 0;
    let mut batch = Batch::new().require_equals(Tree::Meta, usage_key.clone(), old_usage_bytes);
    for &(key, value) in changes {
        let key = scoped_key(slug, key);
        let old = store.get(tree, &key).await.map_err(storage_error)?;
        let old_len = old.as_ref().map_or(0, |o| o.len() as u64);
        let new_len = value.map_or(0, |v| v.len() as u64);
        count = (count + u64::from(value.is_some())).saturating_sub(u64::from(old.is_some()));
        bytes = (bytes + new_len).saturating_sub(old_len);
        existed += usize::from(old.is_some());
        batch = batch.require_equals(tree, key.clone(), old);
        batch = match value {
            Some(v) => batch.put(tree, key, v.to_vec()),
            None => batch.delete(tree, key),
        };
    }
    let grows = changes.iter().any(|(_, value)| value.is_some());
    if grows && (count > limits.0 || bytes > limits.1) {
        return Err(host_error(
            "quota_exceeded",
            format!(
                "{kind} quota exceeded ({} entries, {} bytes allowed)",
                limits.0, limits.1
            ),
        ));
    }
    let new_usage = serde_json::to_vec(&Usage { count, bytes }).unwrap_or_default();
    Ok((batch.put(Tree::Meta, usage_key, new_usage), existed))
}

/// Removes an endpoint's kv data, files and their usage totals, so a new endpoint with the same
/// slug starts empty.
pub async fn forget_endpoint(store: &dyn Store, slug: &str) -> Result<(), StoreError> {
    for space in [Space::Kv, Space::Files] {
        let prefix = scoped_key(slug, "");
        loop {
            let page = store.scan_prefix(space.tree(), &prefix, None, 512).await?;
            if page.is_empty() {
                break;
            }
            let batch = page
                .into_iter()
                .fold(Batch::new(), |b, (k, _)| b.delete(space.tree(), k));
            store.apply(batch).await?;
        }
        store
            .delete(Tree::Meta, &usage_key(space.name(), slug))
            .await?;
    }
    Ok(())
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

    async fn kv_get_now(&self, slug: &str, key: &str) -> Result<Option<Value>, HostError> {
        let scoped = scoped_key(slug, key);
        let Some(bytes) = self
            .store
            .get(Tree::HandlerKv, &scoped)
            .await
            .map_err(storage_error)?
        else {
            return Ok(None);
        };
        let stored: Stored = serde_json::from_slice(&bytes)
            .map_err(|e| storage_error(StoreError::Corrupt(e.to_string())))?;
        if stored.exp.is_some_and(|exp| exp <= now_secs()) {
            write_counted(
                self.store.as_ref(),
                &self.quotas,
                Space::Kv,
                slug,
                key,
                None,
            )
            .await?;
            return Ok(None);
        }
        Ok(Some(stored.v))
    }

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
        loop {
            let page = self
                .store
                .scan_prefix(Tree::HandlerKv, &scan_prefix, after.as_deref(), limit + 1)
                .await
                .map_err(storage_error)?;
            let exhausted = page.len() <= limit;
            for (key, bytes) in page {
                after = Some(key.clone());
                let Ok(stored) = serde_json::from_slice::<Stored>(&bytes) else {
                    continue;
                };
                if stored.exp.is_some_and(|exp| exp <= now) {
                    continue;
                }
                let key = String::from_utf8_lossy(&key[slug.len() + 1..]).into_owned();
                if entries.len() == limit {
                    // One more live entry exists: the page ends at the previous one.
                    let last: &KvEntry = entries.last().expect("limit > 0");
                    return Ok(KvPage {
                        cursor: Some(last.key.clone()),
                        entries,
                    });
                }
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

    /// Writes (`Some`) or removes (`None`) one entry of `space`, counted against the quotas.
    async fn write(
        &self,
        space: Space,
        slug: &str,
        key: &str,
        value: Option<Vec<u8>>,
    ) -> Result<bool, HostError> {
        write_counted(self.store.as_ref(), &self.quotas, space, slug, key, value).await
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
        self.on_server(|host| async move { host.kv_get_now(&endpoint, &key).await })
    }

    fn kv_set(
        &self,
        endpoint: &str,
        key: &str,
        value: Value,
        ttl_seconds: Option<u64>,
    ) -> HostFuture<()> {
        let stored = Stored {
            v: value,
            exp: ttl_seconds.map(|t| now_secs().saturating_add(t)),
        };
        let bytes = serde_json::to_vec(&stored).unwrap_or_default();
        let (endpoint, key) = (endpoint.to_owned(), key.to_owned());
        self.on_server(|host| async move {
            host.write(Space::Kv, &endpoint, &key, Some(bytes))
                .await
                .map(drop)
        })
    }

    fn kv_delete(&self, endpoint: &str, key: &str) -> HostFuture<bool> {
        let (endpoint, key) = (endpoint.to_owned(), key.to_owned());
        self.on_server(|host| async move { host.write(Space::Kv, &endpoint, &key, None).await })
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
            host.write(Space::Files, &endpoint, &path, Some(data))
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
        self.on_server(|host| async move { host.write(Space::Files, &endpoint, &path, None).await })
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
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
        write_counted_all(store, &h.quotas, Space::Files, "a", &uploads)
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
        })
        .await;
        let (store, quotas) = (h.store.as_ref(), &h.quotas);
        h.files_write("a", "kept", b"1".to_vec()).await.unwrap();
        let too_many: [Change<'_>; 2] =
            [("x", Some(b"2".as_slice())), ("y", Some(b"3".as_slice()))];
        let err = check_counted(store, quotas, Space::Files, "a", &too_many)
            .await
            .unwrap_err();
        assert_eq!(err.code, "quota_exceeded");
        let err = write_counted_all(store, quotas, Space::Files, "a", &too_many)
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
            write_counted_all(store, quotas, Space::Files, "a", &swap)
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
}
