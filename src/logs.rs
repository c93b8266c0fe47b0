//! Endpoint logs: one entry per invocation (time, status, duration, request id) with the log
//! lines the handler wrote, newest first, the last [`KEEP_PER_ENDPOINT`] kept.
//!
//! Entries are redacted before they are stored: every secret value of the endpoint is replaced
//! by `[REDACTED]`, so a handler that logs `ctx.env.API_KEY` never puts the key on disk. A
//! failed call's entry also keeps its error ([`InvocationError`]: code, message, and where in
//! the handler's source), redacted alike: the owner sees why a call failed, the caller only
//! the error's message.
//!
//! The store keeps the entries in its own shape ([`crate::store::EndpointLogs`]: a table on
//! PostgreSQL, a tree on sled); this file makes them (redaction, line caps) and reads them back.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::paging::{self, Page, PageRequest};
use crate::store::{LogRow, Store, StoreError, StoreResult};

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
    #[schema(value_type = String, format = DateTime)]
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
    /// A test call of the owner or the admin (`X-Toolhost-Test: 1`): nobody paid.
    pub test: bool,
    /// Why the call failed, when it did.
    pub error: Option<InvocationError>,
}

/// Why a call failed, for the endpoint's owner: the error code and message the caller got,
/// and for a JS handler's error the position and stack frames in the handler's source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvocationError {
    pub code: String,
    pub message: String,
    /// 1-based line in the handler's source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// The frames in the handler's module, innermost first (`at name (handler.js:3:14)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<String>,
}

impl InvocationError {
    /// The error with every secret value replaced, in the message and in each frame.
    pub fn redacted(self, secrets: &[String]) -> Self {
        InvocationError {
            message: redact(&self.message, secrets),
            stack: self.stack.iter().map(|f| redact(f, secrets)).collect(),
            ..self
        }
    }
}

/// A stored, redacted log entry, as `GET /ai/endpoints/{slug}/logs` returns it.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    pub id: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub at: OffsetDateTime,
    pub request_id: String,
    pub status: u16,
    pub duration_ms: u64,
    pub lines: Vec<LogLine>,
    /// Lines dropped beyond [`MAX_LINES`].
    #[serde(default)]
    pub dropped_lines: usize,
    /// A test call (`X-Toolhost-Test: 1`) of the owner or the admin: unpaid, no receipt.
    #[serde(default)]
    pub test: bool,
    /// Why the call failed (absent for a success, or a handler's own non-2xx answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<InvocationError>,
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

/// The stored form of one invocation: a new id and time, every line redacted, lines capped at
/// [`MAX_LINES`]. Made when the call ends, so ids keep call order even when writes are batched.
pub fn entry(log: InvocationLog, secrets_to_redact: &[String]) -> LogEntry {
    let dropped_lines = log.lines.len().saturating_sub(MAX_LINES);
    LogEntry {
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
        test: log.test,
        error: log.error.map(|e| e.redacted(secrets_to_redact)),
    }
}

/// Stores an endpoint's new entries (oldest first) and prunes its oldest beyond
/// [`KEEP_PER_ENDPOINT`], in one atomic write.
pub async fn append(store: &dyn Store, endpoint: &str, entries: &[LogEntry]) -> StoreResult<()> {
    let rows = entries
        .iter()
        .map(|entry| {
            Ok(LogRow {
                id: entry.id.clone(),
                entry: serde_json::to_vec(entry).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            })
        })
        .collect::<StoreResult<Vec<_>>>()?;
    store.append_logs(endpoint, &rows, KEEP_PER_ENDPOINT).await
}

