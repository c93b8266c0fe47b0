//! toolhost's own discovery documents, the ones its readiness check tells others to publish:
//! `GET /.well-known/x402` (the paid resources with their x402 requirements) and
//! `GET /.well-known/mcp/server.json` (an MCP registry `server.json` for `/ai/mcp`).

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use crate::app::AppState;
use crate::catalog::Status;
use crate::payments::{Offer, ResourceInfo};

/// The MCP registry schema the `server.json` follows.
const SERVER_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json";

/// x402 discovery: every listed, active paid endpoint and builder registration, each with the
/// exact v2 requirements its unpaid call answers with (the same [`Offer`] the 402 is built from).
#[utoipa::path(get, path = "/.well-known/x402", tag = "catalog",
    responses((status = 200, description = "x402 discovery document: `{x402Version: 2, resources: [{resource, type, method, description, mimeType, accepts}]}`", body = Object)))]
pub async fn x402_discovery(State(app): State<AppState>) -> Json<Value> {
    let payment = &app.config.payment;
    let item = |url: String, description: String, price, method: &str| {
        let offer = Offer::new(
            payment,
            &app.payments.pay_to,
            ResourceInfo {
                url: url.clone(),
                description: description.clone(),
                mime_type: "application/json".into(),
            },
            price,
        );
        json!({
            "resource": url,
            "type": "http",
            "method": method,
            "description": description,
            "mimeType": "application/json",
            "accepts": offer.accepts.iter().map(|(_, r)| r).collect::<Vec<_>>(),
        })
    };
    let mut resources: Vec<Value> = app
        .catalog
        .all()
        .iter()
        .map(|c| &c.endpoint)
        // Paused endpoints answer 503, not 402, and unlisted ones are not found: neither is a
        // resource an agent can pay for now.
        .filter(|e| e.is_paid() && e.is_listed() && e.status == Status::Active)
        .map(|e| item(app.urls.tool(&e.slug), e.title.clone(), e.price_usd, "POST"))
        .collect();
    resources.push(item(
        app.urls.at("/ai/builders/register"),
        "Builder registration".into(),
        payment.builder_registration_fee,
        "POST",
    ));
    Json(json!({
        "x402Version": 2,
        "service": {"name": "toolhost", "manifest": app.urls.at("/ai/manifest")},
        "resources": resources,
    }))
}

/// MCP registry `server.json` for this service's `/ai/mcp` (Streamable HTTP).
#[utoipa::path(get, path = "/.well-known/mcp/server.json", tag = "catalog",
    responses((status = 200, description = "MCP registry server.json: `$schema`, reverse-DNS `name`, `version`, `description`, `remotes: [{type: streamable-http, url}]`", body = Object)))]
pub async fn mcp_server_json(State(app): State<AppState>) -> Json<Value> {
    Json(json!({
        "$schema": SERVER_SCHEMA,
        "name": format!("{}/{}", reverse_dns(app.urls.base()), app.config.catalog_namespace),
        "version": env!("CARGO_PKG_VERSION"),
        "description": "Paid AI/API tools: discover, quote, pay with x402 and call, with a signed receipt for every paid call.",
        "websiteUrl": app.urls.base(),
        "remotes": [{"type": "streamable-http", "url": app.urls.at("/ai/mcp")}],
    }))
}

/// The registry wants `<reverse-dns namespace>/<name>`: the base URL's host reversed
/// (`tools.example.com` → `com.example.tools`). A host that is no dotted DNS name (an IP
/// address, `localhost`) gives `local.toolhost`: such a server is not public anyway.
fn reverse_dns(base: &str) -> String {
    let host = url::Url::parse(base)
        .ok()
        .and_then(|u| u.domain().map(str::to_ascii_lowercase));
    match host.filter(|h| h.contains('.')) {
        Some(host) => host.rsplit('.').collect::<Vec<_>>().join("."),
        None => "local.toolhost".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::reverse_dns;

    #[test]
    fn namespaces_reverse_the_host() {
        assert_eq!(
            reverse_dns("https://tools.example.com"),
            "com.example.tools"
        );
        assert_eq!(reverse_dns("http://127.0.0.1:8402"), "local.toolhost");
        assert_eq!(reverse_dns("http://localhost:8402"), "local.toolhost");
    }
}
