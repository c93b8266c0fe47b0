//! What we ask a caller to pay, and the 402 answer that asks for it.
//!
//! # The 402 answer
//! - Header `PAYMENT-REQUIRED`: base64 of the v2 object
//!   `{x402Version:2, error, resource:{url,description,mimeType}, accepts:[{scheme:"exact",
//!   network (CAIP-2), amount (atomic units, string), asset, payTo, maxTimeoutSeconds,
//!   extra:{name,version}}], extensions?}`. v2 clients (`@x402/fetch`) read only this header.
//!   `extensions` declares the x402 extensions the offer speaks (endpoint calls: `bazaar` and
//!   `payment-identifier`).
//! - Body: the x402 v1 answer `{x402Version:1, error, accepts:[{scheme, network (v1 name),
//!   maxAmountRequired, resource, description, mimeType, payTo, maxTimeoutSeconds, asset,
//!   extra}]}`, which v1 clients read, plus `ok:false`, `code`, `message` and the v2 object again
//!   as `paymentRequired`.
//!
//! This is the one place the service departs from its error shape
//! (`{ok:false, error:{code,message}}`): x402 v1 fixes `error` to be a string, and strict v1
//! clients (e.g. typed models with `error: str`) reject an object there. So on a 402 `error` is
//! the stable reason code (`payment_required`, or an x402 refusal reason such as
//! `invalid_exact_evm_payload_signature`), repeated as top-level `code` beside `message`.

use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, StatusCode};
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::PaymentError;
use crate::config::{NetworkConfig, TransferMethod};
use toolhost_values::error::{ApiError, ErrorCode};
use toolhost_values::money::Usd;

pub const PAYMENT_REQUIRED_HEADER: HeaderName = HeaderName::from_static("payment-required");

/// The resource being paid for, as x402 describes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    pub url: String,
    pub description: String,
    pub mime_type: String,
}

/// The requirement's `extra`: the EIP-712 domain name and version of the asset contract,
/// needed to sign for it, and what a scheme adds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssetExtra {
    pub name: String,
    pub version: String,
    /// `upto`: the address the payer's Permit2 witness lets settle (the facilitator's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facilitator_address: Option<String>,
    /// `exact`: `"permit2"` where the asset is paid by Permit2 rather than EIP-3009.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asset_transfer_method: Option<String>,
}

/// One accepted way to pay, in the v2 shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentRequirements {
    pub scheme: String,
    /// CAIP-2, e.g. `eip155:84532`.
    pub network: String,
    /// Atomic units of the asset, as a decimal string.
    #[schema(schema_with = toolhost_values::money::units_schema)]
    pub amount: String,
    pub asset: String,
    pub pay_to: String,
    pub max_timeout_seconds: u64,
    pub extra: AssetExtra,
}

/// The same requirement in the v1 shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequirementsV1 {
    pub scheme: String,
    /// v1 network name, e.g. `base-sepolia`.
    pub network: String,
    #[schema(schema_with = toolhost_values::money::units_schema)]
    pub max_amount_required: String,
    pub resource: String,
    pub description: String,
    pub mime_type: String,
    pub pay_to: String,
    pub max_timeout_seconds: u64,
    pub asset: String,
    pub extra: AssetExtra,
}

/// The x402 v2 `PaymentRequired` object: the `PAYMENT-REQUIRED` header's content.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentRequired {
    /// Always 2.
    pub x402_version: u8,
    /// The reason code; empty where the offer is advertised rather than answered.
    pub error: String,
    pub resource: ResourceInfo,
    pub accepts: Vec<PaymentRequirements>,
    /// The declared x402 extensions by key (`bazaar`, `payment-identifier`); absent when none.
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    #[schema(value_type = Object)]
    pub extensions: serde_json::Map<String, Value>,
}

/// The body of a 402 (see the module docs): the x402 v1 answer with the error-shape fields
/// beside it and the v2 object again.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PaymentRequiredBody {
    /// Always false.
    pub ok: bool,
    /// Always 1.
    pub x402_version: u8,
    /// The reason code, as x402 v1 wants it: a string.
    pub error: &'static str,
    /// The same reason code.
    pub code: &'static str,
    pub message: String,
    pub accepts: Vec<RequirementsV1>,
    pub payment_required: PaymentRequired,
}

/// What every offer of a seller asks, whatever it sells.
#[derive(Clone, Copy, Debug)]
pub struct Terms<'a> {
    /// The networks accepted, one requirement each.
    pub networks: &'a [NetworkConfig],
    /// The address paid.
    pub pay_to: &'a str,
    /// How long a signed authorization may stay valid when we ask for one.
    pub max_timeout_seconds: u64,
    /// How long an authorization must remain valid beyond now to be accepted: the paid work
    /// runs and the transfer is submitted after verification.
    pub settle_margin: Duration,
}

