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

pub struct StoreHost {
    store: Arc<dyn Store>,
    outbound: OutboundClient,
    quotas: Quotas,
    /// Where each endpoint's outbound host allow-list is read, at call time.
    catalog: Arc<Registry>,
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

/// Writes or removes (`value: None`) one entry of an endpoint and adjusts its usage totals in the
/// same atomic batch, retrying when a concurrent writer changed the totals first. Returns
/// whether the entry existed before. Endpoint assets uploaded at create time go through here too,
/// so quotas count them.
pub fn write_counted(
    store: &dyn Store,
    quotas: &Quotas,
    space: Space,
    slug: &str,
    key: &str,
    value: Option<Vec<u8>>,
) -> Result<bool, HostError> {
    let (tree, kind, limits) = (space.tree(), space.name(), space.limits(quotas));
    let key = &scoped_key(slug, key)[..];
    let usage_key = usage_key(kind, slug);
    for _ in 0..16 {
        let old_usage_bytes = store.get(Tree::Meta, &usage_key).map_err(storage_error)?;
        let usage: Usage = old_usage_bytes
            .as_deref()
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or_default();
        let old = store.get(tree, key).map_err(storage_error)?;
        let old_len = old.as_ref().map_or(0, |o| o.len() as u64);
        let new_len = value.as_ref().map_or(0, |v| v.len() as u64);
        let count =
            (usage.count + u64::from(value.is_some())).saturating_sub(u64::from(old.is_some()));
        let bytes = (usage.bytes + new_len).saturating_sub(old_len);
        if value.is_some() && (count > limits.0 || bytes > limits.1) {
            return Err(host_error(
                "quota_exceeded",
                format!(
                    "{kind} quota exceeded ({} entries, {} bytes allowed)",
                    limits.0, limits.1
                ),
            ));
        }
        let new_usage = serde_json::to_vec(&Usage { count, bytes }).unwrap_or_default();
        let mut batch = Batch::new()
            .require_equals(Tree::Meta, usage_key.clone(), old_usage_bytes)
            .require_equals(tree, key.to_vec(), old.clone())
            .put(Tree::Meta, usage_key.clone(), new_usage);
        batch = match &value {
            Some(v) => batch.put(tree, key.to_vec(), v.clone()),
            None => batch.delete(tree, key.to_vec()),
        };
        match store.apply(batch) {
            Ok(()) => return Ok(old.is_some()),
            Err(StoreError::ConditionFailed(_)) => continue,
            Err(e) => return Err(storage_error(e)),
        }
    }
    Err(host_error(
        "storage_busy",
        "too many concurrent writes; try again",
    ))
}

/// Recomputes an endpoint's file usage from what is stored, after files were written outside
/// the handler (assets uploaded with a create or update), so `ctx.files` quotas count them.
pub fn recount_files(store: &dyn Store, quotas: &Quotas, slug: &str) -> Result<(), StoreError> {
    let files = store.scan_prefix(
        Tree::HandlerFiles,
        &scoped_key(slug, ""),
        None,
        quotas.files as usize + 1,
    )?;
    let usage = Usage {
        count: files.len() as u64,
        bytes: files.iter().map(|(_, v)| v.len() as u64).sum(),
    };
    let bytes = serde_json::to_vec(&usage).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    store.put(Tree::Meta, &usage_key(Space::Files.name(), slug), &bytes)
}

/// Removes an endpoint's kv data, files and their usage totals, so a new endpoint with the same
/// slug starts empty.
pub fn forget_endpoint(store: &dyn Store, slug: &str) -> Result<(), StoreError> {
    for space in [Space::Kv, Space::Files] {
        let prefix = scoped_key(slug, "");
        loop {
            let page = store.scan_prefix(space.tree(), &prefix, None, 512)?;
            if page.is_empty() {
                break;
            }
            let batch = page
                .into_iter()
                .fold(Batch::new(), |b, (k, _)| b.delete(space.tree(), k));
            store.apply(batch)?;
        }
        store.delete(Tree::Meta, &usage_key(space.name(), slug))?;
    }
    Ok(())
}

fn ready<T: Send + 'static>(result: Result<T, HostError>) -> HostFuture<T> {
    Box::pin(std::future::ready(result))
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
        }
    }

    fn kv_get_now(&self, slug: &str, key: &str) -> Result<Option<Value>, HostError> {
        let scoped = scoped_key(slug, key);
        let Some(bytes) = self
            .store
            .get(Tree::HandlerKv, &scoped)
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
            )?;
            return Ok(None);
        }
        Ok(Some(stored.v))
    }

    fn kv_list_now(
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
}

