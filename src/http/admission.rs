//! Admission: what a request may cost the server before a handler sees it (issue 43). Agents
//! call without an account, so every wall here holds against an anonymous caller:
//!
//! - **A memory budget for bodies in flight.** A body's bytes are reserved from a server-wide
//!   budget and from its client's share of it *before* they are read (the whole declared
//!   `Content-Length` at once; a chunked body step by step as it grows, up to the body limit),
//!   and so are the bytes its JSON will take once parsed. A body that does not fit is answered
//!   at once: 503 `overloaded` when the server's budget is spent, 429 `rate_limited` when the
//!   client's share is, both with `Retry-After`. The reservation is held until the response
//!   leaves the handler.
//! - **Slow bodies are cut off.** A body must arrive within a deadline and, after a grace
//!   period, at a minimum average rate (nginx's `client_body_timeout`, as hyper's header read
//!   timeout does for the head); else 408 `request_timeout` and the connection closes.
//! - **JSON is bounded before it is parsed.** A byte scan (no allocation) refuses nesting deeper
//!   than the configured depth (400 `malformed_json`) and more values than the configured count
//!   (413 `body_too_large`), so neither the parser nor schema validation meets an unbounded
//!   document.
//! - **Refused bodies are paid for.** Reading, scanning and parsing bodies is most of what an
//!   anonymous request costs the server (`bench/RESULTS.md`), and a hostile client's bodies
//!   are all refused: invalid, unpaid, malformed. So the bytes of every body answered with a
//!   client error (4xx) are charged to its client's bucket after the answer, and a body its
//!   client's bucket cannot cover (its `Content-Length`, up to the burst) is answered 429
//!   `rate_limited` with `Retry-After` at once: not buffered, scanned nor parsed. Its bytes
//!   are dropped, read no faster than that rate per client, so a client that keeps sending
//!   waits for its own bytes. A client whose requests succeed never spends from it, paying
//!   callers included.
//!
//! - **Refusals are paced.** A client answered 429 more often than its pace (after a burst)
//!   has each next 429 held back until the pace allows it, holding its connection: one that
//!   ignores `Retry-After` cannot make the server answer refusals as fast as it can ask.
//!
//! [`Tally`] also limits connections per client in the accept loop (`crate::server`).
//! A client is its address, IPv6 grouped by /64 as for the rate limit.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::BytesMut;
use futures::StreamExt;
use tokio::time::Instant;

use crate::config;
use crate::error::{ApiError, ErrorCode};
use crate::http::extract::is_json_content_type;
use crate::rate_limit::{client_key, too_many, Buckets};

/// Counts of something clients hold (bytes of bodies, connections), bounded in total and per
/// client. The map holds only clients that hold something now.
pub struct Tally {
    total_max: usize,
    per_client_max: usize,
    held: Mutex<(usize, HashMap<IpAddr, usize>)>,
}

/// Why a [`Tally`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The server's total is spent.
    Server,
    /// This client's share is.
    Client,
}

/// What a client holds of a [`Tally`]; given back when dropped.
pub struct Held {
    tally: Arc<Tally>,
    client: IpAddr,
    amount: usize,
}

impl Tally {
    pub fn new(total_max: usize, per_client_max: usize) -> Arc<Self> {
        Arc::new(Self {
            total_max,
            per_client_max,
            held: Mutex::new((0, HashMap::new())),
        })
    }

