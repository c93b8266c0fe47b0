//! Backups of the embedded store, taken while the server serves, and their restore into a new
//! data dir. A backup is the store as of one moment (the store holds writes back while it is
//! read; reads go on, and a held write goes on when it is done) and the data dir's key files
//! (admin token, secrets master key, receipt key: without them a restored store's secrets
//! cannot be opened nor its receipts signed by the same key), in the file format of
//! `toolhost_values::backup`, whose checksum makes a cut-short or changed file refused before
//! anything is restored. PostgreSQL is backed up with its own tools (`pg_dump`).

use std::io::Write;
use std::path::{Path, PathBuf};

use toolhost_values::backup::{self as format, BackupWriter, Record};

use crate::error::{ApiError, ErrorCode};
use crate::store::{SledStore, Store, StoreError, Tree};

/// A key file is small; anything bigger in the data dir is not one.
const MAX_KEY_FILE: u64 = 64 * 1024;
/// What a backup being written in the data dir is named, so the next backup leaves it out.
pub const PARTIAL_PREFIX: &str = "backup-";

#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("this server's state is in PostgreSQL: back it up with pg_dump")]
    Unsupported,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Format(#[from] format::BackupError),
    #[error("{0}")]
    Io(String),
    #[error("{0} is not empty: a backup is restored into a new data dir")]
    NotEmpty(PathBuf),
    #[error("the backup holds a tree this release does not know ({0:?}): restore it with the release that made it, or a newer one")]
    UnknownTree(String),
    #[error("the backup holds a key file named {0:?}, which is not a plain file name")]
    BadKeyName(String),
}

impl From<BackupError> for ApiError {
    fn from(e: BackupError) -> Self {
        match e {
            BackupError::Unsupported => ApiError::new(
                axum::http::StatusCode::CONFLICT,
                ErrorCode::BackupUnsupported,
                e.to_string(),
            ),
            BackupError::Store(e) => e.into(),
            other => ApiError::internal(other),
        }
    }
}

/// What a backup or a restore held.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Contents {
    pub entries: u64,
    pub key_files: u64,
}

/// Writes a backup of `store` and of the key files in `data_dir` to `out`. Blocking (it reads
/// the whole store): run it off the async runtime. Writes are held back while the store is
/// read, not while `out` is handed on.
pub fn write(store: &dyn Store, data_dir: &Path, out: impl Write) -> Result<Contents, BackupError> {
    let io = |e: std::io::Error| BackupError::Io(format!("writing the backup: {e}"));
    let mut writer = BackupWriter::new(out).map_err(io)?;
    let mut contents = Contents::default();
    for (name, bytes) in key_files(data_dir)? {
        writer.key_file(&name, &bytes).map_err(io)?;
        contents.key_files += 1;
    }
    store
        .snapshot(&mut |tree, key, value| {
            contents.entries += 1;
            (writer.entry(tree.name(), key, value))
                .map_err(|e| StoreError::Engine(format!("writing the backup: {e}")))
        })
        .ok_or(BackupError::Unsupported)??;
    writer.finish().map_err(io)?;
    Ok(contents)
}

/// [`write`]s a backup into a file in `data_dir`, rewound for reading. The file has no name
/// (unlinked as soon as it is made, readable by the owner only): nothing is left behind however
/// its reader ends.
pub fn write_unnamed(
    store: &dyn Store,
    data_dir: &Path,
) -> Result<(std::fs::File, Contents), BackupError> {
    use std::io::{Seek, SeekFrom};
    let name = format!("{PARTIAL_PREFIX}{}", uuid::Uuid::new_v4().simple());
    let path = data_dir.join(name);
    let io = |e: std::io::Error| BackupError::Io(format!("{}: {e}", path.display()));
    let file = toolhost_values::keyfile::create_owner_only(&path).map_err(io)?;
    std::fs::remove_file(&path).map_err(io)?;
    let mut out = std::io::BufWriter::new(file);
    let contents = write(store, data_dir, &mut out)?;
    let mut file = out.into_inner().map_err(|e| io(e.into_error()))?;
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    Ok((file, contents))
}

/// The data dir's key files: its plain files but backups being written, in name order.
fn key_files(data_dir: &Path) -> Result<Vec<(String, Vec<u8>)>, BackupError> {
    let io = |e: std::io::Error| BackupError::Io(format!("reading {}: {e}", data_dir.display()));
    let mut files = Vec::new();
    for entry in std::fs::read_dir(data_dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let kind = entry.file_type().map_err(io)?;
        if !kind.is_file() || name.starts_with(PARTIAL_PREFIX) || !is_plain_name(&name) {
            continue;
        }
        if entry.metadata().map_err(io)?.len() > MAX_KEY_FILE {
            continue;
        }
        files.push((name, std::fs::read(entry.path()).map_err(io)?));
    }
    files.sort();
    Ok(files)
}

/// A name that stays inside the directory it is written to.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\\', '\0'])
}

/// Restores the backup in `from` into `data_dir`, which must not exist or be empty; the
/// server then starts on it as on its own. The whole file is checked first; a restore that
/// fails part-way removes what it wrote, so the data dir is whole or absent.
pub async fn restore(from: &Path, data_dir: &Path) -> Result<Contents, BackupError> {
    let open = || {
        std::fs::File::open(from)
            .map_err(|e| BackupError::Io(format!("cannot read {}: {e}", from.display())))
    };
    format::check(open()?)?;
    let occupied = std::fs::read_dir(data_dir).is_ok_and(|mut entries| entries.next().is_some());
    if occupied {
        return Err(BackupError::NotEmpty(data_dir.to_path_buf()));
    }
    let input = open()?;
    let io = |e: std::io::Error| BackupError::Io(format!("writing {}: {e}", data_dir.display()));
    std::fs::create_dir_all(data_dir).map_err(io)?;
    // Held from here on: no server starts on the dir while it is restored (nor had one).
    let store = SledStore::open(&data_dir.join("store"))?;
    if !store.is_empty() {
        return Err(BackupError::NotEmpty(data_dir.to_path_buf()));
    }
    match fill(&store, input, data_dir) {
        Ok(contents) => {
            store.close().await?;
            Ok(contents)
        }
        Err(e) => {
            drop(store);
            let _ = std::fs::remove_dir_all(data_dir);
            Err(e)
        }
    }
}

/// Writes a backup's records into a new store and data dir.
fn fill(store: &SledStore, input: std::fs::File, data_dir: &Path) -> Result<Contents, BackupError> {
    let io = |e: std::io::Error| BackupError::Io(format!("writing {}: {e}", data_dir.display()));
    let mut contents = Contents::default();
    format::read(input, |record| {
        match record {
            Record::Entry { tree, key, value } => {
                let named = Tree::named(&tree).ok_or(BackupError::UnknownTree(tree))?;
                store.restore_entry(named, &key, &value)?;
                contents.entries += 1;
            }
            Record::KeyFile {
                name,
                contents: bytes,
            } => {
                if !is_plain_name(&name) || name.starts_with(PARTIAL_PREFIX) {
                    return Err(BackupError::BadKeyName(name));
                }
                let mut file = toolhost_values::keyfile::create_owner_only(&data_dir.join(&name))
                    .map_err(io)?;
                file.write_all(&bytes)
                    .and_then(|()| file.sync_all())
                    .map_err(io)?;
                contents.key_files += 1;
            }
        }
        Ok(())
    })?;
    Ok(contents)
}
