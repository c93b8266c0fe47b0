//! Which protocol era a request speaks, under MCP 2026-07-28's dual-era rules, and the checks
//! the stateless era adds before a request is dispatched.
//!
//! - **Modern** (2026-07-28): no `initialize`; every request carries its revision and the
//!   client's capabilities in `params._meta` (the envelope), repeated in the
//!   `MCP-Protocol-Version` header, and names its method (and tool) in the `Mcp-Method` (and
//!   `Mcp-Name`) header so intermediaries can route without reading the body.
//! - **Legacy** (2025-11-25 and older): `initialize` negotiates, the header alone names the
//!   revision, and its absence means 2025-03-26 (the 2025-06-18 transport's fallback).
//!
//! The body decides and the header cross-checks it: an envelope claim must match the header
//! (else `-32020`), a header naming the modern revision needs the envelope (else `-32602`),
//! and a revision not served is `-32022` listing the served ones. All of these are HTTP 400
//! under the request's own id, answered before any method runs. An envelope-less request
//! without a modern header (an `initialize`, or any request of an older client) stays legacy.

use axum::http::HeaderMap;
use base64::Engine;
use serde_json::Value;

use super::protocol::{is_modern, supported, RpcError, DEFAULT_VERSION, INVALID_PARAMS};

pub(super) const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
/// A tool argument mirrored into a header: `Mcp-Param-{name}` for an input-schema property
/// that declares `"x-mcp-header": "{name}"`.
const PARAM_HEADER_PREFIX: &str = "mcp-param-";
const PARAM_DECLARATION: &str = "x-mcp-header";

const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// Where a modern result names the server (`server/discover`).
pub(super) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// A header value that does not fit in plain ASCII travels as `=?base64?…?=` (SEP-2243).
const BASE64_PREFIX: &str = "=?base64?";
const BASE64_SUFFIX: &str = "?=";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Era {
    /// Negotiated by `initialize` (or assumed); the served revision.
    Legacy(&'static str),
    /// Stateless, per-request envelope; the served revision.
    Modern(&'static str),
}

impl Era {
    pub(super) fn version(self) -> &'static str {
        match self {
            Era::Legacy(version) | Era::Modern(version) => version,
        }
    }
}

/// A request refused before dispatch (HTTP 400): the error, under the request's id when the
/// body has a usable one.
#[derive(Debug)]
pub(super) struct Rejection {
    pub(super) id: Value,
    pub(super) error: RpcError,
}

/// The era of a parsed body, or why it is refused. A batch (legacy only) has no envelope.
pub(super) fn classify(headers: &HeaderMap, body: &Value) -> Result<Era, Rejection> {
    let id = body
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    let reject = |error| Rejection {
        id: id.clone(),
        error,
    };
    let meta = body.pointer("/params/_meta");
    let claim = meta.and_then(|m| m.get(META_PROTOCOL_VERSION));
    let header = headers
        .get(PROTOCOL_VERSION_HEADER)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_owned());
    let era = match (header.as_deref(), claim) {
        (header, Some(claim)) => {
            let claim = claim.as_str().ok_or_else(|| {
                reject(invalid_envelope(format!(
                    "_meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
                )))
            })?;
            match header {
                Some(header) if header == claim => {}
                Some(header) => {
                    return Err(reject(RpcError::header_mismatch(format!(
                        "MCP-Protocol-Version header {header:?} does not match _meta[\"{META_PROTOCOL_VERSION}\"] {claim:?}"
                    ))))
                }
                None => {
                    return Err(reject(RpcError::header_mismatch(format!(
                        "MCP-Protocol-Version header is required and must equal _meta[\"{META_PROTOCOL_VERSION}\"] ({claim:?})"
                    ))))
                }
            }
            era_of(claim).map_err(reject)?
        }
        (Some(header), None) => match era_of(header).map_err(reject)? {
            Era::Modern(version) if body.is_array() => {
                return Err(reject(RpcError::invalid_request(format!(
                    "batches are not part of MCP {version}; send one message per request"
                ))));
            }
            Era::Modern(version) => {
                let missing = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES]
                    .into_iter()
                    .filter(|key| meta.and_then(|m| m.get(key)).is_none())
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(reject(invalid_envelope(format!(
                    "MCP {version} requests carry params._meta with {missing}"
                ))));
            }
            legacy => legacy,
        },
        (None, None) => Era::Legacy(DEFAULT_VERSION),
    };
    if let Era::Modern(_) = era {
        let meta = meta.unwrap_or(&Value::Null);
        if !meta
            .get(META_CLIENT_CAPABILITIES)
            .is_some_and(Value::is_object)
        {
            return Err(reject(invalid_envelope(format!(
                "_meta[\"{META_CLIENT_CAPABILITIES}\"] (an object) is required"
            ))));
        }
        if meta
            .get(META_CLIENT_INFO)
            .is_some_and(|info| !info.is_object())
        {
            return Err(reject(invalid_envelope(format!(
                "_meta[\"{META_CLIENT_INFO}\"] must be an object"
            ))));
        }
    }
    Ok(era)
}

