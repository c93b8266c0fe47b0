//! The one rule for file paths inside an endpoint's file area, shared by `ctx.files` and by the
//! server when it accepts uploaded assets.

/// Longest normalized path accepted by [`normalize_file_path`].
pub const MAX_FILE_PATH_BYTES: usize = 256;

/// Why a file path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path names nothing.
    #[error("path is empty")]
    Empty,
    /// The path starts with `/`.
    #[error("path must be relative")]
    Absolute,
    /// The path contains `\`.
    #[error("path must use '/' as separator")]
    Backslash,
    /// The path contains NUL or another control character.
    #[error("path contains a control character")]
    ControlCharacter,
    /// The path contains a `..` segment.
    #[error("path must not contain '..'")]
    Traversal,
    /// The path ends with `/`, so it names a directory.
    #[error("path must name a file, not a directory")]
    Directory,
    /// The normalized path is too long.
    #[error("path is longer than {max} bytes")]
    TooLong {
        /// The limit.
        max: usize,
    },
}

/// Validates and normalizes a file path: relative, `/`-separated, no `..`, no backslash, no
/// control characters (NUL included), not a directory; empty and `.` segments are dropped
/// (`./a//b` becomes `a/b`); at most [`MAX_FILE_PATH_BYTES`] bytes once normalized.
pub fn normalize_file_path(path: &str) -> Result<String, PathError> {
    normalize_with_limit(path, MAX_FILE_PATH_BYTES)
}

pub(crate) fn normalize_with_limit(path: &str, max: usize) -> Result<String, PathError> {
    if path.ends_with('/') {
        return Err(PathError::Directory);
    }
    let normalized = normalize_segments(path, max)?;
    if normalized.is_empty() {
        return Err(PathError::Empty);
    }
    Ok(normalized)
}

/// Like [`normalize_with_limit`] for a listing prefix: empty means everything, and a trailing
/// `/` is kept so that `data/` does not match `database.json`.
pub(crate) fn normalize_prefix(prefix: &str, max: usize) -> Result<String, PathError> {
    if prefix.is_empty() {
        return Ok(String::new());
    }
    let mut normalized = normalize_segments(prefix, max)?;
    if prefix.ends_with('/') && !normalized.is_empty() {
        normalized.push('/');
    }
    if normalized.len() > max {
        return Err(PathError::TooLong { max });
    }
    Ok(normalized)
}

fn normalize_segments(path: &str, max: usize) -> Result<String, PathError> {
    if path.starts_with('/') {
        return Err(PathError::Absolute);
    }
    if path.contains('\\') {
        return Err(PathError::Backslash);
    }
    if path.chars().any(char::is_control) {
        return Err(PathError::ControlCharacter);
    }
    let mut segments = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err(PathError::Traversal),
            other => segments.push(other),
        }
    }
    let normalized = segments.join("/");
    if normalized.len() > max {
        return Err(PathError::TooLong { max });
    }
    Ok(normalized)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_harmless_forms() {
        assert_eq!(normalize_file_path("a/b.json").unwrap(), "a/b.json");
        assert_eq!(normalize_file_path("./a//b.json").unwrap(), "a/b.json");
        assert_eq!(normalize_file_path("...").unwrap(), "...");
    }

    #[test]
    fn refuses_escapes() {
        assert_eq!(normalize_file_path("../x"), Err(PathError::Traversal));
        assert_eq!(normalize_file_path("a/../../x"), Err(PathError::Traversal));
        assert_eq!(normalize_file_path("/etc/passwd"), Err(PathError::Absolute));
        assert_eq!(normalize_file_path("a\\..\\x"), Err(PathError::Backslash));
        assert_eq!(
            normalize_file_path("a\0b"),
            Err(PathError::ControlCharacter)
        );
        assert_eq!(
            normalize_file_path("a/\nb"),
            Err(PathError::ControlCharacter)
        );
        assert_eq!(normalize_file_path(""), Err(PathError::Empty));
        assert_eq!(normalize_file_path("./"), Err(PathError::Directory));
        assert_eq!(normalize_file_path("."), Err(PathError::Empty));
        assert_eq!(normalize_file_path("dir/"), Err(PathError::Directory));
        let long = "a".repeat(MAX_FILE_PATH_BYTES + 1);
        assert_eq!(
            normalize_file_path(&long),
            Err(PathError::TooLong {
                max: MAX_FILE_PATH_BYTES
            })
        );
    }

    #[test]
    fn prefixes_keep_their_trailing_slash() {
        assert_eq!(normalize_prefix("", 256).unwrap(), "");
        assert_eq!(normalize_prefix("data/", 256).unwrap(), "data/");
        assert_eq!(normalize_prefix("./data", 256).unwrap(), "data");
        assert_eq!(normalize_prefix("../", 256), Err(PathError::Traversal));
    }
}
