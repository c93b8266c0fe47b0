//! Builder events as the store keeps them: each builder's feed of what happened to its
//! endpoints and money, newest first, read back from a moment on (`since`) and for one
//! endpoint, swept when old.
//!
//! Ids are uuid v7 in hex, so they sort in time order and carry their time: "from this moment
//! on" is "from [`first_id_at`] that moment on", and old events are those with ids below it,
//! on every engine, without reading an entry. [`kv`] keeps events in the `events` tree under
//! `{builder}/{id}` (sled's shape); PostgreSQL in a table with the endpoint as a column and an
//! index for each query.

use async_trait::async_trait;

use crate::StoreResult;

/// One stored event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRow {
    /// A uuid v7 in hex: the event's place in time.
    pub id: String,
    /// The endpoint (slug) it concerns, if any.
    pub endpoint: Option<String>,
    /// The event's JSON.
    pub entry: Vec<u8>,
}

/// What a page of a builder's feed asks for.
#[derive(Clone, Copy, Debug)]
pub struct EventQuery<'a> {
    /// Only events older than this id (the previous page's last), when given.
    pub before: Option<&'a str>,
    /// Only events from this id on ([`first_id_at`] of the `since` moment).
    pub from: &'a str,
    /// Only events of this endpoint, when given.
    pub endpoint: Option<&'a str>,
    pub limit: usize,
}

/// A page of a builder's feed.
#[derive(Clone, Debug, Default)]
pub struct EventPage {
    /// Newest first.
    pub rows: Vec<EventRow>,
    /// Where the next page starts (its `before`), when more may remain.
    pub next: Option<String>,
}

/// The smallest id of any event of the millisecond `unix_ms` (later ones sort after it, earlier
/// ones before): a uuid v7 begins with its time in milliseconds, 12 hex digits.
pub fn first_id_at(unix_ms: u64) -> String {
    format!("{:012x}{}", unix_ms.min(0xffff_ffff_ffff), "0".repeat(20))
}

/// Where builder events are kept. Every engine implements it (the conformance suite's
/// `events_*` cases); each write is durable when it returns, as every store write.
#[async_trait]
pub trait BuilderEvents {
    /// Adds events to their builders' feeds (`(builder id, event)`), in one atomic write.
    async fn record_events(&self, events: &[(&str, EventRow)]) -> StoreResult<()>;
    /// One page of a builder's feed, newest first.
    async fn events_page(&self, builder: &str, query: &EventQuery<'_>) -> StoreResult<EventPage>;
    /// Deletes events older than `before` (an id), every builder's, a bounded number per call;
    /// returns how many.
    async fn sweep_events(&self, before: &str) -> StoreResult<usize>;
}

/// Builder events over any [`Store`](crate::Store)'s trees, for engines without a shape of
/// their own.
pub(crate) mod kv {
    use serde::Deserialize;

    use super::{EventPage, EventQuery, EventRow};
    use crate::{Batch, Store, StoreError, StoreResult, Tree};

    /// Most entries one page reads, however few its filter keeps: it then says where to go on.
    const MAX_SCANNED: usize = 5_000;
    /// Pages of 256 entries one sweep reads at most.
    const SWEEP_PAGES: usize = 40;

    fn key(builder: &str, id: &str) -> Vec<u8> {
        format!("{builder}/{id}").into_bytes()
    }

    /// The one field of a stored event a page filters on.
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Concerns {
        endpoint_slug: Option<String>,
    }

    pub(crate) async fn record<S: Store + ?Sized>(
        store: &S,
        events: &[(&str, EventRow)],
    ) -> StoreResult<()> {
        if events.is_empty() {
            return Ok(());
        }
        let batch = events.iter().fold(Batch::new(), |batch, (builder, row)| {
            batch.put(Tree::Events, key(builder, &row.id), row.entry.clone())
        });
        store.apply(batch).await
    }

    pub(crate) async fn page<S: Store + ?Sized>(
        store: &S,
        builder: &str,
        query: &EventQuery<'_>,
    ) -> StoreResult<EventPage> {
        let prefix = key(builder, "");
        let mut before = query.before.map(|id| key(builder, id));
        let mut page = EventPage::default();
        let mut scanned = 0;
        loop {
            let chunk = store
                .scan_prefix_rev(Tree::Events, &prefix, before.as_deref(), 256)
                .await?;
            let Some((last, _)) = chunk.last() else {
                return Ok(page);
            };
            before = Some(last.clone());
            for (key, entry) in chunk {
                scanned += 1;
                let id = String::from_utf8(key[prefix.len()..].to_vec())
                    .map_err(|_| StoreError::Corrupt(format!("event key of {builder}")))?;
                if id.as_str() < query.from {
                    return Ok(page);
                }
                let concerns: Concerns = serde_json::from_slice(&entry)
                    .map_err(|e| StoreError::Corrupt(format!("event {builder}/{id}: {e}")))?;
                let endpoint = concerns.endpoint_slug;
                if query
                    .endpoint
                    .is_none_or(|want| endpoint.as_deref() == Some(want))
                {
                    page.rows.push(EventRow {
                        id: id.clone(),
                        endpoint,
                        entry,
                    });
                }
                if page.rows.len() == query.limit || scanned == MAX_SCANNED {
                    page.next = Some(id);
                    return Ok(page);
                }
            }
        }
    }

    /// A builder's events are one prefix in time order: the sweep deletes from the front of
    /// each and jumps to the next builder at its first event young enough to keep.
    pub(crate) async fn sweep<S: Store + ?Sized>(store: &S, before: &str) -> StoreResult<usize> {
        let mut deleted = 0;
        let mut after: Option<Vec<u8>> = None;
        for _ in 0..SWEEP_PAGES {
            let page = store
                .scan_prefix(Tree::Events, b"", after.as_deref(), 256)
                .await?;
            let full = page.len() == 256;
            let mut batch = Batch::new();
            let mut jumped = false;
            for (key, _) in page {
                let Some(slash) = key.iter().position(|b| *b == b'/') else {
                    after = Some(key);
                    continue;
                };
                if &key[slash + 1..] >= before.as_bytes() {
                    // Past every key of this builder: ids are ASCII, below 0xff.
                    after = Some([&key[..=slash], &[0xff]].concat());
                    jumped = true;
                    break;
                }
                batch = batch.delete(Tree::Events, key.clone());
                after = Some(key);
            }
            deleted += batch.writes.len();
            if !batch.writes.is_empty() {
                store.apply(batch).await?;
            }
            if !jumped && !full {
                break;
            }
        }
        Ok(deleted)
    }
}
