//! The guarded HTTP client: every request shares one connection pool, and no connection goes to
//! an address that was not checked.
//!
//! Building a `reqwest::Client` per request cost CPU and opened a connection (and a TLS
//! handshake) per request, so one client serves them all. Sharing its pool is safe because every
//! connection is opened to checked addresses only: the client's only DNS lookup is
//! [`GuardedResolver`], which answers only when every address a name resolves to passes
//! [`check_ip`], and the connector connects to exactly the addresses it answered. An attacker's
//! DNS answering differently the next time (DNS rebinding) changes nothing: each new connection
//! resolves again and is checked again. A pooled connection was checked when it was opened and
//! is reused only for the same scheme, host and port. IP-literal hosts skip the resolver, so
//! [`check_url`] checks them before each hop.
//!
//! Besides: no proxy, no cookie store (every caller shares the client) and no automatic
//! redirects; redirects are followed here, each hop checked like the first, and a hop to another
//! origin loses the caller's headers. Timeouts, the host allow-list, size limits and the
//! redirect cap are per request.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{self, HeaderMap, HeaderValue};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::Url;

use super::error::NetError;
use super::guard::{check_ip, check_url, is_private, parse_url, UrlRefusal};
use crate::config::OutboundPolicy;

/// Methods callers may use; the outbound client is for reading JSON APIs, nothing more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutboundMethod {
    Get,
    Post,
}

/// One outbound request. Build with [`OutboundRequest::get`] or [`OutboundRequest::post_json`],
/// then adjust the public fields.
#[derive(Clone, Debug)]
pub struct OutboundRequest<'a> {
    pub method: OutboundMethod,
    pub url: String,
    /// Caller headers. Dropped when a redirect leaves the original origin, so credentials meant
    /// for one host never reach another. `Host` and framing headers are ignored.
    pub headers: HeaderMap,
    /// Sent as `application/json` (POST only).
    pub json_body: Option<serde_json::Value>,
    /// When set, every hop's host must match an entry: exact name or `*.example.com`.
    pub allow_hosts: Option<&'a [String]>,
    /// Per-call deadline; it can only shorten the policy's timeout.
    pub timeout: Option<Duration>,
}

impl<'a> OutboundRequest<'a> {
    pub fn get(url: impl Into<String>) -> Self {
        Self {
            method: OutboundMethod::Get,
            url: url.into(),
            headers: HeaderMap::new(),
            json_body: None,
            allow_hosts: None,
            timeout: None,
        }
    }

    pub fn post_json(url: impl Into<String>, body: serde_json::Value) -> Self {
        Self {
            method: OutboundMethod::Post,
            json_body: Some(body),
            ..Self::get(url)
        }
    }
}

/// A complete response: the body is fully read and within the size limit.
#[derive(Clone, Debug)]
pub struct FetchedResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// The URL that answered, after redirects.
    pub final_url: String,
}

/// A handler's `fetch` request for [`OutboundClient::open`].
#[derive(Debug)]
pub struct StreamRequest<'a> {
    pub method: reqwest::Method,
    pub url: String,
    /// Dropped when a redirect leaves the original origin, as [`OutboundRequest::headers`].
    pub headers: HeaderMap,
    pub body: Option<Bytes>,
    /// `false`: a redirect is the answer (fetch's `manual`).
    pub follow_redirects: bool,
    /// Unlike [`OutboundRequest::allow_hosts`], required: a handler's requests carry its
    /// secrets, so they go to the hosts its admin allowed and nowhere else.
    pub allow_hosts: &'a [String],
    /// When the request and the reading of its body must be done.
    pub deadline: tokio::time::Instant,
}

/// A response whose body is still to be read, from [`OutboundClient::open`].
#[derive(Debug)]
pub struct OpenResponse {
    pub status: u16,
    pub status_text: String,
    /// The URL that answered, after redirects.
    pub url: String,
    pub redirected: bool,
    /// Headers and the unread body.
    pub body: reqwest::Response,
}

/// The outbound client every caller-driven request goes through. Cheap to clone; clones share
/// one connection pool.
#[derive(Clone, Debug)]
pub struct OutboundClient {
    policy: OutboundPolicy,
    http: reqwest::Client,
}

/// Headers a caller may not set: the client owns routing and framing.
const RESERVED_HEADERS: [header::HeaderName; 5] = [
    header::HOST,
    header::CONTENT_LENGTH,
    header::TRANSFER_ENCODING,
    header::CONNECTION,
    header::UPGRADE,
];

const USER_AGENT: &str = concat!("toolhost/", env!("CARGO_PKG_VERSION"));

/// Idle connections kept per host, and for how long. Handlers choose the hosts, so what they
/// leave open after a burst is bounded (reqwest's defaults keep any number for 90 s).
const POOL_IDLE_PER_HOST: usize = 16;
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

