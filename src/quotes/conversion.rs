//! Conversion routes toward the settlement asset (USDC on an x402 network), priced from the
//! configured [`ConversionTable`] in integer micro-dollars.
//!
//! A route has at most two steps: a swap into USDC on the starting network, then a bridge to the
//! settlement network. Paying itself costs the payer no gas (EIP-3009: the facilitator submits).

use serde::{Deserialize, Serialize};

use crate::builders::Caller;
use crate::catalog::Registry;
use crate::config::{ConversionTable, PaymentConfig, PricedAsset};
use crate::endpoints;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::money::Usd;

/// x402 v1 network names and the CAIP-2 ids they stand for, with each network's USDC contract.
const KNOWN_NETWORKS: [(&str, &str, &str); 5] = [
    (
        "base",
        "eip155:8453",
        "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    ),
    (
        "base-sepolia",
        "eip155:84532",
        "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    ),
    (
        "ethereum",
        "eip155:1",
        "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
    ),
    (
        "arbitrum",
        "eip155:42161",
        "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
    ),
    (
        "polygon",
        "eip155:137",
        "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
    ),
];

/// The CAIP-2 id of a network named either way, if known.
pub fn caip2(network: &str) -> Option<&'static str> {
    KNOWN_NETWORKS
        .iter()
        .find(|(name, id, _)| name.eq_ignore_ascii_case(network) || *id == network)
        .map(|(_, id, _)| *id)
}

/// The v1 name of a CAIP-2 network, if known.
pub fn v1_name(caip2: &str) -> Option<&'static str> {
    KNOWN_NETWORKS
        .iter()
        .find(|(_, id, _)| *id == caip2)
        .map(|(name, _, _)| *name)
}

/// Whether `asset` is the USDC contract on `caip2`.
pub fn is_usdc(caip2: &str, asset: &str) -> bool {
    KNOWN_NETWORKS
        .iter()
        .any(|(_, id, usdc)| *id == caip2 && usdc.eq_ignore_ascii_case(asset))
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    #[error("network {0:?} is not in the conversion price table")]
    UnknownNetwork(String),
    #[error("asset {asset:?} on {network} is not in the conversion price table")]
    UnknownAsset { network: String, asset: String },
    #[error("the amount is too large to quote")]
    TooLarge,
}

impl From<ConversionError> for crate::error::ApiError {
    fn from(e: ConversionError) -> Self {
        let code = match e {
            ConversionError::UnknownNetwork(_) => ErrorCode::UnknownNetwork,
            ConversionError::UnknownAsset { .. } => ErrorCode::UnknownAsset,
            ConversionError::TooLarge => ErrorCode::AmountTooLarge,
        };
        crate::error::ApiError::unprocessable(code, e.to_string())
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Step {
    /// `swap` or `bridge`.
    #[schema(pattern = "^(swap|bridge)$")]
    pub kind: &'static str,
    /// What is held before the step.
    pub from: Holding,
    /// What is held after it.
    pub to: Holding,
    #[schema(value_type = f64, minimum = 0)]
    pub fee_usd: Usd,
    #[schema(value_type = f64, minimum = 0)]
    pub gas_usd: Usd,
    pub via: &'static str,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Plan {
    /// The caller's asset.
    pub start: StartAsset,
    /// What to arrive with.
    pub target: TargetAmount,
    pub steps: Vec<Step>,
    /// Fees and gas of every step.
    #[schema(value_type = f64, minimum = 0)]
    pub estimated_cost_usd: Usd,
    /// Target amount plus cost: the value the caller must start with.
    #[schema(value_type = f64, minimum = 0)]
    pub total_usd: Usd,
    /// `total_usd` in atomic units of the starting asset, rounded up.
    #[schema(schema_with = crate::money::units_schema)]
    pub required_start_amount: String,
    pub prices_as_of: String,
    /// How to make the steps: in the caller's wallet, or through an exchange.
    pub handoff: ConversionHandoff,
}

fn holding(network: &str, asset: &str) -> Holding {
    Holding {
        asset: asset.to_owned(),
        network: network.to_owned(),
    }
}

// The plan's parts. Fields in name order: the order these objects had when they were built
// as `json!` maps, so the answer's bytes did not change when they got types.

/// An asset on a network.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Holding {
    /// Its symbol (`USDC`, `ETH`, ...).
    pub asset: String,
    pub network: String,
}

/// The caller's starting asset and its price.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartAsset {
    pub asset: String,
    pub decimals: u32,
    pub network: String,
    /// Decimal dollars per whole unit.
    pub price_usd: String,
}

/// The USDC to arrive with on the settlement network.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TargetAmount {
    /// Always `USDC`.
    pub asset: &'static str,
    /// In atomic units (6 decimals).
    #[schema(schema_with = crate::money::units_schema)]
    pub amount_units: String,
    /// In decimal dollars.
    pub amount_usd: String,
    pub network: String,
}

