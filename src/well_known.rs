//! toolhost's own discovery documents, the ones its readiness check tells others to publish:
//! `GET /.well-known/x402` (the paid resources with their x402 requirements) and
//! `GET /.well-known/mcp/server.json` (an MCP registry `server.json` for `/ai/mcp`); and the
//! catalog as the x402 `bazaar` discovery list, `GET /discovery/resources`, in the shape a
//! facilitator's list has (what `withBazaar(client).extensions.bazaar.listResources()` of
//! `@x402/extensions` reads, with toolhost's base URL as the facilitator URL).

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::app::AppState;
use crate::catalog::{Endpoint, Status};
use crate::error::{ApiError, ApiResult, ErrorBody, ErrorCode};
use crate::http::extract::QueryParams;
use crate::payments::bazaar::Transport;
use crate::x402::requirements::PaymentRequirements;
use crate::x402::{Offer, ResourceInfo};

/// `GET /.well-known/x402`.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct X402Discovery {
    /// Always 2.
    x402_version: u8,
    service: DiscoveryService,
    resources: Vec<DiscoveryResource>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DiscoveryService {
    name: &'static str,
    /// The URL of `/ai/manifest`.
    manifest: String,
}

/// One paid resource and the requirements its unpaid call answers with.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiscoveryResource {
    resource: String,
    /// Always `http`.
    r#type: &'static str,
    method: &'static str,
    description: String,
    mime_type: &'static str,
    accepts: Vec<PaymentRequirements>,
}

/// `GET /discovery/resources`: the x402 bazaar discovery list.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BazaarResources {
    /// Always 2.
    x402_version: u8,
    items: Vec<BazaarItem>,
    pagination: Pagination,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BazaarItem {
    /// The tool's URL (`http`) or the MCP endpoint's (`mcp`).
    resource: String,
    #[schema(pattern = "^(http|mcp)$")]
    r#type: &'static str,
    /// Always 2.
    x402_version: u8,
    accepts: Vec<PaymentRequirements>,
    #[schema(format = DateTime)]
    last_updated: String,
    description: String,
    mime_type: &'static str,
    /// The x402 extensions the offer declares (`bazaar`: the endpoint's discovery info).
    #[schema(value_type = Option<Object>, required = true)]
    extensions: Option<Map<String, Value>>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Pagination {
    limit: usize,
    offset: usize,
    total: usize,
}

/// An MCP registry `server.json`.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerJson {
    #[serde(rename = "$schema")]
    schema: &'static str,
    /// `<reverse-DNS of the host>/<catalog namespace>`.
    name: String,
    version: &'static str,
    description: &'static str,
    website_url: String,
    remotes: Vec<Remote>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Remote {
    /// Always `streamable-http`.
    r#type: &'static str,
    url: String,
}

/// The MCP registry schema the `server.json` follows.
const SERVER_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json";

/// x402 discovery: every listed, active paid endpoint and builder registration, each with the
/// exact v2 requirements its unpaid call answers with (the same [`Offer`] the 402 is built from).
#[utoipa::path(get, path = "/.well-known/x402", tag = "catalog",
    responses((status = 200, description = "x402 discovery document: `{x402Version: 2, resources: [{resource, type, method, description, mimeType, accepts}]}`", body = X402Discovery)))]
pub async fn x402_discovery(State(app): State<AppState>) -> Json<X402Discovery> {
    let payment = &app.config.payment;
    let item = |url: String, description: String, price, method: &'static str| {
        let offer = Offer::new(
            payment.terms(&app.payments.pay_to),
            ResourceInfo {
                url: url.clone(),
                description: description.clone(),
                mime_type: "application/json".into(),
            },
            price,
        );
        DiscoveryResource {
            resource: url,
            r#type: "http",
            method,
            description,
            mime_type: "application/json",
            accepts: offer.accepts.into_iter().map(|(_, r)| r).collect(),
        }
    };
    let mut resources: Vec<DiscoveryResource> = app
        .catalog
        .all()
        .iter()
        .map(|c| &c.endpoint)
        .filter(|e| payable(e))
        .map(|e| item(app.urls.tool(&e.slug), e.title.clone(), e.price_usd, "POST"))
        .collect();
    resources.push(item(
        app.urls.at("/ai/builders/register"),
        "Builder registration".into(),
        payment.builder_registration_fee,
        "POST",
    ));
    Json(X402Discovery {
        x402_version: 2,
        service: DiscoveryService {
            name: "toolhost",
            manifest: app.urls.at("/ai/manifest"),
        },
        resources,
    })
}

