//! Turning what the handler returned into a [`HandlerResponse`], enforcing the status range
//! and the response-header allow-list documented on [`HandlerResponse`].

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::invocation::{not_json, RawBody};
use crate::{HandlerResponse, SandboxError, SourceTrace};

const MAX_HEADERS: usize = 16;
const MAX_NAME_BYTES: usize = 64;
const MAX_VALUE_BYTES: usize = 1024;
const ALLOWED_NAMES: &[&str] = &[
    "cache-control",
    "content-language",
    "etag",
    "last-modified",
    "expires",
];
const FORBIDDEN_FRAGMENTS: &[&str] = &[
    "payment",
    "auth",
    "cookie",
    "token",
    "session",
    "secret",
    "signature",
    "csrf",
    "api-key",
    "apikey",
    "forwarded",
    "real-ip",
];
/// `x-` names a handler may not set although they look like plain extension headers: the
/// server's own (a forged `x-receipt-id` would sit beside the real one and mislead clients,
/// MCP included), and those a reverse proxy or a browser acts on (nginx's `X-Accel-Redirect`
/// serves any file the proxy can read, Apache's and lighttpd's `X-Sendfile` too; IIS rewrites
/// on `X-Original-URL`; the browser security switches could be turned off). Matched as
/// prefixes.
const RESERVED_PREFIXES: &[&str] = &[
    "x-request-id",
    "x-receipt",
    "x-toolhost-",
    "x-developer-credit",
    "x-accel-",
    "x-sendfile",
    "x-lighttpd-",
    "x-litespeed-",
    "x-original-url",
    "x-rewrite-url",
    "x-content-type-options",
    "x-frame-options",
    "x-xss-protection",
    "x-permitted-cross-domain-policies",
    "x-dns-prefetch-control",
    "x-download-options",
];
/// Statuses a handler may answer with: 1xx would switch or stall the connection (101 claims an
/// upgrade that never happens), and they are not final answers a client can act on.
const STATUSES: std::ops::RangeInclusive<u16> = 200..=599;

/// What the JS dispatcher (`90_bootstrap.js`) reports for one invocation: an
/// object whose `kind` says which (`"ok"`, `"threw"`, `"tooLarge"`) and whose other fields are
/// those of [`Answer`] or [`Thrown`]. Read by [`crate::isolate`] field by field, not as a serde
/// internally tagged enum, which would first copy the whole object (the body text included)
/// into a buffer of its own.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The handler settled with a value.
    Ok(Answer),
    /// The handler threw.
    Threw(Thrown),
    /// The body's JSON text is longer than the result limit (checked before it leaves JS).
    TooLarge,
}

/// A settled handler's answer; `body` is its JSON text.
#[derive(Debug, Deserialize)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
    /// What the call reported with `ctx.charge`; `null` when it reported nothing.
    #[serde(default)]
    pub(crate) usage: Option<crate::Usage>,
    /// `body` is the text of a web `Response` the handler answered, which the handler wrote
    /// and nothing has checked yet (any other body is `JSON.stringify`'s): text that is not
    /// JSON is then the handler's invalid response, not a fault of ours.
    #[serde(default, rename = "responseText")]
    pub(crate) response_text: bool,
}

impl Answer {
    /// A 200 with no headers and no charge, whose body is `JSON.stringify`'s text.
    pub(crate) fn plain(body: String) -> Answer {
        Answer {
            status: 200,
            headers: Vec::new(),
            body,
            usage: None,
            response_text: false,
        }
    }
}

/// A thrown error: `code` is its string `code` property, if any, `stack` its `stack` (see
/// [`crate::SourceTrace`]), and `status` its integer `status` when that is in [`REFUSALS`],
/// else 0.
#[derive(Debug, Deserialize)]
pub(crate) struct Thrown {
    pub(crate) code: String,
    pub(crate) message: String,
    #[serde(default)]
    pub(crate) stack: String,
    #[serde(default)]
    pub(crate) status: u16,
}

/// Statuses a thrown error may carry to refuse the caller's request (`{status: 400}`); any
/// other status leaves it a handler fault (500).
const REFUSALS: std::ops::RangeInclusive<u16> = 400..=499;

/// Longest error message kept from a handler; the rest is cut.
const MAX_ERROR_MESSAGE_CHARS: usize = 2048;

impl Outcome {
    /// Where a thrown error arose in the handler's source.
    pub(crate) fn trace(&self) -> Option<SourceTrace> {
        match self {
            Outcome::Threw(Thrown { stack, .. }) => SourceTrace::from_stack(stack),
            _ => None,
        }
    }

