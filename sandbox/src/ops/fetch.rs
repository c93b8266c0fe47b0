//! `fetch`: any method, headers and body to the endpoint's allowed hosts, through the server's
//! SSRF-guarded client (`70_fetch.js` builds the standard `Response`).
//!
//! A request is known to the isolate by a key its glue picks; the server's handle of the
//! response body never reaches JavaScript. The body stays with the host and is pulled a chunk
//! at a time (`op_fetch_read`) as the handler's stream asks for it, so a large response is
//! never held whole. What a call may do is counted here, per call: requests in progress at once
//! and in all ([`FetchLimits`]); each request's time is what is left of the call, and whatever
//! a call leaves open (a request in flight, a body not read to its end) is cancelled when it
//! ends ([`end_call`]). Every check is made again by the server for a worker's requests
//! (`process/host_ops.rs`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Instant;

use deno_core::{op2, CancelFuture, CancelHandle, OpState};
use serde::{Deserialize, Serialize};

use super::{answer, check_capability, http, Capability, HostCall, InvocationClock, OpError};
use crate::{FetchLimits, FetchRequest, HostError, HostOp};

deno_core::extension!(
    toolhost_fetch,
    ops = [op_fetch_start, op_fetch_read, op_fetch_cancel]
);

/// Header names the client owns (framing, routing, connection management, proxies): a handler
/// setting one is refused with `invalid_argument` rather than silently changed, so what it
/// sends is what it wrote. `Proxy-*` and `Sec-*` are refused as prefixes.
const FORBIDDEN_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "expect",
    "http2-settings",
];

/// Methods fetch itself forbids.
const FORBIDDEN_METHODS: &[&str] = &["CONNECT", "TRACE", "TRACK"];

/// At most this many headers, as for `ctx.httpGetJson` but roomier (content types, auth,
/// tracing headers of API clients).
const MAX_HEADERS: usize = 64;

/// The checks on a request before it is sent, the same in the isolate and in the server.
pub(crate) fn check_request(request: &FetchRequest, limits: &FetchLimits) -> Result<(), OpError> {
    http::check_url(&request.url)?;
    let method = request.method.as_str();
    if method.is_empty()
        || method.len() > 32
        || !method
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    {
        return Err(OpError::InvalidArgument(format!(
            "`{method}` is not a valid HTTP method"
        )));
    }
    if FORBIDDEN_METHODS.contains(&method.to_ascii_uppercase().as_str()) {
        return Err(OpError::InvalidArgument(format!(
            "the `{method}` method is not allowed"
        )));
    }
    if request.headers.len() > MAX_HEADERS {
        return Err(OpError::InvalidArgument(format!(
            "at most {MAX_HEADERS} headers"
        )));
    }
    for chunk in request.headers.chunks(32) {
        http::check_headers(chunk)?;
    }
    for (name, _) in &request.headers {
        let lower = name.to_ascii_lowercase();
        if FORBIDDEN_HEADERS.contains(&lower.as_str())
            || lower.starts_with("proxy-")
            || lower.starts_with("sec-")
        {
            return Err(OpError::InvalidArgument(format!(
                "header `{name}` is not allowed"
            )));
        }
    }
    let body = request.body.as_ref().map_or(0, Vec::len);
    if body > limits.max_request_body_bytes {
        return Err(OpError::TooLarge(format!(
            "the request body is larger than {} bytes",
            limits.max_request_body_bytes
        )));
    }
    Ok(())
}

/// The outbound requests of the running call: its `fetch`es by the key the glue gave each,
/// and its `ctx.httpGetJson`s in flight, counted together against [`FetchLimits`].
#[derive(Default)]
pub(crate) struct FetchCall {
    requests: HashMap<u32, Open>,
    /// `ctx.httpGetJson` requests in flight. Shared with each request's op, which gives its
    /// place back when it ends, into this call's count even if another call has begun since.
    http_in_flight: Rc<std::cell::Cell<usize>>,
    /// Requests this call started, ended or not.
    started: usize,
}

impl FetchCall {
    /// Takes a place for one more outbound request of the call, or says which limit it is
    /// over.
    fn admit(&mut self, limits: &FetchLimits) -> Result<(), OpError> {
        if self.requests.len() + self.http_in_flight.get() >= limits.max_concurrent {
            return Err(OpError::TooLarge(format!(
                "at most {} outbound requests (fetch and httpGetJson) of one call at once",
                limits.max_concurrent
            )));
        }
        if self.started >= limits.max_per_call {
            return Err(OpError::TooLarge(format!(
                "at most {} outbound requests (fetch and httpGetJson) in one call",
                limits.max_per_call
            )));
        }
        self.started += 1;
        Ok(())
    }
}

/// A `ctx.httpGetJson` request's place among its call's outbound requests: taken before it is
/// sent, given back when it ends.
pub(crate) struct HttpPlace(Rc<std::cell::Cell<usize>>);

