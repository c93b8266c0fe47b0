//! MCP endpoints (Streamable HTTP transport), probed the way a client connects: `POST initialize`
//! accepting JSON or an SSE stream, then `notifications/initialized` and `tools/list`.
//!
//! A GET on such an endpoint may answer 405: the transport lets a server offer no SSE stream of
//! its own (a stateless server never does), so that is not a fault.

use std::time::Instant;

use http::header::{self, HeaderName, HeaderValue};
use serde_json::{json, Value};

use super::report::{quote, str_field, Findings};
use super::with_deadline;
use crate::net::{FetchedResponse, OutboundClient, OutboundRequest};

/// Protocol revisions this check speaks, newest first; it asks for the first.
const REVISIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// Whether what the URL answered so far suggests an MCP endpoint worth an `initialize`: a GET
/// refused by method or by `Accept` (no SSE stream offered), or a JSON-RPC message in reply.
pub(super) fn worth_probing(
    get: &FetchedResponse,
    get_doc: Option<&Value>,
    post_doc: Option<&Value>,
) -> bool {
    let json_rpc = |doc: Option<&Value>| doc.is_some_and(|d| d.get("jsonrpc").is_some());
    matches!(get.status, 405 | 406) || json_rpc(get_doc) || json_rpc(post_doc)
}

/// The JSON-RPC message answering request `id`: the JSON body, or the matching `data:` event of
/// an SSE body.
fn answer(response: &FetchedResponse, id: u64) -> Option<Value> {
    let is_sse = response
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.trim_start().starts_with("text/event-stream"));
    if !is_sse {
        return serde_json::from_slice::<Value>(&response.body)
            .ok()
            .filter(|m| m.get("jsonrpc").is_some());
    }
    let text = String::from_utf8_lossy(&response.body);
    let mut data = String::new();
    // Events end at a blank line; their `data:` lines join with newlines.
    for line in text.lines().chain(std::iter::once("")) {
        if let Some(rest) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        } else if line.is_empty() && !data.is_empty() {
            let message = serde_json::from_str::<Value>(&data).ok();
            data.clear();
            if let Some(m) = message.filter(|m| m.get("id") == Some(&json!(id))) {
                return Some(m);
            }
        }
    }
    None
}

fn request(
    url: &str,
    body: Value,
    session: Option<&HeaderValue>,
    version: Option<&str>,
) -> OutboundRequest<'static> {
    let mut req = OutboundRequest::post_json(url, body);
    req.headers.insert(
        header::ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    if let Some(session) = session {
        req.headers.insert(SESSION_HEADER, session.clone());
    }
    if let Some(version) = version.and_then(|v| HeaderValue::from_str(v).ok()) {
        req.headers.insert(VERSION_HEADER, version);
    }
    req
}

