//! The owner's display name on each endpoint, for the catalog, the 402 and MCP to name whom a
//! call pays. Endpoints created since carry it from their creation; those stored by an earlier
//! release get it at start-up.

use crate::builders::{self, BuilderError};
use crate::catalog::{CatalogError, Owner, Registry};
use crate::store::{Batch, Store, StoreError};

/// Names the owner of every builder endpoint stored without the name. Nodes sharing a store
/// may race to do it: a conflict means another node did.
pub async fn name_owners(store: &dyn Store, catalog: &Registry) -> Result<usize, CatalogError> {
    let mut named = 0;
    for compiled in catalog.all() {
        let endpoint = &compiled.endpoint;
        let Owner::Builder(id) = &endpoint.owner else {
            continue;
        };
        if endpoint.owner_name.is_some() {
            continue;
        }
        let found = builders::find(store, id).await.map_err(|e| match e {
            BuilderError::Store(e) => e,
            other => StoreError::Corrupt(format!("builder {id}: {other}")),
        })?;
        let Some(builder) = found else {
            continue;
        };
        let mut ep = endpoint.clone();
        ep.owner_name = Some(builder.name);
        ep.generation += 1;
        match catalog.update(ep, endpoint.generation, Batch::new()).await {
            Ok(_) => named += 1,
            Err(CatalogError::Conflict(_) | CatalogError::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(named)
}
