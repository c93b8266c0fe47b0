//! The catalog index: every endpoint in memory, with its schemas compiled, over the store.
//!
//! Reads (every `/tools/{slug}` call, every catalog listing) never touch the store or recompile a
//! schema; writes go to the store first (checked against the stored record, so concurrent
//! writers on any node cannot overwrite each other), then replace the in-memory entry. When
//! nodes share a store, each follows the store's change feed and [`Registry::reload`]s what
//! another node changed.
//!
//! The index keeps endpoints in catalog order and by tag, so a page of the catalog (HTTP
//! `limit`/`cursor`, MCP `tools/list`) costs the page, not the catalog; and a generation that
//! moves on every change, so a rendered listing can be reused until something changes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::{Arc, OnceLock, RwLock};

use axum::http::StatusCode;
use serde_json::json;

use super::model::Endpoint;
use super::schema::{self, Violation};
use crate::error::{ApiError, ErrorCode};
use crate::store::{Batch, Store, StoreError, Tree};

/// An endpoint with what serving it needs: its schemas' validators and its search text.
pub struct CompiledEndpoint {
    pub endpoint: Endpoint,
    /// Compiled when the endpoint is created or changed (which checks the schemas), and for an
    /// endpoint loaded from the store on its first call: most of a large catalog is never
    /// called by one process, and a compiled validator costs more memory than the endpoint's
    /// own record (bench/RESULTS.md, catalog size).
    validators: OnceLock<Validators>,
    /// Slug, title, description and tags, lower-cased: what the catalog's `q` searches,
    /// prepared once instead of lower-casing them per endpoint per search.
    search_fields: Vec<String>,
}

/// Shared so a large input can be validated on the blocking pool.
struct Validators {
    input: Arc<jsonschema::Validator>,
    output: Arc<jsonschema::Validator>,
}

impl CompiledEndpoint {
    /// Compiles a new or changed endpoint: its schemas must be valid, with linear-time patterns.
    pub fn compile(endpoint: Endpoint) -> Result<Self, CatalogError> {
        let invalid = |field| {
            move |e: schema::SchemaError| CatalogError::InvalidSchema {
                field,
                message: e.message,
                pointer: e.pointer,
            }
        };
        let validators = Validators {
            input: Arc::new(
                schema::compile(&endpoint.input_schema).map_err(invalid("inputSchema"))?,
            ),
            output: Arc::new(
                schema::compile(&endpoint.output_schema).map_err(invalid("outputSchema"))?,
            ),
        };
        let compiled = Self::load(endpoint);
        let _ = compiled.validators.set(validators);
        Ok(compiled)
    }

    /// A stored endpoint, its schemas checked when it was stored; they are compiled on its
    /// first call, accepting patterns from before they had to be linear-time (run with a
    /// bounded backtracking engine), so an upgrade never stops the server starting.
    fn load(endpoint: Endpoint) -> Self {
        let search_fields = [&endpoint.slug, &endpoint.title, &endpoint.description]
            .into_iter()
            .chain(&endpoint.tags)
            .map(|field| field.to_lowercase())
            .collect();
        Self {
            endpoint,
            validators: OnceLock::new(),
            search_fields,
        }
    }

    fn validators(&self) -> &Validators {
        self.validators.get_or_init(|| {
            let compile = |field: &str, schema: &serde_json::Value| {
                Arc::new(schema::compile_stored(schema).unwrap_or_else(|e| {
                    // Only a schema stored by a version that checked less, or edited in the
                    // store by hand: it refuses every value rather than accept anything.
                    tracing::error!(slug = %self.endpoint.slug, field, error = %e.message, "a stored schema does not compile; it refuses every value");
                    schema::refuse_all()
                }))
            };
            Validators {
                input: compile("inputSchema", &self.endpoint.input_schema),
                output: compile("outputSchema", &self.endpoint.output_schema),
            }
        })
    }

