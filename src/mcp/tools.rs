//! The tools: every active catalog endpoint, named by its slug, and the service tools beside
//! them. Definitions are built from the catalog on each `tools/list` page, so endpoints created,
//! paused or deleted show up at once on every instance; nothing is cached per client.

use std::sync::Arc;

use axum::http::{HeaderMap, Method};
use base64::Engine;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::payment;
use super::protocol::RpcError;
use crate::app::{App, AppState};
use crate::catalog::{
    CatalogFilter, CatalogPosition, CompiledEndpoint, Endpoint, HandlerType, PricingMode, Status,
};
use crate::error::ApiResult;
use crate::error::ErrorCode;
use crate::payments::bazaar::Transport;
use crate::payments::Tender;
use crate::pipeline::{self, Call};
use crate::quotes::conversion::{self, ConversionRequest};
use crate::quotes::external::{self, ExternalQuoteRequest};
use crate::quotes::hosted::{self, QuoteRequest};

/// Tools the service offers besides its catalog. They are resolved first and a catalog endpoint
/// of the same name is left out of the list, so an endpoint can never shadow one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ServiceTool {
    CatalogSearch,
    ReceiptLookup,
    Quote,
    ConversionQuote,
    X402Quote,
}

pub(super) enum Tool {
    Service(ServiceTool),
    Endpoint(Arc<CompiledEndpoint>),
}

impl ServiceTool {
    const ALL: [ServiceTool; 5] = [
        ServiceTool::CatalogSearch,
        ServiceTool::ReceiptLookup,
        ServiceTool::Quote,
        ServiceTool::ConversionQuote,
        ServiceTool::X402Quote,
    ];

    fn name(self) -> &'static str {
        match self {
            ServiceTool::CatalogSearch => "catalog_search",
            ServiceTool::ReceiptLookup => "receipt_lookup",
            ServiceTool::Quote => "quote",
            ServiceTool::ConversionQuote => "conversion_quote",
            ServiceTool::X402Quote => "x402_quote",
        }
    }

    fn definition(self) -> Value {
        let read_only = json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false});
        match self {
            ServiceTool::CatalogSearch => json!({
                "name": self.name(),
                "title": "Search the tool catalog",
                "description": "Finds hosted tools by text, tag or pricing mode and returns each one's tool name, price and URL. Free.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "Case-insensitive text matched against slug, title, description and tags"},
                        "tag": {"type": "string", "description": "Only tools carrying this tag"},
                        "pricingMode": {"type": "string", "enum": PricingMode::ALL.map(PricingMode::as_str)},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                    },
                    "additionalProperties": false,
                },
                "outputSchema": {
                    "type": "object",
                    "required": ["ok", "total", "endpoints"],
                    "properties": {
                        "ok": {"type": "boolean"},
                        "total": {"type": "integer", "description": "Matches before the limit"},
                        "endpoints": {"type": "array", "items": {"type": "object", "required": ["toolName", "slug", "priceUsd", "url"]}},
                    },
                },
                "annotations": annotations_with_title(read_only, "Search the tool catalog"),
                "_meta": {"toolhost/pricing": {"priceUsd": 0, "pricingMode": PricingMode::FreePublicUtility.as_str()}},
            }),
            ServiceTool::ReceiptLookup => json!({
                "name": self.name(),
                "title": "Look up a receipt",
                "description": "Returns the public-safe receipt of a paid call by its receiptId, as GET /ai/receipts/{receiptId} does. Free.",
                "inputSchema": {
                    "type": "object",
                    "required": ["receiptId"],
                    "properties": {"receiptId": {"type": "string", "minLength": 1, "maxLength": 200}},
                    "additionalProperties": false,
                },
                "annotations": annotations_with_title(read_only, "Look up a receipt"),
                "_meta": {"toolhost/pricing": {"priceUsd": 0, "pricingMode": PricingMode::FreePublicUtility.as_str()}},
            }),
            ServiceTool::Quote => route_tool(
                self.name(),
                "Quote a hosted tool",
                "All-in quote for a hosted tool, as POST /ai/quote: price, fees, total, expiry, quoteId, the exact x402 requirements and the handoff. Free.",
                schema_of::<QuoteRequest>(),
                read_only,
            ),
            ServiceTool::ConversionQuote => route_tool(
                self.name(),
                "Quote a conversion to the settlement asset",
                "Route from your network and asset toward the asset x402 settlement needs, estimated cost and the wallet or exchange handoff, as POST /ai/conversion/quote. Free.",
                schema_of::<ConversionRequest>(),
                read_only,
            ),
            ServiceTool::X402Quote => route_tool(
                self.name(),
                "Quote an external x402 seller",
                "Calls an external x402 seller's URL (without paying) and normalizes its payment requirement, with its USD value and a conversion handoff, as POST /x402/quote. Free.",
                schema_of::<ExternalQuoteRequest>(),
                json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": true}),
            ),
        }
    }

    async fn call(self, app: &AppState, arguments: Value) -> Value {
        match self {
            ServiceTool::CatalogSearch => match parse::<SearchArgs>(arguments) {
                Ok(args) => payment::json_result(search(app, &args), false),
                Err(error) => error,
            },
            ServiceTool::ReceiptLookup => match parse::<ReceiptArgs>(arguments) {
                Ok(args) => {
                    match crate::receipts::lookup(app.store.as_ref(), &args.receipt_id).await {
                        Ok(receipt) => payment::json_result(receipt, false),
                        Err(e) => payment::error_result(json!(e.answer())),
                    }
                }
                Err(error) => error,
            },
            // The quote use cases, as the HTTP routes call them (MCP callers are anonymous).
            ServiceTool::Quote => match parse::<QuoteRequest>(arguments) {
                Ok(request) => quote_result(hosted::quote(&app.quote_parts(), None, request).await),
                Err(error) => error,
            },
            ServiceTool::ConversionQuote => match parse::<ConversionRequest>(arguments) {
                Ok(request) => {
                    quote_result(conversion::requested(&app.quote_parts(), None, &request))
                }
                Err(error) => error,
            },
            ServiceTool::X402Quote => match parse::<ExternalQuoteRequest>(arguments) {
                Ok(request) => quote_result(external::quote(&app.quote_parts(), request).await),
                Err(error) => error,
            },
        }
    }
}

