//! What a tool's directory last deployed to (or pulled from) each server:
//! `.toolhost/deployed.json`, `{<server>: {slug, revision, digest}}`.
//!
//! A deploy names the revision its directory was made on, so the server refuses it (409
//! `revision_conflict`) when someone changed the endpoint since (the dashboard, another
//! checkout, a rollback) instead of setting their change back. `pull` refuses to overwrite
//! local edits made since the last deploy or pull (the digest tells), unless forced.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Failure;

const DIR: &str = ".toolhost";
const FILE: &str = "deployed.json";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Deployed {
    pub(super) slug: String,
    /// The newest revision the directory's content went into (or came from).
    pub(super) revision: u64,
    /// [`super::project::Project::digest`] of the directory then.
    pub(super) digest: String,
}

fn path(dir: &Path) -> PathBuf {
    dir.join(DIR).join(FILE)
}

/// Every server's record; none when the file is missing or unreadable (a deploy then builds
/// on whatever the server has, as before these records).
fn all(dir: &Path) -> BTreeMap<String, Deployed> {
    std::fs::read(path(dir))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// The record of `slug` on `server`, if the directory has one.
pub(super) fn load(dir: &Path, server: &str, slug: &str) -> Option<Deployed> {
    all(dir).remove(server).filter(|d| d.slug == slug)
}

pub(super) fn save(dir: &Path, server: &str, record: Deployed) -> Result<(), Failure> {
    let mut records = all(dir);
    records.insert(server.to_string(), record);
    let target = path(dir);
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir.join(DIR))?;
        let mut text = serde_json::to_string_pretty(&records)?;
        text.push('\n');
        std::fs::write(&target, text)
    };
    write().map_err(|e| Failure::Local(format!("cannot write {}: {e}", target.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_kept_per_server_and_slug() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path(), "http://a", "t"), None);
        let record = Deployed {
            slug: "t".into(),
            revision: 3,
            digest: "d".into(),
        };
        save(dir.path(), "http://a", record.clone()).unwrap();
        save(
            dir.path(),
            "http://b",
            Deployed {
                revision: 9,
                ..record.clone()
            },
        )
        .unwrap();
        assert_eq!(load(dir.path(), "http://a", "t"), Some(record));
        assert_eq!(load(dir.path(), "http://b", "t").unwrap().revision, 9);
        assert_eq!(load(dir.path(), "http://a", "other"), None);
    }
}
