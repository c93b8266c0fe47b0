//! What every endpoint operation works on and checks first: the parts of the service it
//! borrows, who may touch an endpoint, and the owner's events of a change. Below the lifecycle
//! and the revisions, which both use it.

use std::sync::Arc;

use serde_json::{json, Value};

use super::error::EndpointError;
use crate::builders::Caller;
use crate::catalog::{grant, CompiledEndpoint, Endpoint, Registry};
use crate::config::Config;
use crate::events::{self, EventKind};
use crate::js_handlers::EndpointRuntime;
use crate::store::Store;

/// The parts of the service the lifecycle works on, borrowed for one operation.
pub struct Parts<'a> {
    pub store: &'a Arc<dyn Store>,
    pub catalog: &'a Registry,
    pub config: &'a Config,
    /// To forget a deleted endpoint's compiled code and warm isolates.
    pub runtime: &'a EndpointRuntime,
}

/// Whether the caller may change the endpoint: the admin always, a builder only its own.
pub fn can_manage(caller: &Caller, endpoint: &Endpoint) -> bool {
    match caller {
        Caller::Admin => true,
        Caller::Builder(b) => endpoint.owner_builder() == Some(b.id.as_str()),
    }
}

/// Whether `caller` may see `endpoint`: one held for or refused by content-safety review is
/// not found for anyone but its owner and the admin, here as in the catalog.
pub fn visible(endpoint: &Endpoint, caller: Option<&Caller>) -> bool {
    endpoint.is_listed() || caller.is_some_and(|c| can_manage(c, endpoint))
}

/// The endpoint, if it exists (404) and the caller may change it (403).
pub fn owned(
    parts: &Parts<'_>,
    caller: &Caller,
    slug: &str,
) -> Result<Arc<CompiledEndpoint>, EndpointError> {
    let compiled = parts.catalog.require(slug)?;
    if !can_manage(caller, &compiled.endpoint) {
        return Err(EndpointError::NotOwner);
    }
    Ok(compiled)
}

/// Records an event for the owning builder. The change itself is already stored, so a failure
/// here is logged rather than turned into an error the caller would take for a failed change.
pub(super) async fn emit(parts: &Parts<'_>, endpoint: &Endpoint, kind: EventKind, data: Value) {
    if let Some(builder) = endpoint.owner_builder() {
        if let Err(e) = events::record(
            parts.store.as_ref(),
            builder,
            kind,
            Some(&endpoint.slug),
            data,
        )
        .await
        {
            tracing::warn!(error = %e, slug = %endpoint.slug, "cannot record event");
        }
    }
}

/// Tells the owner its endpoint waits for the admin's grant of the capabilities it requested.
pub(super) async fn emit_requested(parts: &Parts<'_>, endpoint: &Endpoint) {
    // The waiting revision's request when there is one; the serving one's asks otherwise.
    let (revision, requested) = match &endpoint.pending {
        Some(p) => (p.revision, p.requested),
        None => (endpoint.serving_revision, endpoint.requested_capabilities),
    };
    let missing = grant::missing(&requested, &endpoint.granted_capabilities);
    let data = json!({
        "status": endpoint.shown_status(),
        "revision": revision,
        "requested": requested,
        "missing": grant::names(&missing),
    });
    emit(parts, endpoint, EventKind::CapabilitiesRequested, data).await;
}
