//! `GET /ai/manifest`: the one document an agent reads to find everything else.

use axum::extract::State;
use axum::Json;
use serde::Serialize;

use crate::app::AppState;
use crate::x402::config::{FacilitatorConfig, TransferMethod};

/// The manifest: the service, how it is paid, and the absolute URL of everything else.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    /// Always true.
    ok: bool,
    service: ManifestService,
    base_url: String,
    payment: ManifestPayment,
    mcp: ManifestMcp,
    catalog: ManifestCatalog,
    endpoints: ManifestEndpoints,
    receipts: ManifestReceipts,
    quotes: ManifestQuotes,
    content_safety_policy: String,
    dashboard: String,
    guide: String,
    openapi: String,
    handler_types: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestService {
    name: &'static str,
    version: &'static str,
    interface_version: &'static str,
    description: &'static str,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestPayment {
    /// Always `x402`.
    protocol: &'static str,
    x402_versions: [u8; 2],
    /// `exact`, and `upto` (metered endpoints) where the facilitator settles it.
    schemes: Vec<&'static str>,
    /// CAIP-2 ids of the networks paid on.
    networks: Vec<String>,
    assets: Vec<ManifestAsset>,
    pay_to: String,
    facilitator: ManifestFacilitator,
    /// The URL of the facilitator's supported kinds.
    supported: String,
    headers: ManifestPaymentHeaders,
}

/// The settlement asset of one network.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestAsset {
    network: String,
    v1_network: String,
    chain_id: u64,
    asset: String,
    symbol: &'static str,
    decimals: u8,
    eip712: ManifestEip712,
    /// How `exact` moves the asset: `eip3009` (`transferWithAuthorization`) or `permit2`.
    asset_transfer_method: &'static str,
    /// The address an `upto` permit must let settle here; absent where `upto` is not offered.
    #[serde(skip_serializing_if = "Option::is_none")]
    upto_facilitator: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ManifestEip712 {
    name: String,
    version: String,
}

/// `local` (with `settlesOnChain`) or `remote` (with its `url`).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestFacilitator {
    #[schema(pattern = "^(local|remote)$")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    settles_on_chain: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestPaymentHeaders {
    v2: ManifestV2Headers,
    v1: ManifestV1Headers,
    developer_credit: &'static str,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ManifestV2Headers {
    required: &'static str,
    payment: &'static str,
    response: &'static str,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ManifestV1Headers {
    payment: &'static str,
    response: &'static str,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ManifestMcp {
    url: String,
    /// Always `streamable-http`.
    transport: &'static str,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ManifestCatalog {
    url: String,
    schema: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestEndpoints {
    invoke: String,
    inspect: String,
    invoke_json: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestReceipts {
    url: String,
    /// Base64 of the receipt signing key.
    public_key: String,
    signing: ManifestSigning,
    /// The receipt log every paid receipt is appended to (also `/.well-known/receipt-log`).
    log: ReceiptLogInfo,
}

/// Where the receipt log is and the key its checkpoints are signed with.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReceiptLogInfo {
    /// The log's name: the first line of its checkpoints.
    origin: String,
    /// Its verifier key (C2SP `signed-note`: `<name>+<key id>+<base64 of 0x01 and the Ed25519
    /// public key>`), the receipt key's.
    verifier_key: String,
    /// The latest signed checkpoint.
    checkpoint: String,
    /// The prefix of its C2SP `tlog-tiles` (`<prefix>tile/...`).
    tiles: String,
    /// A receipt's inclusion proof.
    inclusion: String,
    /// A consistency proof between two tree sizes (`?from=&to=`).
    consistency: String,
    /// What proves a free call's receipt instead (they are not in the log: they expire).
    batches: ReceiptBatchesInfo,
}

/// The name and key of the signed batches that prove free calls' receipts: not a log (batches
/// do not extend one another), and a different key from the log's, so neither passes for the
/// other.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReceiptBatchesInfo {
    /// The first line of every batch's note.
    origin: String,
    /// The key (C2SP `signed-note` vkey) the batches' notes are signed under: the receipt key's.
    verifier_key: String,
}

