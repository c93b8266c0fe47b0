//! Builder events: what happened to a builder's endpoints and money, newest first.
//!
//! Any module records an event with [`record`]; the feed `GET /ai/builders/events` reads them
//! back scoped to the builder, filtered by `since` and `endpointSlug`. Events are keyed
//! `<builder id>/<uuid v7>`, so one builder's feed is one prefix scan in time order.
//!
//! # Layout
//! - this file: event kinds, recording, reading, the `since` duration syntax.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::paging::{self, Page, PageRequest, Visit};
use crate::store::{Batch, Store, StoreError, StoreResult, Tree};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    EndpointCreated,
    EndpointUpdated,
    EndpointPaused,
    EndpointResumed,
    EndpointDeleted,
    /// The owner (or the admin) made a kept revision serve again.
    EndpointRolledBack,
    /// A kept revision began serving a share of calls (a gradual rollout).
    RolloutStarted,
    /// The share of a running rollout changed.
    RolloutChanged,
    /// The rolling-out revision now serves every call.
    RolloutPromoted,
    /// The rollout ended: the serving revision serves every call (or another now serves).
    RolloutEnded,
    InvocationSucceeded,
    InvocationFailed,
    PaymentSettled,
    SafetyFlagged,
    SafetyApproved,
    SafetyRejected,
    CapabilitiesRequested,
    CapabilitiesGranted,
    CapabilitiesRefused,
    PayoutCreated,
    PayoutPaid,
    /// The owner or the admin refunded a paid call (`data`: the refund).
    ReceiptRefunded,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub id: String,
    pub kind: EventKind,
    #[schema(required = true)]
    pub endpoint_slug: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub at: OffsetDateTime,
    /// Kind-specific details (changed fields, amounts, findings, request id).
    #[schema(value_type = Object)]
    pub data: Value,
}

fn prefix(builder_id: &str) -> Vec<u8> {
    format!("{builder_id}/").into_bytes()
}

impl Event {
    /// A new event, stamped now; its id orders it in the feed.
    pub fn new(kind: EventKind, slug: Option<&str>, data: Value) -> Self {
        Self {
            id: paging::new_id(),
            kind,
            endpoint_slug: slug.map(str::to_string),
            at: OffsetDateTime::now_utc(),
            data,
        }
    }
}

/// Adds the event to `batch`, in the builder's feed.
pub fn put(batch: Batch, owner_builder_id: &str, event: &Event) -> StoreResult<Batch> {
    let key = [prefix(owner_builder_id), event.id.clone().into_bytes()].concat();
    let bytes = serde_json::to_vec(event).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok(batch.put(Tree::Events, key, bytes))
}

/// Appends an event to the builder's feed now.
pub async fn record(
    store: &dyn Store,
    owner_builder_id: &str,
    kind: EventKind,
    slug: Option<&str>,
    data: Value,
) -> StoreResult<Event> {
    let event = Event::new(kind, slug, data);
    store
        .apply(put(Batch::new(), owner_builder_id, &event)?)
        .await?;
    Ok(event)
}

/// Deletes events older than `cutoff`, every builder's; returns how many. A builder's events
/// are one prefix in time order, so the sweep deletes from the front of each prefix and jumps
/// to the next builder at the first event young enough to keep. At most 40 pages per call.
pub async fn sweep(store: &dyn Store, cutoff: OffsetDateTime) -> StoreResult<usize> {
    let mut deleted = 0;
    let mut after: Option<Vec<u8>> = None;
    for _ in 0..40 {
        let page = store
            .scan_prefix(Tree::Events, b"", after.as_deref(), 256)
            .await?;
        let full = page.len() == 256;
        let mut batch = Batch::new();
        let mut jumped = false;
        for (key, bytes) in page {
            let young = serde_json::from_slice::<Event>(&bytes).is_ok_and(|e| e.at >= cutoff);
            let builder = key.iter().position(|b| *b == b'/').map(|i| &key[..=i]);
            after = match (young, builder) {
                // Past every key of this builder: ids are ASCII, below 0xff.
                (true, Some(builder)) => Some([builder, &[0xff]].concat()),
                (true, None) => Some(key),
                (false, _) => {
                    batch = batch.delete(Tree::Events, key.clone());
                    Some(key)
                }
            };
            if young {
                jumped = true;
                break;
            }
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

/// One page of the builder's events at or after `since`, optionally for one endpoint.
pub async fn page(
    store: &dyn Store,
    builder_id: &str,
    since: OffsetDateTime,
    slug: Option<&str>,
    request: &PageRequest,
) -> StoreResult<Page<Event>> {
    paging::newest_first(
        store,
        Tree::Events,
        &prefix(builder_id),
        request,
        |e: &Event| {
            if e.at < since {
                Visit::Stop
            } else if slug.is_some_and(|s| e.endpoint_slug.as_deref() != Some(s)) {
                Visit::Skip
            } else {
                Visit::Keep
            }
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;
    use serde_json::json;
    use time::Duration;

    #[tokio::test]
    async fn scoped_filtered_newest_first() {
        let store = SledStore::temporary().unwrap();
        record(
            &store,
            "b1",
            EventKind::EndpointCreated,
            Some("a"),
            json!({}),
        )
        .await
        .unwrap();
        record(
            &store,
            "b1",
            EventKind::EndpointCreated,
            Some("b"),
            json!({}),
        )
        .await
        .unwrap();
        record(
            &store,
            "b1",
            EventKind::EndpointPaused,
            Some("a"),
            json!({}),
        )
        .await
        .unwrap();
        record(
            &store,
            "b2",
            EventKind::EndpointCreated,
            Some("a"),
            json!({}),
        )
        .await
        .unwrap();
        let all = PageRequest::parse(None, None).unwrap();
        let long_ago = OffsetDateTime::now_utc() - Duration::days(1);
        let feed = page(&store, "b1", long_ago, None, &all).await.unwrap();
        let kinds: Vec<EventKind> = feed.items.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                EventKind::EndpointPaused,
                EventKind::EndpointCreated,
                EventKind::EndpointCreated
            ]
        );
        assert_eq!(
            page(&store, "b1", long_ago, Some("a"), &all)
                .await
                .unwrap()
                .items
                .len(),
            2
        );
        let future = OffsetDateTime::now_utc() + Duration::days(1);
        assert!(page(&store, "b1", future, None, &all)
            .await
            .unwrap()
            .items
            .is_empty());
    }
}
