//! The catalog index: every endpoint in memory, with its schemas compiled, over the store.
//!
//! Reads (every `/tools/{slug}` call, every catalog listing) never touch the store or recompile a
//! schema; writes go to the store first (checked against the stored record, so concurrent
//! writers on any node cannot overwrite each other), then replace the in-memory entry. When
//! nodes share a store, each follows the store's change feed and [`Registry::reload`]s what
//! another node changed.
//!
//! The index keeps endpoints in catalog order, by tag, and by the trigrams of what `q` searches
//! (`search`), so a page of the catalog (HTTP `limit`/`cursor`, MCP `tools/list`, a search)
//! costs the page and its matches, not the catalog; and a generation that moves on every
//! change, so a rendered listing can be reused until something changes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::{Arc, OnceLock, RwLock};

use axum::http::StatusCode;
use serde_json::json;

use super::model::{Endpoint, JsonText, Owner};
use super::revision::{self, Author};
use super::schema::{self, Violation};
use super::search::{SearchIndex, SearchText};
use crate::error::{ApiError, ErrorCode};
use crate::store::{Batch, EndpointRow, Store, StoreError};

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
    search_text: SearchText,
    /// `Some(n)` when this is not the endpoint as it serves but its kept revision `n`, built
    /// for a test call of it (`X-Toolhost-Revision`): the sandbox gives it isolates of its own,
    /// so trying a revision leaves the serving one's warm.
    pub trial: Option<u64>,
    /// The revision a rollout gives a share of calls ([`Endpoint::rollout`]), built as a trial
    /// of it so it runs in isolates of its own; what a call runs is chosen by
    /// `endpoints::rollout::route`.
    pub candidate: Option<Arc<CompiledEndpoint>>,
    /// The id of the rollout whose counts a call of this one goes to (the serving revision's
    /// and the candidate's alike); `None` when no rollout runs.
    pub rollout_id: Option<Arc<str>>,
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
                schema::compile(&endpoint.input_schema.value()).map_err(invalid("inputSchema"))?,
            ),
            output: Arc::new(
                schema::compile(&endpoint.output_schema.value())
                    .map_err(invalid("outputSchema"))?,
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
        let search_text = SearchText::new(
            [&endpoint.slug, &endpoint.title, &endpoint.description]
                .into_iter()
                .chain(&endpoint.tags)
                .map(String::as_str),
        );
        let rollout_id: Option<Arc<str>> = endpoint.rollout.as_ref().map(|r| r.id.as_str().into());
        let candidate = endpoint.rollout.as_ref().map(|rollout| {
            let ep = endpoint.as_kept(rollout.content.clone(), rollout.revision);
            let mut candidate = Self::load(ep).trial(rollout.revision);
            candidate.rollout_id = rollout_id.clone();
            Arc::new(candidate)
        });
        Self {
            endpoint,
            validators: OnceLock::new(),
            search_text,
            trial: None,
            candidate,
            rollout_id,
        }
    }

    /// This endpoint as kept revision `revision` of it, not as it serves: the sandbox gives it
    /// isolates of their own (`slug#rN`).
    pub fn trial(mut self, revision: u64) -> Self {
        self.trial = Some(revision);
        self
    }

    fn validators(&self) -> &Validators {
        self.validators.get_or_init(|| {
            let compile = |field: &str, schema: &JsonText| {
                Arc::new(schema::compile_stored(&schema.value()).unwrap_or_else(|e| {
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
        self.search_text.mentions(needle)
    }

    /// Where this endpoint sorts in the catalog.
    pub fn position(&self) -> CatalogPosition {
        CatalogPosition::of(&self.endpoint)
    }

    /// [`position`](Self::position)'s [key](CatalogPosition::key), without copying the slug.
    fn sort_key(&self) -> (i128, &str) {
        (
            self.endpoint.created_at.unix_timestamp_nanos(),
            &self.endpoint.slug,
        )
    }

    pub fn input_violations(&self, input: &serde_json::Value) -> Vec<Violation> {
        schema::violations(&self.validators().input, input)
    }

    /// Where its `exampleInput` breaks its `inputSchema` (none without an example).
    pub fn example_violations(&self) -> Vec<Violation> {
        self.endpoint
            .example_input
            .as_ref()
            .map(|example| self.input_violations(&example.value()))
            .unwrap_or_default()
    }

    pub fn output_violations(&self, output: &serde_json::Value) -> Vec<Violation> {
        schema::violations(&self.validators().output, output)
    }

    /// [`input_violations`](Self::input_violations) for request handlers (see
    /// [`schema::check_off_worker`]).
    /// Bounded (see [`schema::Violations`]).
    pub async fn input_violations_async(&self, input: &serde_json::Value) -> schema::Violations {
        schema::check_off_worker(&self.validators().input, input).await
    }

    /// [`output_violations`](Self::output_violations) for request handlers: the first ones.
    pub async fn output_violations_async(&self, output: &serde_json::Value) -> Vec<Violation> {
        schema::check_off_worker(&self.validators().output, output)
            .await
            .listed
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
    /// What positions compare by, borrowed.
    fn key(&self) -> (i128, &str) {
        (self.created_at, &self.slug)
    }

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
/// `tag` filter, by trigram for `q`. One lock guards them all, so they never disagree. Each
/// endpoint has a slot, a small number that the maps hold instead of the endpoint itself (the
/// trigram index holds one per trigram).
#[derive(Default)]
struct Index {
    by_slug: HashMap<String, u32>,
    /// The endpoints by slot; `None`: free, and listed in `free`.
    slots: Vec<Option<Arc<CompiledEndpoint>>>,
    free: Vec<u32>,
    ordered: BTreeMap<CatalogPosition, u32>,
    /// Lower-cased tag → positions of the endpoints carrying it.
    by_tag: HashMap<String, BTreeSet<CatalogPosition>>,
    search: SearchIndex,
}

impl Index {
    fn get(&self, slug: &str) -> Option<&Arc<CompiledEndpoint>> {
        self.by_slug.get(slug).map(|&slot| self.at(slot))
    }

    /// The endpoint in a slot the maps hold.
    fn at(&self, slot: u32) -> &Arc<CompiledEndpoint> {
        self.slots[slot as usize]
            .as_ref()
            .expect("the maps hold only taken slots")
    }

    /// Adds an endpoint, or replaces the one with its slug (keeping its slot, so only the
    /// trigrams that changed are indexed again).
    fn insert(&mut self, compiled: Arc<CompiledEndpoint>) {
        let old = self.unlist(&compiled.endpoint.slug);
        let slot = match &old {
            Some((slot, _)) => *slot,
            None => self.free.pop().unwrap_or_else(|| {
                self.slots.push(None);
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 endpoints")
            }),
        };
        self.search.insert(
            slot,
            &compiled.search_text,
            old.as_ref().map(|(_, old)| &old.search_text),
        );
        let position = compiled.position();
        for tag in &compiled.endpoint.tags {
            self.by_tag
                .entry(tag.to_lowercase())
                .or_default()
                .insert(position.clone());
        }
        self.ordered.insert(position, slot);
        self.by_slug.insert(compiled.endpoint.slug.clone(), slot);
        self.slots[slot as usize] = Some(compiled);
    }

    fn remove(&mut self, slug: &str) -> Option<Arc<CompiledEndpoint>> {
        let (slot, old) = self.unlist(slug)?;
        self.search.remove(slot, &old.search_text);
        self.free.push(slot);
        Some(old)
    }

    /// Takes an endpoint out of every map but the trigram index; its slot stays reserved.
    fn unlist(&mut self, slug: &str) -> Option<(u32, Arc<CompiledEndpoint>)> {
        let slot = self.by_slug.remove(slug)?;
        let old = self.slots[slot as usize]
            .take()
            .expect("the maps hold only taken slots");
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
        Some((slot, old))
    }

    /// See [`Registry::search`].
    fn page(
        &self,
        after: Option<&CatalogPosition>,
        tag: Option<&str>,
        needle: Option<&str>,
        limit: usize,
        keep: impl Fn(&CompiledEndpoint) -> bool,
    ) -> CatalogPage {
        let accepts = |c: &CompiledEndpoint| keep(c) && needle.is_none_or(|n| c.mentions(n));
        let candidates = needle.and_then(|n| self.search.candidates(n));
        // In catalog order from `after`, as far as checking the index's candidates would go
        // (all the way without them): a query that many endpoints match fills its page early.
        let budget = candidates.as_ref().map_or(usize::MAX, Vec::len);
        let from = after.map_or(Bound::Unbounded, Bound::Excluded);
        let in_order: Box<dyn Iterator<Item = u32>> = match tag {
            None => Box::new(
                self.ordered
                    .range((from, Bound::Unbounded))
                    .map(|(_, &s)| s),
            ),
            Some(tag) => match self.by_tag.get(&tag.to_lowercase()) {
                None => Box::new(std::iter::empty()),
                Some(positions) => Box::new(
                    positions
                        .range((from, Bound::Unbounded))
                        .filter_map(|position| self.ordered.get(position).copied()),
                ),
            },
        };
        let visited = std::cell::Cell::new(0usize);
        let scanned = first(
            in_order
                .take_while(|_| {
                    visited.set(visited.get() + 1);
                    visited.get() <= budget
                })
                .map(|slot| self.at(slot))
                .filter(|c| accepts(c)),
            limit,
        );
        let Some(candidates) =
            candidates.filter(|_| scanned.next.is_none() && visited.get() > budget)
        else {
            return scanned;
        };
        // The scan stopped at its budget: the page is among the candidates.
        let tag = tag.map(str::to_lowercase);
        let mut found: Vec<&Arc<CompiledEndpoint>> = candidates
            .into_iter()
            .map(|slot| self.at(slot))
            .filter(|c| after.is_none_or(|a| c.sort_key() > a.key()))
            .filter(|c| {
                tag.as_ref()
                    .is_none_or(|t| c.endpoint.tags.iter().any(|x| x.to_lowercase() == *t))
            })
            .filter(|c| accepts(c))
            .collect();
        let order = |a: &&Arc<CompiledEndpoint>, b: &&Arc<CompiledEndpoint>| {
            a.sort_key().cmp(&b.sort_key())
        };
        // Only the page and the one after it need sorting.
        if let Some(keep) = limit.checked_add(1).filter(|&n| found.len() > n) {
            found.select_nth_unstable_by(keep, order);
            found.truncate(keep);
        }
        found.sort_unstable_by(order);
        first(found.into_iter(), limit)
    }
}

/// The first `limit` of `matches` (in catalog order), and where the next page starts if one
/// more follows.
fn first<'a>(
    matches: impl Iterator<Item = &'a Arc<CompiledEndpoint>>,
    limit: usize,
) -> CatalogPage {
    let mut endpoints: Vec<Arc<CompiledEndpoint>> = Vec::new();
    let mut next = None;
    for compiled in matches {
        if endpoints.len() == limit {
            // One more matches: the page ends at the last one taken.
            next = endpoints.last().map(|c| c.position());
            break;
        }
        endpoints.push(compiled.clone());
    }
    CatalogPage { endpoints, next }
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
        registry.record_first_revisions().await?;
        Ok(registry)
    }

    /// Records as revisions the endpoints stored before revisions were kept (`Tree::Revisions`
    /// did not exist): each one's content becomes its serving revision, numbered as its old
    /// `revision` counter was so the numbers its owner saw go on growing. Nodes sharing a
    /// store may race to do it: the write is checked against the record read, and the loser
    /// reads the winner's.
    async fn record_first_revisions(&self) -> Result<(), CatalogError> {
        let legacy: Vec<_> = self
            .all()
            .into_iter()
            .filter(|c| c.endpoint.serving_revision == 0)
            .collect();
        for compiled in legacy {
            let slug = compiled.endpoint.slug.as_str();
            let stored = match self.stored(slug).await {
                Ok(stored) => stored,
                Err(CatalogError::NotFound(_)) => continue,
                Err(e) => return Err(e),
            };
            let mut endpoint = decode(slug, &stored)?;
            if endpoint.serving_revision != 0 {
                self.reload(slug).await?;
                continue;
            }
            let number = endpoint.generation.max(1);
            endpoint.serving_revision = number;
            endpoint.latest_revision = number;
            let first = revision::first(&endpoint, number, Author::System);
            let batch = Batch::new()
                .require_endpoint(slug, Some(stored))
                .put_endpoint(row(&endpoint)?);
            match self
                .store
                .apply(revision::write(batch, &endpoint.id, &first))
                .await
            {
                Err(StoreError::ConditionFailed(_)) => {
                    self.reload(slug).await?;
                }
                other => {
                    other?;
                    self.remember(CompiledEndpoint::load(endpoint));
                }
            }
        }
        Ok(())
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
        let mut after: Option<String> = None;
        loop {
            let page = self.store.endpoints(after.as_deref(), 256).await?;
            let Some((last, _)) = page.last() else { break };
            after = Some(last.clone());
            for (slug, bytes) in page {
                let endpoint = decode(&slug, &bytes)?;
                index.insert(Arc::new(CompiledEndpoint::load(endpoint)));
            }
        }
        index.search.shrink();
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
    /// what this node held changed (a new generation, or deleted).
    pub async fn reload(&self, slug: &str) -> Result<bool, CatalogError> {
        match self.store.endpoint(slug).await? {
            Some(bytes) => {
                let endpoint = decode(slug, &bytes)?;
                let unchanged = self.get(slug).is_some_and(|current| {
                    current.endpoint.id == endpoint.id
                        && current.endpoint.generation == endpoint.generation
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
        self.read().get(slug).cloned()
    }

    pub fn require(&self, slug: &str) -> Result<Arc<CompiledEndpoint>, CatalogError> {
        self.get(slug)
            .ok_or_else(|| CatalogError::NotFound(slug.to_string()))
    }

    /// Every endpoint, oldest first (seed order), then by slug.
    pub fn all(&self) -> Vec<Arc<CompiledEndpoint>> {
        let index = self.read();
        index
            .ordered
            .values()
            .map(|&slot| index.at(slot).clone())
            .collect()
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
        self.read().page(after, tag, None, limit, keep)
    }

    /// [`page`](Self::page), only endpoints that [mention](CompiledEndpoint::mentions)
    /// `needle` (lower-cased). Through the trigram index when `needle` has three bytes or more:
    /// the catalog is read in order only as far as checking the index's candidates would cost,
    /// so a search costs at most about twice its candidates, and a word no endpoint has costs
    /// nothing. A shorter `needle` is checked endpoint by endpoint in order.
    pub fn search(
        &self,
        after: Option<&CatalogPosition>,
        tag: Option<&str>,
        needle: &str,
        limit: usize,
        keep: impl Fn(&CompiledEndpoint) -> bool,
    ) -> CatalogPage {
        self.read().page(after, tag, Some(needle), limit, keep)
    }

    /// Stores a new endpoint with its first revision, numbered 1, and `also`'s conditions and
    /// writes; the slug must be free (checked atomically in the store).
    pub async fn insert_new(
        &self,
        mut endpoint: Endpoint,
        also: Batch,
    ) -> Result<Arc<CompiledEndpoint>, CatalogError> {
        endpoint.serving_revision = 1;
        endpoint.latest_revision = 1;
        let author = match endpoint.owner {
            Owner::Builder(_) => Author::Owner,
            Owner::Admin => Author::Admin,
            Owner::System => Author::System,
        };
        let first = revision::first(&endpoint, 1, author);
        let compiled = CompiledEndpoint::compile(endpoint)?;
        let batch = Batch::new()
            .require_endpoint(&compiled.endpoint.slug, None)
            .put_endpoint(row(&compiled.endpoint)?);
        let batch = revision::write(batch, &compiled.endpoint.id, &first).extend(also);
        match self.store.apply(batch).await {
            Err(StoreError::ConditionFailed(_)) => {
                Err(CatalogError::SlugTaken(compiled.endpoint.slug.clone()))
            }
            other => other.map_err(CatalogError::from),
        }?;
        Ok(self.remember(compiled))
    }

    /// Replaces an existing endpoint, only if it is still at `expected_generation` (the generation
    /// the caller read and changed); otherwise [`CatalogError::Conflict`]. Checked against the
    /// stored record in the same atomic step as the write, so of two concurrent updates (on any
    /// nodes) one wins and the other conflicts. `also`'s writes (a revision) land in the same
    /// atomic step.
    pub async fn update(
        &self,
        endpoint: Endpoint,
        expected_generation: u64,
        also: Batch,
    ) -> Result<Arc<CompiledEndpoint>, CatalogError> {
        let compiled = CompiledEndpoint::compile(endpoint)?;
        let slug = compiled.endpoint.slug.clone();
        let stored = self.stored(&slug).await?;
        if decode(&slug, &stored)?.generation != expected_generation {
            return Err(CatalogError::Conflict(slug));
        }
        let batch = Batch::new()
            .require_endpoint(&slug, Some(stored))
            .put_endpoint(row(&compiled.endpoint)?)
            .extend(also);
        match self.store.apply(batch).await {
            Err(StoreError::ConditionFailed(_)) => Err(CatalogError::Conflict(slug)),
            other => other.map_err(CatalogError::from),
        }?;
        Ok(self.remember(compiled))
    }

    /// Removes the endpoint `id` and frees its slug, with `also`'s writes in the same atomic
    /// step. `NotFound` when the slug is free or now another endpoint's (deleted and claimed
    /// again since the caller looked), which is left alone.
    pub async fn remove(
        &self,
        slug: &str,
        id: &str,
        also: Batch,
    ) -> Result<Endpoint, CatalogError> {
        let stored = self.stored(slug).await?;
        let existing = decode(slug, &stored)?;
        if existing.id != id {
            return Err(CatalogError::NotFound(slug.to_string()));
        }
        let batch = Batch::new()
            .require_endpoint(slug, Some(stored))
            .delete_endpoint(slug)
            .extend(also);
        match self.store.apply(batch).await {
            Err(StoreError::ConditionFailed(_)) => Err(CatalogError::Conflict(slug.to_string())),
            other => other.map_err(CatalogError::from),
        }?;
        self.forget(slug);
        Ok(existing)
    }

    /// The endpoint's stored bytes, or `NotFound`.
    async fn stored(&self, slug: &str) -> Result<Vec<u8>, CatalogError> {
        match self.store.endpoint(slug).await? {
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

/// The endpoint as the store keeps it: its JSON, with its slug, id and owning builder beside.
fn row(endpoint: &Endpoint) -> Result<EndpointRow, StoreError> {
    Ok(EndpointRow {
        slug: endpoint.slug.clone(),
        endpoint_id: endpoint.id.clone(),
        builder: endpoint.owner_builder().map(str::to_owned),
        entry: serde_json::to_vec(endpoint).map_err(|e| StoreError::Corrupt(e.to_string()))?,
    })
}

fn decode(slug: &str, bytes: &[u8]) -> Result<Endpoint, StoreError> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt(format!("endpoint {slug}: {e}")))
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
    async fn updates_are_guarded_by_generation_and_existence() {
        let registry = Registry::load(Arc::new(SledStore::temporary().unwrap()))
            .await
            .unwrap();
        registry
            .insert_new(endpoint("one"), Batch::new())
            .await
            .unwrap();
        assert!(matches!(
            registry.insert_new(endpoint("one"), Batch::new()).await,
            Err(CatalogError::SlugTaken(_))
        ));
        let mut next = endpoint("one");
        next.generation = 2;
        registry
            .update(next.clone(), 1, Batch::new())
            .await
            .unwrap();
        // A second writer that read generation 1 loses instead of overwriting.
        assert!(matches!(
            registry.update(next.clone(), 1, Batch::new()).await,
            Err(CatalogError::Conflict(_))
        ));
        // A delete that read another endpoint under the slug leaves this one alone.
        assert!(matches!(
            registry.remove("one", "ep_other", Batch::new()).await,
            Err(CatalogError::NotFound(_))
        ));
        assert!(registry.get("one").is_some());
        let id = registry.get("one").unwrap().endpoint.id.clone();
        registry.remove("one", &id, Batch::new()).await.unwrap();
        // An update racing a delete cannot bring the endpoint back.
        assert!(matches!(
            registry.update(next, 2, Batch::new()).await,
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
        lookbehind.input_schema = json!({"type": "string", "pattern": "(?<=a)b"}).into();
        let mut broken = endpoint("broken");
        broken.input_schema = json!({"type": 5}).into();
        for e in [&lookbehind, &broken] {
            assert!(
                CompiledEndpoint::compile(e.clone()).is_err(),
                "refused when created"
            );
            let stored = Batch::new().put_endpoint(row(e).unwrap());
            store.apply(stored).await.unwrap();
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

    /// The trigram index answers `q` exactly as checking every endpoint in order would, for
    /// any catalog, query, tag, filter and page size, as endpoints come, change and go.
    mod search {
        use super::*;
        use proptest::prelude::*;

        /// Text from a few letters in both cases, some that change length when lower-cased,
        /// and separators, so trigrams repeat across endpoints and fields.
        fn text() -> impl Strategy<Value = String> {
            proptest::collection::vec(
                prop::sample::select(vec!["a", "b", "A", "B", "é", "É", "İ", "ß", "-", " ", "ab"]),
                0..8,
            )
            .prop_map(|parts| parts.concat())
        }

        #[derive(Debug, Clone)]
        enum Change {
            Put {
                slug: u8,
                at: u8,
                title: String,
                description: String,
                tags: Vec<String>,
            },
            Remove {
                slug: u8,
            },
        }

        fn change() -> impl Strategy<Value = Change> {
            prop_oneof![
                4 => (0..24u8, 0..4u8, text(), text(), proptest::collection::vec(text(), 0..3))
                    .prop_map(|(slug, at, title, description, tags)| Change::Put { slug, at, title, description, tags }),
                1 => (0..24u8).prop_map(|slug| Change::Remove { slug }),
            ]
        }

        /// Some slugs with capitals, which their search text has lower-cased.
        fn name(slug: u8) -> String {
            let tail = if slug.is_multiple_of(3) { "Ab" } else { "b" };
            format!("s{slug}-{tail}")
        }

        fn put(
            slug: u8,
            at: u8,
            title: &str,
            description: &str,
            tags: &[String],
        ) -> Arc<CompiledEndpoint> {
            let mut e = endpoint(&name(slug));
            e.title = title.to_owned();
            e.description = description.to_owned();
            e.tags = tags.to_vec();
            e.created_at += time::Duration::seconds(at.into());
            Arc::new(CompiledEndpoint::load(e))
        }

        /// Every page of the search, cursor after cursor.
        fn pages(index: &Index, tag: Option<&str>, needle: &str, limit: usize) -> Vec<String> {
            let keep = |c: &CompiledEndpoint| !c.endpoint.slug.starts_with("s1");
            let mut out = Vec::new();
            let mut after = None;
            loop {
                let page = index.page(after.as_ref(), tag, Some(needle), limit, keep);
                assert!(page.endpoints.len() <= limit);
                out.extend(page.endpoints.iter().map(|c| c.endpoint.slug.clone()));
                match page.next {
                    Some(next) => after = Some(next),
                    None => return out,
                }
            }
        }

        /// What `q` meant before the index: each endpoint in order, checked.
        fn scan(index: &Index, tag: Option<&str>, needle: &str) -> Vec<String> {
            index
                .ordered
                .values()
                .map(|&slot| index.at(slot))
                .filter(|c| !c.endpoint.slug.starts_with("s1"))
                .filter(|c| {
                    tag.is_none_or(|t| {
                        c.endpoint
                            .tags
                            .iter()
                            .any(|x| x.to_lowercase() == t.to_lowercase())
                    })
                })
                .filter(|c| {
                    let e = &c.endpoint;
                    [&e.slug, &e.title, &e.description]
                        .into_iter()
                        .chain(&e.tags)
                        .any(|f| f.to_lowercase().contains(needle))
                })
                .map(|c| c.endpoint.slug.clone())
                .collect()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn index_answers_as_the_scan(
                changes in proptest::collection::vec(change(), 1..40),
                queries in proptest::collection::vec((text(), proptest::option::of(text()), 1..6usize), 1..6),
            ) {
                let mut index = Index::default();
                for change in changes {
                    match change {
                        Change::Put { slug, at, title, description, tags } => {
                            index.insert(put(slug, at, &title, &description, &tags));
                        }
                        Change::Remove { slug } => {
                            index.remove(&name(slug));
                        }
                    }
                    for (q, tag, limit) in &queries {
                        let needle = q.to_lowercase();
                        let tag = tag.as_deref();
                        prop_assert_eq!(pages(&index, tag, &needle, *limit), scan(&index, tag, &needle), "q {:?} tag {:?} limit {}", needle, tag, limit);
                    }
                }
                // Nothing left behind by what was removed or changed.
                let slugs: Vec<String> = index.by_slug.keys().cloned().collect();
                for slug in slugs {
                    index.remove(&slug);
                }
                prop_assert!(index.search.is_empty());
                prop_assert!(index.ordered.is_empty() && index.by_tag.is_empty());
            }
        }

        #[test]
        fn a_word_no_endpoint_has_reads_nothing() {
            let mut index = Index::default();
            for i in 0..100 {
                let description = if i % 4 == 0 {
                    "Forecast for a city"
                } else {
                    "Rain"
                };
                index.insert(put(i, 0, "Weather", description, &["geo".into()]));
            }
            assert_eq!(index.search.candidates("zebra"), Some(vec![]));
            assert_eq!(index.search.candidates("cast").map(|c| c.len()), Some(25));
            assert_eq!(index.search.candidates("ca"), None, "too short: scanned");
            assert!(index
                .page(None, None, Some("zebra"), 10, |_| true)
                .endpoints
                .is_empty());
        }
    }
}
