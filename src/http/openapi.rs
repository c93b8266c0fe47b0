//! The OpenAPI 3.1 document, generated from the route annotations (`#[utoipa::path]`).

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
