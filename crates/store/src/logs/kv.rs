//! Endpoint logs in the trees of a key-value engine (sled), kept in pages.
//!
//! Every call leaves a log entry, and the activity recorder appends each endpoint's entries of
//! a round (50 ms) at once. Stored one key each, an entry cost a write, and once the log was at
//! its cap a delete and the reads behind it: about a tenth of a small call's CPU, and the
//! round's batch of hundreds of keys stalled the calls beside it (bench/RESULTS.md, "Endpoint
//! logs in pages"). So an append stores its entries in pages of up to [`PAGE_ENTRIES`] and
//! [`PAGE_BYTES`], one key each, and pruning drops whole pages, rewriting at most the
//! oldest one's remainder.
//!
//! A page is stored under `{endpoint}/{id}` where `id` is its oldest entry's, so the keys sort
//! as the entries do and pages never overlap: an entry older than the newest stored (the rule
//! broken: a node whose clock is behind) goes into the page whose range it falls in, or before
//! every page in a page of its own. An entry stored alone by an earlier release (its JSON
//! under its own id) reads as a page of one, so data dirs need no migration. A page is
//! `[0, 1]`, its number of entries (u32), then each entry's id and bytes, each after its
//! length (u32, little-endian); no JSON entry starts with a zero byte.
//!
//! The count of entries per endpoint is kept in `meta` ([`count_key`]) so that an append knows
//! how many to prune without reading the log.

use std::collections::btree_map::{BTreeMap, Entry};

use crate::{Batch, Store, StoreError, StoreResult, Tree};

use super::LogRow;

/// Entries a page holds at most.
const PAGE_ENTRIES: usize = 64;
/// Bytes of entries a page holds at most, unless its one entry is larger.
const PAGE_BYTES: usize = 64 * 1024;
/// What a page's value starts with (its format's version after a byte no JSON starts with).
const PAGE_MAGIC: [u8; 2] = [0, 1];
/// Pages read at a time when paging or pruning.
const SCAN: usize = 16;

fn prefix(endpoint: &str) -> Vec<u8> {
    format!("{endpoint}/").into_bytes()
}

fn key_of(prefix: &[u8], id: &str) -> Vec<u8> {
    [prefix, id.as_bytes()].concat()
}

/// Where an endpoint's number of stored entries is kept (in `meta`).
pub fn count_key(endpoint: &str) -> Vec<u8> {
    format!("log_count/{endpoint}").into_bytes()
}

async fn read_count<S: Store + ?Sized>(
    store: &S,
    key: &[u8],
) -> StoreResult<(Option<Vec<u8>>, u64)> {
    let raw = store.get(Tree::Meta, key).await?;
    let n = raw
        .as_deref()
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((raw, n))
}

/// A page's value: its entries, oldest first.
fn encode<'a>(rows: impl ExactSizeIterator<Item = &'a LogRow> + Clone) -> Vec<u8> {
    let size: usize = rows.clone().map(|r| 8 + r.id.len() + r.entry.len()).sum();
    let mut out = Vec::with_capacity(PAGE_MAGIC.len() + 4 + size);
    out.extend_from_slice(&PAGE_MAGIC);
    push_len(&mut out, rows.len());
    for row in rows {
        push_len(&mut out, row.id.len());
        out.extend_from_slice(row.id.as_bytes());
        push_len(&mut out, row.entry.len());
        out.extend_from_slice(&row.entry);
    }
    out
}

fn push_len(out: &mut Vec<u8>, len: usize) {
    // Lengths are of values the store already holds in memory, far below 4 GiB.
    out.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_le_bytes());
}

fn corrupt(key: &[u8]) -> StoreError {
    StoreError::Corrupt(format!("log page {}", String::from_utf8_lossy(key)))
}

/// The ids and entries a stored value holds, oldest first, borrowed from it: a page's, or the
/// one entry an earlier release stored alone under its id (the key's).
fn read_page<'a>(
    prefix: &[u8],
    key: &'a [u8],
    value: &'a [u8],
) -> StoreResult<Vec<(&'a [u8], &'a [u8])>> {
    let Some(rest) = value.strip_prefix(&PAGE_MAGIC[..]) else {
        let id = key.strip_prefix(prefix).ok_or_else(|| corrupt(key))?;
        return Ok(vec![(id, value)]);
    };
    let mut reader = Reader(rest);
    let count = reader.len().ok_or_else(|| corrupt(key))?;
    // Each entry takes at least its two lengths: a count past that is corrupt, not a reason to
    // reserve memory.
    let mut entries = Vec::with_capacity(count.min(value.len() / 8));
    for _ in 0..count {
        let id = reader.field().ok_or_else(|| corrupt(key))?;
        let entry = reader.field().ok_or_else(|| corrupt(key))?;
        entries.push((id, entry));
    }
    if !reader.0.is_empty() {
        return Err(corrupt(key));
    }
    Ok(entries)
}

