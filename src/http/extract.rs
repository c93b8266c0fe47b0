//! Request extractors whose rejections are [`ApiError`]s, so malformed input gets the one error shape.

use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use bytes::Bytes;
use serde::de::DeserializeOwned;

use crate::error::{clip, ApiError, ErrorCode};

/// The client's address: the connection's peer, when the server recorded it (a router driven
/// without a socket, as in some tests, has none).
pub struct ClientAddr(pub Option<std::net::IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientAddr(
            parts
                .extensions
                .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                .map(|info| info.0.ip()),
        ))
    }
}

/// A JSON request body. An empty body reads as `{}` so that schema validation, not the parser,
/// reports missing fields. A non-JSON `Content-Type` gets 415; a body over the limit 413;
/// unparsable JSON 400 `malformed_json`; JSON of the wrong shape 422 `invalid_body`.
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = body_bytes(req, state).await?;
        parse_json(&bytes).map(JsonBody)
    }
}

/// A JSON body like [`JsonBody`], except that a body of the wrong shape is answered with every
/// field at fault at once: 422 `invalid_body` whose `details.errors` lists `{pointer, field,
/// code, message}` per field (an unknown field, a wrong type, a missing required field), so a
/// builder fixes them all in one round trip. For the bodies people write by hand (create and
/// PATCH of an endpoint).
pub struct JsonFields<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonFields<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = body_bytes(req, state).await?;
        let value: serde_json::Value = parse_json(&bytes)?;
        parse_fields(value).map(JsonFields)
    }
}

/// The body's bytes: 415 for a non-JSON `Content-Type`, 413 over the limit; an empty body
/// reads as `{}`.
async fn body_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    if let Some(content_type) = req.headers().get(header::CONTENT_TYPE) {
        if !is_json_content_type(content_type.to_str().unwrap_or_default()) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ErrorCode::UnsupportedMediaType,
                "request body must be application/json",
            ));
        }
    }
    let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                ErrorCode::BodyTooLarge,
                "request body is too large",
            )
        } else {
            ApiError::bad_request(ErrorCode::UnreadableBody, rejection.body_text())
        }
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Bytes::from_static(b"{}"));
    }
    Ok(bytes)
}

/// Most shape errors one answer lists (each found by one more pass over the body).
const MAX_SHAPE_ERRORS: usize = 32;
/// Most bytes of one shape error's message or pointer.
const MAX_SHAPE_MESSAGE: usize = 512;

/// Deserializes `value` into `T`, collecting every top-level field of the wrong shape: each
/// error names its field, which is then set aside so the next pass finds the next one. A
/// missing required field ends the search (serde reports those last, one at a time).
pub fn parse_fields<T: DeserializeOwned>(mut value: serde_json::Value) -> Result<T, ApiError> {
    let mut errors: Vec<serde_json::Value> = Vec::new();
    loop {
        let err = match serde_path_to_error::deserialize::<_, T>(&value) {
            Ok(parsed) if errors.is_empty() => return Ok(parsed),
            Ok(_) => break,
            Err(err) => err,
        };
        let message = err.inner().to_string();
        let mut path: Vec<String> = err
            .path()
            .iter()
            .map(|segment| match segment {
                serde_path_to_error::Segment::Seq { index } => index.to_string(),
                serde_path_to_error::Segment::Map { key } => key.clone(),
                serde_path_to_error::Segment::Enum { variant } => variant.clone(),
                serde_path_to_error::Segment::Unknown => "?".to_owned(),
            })
            .collect();
        // serde names an unknown or missing field in the message, at the object's own path.
        let named = quoted_field(&message);
        let missing = message.starts_with("missing field");
        if let Some(name) = named.filter(|_| missing || message.starts_with("unknown field")) {
            if path.last().map(String::as_str) != Some(name) {
                path.push(name.to_owned());
            }
        }
        let pointer: String = path
            .iter()
            .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
            .collect();
        // A required field set aside for its shape is then missing: already reported.
        // Clipped: serde quotes the value or field at fault, which the caller chose.
        let pointer = clip(&pointer, MAX_SHAPE_MESSAGE);
        if errors.iter().any(|e| e["pointer"] == pointer.as_str()) {
            break;
        }
        let field = path.first().cloned().unwrap_or_default();
        errors.push(serde_json::json!({
            "pointer": pointer,
            "field": clip(&field, MAX_SHAPE_MESSAGE),
            "code": ErrorCode::InvalidBody.as_str(),
            "message": clip(&message, MAX_SHAPE_MESSAGE),
        }));
        let set_aside = !missing
            && value
                .as_object_mut()
                .is_some_and(|object| object.remove(&field).is_some());
        if !set_aside || errors.len() >= MAX_SHAPE_ERRORS {
            break;
        }
    }
    let first = &errors[0];
    let message = match first["field"].as_str() {
        Some(field) if !field.is_empty() => {
            format!("{field}: {}", first["message"].as_str().unwrap_or_default())
        }
        _ => first["message"].as_str().unwrap_or_default().to_owned(),
    };
    let field = first["field"].clone();
    Err(ApiError::unprocessable(ErrorCode::InvalidBody, message)
        .with_details(serde_json::json!({ "field": field, "errors": errors })))
}