impl HttpPlace {
    /// Takes a place for a `ctx.httpGetJson` of the running call, under the endpoint's
    /// `limits`.
    pub(crate) fn take(state: &mut OpState, limits: FetchLimits) -> Result<Self, OpError> {
        let call = state
            .try_borrow_mut::<FetchCall>()
            .ok_or_else(|| OpError::Internal("httpGetJson outside a call".to_owned()))?;
        call.admit(&limits)?;
        let in_flight = call.http_in_flight.clone();
        in_flight.set(in_flight.get() + 1);
        Ok(HttpPlace(in_flight))
    }
}

impl Drop for HttpPlace {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

/// One request of the call: in flight until its head arrives, then its body until read out.
struct Open {
    /// Cancels the op waiting on the host (the start, or a read).
    cancel: Rc<CancelHandle>,
    /// The host's handle of the body, once the head is there.
    body: Option<u64>,
    /// Body bytes read so far.
    received: usize,
}

/// Starts a call's count afresh (the previous call's requests were ended by [`end_call`]).
pub(crate) fn begin_call(state: &mut OpState) {
    state.put(FetchCall::default());
}

/// Cancels what the call left open: requests in flight are dropped (in-process, that drops the
/// host's connection; a worker's request is bounded by the call's time on the server) and
/// bodies not read to their end are released on the host.
pub(crate) fn end_call(state: &mut OpState) {
    let Some(call) = state.try_take::<FetchCall>() else {
        return;
    };
    let host = state.try_borrow::<super::EndpointState>().map(HostCall::of);
    for open in call.requests.into_values() {
        open.cancel.cancel();
        if let (Some(id), Some(host)) = (open.body, &host) {
            release(host, id);
        }
    }
}

/// Tells the host to drop a body. [`HostOp::FetchCancel`] acts when called; its future only
/// reports, so it is not awaited.
fn release(host: &HostCall, id: u64) {
    host.send(HostOp::FetchCancel { id });
}

/// The request as the glue passes it; the body comes as bytes beside it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FetchArgs {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    /// `follow`, `manual` or `error`.
    redirect: String,
}

/// The response head as the glue gets it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Head {
    status: u16,
    status_text: String,
    headers: Vec<(String, String)>,
    url: String,
    redirected: bool,
}

/// Sends the request and resolves with the response head once it arrives.
#[op2]
#[serde]
async fn op_fetch_start(
    state: Rc<RefCell<OpState>>,
    #[smi] key: u32,
    #[serde] args: FetchArgs,
    #[buffer(copy)] body: Vec<u8>,
    has_body: bool,
) -> Result<Head, OpError> {
    let redirect_error = match args.redirect.as_str() {
        "follow" | "manual" => false,
        "error" => true,
        other => {
            return Err(OpError::InvalidArgument(format!(
                "`{other}` is not a redirect mode"
            )))
        }
    };
    let (host, cancel, request) = {
        let mut state = state.borrow_mut();
        let endpoint = check_capability(&state, Capability::Fetch)?;
        let host = HostCall::of(endpoint);
        let limits = endpoint.fetch;
        let left = state
            .try_borrow::<InvocationClock>()
            .map(|clock| clock.deadline.saturating_duration_since(Instant::now()))
            .unwrap_or(endpoint.max_http_timeout);
        let request = FetchRequest {
            method: normalize_method(args.method),
            url: args.url,
            headers: args.headers,
            body: has_body.then_some(body),
            follow_redirects: args.redirect == "follow",
            timeout: left,
            max_response_bytes: limits.max_response_body_bytes,
        };
        check_request(&request, &limits)?;
        let call = state
            .try_borrow_mut::<FetchCall>()
            .ok_or_else(|| OpError::Internal("fetch outside a call".to_owned()))?;
        if call.requests.contains_key(&key) {
            return Err(OpError::InvalidArgument("a request key in use".to_owned()));
        }
        call.admit(&limits)?;
        let cancel = Rc::new(CancelHandle::new());
        call.requests.insert(
            key,
            Open {
                cancel: cancel.clone(),
                body: None,
                received: 0,
            },
        );
        (host, cancel, request)
    };
    let start = host.run(HostOp::FetchStart { request }, answer!(Head));
    let started = start.or_cancel(cancel).await;
    let mut state = state.borrow_mut();
    let call = state.try_borrow_mut::<FetchCall>();
    let head = match started {
        Ok(Ok(head)) => head,
        Ok(Err(err)) => {
            if let Some(call) = call {
                call.requests.remove(&key);
            }
            return Err(err);
        }
        Err(_canceled) => return Err(aborted()),
    };
    // A call that ended meanwhile (or a request cancelled) does not keep the body.
    let Some(open) = call.and_then(|call| call.requests.get_mut(&key)) else {
        release(&host, head.id);
        return Err(aborted());
    };
    let redirect = matches!(head.status, 301 | 302 | 303 | 307 | 308);
    if redirect_error && redirect {
        release(&host, head.id);
        end_request(&mut state, key);
        return Err(OpError::InvalidArgument(
            "the response is a redirect and the redirect mode is `error`".to_owned(),
        ));
    }
    open.body = Some(head.id);
    Ok(Head {
        status: head.status,
        status_text: head.status_text,
        headers: head.headers,
        url: head.url,
        redirected: head.redirected,
    })
}