    /// Whether `needle` (already lower-cased) occurs in the slug, title, description or a tag,
    /// ignoring case.
    pub fn mentions(&self, needle: &str) -> bool {
        self.search_fields
            .iter()
            .any(|field| field.contains(needle))
    }

    /// Where this endpoint sorts in the catalog.
    pub fn position(&self) -> CatalogPosition {
        CatalogPosition::of(&self.endpoint)
    }

    pub fn input_violations(&self, input: &serde_json::Value) -> Vec<Violation> {
        schema::violations(&self.validators().input, input)
    }

    pub fn output_violations(&self, output: &serde_json::Value) -> Vec<Violation> {
        schema::violations(&self.validators().output, output)
    }

    /// [`input_violations`](Self::input_violations) for request handlers (see
    /// [`schema::violations_off_worker`]).
    pub async fn input_violations_async(&self, input: &serde_json::Value) -> Vec<Violation> {
        schema::violations_off_worker(&self.validators().input, input).await
    }

    /// [`output_violations`](Self::output_violations) for request handlers.
    pub async fn output_violations_async(&self, output: &serde_json::Value) -> Vec<Violation> {
        schema::violations_off_worker(&self.validators().output, output).await
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
            CatalogError::NotFound(_) => {
                ApiError::not_found(ErrorCode::EndpointNotFound, e.to_string())
            }
            CatalogError::SlugTaken(_) => {
                ApiError::new(StatusCode::CONFLICT, ErrorCode::SlugTaken, e.to_string())
            }
            CatalogError::Conflict(_) => {
                ApiError::new(StatusCode::CONFLICT, ErrorCode::EditConflict, e.to_string())
            }
            CatalogError::InvalidSchema {
                field, ref pointer, ..
            } => {
                let details = json!({ "field": field, "pointer": pointer });
                ApiError::unprocessable(ErrorCode::InvalidSchema, e.to_string())
                    .with_details(details)
            }
            CatalogError::Store(e) => e.into(),
        }
    }
}

/// Where an endpoint sorts in the catalog: oldest first (seed order), then by slug. Both come
/// from the stored record, so every node sorts alike and a position makes a cursor any node
/// can continue from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CatalogPosition {
    created_at: i128,
    slug: String,
}

impl CatalogPosition {
    fn of(endpoint: &Endpoint) -> Self {
        Self {
            created_at: endpoint.created_at.unix_timestamp_nanos(),
            slug: endpoint.slug.clone(),
        }
    }

    /// The opaque cursor text of this position.
    pub fn to_cursor(&self) -> String {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(format!("{}:{}", self.created_at, self.slug))
    }

    /// A position from [`to_cursor`](Self::to_cursor)'s text; `None` for anything else.
    pub fn from_cursor(cursor: &str) -> Option<Self> {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(cursor)
            .ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let (created_at, slug) = text.split_once(':')?;
        Some(Self {
            created_at: created_at.parse().ok()?,
            slug: slug.to_owned(),
        })
    }
}

/// One page of the catalog in order, and where the next one starts (`None`: this was the last).
pub struct CatalogPage {
    pub endpoints: Vec<Arc<CompiledEndpoint>>,
    pub next: Option<CatalogPosition>,
}

/// The in-memory catalog: by slug for calls, in catalog order for listings, by tag for the
/// `tag` filter. One lock guards all three, so they never disagree.
#[derive(Default)]
struct Index {
    by_slug: HashMap<String, Arc<CompiledEndpoint>>,
    ordered: BTreeMap<CatalogPosition, Arc<CompiledEndpoint>>,
    /// Lower-cased tag → positions of the endpoints carrying it.
    by_tag: HashMap<String, BTreeSet<CatalogPosition>>,
}

impl Index {
    fn insert(&mut self, compiled: Arc<CompiledEndpoint>) {
        self.remove(&compiled.endpoint.slug);
        let position = compiled.position();
        for tag in &compiled.endpoint.tags {
            self.by_tag
                .entry(tag.to_lowercase())
                .or_default()
                .insert(position.clone());
        }
        self.ordered.insert(position, compiled.clone());
        self.by_slug
            .insert(compiled.endpoint.slug.clone(), compiled);
    }