    /// The response as it leaves the isolate: every check made, the body still its JSON text
    /// (checked to be JSON text; [`HandlerResponse::parsed`] parses it where it is needed).
    pub(crate) fn into_response(
        self,
        max_result_bytes: usize,
    ) -> Result<HandlerResponse<RawBody>, SandboxError> {
        match self {
            Outcome::Ok(Answer {
                status,
                headers,
                body,
                usage,
                response_text,
            }) => {
                if body.len() > max_result_bytes {
                    return Err(result_too_large());
                }
                if !STATUSES.contains(&status) {
                    return Err(SandboxError::InvalidResponse(format!(
                        "status {status} is outside 200..=599"
                    )));
                }
                let headers = validate_headers(headers).map_err(SandboxError::InvalidResponse)?;
                let body = RawValue::from_string(body).map_err(|err| match response_text {
                    true => SandboxError::InvalidResponse(format!(
                        "the handler's Response body is not JSON: {err}"
                    )),
                    false => not_json(err),
                })?;
                Ok(HandlerResponse {
                    status,
                    body,
                    headers,
                    usage,
                    text: None,
                })
            }
            Outcome::Threw(Thrown {
                code,
                message,
                status,
                ..
            }) => {
                let message = truncate_chars(message, MAX_ERROR_MESSAGE_CHARS);
                match code.as_str() {
                    // The platform's own errors stay what they are, whatever `status` a
                    // handler put on them.
                    "capability_denied" => Err(SandboxError::CapabilityDenied(message)),
                    // ctx.respond's own refusal (ops/00_ctx.js).
                    "invalid_handler_response" => Err(SandboxError::InvalidResponse(message)),
                    _ if REFUSALS.contains(&status) => {
                        Err(SandboxError::HandlerRefused { status, message })
                    }
                    _ => Err(SandboxError::HandlerError(message)),
                }
            }
            Outcome::TooLarge => Err(result_too_large()),
        }
    }
}

pub(crate) fn result_too_large() -> SandboxError {
    SandboxError::ResourceLimit("result too large".to_owned())
}

fn truncate_chars(mut text: String, max: usize) -> String {
    if let Some((cut, _)) = text.char_indices().nth(max) {
        text.truncate(cut);
        text.push('…');
    }
    text
}

fn validate_headers(headers: Vec<(String, String)>) -> Result<Vec<(String, String)>, String> {
    if headers.len() > MAX_HEADERS {
        return Err(format!(
            "at most {MAX_HEADERS} response headers are allowed"
        ));
    }
    headers
        .into_iter()
        .map(|(name, value)| {
            let name = name.to_ascii_lowercase();
            if !is_allowed_name(&name) {
                return Err(format!("response header `{name}` is not allowed"));
            }
            if value.len() > MAX_VALUE_BYTES
                || !value
                    .bytes()
                    .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
            {
                return Err(format!("response header `{name}` has an invalid value"));
            }
            Ok((name, value))
        })
        .collect()
}

