//! What `toolhost login` stores: one server URL and its builder key, in
//! `$XDG_CONFIG_HOME/toolhost/config.json` (or `~/.config/toolhost/config.json`), readable by
//! the user only (file 0600, directory 0700). The key is sent only to the server it was stored
//! with, so `--server` naming another one never leaks it there.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Failure;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Profile {
    pub(super) server: String,
    pub(super) builder_key: String,
}

/// Where the profile lives, from the environment as the XDG base directory rules say: an
/// absolute `XDG_CONFIG_HOME`, else `HOME/.config`.
pub(super) fn path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|home| home.join(".config"))
        })?;
    Some(base.join("toolhost").join("config.json"))
}

/// The stored profile; `None` when there is none.
pub(super) fn load() -> Result<Option<Profile>, Failure> {
    let Some(path) = path() else {
        return Ok(None);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Failure::Local(format!(
                "cannot read {}: {e}",
                path.display()
            )))
        }
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        Failure::Usage(format!(
            "{} is not a toolhost login ({e}); run `toolhost login` again",
            path.display()
        ))
    })
}

/// Stores `profile`, replacing any other, and returns where. Written to a new file created
/// 0600 and renamed into place, so the key is never readable by others, not even for a moment
/// and not when an older file had a looser mode.
pub(super) fn save(profile: &Profile) -> Result<PathBuf, Failure> {
    let path = path().ok_or_else(|| {
        Failure::Usage("neither XDG_CONFIG_HOME nor HOME is set: nowhere to store the login".into())
    })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let local = |e: std::io::Error, what: &Path| {
        Failure::Local(format!("cannot write {}: {e}", what.display()))
    };
    create_private_dir(dir).map_err(|e| local(e, dir))?;
    let temporary = dir.join(format!(".config.json.{}", std::process::id()));
    // Left over by an earlier run of the same pid that died mid-write; created anew below.
    let _ = std::fs::remove_file(&temporary);
    let written = (|| {
        let mut file = private_file(&temporary)?;
        file.write_all(serde_json::to_string_pretty(profile)?.as_bytes())?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        std::fs::rename(&temporary, &path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(local(e, &path));
    }
    Ok(path)
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(unix)]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}