impl ReceiptLogInfo {
    pub fn of(app: &crate::app::App) -> ReceiptLogInfo {
        let u = |path: &str| app.urls.at(path);
        let verifier = app.receipt_log.verifier();
        ReceiptLogInfo {
            origin: verifier.name().to_owned(),
            verifier_key: verifier.key_text(),
            checkpoint: u("/ai/receipts/log/checkpoint"),
            tiles: u("/ai/receipts/log/"),
            inclusion: u("/ai/receipts/{receiptId}/inclusion"),
            consistency: u("/ai/receipts/log/consistency"),
            batches: {
                let verifier = app.receipt_batches.verifier();
                ReceiptBatchesInfo {
                    origin: verifier.name().to_owned(),
                    verifier_key: verifier.key_text(),
                }
            },
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestSigning {
    alg: &'static str,
    public_key: String,
    encoding: &'static str,
    signed_message: &'static str,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestQuotes {
    hosted: String,
    conversion: String,
    external_x402: String,
}

/// Service, payment, MCP, catalog, receipt and quote metadata with absolute URLs.
#[utoipa::path(get, path = "/ai/manifest", tag = "catalog",
    responses((status = 200, description = "Service manifest", body = Manifest)))]
pub async fn manifest(State(app): State<AppState>) -> Json<Manifest> {
    let u = |path: &str| app.urls.at(path);
    let payment = &app.config.payment;
    let assets = payment
        .networks
        .iter()
        .map(|n| ManifestAsset {
            network: n.caip2.clone(),
            v1_network: n.v1_name.clone(),
            chain_id: n.chain_id,
            asset: n.asset.clone(),
            symbol: "USDC",
            decimals: 6,
            eip712: ManifestEip712 {
                name: n.eip712_name.clone(),
                version: n.eip712_version.clone(),
            },
            asset_transfer_method: match n.transfer_method {
                TransferMethod::Eip3009 => "eip3009",
                TransferMethod::Permit2 => "permit2",
            },
            upto_facilitator: app.payments.facilitator.upto_facilitator(n),
        })
        .collect::<Vec<_>>();
    let mut schemes = vec!["exact"];
    if assets.iter().any(|a| a.upto_facilitator.is_some()) {
        schemes.push("upto");
    }
    let local = |settles_on_chain| ManifestFacilitator {
        kind: "local",
        settles_on_chain: Some(settles_on_chain),
        url: None,
    };
    let facilitator = match &payment.facilitator {
        FacilitatorConfig::Local => local(false),
        FacilitatorConfig::OnChain(_) => local(true),
        FacilitatorConfig::Remote(remote) => ManifestFacilitator {
            kind: "remote",
            settles_on_chain: None,
            url: Some(remote.url.clone()),
        },
    };
    Json(Manifest {
        ok: true,
        service: ManifestService {
            name: "toolhost",
            version: env!("CARGO_PKG_VERSION"),
            interface_version: "0.2.0",
            description: "Discover, quote, pay for (x402) and call hosted AI/API tools, with a verifiable receipt for every paid call.",
        },
        base_url: app.urls.base().to_owned(),
        payment: ManifestPayment {
            protocol: "x402",
            x402_versions: [2, 1],
            schemes,
            networks: payment.networks.iter().map(|n| n.caip2.clone()).collect(),
            assets,
            pay_to: app.payments.pay_to.clone(),
            facilitator,
            supported: u("/x402/supported"),
            headers: ManifestPaymentHeaders {
                v2: ManifestV2Headers {
                    required: "PAYMENT-REQUIRED",
                    payment: "PAYMENT-SIGNATURE",
                    response: "PAYMENT-RESPONSE",
                },
                v1: ManifestV1Headers {
                    payment: "X-PAYMENT",
                    response: "X-PAYMENT-RESPONSE",
                },
                developer_credit: "X-Developer-Credit",
            },
        },
        mcp: ManifestMcp {
            url: u("/ai/mcp"),
            transport: "streamable-http",
        },
        catalog: ManifestCatalog {
            url: u("/ai/endpoints"),
            schema: format!(
                "{}.x402.hosted-endpoint-catalog.v1",
                app.config.catalog_namespace
            ),
        },
        endpoints: ManifestEndpoints {
            invoke: u("/tools/{slug}"),
            inspect: u("/ai/endpoints/{slug}"),
            invoke_json: u("/ai/invoke"),
        },
        receipts: ManifestReceipts {
            url: u("/ai/receipts/{receiptId}"),
            public_key: app.receipt_signer.public_key(),
            signing: ManifestSigning {
                alg: "ed25519",
                public_key: app.receipt_signer.public_key(),
                encoding: "base64",
                signed_message: "canonical JSON (keys sorted, no whitespace) of the receipt without its `signature` field",
            },
            log: ReceiptLogInfo::of(&app),
        },
        quotes: ManifestQuotes {
            hosted: u("/ai/quote"),
            conversion: u("/ai/conversion/quote"),
            external_x402: u("/x402/quote"),
        },
        content_safety_policy: u("/ai/content-safety/policy"),
        dashboard: u("/dashboard"),
        guide: u("/guides/x402-agent-payment-infrastructure"),
        openapi: u("/openapi.json"),
        handler_types: u(crate::web::HANDLER_TYPES_PATH),
    })
}
