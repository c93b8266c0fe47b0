//! Payments by Permit2 signature transfer, shared by the two schemes that use it: `exact` on a
//! network whose asset is paid with Permit2 (`extra.assetTransferMethod: "permit2"`, for
//! tokens without EIP-3009) and `upto` (always Permit2).
//!
//! Wire payload: `{signature, permit2Authorization:{from, permitted:{token, amount}, spender,
//! nonce, deadline, witness:{to, validAfter} | {to, facilitator, validAfter}}}`, a
//! `PermitWitnessTransferFrom` signed under the Permit2 contract's EIP-712 domain
//! `{name:"Permit2", chainId, verifyingContract: PERMIT2}`. The spender is x402's proxy of the
//! scheme, which alone may pull the tokens and only to `witness.to`; `upto`'s witness also
//! names the facilitator that may settle, and its proxy takes an amount up to the permitted
//! one. The two witnesses are different EIP-712 types (`Witness(address to,uint256
//! validAfter)` and `Witness(address to,address facilitator,uint256 validAfter)`).
//!
//! Checked before the work runs, as x402's reference facilitator checks it: the signer
//! recovered equals `from`, the spender is the scheme's proxy, the witness pays our `payTo`
//! (and for `upto` names the facilitator we offered), the token is the asset, the permitted
//! amount is the offered one exactly, `validAfter` has passed and the deadline leaves the
//! settle margin. Nonce freshness is the seller's job (`payments::nonces`); Permit2's nonces
//! are one space per owner across tokens, so the claim is keyed by the Permit2 contract.

use std::str::FromStr;

use alloy_primitives::{address, Address, Signature, B256, U256};
use alloy_sol_types::{Eip712Domain, SolStruct};
use serde::{Deserialize, Serialize};

use crate::config::NetworkConfig;
use crate::evm;
use crate::requirements::{Offer, PaymentRequirements};
use crate::{PaymentError, Reason};

/// Uniswap's Permit2, at the same address on every chain it is deployed to.
pub const PERMIT2: Address = address!("000000000022D473030F116dDEE9F6B43aC78BA3");

/// x402's proxy for `exact` by Permit2 (`x402ExactPermit2Proxy`).
pub const EXACT_PROXY: Address = address!("402085c248EeA27D92E8b30b2C58ed07f9E20001");

/// x402's proxy for `upto` (`x402UptoPermit2Proxy`).
pub const UPTO_PROXY: Address = address!("4020A4f3b7b90ccA423B9fabCc0CE57C6C240002");

/// The typed data of `exact` by Permit2.
pub mod exact {
    alloy_sol_types::sol! {
        #[derive(Debug, PartialEq, Eq)]
        struct TokenPermissions {
            address token;
            uint256 amount;
        }

        /// The exact proxy's witness: whom it pays, and from when.
        #[derive(Debug, PartialEq, Eq)]
        struct Witness {
            address to;
            uint256 validAfter;
        }

        #[derive(Debug, PartialEq, Eq)]
        struct PermitWitnessTransferFrom {
            TokenPermissions permitted;
            address spender;
            uint256 nonce;
            uint256 deadline;
            Witness witness;
        }
    }
}

/// The typed data of `upto`.
pub mod upto {
    alloy_sol_types::sol! {
        #[derive(Debug, PartialEq, Eq)]
        struct TokenPermissions {
            address token;
            uint256 amount;
        }

        /// The upto proxy's witness: whom it pays, who may settle, and from when.
        #[derive(Debug, PartialEq, Eq)]
        struct Witness {
            address to;
            address facilitator;
            uint256 validAfter;
        }

        #[derive(Debug, PartialEq, Eq)]
        struct PermitWitnessTransferFrom {
            TokenPermissions permitted;
            address spender;
            uint256 nonce;
            uint256 deadline;
            Witness witness;
        }
    }
}

/// Which scheme a permit pays under: it decides the witness type, the proxy and the checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Exact,
    Upto,
}

impl Kind {
    /// The proxy a permit of this kind must name as its spender.
    pub fn proxy(self) -> Address {
        match self {
            Kind::Exact => EXACT_PROXY,
            Kind::Upto => UPTO_PROXY,
        }
    }
}

/// `permitted` on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permitted {
    pub token: String,
    pub amount: String,
}

/// `witness` on the wire; `facilitator` only in an `upto` permit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WitnessText {
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facilitator: Option<String>,
    pub valid_after: String,
}

/// The permit as the payer sends it: every number and address a string.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Authorization {
    pub from: String,
    pub permitted: Permitted,
    pub spender: String,
    pub nonce: String,
    pub deadline: String,
    pub witness: WitnessText,
}

/// The payload on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Payload {
    pub signature: String,
    pub permit2_authorization: Authorization,
}

