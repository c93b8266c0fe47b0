//! Per-endpoint handler files (`ctx.files`), stored as the store's handler entries
//! ([`HandlerSpace::Files`]) of the endpoint's id, by path.
//!
//! Paths follow the sandbox's one rule ([`sandbox::normalize_file_path`]), checked here before
//! anything is written, because the sandbox resolves `ctx.files` reads against the same keys.
//! Uploads are written like the handler's own writes ([`handler_data::write_counted_all`]), so the
//! files quota and the owning builder's total count them.

use std::collections::{BTreeMap, BTreeSet};

use sandbox::HostError;
use serde::Serialize;

use super::error::EndpointError;
use crate::config::Quotas;
use crate::handler_data::{self, Change, Space};
use crate::store::{HandlerSpace, Store, StoreError, StoreResult};

pub const MAX_FILE_BYTES: usize = 1024 * 1024;
pub const MAX_FILES: usize = 100;

/// A handler file as the owner's view lists it (never its content).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FileInfo {
    pub path: String,
    pub bytes: usize,
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

/// The changes as the counted write takes them.
fn counted(changes: &BTreeMap<String, Option<String>>) -> Vec<Change<'_>> {
    changes
        .iter()
        .map(|(path, content)| (path.as_str(), content.as_deref().map(str::as_bytes)))
        .collect()
}

/// A refused counted write: over quota is the builder's to fix (422 on `files`); anything
/// else is the store's (already logged by the host).
fn write_error(e: HostError) -> EndpointError {
    if e.code == "quota_exceeded" {
        EndpointError::Invalid {
            field: "files".into(),
            message: e.message,
        }
    } else {
        EndpointError::Store(StoreError::Engine(e.message))
    }
}

/// Checks a set of changes (`None` deletes a path) against the path and size rules, the files
/// already stored, the endpoint's files quota and the total of its owning `builder` (if any).
/// Writes nothing; errors name the offending field.
pub(super) async fn check(
    store: &dyn Store,
    quotas: &Quotas,
    endpoint: &str,
    builder: Option<&str>,
    changes: &BTreeMap<String, Option<String>>,
) -> Result<(), EndpointError> {
    let invalid = |field: String, message: String| EndpointError::Invalid { field, message };
    for (path, content) in changes {
        if let Some(problem) = path_problem(path) {
            return Err(invalid(format!("files/{path}"), format!("file {problem}")));
        }
        if content.as_ref().is_some_and(|c| c.len() > MAX_FILE_BYTES) {
            return Err(invalid(
                format!("files/{path}"),
                format!("a file holds at most {MAX_FILE_BYTES} bytes"),
            ));
        }
    }
    if changes.is_empty() {
        return Ok(());
    }
    let existing: Vec<String> = list(store, endpoint)
        .await
        .map_err(|e| invalid("files".into(), e.to_string()))?
        .into_iter()
        .map(|f| f.path)
        .collect();
    let mut after: BTreeSet<&str> = existing.iter().map(String::as_str).collect();
    for (path, content) in changes {
        match content {
            Some(_) => after.insert(path),
            None => after.remove(path.as_str()),
        };
    }
    if after.len() > MAX_FILES {
        return Err(invalid(
            "files".into(),
            format!("an endpoint holds at most {MAX_FILES} files"),
        ));
    }
    handler_data::check_counted(
        store,
        quotas,
        Space::Files,
        endpoint,
        builder,
        &counted(changes),
    )
    .await
    .map_err(write_error)
}

/// Applies changes that passed [`check`]: all of them with the endpoint's usage totals, or none.
/// Only the endpoint's own handler (or, for the builder's total, another of its endpoints)
/// writing in between can make it fail the quota [`check`] passed; the endpoint change already
/// stored then stands without these files.
pub(super) async fn write(
    store: &dyn Store,
    quotas: &Quotas,
    endpoint: &str,
    builder: Option<&str>,
    changes: &BTreeMap<String, Option<String>>,
) -> Result<(), EndpointError> {
    if changes.is_empty() {
        return Ok(());
    }
    handler_data::write_counted_all(
        store,
        quotas,
        Space::Files,
        endpoint,
        builder,
        &counted(changes),
    )
    .await
    .map(drop)
    .map_err(write_error)
}

/// One of an endpoint's files, as stored.
pub async fn read(store: &dyn Store, endpoint: &str, path: &str) -> StoreResult<Option<Vec<u8>>> {
    handler_data::read_entry(store, Space::Files, endpoint, path).await
}

/// Paths and sizes of an endpoint's files, by path.
pub(super) async fn list(store: &dyn Store, endpoint: &str) -> StoreResult<Vec<FileInfo>> {
    let files = store.handler_entries_under(HandlerSpace::Files, endpoint, "", None, MAX_FILES + 1);
    Ok(files
        .await?
        .into_iter()
        .map(|(path, v)| FileInfo {
            path,
            bytes: v.len(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;

    #[tokio::test]
    async fn paths() {
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

    async fn apply(
        store: &dyn Store,
        quotas: &Quotas,
        endpoint: &str,
        changes: &BTreeMap<String, Option<String>>,
    ) -> Result<(), EndpointError> {
        check(store, quotas, endpoint, None, changes).await?;
        write(store, quotas, endpoint, None, changes).await
    }

    #[tokio::test]
    async fn plans_within_limits() {
        let store = SledStore::temporary().unwrap();
        let quotas = Quotas::default();
        let mut changes: BTreeMap<String, Option<String>> = (0..MAX_FILES)
            .map(|i| (format!("f{i}"), Some("x".into())))
            .collect();
        apply(&store, &quotas, "s", &changes).await.unwrap();
        assert_eq!(list(&store, "s").await.unwrap().len(), MAX_FILES);
        let one_more: BTreeMap<String, Option<String>> =
            [("new".to_string(), Some("y".into()))].into();
        assert!(check(&store, &quotas, "s", None, &one_more).await.is_err());
        changes.clear();
        changes.insert("f0".into(), None);
        changes.insert("new".into(), Some("y".into()));
        apply(&store, &quotas, "s", &changes).await.unwrap();
        assert!(list(&store, "s")
            .await
            .unwrap()
            .iter()
            .any(|f| f.path == "new"));
        let huge: BTreeMap<String, Option<String>> =
            [("big".to_string(), Some("x".repeat(MAX_FILE_BYTES + 1)))].into();
        assert!(check(&store, &quotas, "t", None, &huge).await.is_err());
        crate::handler_data::forget_endpoint(&store, "s")
            .await
            .unwrap();
        assert!(list(&store, "s").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn uploads_count_toward_the_quota_all_or_nothing() {
        let store = SledStore::temporary().unwrap();
        let quotas = Quotas {
            file_bytes: 10,
            ..Quotas::default()
        };
        let fits: BTreeMap<String, Option<String>> =
            [("a".to_string(), Some("12345".into()))].into();
        apply(&store, &quotas, "s", &fits).await.unwrap();
        let over: BTreeMap<String, Option<String>> = [
            ("b".to_string(), Some("123".into())),
            ("c".to_string(), Some("123".into())),
        ]
        .into();
        let err = check(&store, &quotas, "s", None, &over).await.unwrap_err();
        assert!(
            matches!(&err, EndpointError::Invalid { field, message }
                if field == "files" && message.contains("quota exceeded")),
            "{err:?}"
        );
        assert!(write(&store, &quotas, "s", None, &over).await.is_err());
        let paths: Vec<String> = list(&store, "s")
            .await
            .unwrap()
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(paths, ["a"], "nothing of the refused set was written");
    }
}