impl OutboundClient {
    /// One pool per client rather than per process: the resolver applies this policy's
    /// `allow_loopback`, and a connection checked under one policy must not serve another. The
    /// service builds one client and clones it.
    pub fn new(policy: &OutboundPolicy) -> Self {
        let resolver = GuardedResolver {
            allow_loopback: policy.allow_loopback,
            allow_private: policy.allow_private,
        };
        let http = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .referer(false)
            .user_agent(USER_AGENT)
            .dns_resolver(Arc::new(resolver))
            .pool_max_idle_per_host(POOL_IDLE_PER_HOST)
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .build()
            // Only a TLS back end that cannot start fails here (reqwest's `Client::new` panics
            // then too); nothing in this configuration depends on input.
            .expect("the outbound HTTP client builds");
        Self {
            policy: policy.clone(),
            http,
        }
    }

    /// The longest one request may take (a request's own `timeout` can only shorten it).
    pub fn timeout(&self) -> Duration {
        self.policy.timeout
    }

    /// Sends `req`, following up to `max_redirects` redirects. Any HTTP status is a success here;
    /// callers decide what a 4xx or 402 means.
    pub async fn fetch(&self, req: OutboundRequest<'_>) -> Result<FetchedResponse, NetError> {
        let deadline = req
            .timeout
            .map_or(self.policy.timeout, |t| t.min(self.policy.timeout));
        match tokio::time::timeout(deadline, self.fetch_hops(req)).await {
            Ok(result) => result,
            Err(_) => Err(NetError::Timeout(deadline.as_millis())),
        }
    }

    /// GETs `url` and parses a 2xx JSON body. A non-2xx status is `upstream_error`.
    pub async fn get_json(
        &self,
        url: &str,
        headers: HeaderMap,
        timeout: Option<Duration>,
        allow_hosts: Option<&[String]>,
    ) -> Result<serde_json::Value, NetError> {
        let mut req = OutboundRequest::get(url);
        req.headers = headers;
        req.headers
            .entry(header::ACCEPT)
            .or_insert(HeaderValue::from_static("application/json"));
        req.timeout = timeout;
        req.allow_hosts = allow_hosts;
        let response = self.fetch(req).await?;
        if !(200..300).contains(&response.status) {
            return Err(NetError::Upstream(format!(
                "the upstream answered HTTP {}",
                response.status
            )));
        }
        serde_json::from_slice(&response.body).map_err(|_| NetError::NotJson)
    }

    async fn fetch_hops(&self, req: OutboundRequest<'_>) -> Result<FetchedResponse, NetError> {
        let mut url = parse_url(&req.url)?;
        let mut method = req.method;
        let mut body = match method {
            OutboundMethod::Post => req.json_body,
            OutboundMethod::Get => None,
        };
        let mut headers = req.headers;
        for name in &RESERVED_HEADERS {
            headers.remove(name);
        }
        let mut redirects = 0;
        loop {
            self.check_destination(&url, req.allow_hosts)?;
            let response = self
                .send_once(&url, method, &headers, body.as_ref())
                .await?;
            let Some(next) = redirect_target(&url, &response) else {
                return self.read_body(url, response).await;
            };
            if redirects >= self.policy.max_redirects {
                return Err(NetError::TooManyRedirects(self.policy.max_redirects));
            }
            redirects += 1;
            let status = response.status().as_u16();
            if status == 303 || (matches!(status, 301 | 302) && method == OutboundMethod::Post) {
                method = OutboundMethod::Get;
                body = None;
            }
            if next.origin() != url.origin() {
                headers.clear();
            }
            url = next;
        }
    }

    /// The checks before each hop: the URL's form, the host allow-list, and an IP-literal host's
    /// address (such a host never reaches the resolver). A host name's addresses are checked by
    /// [`GuardedResolver`] whenever a connection to it is opened.
    fn check_destination(&self, url: &Url, allow_hosts: Option<&[String]>) -> Result<(), NetError> {
        match check_url(url, allow_hosts, self.policy.allow_loopback) {
            // Dev only: an IP-literal host in a private network.
            Err(UrlRefusal::Address(_))
                if self.policy.allow_private && literal_ip(url).is_some_and(is_private) =>
            {
                Ok(())
            }
            other => other.map(drop).map_err(NetError::from),
        }
    }

    async fn send_once(
        &self,
        url: &Url,
        method: OutboundMethod,
        headers: &HeaderMap,
        body: Option<&serde_json::Value>,
    ) -> Result<reqwest::Response, NetError> {
        let mut request = match method {
            OutboundMethod::Get => self.http.get(url.clone()),
            OutboundMethod::Post => self.http.post(url.clone()),
        };
        request = request.headers(headers.clone());
        if let Some(json) = body {
            request = request.json(json);
        }
        request.send().await.map_err(send_error)
    }

    /// Sends a handler's `fetch` request and answers with the response whose body is not read
    /// yet: every hop's host must be on `allow_hosts` and resolve to public addresses. The
    /// caller reads the body (and bounds its time and size).
    pub async fn open(&self, req: StreamRequest<'_>) -> Result<OpenResponse, NetError> {
        let deadline = req.deadline;
        let within = deadline.saturating_duration_since(tokio::time::Instant::now());
        match tokio::time::timeout_at(deadline, self.open_hops(req)).await {
            Ok(result) => result,
            Err(_) => Err(NetError::Timeout(within.as_millis())),
        }
    }

