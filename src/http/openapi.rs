//! The OpenAPI 3.1 document, generated from the route annotations (`#[utoipa::path]`).

use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;
use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "toolhost",
        description = "Discover, quote, pay for (x402) and call hosted AI/API tools; builders publish sandboxed JS handlers.",
    ),
    tags(
        (name = "catalog", description = "Hosted endpoints"),
        (name = "tools", description = "Invoking endpoints"),
        (name = "mcp", description = "Model Context Protocol (Streamable HTTP JSON-RPC)"),
        (name = "receipts", description = "Public-safe receipts"),
        (name = "safety", description = "Content safety"),
        (name = "builders", description = "Builder registration, keys, endpoint lifecycle, secrets, logs and events"),
        (name = "admin", description = "Admin-only: onboarding builders, content-safety review, capability grants"),
        (name = "ops", description = "Health and metrics"),
    ),
    components(schemas(crate::error::ErrorBody))
)]
struct BaseDocument;

pub fn base_document() -> utoipa::openapi::OpenApi {
    let mut doc = BaseDocument::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc
}

/// For each path parameter, the literal segments another route has in its place
/// (`/ai/endpoints/create` beside `/ai/endpoints/{slug}`): the router sends those to the literal
/// route, so they are not values of the parameter.
fn shadowed_values(
    doc: &utoipa::openapi::OpenApi,
) -> std::collections::HashMap<(String, String), Vec<String>> {
    let mut shadowed: std::collections::HashMap<(String, String), Vec<String>> = Default::default();
    let split = |path: &str| path.split('/').map(str::to_owned).collect::<Vec<_>>();
    for templated in doc.paths.paths.keys() {
        let segments = split(templated);
        for (i, segment) in segments.iter().enumerate() {
            let Some(name) = segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
                continue;
            };
            for other in doc.paths.paths.keys() {
                let others = split(other);
                let literal = &others.get(i).cloned().unwrap_or_default();
                let same_elsewhere = others.len() == segments.len()
                    && (0..segments.len()).all(|j| j == i || segments[j] == others[j]);
                let plain = !literal.is_empty()
                    && literal
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
                if same_elsewhere && plain {
                    shadowed
                        .entry((templated.clone(), name.to_owned()))
                        .or_default()
                        .push(literal.clone());
                }
            }
        }
    }
    shadowed
}

/// The refusals of [`crate::http::extract::JsonBody`], which every route with a JSON body can
/// answer before its handler runs; added here once rather than to every annotation.
const BODY_REFUSALS: [(&str, &str); 4] = [
    (
        "400",
        "Malformed JSON (`malformed_json`) or an unreadable body",
    ),
    ("413", "Body too large (`body_too_large`)"),
    ("415", "Content-Type is not JSON (`unsupported_media_type`)"),
    (
        "422",
        "JSON of the wrong shape (`invalid_body`) or an invalid field",
    ),
];

/// Answer schemas whose types also deserialize (stored records, x402 wire types), so serde's
/// `deny_unknown_fields`, which the derive reads to close a schema, would change what they
/// accept (an older record, another client's extra field). Their answers carry exactly their
/// fields: closed here, in the document only.
const CLOSED_ANSWERS: [&str; 12] = [
    "Event",
    "LogEntry",
    "LogLine",
    "InvocationError",
    "Receipt",
    "ReceiptSettlement",
    "ReceiptSignature",
    "Packet",
    "PacketSignature",
    "PaymentRequirements",
    "ResourceInfo",
    "RequirementsV1",
];