fn id_of(key: &[u8], id: &[u8]) -> StoreResult<String> {
    String::from_utf8(id.to_vec()).map_err(|_| corrupt(key))
}

/// The entries a stored value holds, oldest first ([`read_page`]), copied out.
fn decode(prefix: &[u8], key: &[u8], value: &[u8]) -> StoreResult<Vec<LogRow>> {
    (read_page(prefix, key, value)?.into_iter())
        .map(|(id, entry)| {
            Ok(LogRow {
                id: id_of(key, id)?,
                entry: entry.to_vec(),
            })
        })
        .collect()
}

/// The id of the newest entry a stored value holds, without copying the entries.
fn last_id(prefix: &[u8], key: &[u8], value: &[u8]) -> StoreResult<String> {
    let (id, _) = (read_page(prefix, key, value)?.pop()).ok_or_else(|| corrupt(key))?;
    id_of(key, id)
}

/// What is left of a page to read.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, tail) = (n <= self.0.len()).then(|| self.0.split_at(n))?;
        self.0 = tail;
        Some(head)
    }

    fn len(&mut self) -> Option<usize> {
        let bytes: [u8; 4] = self.take(4)?.try_into().ok()?;
        Some(u32::from_le_bytes(bytes) as usize)
    }

    /// A length, then that many bytes.
    fn field(&mut self) -> Option<&'a [u8]> {
        let n = self.len()?;
        self.take(n)
    }
}

/// The number of entries a stored value holds, without copying them.
fn entries_in(value: &[u8]) -> usize {
    match value.strip_prefix(&PAGE_MAGIC[..]) {
        Some(rest) => rest
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, |b| u32::from_le_bytes(b) as usize),
        None => 1,
    }
}

/// A stored page this append changes: its value as read (the batch's condition) and its
/// entries after the change.
struct Changed {
    read: Vec<u8>,
    rows: Vec<LogRow>,
}