#[cfg(test)]
impl<'a> Terms<'a> {
    /// Five-minute authorizations, 30 s left to settle (the service's defaults).
    pub(crate) fn for_tests(networks: &'a [NetworkConfig], pay_to: &'a str) -> Self {
        Self {
            networks,
            pay_to,
            max_timeout_seconds: 300,
            settle_margin: Duration::from_secs(30),
        }
    }
}

/// How an offer prices the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pricing {
    /// `exact`: the price, all of it.
    Fixed,
    /// `upto`: the payer permits the price as a maximum; what the call reports it cost (capped
    /// by the maximum) is settled after it.
    Metered,
}

/// Everything we accept for one charge: one requirement per configured network (`exact`, or
/// `upto` for a metered charge on the networks whose facilitator settles it).
#[derive(Clone, Debug)]
pub struct Offer {
    pub resource: ResourceInfo,
    /// The price; for a metered offer, the most one call can cost.
    pub price: Usd,
    pub pricing: Pricing,
    pub accepts: Vec<(NetworkConfig, PaymentRequirements)>,
    /// Seconds an authorization must stay valid beyond now to be accepted, so it can still be
    /// settled after the handler has run.
    pub settle_margin_secs: u64,
    /// The x402 extensions declared in the v2 `PaymentRequired` (`bazaar`,
    /// `payment-identifier`), by key; the gate honours what is declared here.
    pub extensions: serde_json::Map<String, Value>,
}

impl Offer {
    /// A fixed price: `exact` on every network of `terms`.
    pub fn new(terms: Terms<'_>, resource: ResourceInfo, price: Usd) -> Self {
        Self::build(terms, resource, price, Pricing::Fixed, |_| Some(None))
    }

    /// A metered price of at most `most`: `upto` on the networks `facilitator` names the
    /// settling address of (those it does not are left out: nothing could settle there).
    pub fn metered(
        terms: Terms<'_>,
        resource: ResourceInfo,
        most: Usd,
        facilitator: impl Fn(&NetworkConfig) -> Option<String>,
    ) -> Self {
        Self::build(terms, resource, most, Pricing::Metered, |network| {
            facilitator(network).map(Some)
        })
    }

    /// One requirement per network `facilitator` answers for (with the `upto` facilitator
    /// address, if any).
    fn build(
        terms: Terms<'_>,
        resource: ResourceInfo,
        price: Usd,
        pricing: Pricing,
        facilitator: impl Fn(&NetworkConfig) -> Option<Option<String>>,
    ) -> Self {
        let scheme = match pricing {
            Pricing::Fixed => crate::schemes::exact_evm::SCHEME,
            Pricing::Metered => crate::schemes::upto_evm::SCHEME,
        };
        let accepts = terms
            .networks
            .iter()
            .filter_map(|n| {
                let facilitator_address = facilitator(n)?;
                let requirement = PaymentRequirements {
                    scheme: scheme.into(),
                    network: n.caip2.clone(),
                    amount: price.units().to_string(),
                    asset: n.asset.clone(),
                    pay_to: terms.pay_to.to_string(),
                    max_timeout_seconds: terms.max_timeout_seconds,
                    extra: AssetExtra {
                        name: n.eip712_name.clone(),
                        version: n.eip712_version.clone(),
                        facilitator_address,
                        // `upto` is always Permit2; `exact` says so where the asset wants it.
                        asset_transfer_method: (pricing == Pricing::Fixed
                            && n.transfer_method == TransferMethod::Permit2)
                            .then(|| crate::schemes::PERMIT2_METHOD.to_string()),
                    },
                };
                Some((n.clone(), requirement))
            })
            .collect();
        Self {
            resource,
            price,
            pricing,
            accepts,
            settle_margin_secs: terms.settle_margin.as_secs(),
            extensions: serde_json::Map::new(),
        }
    }

    /// Whether the offer declares the extension `key`.
    pub fn declares(&self, key: &str) -> bool {
        self.extensions.contains_key(key)
    }

    /// The requirement for a network named either way (CAIP-2 or v1 name).
    pub fn find(&self, network: &str) -> Option<&(NetworkConfig, PaymentRequirements)> {
        self.accepts
            .iter()
            .find(|(n, _)| n.caip2 == network || n.v1_name == network)
    }

    /// The v2 `PaymentRequired` object.
    pub fn v2(&self, error: &str) -> PaymentRequired {
        PaymentRequired {
            x402_version: 2,
            error: error.to_owned(),
            resource: self.resource.clone(),
            accepts: self.accepts.iter().map(|(_, r)| r.clone()).collect(),
            extensions: self.extensions.clone(),
        }
    }

