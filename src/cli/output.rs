//! What the commands print: tables and short lines for people, the server's own JSON for
//! scripts (`--json`), colour only when stdout is a terminal (and `NO_COLOR` is unset), and
//! every failure on stderr with the server's code and message.

use std::io::IsTerminal;

use serde_json::Value;

use super::Failure;

/// The output settings of one command.
pub(super) struct Out {
    pub(super) json: bool,
    colour: bool,
}

/// ANSI colours used: green for what worked, yellow for what needs attention, red for failures.
#[derive(Clone, Copy)]
pub(super) enum Tone {
    Good,
    Warn,
    Bad,
    Dim,
}

impl Out {
    pub(super) fn new(json: bool) -> Out {
        let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        Out { json, colour }
    }

    /// `text` in `tone` when colour is on.
    pub(super) fn paint(&self, tone: Tone, text: &str) -> String {
        if !self.colour {
            return text.to_string();
        }
        let code = match tone {
            Tone::Good => "32",
            Tone::Warn => "33",
            Tone::Bad => "31",
            Tone::Dim => "2",
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }

    /// Prints a server answer as JSON (`--json`), one document per line.
    pub(super) fn json(&self, value: &Value) {
        println!("{value}");
    }

    /// Prints a failure: on stderr for people; with `--json` a refusal's body also goes to
    /// stdout, so a script reads the server's code where it reads answers.
    pub(super) fn failure(&self, failure: &Failure) {
        let label = self.paint(Tone::Bad, "error");
        match failure {
            Failure::Local(message) | Failure::Usage(message) | Failure::Network(message) => {
                eprintln!("{label}: {message}");
            }
            Failure::Check(message) => {
                if self.json {
                    self.json(&serde_json::json!({"ok": false, "failed": message}));
                }
                eprintln!("{}: {message}", self.paint(Tone::Bad, "check failed"));
            }
            Failure::Refused {
                status,
                code,
                message,
                body,
            } => {
                if self.json {
                    self.json(body);
                }
                eprintln!("{label}: the server refused ({status} {code}): {message}");
                if let Some(details) = body.pointer("/error/details").filter(|d| !d.is_null()) {
                    for line in details_lines(details) {
                        eprintln!("  {line}");
                    }
                }
            }
        }
    }
}

/// The details of an error answer as readable lines: each violation, finding or field error
/// on its own line, anything else as compact JSON.
fn details_lines(details: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    for key in ["violations", "findings", "errors"] {
        if let Some(items) = details.get(key).and_then(Value::as_array) {
            for item in items {
                let place = ["pointer", "field", "ruleId"]
                    .iter()
                    .filter_map(|k| item.get(*k).and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(" ");
                let what = ["message", "excerpt", "category"]
                    .iter()
                    .filter_map(|k| item.get(*k).and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(": ");
                lines.push(format!("{place}: {what}"));
            }
        }
    }
    if lines.is_empty() {
        lines.push(details.to_string());
    }
    lines
}

/// `rows` under `headers`, each column as wide as its widest cell.
pub(super) fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = vec![line(headers.to_vec())];
    out.extend(
        rows.iter()
            .map(|row| line(row.iter().map(String::as_str).collect())),
    );
    out.join("\n")
}

/// A JSON value as a table cell: strings bare, absent as `-`.
pub(super) fn cell(value: &Value) -> String {
    match value {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The capabilities set to `true` in a `{kv, files, ...}` object, or `none`.
pub(super) fn capability_list(value: &Value) -> String {
    let names: Vec<&str> = value
        .as_object()
        .map(|caps| {
            caps.iter()
                .filter(|(_, on)| on.as_bool() == Some(true))
                .map(|(name, _)| name.as_str())
                .collect()
        })
        .unwrap_or_default();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// One invocation log entry as lines: time, status, duration, request id, then its log lines
/// and, when the server kept one, the error with its position.
pub(super) fn log_entry(out: &Out, entry: &Value) -> String {
    let status = entry["status"].as_u64().unwrap_or(0);
    let tone = match status {
        200..=299 => Tone::Good,
        400..=499 => Tone::Warn,
        _ => Tone::Bad,
    };
    let mut head = format!(
        "{}  {}  {} ms  {}",
        cell(&entry["at"]),
        out.paint(tone, &status.to_string()),
        entry["durationMs"].as_u64().unwrap_or(0),
        out.paint(Tone::Dim, &cell(&entry["requestId"])),
    );
    if entry["test"].as_bool() == Some(true) {
        head.push_str("  (test)");
    }
    let mut lines = vec![head];
    for line in entry["lines"].as_array().into_iter().flatten() {
        lines.push(format!(
            "    [{}] {}",
            cell(&line["level"]),
            cell(&line["message"])
        ));
    }
    if let Some(dropped) = entry["droppedLines"].as_u64().filter(|n| *n > 0) {
        lines.push(format!("    ({dropped} more lines dropped)"));
    }
    if let Some(error) = entry.get("error").filter(|e| !e.is_null()) {
        let text = match error {
            Value::Object(fields) => {
                let mut text = format!(
                    "{}: {}",
                    cell(fields.get("code").unwrap_or(&Value::Null)),
                    cell(fields.get("message").unwrap_or(&Value::Null))
                );
                // The frames in the handler's module (`at fetch (handler.js:4:20)`), innermost
                // first; without them, the position alone.
                let frames: Vec<&str> = fields
                    .get("stack")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                if !frames.is_empty() {
                    text.push('\n');
                    text.push_str(&indent(&frames.join("\n"), "      "));
                } else if let (Some(line), Some(column)) = (
                    fields.get("line").and_then(Value::as_u64),
                    fields.get("column").and_then(Value::as_u64),
                ) {
                    text.push_str(&format!(" (handler line {line}, column {column})"));
                }
                text
            }
            other => cell(other),
        };
        lines.push(format!("    {} {text}", out.paint(Tone::Bad, "error")));
    }
    lines.join("\n")
}

fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|l| format!("{by}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Atomic USDC units (as the server sends them: a string, or a number) in USD: "0.0018 USD".
pub(super) fn usd(units: &Value) -> String {
    units
        .as_str()
        .map(str::to_owned)
        .or_else(|| units.as_u64().map(|u| u.to_string()))
        .and_then(|text| text.parse::<u64>().ok())
        .map(|units| format!("{} USD", crate::money::Usd::from_units(units)))
        .unwrap_or_else(|| cell(units))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_failed_call_shows_its_code_message_and_where() {
        let out = Out {
            json: false,
            colour: false,
        };
        let entry = json!({"at": "t", "status": 400, "durationMs": 3, "requestId": "r",
            "error": {"code": "handler_refused", "message": "city is required", "line": 4,
                "column": 20, "stack": ["at fetch (handler.js:4:20)"]}});
        let text = log_entry(&out, &entry);
        assert!(
            text.ends_with(
                "    error handler_refused: city is required\n      at fetch (handler.js:4:20)"
            ),
            "{text}"
        );
        let mut entry = entry;
        entry["error"]["stack"] = json!([]);
        assert!(
            log_entry(&out, &entry).ends_with("city is required (handler line 4, column 20)"),
            "{entry}"
        );
    }

    #[test]
    fn a_table_pads_columns_to_the_widest_cell() {
        let text = table(
            &["SLUG", "STATUS"],
            &[
                vec!["a-long-slug".into(), "active".into()],
                vec!["b".into(), "paused".into()],
            ],
        );
        assert_eq!(
            text,
            "SLUG         STATUS\na-long-slug  active\nb            paused"
        );
    }

    #[test]
    fn capabilities_list_the_true_ones() {
        assert_eq!(
            capability_list(&json!({"kv": true, "files": false, "logs": true})),
            "kv, logs"
        );
        assert_eq!(capability_list(&json!({})), "none");
    }

    #[test]
    fn violations_are_one_line_each() {
        let lines = details_lines(&json!({"violations": [
            {"pointer": "/slug", "message": "too short"},
            {"pointer": "/title", "message": "empty"}]}));
        assert_eq!(lines, vec!["/slug: too short", "/title: empty"]);
    }
}
