//! Handler storage: each endpoint's kv entries and files in the store, and the usage totals
//! that enforce quotas without scanning (per endpoint, and per builder across all of its
//! endpoints, changed in the same atomic batch as the data they count).
//!
//! The runtime's host (`js_handlers::host`) serves `ctx.kv` and `ctx.files` from here; endpoint
//! uploads (`endpoints::files`) and the seed catalog write through the same counted writes.
//!
//! # Layout
//! - this file: the counted writes and usage totals both spaces share.
//! - `kv`: `ctx.kv`'s entries with their versionstamps, and atomic commits (checks, set,
//!   delete, sum) as one counted batch.
//! - `rekey`: the start-up move of data an earlier release kept under slugs.
//! - `write_pace`: each builder's bytes written per second, taken before a handler's write runs.
//!
//! Everything is kept under the endpoint's id (`ep_…`), never its slug: ids are never reused,
//! slugs are freed by a delete.

pub mod kv;
pub mod rekey;
pub(crate) mod write_pace;

use sandbox::HostError;
use serde::{Deserialize, Serialize};

use crate::config::Quotas;
use crate::store::{
    Batch, BuilderUsageRow, HandlerEntryRow, HandlerSpace, HandlerUsageRow, Store, StoreError,
    StoreResult,
};

/// Running totals kept beside the data so quota checks never scan: one per endpoint and space,
/// naming the builder whose totals include it.
#[derive(Serialize, Deserialize, Default, Clone, Debug, PartialEq)]
pub(crate) struct Usage {
    count: u64,
    bytes: u64,
    /// The builder whose [`Totals`] include this endpoint's. Absent: nobody's (an operator's or
    /// admin's endpoint, or totals recorded before builder totals existed; [`count_toward_owners`]
    /// moves those into their owner's totals at start-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    builder: Option<String>,
    /// kv only: the number of the endpoint's last commit, whose versionstamp the entries it
    /// wrote carry ([`kv`]). Guarded with the record, so two commits never share one.
    #[serde(default, skip_serializing_if = "is_zero")]
    seq: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// The record as endpoint `endpoint`'s in `space`, stored as `entry` (its JSON).
    fn row(&self, space: Space, endpoint: &str, entry: Vec<u8>) -> HandlerUsageRow {
        let counts = (self.count, self.bytes);
        HandlerUsageRow::new(
            space.stored(),
            endpoint,
            self.builder.as_deref(),
            counts,
            entry,
        )
    }
}

/// A builder's totals in one space: exactly the sum of the [`Usage`] records naming it, because
/// every batch that changes a record changes the totals it counts toward with it.
#[derive(Serialize, Deserialize, Default, Clone, Copy, Debug, PartialEq)]
pub(crate) struct Totals {
    pub(crate) count: u64,
    pub(crate) bytes: u64,
}

/// `key` of the endpoint with id `endpoint`'s `space`, as stored (`None`: there is none).
pub(crate) async fn read_entry(
    store: &dyn Store,
    space: Space,
    endpoint: &str,
    key: &str,
) -> StoreResult<Option<Vec<u8>>> {
    let mut found = store
        .handler_entries(space.stored(), endpoint, &[key])
        .await?;
    Ok(found.pop().flatten())
}

pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

pub(crate) fn host_error(code: &str, message: impl Into<String>) -> HostError {
    HostError {
        code: code.to_string(),
        message: message.into(),
    }
}

