//! Builder events: what happened to a builder's endpoints and money, newest first.
//!
//! Any module records an event with [`record`]; the feed `GET /ai/builders/events` reads them
//! back scoped to the builder, filtered by `since` and `endpointSlug`. The store keeps them in
//! its own shape ([`crate::store::BuilderEvents`]: a table on PostgreSQL, a tree on sled); an
//! event's id is a uuid v7, so ids order the feed in time and `since` is an id range.
//!
//! # Layout
//! - this file: event kinds, recording, reading, the `since` duration syntax.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::paging::{self, Page, PageRequest};
use crate::store::{EventQuery, EventRow, Store, StoreError, StoreResult};

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

impl Event {
    /// The event as the store keeps it.
    pub fn row(&self) -> StoreResult<EventRow> {
        Ok(EventRow {
            id: self.id.clone(),
            endpoint: self.endpoint_slug.clone(),
            entry: serde_json::to_vec(self).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        })
    }
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
        .record_events(&[(owner_builder_id, event.row()?)])
        .await?;
    Ok(event)
}

/// The first id of a moment: events from then on have ids at or above it.
fn first_id_at(at: OffsetDateTime) -> String {
    let ms = (at.unix_timestamp_nanos() / 1_000_000).max(0);
    crate::store::events::first_id_at(u64::try_from(ms).unwrap_or(u64::MAX))
}

/// Deletes events older than `cutoff`, every builder's (a bounded number per call); returns
/// how many. An event's age is its id's time (a uuid v7), within a millisecond of its `at`.
pub async fn sweep(store: &dyn Store, cutoff: OffsetDateTime) -> StoreResult<usize> {
    store.sweep_events(&first_id_at(cutoff)).await
}

/// One page of the builder's events at or after `since`, optionally for one endpoint.
pub async fn page(
    store: &dyn Store,
    builder_id: &str,
    since: OffsetDateTime,
    slug: Option<&str>,
    request: &PageRequest,
) -> StoreResult<Page<Event>> {
    let from = first_id_at(since);
    let query = EventQuery {
        before: request.cursor(),
        from: &from,
        endpoint: slug,
        limit: request.limit(),
    };
    let page = store.events_page(builder_id, &query).await?;
    let items = (page.rows.iter())
        .map(|row| {
            serde_json::from_slice(&row.entry)
                .map_err(|e| StoreError::Corrupt(format!("event {builder_id}/{}: {e}", row.id)))
        })
        .collect::<StoreResult<Vec<Event>>>()?;
    Ok(Page {
        items,
        next_cursor: page.next,
    })
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