/// Completes the document of the routes where the derive cannot see what the server does:
/// - each operation with a request body also documents the body refusals it does not describe
///   itself ([`BODY_REFUSALS`]);
/// - no parameter's schema allows `null` (the derive writes one for every `Option` field, but a
///   query string, a header or a path segment cannot carry a JSON null);
/// - a path parameter excludes the literal segments another route takes in its place, and its
///   operations document the 405 that literal route answers for their method
///   (`GET /ai/endpoints/create`);
/// - a request body whose schema requires no property is optional: an empty body reads as `{}`
///   ([`crate::http::extract`]), so leaving it out is a valid request;
/// - the answer schemas of [`CLOSED_ANSWERS`] allow no other property.
pub fn complete(mut doc: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    close_answers(&mut doc);
    let shadowed = shadowed_values(&doc);
    let optional_bodies = bodies_without_required(&doc);
    for (path, item) in doc.paths.paths.iter_mut() {
        let operations = [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ];
        for operation in operations.into_iter().flatten() {
            let mut is_shadowed = false;
            for parameter in operation.parameters.iter_mut().flatten() {
                let Some(RefOr::T(Schema::Object(schema))) = parameter.schema.as_mut() else {
                    continue;
                };
                without_null(schema);
                let literals = shadowed.get(&(path.clone(), parameter.name.clone()));
                if let Some(literals) = literals.filter(|_| schema.pattern.is_none()) {
                    schema.pattern = Some(format!("^(?!({})$)", literals.join("|")));
                    is_shadowed = true;
                }
            }
            if is_shadowed {
                document_error(
                    operation,
                    "405",
                    "The path names another route's literal segment (`method_not_allowed`)",
                );
            }
            if let Some(body) = operation.request_body.as_mut() {
                let named = body
                    .content
                    .values()
                    .filter_map(|c| match &c.schema {
                        Some(RefOr::Ref(r)) => Some(r.ref_location.as_str()),
                        _ => None,
                    })
                    .any(|location| optional_bodies.contains(location));
                if named {
                    body.required = Some(utoipa::openapi::Required::False);
                }
            }
            // A route that documents its own 415 but no 422 reads its body itself (MCP).
            let responses = &operation.responses.responses;
            let own_reader = responses.contains_key("415") && !responses.contains_key("422");
            if operation.request_body.is_some() && !own_reader {
                for (status, description) in BODY_REFUSALS {
                    document_error(operation, status, description);
                }
            }
        }
    }
    doc
}

fn close_answers(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::AdditionalProperties;
    let schemas = doc.components.iter_mut().flat_map(|c| c.schemas.iter_mut());
    for (name, schema) in schemas {
        if let RefOr::T(Schema::Object(object)) = schema {
            if CLOSED_ANSWERS.contains(&name.as_str()) {
                object.additional_properties =
                    Some(Box::new(AdditionalProperties::FreeForm(false)));
            }
        }
    }
}

/// The `$ref` locations of the component schemas that are objects requiring no property.
fn bodies_without_required(doc: &utoipa::openapi::OpenApi) -> std::collections::HashSet<String> {
    let schemas = doc.components.iter().flat_map(|c| c.schemas.iter());
    schemas
        .filter(|(_, schema)| {
            matches!(schema, RefOr::T(Schema::Object(object)) if object.required.is_empty())
        })
        .map(|(name, _)| format!("#/components/schemas/{name}"))
        .collect()
}

fn without_null(schema: &mut utoipa::openapi::schema::Object) {
    use utoipa::openapi::schema::{SchemaType, Type};
    if let SchemaType::Array(types) = &schema.schema_type {
        let types: Vec<Type> = types
            .iter()
            .filter(|t| **t != Type::Null)
            .cloned()
            .collect();
        schema.schema_type = match types.as_slice() {
            [one] => SchemaType::Type(one.clone()),
            _ => SchemaType::from_iter(types),
        };
    }
}

/// Documents an `ErrorBody` answer with `status` unless the operation already describes one.
fn document_error(
    operation: &mut utoipa::openapi::path::Operation,
    status: &str,
    description: &str,
) {
    let error = utoipa::openapi::content::ContentBuilder::new()
        .schema(Some(utoipa::openapi::Ref::from_schema_name("ErrorBody")))
        .build();
    operation
        .responses
        .responses
        .entry(status.to_owned())
        .or_insert_with(|| {
            utoipa::openapi::ResponseBuilder::new()
                .description(description)
                .content("application/json", error)
                .build()
                .into()
        });
}
