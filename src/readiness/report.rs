//! The report a readiness check returns, and the bookkeeping that builds it.

use serde::Serialize;
use serde_json::Value;
use url::Url;

/// What the submitted URL turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    McpServerJson,
    X402Discovery,
    ToolhostManifest,
    /// A list of callable endpoints (toolhost's `/ai/endpoints` and similar catalogs).
    EndpointCatalog,
    /// An MCP server's Streamable HTTP endpoint, answering `initialize`.
    McpEndpoint,
    PaidEndpoint,
    Unknown,
}

/// One finding. `id` is stable so clients can branch on it; `note` is for people.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Check {
    pub id: &'static str,
    pub passed: bool,
    pub note: String,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadinessReport {
    /// The check ran; the verdict is `ready`.
    pub ok: bool,
    pub url: String,
    /// The URL that answered after redirects; `None` when nothing answered.
    pub final_url: Option<String>,
    pub kind: Kind,
    /// A known kind whose checks all passed.
    pub ready: bool,
    pub checks: Vec<Check>,
    /// Where discovery documents are expected on the submitted URL's origin.
    pub expected_discovery_urls: Vec<String>,
    /// Concrete steps to take, most important first.
    pub next_actions: Vec<String>,
}

/// Well-known discovery paths, relative to an origin.
const DISCOVERY_PATHS: [&str; 5] = [
    "/.well-known/x402",
    "/ai/manifest",
    "/ai/endpoints",
    "/ai/mcp",
    "/.well-known/mcp/server.json",
];

pub(super) fn expected_discovery_urls(url: &Url) -> Vec<String> {
    DISCOVERY_PATHS
        .iter()
        .map(|path| on_origin(url, path))
        .collect()
}

/// `path` on the origin of `url`.
pub(super) fn on_origin(url: &Url, path: &str) -> String {
    format!("{}{path}", url.origin().ascii_serialization())
}

/// Checks and next actions collected while analysing one response.
#[derive(Debug, Default)]
pub(super) struct Findings {
    pub(super) checks: Vec<Check>,
    pub(super) actions: Vec<String>,
}

impl Findings {
    pub(super) fn pass(&mut self, id: &'static str, note: impl Into<String>) {
        self.checks.push(Check {
            id,
            passed: true,
            note: note.into(),
        });
    }

    /// A failed check and the action that fixes it.
    pub(super) fn fail(
        &mut self,
        id: &'static str,
        note: impl Into<String>,
        action: impl Into<String>,
    ) {
        self.checks.push(Check {
            id,
            passed: false,
            note: note.into(),
        });
        self.action(action);
    }

    /// A passed or failed check from a list of problems (empty: passed).
    pub(super) fn verdict(
        &mut self,
        id: &'static str,
        ok_note: impl Into<String>,
        problems: &[String],
        action: &str,
    ) {
        if problems.is_empty() {
            self.pass(id, ok_note);
        } else {
            self.fail(id, summarize(problems), action);
        }
    }

    pub(super) fn action(&mut self, action: impl Into<String>) {
        let action = action.into();
        if !self.actions.contains(&action) {
            self.actions.push(action);
        }
    }

    pub(super) fn all_passed(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }
}

/// Joins problems into one note, showing at most five.
fn summarize(problems: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut note = problems
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if problems.len() > SHOWN {
        note.push_str(&format!("; and {} more", problems.len() - SHOWN));
    }
    note
}

/// A value from the fetched document, shortened for quoting in a note.
pub(super) fn quote(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        format!("\"{text}\"")
    } else {
        format!("\"{}…\"", text.chars().take(MAX).collect::<String>())
    }
}

/// A non-blank string field, trimmed.
pub(super) fn str_field<'a>(doc: &'a Value, key: &str) -> Option<&'a str> {
    doc.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}
