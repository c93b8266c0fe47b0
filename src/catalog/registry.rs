//! The catalog index: every endpoint in memory, with its schemas compiled, over the store.
//!
//! Reads (every `/tools/{slug}` call, every catalog listing) never touch the store or recompile a
//! schema; writes go to the store first, then replace the in-memory entry. One process owns the
//! store, so the index cannot go stale.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use axum::http::StatusCode;
use serde_json::json;

use super::model::Endpoint;
use super::schema::{self, Violation};
use crate::http::error::ApiError;
use crate::store::{Batch, Store, StoreError, Tree};

/// An endpoint with its validators ready.
pub struct CompiledEndpoint {
    pub endpoint: Endpoint,
    /// Shared so a large input can be validated on the blocking pool.
    pub input_validator: Arc<jsonschema::Validator>,
    pub output_validator: Arc<jsonschema::Validator>,
}

impl CompiledEndpoint {
    /// Compiles a new or changed endpoint: its schemas must be valid, with linear-time patterns.
    pub fn compile(endpoint: Endpoint) -> Result<Self, CatalogError> {
        Self::compile_with(endpoint, schema::compile)
    }

    /// Compiles a stored endpoint, accepting patterns from before they had to be linear-time
    /// (run with a bounded backtracking engine), so an upgrade never stops the server starting.
    fn load(endpoint: Endpoint) -> Result<Self, CatalogError> {
        Self::compile_with(endpoint, schema::compile_stored)
    }

    fn compile_with(
        endpoint: Endpoint,
        compile: fn(&serde_json::Value) -> Result<jsonschema::Validator, schema::SchemaError>,
    ) -> Result<Self, CatalogError> {
        let invalid = |field| {
            move |e: schema::SchemaError| CatalogError::InvalidSchema {
                field,
                message: e.message,
                pointer: e.pointer,
            }
        };
        let input_validator =
            Arc::new(compile(&endpoint.input_schema).map_err(invalid("inputSchema"))?);
        let output_validator =
            Arc::new(compile(&endpoint.output_schema).map_err(invalid("outputSchema"))?);
        Ok(Self {
            endpoint,
            input_validator,
            output_validator,
        })
    }

    pub fn input_violations(&self, input: &serde_json::Value) -> Vec<Violation> {
        schema::violations(&self.input_validator, input)
    }

    pub fn output_violations(&self, output: &serde_json::Value) -> Vec<Violation> {
        schema::violations(&self.output_validator, output)
    }

    /// [`input_violations`](Self::input_violations) for request handlers (see
    /// [`schema::violations_off_worker`]).
    pub async fn input_violations_async(&self, input: &serde_json::Value) -> Vec<Violation> {
        schema::violations_off_worker(&self.input_validator, input).await
    }

