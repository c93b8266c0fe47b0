//! The `x402_readiness_check` built-in handler: given a public URL, say whether it is ready to be
//! discovered and paid by x402 and MCP clients, and what to fix if not.
//!
//! The URL is fetched through the SSRF-guarded [`OutboundClient`] (the submitter chooses it), and
//! the answer is recognised as an MCP registry `server.json`, an x402 discovery document, this
//! service's `/ai/manifest`, an endpoint catalog (this service's `/ai/endpoints` and similar), a
//! paid endpoint (an HTTP 402 with x402 requirements to GET or to POST `{}`), or an MCP endpoint
//! (a JSON-RPC answer to `POST initialize`, tried when a GET is refused with 405 or 406 or a
//! JSON-RPC message came back). All requests of one check share a deadline of twice the outbound
//! timeout. Anything that goes wrong upstream is a finding in the report, never an error: only
//! input that is not an http(s) URL is refused.
//!
//! # Layout
//! - `report`: the report shape and the check bookkeeping.
//! - `detect`: which kind of JSON document a response is.
//! - `server_json`, `discovery`, `manifest`, `catalog`: the checks of each document kind.
//! - `payment`: x402 payment requirements, in 402 responses and discovery documents.
//! - `mcp`: the MCP client handshake and its checks.

mod catalog;
mod detect;
mod discovery;
mod manifest;
mod mcp;
mod payment;
mod report;
mod server_json;
#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use http::header::{self, HeaderValue};
use serde_json::{json, Value};
use url::Url;

pub use report::{Check, Kind, ReadinessReport};

use crate::error::{ApiError, ErrorCode};
use crate::net::{FetchedResponse, NetError, OutboundClient, OutboundRequest};
use report::{expected_discovery_urls, on_origin, Findings};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadinessError {
    #[error("url must be an absolute http or https URL")]
    InvalidUrl,
}

impl From<ReadinessError> for ApiError {
    fn from(e: ReadinessError) -> Self {
        match e {
            ReadinessError::InvalidUrl => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                ErrorCode::InvalidUrl,
                e.to_string(),
            ),
        }
    }
}

/// Fetches `url` and reports what it is and whether it is ready.
pub async fn check(client: &OutboundClient, url: &str) -> Result<ReadinessReport, ReadinessError> {
    let target = Url::parse(url.trim()).map_err(|_| ReadinessError::InvalidUrl)?;
    if !matches!(target.scheme(), "http" | "https") || target.host().is_none() {
        return Err(ReadinessError::InvalidUrl);
    }
    let mut f = Findings::default();
    let deadline = Instant::now() + client.timeout() * 2;
    let (kind, final_url) = probe(client, &target, deadline, &mut f).await;
    let ready = kind != Kind::Unknown && f.all_passed();
    if ready {
        f.action(ready_action(kind, &target));
    }
    Ok(ReadinessReport {
        ok: true,
        url: target.to_string(),
        final_url,
        kind,
        ready,
        checks: f.checks,
        expected_discovery_urls: expected_discovery_urls(&target),
        next_actions: f.actions,
    })
}