    fn remove(&mut self, slug: &str) -> Option<Arc<CompiledEndpoint>> {
        let old = self.by_slug.remove(slug)?;
        let position = old.position();
        self.ordered.remove(&position);
        for tag in &old.endpoint.tags {
            let tag = tag.to_lowercase();
            if let Some(positions) = self.by_tag.get_mut(&tag) {
                positions.remove(&position);
                if positions.is_empty() {
                    self.by_tag.remove(&tag);
                }
            }
        }
        Some(old)
    }
}

pub struct Registry {
    store: Arc<dyn Store>,
    index: RwLock<Index>,
    /// Moves on with every change to what the index holds; see [`Registry::generation`].
    generation: std::sync::atomic::AtomicU64,
}

impl Registry {
    /// Loads and compiles every stored endpoint.
    pub async fn load(store: Arc<dyn Store>) -> Result<Self, CatalogError> {
        let registry = Self {
            store,
            index: RwLock::new(Index::default()),
            generation: std::sync::atomic::AtomicU64::new(0),
        };
        registry.reload_all().await?;
        Ok(registry)
    }

    /// A number that changes whenever an endpoint is added, changed or removed in this
    /// process's index: what was rendered from the catalog at one generation is still true
    /// while it stays the same.
    pub fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Reads every endpoint from the store again, replacing what is in memory (at start-up, and
    /// when a node missed changes). Returns the slugs that are gone.
    pub async fn reload_all(&self) -> Result<Vec<String>, CatalogError> {
        let mut index = Index::default();
        let mut after: Option<Vec<u8>> = None;
        loop {
            let page = self
                .store
                .scan_prefix(Tree::Endpoints, b"", after.as_deref(), 256)
                .await?;
            let Some((last, _)) = page.last() else { break };
            after = Some(last.clone());
            for (key, bytes) in page {
                let endpoint = decode(&key, &bytes)?;
                index.insert(Arc::new(CompiledEndpoint::load(endpoint)));
            }
        }
        let mut current = self.write();
        let gone = current
            .by_slug
            .keys()
            .filter(|slug| !index.by_slug.contains_key(*slug))
            .cloned()
            .collect();
        *current = index;
        self.changed();
        Ok(gone)
    }

    /// Reads one endpoint from the store again after another node changed it. Returns whether
    /// what this node held changed (a new revision, or deleted).
    pub async fn reload(&self, slug: &str) -> Result<bool, CatalogError> {
        match self.store.get(Tree::Endpoints, slug.as_bytes()).await? {
            Some(bytes) => {
                let endpoint = decode(slug.as_bytes(), &bytes)?;
                let unchanged = self.get(slug).is_some_and(|current| {
                    current.endpoint.id == endpoint.id
                        && current.endpoint.revision == endpoint.revision
                });
                if !unchanged {
                    self.remember(CompiledEndpoint::compile(endpoint)?);
                }
                Ok(!unchanged)
            }
            None => Ok(self.forget(slug).is_some()),
        }
    }

    pub fn get(&self, slug: &str) -> Option<Arc<CompiledEndpoint>> {
        self.read().by_slug.get(slug).cloned()
    }

    pub fn require(&self, slug: &str) -> Result<Arc<CompiledEndpoint>, CatalogError> {
        self.get(slug)
            .ok_or_else(|| CatalogError::NotFound(slug.to_string()))
    }

    /// Every endpoint, oldest first (seed order), then by slug.
    pub fn all(&self) -> Vec<Arc<CompiledEndpoint>> {
        self.read().ordered.values().cloned().collect()
    }

    /// Up to `limit` endpoints that `keep` accepts, in catalog order after `after` (from the
    /// start when `None`), only those carrying `tag` (ignoring case) when one is given. Reads
    /// the tag's own list rather than the catalog when filtering by tag.
    pub fn page(
        &self,
        after: Option<&CatalogPosition>,
        tag: Option<&str>,
        limit: usize,
        keep: impl Fn(&CompiledEndpoint) -> bool,
    ) -> CatalogPage {
        let from = after.map_or(Bound::Unbounded, Bound::Excluded);
        let index = self.read();
        let candidates: Box<dyn Iterator<Item = &Arc<CompiledEndpoint>>> = match tag {
            None => Box::new(
                index
                    .ordered
                    .range((from, Bound::Unbounded))
                    .map(|(_, c)| c),
            ),
            Some(tag) => match index.by_tag.get(&tag.to_lowercase()) {
                None => Box::new(std::iter::empty()),
                Some(positions) => Box::new(
                    positions
                        .range((from, Bound::Unbounded))
                        .filter_map(|position| index.ordered.get(position)),
                ),
            },
        };
        let mut endpoints = Vec::new();
        let mut next = None;
        for compiled in candidates.filter(|c| keep(c)) {
            if endpoints.len() == limit {
                // One more matches: the page ends at the last one taken.
                next = endpoints
                    .last()
                    .map(|c: &Arc<CompiledEndpoint>| c.position());
                break;
            }
            endpoints.push(compiled.clone());
        }
        CatalogPage { endpoints, next }
    }

    /// Stores a new endpoint; the slug must be free (checked atomically in the store).
    pub async fn insert_new(
        &self,
        endpoint: Endpoint,
    ) -> Result<Arc<CompiledEndpoint>, CatalogError> {
        let compiled = CompiledEndpoint::compile(endpoint)?;
        let key = compiled.endpoint.slug.as_bytes().to_vec();
        let batch = Batch::new()
            .require_absent(Tree::Endpoints, key.clone())
            .put(Tree::Endpoints, key, encode(&compiled.endpoint)?);
        match self.store.apply(batch).await {
            Err(StoreError::ConditionFailed(_)) => {
                Err(CatalogError::SlugTaken(compiled.endpoint.slug.clone()))
            }
            other => other.map_err(CatalogError::from),
        }?;
        Ok(self.remember(compiled))
    }

    /// Replaces an existing endpoint, only if it is still at `expected_revision` (the revision
    /// the caller read and changed); otherwise [`CatalogError::Conflict`]. Checked against the
    /// stored record in the same atomic step as the write, so of two concurrent updates (on any
    /// nodes) one wins and the other conflicts.
    pub async fn update(
        &self,
        endpoint: Endpoint,
        expected_revision: u64,
    ) -> Result<Arc<CompiledEndpoint>, CatalogError> {
        let compiled = CompiledEndpoint::compile(endpoint)?;
        let slug = compiled.endpoint.slug.clone();
        let stored = self.stored(&slug).await?;
        if decode(slug.as_bytes(), &stored)?.revision != expected_revision {
            return Err(CatalogError::Conflict(slug));
        }
        let batch = Batch::new()
            .require_equals(Tree::Endpoints, slug.as_bytes(), Some(stored))
            .put(
                Tree::Endpoints,
                slug.as_bytes(),
                encode(&compiled.endpoint)?,
            );
        match self.store.apply(batch).await {
            Err(StoreError::ConditionFailed(_)) => Err(CatalogError::Conflict(slug)),
            other => other.map_err(CatalogError::from),
        }?;
        Ok(self.remember(compiled))
    }

    /// Removes an endpoint and frees its slug.
    pub async fn remove(&self, slug: &str) -> Result<Endpoint, CatalogError> {
        let stored = self.stored(slug).await?;
        let existing = decode(slug.as_bytes(), &stored)?;
        let batch = Batch::new()
            .require_equals(Tree::Endpoints, slug.as_bytes(), Some(stored))
            .delete(Tree::Endpoints, slug.as_bytes());
        match self.store.apply(batch).await {
            Err(StoreError::ConditionFailed(_)) => Err(CatalogError::Conflict(slug.to_string())),
            other => other.map_err(CatalogError::from),
        }?;
        self.forget(slug);
        Ok(existing)
    }

    /// The endpoint's stored bytes, or `NotFound`.
    async fn stored(&self, slug: &str) -> Result<Vec<u8>, CatalogError> {
        match self.store.get(Tree::Endpoints, slug.as_bytes()).await? {
            Some(bytes) => Ok(bytes),
            None => {
                self.forget(slug);
                Err(CatalogError::NotFound(slug.to_string()))
            }
        }
    }

    fn remember(&self, compiled: CompiledEndpoint) -> Arc<CompiledEndpoint> {
        let compiled = Arc::new(compiled);
        self.write().insert(compiled.clone());
        self.changed();
        compiled
    }

    fn forget(&self, slug: &str) -> Option<Arc<CompiledEndpoint>> {
        let removed = self.write().remove(slug);
        if removed.is_some() {
            self.changed();
        }
        removed
    }

    /// Called after the index changed, with its lock released: a reader that sees the new
    /// generation also sees the change.
    fn changed(&self) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Index> {
        // Nothing that can panic runs while the lock is held for writing: only map inserts
        // and removes (`Index::insert`/`remove`), or a whole index swapped in.
        self.index.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Index> {
        self.index.write().unwrap_or_else(|p| p.into_inner())
    }
}

fn encode(endpoint: &Endpoint) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(endpoint).map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn decode(key: &[u8], bytes: &[u8]) -> Result<Endpoint, StoreError> {
    serde_json::from_slice(bytes)
        .map_err(|e| StoreError::Corrupt(format!("endpoint {}: {e}", String::from_utf8_lossy(key))))
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

    #[tokio::test]
    async fn updates_are_guarded_by_revision_and_existence() {
        let registry = Registry::load(Arc::new(SledStore::temporary().unwrap()))
            .await
            .unwrap();
        registry.insert_new(endpoint("one")).await.unwrap();
        assert!(matches!(
            registry.insert_new(endpoint("one")).await,
            Err(CatalogError::SlugTaken(_))
        ));
        let mut next = endpoint("one");
        next.revision = 2;
        registry.update(next.clone(), 1).await.unwrap();
        // A second writer that read revision 1 loses instead of overwriting.
        assert!(matches!(
            registry.update(next.clone(), 1).await,
            Err(CatalogError::Conflict(_))
        ));
        registry.remove("one").await.unwrap();
        // An update racing a delete cannot bring the endpoint back.
        assert!(matches!(
            registry.update(next, 2).await,
            Err(CatalogError::NotFound(_))
        ));
        assert!(registry.get("one").is_none());
    }

    /// Stored endpoints load without compiling their schemas; on first use a schema from
    /// before patterns had to be linear-time still validates, and one that no longer compiles
    /// at all refuses every value instead of stopping the server or accepting anything.
    #[tokio::test]
    async fn stored_schemas_compile_on_first_use_and_never_stop_the_start() {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let mut lookbehind = endpoint("lookbehind");
        lookbehind.input_schema = json!({"type": "string", "pattern": "(?<=a)b"});
        let mut broken = endpoint("broken");
        broken.input_schema = json!({"type": 5});
        for e in [&lookbehind, &broken] {
            assert!(
                CompiledEndpoint::compile(e.clone()).is_err(),
                "refused when created"
            );
            store
                .put(Tree::Endpoints, e.slug.as_bytes(), &encode(e).unwrap())
                .await
                .unwrap();
        }
        let registry = Registry::load(store).await.unwrap();
        let lookbehind = registry.get("lookbehind").unwrap();
        assert!(
            lookbehind.validators.get().is_none(),
            "not compiled at load"
        );
        assert!(lookbehind.input_violations(&json!("ab")).is_empty());
        assert!(!lookbehind.input_violations(&json!("cb")).is_empty());
        let broken = registry.get("broken").unwrap();
        assert!(!broken.input_violations(&json!("anything")).is_empty());
        assert!(!broken.input_violations(&json!(5)).is_empty());
    }
}