/// Whether an agent can pay for `endpoint` now: paused endpoints answer 503, not 402, and
/// unlisted ones are not found.
fn payable(endpoint: &Endpoint) -> bool {
    endpoint.is_paid() && endpoint.is_listed() && endpoint.status == Status::Active
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DiscoveryQuery {
    /// Only resources of this protocol type: `http` (a `POST /tools/{slug}` call) or `mcp` (an
    /// MCP `tools/call` at `/ai/mcp`).
    r#type: Option<String>,
    /// Items per page, 1 to 100 (default 100).
    #[param(minimum = 1, maximum = 100)]
    limit: Option<usize>,
    /// How many matching items to skip (default 0).
    offset: Option<usize>,
}

/// The paid catalog as an x402 bazaar discovery list: every payable endpoint once per transport,
/// each item with the v2 requirements and extensions (its `bazaar` discovery info) its unpaid
/// call answers with.
#[utoipa::path(get, path = "/discovery/resources", tag = "catalog", params(DiscoveryQuery),
    responses(
        (status = 200, description = "`{x402Version: 2, items: [{resource, type, x402Version, accepts, lastUpdated, description, mimeType, extensions}], pagination: {limit, offset, total}}`", body = BazaarResources),
        (status = 400, description = "Bad type, limit or offset", body = ErrorBody),
    ))]
pub async fn bazaar_resources(
    State(app): State<AppState>,
    QueryParams(query): QueryParams<DiscoveryQuery>,
) -> ApiResult<Json<BazaarResources>> {
    let transports: &[Transport] = match query.r#type.as_deref() {
        None => &[Transport::Http, Transport::Mcp],
        Some("http") => &[Transport::Http],
        Some("mcp") => &[Transport::Mcp],
        Some(_) => {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidQuery,
                "type must be http or mcp",
            ))
        }
    };
    let limit = query.limit.unwrap_or(100);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidQuery,
            "limit must be 1 to 100",
        ));
    }
    let offset = query.offset.unwrap_or(0);
    let catalog = app.catalog.all();
    let endpoints: Vec<&Endpoint> = catalog
        .iter()
        .map(|c| &c.endpoint)
        .filter(|e| payable(e))
        .collect();
    let total = endpoints.len() * transports.len();
    let items: Vec<BazaarItem> = transports
        .iter()
        .flat_map(|t| endpoints.iter().map(move |e| (*t, *e)))
        .skip(offset)
        .take(limit)
        .map(|(transport, endpoint)| {
            let v2 = app.charge_for(endpoint, transport).offer.v2("");
            let (resource, kind) = match transport {
                Transport::Http => (app.urls.tool(&endpoint.slug), "http"),
                Transport::Mcp => (app.urls.at("/ai/mcp"), "mcp"),
            };
            BazaarItem {
                resource,
                r#type: kind,
                x402_version: 2,
                accepts: v2.accepts,
                last_updated: crate::timestamp::rfc3339(endpoint.updated_at),
                description: v2.resource.description,
                mime_type: "application/json",
                extensions: (!v2.extensions.is_empty()).then_some(v2.extensions),
            }
        })
        .collect();
    Ok(Json(BazaarResources {
        x402_version: 2,
        items,
        pagination: Pagination {
            limit,
            offset,
            total,
        },
    }))
}

/// MCP registry `server.json` for this service's `/ai/mcp` (Streamable HTTP).
#[utoipa::path(get, path = "/.well-known/mcp/server.json", tag = "catalog",
    responses((status = 200, description = "MCP registry server.json: `$schema`, reverse-DNS `name`, `version`, `description`, `remotes: [{type: streamable-http, url}]`", body = ServerJson)))]
pub async fn mcp_server_json(State(app): State<AppState>) -> Json<ServerJson> {
    Json(ServerJson {
        schema: SERVER_SCHEMA,
        name: format!("{}/{}", reverse_dns(app.urls.base()), app.config.catalog_namespace),
        version: env!("CARGO_PKG_VERSION"),
        description: "Paid AI/API tools: discover, quote, pay with x402 and call, with a signed receipt for every paid call.",
        website_url: app.urls.base().to_owned(),
        remotes: vec![Remote {
            r#type: "streamable-http",
            url: app.urls.at("/ai/mcp"),
        }],
    })
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