/// A payload read into typed values: what verification checks and settlement submits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Permit {
    pub kind: Kind,
    pub owner: Address,
    pub token: Address,
    pub amount: U256,
    pub spender: Address,
    pub nonce: U256,
    pub deadline: U256,
    pub to: Address,
    /// `upto` only.
    pub facilitator: Option<Address>,
    pub valid_after: U256,
    pub signature: Signature,
}

impl Permit {
    /// The payload's values as `kind` reads them, refused with `invalid_payload` or the
    /// signature reason where one does not parse. Nothing is checked against an offer.
    pub fn parse(payload: &Payload, kind: Kind) -> Result<Permit, PaymentError> {
        let a = &payload.permit2_authorization;
        let facilitator = match (kind, &a.witness.facilitator) {
            (Kind::Upto, Some(text)) => Some(address_of("witness.facilitator", text)?),
            (Kind::Upto, None) => {
                return Err(refused(
                    Reason::InvalidPayload,
                    "an upto permit's witness names its facilitator",
                ))
            }
            (Kind::Exact, None) => None,
            (Kind::Exact, Some(_)) => {
                return Err(refused(
                    Reason::InvalidPayload,
                    "an exact permit's witness is {to, validAfter}: it names no facilitator",
                ))
            }
        };
        Ok(Permit {
            kind,
            owner: address_of("from", &a.from)?,
            token: address_of("permitted.token", &a.permitted.token)?,
            amount: uint("permitted.amount", &a.permitted.amount)?,
            spender: address_of("spender", &a.spender)?,
            nonce: uint("nonce", &a.nonce)?,
            deadline: uint("deadline", &a.deadline)?,
            to: address_of("witness.to", &a.witness.to)?,
            facilitator,
            valid_after: uint("witness.validAfter", &a.witness.valid_after)?,
            signature: evm::parse_signature(&payload.signature).map_err(|_| {
                refused(
                    Reason::Permit2Signature,
                    "the signature is not 65 hex bytes with a valid v",
                )
            })?,
        })
    }

    /// The EIP-712 hash the owner signed.
    pub fn signing_hash(&self, network: &NetworkConfig) -> B256 {
        let domain = domain(network);
        match self.kind {
            Kind::Exact => exact::PermitWitnessTransferFrom {
                permitted: exact::TokenPermissions {
                    token: self.token,
                    amount: self.amount,
                },
                spender: self.spender,
                nonce: self.nonce,
                deadline: self.deadline,
                witness: exact::Witness {
                    to: self.to,
                    validAfter: self.valid_after,
                },
            }
            .eip712_signing_hash(&domain),
            Kind::Upto => upto::PermitWitnessTransferFrom {
                permitted: upto::TokenPermissions {
                    token: self.token,
                    amount: self.amount,
                },
                spender: self.spender,
                nonce: self.nonce,
                deadline: self.deadline,
                witness: upto::Witness {
                    to: self.to,
                    facilitator: self.facilitator.unwrap_or_default(),
                    validAfter: self.valid_after,
                },
            }
            .eip712_signing_hash(&domain),
        }
    }
}

/// The EIP-712 domain of Permit2 on a network.
pub fn domain(network: &NetworkConfig) -> Eip712Domain {
    Eip712Domain::new(
        Some("Permit2".into()),
        None,
        Some(U256::from(network.chain_id)),
        Some(PERMIT2),
        None,
    )
}

fn refused(reason: Reason, message: impl Into<String>) -> PaymentError {
    PaymentError::refused(reason, message)
}

fn address_of(field: &str, text: &str) -> Result<Address, PaymentError> {
    Address::from_str(text.trim()).map_err(|_| {
        refused(
            Reason::InvalidPayload,
            format!("permit2Authorization.{field} is not an EVM address"),
        )
    })
}

fn uint(field: &str, text: &str) -> Result<U256, PaymentError> {
    U256::from_str(text.trim()).map_err(|_| {
        refused(
            Reason::InvalidPayload,
            format!("permit2Authorization.{field} is not an unsigned integer"),
        )
    })
}

/// Checks `payload` as a `kind` permit against `requirement` (the offer's terms on `network`)
/// at unix time `now`.
pub fn verify(
    payload: &Payload,
    kind: Kind,
    network: &NetworkConfig,
    requirement: &PaymentRequirements,
    offer: &Offer,
    now: u64,
) -> Result<Permit, PaymentError> {
    let permit = Permit::parse(payload, kind)?;
    let signer =
        evm::signer(&permit.signing_hash(network), &permit.signature).map_err(|e| match e {
            PaymentError::Refused { message, .. } => refused(Reason::Permit2Signature, message),
            other => other,
        })?;
    if signer != permit.owner {
        return Err(refused(
            Reason::Permit2Signature,
            "the signature was not made by permit2Authorization.from over this permit",
        ));
    }
    check_terms(&permit, requirement, offer, now)?;
    Ok(permit)
}