pub(crate) async fn append<S: Store + ?Sized>(
    store: &S,
    endpoint: &str,
    rows: &[LogRow],
    keep: u64,
) -> StoreResult<()> {
    // In id order, each id once (the last of an id wins, as a put of the same key would).
    let mut by_id: BTreeMap<&str, &LogRow> = BTreeMap::new();
    for row in rows {
        by_id.insert(&row.id, row);
    }
    let keep_now = usize::try_from(keep).unwrap_or(usize::MAX);
    let rows: Vec<&LogRow> = by_id.into_values().collect();
    let rows = &rows[rows.len().saturating_sub(keep_now)..];
    if rows.is_empty() {
        return Ok(());
    }
    let prefix = prefix(endpoint);
    let counter = count_key(endpoint);
    // Pages, pruning and count move together; again when a concurrent writer changed the
    // count or a page this append read (at the cap an append leaves the count as it was, so
    // the count alone would let two appends that each prune the same page both land, and the
    // log would grow past `keep`).
    loop {
        let (raw, stored) = read_count(store, &counter).await?;
        let newest = match store
            .scan_prefix_rev(Tree::Logs, &prefix, None, 1)
            .await?
            .pop()
        {
            Some((key, value)) => Some(last_id(&prefix, &key, &value)?),
            None => None,
        };
        // As a rule every entry is newer than the newest stored: those go in new pages.
        let fresh_from = rows.partition_point(|row| newest.as_deref() >= Some(row.id.as_str()));
        let (late, fresh) = rows.split_at(fresh_from);
        let mut changed: BTreeMap<Vec<u8>, Changed> = BTreeMap::new();
        let mut alone: Vec<&LogRow> = Vec::new();
        let mut added = fresh.len() as u64;
        for row in late {
            // The page whose range the entry falls in: the last whose key is at most its own.
            let mut upto = key_of(&prefix, &row.id);
            upto.push(0);
            let holder = store
                .scan_prefix_rev(Tree::Logs, &prefix, Some(&upto), 1)
                .await?
                .pop();
            let Some((key, value)) = holder else {
                // Older than every page: a page of its own, before them all.
                alone.push(row);
                added += 1;
                continue;
            };
            let page = match changed.entry(key) {
                Entry::Occupied(page) => page.into_mut(),
                Entry::Vacant(slot) => {
                    let rows = decode(&prefix, slot.key(), &value)?;
                    slot.insert(Changed { read: value, rows })
                }
            };
            match page.rows.binary_search_by(|r| r.id.as_str().cmp(&row.id)) {
                // Appended again: it replaces itself and counts once.
                Ok(at) => page.rows[at] = (*row).clone(),
                Err(at) => {
                    page.rows.insert(at, (*row).clone());
                    added += 1;
                }
            }
        }
        let total = stored + added;
        let mut batch = Batch::new().require_equals(Tree::Meta, counter.clone(), raw);
        let mut pruned = 0u64;
        let mut excess = total.saturating_sub(keep);
        let mut after: Option<Vec<u8>> = None;
        'prune: while excess > 0 {
            // As many pages as full ones would hold the excess, and the one it may end in: a
            // round's append prunes about a page, and a page read is a copy of it.
            let want = usize::try_from(excess)
                .unwrap_or(SCAN)
                .div_ceil(PAGE_ENTRIES)
                .saturating_add(1)
                .min(SCAN);
            let oldest = (store.scan_prefix(Tree::Logs, &prefix, after.as_deref(), want)).await?;
            let last_scan = oldest.len() < want;
            for (key, value) in oldest {
                after = Some(key.clone());
                let (read, rows) = match changed.remove(&key) {
                    Some(page) => (page.read, Some(page.rows)),
                    None => (value, None),
                };
                // A page gone whole is counted from its header, not read.
                let held = rows.as_ref().map_or_else(|| entries_in(&read), Vec::len) as u64;
                let gone = held.min(excess);
                excess -= gone;
                pruned += gone;
                if gone < held {
                    // The oldest page's remainder, under its new oldest id.
                    let mut rows = match rows {
                        Some(rows) => rows,
                        None => decode(&prefix, &key, &read)?,
                    };
                    rows.drain(..gone as usize);
                    let first = key_of(&prefix, &rows[0].id);
                    batch = batch.put(Tree::Logs, first, encode(rows.iter()));
                }
                batch = (batch.require_equals(Tree::Logs, key.clone(), Some(read)))
                    .delete(Tree::Logs, key);
                if excess == 0 {
                    break 'prune;
                }
            }
            if last_scan {
                break;
            }
        }
        for (key, page) in changed {
            batch = (batch.require_equals(Tree::Logs, key.clone(), Some(page.read))).put(
                Tree::Logs,
                key,
                encode(page.rows.iter()),
            );
        }
        for row in alone {
            let key = key_of(&prefix, &row.id);
            batch = (batch.require_absent(Tree::Logs, key.clone())).put(
                Tree::Logs,
                key,
                encode(std::iter::once(row)),
            );
        }
        for page in pages(fresh) {
            let key = key_of(&prefix, &page[0].id);
            batch = batch.put(Tree::Logs, key, encode(page.iter().copied()));
        }
        let count = total - pruned;
        batch = batch.put(Tree::Meta, counter.clone(), count.to_string().into_bytes());
        match store.apply(batch).await {
            Ok(()) => return Ok(()),
            Err(StoreError::ConditionFailed(_)) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// `rows` (oldest first) cut into pages of at most [`PAGE_ENTRIES`] and [`PAGE_BYTES`] each
/// (an entry larger than that alone).
fn pages<'a>(rows: &'a [&'a LogRow]) -> impl Iterator<Item = &'a [&'a LogRow]> {
    let mut rest = rows;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut bytes = rest[0].entry.len();
        let mut n = 1;
        while n < rest.len() && n < PAGE_ENTRIES && bytes + rest[n].entry.len() <= PAGE_BYTES {
            bytes += rest[n].entry.len();
            n += 1;
        }
        let (page, tail) = rest.split_at(n);
        rest = tail;
        Some(page)
    })
}

pub(crate) async fn before<S: Store + ?Sized>(
    store: &S,
    endpoint: &str,
    before: Option<&str>,
    limit: usize,
) -> StoreResult<Vec<LogRow>> {
    let prefix = prefix(endpoint);
    // Pages whose oldest entry is older than `before`: the first of them may hold newer ones.
    let mut cursor = before.map(|id| key_of(&prefix, id));
    let mut rows = Vec::new();
    while rows.len() < limit {
        let chunk = (store.scan_prefix_rev(Tree::Logs, &prefix, cursor.as_deref(), SCAN)).await?;
        let last_scan = chunk.len() < SCAN;
        for (key, value) in &chunk {
            let page = decode(&prefix, key, value)?;
            let older = page
                .into_iter()
                .rev()
                .filter(|row| before.is_none_or(|before| row.id.as_str() < before));
            rows.extend(older.take(limit - rows.len()));
            if rows.len() == limit {
                break;
            }
        }
        match chunk.into_iter().last() {
            Some((key, _)) if !last_scan => cursor = Some(key),
            _ => break,
        }
    }
    Ok(rows)
}

pub(crate) async fn delete<S: Store + ?Sized>(store: &S, endpoint: &str) -> StoreResult<u64> {
    let prefix = prefix(endpoint);
    let mut deleted = 0;
    loop {
        let chunk = store.scan_prefix(Tree::Logs, &prefix, None, 256).await?;
        if chunk.is_empty() {
            break;
        }
        let mut batch = Batch::new();
        for (key, value) in chunk {
            deleted += entries_in(&value) as u64;
            batch = batch.delete(Tree::Logs, key);
        }
        store.apply(batch).await?;
    }
    store.delete(Tree::Meta, &count_key(endpoint)).await?;
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SledStore;

    fn row(n: usize, size: usize) -> LogRow {
        LogRow {
            id: format!("{n:032x}"),
            entry: format!("{{\"n\":{n},\"pad\":\"{}\"}}", "x".repeat(size)).into_bytes(),
        }
    }

    async fn stored(store: &SledStore, endpoint: &str) -> Vec<(String, usize)> {
        let prefix = prefix(endpoint);
        let pages = store
            .scan_prefix(Tree::Logs, &prefix, None, 1000)
            .await
            .unwrap();
        (pages.into_iter())
            .map(|(key, value)| {
                let id = String::from_utf8(key[prefix.len()..].to_vec()).unwrap();
                (id, decode(&prefix, &key, &value).unwrap().len())
            })
            .collect()
    }

    /// A round's entries land in a few pages, not one key each; the oldest page is cut, not
    /// dropped whole, so exactly the newest `keep` stay.
    #[tokio::test]
    async fn an_append_stores_its_entries_in_pages_and_prunes_to_the_entry() {
        let store = SledStore::temporary().unwrap();
        let rows: Vec<LogRow> = (0..150).map(|n| row(n, 10)).collect();
        append(&store, "ep", &rows, 1000).await.unwrap();
        let pages = stored(&store, "ep").await;
        assert_eq!(pages.iter().map(|p| p.1).collect::<Vec<_>>(), [64, 64, 22]);
        assert_eq!(pages[0].0, row(0, 0).id);

        let more: Vec<LogRow> = (150..160).map(|n| row(n, 10)).collect();
        append(&store, "ep", &more, 100).await.unwrap();
        let pages = stored(&store, "ep").await;
        assert_eq!(
            pages.iter().map(|p| p.1).collect::<Vec<_>>(),
            [4, 64, 22, 10]
        );
        assert_eq!(pages[0].0, row(60, 0).id);
        let newest = before(&store, "ep", None, 1000).await.unwrap();
        let ids: Vec<String> = (60..160).rev().map(|n| row(n, 0).id).collect();
        assert_eq!(newest.iter().map(|r| r.id.clone()).collect::<Vec<_>>(), ids);
        assert_eq!(newest[0].entry, row(159, 10).entry);
        assert_eq!(delete(&store, "ep").await.unwrap(), 100);
    }

    /// Large entries close a page early; an entry larger than a page gets one of its own.
    #[tokio::test]
    async fn large_entries_fill_pages_sooner() {
        let store = SledStore::temporary().unwrap();
        let mut rows: Vec<LogRow> = (0..6).map(|n| row(n, 20_000)).collect();
        rows.push(row(6, 200_000));
        rows.push(row(7, 10));
        append(&store, "ep", &rows, 1000).await.unwrap();
        let pages = stored(&store, "ep").await;
        assert_eq!(pages.iter().map(|p| p.1).collect::<Vec<_>>(), [3, 3, 1, 1]);
    }

    /// An entry stored alone by an earlier release reads as a page of one, is paged and
    /// pruned with the pages written after it, and counts in a delete.
    #[tokio::test]
    async fn entries_stored_one_a_key_by_an_earlier_release_still_read() {
        let store = SledStore::temporary().unwrap();
        for n in 0..3 {
            let r = row(n, 1);
            store
                .put(Tree::Logs, &key_of(b"ep/", &r.id), &r.entry)
                .await
                .unwrap();
        }
        store.put(Tree::Meta, &count_key("ep"), b"3").await.unwrap();
        append(&store, "ep", &[row(3, 1), row(4, 1)], 4)
            .await
            .unwrap();
        let ids: Vec<String> = (before(&store, "ep", None, 10).await.unwrap())
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, (1..5).rev().map(|n| row(n, 0).id).collect::<Vec<_>>());
        let older = before(&store, "ep", Some(&row(3, 0).id), 10).await.unwrap();
        assert_eq!(older.len(), 2);
        assert_eq!(older[0].entry, row(2, 1).entry);
        assert_eq!(delete(&store, "ep").await.unwrap(), 4);
    }

    /// Pruning reads the oldest pages a few at a time, as many as full pages would need: an
    /// excess spread over many small pages (an earlier release's entries, one a key) is read
    /// on until it is gone.
    #[tokio::test]
    async fn pruning_many_small_pages_reads_on_until_the_excess_is_gone() {
        let store = SledStore::temporary().unwrap();
        for n in 0..40 {
            let r = row(n, 1);
            store
                .put(Tree::Logs, &key_of(b"ep/", &r.id), &r.entry)
                .await
                .unwrap();
        }
        store
            .put(Tree::Meta, &count_key("ep"), b"40")
            .await
            .unwrap();
        append(&store, "ep", &[row(40, 1), row(41, 1)], 5)
            .await
            .unwrap();
        let pages = stored(&store, "ep").await;
        assert_eq!(pages.iter().map(|p| p.1).collect::<Vec<_>>(), [1, 1, 1, 2]);
        assert_eq!(pages[0].0, row(37, 0).id);
        let (_, count) = read_count(&store, &count_key("ep")).await.unwrap();
        assert_eq!(count, 5);
    }

    /// An entry older than the newest goes into the page whose range it falls in, so reads
    /// stay in id order; appended again, it replaces itself.
    #[tokio::test]
    async fn a_late_entry_goes_into_the_page_it_falls_in() {
        let store = SledStore::temporary().unwrap();
        let evens: Vec<LogRow> = (0..10).map(|n| row(n * 2, 1)).collect();
        append(&store, "ep", &evens, 100).await.unwrap();
        append(&store, "ep", &[row(20, 1)], 100).await.unwrap();
        append(&store, "ep", &[row(7, 1), row(4, 2), row(21, 1)], 100)
            .await
            .unwrap();
        let got: Vec<LogRow> = before(&store, "ep", None, 100).await.unwrap();
        let mut want: Vec<usize> = (0..10).map(|n| n * 2).collect();
        want.extend([7, 20, 21]);
        want.sort_unstable();
        want.reverse();
        let ids: Vec<String> = want.iter().map(|&n| row(n, 0).id).collect();
        assert_eq!(got.iter().map(|r| r.id.clone()).collect::<Vec<_>>(), ids);
        let four = got.iter().find(|r| r.id == row(4, 0).id).unwrap();
        assert_eq!(four.entry, row(4, 2).entry);
        assert_eq!(stored(&store, "ep").await.len(), 3);
        let (_, count) = read_count(&store, &count_key("ep")).await.unwrap();
        assert_eq!(count, 13);
    }

    #[test]
    fn a_page_cut_short_or_padded_is_corrupt_not_a_panic() {
        let page = encode([row(1, 3), row(2, 3)].iter());
        for cut in 0..page.len() {
            let _ = decode(b"ep/", b"ep/x", &page[..cut]);
            let _ = last_id(b"ep/", b"ep/x", &page[..cut]);
        }
        assert_eq!(last_id(b"ep/", b"ep/x", &page).unwrap(), row(2, 0).id);
        let mut padded = page.clone();
        padded.push(0);
        assert!(decode(b"ep/", b"ep/x", &padded).is_err());
        let mut huge = PAGE_MAGIC.to_vec();
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(b"ep/", b"ep/x", &huge).is_err());
        assert_eq!(decode(b"ep/", b"ep/x", &page).unwrap().len(), 2);
    }
}
