//! The catalogued endpoints of spec 2.4, loaded from `fixtures/catalog/` on start.
//!
//! Seeding is idempotent and respects the admin: each fixture is inserted once, marked in the
//! meta tree, and never re-created after an admin deletes it. Fixtures are compiled into the
//! binary so the server starts from any directory; `Config::seed_dir` swaps in another set.
//! Only the directories seeding reads are embedded (`catalog/`, `handlers/`, `handler-files/`):
//! the test fixtures beside them (`fixtures/hostile/`, `fixtures/chain/`) stay out of the binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use include_dir::{include_dir, Dir};
use serde::Deserialize;
use serde_json::Value;
use time::OffsetDateTime;

use super::model::{Capabilities, Endpoint, HandlerType, JsonText, Owner, Status};
use super::registry::{CatalogError, CompiledEndpoint, Registry};
use crate::config::Quotas;
use crate::handler_data::{write_counted, Space};
use crate::money::Usd;
use crate::store::{Batch, Store, StoreError, Tree};

static CATALOG: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/fixtures/catalog");
static HANDLERS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/fixtures/handlers");
static HANDLER_FILES: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/fixtures/handler-files");

/// The embedded directory a path relative to the fixtures root lies in, and the path inside it.
fn embedded(relative: &str) -> Option<(&'static Dir<'static>, &str)> {
    let (top, rest) = relative.split_once('/')?;
    let dir = match top {
        "catalog" => &CATALOG,
        "handlers" => &HANDLERS,
        "handler-files" => &HANDLER_FILES,
        _ => return None,
    };
    Some((dir, rest))
}

/// One fixture file in `fixtures/catalog/`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Fixture {
    slug: String,
    title: String,
    description: String,
    price_usd: Usd,
    handler_type: HandlerType,
    tags: Vec<String>,
    input_schema: Value,
    output_schema: Value,
    #[serde(default)]
    capabilities: Capabilities,
    /// Path of the JS source, relative to the fixtures root.
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    response: Option<Value>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    example_input: Value,
}

#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error("fixture {file}: {message}")]
    Fixture { file: String, message: String },
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Reads fixture files either from the embedded copy or from a directory on disk.
enum Source<'a> {
    Embedded,
    Disk(&'a Path),
}

impl Source<'_> {
    fn catalog_files(&self) -> Result<Vec<(String, String)>, SeedError> {
        let mut files = match self {
            Source::Embedded => CATALOG
                .files()
                .filter(|f| f.path().extension().is_some_and(|e| e == "json"))
                .map(|f| {
                    (
                        format!("catalog/{}", f.path().display()),
                        f.contents_utf8().unwrap_or_default().to_string(),
                    )
                })
                .collect(),
            Source::Disk(root) => {
                let dir = root.join("catalog");
                let entries = std::fs::read_dir(&dir).map_err(|e| fixture_error(&dir, e))?;
                let mut files = Vec::new();
                for entry in entries {
                    let path = entry.map_err(|e| fixture_error(&dir, e))?.path();
                    if path.extension().is_some_and(|e| e == "json") {
                        let text =
                            std::fs::read_to_string(&path).map_err(|e| fixture_error(&path, e))?;
                        files.push((path.display().to_string(), text));
                    }
                }
                files
            }
        };
        files.sort();
        Ok(files)
    }

    /// Every file under `handler-files/<slug>/`, as (path relative to that folder, bytes).
    fn handler_files(&self, slug: &str) -> Result<Vec<(String, Vec<u8>)>, SeedError> {
        let root = format!("handler-files/{slug}");
        let mut out = Vec::new();
        match self {
            Source::Embedded => {
                let Some(dir) = HANDLER_FILES.get_dir(slug) else {
                    return Ok(out);
                };
                let mut stack = vec![dir];
                while let Some(dir) = stack.pop() {
                    for file in dir.files() {
                        let relative = file.path().strip_prefix(slug).unwrap_or(file.path());
                        out.push((relative.display().to_string(), file.contents().to_vec()));
                    }
                    stack.extend(dir.dirs());
                }
            }
            Source::Disk(base) => {
                let mut stack = vec![base.join(&root)];
                while let Some(dir) = stack.pop() {
                    let Ok(entries) = std::fs::read_dir(&dir) else {
                        continue;
                    };
                    for entry in entries {
                        let path = entry.map_err(|e| fixture_error(&dir, e))?.path();
                        if path.is_dir() {
                            stack.push(path);
                        } else {
                            let bytes =
                                std::fs::read(&path).map_err(|e| fixture_error(&path, e))?;
                            let relative = path.strip_prefix(base.join(&root)).unwrap_or(&path);
                            out.push((relative.display().to_string(), bytes));
                        }
                    }
                }
            }
        }
        out.sort();
        Ok(out)
    }

    fn read(&self, relative: &str) -> Result<String, SeedError> {
        match self {
            Source::Embedded => embedded(relative)
                .and_then(|(dir, path)| dir.get_file(path))
                .and_then(|f| f.contents_utf8())
                .map(str::to_string)
                .ok_or_else(|| fixture_error(Path::new(relative), "missing embedded file")),
            Source::Disk(root) => {
                let path: PathBuf = root.join(relative);
                std::fs::read_to_string(&path).map_err(|e| fixture_error(&path, e))
            }
        }
    }
}