/// What a remote facilitator's verification needs read here: the payload's values (payer and
/// nonce, for the claim) and the terms (our settle margin is stricter than the facilitator's).
/// The signature is the facilitator's to check.
pub fn read(
    payload: &Payload,
    kind: Kind,
    requirement: &PaymentRequirements,
    offer: &Offer,
    now: u64,
) -> Result<Permit, PaymentError> {
    let permit = Permit::parse(payload, kind)?;
    check_terms(&permit, requirement, offer, now)?;
    Ok(permit)
}

/// The permit's terms against the offer: spender, recipient, facilitator, token, amount and
/// validity window (with the settle margin).
fn check_terms(
    permit: &Permit,
    requirement: &PaymentRequirements,
    offer: &Offer,
    now: u64,
) -> Result<(), PaymentError> {
    let asset = Address::from_str(&requirement.asset)
        .map_err(|_| PaymentError::Facilitator("configured asset is not an address".into()))?;
    let pay_to = Address::from_str(&requirement.pay_to)
        .map_err(|_| PaymentError::Facilitator("configured payTo is not an address".into()))?;
    let proxy = permit.kind.proxy();
    if permit.spender != proxy {
        return Err(refused(
            Reason::Permit2Spender,
            format!("permit2Authorization.spender must be x402's proxy {proxy}"),
        ));
    }
    if permit.to != pay_to {
        return Err(refused(
            Reason::Permit2RecipientMismatch,
            format!(
                "permit2Authorization.witness.to must be {}",
                requirement.pay_to
            ),
        ));
    }
    if permit.kind == Kind::Upto {
        let offered = requirement
            .extra
            .facilitator_address
            .as_deref()
            .and_then(|text| Address::from_str(text).ok())
            .ok_or_else(|| {
                PaymentError::Facilitator("the upto offer names no facilitator".into())
            })?;
        if permit.facilitator != Some(offered) {
            return Err(refused(
                Reason::UptoFacilitatorMismatch,
                format!("permit2Authorization.witness.facilitator must be {offered}"),
            ));
        }
    }
    if permit.token != asset {
        return Err(refused(
            Reason::Permit2TokenMismatch,
            format!(
                "permit2Authorization.permitted.token must be {}",
                requirement.asset
            ),
        ));
    }
    if permit.amount != U256::from(offer.price.units()) {
        return Err(refused(
            Reason::Permit2AmountMismatch,
            format!(
                "permit2Authorization.permitted.amount must be exactly {}{}",
                requirement.amount,
                match permit.kind {
                    Kind::Exact => "",
                    Kind::Upto => " (the most this call can cost)",
                }
            ),
        ));
    }
    if permit.valid_after > U256::from(now) {
        return Err(refused(
            Reason::Permit2NotYetValid,
            "the permit is not valid yet (witness.validAfter is in the future)",
        ));
    }
    if permit.deadline <= U256::from(now) {
        return Err(refused(
            Reason::Permit2DeadlineExpired,
            "the permit has expired (its deadline has passed)",
        ));
    }
    let margin = offer.settle_margin_secs;
    if permit.deadline <= U256::from(now.saturating_add(margin)) {
        return Err(refused(
            Reason::Permit2DeadlineExpired,
            format!(
                "the permit expires too soon: its deadline must be at least {margin} s from now, so it can be settled"
            ),
        ));
    }
    Ok(())
}

/// The paying side: sign a permit as x402's clients do. The integration tests and the
/// benchmark pay with it; the server never signs payments.
pub mod signing {
    use alloy_signer::SignerSync;
    use alloy_signer_local::PrivateKeySigner;
    use serde_json::{json, Value};

    use super::*;
    use crate::verify::unix_now;

    /// A signed `kind` permit for `requirement`, valid from now for `maxTimeoutSeconds`, with
    /// `adjust` applied to it before signing.
    pub fn sign(
        signer: &PrivateKeySigner,
        kind: Kind,
        network: &NetworkConfig,
        requirement: &PaymentRequirements,
        adjust: impl FnOnce(&mut Authorization),
    ) -> Result<Value, PaymentError> {
        use rand::RngCore;
        let mut nonce = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let mut authorization = Authorization {
            from: signer.address().to_string(),
            permitted: Permitted {
                token: requirement.asset.clone(),
                amount: requirement.amount.clone(),
            },
            spender: kind.proxy().to_string(),
            nonce: U256::from_be_bytes(nonce).to_string(),
            deadline: (unix_now() + requirement.max_timeout_seconds).to_string(),
            witness: WitnessText {
                to: requirement.pay_to.clone(),
                facilitator: match kind {
                    Kind::Exact => None,
                    Kind::Upto => Some(
                        requirement
                            .extra
                            .facilitator_address
                            .clone()
                            .unwrap_or_default(),
                    ),
                },
                valid_after: "0".into(),
            },
        };
        adjust(&mut authorization);
        let payload = Payload {
            // Any well-formed signature: only the values are read to make the hash.
            signature: format!("0x{}1b", "11".repeat(64)),
            permit2_authorization: authorization,
        };
        let hash = Permit::parse(&payload, kind)?.signing_hash(network);
        let signature = signer
            .sign_hash_sync(&hash)
            .map_err(|e| PaymentError::Facilitator(format!("signing failed: {e}")))?;
        Ok(json!({
            "signature": signature.to_string(),
            "permit2Authorization": payload.permit2_authorization,
        }))
    }
}