/// Connects to `url` as an MCP client would and checks what it answers. `None` when the
/// `initialize` is not answered with a JSON-RPC message: not an MCP endpoint after all, and
/// nothing was recorded.
pub(super) async fn probe(
    client: &OutboundClient,
    url: &str,
    get_status: u16,
    deadline: Instant,
    f: &mut Findings,
) -> Option<String> {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": REVISIONS[0],
            "capabilities": {},
            "clientInfo": {"name": "toolhost-readiness-check", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let response = client
        .fetch(with_deadline(
            request(url, initialize, None, None),
            deadline,
        ))
        .await
        .ok()?;
    let message = answer(&response, 1)?;
    let transport = if response
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.contains("event-stream"))
    {
        "an SSE stream"
    } else {
        "JSON"
    };
    f.pass(
        "fetch",
        match get_status {
            405 | 406 => format!(
                "GET answered HTTP {get_status}: the server offers no SSE stream of its own, which the Streamable HTTP transport allows"
            ),
            status => format!("GET answered HTTP {status}"),
        },
    );
    let final_url = response.final_url.clone();
    let result = match (response.status, message.get("result")) {
        (200, Some(result)) => {
            f.pass(
                "mcp_initialize",
                format!("POST initialize answered HTTP 200 with a result, as {transport}"),
            );
            result
        }
        (status, _) => {
            let error = message
                .pointer("/error/message")
                .and_then(Value::as_str)
                .map_or_else(|| "no result".to_string(), quote);
            f.fail(
                "mcp_initialize",
                format!("POST initialize answered HTTP {status} with {error}"),
                "Answer initialize (JSON-RPC 2.0 over POST, Accept: application/json, text/event-stream) with a result",
            );
            return Some(final_url);
        }
    };
    let version = str_field(result, "protocolVersion");
    match version {
        Some(v) if REVISIONS.contains(&v) => {
            f.pass("mcp_protocol_version", format!("protocol revision {v}"))
        }
        Some(v) => f.fail(
            "mcp_protocol_version",
            format!(
                "protocol revision {} is none a client asking for {} can speak ({})",
                quote(v),
                REVISIONS[0],
                REVISIONS.join(", ")
            ),
            "Answer initialize with the revision the client asked for when supported, else a published one",
        ),
        None => f.fail(
            "mcp_protocol_version",
            "the initialize result has no protocolVersion",
            "Return protocolVersion in the initialize result",
        ),
    }
    let info = result.get("serverInfo").unwrap_or(&Value::Null);
    match (str_field(info, "name"), str_field(info, "version")) {
        (Some(name), Some(v)) => f.pass(
            "mcp_server_info",
            format!("serverInfo names {} version {}", quote(name), quote(v)),
        ),
        _ => f.fail(
            "mcp_server_info",
            "serverInfo.name or serverInfo.version is missing",
            "Return serverInfo with name and version in the initialize result",
        ),
    }
    if result.pointer("/capabilities/tools").is_none() {
        f.fail(
            "mcp_tools",
            "the server declares no tools capability",
            "Declare capabilities.tools and list the tools agents can call",
        );
        return Some(final_url);
    }

    // The session (if the server keeps one) and the agreed revision go with every later request.
    let session = response.headers.get(&SESSION_HEADER).cloned();
    let version = version.filter(|v| REVISIONS.contains(v));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let _ = client
        .fetch(with_deadline(
            request(&final_url, initialized, session.as_ref(), version),
            deadline,
        ))
        .await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let listed = client
        .fetch(with_deadline(
            request(&final_url, list, session.as_ref(), version),
            deadline,
        ))
        .await;
    let tools = match &listed {
        Ok(r) => answer(r, 2)
            .and_then(|m| m.pointer("/result/tools").cloned())
            .and_then(|t| t.as_array().cloned()),
        Err(_) => None,
    };
    match tools {
        Some(tools) if !tools.is_empty() => {
            let incomplete: Vec<String> = tools
                .iter()
                .enumerate()
                .filter(|(_, t)| {
                    str_field(t, "name").is_none()
                        || !t.get("inputSchema").is_some_and(Value::is_object)
                })
                .map(|(i, t)| str_field(t, "name").map_or_else(|| format!("tools[{i}]"), quote))
                .collect();
            f.verdict(
                "mcp_tools",
                format!(
                    "tools/list lists {} tool(s), each with a name and an input schema",
                    tools.len()
                ),
                &incomplete
                    .iter()
                    .map(|t| format!("{t} lacks a name or an inputSchema object"))
                    .collect::<Vec<_>>(),
                "Give every tool a name and an inputSchema (JSON Schema object)",
            );
        }
        Some(_) => f.fail(
            "mcp_tools",
            "tools/list lists no tools",
            "List the tools agents can call in tools/list",
        ),
        None => {
            let how = match &listed {
                Ok(r) => format!("answered HTTP {} without a tools list", r.status),
                Err(e) => format!("failed: {e}"),
            };
            f.fail(
                "mcp_tools",
                format!("tools/list {how}"),
                "Answer tools/list after initialize with result.tools",
            );
        }
    }
    Some(final_url)
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http::HeaderMap;

    use super::*;

    fn response(content_type: &str, body: &str) -> FetchedResponse {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_str(content_type).unwrap(),
        );
        FetchedResponse {
            status: 200,
            headers,
            body: Bytes::from(body.to_string()),
            final_url: "https://x.example/mcp".into(),
        }
    }

    #[test]
    fn answers_from_json_or_sse() {
        let json = response(
            "application/json",
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        );
        assert_eq!(
            answer(&json, 1),
            Some(json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
        );
        assert_eq!(
            answer(&response("application/json", r#"{"id":1}"#), 1),
            None
        );
        let sse = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n\
                   event: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{\"ok\":true}}\n";
        assert_eq!(
            answer(&response("text/event-stream", sse), 1),
            Some(json!({"jsonrpc": "2.0", "id": 1, "result": {"ok": true}}))
        );
        assert_eq!(answer(&response("text/event-stream", sse), 2), None);
    }
}