/// The first `` `name` `` in a serde message.
fn quoted_field(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

/// A query string parsed into `T`. One that does not parse (`limit=abc`, an unknown value of an
/// enum) is 400 `invalid_query` in the one error shape, not the framework's plain-text answer.
pub struct QueryParams<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for QueryParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(value)| QueryParams(value))
            .map_err(|rejection| {
                ApiError::bad_request(ErrorCode::InvalidQuery, rejection.body_text())
            })
    }
}

/// Parses JSON with the error classification of [`JsonBody`].
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        use serde_json::error::Category;
        // serde_json reports some wrong shapes as syntax errors (an enum given as an array or
        // a number: "expected value"), though the body is valid JSON; found by the endpoint
        // body property test (docs/fuzzing.md). Only JSON that does not parse is malformed.
        let valid_json = || serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok();
        match e.classify() {
            Category::Data => ApiError::unprocessable(ErrorCode::InvalidBody, e.to_string()),
            Category::Syntax if valid_json() => {
                ApiError::unprocessable(ErrorCode::InvalidBody, e.to_string())
            }
            Category::Syntax | Category::Eof | Category::Io => ApiError::bad_request(
                ErrorCode::MalformedJson,
                format!("request body is not valid JSON: {e}"),
            ),
        }
    })
}

/// Whether a `Content-Type` is JSON (`application/json` or `application/*+json`, any case).
/// Without allocating: admission asks it of every request with a body.
pub(crate) fn is_json_content_type(value: &str) -> bool {
    let mime = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .as_bytes();
    let (prefix, suffix) = (b"application/", b"+json");
    mime.eq_ignore_ascii_case(b"application/json")
        || (mime.len() >= prefix.len() + suffix.len()
            && mime[..prefix.len()].eq_ignore_ascii_case(prefix)
            && mime[mime.len() - suffix.len()..].eq_ignore_ascii_case(suffix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types() {
        assert!(is_json_content_type("application/json"));
        assert!(is_json_content_type("application/json; charset=utf-8"));
        assert!(is_json_content_type("Application/JSON; charset=utf-8"));
        assert!(is_json_content_type("application/problem+json"));
        assert!(!is_json_content_type("text/plain"));
        assert!(!is_json_content_type("application/x-www-form-urlencoded"));
    }

    #[test]
    fn classifies_parse_failures() {
        let syntax = parse_json::<serde_json::Value>(b"{nope").unwrap_err();
        assert_eq!(syntax.status, StatusCode::BAD_REQUEST);
        #[derive(serde::Deserialize, Debug)]
        struct Needs {
            #[allow(dead_code)]
            slug: String,
        }
        let shape = parse_json::<Needs>(b"{\"slug\": 5}").unwrap_err();
        assert_eq!(shape.status, StatusCode::UNPROCESSABLE_ENTITY);
        // An enum given as an array is valid JSON of the wrong shape, though serde_json calls
        // it a syntax error.
        #[derive(serde::Deserialize, Debug)]
        #[serde(rename_all = "snake_case")]
        enum Mode {
            Free,
        }
        #[derive(serde::Deserialize, Debug)]
        struct WithMode {
            #[allow(dead_code)]
            mode: Option<Mode>,
        }
        for body in [&b"{\"mode\": []}"[..], b"{\"mode\": 1}", b"{\"mode\": {}}"] {
            let e = parse_json::<WithMode>(body).unwrap_err();
            assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY, "{e:?}");
        }
        let truncated = parse_json::<WithMode>(b"{\"mode\": [").unwrap_err();
        assert_eq!(truncated.status, StatusCode::BAD_REQUEST);
        assert!(parse_json::<WithMode>(b"{\"mode\": \"free\"}").is_ok());
    }
}