    async fn open_hops(&self, req: StreamRequest<'_>) -> Result<OpenResponse, NetError> {
        let mut url = parse_url(&req.url)?;
        let mut method = req.method;
        let mut body = req.body;
        let mut headers = req.headers;
        for name in &RESERVED_HEADERS {
            headers.remove(name);
        }
        let mut redirects = 0;
        loop {
            self.check_destination(&url, Some(req.allow_hosts))?;
            let mut request = self
                .http
                .request(method.clone(), url.clone())
                .headers(headers.clone());
            if let Some(body) = &body {
                request = request.body(body.clone());
            }
            let response = request.send().await.map_err(send_error)?;
            let next = req
                .follow_redirects
                .then(|| redirect_target(&url, &response))
                .flatten();
            let Some(next) = next else {
                let status = response.status();
                return Ok(OpenResponse {
                    status: status.as_u16(),
                    status_text: status.canonical_reason().unwrap_or_default().to_owned(),
                    url: url.to_string(),
                    redirected: redirects > 0,
                    body: response,
                });
            };
            if redirects >= self.policy.max_redirects {
                return Err(NetError::TooManyRedirects(self.policy.max_redirects));
            }
            redirects += 1;
            let status = response.status().as_u16();
            // As fetch does: 303 becomes GET (but HEAD), and so does a POST after 301/302.
            if (status == 303 && method != reqwest::Method::HEAD)
                || (matches!(status, 301 | 302) && method == reqwest::Method::POST)
            {
                method = reqwest::Method::GET;
                body = None;
                headers.remove(header::CONTENT_TYPE);
            }
            if next.origin() != url.origin() {
                headers.clear();
            }
            url = next;
        }
    }

    /// Streams the body, stopping as soon as it passes the size limit.
    async fn read_body(
        &self,
        url: Url,
        mut response: reqwest::Response,
    ) -> Result<FetchedResponse, NetError> {
        let limit = self.policy.max_response_bytes;
        if response
            .content_length()
            .is_some_and(|len| len > limit as u64)
        {
            return Err(NetError::ResponseTooLarge(limit));
        }
        let status = response.status().as_u16();
        let headers = std::mem::take(response.headers_mut());
        let mut body = BytesMut::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|_| NetError::Upstream("the response body could not be read".into()))?
        {
            if body.len() + chunk.len() > limit {
                return Err(NetError::ResponseTooLarge(limit));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(FetchedResponse {
            status,
            headers,
            body: body.freeze(),
            final_url: url.to_string(),
        })
    }
}

/// The address of an IP-literal host (`http://10.0.0.5/`, `http://[fd00::1]/`).
fn literal_ip(url: &Url) -> Option<std::net::IpAddr> {
    match url.host()? {
        url::Host::Ipv4(ip) => Some(ip.into()),
        url::Host::Ipv6(ip) => Some(ip.into()),
        url::Host::Domain(_) => None,
    }
}

/// The shared client's DNS lookups. A name resolves only when every address it has passes
/// [`check_ip`]; one refused address refuses the name (as before the client was shared), so an
/// answer mixing public and internal addresses cannot lead a connection attempt to an internal
/// one. The refusal is the [`NetError`] the caller gets (see [`send_error`]).
struct GuardedResolver {
    allow_loopback: bool,
    /// Dev only: private networks too (see [`is_private`]).
    allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let (allow_loopback, allow_private) = (self.allow_loopback, self.allow_private);
        Box::pin(async move {
            // Port 0: the connector puts the URL's port on every address.
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0))
                .await
                .map_err(|_| unresolved())?
                .collect();
            if addrs.is_empty() {
                return Err(unresolved().into());
            }
            for addr in &addrs {
                let ip = addr.ip();
                if !(allow_private && is_private(ip)) {
                    check_ip(ip, allow_loopback).map_err(NetError::SsrfRefused)?;
                }
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

fn unresolved() -> NetError {
    NetError::Upstream("the host name could not be resolved".into())
}

/// The caller's error for a request that got no response: the resolver's own [`NetError`] when
/// it refused the host (reqwest wraps it in its connect error), else words that do not repeat a
/// lower-level error's text.
fn send_error(e: reqwest::Error) -> NetError {
    let resolver_error =
        std::iter::successors(std::error::Error::source(&e), |cause| cause.source())
            .find_map(|cause| cause.downcast_ref::<NetError>());
    if let Some(refusal) = resolver_error {
        refusal.clone()
    } else if e.is_connect() {
        NetError::Upstream("could not connect to the host".into())
    } else {
        NetError::Upstream("the request failed".into())
    }
}

/// The next URL when `response` is a redirect with a usable `Location`; otherwise `None` and the
/// response is the final one.
fn redirect_target(current: &Url, response: &reqwest::Response) -> Option<Url> {
    if !matches!(response.status().as_u16(), 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let location = response.headers().get(header::LOCATION)?.to_str().ok()?;
    current.join(location).ok()
}
