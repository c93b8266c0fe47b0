//! Streamable HTTP, stateless: one POST carries one JSON-RPC message (or, under 2025-03-26, a
//! batch) and gets the answer in its response, as JSON by default or as an SSE stream when the
//! client accepts only `text/event-stream` or asked for progress on a tool call.
//!
//! Refusals of the transport (origin, media types, revision header, size) are JSON-RPC error
//! objects with `id: null` under the matching 4xx status, as MCP SDK clients expect.

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;
use tokio::sync::mpsc;

use super::methods::{dispatch, Context};
use super::protocol::{
    self, allows_batches, classify, failure, success, Message, RpcError, DEFAULT_VERSION,
    PARSE_ERROR, TRANSPORT_ERROR,
};
use crate::app::{App, AppState};

const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// How the client accepts answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Accepts {
    Json,
    Sse,
    Both,
}

/// One message of the body, classified.
enum Item {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// Already answered (an invalid message).
    Reply(Value),
    /// A notification or a client response: nothing to answer.
    Silent,
}

/// MCP over Streamable HTTP: JSON-RPC requests answered as JSON or SSE; notifications 202.
#[utoipa::path(post, path = "/ai/mcp", tag = "mcp",
    params(
        ("MCP-Protocol-Version" = Option<String>, Header, description = "2025-11-25, 2025-06-18 or 2025-03-26 (assumed when absent)"),
        ("Accept" = Option<String>, Header, description = "application/json and/or text/event-stream; JSON unless only text/event-stream is accepted"),
    ),
    request_body(content = Object, description = "One JSON-RPC 2.0 message: initialize, ping, tools/list, tools/call or a notification. A batch array is accepted under 2025-03-26 only."),
    responses(
        (status = 200, description = "JSON-RPC response (application/json), or a text/event-stream of progress notifications and the response", body = Object),
        (status = 202, description = "Notification or response accepted; no body"),
        (status = 400, description = "Parse error, invalid message, batch under 2025-06-18 or later, or unsupported MCP-Protocol-Version; JSON-RPC error object", body = Object),
        (status = 403, description = "Origin not allowed; JSON-RPC error object", body = Object),
        (status = 406, description = "Accept allows neither JSON nor SSE", body = Object),
        (status = 413, description = "Body too large", body = Object),
        (status = 415, description = "Content-Type is not application/json", body = Object),
    ))]
pub async fn post(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match accept(&app, &headers, body) {
        Ok((version, accepts, value)) => answer(app, headers, version, accepts, value).await,
        Err(Refusal(status, code, message)) => refuse(status, code, &message),
    }
}

/// A refusal of the transport: HTTP status, JSON-RPC code, message.
struct Refusal(StatusCode, i64, String);

/// `GET` (server-initiated stream) and `DELETE` (session end): neither exists without sessions.
pub async fn method_not_allowed() -> Response {
    let mut response = refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        TRANSPORT_ERROR,
        "this MCP server is stateless: only POST is served",
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

fn refuse(status: StatusCode, code: i64, message: &str) -> Response {
    (
        status,
        Json(failure(Value::Null, &RpcError::new(code, message))),
    )
        .into_response()
}

/// Transport checks, in the order a client can fix them; then the JSON body.
fn accept(
    app: &App,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(&'static str, Accepts, Value), Refusal> {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let allowed = origin.to_str().is_ok_and(|o| origin_allowed(app, o));
        if !allowed {
            return Err(Refusal(
                StatusCode::FORBIDDEN,
                TRANSPORT_ERROR,
                "origin not allowed".into(),
            ));
        }
    }
    let accepts = accepts(headers).ok_or_else(|| {
        Refusal(
            StatusCode::NOT_ACCEPTABLE,
            TRANSPORT_ERROR,
            "Accept must allow application/json or text/event-stream".into(),
        )
    })?;
    let json_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json_body {
        return Err(Refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            TRANSPORT_ERROR,
            "Content-Type must be application/json".into(),
        ));
    }
    let version = match headers.get(PROTOCOL_VERSION_HEADER) {
        None => DEFAULT_VERSION,
        Some(value) => value
            .to_str()
            .ok()
            .and_then(protocol::supported)
            .ok_or_else(|| {
                Refusal(
                    StatusCode::BAD_REQUEST,
                    TRANSPORT_ERROR,
                    format!(
                        "unsupported MCP-Protocol-Version; supported: {}",
                        protocol::SUPPORTED_VERSIONS.join(", ")
                    ),
                )
            })?,
    };
    let bytes = body
        .map_err(|rejection| Refusal(rejection.status(), TRANSPORT_ERROR, rejection.body_text()))?;
    let value = serde_json::from_slice(&bytes).map_err(|e| {
        Refusal(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            format!("parse error: {e}"),
        )
    })?;
    Ok((version, accepts, value))
}

/// Absent `Origin` (non-browser clients) passes; a present one must be the service's own, or
/// listed in `mcp.allowed_origins` (`*` for any).
fn origin_allowed(app: &App, origin: &str) -> bool {
    let origin_of = |text: &str| url::Url::parse(text).ok().map(|u| u.origin());
    let Some(theirs) = origin_of(origin).filter(url::Origin::is_tuple) else {
        return app
            .config
            .mcp
            .allowed_origins
            .iter()
            .any(|a| a == "*" || a == origin);
    };
    let own = origin_of(app.urls.base());
    own.as_ref() == Some(&theirs)
        || app
            .config
            .mcp
            .allowed_origins
            .iter()
            .any(|a| a == "*" || origin_of(a).as_ref() == Some(&theirs))
}