    /// Takes `amount` for the client at `peer` (grouped by [`client_key`]).
    pub fn take(self: &Arc<Self>, peer: IpAddr, amount: usize) -> Result<Held, Refusal> {
        let mut held = Held {
            tally: self.clone(),
            client: client_key(peer),
            amount: 0,
        };
        held.grow(amount)?;
        Ok(held)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (usize, HashMap<IpAddr, usize>)> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Held {
    /// Takes `more` on top of what is held.
    pub fn grow(&mut self, more: usize) -> Result<(), Refusal> {
        let tally = &self.tally;
        let mut guard = tally.lock();
        let (total, clients) = &mut *guard;
        let mine = clients.get(&self.client).copied().unwrap_or(0);
        if mine.saturating_add(more) > tally.per_client_max {
            return Err(Refusal::Client);
        }
        if total.saturating_add(more) > tally.total_max {
            return Err(Refusal::Server);
        }
        *total += more;
        *clients.entry(self.client).or_insert(0) += more;
        self.amount += more;
        Ok(())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.amount == 0 {
            return;
        }
        let mut guard = self.tally.lock();
        let (total, clients) = &mut *guard;
        *total -= self.amount;
        if let Some(mine) = clients.get_mut(&self.client) {
            *mine -= self.amount;
            if *mine == 0 {
                clients.remove(&self.client);
            }
        }
    }
}

/// The state of the [`admit`] middleware.
#[derive(Clone)]
pub struct Admission {
    limits: config::Admission,
    body_limit: usize,
    budget: Arc<Tally>,
    /// Bytes of bodies answered with a client error, per client; `None`: not limited.
    refused_bytes: Option<Arc<Buckets>>,
    /// Bytes of the bodies refused by `refused_bytes` read to be dropped, per client, at the
    /// same rate: apart, so what is dropped does not change the `Retry-After` of the refusal.
    drained_bytes: Option<Arc<Buckets>>,
    /// 429 answers per client, paced; `None`: not paced.
    rate_limited_answers: Option<Arc<Buckets>>,
}

/// A bucket of bytes per client at the refused-bodies rate; `None` when that is not limited.
fn at_refused_body_rate(admission: &config::Admission) -> Option<Arc<Buckets>> {
    (admission.refused_body_bytes_per_sec > 0).then(|| {
        Arc::new(Buckets::new(
            admission.refused_body_bytes_per_sec as f64,
            admission.refused_body_burst_bytes.max(1) as f64,
        ))
    })
}

/// A chunked body's reservation grows by this much at a time.
const RESERVE_STEP: usize = 64 * 1024;
/// Bytes reserved per JSON value for the parsed document (a `serde_json::Value` and its share
/// of the array or map holding it).
const BYTES_PER_VALUE: usize = 48;

impl Admission {
    pub fn new(limits: &config::HttpLimits) -> Self {
        let admission = limits.admission.clone();
        Self {
            budget: Tally::new(
                admission.body_budget_bytes,
                admission.body_budget_per_client_bytes,
            ),
            refused_bytes: at_refused_body_rate(&admission),
            drained_bytes: at_refused_body_rate(&admission),
            rate_limited_answers: (admission.rate_limited_answers_per_client_per_sec > 0).then(
                || {
                    let pace = f64::from(admission.rate_limited_answers_per_client_per_sec);
                    Arc::new(Buckets::new(pace, 2.0 * pace))
                },
            ),
            limits: admission,
            body_limit: limits.body_bytes,
        }
    }

    /// Whether `client` may send a body of `length` bytes: 429 `rate_limited` when the bytes
    /// of its refused bodies have emptied its bucket below that (or below the burst).
    fn refused_bytes_standing(&self, client: IpAddr, length: usize) -> Result<(), ApiError> {
        let Some(bucket) = &self.refused_bytes else {
            return Ok(());
        };
        bucket
            .take(client, std::time::Instant::now(), length as f64, 0.0)
            .map_err(|wait| {
                too_many(
                    wait,
                    "refused request bodies",
                    "bytes of bodies answered with a client error",
                )
            })
    }

    /// Charges `read` bytes of a body answered with a client error to `client`.
    fn charge_refused(&self, client: IpAddr, read: usize) {
        if let Some(bucket) = &self.refused_bytes {
            bucket.charge(client, std::time::Instant::now(), read as f64);
        }
    }

    /// Charges `read` bytes of a refused body, dropped, to `client`; answers how long until
    /// its drain may read on.
    fn charge_drained(&self, client: IpAddr, read: usize) -> Duration {
        self.drained_bytes
            .as_ref()
            .map_or(Duration::ZERO, |bucket| {
                bucket.charge(client, std::time::Instant::now(), read as f64)
            })
    }
}

/// The answer to a request refused by a [`Tally`]: 503 `overloaded` for the server, 429
/// `rate_limited` for one client over its share, both with `Retry-After`.
pub fn refused(refusal: Refusal, what: &str) -> ApiError {
    let (status, code, message) = match refusal {
        Refusal::Server => (
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Overloaded,
            format!("the server is busy with other {what}; retry later"),
        ),
        Refusal::Client => (
            StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::RateLimited,
            format!("this client has too many {what} in flight; retry after they finish"),
        ),
    };
    ApiError::new(status, code, message).with_retry_after(1)
}

fn too_large(message: String) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::BodyTooLarge,
        message,
    )
}

/// Middleware: reads the request body under the budget, the deadline and the minimum rate,
/// checks a JSON body's shape, and passes the request on with its body in memory, holding the
/// reservation until the handler has answered; then paces the client's 429 answers.
pub(crate) async fn admit(
    State(admission): State<Admission>,
    request: Request,
    next: Next,
) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |ConnectInfo(a)| a.ip());
    let client = client_key(peer);
    let response = admit_body(&admission, peer, client, request, next).await;
    if response.status() == StatusCode::TOO_MANY_REQUESTS {
        if let Some(answers) = &admission.rate_limited_answers {
            let wait = answers.charge(client, std::time::Instant::now(), 1.0);
            tokio::time::sleep(wait).await;
        }
    }
    response
}

