//! An endpoint's kept revisions, looked up: one by number (or `revision_not_found` naming the
//! kept ones) and the whole kept window. Below the deploys and the rollouts, which both read
//! them.

use super::error::EndpointError;
use super::parts::Parts;
use crate::catalog::revision::{self, Revision};
use crate::catalog::Endpoint;

/// A kept revision, or `revision_not_found` naming the kept ones.
pub(super) async fn load(
    parts: &Parts<'_>,
    endpoint: &Endpoint,
    number: u64,
) -> Result<Revision, EndpointError> {
    match revision::load(parts.store.as_ref(), &endpoint.id, number).await? {
        Some(found) => Ok(found),
        None => Err(not_kept(parts, endpoint, number).await),
    }
}

/// `revision_not_found` for `number`, naming the kept ones.
async fn not_kept(parts: &Parts<'_>, endpoint: &Endpoint, number: u64) -> EndpointError {
    match kept_numbers(parts, endpoint).await {
        Ok(kept) => EndpointError::RevisionNotFound {
            revision: number,
            kept,
        },
        Err(e) => e,
    }
}

async fn kept_numbers(parts: &Parts<'_>, endpoint: &Endpoint) -> Result<Vec<u64>, EndpointError> {
    Ok(kept(parts, endpoint)
        .await?
        .iter()
        .map(|r| r.number)
        .collect())
}

pub(super) async fn kept(
    parts: &Parts<'_>,
    endpoint: &Endpoint,
) -> Result<Vec<Revision>, EndpointError> {
    Ok(revision::list(
        parts.store.as_ref(),
        &endpoint.id,
        endpoint.latest_revision,
        endpoint.serving_revision,
    )
    .await?)
}