fn quote_result<T: serde::Serialize>(result: ApiResult<T>) -> Value {
    match result {
        Ok(answer) => payment::json_result(json!(answer), false),
        Err(e) => payment::error_result(json!(e.answer())),
    }
}

/// A route's request schema (its `utoipa::ToSchema`), so tool and OpenAPI document agree.
fn schema_of<T: utoipa::PartialSchema>() -> Value {
    let mut schema = serde_json::to_value(T::schema()).unwrap_or_else(|_| json!({}));
    if schema.get("type").is_none() {
        schema["type"] = json!("object");
    }
    schema
}

fn route_tool(
    name: &str,
    title: &str,
    description: &str,
    input_schema: Value,
    annotations: Value,
) -> Value {
    json!({
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": input_schema,
        "annotations": annotations_with_title(annotations, title),
        "_meta": {"toolhost/pricing": {"priceUsd": 0, "pricingMode": PricingMode::FreePublicUtility.as_str()}},
    })
}

fn annotations_with_title(mut annotations: Value, title: &str) -> Value {
    annotations["title"] = json!(title);
    annotations
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SearchArgs {
    query: Option<String>,
    tag: Option<String>,
    pricing_mode: Option<PricingMode>,
    limit: Option<u32>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ReceiptArgs {
    receipt_id: String,
}

/// Arguments of a service tool; a mismatch is a tool error the model can correct, shaped like
/// the HTTP API's `input_invalid`.
fn parse<T: serde::de::DeserializeOwned>(arguments: Value) -> Result<T, Value> {
    serde_json::from_value(arguments).map_err(|e| {
        payment::error_result(
            json!({"ok": false, "error": {"code": ErrorCode::InputInvalid.as_str(), "message": crate::error::clip(&e.to_string(), crate::error::MAX_MESSAGE_BYTES)}}),
        )
    })
}

fn search(app: &App, args: &SearchArgs) -> Value {
    let limit = args.limit.unwrap_or(20).clamp(1, 100) as usize;
    let filter = CatalogFilter::new(
        args.tag.as_deref(),
        args.query.as_deref(),
        args.pricing_mode,
    );
    let found = filter
        .page(&app.catalog, None, usize::MAX, is_offered)
        .endpoints;
    let endpoints: Vec<Value> = found
        .iter()
        .take(limit)
        .map(|c| {
            let e = &c.endpoint;
            json!({
                "toolName": e.slug,
                "slug": e.slug,
                "title": e.title,
                "description": e.description,
                "priceUsd": e.price_usd,
                "pricingMode": e.pricing_mode().as_str(),
                "metering": e.metering,
                "tags": e.tags,
                "url": app.urls.tool(&e.slug),
            })
        })
        .collect();
    json!({"ok": true, "total": found.len(), "endpoints": endpoints})
}

/// Whether an endpoint is offered as a tool: active, listed, and not shadowed by a service tool.
fn is_offered(compiled: &CompiledEndpoint) -> bool {
    let endpoint = &compiled.endpoint;
    endpoint.status == Status::Active
        && endpoint.is_listed()
        && resolve_service(&endpoint.slug).is_none()
}

/// Where a `tools/list` page starts: the service tools come first, then the catalog's.
#[derive(Debug, PartialEq)]
enum ListCursor {
    /// At this index of [`ServiceTool::ALL`] (its length: at the first endpoint).
    Service(usize),
    /// After this endpoint.
    After(CatalogPosition),
}

impl ListCursor {
    fn encode(&self) -> String {
        let text = match self {
            ListCursor::Service(index) => format!("s:{index}"),
            ListCursor::After(position) => format!("e:{}", position.to_cursor()),
        };
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
    }

    fn decode(cursor: &str) -> Option<Self> {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(cursor)
            .ok()?;
        let text = String::from_utf8(bytes).ok()?;
        match text.split_once(':')? {
            ("s", index) => Some(ListCursor::Service(
                index
                    .parse()
                    .ok()
                    .filter(|i| *i <= ServiceTool::ALL.len())?,
            )),
            ("e", position) => CatalogPosition::from_cursor(position).map(ListCursor::After),
            _ => None,
        }
    }
}

/// One page of `tools/list`: service tools first, then active endpoints in catalog order. A
/// page reads only its own endpoints from the catalog, however large the catalog is.
pub(super) fn list(app: &App, cursor: Option<&str>) -> Result<Value, RpcError> {
    let start = match cursor {
        None => ListCursor::Service(0),
        Some(cursor) => {
            ListCursor::decode(cursor).ok_or_else(|| RpcError::invalid_params("invalid cursor"))?
        }
    };
    let page_size = app.config.mcp.page_size.max(1);
    let (first_service, after) = match start {
        ListCursor::Service(index) => (index, None),
        ListCursor::After(position) => (ServiceTool::ALL.len(), Some(position)),
    };
    let mut tools: Vec<Value> = ServiceTool::ALL[first_service..]
        .iter()
        .take(page_size)
        .map(|t| t.definition())
        .collect();
    let next_service = first_service + tools.len();
    let next = if tools.len() == page_size {
        let more = next_service < ServiceTool::ALL.len()
            || !app
                .catalog
                .page(None, None, 1, is_offered)
                .endpoints
                .is_empty();
        more.then_some(ListCursor::Service(next_service))
    } else {
        let page = app
            .catalog
            .page(after.as_ref(), None, page_size - tools.len(), is_offered);
        tools.extend(page.endpoints.iter().map(|c| endpoint_tool(app, c)));
        page.next.map(ListCursor::After)
    };
    let mut result = json!({ "tools": tools });
    if let Some(next) = next {
        result["nextCursor"] = json!(next.encode());
    }
    Ok(result)
}

fn resolve_service(name: &str) -> Option<ServiceTool> {
    ServiceTool::ALL.into_iter().find(|t| t.name() == name)
}

/// The tool named `name`. A paused endpoint still resolves: the pipeline answers for it, as it
/// does over HTTP.
pub(super) fn resolve(app: &App, name: &str) -> Option<Tool> {
    resolve_service(name)
        .map(Tool::Service)
        .or_else(|| app.catalog.get(name).map(Tool::Endpoint))
}

/// The input schema of a catalog tool, as listed (service tools declare no header-mirrored
/// arguments, so they have none to check).
pub(super) fn input_schema(app: &App, name: &str) -> Option<Value> {
    match resolve(app, name)? {
        Tool::Endpoint(compiled) => Some(compiled.endpoint.input_schema.value()),
        Tool::Service(_) => None,
    }
}

/// Runs a tool and returns its `CallToolResult`. Catalog endpoints run through the call
/// pipeline as `POST /tools/{slug}` calls do; its typed answer is mapped by
/// [`payment::tool_result`].
pub(super) async fn call(
    app: &AppState,
    tool: Tool,
    arguments: Value,
    (headers, tender): (HeaderMap, Tender),
    client: Option<std::net::IpAddr>,
) -> Value {
    let compiled = match tool {
        Tool::Service(service) => return service.call(app, arguments).await,
        Tool::Endpoint(compiled) => compiled,
    };
    let mut call = Call::new(Method::POST, arguments, headers);
    call.tender = tender;
    call.transport = Transport::Mcp;
    call.client = client;
    let compiled = pipeline::route(&compiled, &call);
    payment::tool_result(pipeline::call(app, &compiled, &call).await)
}

/// MCP requires an object schema at the root; catalog schemas describe JSON objects but may
/// leave `type` implicit.
fn object_schema(schema: &Value) -> Option<Value> {
    let mut schema = schema.as_object()?.clone();
    match schema.get("type") {
        None => {
            schema.insert("type".into(), json!("object"));
        }
        Some(t) if t == "object" => {}
        Some(_) => return None,
    }
    Some(Value::Object(schema))
}

fn annotations(endpoint: &Endpoint) -> Value {
    let granted = endpoint.capabilities();
    let (read_only, open_world) = match endpoint.handler_type {
        HandlerType::ReceiptEcho | HandlerType::StaticJson | HandlerType::ConversionQuote => {
            (true, false)
        }
        HandlerType::X402ReadinessCheck => (true, true),
        HandlerType::JsRequestResponse => (
            !granted.kv && !granted.files && !granted.fetch,
            granted.http_get_json || granted.fetch,
        ),
    };
    json!({
        "title": endpoint.title,
        "readOnlyHint": read_only,
        "destructiveHint": false,
        // A paid call charges each time, so repeating it is never free of effect.
        "idempotentHint": read_only && !endpoint.is_paid(),
        "openWorldHint": open_world,
    })
}

fn endpoint_tool(app: &App, compiled: &CompiledEndpoint) -> Value {
    let endpoint = &compiled.endpoint;
    let price = match (&endpoint.metering, endpoint.is_paid()) {
        (_, false) => "Free: no payment needed.".to_string(),
        (None, true) => format!(
            "Price: {} USD per successful call, paid with x402 (send the payment in _meta[\"{}\"]; a call without one returns the payment requirements).",
            endpoint.price_usd,
            payment::PAYMENT_META
        ),
        (Some(metering), true) => format!(
            "Price: metered by {}, at most {} USD per successful call (at least {}): you sign the maximum with x402 `upto` and are charged what the call reports (send the payment in _meta[\"{}\"]; a call without one returns the payment requirements).",
            metering.unit,
            endpoint.price_usd,
            metering.minimum_usd,
            payment::PAYMENT_META
        ),
    };
    let mut meta = Map::new();
    meta.insert(
        "toolhost/pricing".into(),
        json!({
            "priceUsd": endpoint.price_usd,
            "pricingMode": endpoint.pricing_mode().as_str(),
            "metering": endpoint.metering,
            "handlerType": endpoint.handler_type.as_str(),
            "url": app.urls.tool(&endpoint.slug),
        }),
    );
    // Whom a call pays: an agent can pin the owner, not just the name a slug may change hands.
    meta.insert("toolhost/owner".into(), json!(endpoint.owner_view()));
    if endpoint.is_paid() {
        meta.insert("x402".into(), payment::advertised(app, compiled));
    }
    let mut tool = json!({
        "name": endpoint.slug,
        "title": endpoint.title,
        "description": format!("{} {price}", endpoint.description.trim_end()),
        "inputSchema": object_schema(&endpoint.input_schema.value()).unwrap_or_else(|| json!({"type": "object"})),
        "annotations": annotations(endpoint),
        "_meta": meta,
    });
    // A paid tool's unpaid answer puts the PaymentRequired in `structuredContent` (x402 MCP
    // transport), which SDK clients would check against a declared `outputSchema`; the schema
    // of its result is published in `_meta` instead.
    if let Some(output) = object_schema(&endpoint.output_schema.value()) {
        if endpoint.is_paid() {
            tool["_meta"]["toolhost/outputSchema"] = output;
        } else {
            tool["outputSchema"] = output;
        }
    }
    tool
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        let service = ListCursor::Service(3);
        assert_eq!(ListCursor::decode(&service.encode()), Some(service));
        let after = CatalogPosition::from_cursor(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("1700000000000000000:a:b"),
        )
        .unwrap();
        let cursor = ListCursor::After(after.clone());
        assert_eq!(ListCursor::decode(&cursor.encode()), Some(cursor));
        assert_eq!(after.to_cursor(), {
            let text = "1700000000000000000:a:b";
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
        });
        let encoded = |text: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text);
        for garbage in [
            "not-a-cursor".to_owned(),
            encoded("tools:5"),
            encoded("s:x"),
            encoded("s:99"),
            encoded("e:garbage"),
            encoded(&format!("e:{}", encoded("noon:slug"))),
        ] {
            assert_eq!(ListCursor::decode(&garbage), None, "{garbage}");
        }
    }

    #[test]
    fn schemas_become_object_schemas() {
        assert_eq!(
            object_schema(&json!({"description": "any"})),
            Some(json!({"type": "object", "description": "any"}))
        );
        assert_eq!(object_schema(&json!({"type": "array"})), None);
        assert_eq!(object_schema(&json!(true)), None);
    }

    #[test]
    fn service_tools_resolve_by_name() {
        for tool in ServiceTool::ALL {
            assert_eq!(resolve_service(tool.name()), Some(tool));
        }
    }
}