/// [`admit`] for one request's body: read within its budget, scanned, then handed on.
async fn admit_body(
    admission: &Admission,
    peer: IpAddr,
    client: IpAddr,
    request: Request,
    next: Next,
) -> Response {
    if request.body().is_end_stream() {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let declared = body
        .size_hint()
        .exact()
        .and_then(|n| usize::try_from(n).ok());
    let limit = admission.body_limit;
    if declared.is_some_and(|n| n > limit) {
        return too_large(format!("request body is larger than {limit} bytes")).into_response();
    }
    let first = declared.unwrap_or(RESERVE_STEP).min(limit);
    if let Err(error) = admission.refused_bytes_standing(client, first) {
        tokio::spawn(discard(admission.clone(), client, body));
        return error.into_response();
    }
    let json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_none_or(|value| is_json_content_type(value.to_str().unwrap_or_default()));
    let (bytes, mut held) = match read(admission, peer, first, body).await {
        Ok(read) => read,
        Err((error, read)) => {
            admission.charge_refused(client, read);
            return error.into_response();
        }
    };
    let length = bytes.len();
    // An answer refusing the body, whose bytes its client is charged for.
    let charged = |error: ApiError| {
        admission.charge_refused(client, length);
        error.into_response()
    };
    if json {
        let values = match scan_json(&bytes, &admission.limits) {
            Ok(values) => values,
            Err(error) => return charged(error),
        };
        if let Err(refusal) = held.grow(values.saturating_mul(BYTES_PER_VALUE)) {
            return charged(refused(refusal, "request bodies"));
        }
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes.freeze())))
        .await;
    drop(held);
    if response.status().is_client_error() {
        admission.charge_refused(client, length);
    }
    response
}

/// The body's bytes and their reservation (`first` bytes at once: all of a declared length,
/// else a first step); the error answer when it does not fit, grows too large, or is too
/// slow, with how many bytes were read before it.
async fn read(
    admission: &Admission,
    peer: IpAddr,
    first: usize,
    body: Body,
) -> Result<(BytesMut, Held), (ApiError, usize)> {
    let limits = &admission.limits;
    let limit = admission.body_limit;
    let mut held = admission
        .budget
        .take(peer, first)
        .map_err(|r| (refused(r, "request bodies"), 0))?;
    let mut bytes = BytesMut::with_capacity(first);
    let mut body = Paced::new(body);
    loop {
        let data = match body.next(limits).await {
            Ok(Some(data)) => data,
            Ok(None) => break,
            Err(error) => return Err((error, bytes.len())),
        };
        let len = bytes.len() + data.len();
        if len > limit {
            let large = too_large(format!("request body is larger than {limit} bytes"));
            return Err((large, bytes.len()));
        }
        if len > held.amount {
            let more = (len - held.amount)
                .max(RESERVE_STEP)
                .min(limit - held.amount);
            if let Err(refusal) = held.grow(more) {
                return Err((refused(refusal, "request bodies"), bytes.len()));
            }
        }
        bytes.extend_from_slice(&data);
    }
    Ok((bytes, held))
}

/// Reads and drops the body of a client refused for the bytes of its refused bodies, as nginx
/// discards one: the client, still sending it, then reads its answer instead of a reset
/// connection, and the server holds one chunk of it at a time. It is read at the client's rate
/// of refused bytes (a bucket of its own, so what is dropped does not move the refusal's
/// `Retry-After`), over all its connections together: a client that keeps sending bodies it
/// has no allowance for waits for its own bytes instead of having the server read them as fast
/// as it sends (on a fast link, the server's CPU spent on bytes only to drop them). Up to the
/// body limit and within the body's deadline; past either the connection closes.
async fn discard(admission: Admission, client: IpAddr, body: Body) {
    // The bucket owes at most a burst: a larger chunk is charged a burst at a time.
    let burst = usize::try_from(admission.limits.refused_body_burst_bytes)
        .unwrap_or(usize::MAX)
        .max(1);
    let mut body = Paced::new(body);
    while let Ok(Some(chunk)) = body.next(&admission.limits).await {
        if body.read > admission.body_limit {
            break;
        }
        for piece in chunk.chunks(burst) {
            tokio::time::sleep(admission.charge_drained(client, piece.len())).await;
        }
    }
}

