//! `GET /ai/manifest`: the one document an agent reads to find everything else.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use crate::app::AppState;
use crate::config::FacilitatorConfig;

/// Service, payment, MCP, catalog, receipt and quote metadata with absolute URLs.
#[utoipa::path(get, path = "/ai/manifest", tag = "catalog",
    responses((status = 200, description = "Service manifest", body = Object)))]
pub async fn manifest(State(app): State<AppState>) -> Json<Value> {
    let u = |path: &str| app.urls.at(path);
    let payment = &app.config.payment;
    let assets: Vec<Value> = payment
        .networks
        .iter()
        .map(|n| {
            json!({
                "network": n.caip2,
                "v1Network": n.v1_name,
                "chainId": n.chain_id,
                "asset": n.asset,
                "symbol": "USDC",
                "decimals": 6,
                "eip712": {"name": n.eip712_name, "version": n.eip712_version},
            })
        })
        .collect();
    Json(json!({
        "ok": true,
        "service": {
            "name": "toolhost",
            "version": env!("CARGO_PKG_VERSION"),
            "interfaceVersion": "0.2.0",
            "description": "Discover, quote, pay for (x402) and call hosted AI/API tools, with a verifiable receipt for every paid call.",
        },
        "baseUrl": app.urls.base(),
        "payment": {
            "protocol": "x402",
            "x402Versions": [2, 1],
            "schemes": ["exact"],
            "networks": payment.networks.iter().map(|n| n.caip2.clone()).collect::<Vec<_>>(),
            "assets": assets,
            "payTo": app.payments.pay_to,
            "facilitator": match &payment.facilitator {
                FacilitatorConfig::Local => json!({"kind": "local", "settlesOnChain": false}),
                FacilitatorConfig::OnChain(_) => json!({"kind": "local", "settlesOnChain": true}),
                FacilitatorConfig::Remote { url } => json!({"kind": "remote", "url": url}),
            },
            "supported": u("/x402/supported"),
            "headers": {
                "v2": {"required": "PAYMENT-REQUIRED", "payment": "PAYMENT-SIGNATURE", "response": "PAYMENT-RESPONSE"},
                "v1": {"payment": "X-PAYMENT", "response": "X-PAYMENT-RESPONSE"},
                "developerCredit": "X-Developer-Credit",
            },
        },
        "mcp": {"url": u("/ai/mcp"), "transport": "streamable-http"},
        "catalog": {"url": u("/ai/endpoints"), "schema": format!("{}.x402.hosted-endpoint-catalog.v1", app.config.catalog_namespace)},
        "endpoints": {"invoke": u("/tools/{slug}"), "inspect": u("/ai/endpoints/{slug}"), "invokeJson": u("/ai/invoke")},
        "receipts": {
            "url": u("/ai/receipts/{receiptId}"),
            "publicKey": app.receipt_signer.public_key(),
            "signing": {
                "alg": "ed25519",
                "publicKey": app.receipt_signer.public_key(),
                "encoding": "base64",
                "signedMessage": "canonical JSON (keys sorted, no whitespace) of the receipt without its `signature` field",
            },
        },
        "quotes": {
            "hosted": u("/ai/quote"),
            "conversion": u("/ai/conversion/quote"),
            "externalX402": u("/x402/quote"),
        },
        "contentSafetyPolicy": u("/ai/content-safety/policy"),
        "dashboard": u("/dashboard"),
        "guide": u("/guides/x402-agent-payment-infrastructure"),
        "openapi": u("/openapi.json"),
        "handlerTypes": u(crate::web::HANDLER_TYPES_PATH),
    }))
}