impl Host for StoreHost {
    fn kv_get(&self, endpoint: &str, key: &str) -> HostFuture<Option<Value>> {
        ready(self.kv_get_now(endpoint, key))
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
        let result = write_counted(
            self.store.as_ref(),
            &self.quotas,
            Space::Kv,
            endpoint,
            key,
            Some(bytes),
        );
        ready(result.map(|_| ()))
    }

    fn kv_delete(&self, endpoint: &str, key: &str) -> HostFuture<bool> {
        ready(write_counted(
            self.store.as_ref(),
            &self.quotas,
            Space::Kv,
            endpoint,
            key,
            None,
        ))
    }

    fn kv_list(
        &self,
        endpoint: &str,
        prefix: &str,
        limit: usize,
        cursor: Option<String>,
    ) -> HostFuture<KvPage> {
        ready(self.kv_list_now(endpoint, prefix, limit.max(1), cursor))
    }

    fn files_read(&self, endpoint: &str, path: &str) -> HostFuture<Option<Vec<u8>>> {
        ready(
            self.store
                .get(Tree::HandlerFiles, &scoped_key(endpoint, path))
                .map_err(storage_error),
        )
    }

    fn files_write(&self, endpoint: &str, path: &str, data: Vec<u8>) -> HostFuture<()> {
        let result = write_counted(
            self.store.as_ref(),
            &self.quotas,
            Space::Files,
            endpoint,
            path,
            Some(data),
        );
        ready(result.map(|_| ()))
    }

    fn files_list(&self, endpoint: &str, prefix: &str) -> HostFuture<Vec<FileEntry>> {
        let result = self
            .store
            .scan_prefix(
                Tree::HandlerFiles,
                &scoped_key(endpoint, prefix),
                None,
                self.quotas.files as usize,
            )
            .map_err(storage_error)
            .map(|entries| {
                entries
                    .into_iter()
                    .map(|(key, bytes)| FileEntry {
                        path: String::from_utf8_lossy(&key[endpoint.len() + 1..]).into_owned(),
                        size: bytes.len() as u64,
                    })
                    .collect()
            });
        ready(result)
    }

    fn files_delete(&self, endpoint: &str, path: &str) -> HostFuture<bool> {
        ready(write_counted(
            self.store.as_ref(),
            &self.quotas,
            Space::Files,
            endpoint,
            path,
            None,
        ))
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
                    return ready(Err(host_error(
                        "invalid_header",
                        format!("invalid header {name:?}"),
                    )))
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
                .map_err(|e| host_error(e.code(), e.to_string()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::store::SledStore;

    fn host(quotas: Quotas) -> StoreHost {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let config = Config::new("/nonexistent");
        let catalog = Arc::new(Registry::load(store.clone()).unwrap());
        StoreHost::new(
            store,
            OutboundClient::new(&config.outbound),
            quotas,
            catalog,
        )
    }

    #[tokio::test]
    async fn kv_is_scoped_per_endpoint_and_pages() {
        let h = host(Quotas::default());
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
        let h = host(Quotas::default());
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
        });
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
        });
        h.kv_set("a", "1", Value::from(1), None).await.unwrap();
        h.files_write("a", "x", b"1".to_vec()).await.unwrap();
        forget_endpoint(h.store.as_ref(), "a").unwrap();
        assert_eq!(h.kv_get("a", "1").await.unwrap(), None);
        assert!(h.files_list("a", "").await.unwrap().is_empty());
        h.kv_set("a", "2", Value::from(2), None).await.unwrap();

        // Files stored outside the handler (uploads) count once recounted.
        h.store.put(Tree::HandlerFiles, b"a/up1", b"1").unwrap();
        h.store.put(Tree::HandlerFiles, b"a/up2", b"2").unwrap();
        recount_files(h.store.as_ref(), &h.quotas, "a").unwrap();
        assert_eq!(
            h.files_write("a", "more", b"3".to_vec())
                .await
                .unwrap_err()
                .code,
            "quota_exceeded"
        );
    }
}