fn era_of(version: &str) -> Result<Era, RpcError> {
    match supported(version) {
        Some(v) if is_modern(v) => Ok(Era::Modern(v)),
        Some(v) => Ok(Era::Legacy(v)),
        None => Err(RpcError::unsupported_version(version)),
    }
}

fn invalid_envelope(message: String) -> RpcError {
    RpcError::new(INVALID_PARAMS, message)
}

/// The request field `Mcp-Name` mirrors, for the methods that have one (SEP-2243's table).
fn name_field(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

/// A modern request's `Mcp-Method` and `Mcp-Name` headers against its body: present, and
/// equal once surrounding whitespace is dropped (values are case-sensitive).
pub(super) fn check_headers(
    headers: &HeaderMap,
    method: &str,
    params: &Value,
) -> Result<(), RpcError> {
    let header = |name: &str| {
        headers
            .get(name)
            .map(|v| v.to_str().map(str::trim).map_err(|_| ()))
    };
    match header(METHOD_HEADER) {
        None => {
            return Err(RpcError::header_mismatch(format!(
                "Mcp-Method header is required (the body's method is {method:?})"
            )))
        }
        Some(Ok(value)) if value == method => {}
        Some(_) => {
            return Err(RpcError::header_mismatch(format!(
                "Mcp-Method header does not match the body's method {method:?}"
            )))
        }
    }
    let Some(field) = name_field(method) else {
        return Ok(());
    };
    let body = params.get(field).and_then(Value::as_str);
    match (body, header(NAME_HEADER)) {
        (None, None) => Ok(()),
        (Some(_), None) => Err(RpcError::header_mismatch(format!(
            "Mcp-Name header is required for {method} (params.{field})"
        ))),
        (body, Some(value)) => {
            let value = value.ok().and_then(decode_value);
            if body.is_some() && value.as_deref() == body {
                Ok(())
            } else {
                Err(RpcError::header_mismatch(format!(
                    "Mcp-Name header does not match params.{field}"
                )))
            }
        }
    }
}

/// A 2026-07-28 `tools/call`'s `Mcp-Param-*` headers against its arguments, for a tool whose
/// input schema declares `x-mcp-header` on properties (reached through `properties` alone, as
/// SEP-2243 requires): a primitive argument must be mirrored exactly (strings as they are,
/// numbers in decimal, booleans as `true`/`false`); an absent or null one must not be sent.
/// Builders may declare such headers; toolhost's own tools declare none.
pub(super) fn check_param_headers(
    headers: &HeaderMap,
    input_schema: &Value,
    arguments: &Value,
) -> Result<(), RpcError> {
    let mut declared = Vec::new();
    declarations(input_schema, Vec::new(), &mut declared);
    for (path, name) in declared {
        let value = path
            .iter()
            .try_fold(arguments, |node, key| node.get(key.as_str()));
        let expected = match value {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Bool(flag)) => Some(flag.to_string()),
            Some(Value::Number(number)) => Some(number.to_string()),
            // Not a primitive: clients send no header for it, and the input schema judges it.
            Some(_) => continue,
        };
        let header = format!("{PARAM_HEADER_PREFIX}{name}");
        let sent = headers
            .get(header.as_str())
            .map(|v| v.to_str().ok().map(str::trim).and_then(decode_value));
        match (expected, sent) {
            (None, None) => {}
            (Some(expected), Some(Some(sent))) if sent == expected => {}
            (Some(_), None) => {
                return Err(RpcError::header_mismatch(format!(
                    "Mcp-Param-{name} header is required: it mirrors arguments.{}",
                    path.join(".")
                )))
            }
            _ => {
                return Err(RpcError::header_mismatch(format!(
                    "Mcp-Param-{name} header does not match arguments.{}",
                    path.join(".")
                )))
            }
        }
    }
    Ok(())
}