/// A request body read at the pace admission requires: within the whole body's deadline,
/// and at the minimum average rate once the grace period has passed.
struct Paced {
    body: axum::body::BodyDataStream,
    started: Instant,
    read: usize,
}

impl Paced {
    fn new(body: Body) -> Self {
        Self {
            body: body.into_data_stream(),
            started: Instant::now(),
            read: 0,
        }
    }

    /// The next chunk, `None` at the end; 408 `request_timeout` (closing the connection) when
    /// it is late, 400 `unreadable_body` when the connection fails.
    async fn next(&mut self, limits: &config::Admission) -> Result<Option<bytes::Bytes>, ApiError> {
        // The next bytes are due when the average rate since the start would fall below the
        // minimum (after the grace period), and never after the whole body's deadline.
        let rate = limits.body_min_bytes_per_sec.max(1) as f64;
        let at_rate = limits.body_grace + Duration::from_secs_f64((self.read + 1) as f64 / rate);
        let due = self.started + at_rate.min(limits.body_read_timeout);
        match tokio::time::timeout_at(due, self.body.next()).await {
            Err(_) => Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                ErrorCode::RequestTimeout,
                format!(
                    "request body too slow: it must arrive within {} s, at {} bytes/s at least after {} s",
                    limits.body_read_timeout.as_secs_f64(),
                    limits.body_min_bytes_per_sec,
                    limits.body_grace.as_secs_f64(),
                ),
            )
            .with_header(header::CONNECTION, HeaderValue::from_static("close"))),
            Ok(None) => Ok(None),
            Ok(Some(Err(e))) => Err(ApiError::bad_request(
                ErrorCode::UnreadableBody,
                format!("request body could not be read: {e}"),
            )),
            Ok(Some(Ok(data))) => {
                self.read += data.len();
                Ok(Some(data))
            }
        }
    }
}

/// How many values `bytes` holds as JSON, counted without parsing (containers, and one per
/// `,` and `:` outside strings, so an object's keys count too), refusing nesting deeper than
/// `json_max_depth` or more values than `json_max_values`. Bytes that are not JSON are left
/// to the parser to refuse.
fn scan_json(bytes: &[u8], limits: &config::Admission) -> Result<usize, ApiError> {
    let (mut depth, mut values) = (0usize, 1usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in bytes {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                values += 1;
                if depth > limits.json_max_depth {
                    return Err(ApiError::bad_request(
                        ErrorCode::MalformedJson,
                        format!(
                            "request body nests arrays and objects deeper than {} levels",
                            limits.json_max_depth
                        ),
                    ));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' | b':' => values += 1,
            _ => continue,
        }
        if values > limits.json_max_values {
            return Err(too_large(format!(
                "request body holds more than {} JSON values",
                limits.json_max_values
            )));
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_bounds_the_total_and_each_client_and_gives_back_on_drop() {
        let tally = Tally::new(100, 60);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let held_a = tally.take(a, 50).unwrap();
        assert_eq!(tally.take(a, 20).err(), Some(Refusal::Client));
        let mut held_b = tally.take(b, 40).unwrap();
        assert_eq!(held_b.grow(20).err(), Some(Refusal::Server));
        drop(held_a);
        held_b.grow(20).unwrap();
        drop(held_b);
        assert_eq!(*tally.lock(), (0, HashMap::new()));
        // IPv6 addresses of one /64 share one client's share.
        let v6a: IpAddr = "2001:db8::1".parse().unwrap();
        let v6b: IpAddr = "2001:db8::2".parse().unwrap();
        let _held = tally.take(v6a, 60).unwrap();
        assert_eq!(tally.take(v6b, 1).err(), Some(Refusal::Client));
    }

    #[test]
    fn json_is_scanned_for_depth_and_width() {
        let limits = config::Admission {
            json_max_depth: 3,
            json_max_values: 10,
            ..config::Admission::default()
        };
        assert_eq!(scan_json(b"[0,0,0]", &limits).unwrap(), 4);
        assert_eq!(
            scan_json(br#"{"a":0,"b":"[[[[,,,,,"}"#, &limits).unwrap(),
            5
        );
        assert_eq!(scan_json(br#""\"[[[[""#, &limits).unwrap(), 1);
        let deep = scan_json(b"[[[[]]]]", &limits).unwrap_err();
        assert_eq!(deep.code, ErrorCode::MalformedJson);
        let wide = scan_json(b"[0,0,0,0,0,0,0,0,0,0,0]", &limits).unwrap_err();
        assert_eq!(wide.code, ErrorCode::BodyTooLarge);
    }
}