    /// [`output_violations`](Self::output_violations) for request handlers.
    pub async fn output_violations_async(&self, output: &serde_json::Value) -> Vec<Violation> {
        schema::violations_off_worker(&self.output_validator, output).await
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("no endpoint named {0:?}")]
    NotFound(String),
    #[error("an endpoint named {0:?} already exists")]
    SlugTaken(String),
    #[error("endpoint {0:?} was changed by another request; read it again and retry")]
    Conflict(String),
    #[error("{field} is invalid: {message}")]
    InvalidSchema {
        field: &'static str,
        message: String,
        /// JSON pointer into the schema, when the fault is in one place.
        pointer: Option<String>,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<CatalogError> for ApiError {
    fn from(e: CatalogError) -> Self {
        match e {
            CatalogError::NotFound(_) => ApiError::not_found("endpoint_not_found", e.to_string()),
            CatalogError::SlugTaken(_) => {
                ApiError::new(StatusCode::CONFLICT, "slug_taken", e.to_string())
            }
            CatalogError::Conflict(_) => {
                ApiError::new(StatusCode::CONFLICT, "edit_conflict", e.to_string())
            }
            CatalogError::InvalidSchema {
                field, ref pointer, ..
            } => {
                let details = json!({ "field": field, "pointer": pointer });
                ApiError::unprocessable("invalid_schema", e.to_string()).with_details(details)
            }
            CatalogError::Store(e) => e.into(),
        }
    }
}

pub struct Registry {
    store: Arc<dyn Store>,
    by_slug: RwLock<HashMap<String, Arc<CompiledEndpoint>>>,
    /// Held across an update's or removal's check and write, so a PATCH cannot overwrite a
    /// concurrent PATCH or resurrect an endpoint deleted meanwhile.
    writes: Mutex<()>,
}

impl Registry {
    /// Loads and compiles every stored endpoint.
    pub fn load(store: Arc<dyn Store>) -> Result<Self, CatalogError> {
        let mut by_slug = HashMap::new();
        let mut after: Option<Vec<u8>> = None;
        loop {
            let page = store.scan_prefix(Tree::Endpoints, b"", after.as_deref(), 256)?;
            let Some((last, _)) = page.last() else { break };
            after = Some(last.clone());
            for (key, bytes) in page {
                let endpoint: Endpoint = serde_json::from_slice(&bytes).map_err(|e| {
                    StoreError::Corrupt(format!("endpoint {}: {e}", String::from_utf8_lossy(&key)))
                })?;
                let slug = endpoint.slug.clone();
                by_slug.insert(slug, Arc::new(CompiledEndpoint::load(endpoint)?));
            }
        }
        Ok(Self {
            store,
            by_slug: RwLock::new(by_slug),
            writes: Mutex::new(()),
        })
    }

    pub fn get(&self, slug: &str) -> Option<Arc<CompiledEndpoint>> {
        self.read().get(slug).cloned()
    }

    pub fn require(&self, slug: &str) -> Result<Arc<CompiledEndpoint>, CatalogError> {
        self.get(slug)
            .ok_or_else(|| CatalogError::NotFound(slug.to_string()))
    }

    /// Every endpoint, oldest first (seed order), then by slug.
    pub fn all(&self) -> Vec<Arc<CompiledEndpoint>> {
        let mut all: Vec<_> = self.read().values().cloned().collect();
        all.sort_by(|a, b| {
            (a.endpoint.created_at, &a.endpoint.slug)
                .cmp(&(b.endpoint.created_at, &b.endpoint.slug))
        });
        all
    }

    /// Stores a new endpoint; the slug must be free (checked atomically in the store).
    pub fn insert_new(&self, endpoint: Endpoint) -> Result<Arc<CompiledEndpoint>, CatalogError> {
        let compiled = CompiledEndpoint::compile(endpoint)?;
        let key = compiled.endpoint.slug.as_bytes().to_vec();
        let bytes = serde_json::to_vec(&compiled.endpoint)
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let batch = Batch::new()
            .require_absent(Tree::Endpoints, key.clone())
            .put(Tree::Endpoints, key, bytes);
        match self.store.apply(batch) {
            Err(StoreError::ConditionFailed(_)) => {
                Err(CatalogError::SlugTaken(compiled.endpoint.slug.clone()))
            }
            other => other.map_err(CatalogError::from),
        }?;
        Ok(self.remember(compiled))
    }

    /// Replaces an existing endpoint, only if it is still at `expected_revision` (the revision
    /// the caller read and changed); otherwise [`CatalogError::Conflict`].
    pub fn update(
        &self,
        endpoint: Endpoint,
        expected_revision: u64,
    ) -> Result<Arc<CompiledEndpoint>, CatalogError> {
        let compiled = CompiledEndpoint::compile(endpoint)?;
        let _writes = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        let slug = &compiled.endpoint.slug;
        match self.get(slug) {
            None => return Err(CatalogError::NotFound(slug.clone())),
            Some(current) if current.endpoint.revision != expected_revision => {
                return Err(CatalogError::Conflict(slug.clone()))
            }
            Some(_) => {}
        }
        let key = slug.as_bytes();
        let bytes = serde_json::to_vec(&compiled.endpoint)
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        self.store.put(Tree::Endpoints, key, &bytes)?;
        Ok(self.remember(compiled))
    }

    /// Removes an endpoint and frees its slug.
    pub fn remove(&self, slug: &str) -> Result<Endpoint, CatalogError> {
        let _writes = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        let existing = self.require(slug)?;
        self.store.delete(Tree::Endpoints, slug.as_bytes())?;
        self.write().remove(slug);
        Ok(existing.endpoint.clone())
    }

    fn remember(&self, compiled: CompiledEndpoint) -> Arc<CompiledEndpoint> {
        let compiled = Arc::new(compiled);
        self.write()
            .insert(compiled.endpoint.slug.clone(), compiled.clone());
        compiled
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, Arc<CompiledEndpoint>>> {
        // A panic while holding the lock cannot leave the map half-written (single insert/remove).
        self.by_slug.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Arc<CompiledEndpoint>>> {
        self.by_slug.write().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;

    fn endpoint(slug: &str) -> Endpoint {
        serde_json::from_value(serde_json::json!({
            "id": "ep_1", "slug": slug, "title": "T", "description": "", "status": "active", "priceUsd": 0,
            "handlerType": "static_json", "inputSchema": {}, "outputSchema": {}, "owner": {"kind": "admin"},
            "revision": 1, "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
        }))
        .unwrap()
    }

    #[test]
    fn updates_are_guarded_by_revision_and_existence() {
        let registry = Registry::load(Arc::new(SledStore::temporary().unwrap())).unwrap();
        registry.insert_new(endpoint("one")).unwrap();
        assert!(matches!(
            registry.insert_new(endpoint("one")),
            Err(CatalogError::SlugTaken(_))
        ));
        let mut next = endpoint("one");
        next.revision = 2;
        registry.update(next.clone(), 1).unwrap();
        // A second writer that read revision 1 loses instead of overwriting.
        assert!(matches!(
            registry.update(next.clone(), 1),
            Err(CatalogError::Conflict(_))
        ));
        registry.remove("one").unwrap();
        // An update racing a delete cannot bring the endpoint back.
        assert!(matches!(
            registry.update(next, 2),
            Err(CatalogError::NotFound(_))
        ));
        assert!(registry.get("one").is_none());
    }
}
