//! MCP endpoints (Streamable HTTP transport), probed the way a client connects. First as an MCP
//! 2026-07-28 client: a stateless `server/discover` with the protocol version and client
//! capabilities in `params._meta` and the `MCP-Protocol-Version` and `Mcp-Method` headers. A
//! server that does not answer it with a `supportedVersions` list naming 2026-07-28 (older
//! servers answer -32601, or anything else) is then connected to as the 2025 revisions do:
//! `POST initialize` accepting JSON or an SSE stream, then `notifications/initialized`. Either
//! way `tools/list` follows, in the revision the handshake agreed.
//!
//! A GET on such an endpoint may answer 405: the transport lets a server offer no SSE stream of
//! its own (a stateless server never does), so that is not a fault.

use std::time::Instant;

use http::header::{self, HeaderName, HeaderValue};
use serde_json::{json, Value};

use super::report::{quote, str_field, Findings};
use super::with_deadline;
use crate::net::{FetchedResponse, OutboundClient, OutboundRequest};

/// The stateless revision, tried first with `server/discover`.
const MODERN: &str = "2026-07-28";

/// Revisions negotiated by `initialize`, newest first; the check asks for the first.
const REVISIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");

/// Where a 2026-07-28 result puts the server's name and version.
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

fn client_info() -> Value {
    json!({"name": "toolhost-readiness-check", "version": env!("CARGO_PKG_VERSION")})
}

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
    let is_sse = is_sse(response);
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

fn is_sse(response: &FetchedResponse) -> bool {
    response
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.trim_start().starts_with("text/event-stream"))
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

/// A 2026-07-28 request: the envelope in `params._meta`, the revision and the method in headers.
fn modern_request(url: &str, id: u64, method: &'static str) -> OutboundRequest<'static> {
    let envelope = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": client_info(),
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": envelope}});
    let mut req = request(url, body, None, Some(MODERN));
    req.headers
        .insert(METHOD_HEADER, HeaderValue::from_static(method));
    req
}

/// The handshake that connected: its response and the JSON-RPC message in it.
struct Handshake {
    response: FetchedResponse,
    message: Value,
    /// Whether it was `server/discover` (2026-07-28) rather than `initialize`.
    modern: bool,
}

impl Handshake {
    fn method(&self) -> &'static str {
        if self.modern {
            "server/discover"
        } else {
            "initialize"
        }
    }
}

/// `server/discover`, if the server answers it as a 2026-07-28 server: a result whose
/// `supportedVersions` names that revision.
async fn discover(client: &OutboundClient, url: &str, deadline: Instant) -> Option<Handshake> {
    let response = client
        .fetch(with_deadline(
            modern_request(url, 1, "server/discover"),
            deadline,
        ))
        .await
        .ok()?;
    let message = answer(&response, 1)?;
    let supported = message
        .pointer("/result/supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|v| v.iter().any(|v| v == MODERN));
    (response.status == 200 && supported).then_some(Handshake {
        response,
        message,
        modern: true,
    })
}

async fn initialize(client: &OutboundClient, url: &str, deadline: Instant) -> Option<Handshake> {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": REVISIONS[0], "capabilities": {}, "clientInfo": client_info()}
    });
    let response = client
        .fetch(with_deadline(
            request(url, initialize, None, None),
            deadline,
        ))
        .await
        .ok()?;
    let message = answer(&response, 1)?;
    Some(Handshake {
        response,
        message,
        modern: false,
    })
}

/// Connects to `url` as an MCP client would (2026-07-28 first, then the 2025 revisions) and
/// checks what it answers. `None` when neither handshake is answered with a JSON-RPC message:
/// not an MCP endpoint after all, and nothing was recorded.
pub(super) async fn probe(
    client: &OutboundClient,
    url: &str,
    get_status: u16,
    deadline: Instant,
    f: &mut Findings,
) -> Option<String> {
    let handshake = match discover(client, url, deadline).await {
        Some(handshake) => handshake,
        None => initialize(client, url, deadline).await?,
    };
    let method = handshake.method();
    let response = &handshake.response;
    let transport = if is_sse(response) {
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
    let result = match (response.status, handshake.message.get("result")) {
        (200, Some(result)) => {
            f.pass(
                "mcp_initialize",
                format!("POST {method} answered HTTP 200 with a result, as {transport}"),
            );
            result
        }
        (status, _) => {
            let error = handshake
                .message
                .pointer("/error/message")
                .and_then(Value::as_str)
                .map_or_else(|| "no result".to_string(), quote);
            f.fail(
                "mcp_initialize",
                format!("POST initialize answered HTTP {status} with {error}"),
                "Answer server/discover (MCP 2026-07-28) or initialize (JSON-RPC 2.0 over POST, Accept: application/json, text/event-stream) with a result",
            );
            return Some(final_url);
        }
    };
    let version = if handshake.modern {
        f.pass(
            "mcp_protocol_version",
            format!("protocol revision {MODERN} (server/discover lists it)"),
        );
        Some(MODERN)
    } else {
        legacy_version(result, f)
    };
    let info = if handshake.modern {
        result.pointer(&format!("/_meta/{}", META_SERVER_INFO.replace('/', "~1")))
    } else {
        result.get("serverInfo")
    };
    let info = info.unwrap_or(&Value::Null);
    match (str_field(info, "name"), str_field(info, "version")) {
        (Some(name), Some(v)) => f.pass(
            "mcp_server_info",
            format!("serverInfo names {} version {}", quote(name), quote(v)),
        ),
        _ => f.fail(
            "mcp_server_info",
            "serverInfo.name or serverInfo.version is missing",
            "Return serverInfo with name and version (in the initialize result, or in server/discover's _meta under 2026-07-28)",
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

    let list = if handshake.modern {
        modern_request(&final_url, 2, "tools/list")
    } else {
        // The session (if the server keeps one) and the agreed revision go with every later
        // request.
        let session = response.headers.get(&SESSION_HEADER).cloned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let _ = client
            .fetch(with_deadline(
                request(&final_url, initialized, session.as_ref(), version),
                deadline,
            ))
            .await;
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        request(&final_url, list, session.as_ref(), version)
    };
    let listed = client.fetch(with_deadline(list, deadline)).await;
    check_tools(&listed, f);
    Some(final_url)
}

/// The revision an `initialize` result agreed, checked: one a client asking for the newest
/// 2025 revision can speak.
fn legacy_version<'a>(result: &'a Value, f: &mut Findings) -> Option<&'a str> {
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
    version.filter(|v| REVISIONS.contains(v))
}

/// What `tools/list` answered: at least one tool, each with a name and an input schema.
fn check_tools(listed: &Result<FetchedResponse, crate::net::NetError>, f: &mut Findings) {
    let tools = match listed {
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
            let how = match listed {
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
