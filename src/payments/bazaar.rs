//! The x402 `bazaar` extension: an endpoint's discovery info (how to call it, its input and
//! output schemas) declared in its 402, so facilitators and agents that index x402 resources can
//! list it.
//!
//! Followed: `@x402/extensions` 2.27.0 (`bazaar`), whose `declareDiscoveryExtension` makes
//! `{info, schema}` where `schema` is a JSON Schema that `info` satisfies (facilitators check it
//! with `validateDiscoveryExtension`). Over HTTP an endpoint is a JSON-body `POST`
//! (`info.input = {type: "http", method: "POST", bodyType: "json", body: <example input>}`, the
//! endpoint's `inputSchema` as the schema of `body`); over MCP it is a tool
//! (`{type: "mcp", toolName, description, transport: "streamable-http", inputSchema,
//! example}`). Both carry `info.output = {type: "json"}` with the endpoint's `outputSchema` as
//! the schema of the output example, as the reference builds it. A metered endpoint's
//! declaration also says how it charges (`info.pricing: {mode: "metered", maxUsd, minimumUsd,
//! unitPriceUsd, unit}`), a key of toolhost's that the declaration's schema leaves open.

use serde_json::{json, Map, Value};

use crate::catalog::{Endpoint, JsonText};

/// The extension's key in `extensions`.
pub const BAZAAR: &str = "bazaar";

/// How the 402 that carries the declaration was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `POST /tools/{slug}` (and `/ai/invoke`).
    Http,
    /// MCP `tools/call`.
    Mcp,
}

/// The largest declaration carried, as JSON bytes. The 402 carries it in its `PAYMENT-REQUIRED`
/// header, and common HTTP clients refuse response headers beyond 16 KiB in all (Node's
/// default), so an endpoint with very large schemas declares none rather than making its 402
/// unreadable.
pub const MAX_DECLARATION_BYTES: usize = 8 * 1024;

/// The `bazaar` declaration of `endpoint` as reached over `transport`, or `None` when it would
/// be larger than [`MAX_DECLARATION_BYTES`].
pub fn declaration(endpoint: &Endpoint, transport: Transport) -> Option<Value> {
    let declaration = build(endpoint, transport);
    (declaration.to_string().len() <= MAX_DECLARATION_BYTES).then_some(declaration)
}

fn build(endpoint: &Endpoint, transport: Transport) -> Value {
    let input_schema = embeddable(&endpoint.input_schema);
    let example = endpoint
        .example_input
        .as_ref()
        .map_or_else(|| json!({}), JsonText::value);
    let (info_input, schema_input) = match transport {
        Transport::Http => (
            json!({"type": "http", "method": "POST", "bodyType": "json", "body": example}),
            json!({
                "type": "object",
                "properties": {
                    "type": {"type": "string", "const": "http"},
                    "method": {"type": "string", "enum": ["POST"]},
                    "bodyType": {"type": "string", "enum": ["json", "form-data", "text"]},
                    "body": input_schema,
                },
                "required": ["type", "method", "bodyType", "body"],
                "additionalProperties": false,
            }),
        ),
        Transport::Mcp => (
            json!({
                "type": "mcp",
                "toolName": endpoint.slug,
                "description": endpoint.description,
                "transport": "streamable-http",
                "inputSchema": input_schema,
                "example": example,
            }),
            json!({
                "type": "object",
                "properties": {
                    "type": {"type": "string", "const": "mcp"},
                    "toolName": {"type": "string"},
                    "description": {"type": "string"},
                    "transport": {"type": "string", "enum": ["streamable-http"]},
                    "inputSchema": {"type": "object"},
                    "example": {"type": "object"},
                },
                "required": ["type", "toolName", "inputSchema"],
                "additionalProperties": false,
            }),
        ),
    };
    let mut output_example = Map::new();
    output_example.insert("type".into(), json!("object"));
    if let Value::Object(schema) = embeddable(&endpoint.output_schema) {
        output_example.extend(schema);
    }
    let mut info = json!({"input": info_input, "output": {"type": "json"}});
    if let Some(metering) = &endpoint.metering {
        // How a metered call is charged, beside how to call it: the schema below leaves
        // `info` open, so indexers that do not know the key pass it by.
        info["pricing"] = json!({
            "mode": "metered",
            "maxUsd": endpoint.price_usd,
            "minimumUsd": metering.minimum_usd,
            "unitPriceUsd": metering.unit_price_usd,
            "unit": metering.unit,
        });
    }
    json!({
        "info": info,
        "schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "input": schema_input,
                "output": {
                    "type": "object",
                    "properties": {
                        "type": {"type": "string"},
                        "example": output_example,
                    },
                    "required": ["type"],
                },
            },
            "required": ["input"],
        },
    })
}

/// An endpoint schema as a subschema of the declaration: without its own `$schema` and `$id`,
/// which name a document (and a draft) that a nested schema is not; facilitators refuse
/// declarations whose `$id` points elsewhere.
fn embeddable(schema: &JsonText) -> Value {
    let mut schema = schema.value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("$id");
    }
    schema
}