/// One page of an endpoint's entries, newest first.
pub async fn page(
    store: &dyn Store,
    endpoint: &str,
    request: &PageRequest,
) -> StoreResult<Page<LogEntry>> {
    let rows = (store.logs_before(endpoint, request.cursor(), request.limit())).await?;
    let next_cursor = match rows.last() {
        Some(last) if rows.len() == request.limit() => Some(last.id.clone()),
        _ => None,
    };
    let items = rows
        .iter()
        .map(|row| {
            serde_json::from_slice(&row.entry)
                .map_err(|e| StoreError::Corrupt(format!("log {endpoint}/{}: {e}", row.id)))
        })
        .collect::<StoreResult<Vec<LogEntry>>>()?;
    Ok(Page { items, next_cursor })
}

/// Removes every entry of an endpoint (on delete). Entries are kept under the endpoint's id,
/// never reused, so a new owner of the slug could not see them in any case.
pub async fn delete_all(store: &dyn Store, endpoint: &str) -> StoreResult<()> {
    store.delete_logs(endpoint).await.map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{EndpointLogs, SledStore};

    fn invocation(message: &str) -> InvocationLog {
        InvocationLog {
            request_id: "req-1".into(),
            status: 200,
            test: false,
            duration_ms: 12,
            lines: vec![LogLine {
                level: LogLevel::Info,
                message: message.into(),
                at: OffsetDateTime::now_utc(),
            }],
            error: None,
        }
    }

    #[tokio::test]
    async fn secrets_are_redacted_before_storage() {
        let store = SledStore::temporary().unwrap();
        let secrets = vec!["tok-abc".to_string(), "tok-abc-123".to_string()];
        let entry = entry(invocation("key=tok-abc-123 and tok-abc"), &secrets);
        append(&store, "s", std::slice::from_ref(&entry))
            .await
            .unwrap();
        assert_eq!(entry.lines[0].message, "key=[REDACTED] and [REDACTED]");
        let failed = InvocationLog {
            error: Some(InvocationError {
                code: "handler_error".into(),
                message: "handler error: bad tok-abc-123".into(),
                line: Some(3),
                column: Some(9),
                stack: vec!["at tok-abc (handler.js:3:9)".into()],
            }),
            ..invocation("x")
        };
        let error = self::entry(failed, &secrets).error.unwrap();
        assert_eq!(error.message, "handler error: bad [REDACTED]");
        assert_eq!(error.stack, ["at [REDACTED] (handler.js:3:9)"]);
        let stored = store.logs_before("s", None, 10).await.unwrap();
        assert_eq!(stored.len(), 1);
        for row in stored {
            assert!(!String::from_utf8_lossy(&row.entry).contains("tok-abc"));
        }
        let long = format!("{}tok-abc", "x".repeat(MAX_LINE_CHARS - 3));
        assert!(!redact(&long, &secrets).contains("tok"));
    }

    #[tokio::test]
    async fn newest_first_and_capped() {
        let store = SledStore::temporary().unwrap();
        // One by one, then in batches larger than what is kept.
        for i in 0..(KEEP_PER_ENDPOINT - 10) {
            append(&store, "s", &[entry(invocation(&format!("call {i}")), &[])])
                .await
                .unwrap();
        }
        let batch: Vec<LogEntry> = (KEEP_PER_ENDPOINT - 10..KEEP_PER_ENDPOINT + 5)
            .map(|i| entry(invocation(&format!("call {i}")), &[]))
            .collect();
        append(&store, "s", &batch).await.unwrap();
        append(&store, "other", &[entry(invocation("x"), &[])])
            .await
            .unwrap();
        let all = store.logs_before("s", None, 5000).await.unwrap();
        assert_eq!(all.len() as u64, KEEP_PER_ENDPOINT);
        let first = page(&store, "s", &PageRequest::parse(None, Some(2)).unwrap())
            .await
            .unwrap();
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
        delete_all(&store, "s").await.unwrap();
        assert!(page(&store, "s", &PageRequest::parse(None, None).unwrap())
            .await
            .unwrap()
            .items
            .is_empty());
        assert_eq!(
            page(&store, "other", &PageRequest::parse(None, None).unwrap())
                .await
                .unwrap()
                .items
                .len(),
            1
        );
    }
}