fn fixture_error(path: &Path, e: impl std::fmt::Display) -> SeedError {
    SeedError::Fixture {
        file: path.display().to_string(),
        message: e.to_string(),
    }
}

fn seed_marker(slug: &str) -> Vec<u8> {
    format!("seeded/{slug}").into_bytes()
}

/// Inserts every fixture not seeded before. Returns the slugs inserted now.
pub async fn seed_catalog(
    registry: &Registry,
    store: &dyn Store,
    quotas: &Quotas,
    dir: Option<&Path>,
) -> Result<Vec<String>, SeedError> {
    let source = dir.map_or(Source::Embedded, Source::Disk);
    let mut inserted = Vec::new();
    // Seeded endpoints list in fixture order: give each a distinct creation instant.
    let start = OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .unwrap_or_else(|_| OffsetDateTime::now_utc());
    for (index, (file, text)) in source.catalog_files()?.into_iter().enumerate() {
        let fixture: Fixture =
            serde_json::from_str(&text).map_err(|e| fixture_error(Path::new(&file), e))?;
        if store
            .get(Tree::Meta, &seed_marker(&fixture.slug))
            .await?
            .is_some()
        {
            continue;
        }
        let source_code = fixture
            .source
            .as_deref()
            .map(|p| source.read(p))
            .transpose()?;
        let at = start + time::Duration::milliseconds(index as i64);
        let endpoint = Endpoint {
            id: format!("ep_{}", uuid::Uuid::now_v7().simple()),
            slug: fixture.slug.clone(),
            title: fixture.title,
            description: fixture.description,
            status: Status::Active,
            price_usd: fixture.price_usd,
            metering: None,
            handler_type: fixture.handler_type,
            tags: fixture.tags,
            input_schema: fixture.input_schema.into(),
            output_schema: fixture.output_schema.into(),
            requested_capabilities: fixture.capabilities,
            granted_capabilities: fixture.capabilities,
            grant_decision: None,
            content_safety: None,
            limits: None,
            generation: 0,
            serving_revision: 0,
            latest_revision: 0,
            pending: None,
            rollout: None,
            owner: Owner::System,
            owner_name: None,
            source: source_code,
            source_language: Default::default(),
            response: fixture.response.map(JsonText::from),
            env: fixture.env,
            allowed_hosts: None,
            example_input: Some(fixture.example_input.into()),
            created_at: at,
            updated_at: at,
        };
        // Fail loudly on a fixture whose example breaks its own schema: the catalog shows it.
        let v = CompiledEndpoint::compile(endpoint.clone())?.example_violations();
        if !v.is_empty() {
            return Err(fixture_error(
                Path::new(&file),
                format!("exampleInput breaks inputSchema: {v:?}"),
            ));
        }
        let id = match registry.insert_new(endpoint, Batch::new()).await {
            Ok(compiled) => compiled.endpoint.id.clone(),
            // Inserted by a start that stopped before its marker, or a builder's endpoint since.
            Err(CatalogError::SlugTaken(_)) => match registry.get(&fixture.slug) {
                Some(c) if c.endpoint.owner == Owner::System => c.endpoint.id.clone(),
                _ => continue,
            },
            Err(e) => return Err(e.into()),
        };
        for (path, bytes) in source.handler_files(&fixture.slug)? {
            let path = sandbox::normalize_file_path(&path)
                .map_err(|e| fixture_error(Path::new(&path), e))?;
            write_counted(store, quotas, Space::Files, &id, None, &path, Some(bytes))
                .await
                .map_err(|e| fixture_error(Path::new(&path), e))?;
        }
        store
            .put(Tree::Meta, &seed_marker(&fixture.slug), b"1")
            .await?;
        inserted.push(fixture.slug);
    }
    Ok(inserted)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every embedded catalog entry's handler source is embedded too, and nothing from the
    /// test-only fixture directories is.
    #[test]
    fn embedded_sources_resolve() {
        let source = Source::Embedded;
        let files = source.catalog_files().unwrap();
        assert!(!files.is_empty());
        for (file, text) in files {
            let fixture: Fixture = serde_json::from_str(&text).unwrap();
            if let Some(path) = fixture.source {
                assert!(source.read(&path).is_ok(), "{file}: {path} is not embedded");
            }
        }
        assert!(source.read("hostile/infinite-loop.js").is_err());
        assert!(source.read("chain/TestUSDC.sol").is_err());
    }
}
