//! Endpoint logs: one entry per invocation (time, status, duration, request id) with the log
//! lines the handler wrote, newest first, the last [`KEEP_PER_ENDPOINT`] kept.
//!
//! Entries are redacted before they are stored: every secret value of the endpoint is replaced
//! by `[REDACTED]`, so a handler that logs `ctx.env.API_KEY` never puts the key on disk.
//!
//! # Layout
//! - this file: appending, redaction, pruning and reading.
//! - `routes`: `GET /ai/endpoints/{slug}/logs`.

pub mod routes;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::paging::{self, Page, PageRequest, Visit};
use crate::store::{Batch, Store, StoreError, StoreResult, Tree};

/// Entries kept per endpoint; older ones are pruned as new ones arrive.
pub const KEEP_PER_ENDPOINT: u64 = 1000;
/// Lines kept per invocation, and characters per line.
pub const MAX_LINES: usize = 200;
pub const MAX_LINE_CHARS: usize = 4096;
pub const REDACTED: &str = "[REDACTED]";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LogLevel {
    Debug,
    Info,
    Warn,
    Error,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LogLine {
    pub level: LogLevel,
    pub message: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String)]
    pub at: OffsetDateTime,
}

/// One invocation as the runtime reports it.
#[derive(Clone, Debug)]
pub struct InvocationLog {
    pub request_id: String,
    /// The HTTP status the caller received.
    pub status: u16,
    pub duration_ms: u64,
    pub lines: Vec<LogLine>,
}

/// A stored, redacted log entry, as `GET /ai/endpoints/{slug}/logs` returns it.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    pub id: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String)]
    pub at: OffsetDateTime,
    pub request_id: String,
    pub status: u16,
    pub duration_ms: u64,
    pub lines: Vec<LogLine>,
    /// Lines dropped beyond [`MAX_LINES`].
    #[serde(default)]
    pub dropped_lines: usize,
}

fn prefix(slug: &str) -> Vec<u8> {
    format!("{slug}/").into_bytes()
}

fn count_key(slug: &str) -> Vec<u8> {
    format!("log_count/{slug}").into_bytes()
}

/// Replaces every occurrence of every secret value (longest first, so a secret containing
/// another is removed whole), then truncates. Redacting before truncating means a secret cut
/// by the limit cannot survive in part.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut ordered: Vec<&String> = secrets.iter().filter(|s| !s.is_empty()).collect();
    ordered.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let redacted = ordered
        .into_iter()
        .fold(text.to_string(), |t, s| t.replace(s.as_str(), REDACTED));
    if redacted.chars().count() > MAX_LINE_CHARS {
        let mut cut: String = redacted.chars().take(MAX_LINE_CHARS).collect();
        cut.push('…');
        cut
    } else {
        redacted
    }
}

fn read_count(store: &dyn Store, key: &[u8]) -> StoreResult<(Option<Vec<u8>>, u64)> {
    let raw = store.get(Tree::Meta, key)?;
    let n = raw
        .as_deref()
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((raw, n))
}

/// Stores one invocation's entry, redacted, and prunes the endpoint's oldest entries beyond
/// [`KEEP_PER_ENDPOINT`]. Called by the invocation pipeline after every call.
pub fn append_invocation(
    store: &dyn Store,
    slug: &str,
    log: InvocationLog,
    secrets_to_redact: &[String],
) -> StoreResult<LogEntry> {
    let dropped_lines = log.lines.len().saturating_sub(MAX_LINES);
    let entry = LogEntry {
        id: paging::new_id(),
        at: OffsetDateTime::now_utc(),
        request_id: redact(&log.request_id, secrets_to_redact),
        status: log.status,
        duration_ms: log.duration_ms,
        lines: log
            .lines
            .into_iter()
            .take(MAX_LINES)
            .map(|l| LogLine {
                message: redact(&l.message, secrets_to_redact),
                ..l
            })
            .collect(),
        dropped_lines,
    };
    let bytes = serde_json::to_vec(&entry).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let key = [prefix(slug), entry.id.clone().into_bytes()].concat();
    let counter = count_key(slug);
    // Entry and count move together; retry when a concurrent append changed the count.
    let count = loop {
        let (raw, n) = read_count(store, &counter)?;
        let batch = Batch::new()
            .require_equals(Tree::Meta, counter.clone(), raw)
            .put(Tree::Logs, key.clone(), bytes.clone())
            .put(
                Tree::Meta,
                counter.clone(),
                (n + 1).to_string().into_bytes(),
            );
        match store.apply(batch) {
            Ok(()) => break n + 1,
            Err(StoreError::ConditionFailed(_)) => continue,
            Err(e) => return Err(e),
        }
    };
    if count > KEEP_PER_ENDPOINT {
        prune(store, slug, count - KEEP_PER_ENDPOINT)?;
    }
    Ok(entry)
}

