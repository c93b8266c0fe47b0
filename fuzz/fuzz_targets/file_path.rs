//! `sandbox::normalize_file_path` (and the listing-prefix form beside it) on arbitrary text: the
//! one rule for handler file paths (`ctx.files`, uploaded assets).
//!
//! Asserts, besides not panicking: an accepted path is non-empty, relative, within the length
//! limit, free of `..`, `.` and empty segments, backslashes and control characters, keeps the
//! input's segments in order, and normalizes to itself; every refusal names a rule the input
//! really breaks; a prefix is the file path's normal form (plus a kept trailing `/`).

#![no_main]

use libfuzzer_sys::fuzz_target;

// The sandbox crate's own source file, compiled here without deno_core (it needs only
// `thiserror`).
#[path = "../../sandbox/src/paths.rs"]
#[allow(dead_code, unreachable_pub)]
mod paths;

use paths::{normalize_file_path, normalize_prefix, PathError, MAX_FILE_PATH_BYTES};

/// The input's meaningful segments: what normalization keeps.
fn kept_segments(path: &str) -> Vec<&str> {
    path.split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect()
}

fn check_normal_form(path: &str, normal: &str) {
    assert!(!normal.is_empty(), "{path:?}: empty result");
    assert!(normal.len() <= MAX_FILE_PATH_BYTES, "{path:?}: too long");
    assert!(!normal.starts_with('/'), "{path:?} -> {normal:?}: absolute");
    assert!(!normal.ends_with('/'), "{path:?} -> {normal:?}: directory");
    assert!(!normal.contains('\\'), "{path:?} -> {normal:?}: backslash");
    assert!(
        !normal.chars().any(char::is_control),
        "{path:?} -> {normal:?}: control character"
    );
    for segment in normal.split('/') {
        assert!(
            !matches!(segment, "" | "." | ".."),
            "{path:?} -> {normal:?}: segment {segment:?}"
        );
    }
    assert_eq!(
        normal.split('/').collect::<Vec<_>>(),
        kept_segments(path),
        "{path:?}: segments changed"
    );
    assert_eq!(
        normalize_file_path(normal).as_deref(),
        Ok(normal),
        "{path:?} -> {normal:?}: not idempotent"
    );
}

/// `slash`: the length counted includes a trailing `/` (a listing prefix keeps it).
fn check_refusal(path: &str, error: &PathError, slash: bool) {
    let justified = match error {
        PathError::Empty => kept_segments(path).is_empty(),
        PathError::Absolute => path.starts_with('/'),
        PathError::Backslash => path.contains('\\'),
        PathError::ControlCharacter => path.chars().any(char::is_control),
        PathError::Traversal => path.split('/').any(|s| s == ".."),
        PathError::Directory => path.ends_with('/'),
        PathError::TooLong { max } => {
            let kept = kept_segments(path).join("/").len();
            *max == MAX_FILE_PATH_BYTES && kept + usize::from(slash && kept > 0) > *max
        }
    };
    assert!(justified, "{path:?} refused as {error:?}");
}

fuzz_target!(|data: &[u8]| {
    let Ok(path) = std::str::from_utf8(data) else {
        return;
    };
    match normalize_file_path(path) {
        Ok(normal) => check_normal_form(path, &normal),
        Err(error) => check_refusal(path, &error, false),
    }
    match normalize_prefix(path, MAX_FILE_PATH_BYTES) {
        Ok(prefix) if prefix.is_empty() => assert!(
            path.is_empty() || kept_segments(path).is_empty(),
            "{path:?}: empty prefix"
        ),
        Ok(prefix) => {
            let (file, slash) = match prefix.strip_suffix('/') {
                Some(file) => (file, true),
                None => (prefix.as_str(), false),
            };
            assert_eq!(slash, path.ends_with('/'), "{path:?} -> {prefix:?}");
            check_normal_form(path, file);
        }
        Err(error) => {
            // The same rules as for a file, except that a trailing `/` is allowed.
            assert_ne!(error, PathError::Directory, "{path:?}");
            assert_ne!(error, PathError::Empty, "{path:?}");
            check_refusal(path, &error, path.ends_with('/'));
        }
    }
});