/// The next chunk of the body; an empty buffer at its end.
#[op2]
#[buffer]
async fn op_fetch_read(state: Rc<RefCell<OpState>>, #[smi] key: u32) -> Result<Vec<u8>, OpError> {
    let (host, id, cancel, limit) = {
        let mut state = state.borrow_mut();
        let endpoint = check_capability(&state, Capability::Fetch)?;
        let host = HostCall::of(endpoint);
        let limit = endpoint.fetch.max_response_body_bytes;
        let open = state
            .try_borrow_mut::<FetchCall>()
            .and_then(|call| call.requests.get(&key))
            .ok_or_else(|| OpError::InvalidArgument("no such response".to_owned()))?;
        let id = open
            .body
            .ok_or_else(|| OpError::InvalidArgument("no such response".to_owned()))?;
        (host, id, open.cancel.clone(), limit)
    };
    loop {
        let read = host.run(HostOp::FetchRead { id }, answer!(Chunk));
        let read = read.or_cancel(cancel.clone()).await;
        let mut state = state.borrow_mut();
        let chunk = match read {
            Err(_canceled) => return Err(aborted()),
            Ok(Err(err)) => {
                end_request(&mut state, key);
                return Err(err);
            }
            Ok(Ok(None)) => {
                end_request(&mut state, key);
                return Ok(Vec::new());
            }
            Ok(Ok(Some(chunk))) => chunk,
        };
        if chunk.is_empty() {
            continue;
        }
        let Some(open) = state
            .try_borrow_mut::<FetchCall>()
            .and_then(|call| call.requests.get_mut(&key))
        else {
            return Err(aborted());
        };
        open.received += chunk.len();
        if open.received > limit {
            release(&host, id);
            end_request(&mut state, key);
            return Err(OpError::Host(HostError::new(
                "response_too_large",
                format!("the response body is larger than {limit} bytes"),
            )));
        }
        return Ok(chunk);
    }
}

/// Cancels a request: its start or read in progress rejects, and its body is released.
#[op2(fast)]
fn op_fetch_cancel(state: &mut OpState, #[smi] key: u32) -> Result<(), OpError> {
    let endpoint = check_capability(state, Capability::Fetch)?;
    let host = HostCall::of(endpoint);
    let Some(open) = state
        .try_borrow_mut::<FetchCall>()
        .and_then(|call| call.requests.remove(&key))
    else {
        return Ok(());
    };
    open.cancel.cancel();
    if let Some(id) = open.body {
        release(&host, id);
    }
    Ok(())
}

/// Forgets a request whose body ended (read out, failed, refused).
fn end_request(state: &mut OpState, key: u32) {
    if let Some(call) = state.try_borrow_mut::<FetchCall>() {
        call.requests.remove(&key);
    }
}

/// The standard methods upper-cased as fetch normalizes them; others kept as written.
fn normalize_method(method: String) -> String {
    const STANDARD: &[&str] = &["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"];
    let upper = method.to_ascii_uppercase();
    if STANDARD.contains(&upper.as_str()) {
        upper
    } else {
        method
    }
}

fn aborted() -> OpError {
    OpError::Host(HostError::new("aborted", "the request was cancelled"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn request(method: &str, url: &str, headers: &[(&str, &str)]) -> FetchRequest {
        FetchRequest {
            method: method.to_owned(),
            url: url.to_owned(),
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            body: None,
            follow_redirects: true,
            timeout: Duration::from_secs(1),
            max_response_bytes: 1024,
        }
    }

    #[test]
    fn requests_are_checked_before_they_leave() {
        let limits = FetchLimits::default();
        let ok = request("PATCH", "https://api.example.com/x", &[("x-key", "1")]);
        assert!(check_request(&ok, &limits).is_ok());
        for (method, url, headers) in [
            ("GET", "https://user:pw@api.example.com/", &[][..]),
            ("GET", "file:///etc/passwd", &[]),
            ("CONNECT", "https://api.example.com/", &[]),
            ("trace", "https://api.example.com/", &[]),
            ("GE T", "https://api.example.com/", &[]),
            ("GET", "https://api.example.com/", &[("Host", "evil")]),
            (
                "GET",
                "https://api.example.com/",
                &[("Content-Length", "1")],
            ),
            (
                "GET",
                "https://api.example.com/",
                &[("Transfer-Encoding", "x")],
            ),
            (
                "GET",
                "https://api.example.com/",
                &[("Connection", "close")],
            ),
            (
                "GET",
                "https://api.example.com/",
                &[("Proxy-Authorization", "x")],
            ),
            (
                "GET",
                "https://api.example.com/",
                &[("x-a", "b\r\nHost: evil")],
            ),
        ] {
            let refused = request(method, url, headers);
            assert!(
                check_request(&refused, &limits).is_err(),
                "{method} {url} {headers:?}"
            );
        }
        let mut big = ok.clone();
        big.body = Some(vec![0; limits.max_request_body_bytes + 1]);
        assert!(matches!(
            check_request(&big, &limits),
            Err(OpError::TooLarge(_))
        ));
        assert_eq!(normalize_method("patch".into()), "PATCH");
        assert_eq!(normalize_method("Custom".into()), "Custom");
    }
}