    pub fn v1_accepts(&self) -> Vec<RequirementsV1> {
        self.accepts
            .iter()
            .map(|(n, r)| RequirementsV1 {
                scheme: r.scheme.clone(),
                network: n.v1_name.clone(),
                max_amount_required: r.amount.clone(),
                resource: self.resource.url.clone(),
                description: self.resource.description.clone(),
                mime_type: self.resource.mime_type.clone(),
                pay_to: r.pay_to.clone(),
                max_timeout_seconds: r.max_timeout_seconds,
                asset: r.asset.clone(),
                extra: r.extra.clone(),
            })
            .collect()
    }

    /// The 402 answer (see the module docs) with `code` as its reason.
    pub fn payment_required(&self, code: ErrorCode, message: String) -> ApiError {
        let v2 = self.v2(code.as_str());
        let header = base64::engine::general_purpose::STANDARD.encode(json!(v2).to_string());
        let body = json!(PaymentRequiredBody {
            ok: false,
            x402_version: 1,
            error: code.as_str(),
            code: code.as_str(),
            message: message.clone(),
            accepts: self.v1_accepts(),
            payment_required: v2,
        });
        let mut error = ApiError::new(StatusCode::PAYMENT_REQUIRED, code, message).with_body(body);
        if let Ok(value) = HeaderValue::from_str(&header) {
            error = error.with_header(PAYMENT_REQUIRED_HEADER, value);
        }
        error
    }

    /// A refusal becomes a 402 carrying fresh requirements; other payment errors keep their
    /// own status.
    pub fn refuse(&self, error: PaymentError) -> ApiError {
        match error {
            PaymentError::Refused { reason, message } => {
                self.payment_required(reason.code(), message)
            }
            other => other.into(),
        }
    }

    /// The first answer to an unpaid request.
    pub fn ask(&self) -> ApiError {
        let costs = match self.pricing {
            Pricing::Fixed => "costs",
            Pricing::Metered => "is metered: it costs what the call reports, at most",
        };
        let x402 = match (self.pricing, self.accepts.is_empty()) {
            (_, true) => "pay with developer credit (X-Developer-Credit): no x402 scheme settles it here",
            (Pricing::Fixed, false) => "pay with x402 (PAYMENT-SIGNATURE or X-PAYMENT) or developer credit (X-Developer-Credit)",
            (Pricing::Metered, false) => "pay with x402 `upto` (a Permit2 permit of the maximum, PAYMENT-SIGNATURE) or developer credit (X-Developer-Credit)",
        };
        self.payment_required(
            ErrorCode::PaymentRequired,
            format!(
                "{} {costs} {} USD ({} atomic units of USDC); {x402}",
                self.resource.url,
                self.price,
                self.price.units()
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer() -> Offer {
        let resource = ResourceInfo {
            url: "http://x/tools/a".into(),
            description: "A".into(),
            mime_type: "application/json".into(),
        };
        Offer::new(
            Terms::for_tests(
                &[NetworkConfig::base_sepolia()],
                "0x0000000000000000000000000000000000000001",
            ),
            resource,
            Usd::from_units(1000),
        )
    }

    #[test]
    fn asks_in_both_versions() {
        let offer = offer();
        let error = offer.ask();
        assert_eq!(error.status, StatusCode::PAYMENT_REQUIRED);
        let body = *error.body_override.clone().unwrap();
        assert_eq!(body["x402Version"], 1);
        assert_eq!(body["error"], ErrorCode::PaymentRequired.as_str());
        assert_eq!(body["accepts"][0]["maxAmountRequired"], "1000");
        assert_eq!(body["accepts"][0]["network"], "base-sepolia");
        assert_eq!(body["accepts"][0]["extra"]["name"], "USDC");
        let headers = error.headers.clone().unwrap();
        let (_, header) = headers
            .iter()
            .find(|(n, _)| n == PAYMENT_REQUIRED_HEADER)
            .unwrap();
        let decoded: Value = serde_json::from_slice(
            &base64::engine::general_purpose::STANDARD
                .decode(header.as_bytes())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(decoded["x402Version"], 2);
        assert_eq!(decoded["accepts"][0]["network"], "eip155:84532");
        assert_eq!(decoded["accepts"][0]["amount"], "1000");
        assert_eq!(decoded["resource"]["url"], "http://x/tools/a");
        assert_eq!(decoded, body["paymentRequired"]);
    }

    #[test]
    fn finds_networks_by_either_name() {
        let offer = offer();
        assert!(offer.find("eip155:84532").is_some());
        assert!(offer.find("base-sepolia").is_some());
        assert!(offer.find("base").is_none());
    }
}
