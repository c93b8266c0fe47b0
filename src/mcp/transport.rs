//! Streamable HTTP, stateless: one POST carries one JSON-RPC message (or, under 2025-03-26, a
//! batch) and gets the answer in its response, as JSON by default or as an SSE stream when the
//! client accepts only `text/event-stream` or asked for progress on a tool call.
//!
//! Refusals of the transport (origin, media types, size) are JSON-RPC error objects with
//! `id: null` under the matching 4xx status, as MCP SDK clients expect. Then the body's era is
//! classified (`era`): a revision, envelope or header problem, and under 2026-07-28 a method
//! the revision lacks, is refused under the request's own id before any method runs.

use std::convert::Infallible;
use std::net::IpAddr;

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;
use tokio::sync::mpsc;

use super::era::{self, Era, Rejection};
use super::methods::{self, dispatch, Context};
use super::protocol::{
    allows_batches, classify, failure, success, Message, RpcError, METHOD_NOT_FOUND, PARSE_ERROR,
    TRANSPORT_ERROR,
};
use super::tools;
use crate::app::{App, AppState};
use crate::http::extract::ClientAddr;

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

/// What a JSON answer of the endpoint holds: one JSON-RPC response, or an array of them for a
/// batch (2025-03-26). Written out for the document only (never built: the transport writes
/// the responses and the batch array itself), hence `dead_code` allowed.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
#[serde(untagged)]
pub(super) enum RpcAnswer {
    One(Box<super::protocol::RpcResponse>),
    Batch(Vec<super::protocol::RpcResponse>),
}

/// MCP over Streamable HTTP: JSON-RPC requests answered as JSON or SSE; notifications 202.
#[utoipa::path(post, path = "/ai/mcp", tag = "mcp",
    params(
        ("MCP-Protocol-Version" = Option<String>, Header, pattern = "^(2026-07-28|2025-11-25|2025-06-18|2025-03-26)$", description = "2026-07-28 (equal to the request's _meta protocol version), 2025-11-25, 2025-06-18 or 2025-03-26 (assumed when absent and the request has no _meta protocol version)"),
        ("Mcp-Method" = Option<String>, Header, description = "2026-07-28: the body's method (required on requests)"),
        ("Mcp-Name" = Option<String>, Header, description = "2026-07-28: the body's params.name for tools/call (required when it has one)"),
        ("Accept" = Option<String>, Header, description = "application/json and/or text/event-stream; JSON unless only text/event-stream is accepted"),
    ),
    request_body(content = serde_json::Value, description = "One JSON-RPC 2.0 message: under 2026-07-28 server/discover, tools/list or tools/call with the protocol version and client capabilities in params._meta; under older revisions initialize, ping, tools/list, tools/call or a notification. A batch array is accepted under 2025-03-26 only."),
    responses(
        (status = 200, description = "JSON-RPC response (application/json; an array of them for a batch), or a text/event-stream of progress notifications and the response", body = RpcAnswer),
        (status = 202, description = "Notification or response accepted; no body"),
        (status = 400, description = "Parse error, invalid message, batch under 2025-06-18 or later, unsupported protocol version (-32022), headers disagreeing with the body (-32020), or a 2026-07-28 request without its _meta envelope (-32602); JSON-RPC error object", body = super::protocol::RpcResponse),
        (status = 403, description = "Origin not allowed; JSON-RPC error object", body = super::protocol::RpcResponse),
        (status = 404, description = "2026-07-28: method not in that revision (-32601); JSON-RPC error object", body = super::protocol::RpcResponse),
        (status = 406, description = "Accept allows neither JSON nor SSE", body = super::protocol::RpcResponse),
        (status = 413, description = "Body too large", body = super::protocol::RpcResponse),
        (status = 415, description = "Content-Type is not application/json", body = super::protocol::RpcResponse),
    ))]
