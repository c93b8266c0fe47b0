//! `ctx.httpGetJson`: outbound GET through the server's SSRF-guarded client
//! (`30_http.js`). The sandbox checks the URL's shape and the headers; the server
//! decides which hosts are reachable.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use deno_core::url::Url;
use deno_core::{op2, OpState};

use super::fetch::HttpPlace;
use super::{answer, check_capability, Capability, HostCall, InvocationClock, OpError};
use crate::HostOp;

deno_core::extension!(toolhost_http, ops = [op_http_get_json]);

const MAX_URL_BYTES: usize = 2048;
const MAX_HEADERS: usize = 32;
const MAX_HEADER_VALUE_BYTES: usize = 4096;
/// Headers the HTTP client owns; a handler setting them could smuggle a second request.
const RESERVED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "proxy-authorization",
];

pub(crate) fn check_url(url: &str) -> Result<(), OpError> {
    if url.len() > MAX_URL_BYTES {
        return Err(OpError::TooLarge(format!(
            "url is longer than {MAX_URL_BYTES} bytes"
        )));
    }
    let parsed = Url::parse(url).map_err(|_| OpError::InvalidArgument("invalid url".to_owned()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(OpError::InvalidArgument(
            "url must be http or https".to_owned(),
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(OpError::InvalidArgument(
            "url must not carry credentials; use headers".to_owned(),
        ));
    }
    Ok(())
}

pub(crate) fn check_headers(headers: &[(String, String)]) -> Result<(), OpError> {
    if headers.len() > MAX_HEADERS {
        return Err(OpError::InvalidArgument(format!(
            "at most {MAX_HEADERS} headers"
        )));
    }
    for (name, value) in headers {
        let token = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token || RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(OpError::InvalidArgument(format!(
                "header `{name}` is not allowed"
            )));
        }
        if value.len() > MAX_HEADER_VALUE_BYTES
            || value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0)
        {
            return Err(OpError::InvalidArgument(format!(
                "header `{name}` has an invalid value"
            )));
        }
    }
    Ok(())
}

/// The timeout is the smallest of the handler's `timeoutMs`, the pool's `max_http_timeout`,
/// and the time left in the invocation.
#[op2]
#[serde]
async fn op_http_get_json(
    state: Rc<RefCell<OpState>>,
    #[string] url: String,
    #[serde] headers: Vec<(String, String)>,
    #[serde] timeout_ms: Option<u64>,
) -> Result<serde_json::Value, OpError> {
    let (call, timeout, limits) = {
        let state = state.borrow();
        let endpoint = check_capability(&state, Capability::HttpGetJson)?;
        let mut timeout = endpoint.max_http_timeout;
        if let Some(ms) = timeout_ms {
            timeout = timeout.min(Duration::from_millis(ms));
        }
        if let Some(clock) = state.try_borrow::<InvocationClock>() {
            timeout = timeout.min(clock.deadline.saturating_duration_since(Instant::now()));
        }
        (HostCall::of(endpoint), timeout, endpoint.fetch)
    };
    check_url(&url)?;
    check_headers(&headers)?;
    // Counted with the call's `fetch`es: at most so many outbound requests at once and in all.
    let _place = HttpPlace::take(&mut state.borrow_mut(), limits)?;
    let op = HostOp::HttpGetJson {
        url,
        headers,
        timeout,
    };
    call.run(op, answer!(Json)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_shape() {
        assert!(check_url("https://api.example.com/v1?q=1").is_ok());
        assert!(check_url("ftp://example.com").is_err());
        assert!(check_url("file:///etc/passwd").is_err());
        assert!(check_url("https://user:pw@example.com").is_err());
        assert!(check_url("not a url").is_err());
    }

    #[test]
    fn header_shape() {
        let ok = vec![("Authorization".to_owned(), "Bearer x".to_owned())];
        assert!(check_headers(&ok).is_ok());
        let smuggle = vec![("x-a".to_owned(), "b\r\nHost: evil".to_owned())];
        assert!(check_headers(&smuggle).is_err());
        let host = vec![("Host".to_owned(), "evil".to_owned())];
        assert!(check_headers(&host).is_err());
    }
}
