//! Per-endpoint handler files (`ctx.files`), stored in `Tree::HandlerFiles` as `<slug>/<path>`.
//!
//! Paths follow the sandbox's one rule ([`sandbox::normalize_file_path`]), checked here before
//! anything is written, because the sandbox resolves `ctx.files` reads against the same keys.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::store::{Batch, Store, StoreResult, Tree};

pub const MAX_FILE_BYTES: usize = 1024 * 1024;
pub const MAX_FILES: usize = 100;

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(super) struct FileInfo {
    pub path: String,
    pub bytes: usize,
}

fn prefix(slug: &str) -> Vec<u8> {
    format!("{slug}/").into_bytes()
}

fn key(slug: &str, path: &str) -> Vec<u8> {
    format!("{slug}/{path}").into_bytes()
}

/// Why an uploaded path is refused, or `None` when it is acceptable: the sandbox's rule, and
/// the path must already be in the normal form it gives (`a/b`, not `./a//b`), so that the key
/// uploaded is the key `ctx.files` reads.
fn path_problem(path: &str) -> Option<String> {
    match sandbox::normalize_file_path(path) {
        Err(e) => Some(e.to_string()),
        Ok(normal) if normal != path => Some(format!(
            "path must be in normal form (no empty or `.` segments): {normal:?}"
        )),
        Ok(_) => None,
    }
}

/// Checks a set of changes (`None` deletes a path) against the files already stored, and
/// returns the writes that apply them. Errors name the offending field.
pub(super) fn plan(
    store: &dyn Store,
    slug: &str,
    changes: &BTreeMap<String, Option<String>>,
) -> Result<Batch, (String, String)> {
    for (path, content) in changes {
        if let Some(problem) = path_problem(path) {
            return Err((format!("files/{path}"), format!("file {problem}")));
        }
        if content.as_ref().is_some_and(|c| c.len() > MAX_FILE_BYTES) {
            return Err((
                format!("files/{path}"),
                format!("a file holds at most {MAX_FILE_BYTES} bytes"),
            ));
        }
    }
    let existing: Vec<String> = list(store, slug)
        .map_err(|e| ("files".to_string(), e.to_string()))?
        .into_iter()
        .map(|f| f.path)
        .collect();
    let mut after: std::collections::BTreeSet<&str> = existing.iter().map(String::as_str).collect();
    for (path, content) in changes {
        match content {
            Some(_) => after.insert(path),
            None => after.remove(path.as_str()),
        };
    }
    if after.len() > MAX_FILES {
        return Err((
            "files".into(),
            format!("an endpoint holds at most {MAX_FILES} files"),
        ));
    }
    Ok(changes
        .iter()
        .fold(Batch::new(), |batch, (path, content)| match content {
            Some(c) => batch.put(Tree::HandlerFiles, key(slug, path), c.as_bytes().to_vec()),
            None => batch.delete(Tree::HandlerFiles, key(slug, path)),
        }))
}

/// Paths and sizes of an endpoint's files, by path.
pub(super) fn list(store: &dyn Store, slug: &str) -> StoreResult<Vec<FileInfo>> {
    let prefix = prefix(slug);
    Ok(store
        .scan_prefix(Tree::HandlerFiles, &prefix, None, MAX_FILES + 1)?
        .into_iter()
        .map(|(k, v)| FileInfo {
            path: String::from_utf8_lossy(&k[prefix.len()..]).into_owned(),
            bytes: v.len(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;

    #[test]
    fn paths() {
        for ok in ["a.txt", "data/prompts/en.md", "x..y"] {
            assert_eq!(path_problem(ok), None, "{ok}");
        }
        let long = "a".repeat(257);
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a\\b",
            "a\0b",
            "a//b",
            "./a",
            "a/",
            ".",
            long.as_str(),
        ] {
            assert!(path_problem(bad).is_some(), "{bad:?}");
        }
        assert_eq!(
            path_problem("./a//b").unwrap(),
            r#"path must be in normal form (no empty or `.` segments): "a/b""#
        );
    }

    #[test]
    fn plans_within_limits() {
        let store = SledStore::temporary().unwrap();
        let mut changes: BTreeMap<String, Option<String>> = (0..MAX_FILES)
            .map(|i| (format!("f{i}"), Some("x".into())))
            .collect();
        store.apply(plan(&store, "s", &changes).unwrap()).unwrap();
        assert_eq!(list(&store, "s").unwrap().len(), MAX_FILES);
        let one_more: BTreeMap<String, Option<String>> =
            [("new".to_string(), Some("y".into()))].into();
        assert!(plan(&store, "s", &one_more).is_err());
        changes.clear();
        changes.insert("f0".into(), None);
        changes.insert("new".into(), Some("y".into()));
        store.apply(plan(&store, "s", &changes).unwrap()).unwrap();
        assert!(list(&store, "s").unwrap().iter().any(|f| f.path == "new"));
        let huge: BTreeMap<String, Option<String>> =
            [("big".to_string(), Some("x".repeat(MAX_FILE_BYTES + 1)))].into();
        assert!(plan(&store, "t", &huge).is_err());
        crate::runtime::host::forget_endpoint(&store, "s").unwrap();
        assert!(list(&store, "s").unwrap().is_empty());
    }
}