/// The two ways to make the plan's steps.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConversionHandoff {
    pub exchange: ExchangeHandoff,
    pub wallet: WalletHandoff,
}

/// Buying the settlement asset on an exchange.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExchangeHandoff {
    pub instructions: String,
    /// Always `exchange`.
    pub kind: &'static str,
}

/// Making the steps in the caller's wallet, then paying.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WalletHandoff {
    /// Always `USDC`.
    pub asset: &'static str,
    pub instructions: String,
    /// Always `wallet`.
    pub kind: &'static str,
    pub network: String,
}

/// A conversion quote for a service: where its money settles and the route there.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversionQuote {
    /// Always true.
    ok: bool,
    service_id: String,
    slug: String,
    settlement_asset: SettlementAsset,
    route: Plan,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettlementAsset {
    /// CAIP-2.
    network: String,
    /// The asset's contract address.
    asset: String,
    /// Always `USDC`.
    symbol: &'static str,
}

fn find<'a>(
    table: &'a ConversionTable,
    network: &str,
    symbol: &str,
) -> Result<&'a PricedAsset, ConversionError> {
    let on_network: Vec<&PricedAsset> = table
        .assets
        .iter()
        .filter(|a| a.network == network)
        .collect();
    if on_network.is_empty() {
        return Err(ConversionError::UnknownNetwork(network.to_string()));
    }
    on_network
        .into_iter()
        .find(|a| a.symbol.eq_ignore_ascii_case(symbol))
        .ok_or_else(|| ConversionError::UnknownAsset {
            network: network.to_string(),
            asset: symbol.to_string(),
        })
}

fn bps(value: Usd, bps: u64) -> Usd {
    // Rounded up: a quote never understates a fee.
    Usd::from_units((u128::from(value.units()) * u128::from(bps)).div_ceil(10_000) as u64)
}

/// The route from `start_asset` on `start_network` to `target_amount` of USDC on
/// `target_network`.
pub fn plan(
    table: &ConversionTable,
    start_network: &str,
    start_asset: &str,
    target_network: &str,
    target_amount: Usd,
) -> Result<Plan, ConversionError> {
    let start_id = caip2(start_network).unwrap_or(start_network);
    let start = find(table, start_id, start_asset)?;
    let target = find(table, target_network, "USDC")?;
    let mut steps = Vec::new();
    let mut cost = Usd::ZERO;
    let is_usdc = start.symbol.eq_ignore_ascii_case("USDC");
    let add = |a: Usd, b: Usd| a.checked_add(b).ok_or(ConversionError::TooLarge);
    if !is_usdc {
        let fee = bps(target_amount, table.swap_fee_bps);
        cost = add(add(cost, fee)?, start.gas)?;
        steps.push(Step {
            kind: "swap",
            from: holding(&start.network, &start.symbol),
            to: holding(&start.network, "USDC"),
            fee_usd: fee,
            gas_usd: start.gas,
            via: "a DEX aggregator in your wallet",
        });
    }
    if start.network != target.network {
        cost = add(add(cost, table.bridge_fee)?, start.gas)?;
        steps.push(Step {
            kind: "bridge",
            from: holding(&start.network, "USDC"),
            to: holding(&target.network, "USDC"),
            fee_usd: table.bridge_fee,
            gas_usd: start.gas,
            via: "Circle CCTP (native USDC burn and mint)",
        });
    }
    let total = add(target_amount, cost)?;
    // total micro-dollars × 10^decimals / price-in-micro-dollars, rounded up.
    let scale = 10u128
        .checked_pow(start.decimals)
        .ok_or(ConversionError::TooLarge)?;
    let required =
        (u128::from(total.units()) * scale).div_ceil(u128::from(start.usd_micros.max(1)));
    let handoff = ConversionHandoff {
        wallet: WalletHandoff {
            kind: "wallet",
            instructions: if steps.is_empty() {
                "You already hold the settlement asset: sign the x402 payment directly.".to_string()
            } else {
                format!("In your wallet, {} then pay with x402.", steps.iter().map(|s| s.kind).collect::<Vec<_>>().join(" and "))
            },
            network: target.network.clone(),
            asset: "USDC",
        },
        exchange: ExchangeHandoff {
            kind: "exchange",
            instructions: format!("Buy at least {total} USD of USDC on an exchange and withdraw it on {} to the wallet that will sign the payment.", target.network),
        },
    };
    Ok(Plan {
        start: StartAsset {
            network: start.network.clone(),
            asset: start.symbol.clone(),
            decimals: start.decimals,
            price_usd: Usd::from_units(start.usd_micros).to_string(),
        },
        target: TargetAmount {
            network: target.network.clone(),
            asset: "USDC",
            amount_usd: target_amount.to_string(),
            amount_units: target_amount.units().to_string(),
        },
        steps,
        estimated_cost_usd: cost,
        total_usd: total,
        required_start_amount: required.to_string(),
        prices_as_of: table.as_of.clone(),
        handoff,
    })
}

