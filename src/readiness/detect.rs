//! Which JSON document a URL served: an MCP registry `server.json`, an x402 discovery document,
//! this service's own `/ai/manifest`, or an endpoint catalog (this service's `/ai/endpoints` and
//! similar).
//!
//! Recognition is by key presence and deliberately tolerant: the formats are young and vary
//! between publishers, so a document is classified by its telltale keys and the checks then
//! say precisely what is missing.

use serde_json::Value;

use super::report::{Findings, Kind};
use super::{catalog, discovery, manifest, server_json};

/// The document kind `doc` looks like, if any.
pub(super) fn classify(doc: &Value) -> Option<Kind> {
    if server_json::matches(doc) {
        Some(Kind::McpServerJson)
    } else if discovery::items(doc).is_some() {
        Some(Kind::X402Discovery)
    } else if manifest::matches(doc) {
        Some(Kind::ToolhostManifest)
    } else if catalog::entries(doc).is_some() {
        Some(Kind::EndpointCatalog)
    } else {
        None
    }
}

/// Checks a document of the kind [`classify`] gave.
pub(super) fn analyze(kind: Kind, doc: &Value, f: &mut Findings) {
    match kind {
        Kind::McpServerJson => server_json::analyze(doc, f),
        Kind::X402Discovery => discovery::analyze(doc, f),
        Kind::ToolhostManifest => manifest::analyze(doc, f),
        Kind::EndpointCatalog => catalog::analyze(doc, f),
        Kind::McpEndpoint | Kind::PaidEndpoint | Kind::Unknown => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn classification_by_telltale_keys() {
        let server = json!({"$schema": "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"});
        assert_eq!(classify(&server), Some(Kind::McpServerJson));
        let server = json!({"name": "io.github.a/b", "packages": []});
        assert_eq!(classify(&server), Some(Kind::McpServerJson));
        assert_eq!(
            classify(&json!({"x402Version": 1, "items": []})),
            Some(Kind::X402Discovery)
        );
        assert_eq!(
            classify(&json!({"resources": ["https://a.example/x"]})),
            Some(Kind::X402Discovery)
        );
        assert_eq!(
            classify(&json!([{"resource": "https://a.example/x", "accepts": []}])),
            Some(Kind::X402Discovery)
        );
        assert_eq!(
            classify(&json!({"service": {}, "payment": {}})),
            Some(Kind::ToolhostManifest)
        );
        assert_eq!(
            classify(
                &json!({"schema": "toolhost.x402.hosted-endpoint-catalog.v1", "endpoints": [
                    {"slug": "a", "url": "https://a.example/tools/a", "priceUsd": 0}
                ]})
            ),
            Some(Kind::EndpointCatalog)
        );
        for other in [
            json!({"items": []}),
            json!({"resources": [1, 2]}),
            json!([]),
            json!({"payment": "yes", "service": {}}),
            json!("text"),
            json!({"name": "x"}),
        ] {
            assert_eq!(classify(&other), None, "{other}");
        }
    }
}
