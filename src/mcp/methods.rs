//! The MCP methods of each era: `initialize`, `ping` (legacy only), `server/discover` (2026-07-28
//! only), `tools/list`, `tools/call`. Anything else is -32601; under a legacy revision that is
//! also what lets a client that probed `server/discover` fall back to `initialize`.
//!
//! Under 2026-07-28 every result says `resultType: "complete"` (this server never asks the
//! client for input mid-request), and the cacheable ones (`server/discover`, `tools/list`) carry
//! caching hints. Legacy results are left exactly as those revisions define them.

use axum::http::HeaderMap;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use super::era::{Era, META_SERVER_INFO};
use super::protocol::{self, RpcError, LEGACY_VERSIONS, METHOD_NOT_FOUND, SUPPORTED_VERSIONS};
use super::{payment, tools};
use crate::app::AppState;

/// How long a client may reuse a `tools/list` page: 0, revalidate every time, as the HTTP
/// catalog's `Cache-Control: no-cache` says. The catalog changes whenever a builder publishes,
/// pauses or reprices an endpoint, and a stale page would offer a paused tool or an old price.
/// It is the same for every caller, so shared caches may hold it (`public`).
const LIST_TTL_MS: u64 = 0;
/// How long a client may reuse `server/discover`: what it says changes only with a deploy.
const DISCOVER_TTL_MS: u64 = 3_600_000;

/// What a request is answered with besides its params.
pub(super) struct Context<'a> {
    pub(super) app: &'a AppState,
    /// The request's era (from its envelope and headers).
    pub(super) era: Era,
    /// The MCP request's HTTP headers.
    pub(super) headers: &'a HeaderMap,
    /// The client's address (who a free call is from, for a rollout).
    pub(super) client: Option<std::net::IpAddr>,
    /// Where `notifications/progress` go when the answer is a stream; `None` for plain JSON.
    pub(super) progress: Option<&'a mpsc::Sender<Value>>,
}

/// A method this server serves in some era.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Route {
    Initialize,
    Ping,
    Discover,
    ListTools,
    CallTool,
}

/// The method as served in `era`, or -32601 (which 2026-07-28 answers with HTTP 404, before
/// anything else about the request is looked at).
pub(super) fn route(era: Era, method: &str) -> Result<Route, RpcError> {
    let modern = matches!(era, Era::Modern(_));
    match (method, modern) {
        ("initialize", false) => Ok(Route::Initialize),
        ("ping", false) => Ok(Route::Ping),
        ("server/discover", true) => Ok(Route::Discover),
        ("tools/list", _) => Ok(Route::ListTools),
        ("tools/call", _) => Ok(Route::CallTool),
        _ => Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("method not found in MCP {}: {method}", era.version()),
        )),
    }
}

pub(super) async fn dispatch(
    ctx: &Context<'_>,
    method: &str,
    params: Value,
) -> Result<Value, RpcError> {
    let route = route(ctx.era, method)?;
    let params = match params {
        Value::Null => Map::new(),
        Value::Object(params) => params,
        _ => return Err(RpcError::invalid_params("params must be an object")),
    };
    let (mut result, cache) = match route {
        Route::Initialize => (initialize(&params)?, None),
        Route::Ping => (json!({}), None),
        Route::Discover => (discover(), Some(DISCOVER_TTL_MS)),
        Route::ListTools => {
            let cursor = match params.get("cursor") {
                None | Some(Value::Null) => None,
                Some(Value::String(cursor)) => Some(cursor.as_str()),
                Some(_) => return Err(RpcError::invalid_params("cursor must be a string")),
            };
            (tools::list(ctx.app, cursor)?, Some(LIST_TTL_MS))
        }
        Route::CallTool => (call_tool(ctx, params).await?, None),
    };
    if let Era::Modern(_) = ctx.era {
        result["resultType"] = json!("complete");
        if let Some(ttl) = cache {
            result["ttlMs"] = json!(ttl);
            result["cacheScope"] = json!("public");
        }
    }
    Ok(result)
}

fn capabilities() -> Value {
    json!({"tools": {"listChanged": false}})
}