/// What `POST /ai/conversion/quote` (and the MCP tool `conversion_quote`) is asked.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversionRequest {
    /// Endpoint slug or id.
    service_id: String,
    /// CAIP-2 id (`eip155:1`) or x402 v1 name (`ethereum`).
    start_network: String,
    /// Asset symbol, e.g. `ETH` or `USDC`.
    start_asset: String,
    /// USD to arrive with; defaults to the service's price.
    #[serde(default)]
    #[schema(schema_with = crate::money::optional_usd_schema)]
    amount: Option<Usd>,
}

/// The conversion quote asked for by `request`, for an anonymous caller or `caller`.
pub fn requested(
    parts: &super::Parts<'_>,
    caller: Option<&Caller>,
    request: &ConversionRequest,
) -> ApiResult<ConversionQuote> {
    crate::rate_limit::anonymous_write()?;
    let input = ConversionInput {
        service_id: &request.service_id,
        start_network: &request.start_network,
        start_asset: &request.start_asset,
        amount: request.amount,
    };
    quote(
        parts.catalog,
        &parts.config.payment,
        &parts.config.conversion,
        caller,
        &input,
    )
}

/// What a conversion quote is asked for, by [`requested`] or by the `conversion_quote`
/// built-in.
pub struct ConversionInput<'a> {
    pub service_id: &'a str,
    pub start_network: &'a str,
    pub start_asset: &'a str,
    /// USD to arrive with; `None` takes the service's price.
    pub amount: Option<Usd>,
}

/// The one conversion quote behind `POST /ai/conversion/quote` and the `conversion_quote`
/// handler type (the `conversion-quote-demo` endpoint).
pub fn quote(
    catalog: &Registry,
    payment: &PaymentConfig,
    table: &ConversionTable,
    caller: Option<&Caller>,
    request: &ConversionInput<'_>,
) -> ApiResult<ConversionQuote> {
    let compiled = catalog
        .get(request.service_id)
        .or_else(|| {
            catalog
                .all()
                .into_iter()
                .find(|c| c.endpoint.id == request.service_id)
        })
        .filter(|c| endpoints::visible(&c.endpoint, caller))
        .ok_or_else(|| {
            ApiError::not_found(
                ErrorCode::ServiceNotFound,
                format!("no service {:?}", request.service_id),
            )
        })?;
    let settlement = payment
        .networks
        .first()
        .ok_or_else(|| ApiError::internal("no payment network is configured"))?;
    let amount = request.amount.unwrap_or(compiled.endpoint.price_usd);
    let plan = plan(
        table,
        request.start_network,
        request.start_asset,
        &settlement.caip2,
        amount,
    )?;
    Ok(ConversionQuote {
        ok: true,
        service_id: compiled.endpoint.id.clone(),
        slug: compiled.endpoint.slug.clone(),
        settlement_asset: SettlementAsset {
            network: settlement.caip2.clone(),
            asset: settlement.asset.clone(),
            symbol: "USDC",
        },
        route: plan,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usdc_on_the_settlement_network_needs_nothing() {
        let table = ConversionTable::builtin();
        let plan = plan(
            &table,
            "base-sepolia",
            "usdc",
            "eip155:84532",
            Usd::from_units(1000),
        )
        .unwrap();
        assert!(plan.steps.is_empty());
        assert_eq!(plan.estimated_cost_usd, Usd::ZERO);
        assert_eq!(plan.required_start_amount, "1000");
    }

    #[test]
    fn eth_elsewhere_swaps_then_bridges_with_exact_costs() {
        let table = ConversionTable::builtin();
        let plan = plan(
            &table,
            "eip155:1",
            "ETH",
            "eip155:8453",
            Usd::from_units(10_000_000),
        )
        .unwrap();
        assert_eq!(
            plan.steps.iter().map(|s| s.kind).collect::<Vec<_>>(),
            ["swap", "bridge"]
        );
        // swap fee 0.3% of $10 = $0.03; gas $1.50 twice; bridge $0.10.
        assert_eq!(
            plan.estimated_cost_usd,
            Usd::from_units(30_000 + 1_500_000 * 2 + 100_000)
        );
        assert_eq!(plan.total_usd, Usd::from_units(13_130_000));
        // $13.13 at $3000/ETH = 0.00437666… ETH, rounded up in wei.
        assert_eq!(plan.required_start_amount, "4376666666666667");
    }

    #[test]
    fn unknown_network_and_asset_are_named() {
        let table = ConversionTable::builtin();
        assert!(matches!(
            plan(&table, "eip155:999", "ETH", "eip155:8453", Usd::ZERO),
            Err(ConversionError::UnknownNetwork(_))
        ));
        assert!(matches!(
            plan(&table, "base", "DOGE", "eip155:8453", Usd::ZERO),
            Err(ConversionError::UnknownAsset { .. })
        ));
    }
}