/// `request` limited to what is left until `deadline` (nothing left: it times out at once).
fn with_deadline(mut request: OutboundRequest<'_>, deadline: Instant) -> OutboundRequest<'_> {
    let left = deadline.saturating_duration_since(Instant::now());
    request.timeout = Some(
        request
            .timeout
            .map_or(left, |t| t.min(left))
            .max(Duration::from_millis(1)),
    );
    request
}

/// GETs the URL and recognises the answer; when it is neither a known document nor a 402, POSTs
/// `{}` in case it is a paid endpoint that only answers POST, and then, when the answers so far
/// suggest MCP, connects as an MCP client. Returns the kind and final URL.
async fn probe(
    client: &OutboundClient,
    target: &Url,
    deadline: Instant,
    f: &mut Findings,
) -> (Kind, Option<String>) {
    let mut get = OutboundRequest::get(target.as_str());
    get.headers
        .insert(header::ACCEPT, HeaderValue::from_static("application/json"));
    let response = match client.fetch(with_deadline(get, deadline)).await {
        Ok(response) => response,
        Err(e) => {
            fetch_failed(&e, f);
            unknown_actions(target, f);
            return (Kind::Unknown, None);
        }
    };
    if response.status == 402 {
        payment::analyze_402("GET", &response, f);
        return (Kind::PaidEndpoint, Some(response.final_url));
    }
    let doc = json_body(&response);
    if (200..300).contains(&response.status) {
        if let Some((kind, doc)) = doc
            .as_ref()
            .and_then(|d| detect::classify(d).map(|k| (k, d)))
        {
            f.pass(
                "fetch",
                format!("GET answered HTTP {} with JSON", response.status),
            );
            detect::analyze(kind, doc, f);
            return (kind, Some(response.final_url));
        }
    }

    // POST where the GET ended up, so a redirect (say http to https) does not turn it into a GET.
    let post = OutboundRequest::post_json(response.final_url.as_str(), json!({}));
    let post = client.fetch(with_deadline(post, deadline)).await;
    if let Some(post) = post.as_ref().ok().filter(|p| p.status == 402) {
        f.pass("fetch", format!("GET answered HTTP {}", response.status));
        payment::analyze_402("POST {}", post, f);
        return (Kind::PaidEndpoint, Some(post.final_url.clone()));
    }
    let post_doc = post.as_ref().ok().and_then(json_body);
    if mcp::worth_probing(&response, doc.as_ref(), post_doc.as_ref()) {
        let url = &response.final_url;
        if let Some(final_url) = mcp::probe(client, url, response.status, deadline, f).await {
            return (Kind::McpEndpoint, Some(final_url));
        }
    }
    unknown_findings(&response, doc.as_ref(), &post, f);
    unknown_actions(target, f);
    (Kind::Unknown, Some(response.final_url))
}

fn json_body(response: &FetchedResponse) -> Option<Value> {
    serde_json::from_slice(&response.body).ok()
}

fn fetch_failed(e: &NetError, f: &mut Findings) {
    let action = match e {
        NetError::SsrfRefused(_) | NetError::HostNotAllowed(_) => {
            "Submit a URL on a public host; loopback, private, link-local and other internal addresses are never fetched"
        }
        NetError::InvalidUrl(_) => "Submit a plain http(s) URL without credentials in it",
        NetError::Timeout(_) => "Make sure the URL answers within a few seconds",
        NetError::TooManyRedirects(_) => "Submit the final URL directly instead of one that redirects several times",
        NetError::ResponseTooLarge(_) => "Serve a smaller document at this URL",
        NetError::NotJson | NetError::Upstream(_) => "Check that the host resolves publicly and accepts HTTPS connections",
    };
    f.fail("fetch", e.to_string(), action);
}

/// Explains why a response that answered was not recognised.
fn unknown_findings(
    get: &FetchedResponse,
    doc: Option<&Value>,
    post: &Result<FetchedResponse, NetError>,
    f: &mut Findings,
) {
    f.pass("fetch", format!("GET answered HTTP {}", get.status));
    let content_type = get
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("none");
    match doc {
        Some(_) => f.pass("json", "the GET response is JSON"),
        None => f.fail(
            "json",
            format!(
                "the GET response is not JSON (content type {})",
                report::quote(content_type)
            ),
            "Serve the metadata as JSON with Content-Type: application/json",
        ),
    }
    let post_note = match post {
        Ok(p) if json_body(p).is_some_and(|v| v.get("jsonrpc").is_some()) => {
            f.action("This looks like an MCP JSON-RPC endpoint, but it did not answer initialize with a JSON-RPC message: serve the Streamable HTTP transport (POST, Accept: application/json, text/event-stream)");
            format!(
                "POST {{}} answered HTTP {} with a JSON-RPC message",
                p.status
            )
        }
        Ok(p) => format!("POST {{}} answered HTTP {}", p.status),
        Err(e) => format!("POST {{}} failed: {e}"),
    };
    f.fail(
        "recognized",
        format!(
            "not an MCP server.json ($schema, name, remotes/packages), an x402 discovery document \
             (x402Version with resources/accepts), a toolhost manifest (service, payment) or an \
             endpoint catalog (endpoints or tools, each named with a URL or price); GET answered \
             HTTP {} and {post_note}, so it is not a paid endpoint either (no HTTP 402), nor an MCP \
             endpoint (no JSON-RPC answer to initialize)",
            get.status
        ),
        "If this is a paid endpoint, answer unpaid requests with HTTP 402 and a base64 PAYMENT-REQUIRED header (x402 v2)",
    );
}

fn unknown_actions(target: &Url, f: &mut Findings) {
    f.action(format!(
        "Submit one of the expected discovery URLs instead, e.g. {} or {}",
        on_origin(target, "/.well-known/x402"),
        on_origin(target, "/.well-known/mcp/server.json"),
    ));
}

fn ready_action(kind: Kind, target: &Url) -> String {
    match kind {
        Kind::PaidEndpoint => format!(
            "List this endpoint in an x402 discovery document at {} so agents can find it",
            on_origin(target, "/.well-known/x402")
        ),
        Kind::McpServerJson => format!(
            "Serve this server.json at {} and publish it to the MCP registry",
            on_origin(target, "/.well-known/mcp/server.json")
        ),
        Kind::McpEndpoint => format!(
            "List this endpoint under remotes (type streamable-http) in a server.json at {} so MCP clients and registries find it",
            on_origin(target, "/.well-known/mcp/server.json")
        ),
        Kind::X402Discovery | Kind::ToolhostManifest | Kind::EndpointCatalog | Kind::Unknown => {
            "Re-run this check after every change to the listed endpoints".to_string()
        }
    }
}
