//! Revisions: every deploy of an endpoint is a numbered, immutable record of what it serves.
//!
//! A deploy used to change the one endpoint record in place, so a builder's new code took the live
//! tool offline until the admin granted again, and nothing could be rolled back. Now the record
//! ([`Endpoint`]) carries the content of its *serving* revision, inline, so the call path reads it
//! as before and pays nothing for revisions; each deploy also writes a [`Revision`] (its number,
//! what it was based on, who made it and its [`Content`]) to the store's revisions
//! (`toolhost_store::revisions`), under the endpoint's id. A revision that asks for capabilities
//! the endpoint does not hold waits ([`Pending`]) while the serving one serves on.
//!
//! What a revision covers is what decides what a call runs, costs and shows: source, schemas,
//! example, price, title, description, tags, env, requested capabilities and allowed hosts.
//! Files, secrets and `ctx.kv` data are the endpoint's, shared by its revisions, like a
//! database beside a deploy; the admin's limits and grant and the paused status are the
//! endpoint's too.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::model::Endpoint;
pub use super::model::{Content, Pending};
use crate::store::{Batch, RevisionRow, Store, StoreResult};

/// How many of its newest revisions an endpoint keeps; the serving one is kept besides,
/// wherever it is (a rollback may serve an older one).
pub const KEPT: u64 = 20;

/// Who made a revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Author {
    /// The owning builder.
    Owner,
    Admin,
    /// Seeded from fixtures, or recorded from an endpoint stored before revisions were kept.
    System,
}

/// One deploy, as stored: immutable once written.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Revision {
    pub number: u64,
    /// The revision the change was made on (the serving one, or the one waiting for a grant);
    /// `None` for an endpoint's first.
    pub based_on: Option<u64>,
    pub author: Author,
    /// The fields the deploy changed, as the API names them.
    pub fields: Vec<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    pub content: Content,
}

/// An endpoint's first revision, as `number`: what it serves when it is stored.
pub fn first(endpoint: &Endpoint, number: u64, author: Author) -> Revision {
    Revision {
        number,
        based_on: None,
        author,
        fields: Vec::new(),
        created_at: endpoint.updated_at,
        content: Content::of(endpoint),
    }
}

/// Adds to `batch` the write of `revision` of `endpoint_id`.
pub fn write(batch: Batch, endpoint_id: &str, revision: &Revision) -> Batch {
    let bytes = serde_json::to_vec(revision).expect("a revision serializes");
    batch.put_revision(RevisionRow::new(endpoint_id, revision.number, bytes))
}

/// Whether revision `number` is in the kept window of an endpoint whose newest is `latest`.
pub fn is_kept(number: u64, latest: u64) -> bool {
    number.saturating_add(KEPT) > latest
}

/// Adds to `batch` the removal of what a change leaves outside the kept window: the revision
/// that a new `latest` pushed out, and a serving one kept outside the window (after a
/// rollback) once it no longer serves. Neither is removed while it serves.
pub fn retire(
    batch: Batch,
    endpoint_id: &str,
    latest: u64,
    serving_before: u64,
    serving_after: u64,
) -> Batch {
    let mut gone: Vec<u64> = Vec::new();
    if let Some(out) = latest.checked_sub(KEPT).filter(|n| *n > 0) {
        gone.push(out);
    }
    if !is_kept(serving_before, latest) {
        gone.push(serving_before);
    }
    gone.into_iter()
        .filter(|n| *n != serving_after)
        .fold(batch, |b, n| b.delete_revision(endpoint_id, n))
}

fn decode(bytes: &[u8]) -> StoreResult<Revision> {
    serde_json::from_slice(bytes)
        .map_err(|e| crate::store::StoreError::Corrupt(format!("revision: {e}")))
}

/// Revision `number` of `endpoint_id`, if it is kept.
pub async fn load(
    store: &dyn Store,
    endpoint_id: &str,
    number: u64,
) -> StoreResult<Option<Revision>> {
    (store.revision(endpoint_id, number).await?)
        .map(|bytes| decode(&bytes))
        .transpose()
}

/// The kept revisions of `endpoint_id`, newest first: those in the window below `latest`,
/// and `serving` wherever it is.
pub async fn list(
    store: &dyn Store,
    endpoint_id: &str,
    latest: u64,
    serving: u64,
) -> StoreResult<Vec<Revision>> {
    let entries = store.newest_revisions(endpoint_id, KEPT as usize).await?;
    let mut kept = entries
        .iter()
        .filter(|(number, _)| is_kept(*number, latest))
        .map(|(_, bytes)| decode(bytes))
        .collect::<StoreResult<Vec<_>>>()?;
    if !kept.iter().any(|r| r.number == serving) {
        kept.extend(load(store, endpoint_id, serving).await?);
    }
    Ok(kept)
}

/// Removes every revision of a deleted endpoint.
pub async fn delete_all(store: &dyn Store, endpoint_id: &str) -> StoreResult<()> {
    store.delete_revisions(endpoint_id).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Write;

    fn removed(batch: Batch) -> Vec<String> {
        batch
            .writes
            .into_iter()
            .filter_map(|w| match w {
                Write::DeleteRevision { key } => Some(key),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_window_keeps_the_newest_and_whatever_serves() {
        assert!(is_kept(5, 24) && !is_kept(4, 24) && is_kept(1, 20));
        // Nothing leaves while there are fewer than the window.
        assert!(removed(retire(Batch::new(), "ep", 20, 19, 20)).is_empty());
        // The 21st pushes out the 1st.
        let key = |n: u64| format!("ep/{n:020}");
        assert_eq!(removed(retire(Batch::new(), "ep", 21, 20, 21)), [key(1)]);
        // ... unless it serves (a rollback made it); it goes once it no longer serves.
        assert!(removed(retire(Batch::new(), "ep", 21, 1, 1)).is_empty());
        assert_eq!(
            removed(retire(Batch::new(), "ep", 22, 1, 22)),
            [key(2), key(1)]
        );
    }
}
