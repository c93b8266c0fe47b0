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

/// Storage quotas: per endpoint, and totals across all of one builder's endpoints (a builder
/// could otherwise multiply the per-endpoint quotas by creating endpoints). The operator's and
/// the admin's endpoints have the per-endpoint quotas only.
#[derive(Clone, Debug)]
pub struct Quotas {
    pub kv_keys: u64,
    pub kv_bytes: u64,
    pub files: u64,
    pub file_bytes: u64,
    /// kv keys of all of a builder's endpoints together.
    pub builder_kv_keys: u64,
    /// kv bytes (keys' stored values) of all of a builder's endpoints together.
    pub builder_kv_bytes: u64,
    /// File bytes of all of a builder's endpoints together (uploaded and handler-written).
    pub builder_file_bytes: u64,
}

impl Quotas {
    /// Defaults of the builder totals (`--builder-kv-keys`, `--builder-kv-mb`,
    /// `--builder-files-mb`): room for a few endpoints at their full quotas.
    pub const DEFAULT_BUILDER_KV_KEYS: u64 = 50_000;
    pub const DEFAULT_BUILDER_KV_MB: u64 = 64;
    pub const DEFAULT_BUILDER_FILES_MB: u64 = 64;
}

impl Default for Quotas {
    fn default() -> Self {
        const MIB: u64 = 1024 * 1024;
        Self {
            kv_keys: 10_000,
            kv_bytes: 16 * MIB,
            files: 100,
            file_bytes: 16 * MIB,
            builder_kv_keys: Self::DEFAULT_BUILDER_KV_KEYS,
            builder_kv_bytes: Self::DEFAULT_BUILDER_KV_MB * MIB,
            builder_file_bytes: Self::DEFAULT_BUILDER_FILES_MB * MIB,
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

/// Running totals kept beside the data so quota checks never scan: one per endpoint and space,
/// naming the builder whose totals include it.
#[derive(Serialize, Deserialize, Default, Clone, Debug, PartialEq)]
struct Usage {
    count: u64,
    bytes: u64,
    /// The builder whose [`Totals`] include this endpoint's. Absent: nobody's (an operator's or
    /// admin's endpoint, or totals recorded before builder totals existed; [`count_toward_owners`]
    /// moves those into their owner's totals at start-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    builder: Option<String>,
}

/// A builder's totals in one space: exactly the sum of the [`Usage`] records naming it, because
/// every batch that changes a record changes the totals it counts toward with it.
#[derive(Serialize, Deserialize, Default, Clone, Copy, Debug, PartialEq)]
struct Totals {
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

fn builder_usage_key(kind: &str, builder: &str) -> Vec<u8> {
    format!("builder-usage/{kind}/{builder}").into_bytes()
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

    /// (entries, bytes) allowed across all of one builder's endpoints; files are bounded by
    /// bytes only (their count is bounded per endpoint).
    fn builder_limits(self, quotas: &Quotas) -> (Option<u64>, u64) {
        match self {
            Space::Kv => (Some(quotas.builder_kv_keys), quotas.builder_kv_bytes),
            Space::Files => (None, quotas.builder_file_bytes),
        }
    }

    /// What an entry is called in quota messages.
    fn entries(self) -> &'static str {
        match self {
            Space::Kv => "keys",
            Space::Files => "files",
        }
    }
}

/// One change to an endpoint's space: the key and its new value, `None` to remove it.
pub type Change<'a> = (&'a str, Option<&'a [u8]>);

/// Writes or removes (`value: None`) one entry of an endpoint and adjusts its usage totals (and
/// its builder's, `builder` being the endpoint's owning builder if any) in the same atomic batch,
/// retrying when a concurrent writer changed the totals first. Returns whether the entry existed
/// before.
pub async fn write_counted(
    store: &dyn Store,
    quotas: &Quotas,
    space: Space,
    slug: &str,
    builder: Option<&str>,
    key: &str,
    value: Option<Vec<u8>>,
) -> Result<bool, HostError> {
    let changes = [(key, value.as_deref())];
    let existed = write_counted_all(store, quotas, space, slug, builder, &changes).await?;
    Ok(existed == 1)
}

/// Like [`write_counted`] for several entries (distinct keys) at once: all of them land with the
/// adjusted totals, or nothing changes (`quota_exceeded` when the totals after the whole set
/// would pass the endpoint's quota or its builder's). Endpoint assets uploaded with a create or
/// update go through here, so quotas count them. Returns how many of the entries existed before.
pub async fn write_counted_all(
    store: &dyn Store,
    quotas: &Quotas,
    space: Space,
    slug: &str,
    builder: Option<&str>,
    changes: &[Change<'_>],
) -> Result<usize, HostError> {
    for _ in 0..16 {
        let Some((batch, existed)) =
            counted_batch(store, Some(quotas), space, slug, builder, changes).await?
        else {
            return Ok(0);
        };
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
    builder: Option<&str>,
    changes: &[Change<'_>],
) -> Result<(), HostError> {
    counted_batch(store, Some(quotas), space, slug, builder, changes)
        .await
        .map(drop)
}

/// A failed read while planning a counted write.
enum Planning {
    Refused(HostError),
    Store(StoreError),
}

impl From<Planning> for HostError {
    fn from(e: Planning) -> Self {
        match e {
            Planning::Refused(e) => e,
            Planning::Store(e) => storage_error(e),
        }
    }
}

impl From<StoreError> for Planning {
    fn from(e: StoreError) -> Self {
        Planning::Store(e)
    }
}

async fn read_json<T: serde::de::DeserializeOwned + Default>(
    store: &dyn Store,
    key: &[u8],
) -> Result<(Option<Vec<u8>>, T), StoreError> {
    let raw = store.get(Tree::Meta, key).await?;
    let value = raw
        .as_deref()
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or_default();
    Ok((raw, value))
}

/// Puts `totals` under `key`, or removes the key when they are zero.
fn put_totals(batch: Batch, key: Vec<u8>, totals: Totals) -> Batch {
    if totals == Totals::default() {
        batch.delete(Tree::Meta, key)
    } else {
        batch.put(
            Tree::Meta,
            key,
            serde_json::to_vec(&totals).unwrap_or_default(),
        )
    }
}

/// The batch that applies `changes` to an endpoint's space and its new usage record (counted
/// toward `builder`), guarded by the records, totals and entries as read (a concurrent writer
/// makes it fail, and the caller reads again), with how many of the entries existed. `None`:
/// there is nothing to write. `quotas: None` skips the quota checks (removals, start-up
/// accounting).
///
/// The builder totals change by the record's difference: when the record named another builder
/// (or none), its whole usage moves from that one's totals to `builder`'s in the same batch.
async fn counted_batch(
    store: &dyn Store,
    quotas: Option<&Quotas>,
    space: Space,
    slug: &str,
    builder: Option<&str>,
    changes: &[Change<'_>],
) -> Result<Option<(Batch, usize)>, HostError> {
    plan(store, quotas, space, slug, builder, changes)
        .await
        .map_err(HostError::from)
}

async fn plan(
    store: &dyn Store,
    quotas: Option<&Quotas>,
    space: Space,
    slug: &str,
    builder: Option<&str>,
    changes: &[Change<'_>],
) -> Result<Option<(Batch, usize)>, Planning> {
    let (tree, kind) = (space.tree(), space.name());
    let usage_key = usage_key(kind, slug);
    let (old_raw, old): (_, Usage) = read_json(store, &usage_key).await?;
    let builder = builder.map(str::to_owned);
    if changes.is_empty() && (old_raw.is_none() || old.builder == builder) {
        return Ok(None);
    }
    let Usage {
        mut count,
        mut bytes,
        ..
    } = old;
    let mut existed = 0;
    let mut batch = Batch::new().require_equals(Tree::Meta, usage_key.clone(), old_raw.clone());
    for &(key, value) in changes {
        let key = scoped_key(slug, key);
        let old = store.get(tree, &key).await?;
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
    if let Some(quotas) = quotas.filter(|_| grows) {
        let limits = space.limits(quotas);
        if count > limits.0 || bytes > limits.1 {
            return Err(Planning::Refused(host_error(
                "quota_exceeded",
                format!(
                    "{kind} quota exceeded ({} entries, {} bytes allowed)",
                    limits.0, limits.1
                ),
            )));
        }
    }
    let new = Usage {
        count,
        bytes,
        builder,
    };
    // The builders whose totals change: the record's holder before and after (once if the same).
    let mut holders: Vec<&str> = old
        .builder
        .iter()
        .chain(&new.builder)
        .map(String::as_str)
        .collect();
    holders.dedup();
    for holder in holders {
        let key = builder_usage_key(kind, holder);
        let (raw, before): (_, Totals) = read_json(store, &key).await?;
        let mut after = before;
        if old.builder.as_deref() == Some(holder) {
            after.count = after.count.saturating_sub(old.count);
            after.bytes = after.bytes.saturating_sub(old.bytes);
        }
        if new.builder.as_deref() == Some(holder) {
            after.count += new.count;
            after.bytes += new.bytes;
            if let Some(quotas) = quotas.filter(|_| grows) {
                check_builder_totals(space, quotas, before, after)?;
            }
        }
        batch = put_totals(
            batch.require_equals(Tree::Meta, key.clone(), raw),
            key,
            after,
        );
    }
    let record = serde_json::to_vec(&new).unwrap_or_default();
    Ok(Some((batch.put(Tree::Meta, usage_key, record), existed)))
}

/// Refuses a write that raises a builder's total past its limit. A write that raises neither
/// total passes even over a limit (lowered since), so overwriting a value in place keeps working.
fn check_builder_totals(
    space: Space,
    quotas: &Quotas,
    before: Totals,
    after: Totals,
) -> Result<(), Planning> {
    let (max_entries, max_bytes) = space.builder_limits(quotas);
    let over_entries =
        max_entries.is_some_and(|max| after.count > before.count && after.count > max);
    let over_bytes = after.bytes > before.bytes && after.bytes > max_bytes;
    if !over_entries && !over_bytes {
        return Ok(());
    }
    let allowed = match max_entries {
        Some(max) => format!("{max} {}, {max_bytes} bytes", space.entries()),
        None => format!("{max_bytes} bytes"),
    };
    Err(Planning::Refused(host_error(
        "quota_exceeded",
        format!(
            "the builder's total {} quota across all its endpoints is exceeded ({allowed} allowed; {} {} and {} bytes used after this write)",
            space.name(),
            after.count,
            space.entries(),
            after.bytes
        ),
    )))
}

/// Removes an endpoint's kv data, files and their usage records, so a new endpoint with the same
/// slug starts empty; the builder whose totals counted them gets that room back, in the same
/// batches that remove the data.
pub async fn forget_endpoint(store: &dyn Store, slug: &str) -> Result<(), StoreError> {
    for space in [Space::Kv, Space::Files] {
        let (prefix, usage_key) = (scoped_key(slug, ""), usage_key(space.name(), slug));
        loop {
            let (usage_raw, usage): (_, Usage) = read_json(store, &usage_key).await?;
            let page = store.scan_prefix(space.tree(), &prefix, None, 512).await?;
            let batch = if page.is_empty() {
                let Some(raw) = usage_raw else { break };
                // No entries left: drop the record, and whatever it still counted (nothing
                // unless the totals and the data had parted) from its builder's totals.
                let mut batch = Batch::new()
                    .require_equals(Tree::Meta, usage_key.clone(), Some(raw))
                    .delete(Tree::Meta, usage_key.clone());
                if let Some(holder) = &usage.builder {
                    let key = builder_usage_key(space.name(), holder);
                    let (raw, mut totals): (_, Totals) = read_json(store, &key).await?;
                    totals.count = totals.count.saturating_sub(usage.count);
                    totals.bytes = totals.bytes.saturating_sub(usage.bytes);
                    batch = put_totals(
                        batch.require_equals(Tree::Meta, key.clone(), raw),
                        key,
                        totals,
                    );
                }
                batch
            } else {
                let keys: Vec<String> = page
                    .iter()
                    .map(|(k, _)| String::from_utf8_lossy(&k[prefix.len()..]).into_owned())
                    .collect();
                let changes: Vec<Change<'_>> = keys.iter().map(|k| (k.as_str(), None)).collect();
                // Removals keep the record's holder: the endpoint is gone from the catalog.
                match plan(store, None, space, slug, usage.builder.as_deref(), &changes).await {
                    Ok(Some((batch, _))) => batch,
                    Ok(None) => break,
                    Err(Planning::Store(e)) => return Err(e),
                    Err(Planning::Refused(e)) => return Err(StoreError::Engine(e.message)),
                }
            };
            match store.apply(batch).await {
                Ok(()) | Err(StoreError::ConditionFailed(_)) => continue,
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// Makes every endpoint's usage count toward its owning builder's totals: records written
/// before builder totals existed (or naming someone else) move into the owner's totals, each in
/// one atomic batch. Run at start-up; does nothing for records already right, so every node of
/// a cluster may run it. Returns how many records moved.
pub async fn count_toward_owners<'a>(
    store: &dyn Store,
    endpoints: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
) -> Result<usize, StoreError> {
    let mut moved = 0;
    for (slug, builder) in endpoints {
        for space in [Space::Kv, Space::Files] {
            for attempt in 0.. {
                let planned = match plan(store, None, space, slug, builder, &[]).await {
                    Ok(p) => p,
                    Err(Planning::Store(e)) => return Err(e),
                    Err(Planning::Refused(e)) => return Err(StoreError::Engine(e.message)),
                };
                // Nothing to move, or no record yet (the first write creates it, naming the
                // owner).
                let Some((batch, _)) = planned else {
                    break;
                };
                match store.apply(batch).await {
                    Ok(()) => {
                        moved += 1;
                        break;
                    }
                    Err(StoreError::ConditionFailed(_)) if attempt < 16 => continue,
                    Err(StoreError::ConditionFailed(_)) => {
                        // Writers keep moving it: each of their batches names the owner too.
                        tracing::warn!(slug, "usage record kept changing; left to its writers");
                        break;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(moved)
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
            self.write(Space::Kv, slug, key, None).await?;
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

    /// Writes (`Some`) or removes (`None`) one entry of `space`, counted against the endpoint's
    /// quotas and its owning builder's totals (the owner as the catalog has it now).
    async fn write(
        &self,
        space: Space,
        slug: &str,
        key: &str,
        value: Option<Vec<u8>>,
    ) -> Result<bool, HostError> {
        let compiled = self.catalog.get(slug);
        let builder = compiled.as_ref().and_then(|c| c.endpoint.owner_builder());
        let store = self.store.as_ref();
        write_counted(store, &self.quotas, space, slug, builder, key, value).await
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