#[cfg(test)]
mod tests {
    use alloy_signer_local::PrivateKeySigner;
    use serde_json::json;

    use super::*;
    use crate::config::TransferMethod;
    use crate::header::{self, PaymentPayload};
    use crate::requirements::Terms;
    use crate::verify::{unix_now, verify as verify_payment};
    use crate::ResourceInfo;
    use toolhost_values::error::ErrorCode;
    use toolhost_values::money::Usd;

    fn offer(pay_to: Address) -> Offer {
        let network = NetworkConfig {
            transfer_method: TransferMethod::Permit2,
            ..NetworkConfig::base_sepolia()
        };
        let resource = ResourceInfo {
            url: "http://x/tools/a".into(),
            description: "A".into(),
            mime_type: "application/json".into(),
        };
        Offer::new(
            Terms::for_tests(&[network], &pay_to.to_string()),
            resource,
            Usd::from_units(1000),
        )
    }

    fn wire(offer: &Offer, payload: serde_json::Value) -> PaymentPayload {
        header::decode(&header::encode(
            &json!({"x402Version": 2, "accepted": offer.accepts[0].1, "payload": payload}),
        ))
        .unwrap()
    }

    fn code(result: Result<crate::verify::Verified, PaymentError>) -> ErrorCode {
        match result {
            Err(PaymentError::Refused { reason, .. }) => reason.code(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// `exact` on a network whose asset is paid by Permit2: the requirement says so, a permit
    /// to x402's exact proxy pays, and what could not settle there is refused.
    #[test]
    fn exact_by_permit2_pays_where_the_asset_wants_it() {
        let signer = PrivateKeySigner::random();
        let offer = offer(PrivateKeySigner::random().address());
        let (network, requirement) = &offer.accepts[0];
        assert_eq!(requirement.scheme, "exact");
        assert_eq!(
            json!(requirement)["extra"]["assetTransferMethod"],
            "permit2"
        );
        let sign = |adjust: &dyn Fn(&mut Authorization)| {
            signing::sign(&signer, Kind::Exact, network, requirement, adjust).unwrap()
        };
        let verified = verify_payment(&wire(&offer, sign(&|_| {})), &offer, unix_now()).unwrap();
        assert_eq!(verified.payer(), signer.address().to_checksum(None));
        assert_eq!(verified.nonce_space(), PERMIT2.to_checksum(None));
        // The upto proxy is not the exact one.
        let upto = sign(&|a| a.spender = UPTO_PROXY.to_string());
        assert_eq!(
            code(verify_payment(&wire(&offer, upto), &offer, unix_now())),
            ErrorCode::InvalidPermit2Spender
        );
        // An exact witness names no facilitator.
        let mut named = sign(&|_| {});
        named["permit2Authorization"]["witness"]["facilitator"] = json!(PERMIT2.to_string());
        assert_eq!(
            code(verify_payment(&wire(&offer, named), &offer, unix_now())),
            ErrorCode::InvalidPayload
        );
        // An EIP-3009 authorization could not settle an asset paid by Permit2.
        let eip3009 =
            crate::schemes::exact_evm::signing::sign(&signer, network, requirement, |_| {})
                .unwrap();
        assert_eq!(
            code(verify_payment(&wire(&offer, eip3009), &offer, unix_now())),
            ErrorCode::InvalidPayload
        );
        // Tampered after signing.
        let mut tampered = sign(&|_| {});
        tampered["permit2Authorization"]["nonce"] = json!("1");
        assert_eq!(
            code(verify_payment(&wire(&offer, tampered), &offer, unix_now())),
            ErrorCode::InvalidPermit2Signature
        );
    }

    /// The typed data hashed is Permit2's with x402's witnesses, as viem encodes them: the
    /// type string with its referenced types in alphabetical order.
    #[test]
    fn the_type_strings_are_x402s() {
        assert_eq!(
            exact::PermitWitnessTransferFrom::eip712_encode_type(),
            "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,uint256 validAfter)"
        );
        assert_eq!(
            upto::PermitWitnessTransferFrom::eip712_encode_type(),
            "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)"
        );
    }
}