/// The `x-mcp-header` declarations of a schema: property path and header name.
fn declarations(schema: &Value, path: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, property) in properties {
        let mut at = path.clone();
        at.push(key.clone());
        if let Some(name) = property.get(PARAM_DECLARATION).and_then(Value::as_str) {
            // A name that cannot be a header name can never be sent: nothing to check.
            if axum::http::HeaderName::try_from(format!("{PARAM_HEADER_PREFIX}{name}")).is_ok() {
                out.push((at.clone(), name.to_owned()));
            }
        }
        declarations(property, at, out);
    }
}

/// A header value as sent: plain, or `=?base64?…?=` around the UTF-8 bytes (padding and
/// alphabet checked); `None` when the wrapped value does not decode.
fn decode_value(value: &str) -> Option<String> {
    let Some(encoded) = value
        .strip_prefix(BASE64_PREFIX)
        .and_then(|v| v.strip_suffix(BASE64_SUFFIX))
    else {
        return Some(value.to_owned());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use serde_json::json;

    use super::*;
    use crate::mcp::protocol::{HEADER_MISMATCH, INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION};

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn request(meta: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": meta}})
    }

    fn envelope(version: &str) -> Value {
        json!({META_PROTOCOL_VERSION: version, META_CLIENT_CAPABILITIES: {}})
    }

    fn code(result: Result<Era, Rejection>) -> i64 {
        let rejection = result.expect_err("refused");
        assert_eq!(rejection.id, json!(7), "answered under the request's id");
        rejection.error.code
    }

    #[test]
    fn legacy_requests_stay_legacy() {
        let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"});
        assert_eq!(
            classify(&HeaderMap::new(), &ping).unwrap(),
            Era::Legacy(DEFAULT_VERSION)
        );
        let h = headers(&[(PROTOCOL_VERSION_HEADER, "2025-11-25")]);
        assert_eq!(classify(&h, &ping).unwrap(), Era::Legacy("2025-11-25"));
        // A legacy header and a matching claim: the claim adds nothing.
        assert_eq!(
            classify(&h, &request(envelope("2025-11-25"))).unwrap(),
            Era::Legacy("2025-11-25")
        );
        let batch = json!([ping]);
        assert_eq!(
            classify(&HeaderMap::new(), &batch).unwrap(),
            Era::Legacy(DEFAULT_VERSION)
        );
    }

    #[test]
    fn modern_requests_need_a_matching_header_and_the_envelope() {
        let h = headers(&[(PROTOCOL_VERSION_HEADER, " 2026-07-28 ")]);
        let modern = request(envelope("2026-07-28"));
        assert_eq!(classify(&h, &modern).unwrap(), Era::Modern("2026-07-28"));
        assert_eq!(code(classify(&HeaderMap::new(), &modern)), HEADER_MISMATCH);
        let old = headers(&[(PROTOCOL_VERSION_HEADER, "2025-11-25")]);
        assert_eq!(code(classify(&old, &modern)), HEADER_MISMATCH);
        assert_eq!(code(classify(&h, &request(json!({})))), INVALID_PARAMS);
        let no_capabilities = json!({META_PROTOCOL_VERSION: "2026-07-28"});
        assert_eq!(
            code(classify(&h, &request(no_capabilities))),
            INVALID_PARAMS
        );
        let bad_info = json!({META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}, META_CLIENT_INFO: 1});
        assert_eq!(code(classify(&h, &request(bad_info))), INVALID_PARAMS);
        let not_a_string = json!({META_PROTOCOL_VERSION: 2026, META_CLIENT_CAPABILITIES: {}});
        assert_eq!(code(classify(&h, &request(not_a_string))), INVALID_PARAMS);
    }

    #[test]
    fn unserved_revisions_name_the_served_ones() {
        let h = headers(&[(PROTOCOL_VERSION_HEADER, "v999")]);
        let rejection = classify(&h, &request(envelope("v999"))).unwrap_err();
        assert_eq!(rejection.error.code, UNSUPPORTED_PROTOCOL_VERSION);
        let data = rejection.error.data.unwrap();
        assert_eq!(data["requested"], "v999");
        assert_eq!(data["supported"].as_array().unwrap().len(), 4);
        let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"});
        assert_eq!(code(classify(&h, &ping)), UNSUPPORTED_PROTOCOL_VERSION);
    }

    #[test]
    fn the_2026_revision_has_no_batches() {
        let h = headers(&[(PROTOCOL_VERSION_HEADER, "2026-07-28")]);
        let batch = json!([request(envelope("2026-07-28"))]);
        let rejection = classify(&h, &batch).unwrap_err();
        assert_eq!(
            (rejection.id, rejection.error.code),
            (Value::Null, INVALID_REQUEST)
        );
    }

    #[test]
    fn standard_headers_mirror_the_body() {
        let call = json!({"name": "echo", "arguments": {}});
        let ok = headers(&[("mcp-method", "tools/call"), ("mcp-name", "  echo ")]);
        assert!(check_headers(&ok, "tools/call", &call).is_ok());
        let encoded = headers(&[
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?ZWNobw==?="),
        ]);
        assert!(check_headers(&encoded, "tools/call", &call).is_ok());
        for bad in [
            headers(&[("mcp-name", "echo")]),
            headers(&[("mcp-method", "TOOLS/CALL"), ("mcp-name", "echo")]),
            headers(&[("mcp-method", "tools/call")]),
            headers(&[("mcp-method", "tools/call"), ("mcp-name", "other")]),
            headers(&[
                ("mcp-method", "tools/call"),
                ("mcp-name", "=?base64?ZWNobw?="),
            ]),
        ] {
            let e = check_headers(&bad, "tools/call", &call).unwrap_err();
            assert_eq!(e.code, HEADER_MISMATCH, "{bad:?}");
        }
        let list = headers(&[("mcp-method", "tools/list")]);
        assert!(check_headers(&list, "tools/list", &json!({})).is_ok());
        // Off the table: no Mcp-Name needed; and a nameless call leaves params to dispatch.
        let call_only = headers(&[("mcp-method", "tools/call")]);
        assert!(check_headers(&call_only, "tools/call", &json!({})).is_ok());
    }

    #[test]
    fn param_headers_mirror_declared_arguments() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "nested": {"type": "object", "properties": {"on": {"type": "boolean", "x-mcp-header": "On"}}},
            "list": {"type": "array", "items": {"type": "string", "x-mcp-header": "Ignored"}},
            "plain": {"type": "string"},
        }});
        let args = json!({"region": "eu west", "count": 3, "nested": {"on": true}, "plain": "x"});
        let check = |pairs: &[(&'static str, &str)], args: &Value| {
            check_param_headers(&headers(pairs), &schema, args)
        };
        let full = [
            ("mcp-param-region", " eu west "),
            ("mcp-param-count", "3"),
            ("mcp-param-on", "true"),
        ];
        assert!(check(&full, &args).is_ok());
        let encoded = [
            ("mcp-param-region", "=?base64?ZXUgd2VzdA==?="),
            ("mcp-param-count", "3"),
            ("mcp-param-on", "true"),
        ];
        assert!(check(&encoded, &args).is_ok());
        // Missing, different, badly encoded, or sent for an absent argument: all -32020.
        for bad in [
            &full[1..],
            &[("mcp-param-region", "eu east"), full[1], full[2]][..],
            &[
                ("mcp-param-region", "=?base64?ZXUgd2VzdA?="),
                full[1],
                full[2],
            ][..],
        ] {
            assert_eq!(
                check(bad, &args).unwrap_err().code,
                HEADER_MISMATCH,
                "{bad:?}"
            );
        }
        let without_count = json!({"region": "eu west", "nested": {"on": true}});
        assert_eq!(
            check(&full, &without_count).unwrap_err().code,
            HEADER_MISMATCH
        );
        assert!(check(&[full[0], full[2]], &without_count).is_ok());
        // Undeclared tools need nothing.
        assert!(check_param_headers(&HeaderMap::new(), &json!({"type": "object"}), &args).is_ok());
    }
}
