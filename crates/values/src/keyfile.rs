//! Secrets the service generates for itself on first start (admin token, master key, signing
//! key) live as files in the data dir, readable by the owner only (mode 0600).

use std::fs;
use std::io::Write;
use std::path::Path;

/// Whether a key file was read or freshly made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Existing,
    Generated,
}

/// Reads the secret at `path`, or creates it with `generate` when absent. Creation uses
/// `create_new` so two processes never overwrite each other's key.
pub fn load_or_generate(
    path: &Path,
    generate: impl FnOnce() -> String,
) -> std::io::Result<(String, Origin)> {
    match fs::read_to_string(path) {
        Ok(text) => return Ok((text.trim().to_string(), Origin::Existing)),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        Err(_) => {}
    }
    let secret = generate();
    let mut file = create_owner_only(path)?;
    file.write_all(secret.as_bytes())?;
    file.sync_all()?;
    Ok((secret, Origin::Generated))
}

/// Creates a new file readable and writable by its owner only (mode 0600), for secrets: a key
/// file, a backup holding keys. Opened for reading and writing; fails if the file exists.
pub fn create_owner_only(path: &Path) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Why an operator-provided secret file was not read.
#[derive(Debug, thiserror::Error)]
pub enum SecretFileError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A secret others can read is a leaked secret: refuse it rather than use it.
    #[error("{path} is readable by group or others (mode {mode:o}); chmod 600 it")]
    TooOpen { path: String, mode: u32 },
}

/// Reads a secret the operator put in a file (e.g. the settler key), refusing a file whose mode
/// lets group or others read it. The secret's text never appears in an error.
pub fn read_owner_only(path: &Path) -> Result<String, SecretFileError> {
    let shown = path.display().to_string();
    let io = |source| SecretFileError::Io {
        path: shown.clone(),
        source,
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(path).map_err(io)?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(SecretFileError::TooOpen { path: shown, mode });
        }
    }
    Ok(fs::read_to_string(path).map_err(io)?.trim().to_string())
}

/// `bytes` random bytes as lowercase hex, with a prefix that says what the secret is for.
pub fn random_token(prefix: &str, bytes: usize) -> String {
    use rand::RngCore;
    let mut buf = vec![0u8; bytes];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    format!("{prefix}{}", hex::encode(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_once_with_owner_only_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        let (first, origin) = load_or_generate(&path, || random_token("t_", 16)).unwrap();
        assert_eq!(origin, Origin::Generated);
        assert!(first.starts_with("t_") && first.len() == 34);
        let (again, origin) = load_or_generate(&path, || unreachable!()).unwrap();
        assert_eq!((again, origin), (first, Origin::Existing));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn owner_only_files_are_read_and_open_ones_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        fs::write(&path, "  s3cret\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_owner_only(&path).unwrap(), "s3cret");
        for mode in [0o640, 0o604] {
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
            let error = read_owner_only(&path).unwrap_err();
            assert!(matches!(error, SecretFileError::TooOpen { .. }));
            assert!(!error.to_string().contains("s3cret"));
        }
        assert!(matches!(
            read_owner_only(&dir.path().join("absent")),
            Err(SecretFileError::Io { .. })
        ));
    }
}