pub async fn post(
    State(app): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let (accepts, value) = match accept(&app, &headers, body) {
        Ok(accepted) => accepted,
        Err(Refusal(status, code, message)) => return refuse(status, code, &message),
    };
    match era::classify(&headers, &value) {
        Ok(era) => answer(app, (headers, client), era, accepts, value).await,
        Err(Rejection { id, error }) => {
            (StatusCode::BAD_REQUEST, Json(failure(id, &error))).into_response()
        }
    }
}

/// A refusal of the transport: HTTP status, JSON-RPC code, message.
struct Refusal(StatusCode, i64, String);

/// Any method but POST, e.g. `GET` (server-initiated stream) and `DELETE` (session end):
/// neither exists without sessions.
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
) -> Result<(Accepts, Value), Refusal> {
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
    let bytes = body
        .map_err(|rejection| Refusal(rejection.status(), TRANSPORT_ERROR, rejection.body_text()))?;
    let value = serde_json::from_slice(&bytes).map_err(|e| {
        Refusal(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            format!("parse error: {e}"),
        )
    })?;
    Ok((accepts, value))
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
    (headers, client): (HeaderMap, Option<IpAddr>),
    era: Era,
    accepts: Accepts,
    value: Value,
) -> Response {
    let (items, batch) = match plan(era.version(), value) {
        Ok(plan) => plan,
        Err(refusal) => return (StatusCode::BAD_REQUEST, Json(refusal)).into_response(),
    };
    if items.iter().all(|i| matches!(i, Item::Silent)) {
        return StatusCode::ACCEPTED.into_response();
    }
    if !batch {
        if let Some(Item::Reply(reply)) = items.first() {
            return (StatusCode::BAD_REQUEST, Json(reply.clone())).into_response();
        }
        if let (Era::Modern(_), Some(Item::Request { id, method, params })) = (era, items.first()) {
            if let Err(error) = refuse_modern(&app, &headers, era, method, params) {
                // A method the revision lacks is 404 there; every other refusal is 400.
                let status = if error.code == METHOD_NOT_FOUND {
                    StatusCode::NOT_FOUND
                } else {
                    StatusCode::BAD_REQUEST
                };
                return (status, Json(failure(id.clone(), &error))).into_response();
            }
        }
    }
    let progress_asked = items.iter().any(|i| match i {
        Item::Request { method, params, .. } => {
            method == "tools/call" && params.pointer("/_meta/progressToken").is_some()
        }
        _ => false,
    });
    if accepts == Accepts::Sse || (accepts == Accepts::Both && progress_asked) {
        return stream(app, (headers, client), era, items);
    }
    let ctx = Context {
        app: &app,
        era,
        headers: &headers,
        client,
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

/// What 2026-07-28 refuses with an HTTP status before a request runs: `Mcp-Method` / `Mcp-Name`
/// disagreeing with the body (400), a method the revision lacks (404), then a tool call's
/// `Mcp-Param-*` headers disagreeing with its arguments (400).
fn refuse_modern(
    app: &App,
    headers: &HeaderMap,
    era: Era,
    method: &str,
    params: &Value,
) -> Result<(), RpcError> {
    era::check_headers(headers, method, params)?;
    if methods::route(era, method)? == methods::Route::CallTool {
        let schema = params
            .get("name")
            .and_then(Value::as_str)
            .and_then(|name| tools::input_schema(app, name));
        if let Some(schema) = schema {
            let arguments = params.get("arguments").unwrap_or(&Value::Null);
            era::check_param_headers(headers, &schema, arguments)?;
        }
    }
    Ok(())
}

/// Most messages in a batch. Each answer is built in memory before the batch's answer leaves,
/// and one `tools/list` answer is the whole tool list: without a cap, a 100 KB batch of them
/// was answered with 45 MB (issue 43).
const MAX_BATCH: usize = 16;

/// The body's messages, classified, and whether they came as a batch; or the refusal of the
/// whole body (a JSON-RPC error object, answered 400): a batch where the revision has none, an
/// empty one, or one of more than [`MAX_BATCH`].
fn plan(version: &str, value: Value) -> Result<(Vec<Item>, bool), Value> {
    let refusal = |message: String| failure(Value::Null, &RpcError::invalid_request(message));
    match value {
        Value::Array(messages) => {
            if !allows_batches(version) {
                return Err(refusal(format!(
                    "batches are not part of MCP {version}; send one message per request"
                )));
            }
            if messages.is_empty() {
                return Err(refusal("empty batch".into()));
            }
            if messages.len() > MAX_BATCH {
                return Err(refusal(format!(
                    "a batch holds at most {MAX_BATCH} messages; this one has {}",
                    messages.len()
                )));
            }
            let items = messages.into_iter().map(|m| item(m, true)).collect();
            Ok((items, true))
        }
        message => Ok((vec![item(message, false)], false)),
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
fn stream(
    app: AppState,
    (headers, client): (HeaderMap, Option<IpAddr>),
    era: Era,
    items: Vec<Item>,
) -> Response {
    let (tx, rx) = mpsc::channel::<Value>(16);
    tokio::spawn(crate::rate_limit::carry(async move {
        let ctx = Context {
            app: &app,
            era,
            headers: &headers,
            client,
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

    mod properties {
        //! Any JSON body (docs/fuzzing.md): each message gets exactly one well-formed JSON-RPC
        //! answer, or none when it is a notification or a client's response.

        use proptest::prelude::*;
        use serde_json::{json, Map, Value};

        use super::super::*;
        use crate::arbitrary;
        use crate::mcp::protocol::LEGACY_VERSIONS;

        const METHODS: &[&str] = &[
            "initialize",
            "ping",
            "tools/list",
            "tools/call",
            "notifications/initialized",
            "server/discover",
        ];
        const WORDS: &[&str] = &[
            "jsonrpc",
            "2.0",
            "id",
            "method",
            "params",
            "result",
            "error",
            "initialize",
            "ping",
            "tools/list",
            "tools/call",
            "protocolVersion",
            "2025-03-26",
            "_meta",
            "progressToken",
            "cursor",
            "name",
            "arguments",
            "code",
            "message",
        ];

        /// A message: mostly JSON-RPC-shaped objects with each member present or not and of
        /// any type, sometimes any JSON at all.
        fn message() -> BoxedStrategy<Value> {
            let any_json = arbitrary::json(WORDS);
            let member = |weight: f64, usual: BoxedStrategy<Value>| {
                proptest::option::weighted(weight, prop_oneof![3 => usual, 1 => any_json.clone()])
            };
            let id = prop_oneof![
                (-2i64..100).prop_map(Value::from),
                any::<String>().prop_map(Value::from)
            ]
            .boxed();
            let shaped = (
                member(0.9, Just(json!("2.0")).boxed()),
                member(0.8, id),
                member(
                    0.8,
                    proptest::sample::select(METHODS)
                        .prop_map(Value::from)
                        .boxed(),
                ),
                member(
                    0.5,
                    arbitrary::object(WORDS, any_json.clone())
                        .prop_map(Value::Object)
                        .boxed(),
                ),
                proptest::option::weighted(0.1, any_json.clone()),
                proptest::option::weighted(0.1, any_json.clone()),
            )
                .prop_map(|(jsonrpc, id, method, params, result, error)| {
                    let members = [
                        ("jsonrpc", jsonrpc),
                        ("id", id),
                        ("method", method),
                        ("params", params),
                        ("result", result),
                        ("error", error),
                    ];
                    let object: Map<String, Value> = members
                        .into_iter()
                        .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
                        .collect();
                    Value::Object(object)
                });
            prop_oneof![4 => shaped, 1 => any_json].boxed()
        }

        fn body() -> impl Strategy<Value = Value> {
            prop_oneof![
                3 => message(),
                1 => proptest::collection::vec(message(), 0..5).prop_map(Value::Array),
            ]
        }

        fn valid_id(id: Option<&Value>) -> bool {
            matches!(id, Some(Value::String(_) | Value::Number(_)))
        }

        /// A JSON-RPC error response, exactly: `jsonrpc`, a usable id, an integer code and a
        /// string message.
        fn check_error_object(reply: &Value) -> Result<(), TestCaseError> {
            let object = reply.as_object().expect("an object");
            let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
            keys.sort_unstable();
            prop_assert_eq!(keys, ["error", "id", "jsonrpc"]);
            prop_assert_eq!(&reply["jsonrpc"], "2.0");
            prop_assert!(valid_id(Some(&reply["id"])) || reply["id"].is_null());
            let error = reply["error"].as_object().expect("error object");
            prop_assert_eq!(error.len(), 2);
            prop_assert!(error["code"].is_i64() && error["message"].is_string());
            Ok(())
        }

        /// One message's answer, checked against what the message is.
        fn check_item(message: &Value, item: &Item, in_batch: bool) -> Result<(), TestCaseError> {
            let object = message.as_object();
            let member = |k: &str| object.and_then(|o| o.get(k));
            let jsonrpc = member("jsonrpc") == Some(&json!("2.0"));
            let id = member("id");
            let method = member("method").and_then(Value::as_str);
            let notification = jsonrpc && method.is_some() && id.is_none();
            let response = jsonrpc
                && member("method").is_none()
                && valid_id(id)
                && (member("result").is_some() || member("error").is_some());
            let request = jsonrpc && method.is_some() && valid_id(id);
            match item {
                Item::Silent => prop_assert!(notification || response, "{message}"),
                Item::Request {
                    id: got,
                    method: name,
                    ..
                } => {
                    prop_assert!(request, "{message}");
                    prop_assert_eq!(Some(got), id);
                    prop_assert_eq!(Some(name.as_str()), method);
                    prop_assert!(!(in_batch && name == "initialize"));
                }
                Item::Reply(reply) => {
                    prop_assert!(!notification && !response, "{message}");
                    prop_assert!(!request || (in_batch && method == Some("initialize")));
                    check_error_object(reply)?;
                    // The message's own id when it is usable, else null; never another value.
                    let expected = if valid_id(id) { id.cloned() } else { None };
                    let got = Some(&reply["id"]).filter(|i| !i.is_null()).cloned();
                    prop_assert!(got.is_none() || got == expected, "{message} -> {reply}");
                }
            }
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            #[test]
            fn every_message_gets_one_answer_or_none(
                version in proptest::sample::select(&LEGACY_VERSIONS[..]),
                body in body(),
            ) {
                match (plan(version, body.clone()), &body) {
                    (Ok((items, batch)), Value::Array(messages)) => {
                        prop_assert!(batch && allows_batches(version) && !messages.is_empty());
                        prop_assert_eq!(items.len(), messages.len());
                        for (message, item) in messages.iter().zip(&items) {
                            check_item(message, item, true)?;
                        }
                    }
                    (Ok((items, batch)), message) => {
                        prop_assert!(!batch);
                        prop_assert_eq!(items.len(), 1);
                        check_item(message, &items[0], false)?;
                    }
                    (Err(refusal), Value::Array(messages)) => {
                        prop_assert!(!allows_batches(version) || messages.is_empty());
                        check_error_object(&refusal)?;
                        prop_assert!(refusal["id"].is_null());
                    }
                    (Err(refusal), message) => prop_assert!(false, "{message} refused: {refusal}"),
                }
            }

            #[test]
            fn answers_are_well_formed(
                id in proptest::option::of(any::<i64>().prop_map(Value::from)),
                result in arbitrary::json(WORDS),
                code in any::<i64>(),
                message in any::<String>(),
            ) {
                let id = id.unwrap_or(Value::Null);
                let ok = success(id.clone(), result.clone());
                prop_assert_eq!(&ok, &json!({"jsonrpc": "2.0", "id": id, "result": result}));
                check_error_object(&failure(id, &RpcError::new(code, message)))?;
            }
        }
    }
}