pub(crate) fn storage_error(e: StoreError) -> HostError {
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
    /// The space as the store names it.
    pub(crate) fn stored(self) -> HandlerSpace {
        match self {
            Space::Kv => HandlerSpace::Kv,
            Space::Files => HandlerSpace::Files,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        self.stored().name()
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
    endpoint: &str,
    builder: Option<&str>,
    key: &str,
    value: Option<Vec<u8>>,
) -> Result<bool, HostError> {
    let changes = [(key, value.as_deref())];
    let existed = write_counted_all(store, quotas, space, endpoint, builder, &changes).await?;
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
    endpoint: &str,
    builder: Option<&str>,
    changes: &[Change<'_>],
) -> Result<usize, HostError> {
    for _ in 0..16 {
        let Some((batch, existed)) =
            counted_batch(store, Some(quotas), space, endpoint, builder, changes).await?
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
    endpoint: &str,
    builder: Option<&str>,
    changes: &[Change<'_>],
) -> Result<(), HostError> {
    counted_batch(store, Some(quotas), space, endpoint, builder, changes)
        .await
        .map(drop)
}

/// A failed read while planning a counted write.
pub(crate) enum Planning {
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

/// A usage record or totals as stored, with what they say (nothing counted when there are
/// none, or they do not parse).
fn parsed<T: serde::de::DeserializeOwned + Default>(raw: Option<Vec<u8>>) -> (Option<Vec<u8>>, T) {
    let value = raw
        .as_deref()
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or_default();
    (raw, value)
}

/// `builder`'s totals in `space` as stored, and what they say.
pub(crate) async fn read_totals(
    store: &dyn Store,
    space: Space,
    builder: &str,
) -> StoreResult<(Option<Vec<u8>>, Totals)> {
    Ok(parsed(store.builder_usage(space.stored(), builder).await?))
}

/// Puts `builder`'s `totals` in `space` (read as `raw`), or removes them when they are zero.
fn put_totals(
    batch: Batch,
    space: Space,
    builder: &str,
    raw: Option<Vec<u8>>,
    totals: Totals,
) -> Batch {
    let batch = batch.require_builder_usage(space.stored(), builder, raw);
    if totals == Totals::default() {
        batch.delete_builder_usage(space.stored(), builder)
    } else {
        let entry = serde_json::to_vec(&totals).unwrap_or_default();
        let counts = (totals.count, totals.bytes);
        batch.put_builder_usage(BuilderUsageRow::new(space.stored(), builder, counts, entry))
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
pub(crate) async fn counted_batch(
    store: &dyn Store,
    quotas: Option<&Quotas>,
    space: Space,
    endpoint: &str,
    builder: Option<&str>,
    changes: &[Change<'_>],
) -> Result<Option<(Batch, usize)>, HostError> {
    plan(store, quotas, space, endpoint, builder, changes)
        .await
        .map_err(HostError::from)
}

pub(crate) async fn plan(
    store: &dyn Store,
    quotas: Option<&Quotas>,
    space: Space,
    endpoint: &str,
    builder: Option<&str>,
    changes: &[Change<'_>],
) -> Result<Option<(Batch, usize)>, Planning> {
    let usage = UsageRead::read(store, space, endpoint).await?;
    if changes.is_empty() && (usage.raw.is_none() || usage.usage.builder.as_deref() == builder) {
        return Ok(None);
    }
    // One read for all of them (one statement on PostgreSQL, not one round trip per key).
    let keys: Vec<&str> = changes.iter().map(|&(key, _)| key).collect();
    let olds = store
        .handler_entries(space.stored(), endpoint, &keys)
        .await?;
    let read: Vec<EntryChange<'_>> = (changes.iter().zip(olds))
        .map(|(&(key, new), old)| EntryChange { key, old, new })
        .collect();
    let existed = read.iter().filter(|c| c.old.is_some()).count();
    let seq = usage.usage.seq;
    let batch = plan_read(store, quotas, builder, usage, &read, seq).await?;
    Ok(Some((batch, existed)))
}

/// An endpoint's usage record as read, to plan a batch on.
pub(crate) struct UsageRead {
    space: Space,
    endpoint: String,
    raw: Option<Vec<u8>>,
    usage: Usage,
}

impl UsageRead {
    pub(crate) async fn read(
        store: &dyn Store,
        space: Space,
        endpoint: &str,
    ) -> Result<Self, StoreError> {
        let (raw, usage) = parsed(store.handler_usage(space.stored(), endpoint).await?);
        Ok(UsageRead {
            space,
            endpoint: endpoint.to_owned(),
            raw,
            usage,
        })
    }

    /// The number of the endpoint's last kv commit.
    pub(crate) fn seq(&self) -> u64 {
        self.usage.seq
    }

    /// Guards `batch` with the record as read, writing nothing.
    pub(crate) fn guard(&self, batch: Batch) -> Batch {
        batch.require_handler_usage(self.space.stored(), &self.endpoint, self.raw.clone())
    }
}

/// One entry a planned batch changes: its key, its bytes as read (the batch is guarded with
/// them) and its new bytes (`None`: removed).
pub(crate) struct EntryChange<'a> {
    pub(crate) key: &'a str,
    pub(crate) old: Option<Vec<u8>>,
    pub(crate) new: Option<&'a [u8]>,
}

/// The batch that applies `changes` (read with `usage`, which names the endpoint and its
/// space) and the new usage record, numbered `seq`, as [`counted_batch`] describes.
pub(crate) async fn plan_read(
    store: &dyn Store,
    quotas: Option<&Quotas>,
    builder: Option<&str>,
    usage: UsageRead,
    changes: &[EntryChange<'_>],
    seq: u64,
) -> Result<Batch, Planning> {
    let builder = builder.map(str::to_owned);
    let mut batch = usage.guard(Batch::new());
    let UsageRead {
        space,
        endpoint,
        usage: old,
        ..
    } = usage;
    let (stored, kind) = (space.stored(), space.name());
    let Usage {
        mut count,
        mut bytes,
        ..
    } = old;
    for change in changes {
        let old_len = change.old.as_ref().map_or(0, |o| o.len() as u64);
        let new_len = change.new.map_or(0, |v| v.len() as u64);
        count = (count + u64::from(change.new.is_some()))
            .saturating_sub(u64::from(change.old.is_some()));
        bytes = (bytes + new_len).saturating_sub(old_len);
        batch = batch.require_handler_entry(stored, &endpoint, change.key, change.old.clone());
        batch = match change.new {
            Some(v) => batch.put_handler_entry(HandlerEntryRow::new(
                stored,
                &endpoint,
                change.key,
                v.into(),
            )),
            None => batch.delete_handler_entry(stored, &endpoint, change.key),
        };
    }
    let grows = changes.iter().any(|c| c.new.is_some());
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
        seq,
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
        let (raw, before) = read_totals(store, space, holder).await?;
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
        batch = put_totals(batch, space, holder, raw, after);
    }
    let record = serde_json::to_vec(&new).unwrap_or_default();
    Ok(batch.put_handler_usage(new.row(space, &endpoint, record)))
}

/// Refuses a write that raises a builder's total past its limit. A write that raises neither
/// total passes even over a limit (lowered since), so overwriting a value in place keeps working.
pub(crate) fn check_builder_totals(
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

/// Removes the kv data, files and usage records of the endpoint with id `endpoint` (deleted);
/// the builder whose totals counted them gets that room back, in the same batches that remove
/// the data.
pub async fn forget_endpoint(store: &dyn Store, endpoint: &str) -> Result<(), StoreError> {
    for space in [Space::Kv, Space::Files] {
        loop {
            let (usage_raw, usage): (_, Usage) =
                parsed(store.handler_usage(space.stored(), endpoint).await?);
            let page =
                (store.handler_entries_under(space.stored(), endpoint, "", None, 512)).await?;
            let batch = if page.is_empty() {
                let Some(raw) = usage_raw else { break };
                // No entries left: drop the record, and whatever it still counted (nothing
                // unless the totals and the data had parted) from its builder's totals.
                let mut batch = Batch::new()
                    .require_handler_usage(space.stored(), endpoint, Some(raw))
                    .delete_handler_usage(space.stored(), endpoint);
                if let Some(holder) = &usage.builder {
                    let (raw, mut totals) = read_totals(store, space, holder).await?;
                    totals.count = totals.count.saturating_sub(usage.count);
                    totals.bytes = totals.bytes.saturating_sub(usage.bytes);
                    batch = put_totals(batch, space, holder, raw, totals);
                }
                batch
            } else {
                let changes: Vec<Change<'_>> =
                    page.iter().map(|(k, _)| (k.as_str(), None)).collect();
                // Removals keep the record's holder: the endpoint is gone from the catalog.
                match plan(
                    store,
                    None,
                    space,
                    endpoint,
                    usage.builder.as_deref(),
                    &changes,
                )
                .await
                {
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
    for (endpoint, builder) in endpoints {
        for space in [Space::Kv, Space::Files] {
            for attempt in 0.. {
                let planned = match plan(store, None, space, endpoint, builder, &[]).await {
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
                        tracing::warn!(endpoint, "usage record kept changing; left to its writers");
                        break;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(moved)
}