/// JSON unless the client accepts only SSE; no `Accept` (or `*/*`) means JSON.
fn accepts(headers: &HeaderMap) -> Option<Accepts> {
    let ranges: Vec<String> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|range| range.split(';').next())
        .map(|range| range.trim().to_ascii_lowercase())
        .filter(|range| !range.is_empty())
        .collect();
    if ranges.is_empty() {
        return Some(Accepts::Json);
    }
    let json = ranges
        .iter()
        .any(|r| matches!(r.as_str(), "application/json" | "application/*" | "*/*"));
    let sse = ranges
        .iter()
        .any(|r| matches!(r.as_str(), "text/event-stream" | "text/*"));
    match (json, sse) {
        (true, true) => Some(Accepts::Both),
        (true, false) => Some(Accepts::Json),
        (false, true) => Some(Accepts::Sse),
        (false, false) => None,
    }
}

async fn answer(
    app: AppState,
    headers: HeaderMap,
    version: &'static str,
    accepts: Accepts,
    value: Value,
) -> Response {
    let (items, batch) = match value {
        Value::Array(messages) => {
            if !allows_batches(version) {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    protocol::INVALID_REQUEST,
                    &format!("batches are not part of MCP {version}; send one message per request"),
                );
            }
            if messages.is_empty() {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    protocol::INVALID_REQUEST,
                    "empty batch",
                );
            }
            (
                messages
                    .into_iter()
                    .map(|m| item(m, true))
                    .collect::<Vec<_>>(),
                true,
            )
        }
        message => (vec![item(message, false)], false),
    };
    if items.iter().all(|i| matches!(i, Item::Silent)) {
        return StatusCode::ACCEPTED.into_response();
    }
    if !batch {
        if let Some(Item::Reply(reply)) = items.first() {
            return (StatusCode::BAD_REQUEST, Json(reply.clone())).into_response();
        }
    }
    let progress_asked = items.iter().any(|i| match i {
        Item::Request { method, params, .. } => {
            method == "tools/call" && params.pointer("/_meta/progressToken").is_some()
        }
        _ => false,
    });
    if accepts == Accepts::Sse || (accepts == Accepts::Both && progress_asked) {
        return stream(app, headers, items);
    }
    let ctx = Context {
        app: &app,
        headers: &headers,
        progress: None,
    };
    let mut replies = Vec::new();
    for i in items {
        replies.extend(reply(&ctx, i).await);
    }
    if batch {
        Json(Value::Array(replies)).into_response()
    } else {
        Json(replies.pop().unwrap_or(Value::Null)).into_response()
    }
}

fn item(message: Value, in_batch: bool) -> Item {
    match classify(message) {
        Ok(Message::Request { id, method, .. }) if in_batch && method == "initialize" => {
            Item::Reply(failure(
                id,
                &RpcError::invalid_request("initialize must not be part of a batch"),
            ))
        }
        Ok(Message::Request { id, method, params }) => Item::Request { id, method, params },
        Ok(Message::Notification | Message::Response) => Item::Silent,
        Err((id, error)) => Item::Reply(failure(id, &error)),
    }
}

async fn reply(ctx: &Context<'_>, item: Item) -> Option<Value> {
    match item {
        Item::Request { id, method, params } => Some(match dispatch(ctx, &method, params).await {
            Ok(result) => success(id, result),
            Err(error) => failure(id, &error),
        }),
        Item::Reply(reply) => Some(reply),
        Item::Silent => None,
    }
}

/// The answer as `text/event-stream`: progress notifications as they happen, then each reply.
/// The work runs in its own task so events flow while it runs; it finishes (and settles) even
/// if the client goes away, as a plain HTTP call would.
fn stream(app: AppState, headers: HeaderMap, items: Vec<Item>) -> Response {
    let (tx, rx) = mpsc::channel::<Value>(16);
    tokio::spawn(crate::rate_limit::carry(async move {
        let ctx = Context {
            app: &app,
            headers: &headers,
            progress: Some(&tx),
        };
        for i in items {
            if let Some(reply) = reply(&ctx, i).await {
                if tx.send(reply).await.is_err() {
                    break;
                }
            }
        }
    }));
    let events = futures::stream::unfold(rx, |mut rx| async move {
        let message = rx.recv().await?;
        Some((
            Ok::<_, Infallible>(Bytes::from(format!("event: message\ndata: {message}\n\n"))),
            rx,
        ))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(events))
        .unwrap_or_else(|e| crate::error::ApiError::internal(e).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn content_negotiation() {
        assert_eq!(accepts(&HeaderMap::new()), Some(Accepts::Json));
        assert_eq!(accepts(&with_accept("*/*")), Some(Accepts::Json));
        assert_eq!(
            accepts(&with_accept("application/json, text/event-stream")),
            Some(Accepts::Both)
        );
        assert_eq!(
            accepts(&with_accept("text/event-stream")),
            Some(Accepts::Sse)
        );
        assert_eq!(accepts(&with_accept("text/html")), None);
    }
}