fn is_allowed_name(name: &str) -> bool {
    let well_formed = !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !well_formed {
        return false;
    }
    if ALLOWED_NAMES.contains(&name) {
        return true;
    }
    name.starts_with("x-")
        && !RESERVED_PREFIXES.iter().any(|p| name.starts_with(p))
        && !FORBIDDEN_FRAGMENTS.iter().any(|f| name.contains(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(status: u16, headers: &[(&str, &str)], body: &str) -> Outcome {
        Outcome::Ok(Answer {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: body.to_owned(),
            usage: None,
            response_text: false,
        })
    }

    #[test]
    fn header_allow_list() {
        for allowed in [
            "cache-control",
            "Content-Language",
            "x-cache",
            "X-Model-Version",
        ] {
            assert!(is_allowed_name(&allowed.to_ascii_lowercase()), "{allowed}");
        }
        for refused in [
            "set-cookie",
            "content-type",
            "location",
            "x-payment-response",
            "x-auth",
            "x-api-key",
            "x-session-id",
            "x-forwarded-for",
            "x-request-id",
            "x-toolhost-receipt",
            "x-receipt-id",
            "x-accel-redirect",
            "x-accel-buffering",
            "x-sendfile",
            "x-lighttpd-send-file",
            "x-original-url",
            "x-frame-options",
            "x-developer-credit",
            "x bad",
            "",
        ] {
            assert!(!is_allowed_name(refused), "{refused}");
        }
    }

    #[test]
    fn response_validation() {
        let resp = ok(201, &[("X-Cache", "hit")], r#"{"a":1}"#)
            .into_response(100)
            .unwrap()
            .parsed()
            .unwrap();
        assert_eq!(resp.status, 201);
        assert_eq!(resp.headers, vec![("x-cache".into(), "hit".into())]);
        assert_eq!(resp.body, serde_json::json!({"a": 1}));

        let err = ok(200, &[("set-cookie", "a=b")], "1").into_response(100);
        assert!(matches!(err, Err(SandboxError::InvalidResponse(m)) if m.contains("set-cookie")));
        let err = ok(200, &[("x-a", "line\r\nbreak")], "1").into_response(100);
        assert!(matches!(err, Err(SandboxError::InvalidResponse(_))));
        for status in [99, 101, 199, 600] {
            let err = ok(status, &[], "1").into_response(100);
            assert!(
                matches!(err, Err(SandboxError::InvalidResponse(_))),
                "{status}"
            );
        }
        let err = ok(200, &[], "\"0123456789\"").into_response(5).map(drop);
        assert_eq!(err, Err(result_too_large()));
    }

    fn not_json_message(
        err: Result<HandlerResponse<impl std::fmt::Debug>, SandboxError>,
    ) -> String {
        match err {
            Err(SandboxError::Internal(m)) if m.starts_with("handler result is not JSON") => m,
            other => panic!("not refused as not JSON: {other:?}"),
        }
    }

    /// The isolate's side checks the text's syntax; the one parse, where the server needs the
    /// value, refuses what `serde_json` does not take as a value (a lone surrogate, which
    /// `JSON.stringify` writes as an escape; nesting past its limit; a number out of range,
    /// which a web Response's body text may hold) with the same error.
    #[test]
    fn a_body_that_is_not_json_is_refused() {
        for text in ["", "{", "undefined", "{\"a\":1} x", "'a'", "[1,]"] {
            not_json_message(ok(200, &[], text).into_response(100));
            // The same text as a web Response's, which the handler wrote: its own error.
            let Outcome::Ok(mut answer) = ok(200, &[], text) else {
                unreachable!()
            };
            answer.response_text = true;
            let err = Outcome::Ok(answer).into_response(100).map(drop);
            assert!(
                matches!(&err, Err(SandboxError::InvalidResponse(m)) if m.starts_with("the handler's Response body is not JSON")),
                "{text:?}: {err:?}"
            );
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for text in ["\"\\ud800\"", "1e400", deep.as_str()] {
            let checked = ok(200, &[], text).into_response(1000).unwrap();
            not_json_message(checked.parsed());
        }
        let fine = ok(200, &[], " [\"\\ud83d\\ude00\", 1e300] ")
            .into_response(100)
            .unwrap()
            .parsed()
            .unwrap();
        assert_eq!(fine.body, serde_json::json!(["😀", 1e300]));
    }

    fn threw(code: &str, message: &str, status: u16) -> Result<(), SandboxError> {
        Outcome::Threw(Thrown {
            code: code.into(),
            message: message.into(),
            stack: String::new(),
            status,
        })
        .into_response(10)
        .map(drop)
    }

    #[test]
    fn thrown_errors_keep_message_only() {
        assert_eq!(
            threw("capability_denied", "kv is not granted", 0),
            Err(SandboxError::CapabilityDenied("kv is not granted".into()))
        );
        let err = threw("", &"x".repeat(5000), 0);
        assert!(
            matches!(err, Err(SandboxError::HandlerError(m)) if m.chars().count() == MAX_ERROR_MESSAGE_CHARS + 1)
        );
    }

    #[test]
    fn a_thrown_4xx_status_is_a_refusal_and_nothing_else_is() {
        let refused = |status, message: &str| {
            Err(SandboxError::HandlerRefused {
                status,
                message: message.into(),
            })
        };
        assert_eq!(threw("", "bad city", 400), refused(400, "bad city"));
        assert_eq!(threw("not_found", "", 499), refused(499, ""));
        let err = threw("", &"x".repeat(5000), 404);
        assert!(
            matches!(err, Err(SandboxError::HandlerRefused { status: 404, message: m }) if m.chars().count() == MAX_ERROR_MESSAGE_CHARS + 1)
        );
        // The glue sends 0 for anything else; Rust does not trust it either.
        for status in [0, 399, 500, 503] {
            assert_eq!(
                threw("", "m", status),
                Err(SandboxError::HandlerError("m".into())),
                "{status}"
            );
        }
        // The platform's own codes win over a status.
        assert_eq!(
            threw("capability_denied", "kv", 400),
            Err(SandboxError::CapabilityDenied("kv".into()))
        );
        assert_eq!(
            threw("invalid_handler_response", "bad header", 400),
            Err(SandboxError::InvalidResponse("bad header".into()))
        );
    }
}