/// Deletes the `excess` oldest entries and lowers the count to match.
fn prune(store: &dyn Store, slug: &str, excess: u64) -> StoreResult<()> {
    let counter = count_key(slug);
    let oldest = store.scan_prefix(Tree::Logs, &prefix(slug), None, excess as usize)?;
    loop {
        let (raw, n) = read_count(store, &counter)?;
        let batch = oldest
            .iter()
            .fold(
                Batch::new().require_equals(Tree::Meta, counter.clone(), raw),
                |b, (k, _)| b.delete(Tree::Logs, k.clone()),
            )
            .put(
                Tree::Meta,
                counter.clone(),
                n.saturating_sub(oldest.len() as u64)
                    .to_string()
                    .into_bytes(),
            );
        match store.apply(batch) {
            Ok(()) => return Ok(()),
            Err(StoreError::ConditionFailed(_)) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// One page of an endpoint's entries, newest first.
pub fn page(store: &dyn Store, slug: &str, request: &PageRequest) -> StoreResult<Page<LogEntry>> {
    paging::newest_first(store, Tree::Logs, &prefix(slug), request, |_: &LogEntry| {
        Visit::Keep
    })
}

/// Removes every entry of an endpoint (on delete, so a new owner of the slug sees none).
pub fn delete_all(store: &dyn Store, slug: &str) -> StoreResult<()> {
    paging::delete_prefix(store, Tree::Logs, &prefix(slug))?;
    store.delete(Tree::Meta, &count_key(slug))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;

    fn invocation(message: &str) -> InvocationLog {
        InvocationLog {
            request_id: "req-1".into(),
            status: 200,
            duration_ms: 12,
            lines: vec![LogLine {
                level: LogLevel::Info,
                message: message.into(),
                at: OffsetDateTime::now_utc(),
            }],
        }
    }

    #[test]
    fn secrets_are_redacted_before_storage() {
        let store = SledStore::temporary().unwrap();
        let secrets = vec!["tok-abc".to_string(), "tok-abc-123".to_string()];
        let entry = append_invocation(
            &store,
            "s",
            invocation("key=tok-abc-123 and tok-abc"),
            &secrets,
        )
        .unwrap();
        assert_eq!(entry.lines[0].message, "key=[REDACTED] and [REDACTED]");
        for (_, bytes) in store.scan_prefix(Tree::Logs, b"", None, 10).unwrap() {
            assert!(!String::from_utf8_lossy(&bytes).contains("tok-abc"));
        }
        let long = format!("{}tok-abc", "x".repeat(MAX_LINE_CHARS - 3));
        assert!(!redact(&long, &secrets).contains("tok"));
    }

    #[test]
    fn newest_first_and_capped() {
        let store = SledStore::temporary().unwrap();
        for i in 0..(KEEP_PER_ENDPOINT + 5) {
            append_invocation(&store, "s", invocation(&format!("call {i}")), &[]).unwrap();
        }
        append_invocation(&store, "other", invocation("x"), &[]).unwrap();
        let all = store.scan_prefix(Tree::Logs, b"s/", None, 5000).unwrap();
        assert_eq!(all.len() as u64, KEEP_PER_ENDPOINT);
        let first = page(&store, "s", &PageRequest::parse(None, Some(2)).unwrap()).unwrap();
        let messages: Vec<&str> = first
            .items
            .iter()
            .map(|e| e.lines[0].message.as_str())
            .collect();
        assert_eq!(
            messages,
            [
                format!("call {}", KEEP_PER_ENDPOINT + 4),
                format!("call {}", KEEP_PER_ENDPOINT + 3)
            ]
        );
        assert!(first.next_cursor.is_some());
        delete_all(&store, "s").unwrap();
        assert!(page(&store, "s", &PageRequest::parse(None, None).unwrap())
            .unwrap()
            .items
            .is_empty());
        assert_eq!(
            page(&store, "other", &PageRequest::parse(None, None).unwrap())
                .unwrap()
                .items
                .len(),
            1
        );
    }
}