fn server_info() -> Value {
    json!({
        "name": "toolhost",
        "title": "toolhost: paid AI/API tools over x402",
        "version": env!("CARGO_PKG_VERSION"),
    })
}

const INSTRUCTIONS: &str = "Every hosted tool is listed by tools/list with its price. Free tools answer directly. \
    A paid tool called without payment returns an error result whose structuredContent is the x402 PaymentRequired; \
    sign one of its `accepts` and call again with the PaymentPayload in params._meta[\"x402/payment\"] \
    (or a developer credit in params._meta[\"toolhost/developer-credit\"]). The result then carries \
    _meta[\"x402/payment-response\"] and the receipt; receipt_lookup fetches it again later.";

/// Legacy version negotiation: the client's revision when it is a legacy one, else the newest
/// legacy one (2026-07-28 has no `initialize`).
fn initialize(params: &Map<String, Value>) -> Result<Value, RpcError> {
    let requested = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("protocolVersion (string) is required"))?;
    let version = protocol::supported(requested)
        .filter(|v| !protocol::is_modern(v))
        .unwrap_or(LEGACY_VERSIONS[0]);
    Ok(json!({
        "protocolVersion": version,
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    }))
}

/// 2026-07-28's `server/discover`: every served revision (the client picks a modern one, or
/// falls back to `initialize` with a legacy one), the capabilities, and who is answering.
fn discover() -> Value {
    json!({
        "supportedVersions": SUPPORTED_VERSIONS,
        "capabilities": capabilities(),
        "instructions": INSTRUCTIONS,
        "_meta": {META_SERVER_INFO: server_info()},
    })
}

async fn call_tool(ctx: &Context<'_>, params: Map<String, Value>) -> Result<Value, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("name (string) is required"))?;
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(arguments @ Value::Object(_)) => arguments.clone(),
        Some(_) => return Err(RpcError::invalid_params("arguments must be an object")),
    };
    let meta = match params.get("_meta") {
        None | Some(Value::Null) => None,
        Some(Value::Object(meta)) => Some(meta),
        Some(_) => return Err(RpcError::invalid_params("_meta must be an object")),
    };
    let tool = tools::resolve(ctx.app, name)
        .ok_or_else(|| RpcError::invalid_params(format!("unknown tool: {name}")))?;
    let payment = payment::call_payment(ctx.headers, meta)?;
    let token = meta
        .and_then(|m| m.get("progressToken"))
        .filter(|t| t.is_string() || t.is_number());
    report(ctx, token, 0, &format!("calling {name}")).await;
    let result = tools::call(ctx.app, tool, arguments, payment, ctx.client).await;
    report(ctx, token, 1, "done").await;
    Ok(result)
}

/// Sends `notifications/progress` when the answer is a stream and the caller gave a token.
async fn report(ctx: &Context<'_>, token: Option<&Value>, progress: u32, message: &str) {
    let (Some(sink), Some(token)) = (ctx.progress, token) else {
        return;
    };
    let note = json!({
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": token, "progress": progress, "total": 1, "message": message},
    });
    // A closed stream means the client left; the call still completes and settles.
    let _ = sink.send(note).await;
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::arbitrary;

    const WORDS: &[&str] = &[
        "protocolVersion",
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2026-07-28",
        "2024-11-05",
        "capabilities",
        "clientInfo",
    ];

    proptest! {
        /// Any `initialize` params (docs/fuzzing.md): a served revision, the client's own when
        /// it is served; or invalid params when there is no revision string.
        #[test]
        fn initialize_negotiates_a_served_revision(
            params in arbitrary::object(WORDS, arbitrary::json(WORDS)),
        ) {
            let requested = params.get("protocolVersion").and_then(Value::as_str);
            match initialize(&params) {
                Ok(answer) => {
                    let version = answer["protocolVersion"].as_str().unwrap();
                    prop_assert!(LEGACY_VERSIONS.contains(&version));
                    let requested = requested.unwrap();
                    if LEGACY_VERSIONS.contains(&requested) {
                        prop_assert_eq!(version, requested);
                    }
                }
                Err(e) => {
                    prop_assert_eq!(e.code, protocol::INVALID_PARAMS);
                    prop_assert!(requested.is_none());
                }
            }
        }
    }
}
