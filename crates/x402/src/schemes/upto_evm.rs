//! The `upto` scheme on EVM chains: the payer signs a Permit2 `PermitWitnessTransferFrom` of a
//! maximum, and the seller settles what the call actually cost, at most that, after the work
//! (x402's `specs/schemes/upto/scheme_upto_evm.md`).
//!
//! Wire payload: `{signature, permit2Authorization:{from, permitted:{token, amount}, spender,
//! nonce, deadline, witness:{to, facilitator, validAfter}}}`, signed under the Permit2
//! contract's EIP-712 domain `{name:"Permit2", chainId, verifyingContract: PERMIT2}`. The
//! spender is x402's upto proxy, which alone may pull the tokens, only to `witness.to`, and
//! only when called by `witness.facilitator` with an amount no larger than permitted.
//!
//! What is checked before the work runs, as x402's reference facilitator checks it: the signer
//! recovered equals `from`, the spender is the proxy, the witness pays our `payTo` and names
//! the facilitator we offered, the token is the asset, the permitted amount is the offered
//! maximum exactly, `validAfter` has passed and the deadline leaves the settle margin. Nonce
//! freshness is the seller's job, as for `exact` (`payments::nonces`); Permit2's nonces are
//! one space per owner across tokens, so the claim is keyed by the Permit2 contract.

use std::str::FromStr;

use alloy_primitives::{address, Address, Signature, U256};
use alloy_sol_types::{sol, Eip712Domain, SolStruct};
use serde::{Deserialize, Serialize};

use crate::config::NetworkConfig;
use crate::evm;
use crate::requirements::{Offer, PaymentRequirements};
use crate::{PaymentError, Reason};

/// The scheme's name in requirements and payments.
pub const SCHEME: &str = "upto";

/// Uniswap's Permit2, at the same address on every chain it is deployed to.
pub const PERMIT2: Address = address!("000000000022D473030F116dDEE9F6B43aC78BA3");

/// x402's upto proxy (`x402UptoPermit2Proxy`), the spender every `upto` permit names.
pub const PROXY: Address = address!("4020A4f3b7b90ccA423B9fabCc0CE57C6C240002");

sol! {
    /// Permit2's token and amount.
    #[derive(Debug, PartialEq, Eq)]
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    /// The proxy's witness: whom it pays, who may settle, and from when.
    #[derive(Debug, PartialEq, Eq)]
    struct Witness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    /// Permit2's signature transfer with the proxy's witness, as the payer signs it.
    #[derive(Debug, PartialEq, Eq)]
    struct PermitWitnessTransferFrom {
        TokenPermissions permitted;
        address spender;
        uint256 nonce;
        uint256 deadline;
        Witness witness;
    }
}

/// `permitted` on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permitted {
    pub token: String,
    pub amount: String,
}

/// `witness` on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WitnessText {
    pub to: String,
    pub facilitator: String,
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

/// The scheme's payment payload on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Payload {
    pub signature: String,
    pub permit2_authorization: Authorization,
}

/// A payload read into typed values: what verification checks and settlement submits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Permit {
    pub owner: Address,
    pub message: PermitWitnessTransferFrom,
    pub signature: Signature,
}

impl Permit {
    /// The payload's values, refused with `invalid_payload` or the signature reason where one
    /// does not parse. Nothing is checked against an offer.
    pub fn parse(payload: &Payload) -> Result<Permit, PaymentError> {
        let a = &payload.permit2_authorization;
        Ok(Permit {
            owner: address_of("from", &a.from)?,
            message: PermitWitnessTransferFrom {
                permitted: TokenPermissions {
                    token: address_of("permitted.token", &a.permitted.token)?,
                    amount: uint("permitted.amount", &a.permitted.amount)?,
                },
                spender: address_of("spender", &a.spender)?,
                nonce: uint("nonce", &a.nonce)?,
                deadline: uint("deadline", &a.deadline)?,
                witness: Witness {
                    to: address_of("witness.to", &a.witness.to)?,
                    facilitator: address_of("witness.facilitator", &a.witness.facilitator)?,
                    validAfter: uint("witness.validAfter", &a.witness.valid_after)?,
                },
            },
            signature: evm::parse_signature(&payload.signature).map_err(|_| {
                refused(
                    Reason::Permit2Signature,
                    "the signature is not 65 hex bytes with a valid v",
                )
            })?,
        })
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

/// The facilitator address an `upto` requirement offers (`extra.facilitatorAddress`).
fn offered_facilitator(requirement: &PaymentRequirements) -> Result<Address, PaymentError> {
    requirement
        .extra
        .facilitator_address
        .as_deref()
        .and_then(|text| Address::from_str(text).ok())
        .ok_or_else(|| PaymentError::Facilitator("the upto offer names no facilitator".into()))
}

/// Checks `payload` against `requirement` (the offer's terms on `network`) at unix time `now`.
pub fn verify(
    payload: &Payload,
    network: &NetworkConfig,
    requirement: &PaymentRequirements,
    offer: &Offer,
    now: u64,
) -> Result<Permit, PaymentError> {
    let permit = Permit::parse(payload)?;
    let signer = evm::signer(
        &permit.message.eip712_signing_hash(&domain(network)),
        &permit.signature,
    )
    .map_err(|e| match e {
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
    requirement: &PaymentRequirements,
    offer: &Offer,
    now: u64,
) -> Result<Permit, PaymentError> {
    let permit = Permit::parse(payload)?;
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
    let msg = &permit.message;
    let asset = Address::from_str(&requirement.asset)
        .map_err(|_| PaymentError::Facilitator("configured asset is not an address".into()))?;
    let pay_to = Address::from_str(&requirement.pay_to)
        .map_err(|_| PaymentError::Facilitator("configured payTo is not an address".into()))?;
    if msg.spender != PROXY {
        return Err(refused(
            Reason::Permit2Spender,
            format!("permit2Authorization.spender must be x402's upto proxy {PROXY}"),
        ));
    }
    if msg.witness.to != pay_to {
        return Err(refused(
            Reason::Permit2RecipientMismatch,
            format!(
                "permit2Authorization.witness.to must be {}",
                requirement.pay_to
            ),
        ));
    }
    let facilitator = offered_facilitator(requirement)?;
    if msg.witness.facilitator != facilitator {
        return Err(refused(
            Reason::UptoFacilitatorMismatch,
            format!("permit2Authorization.witness.facilitator must be {facilitator}"),
        ));
    }
    if msg.permitted.token != asset {
        return Err(refused(
            Reason::Permit2TokenMismatch,
            format!(
                "permit2Authorization.permitted.token must be {}",
                requirement.asset
            ),
        ));
    }
    if msg.permitted.amount != U256::from(offer.price.units()) {
        return Err(refused(
            Reason::Permit2AmountMismatch,
            format!(
                "permit2Authorization.permitted.amount must be exactly {} (the most this call can cost)",
                requirement.amount
            ),
        ));
    }
    if msg.witness.validAfter > U256::from(now) {
        return Err(refused(
            Reason::Permit2NotYetValid,
            "the permit is not valid yet (witness.validAfter is in the future)",
        ));
    }
    if msg.deadline <= U256::from(now) {
        return Err(refused(
            Reason::Permit2DeadlineExpired,
            "the permit has expired (its deadline has passed)",
        ));
    }
    let margin = offer.settle_margin_secs;
    if msg.deadline <= U256::from(now.saturating_add(margin)) {
        return Err(refused(
            Reason::Permit2DeadlineExpired,
            format!(
                "the permit expires too soon: its deadline must be at least {margin} s from now, so it can be settled"
            ),
        ));
    }
    Ok(())
}

/// The paying side: sign a permit as x402's `upto` client does. The integration tests and the
/// benchmark pay with it; the server never signs payments.
pub mod signing {
    use alloy_signer::SignerSync;
    use alloy_signer_local::PrivateKeySigner;
    use serde_json::{json, Value};

    use super::*;
    use crate::verify::unix_now;

    /// A signed `upto` payload for `requirement`, valid from now for `maxTimeoutSeconds`, with
    /// `adjust` applied to the permit before signing.
    pub fn sign(
        signer: &PrivateKeySigner,
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
            spender: PROXY.to_string(),
            nonce: U256::from_be_bytes(nonce).to_string(),
            deadline: (unix_now() + requirement.max_timeout_seconds).to_string(),
            witness: WitnessText {
                to: requirement.pay_to.clone(),
                facilitator: requirement
                    .extra
                    .facilitator_address
                    .clone()
                    .unwrap_or_default(),
                valid_after: "0".into(),
            },
        };
        adjust(&mut authorization);
        let payload = Payload {
            signature: String::new(),
            permit2_authorization: authorization,
        };
        let permit = Permit::parse(&Payload {
            // Any well-formed signature: only the values are read here.
            signature: format!("0x{}1b", "11".repeat(64)),
            ..payload.clone()
        })?;
        let signature = signer
            .sign_hash_sync(&permit.message.eip712_signing_hash(&domain(network)))
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

    use super::signing::sign;
    use super::*;
    use crate::header::{self, PaymentPayload};
    use crate::requirements::Terms;
    use crate::schemes::{Proof, SchemePayload};
    use crate::verify::{unix_now, verify as verify_payment, Verified};
    use crate::ResourceInfo;
    use toolhost_values::error::ErrorCode;
    use toolhost_values::money::Usd;

    fn offer(pay_to: Address, facilitator: Address) -> Offer {
        let resource = ResourceInfo {
            url: "http://x/tools/metered".into(),
            description: "M".into(),
            mime_type: "application/json".into(),
        };
        Offer::metered(
            Terms::for_tests(&[NetworkConfig::base_sepolia()], &pay_to.to_string()),
            resource,
            Usd::from_units(5000),
            |_| Some(facilitator.to_string()),
        )
    }

    fn pay(
        offer: &Offer,
        signer: &PrivateKeySigner,
        adjust: impl FnOnce(&mut Authorization),
    ) -> PaymentPayload {
        let (network, requirement) = &offer.accepts[0];
        let payload = sign(signer, network, requirement, adjust).unwrap();
        header::decode(&header::encode(
            &json!({"x402Version": 2, "accepted": requirement, "payload": payload}),
        ))
        .unwrap()
    }

    fn permit(payment: &mut PaymentPayload) -> &mut Payload {
        match &mut payment.payload {
            SchemePayload::UptoEvm(payload) => payload,
            other => panic!("not an upto payment: {other:?}"),
        }
    }

    fn reason(result: Result<Verified, PaymentError>) -> ErrorCode {
        match result {
            Err(PaymentError::Refused { reason, .. }) => reason.code(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn offers_upto_with_the_facilitator_and_accepts_a_real_permit() {
        let signer = PrivateKeySigner::random();
        let facilitator = PrivateKeySigner::random().address();
        let offer = offer(PrivateKeySigner::random().address(), facilitator);
        let (_, requirement) = &offer.accepts[0];
        assert_eq!(requirement.scheme, "upto");
        assert_eq!(requirement.amount, "5000");
        assert_eq!(
            json!(requirement)["extra"]["facilitatorAddress"],
            facilitator.to_string()
        );
        let verified = verify_payment(&pay(&offer, &signer, |_| {}), &offer, unix_now()).unwrap();
        assert_eq!(verified.payer(), signer.address().to_checksum(None));
        assert!(matches!(verified.proof, Proof::UptoEvm(_)));
        // Permit2 nonces are the owner's across tokens: claimed under Permit2, not the asset.
        assert_eq!(verified.nonce_space(), PERMIT2.to_checksum(None));
    }

    #[test]
    fn refuses_with_x402_reasons() {
        let signer = PrivateKeySigner::random();
        let pay_to = PrivateKeySigner::random().address();
        let offer = offer(pay_to, PrivateKeySigner::random().address());
        let now = unix_now();
        let stranger = PrivateKeySigner::random().address().to_string();
        type Adjust = Box<dyn FnOnce(&mut Authorization)>;
        let cases: Vec<(ErrorCode, Adjust)> = vec![
            (ErrorCode::InvalidPermit2Spender, {
                let s = stranger.clone();
                Box::new(move |a| a.spender = s)
            }),
            (ErrorCode::InvalidPermit2RecipientMismatch, {
                let s = stranger.clone();
                Box::new(move |a| a.witness.to = s)
            }),
            (ErrorCode::UptoFacilitatorMismatch, {
                let s = stranger.clone();
                Box::new(move |a| a.witness.facilitator = s)
            }),
            (ErrorCode::Permit2TokenMismatch, {
                let s = stranger.clone();
                Box::new(move |a| a.permitted.token = s)
            }),
            // A maximum below (or above) the offered one.
            (
                ErrorCode::Permit2AmountMismatch,
                Box::new(|a| a.permitted.amount = "4999".into()),
            ),
            (
                ErrorCode::Permit2NotYetValid,
                Box::new(move |a| a.witness.valid_after = (now + 60).to_string()),
            ),
            (
                ErrorCode::Permit2DeadlineExpired,
                Box::new(move |a| a.deadline = now.to_string()),
            ),
            (
                ErrorCode::Permit2DeadlineExpired,
                Box::new(move |a| a.deadline = (now + 29).to_string()),
            ),
        ];
        for (expected, adjust) in cases {
            assert_eq!(
                reason(verify_payment(&pay(&offer, &signer, adjust), &offer, now)),
                expected
            );
        }
        // Tampering after signing breaks the signature; someone else's `from` too.
        let mut payment = pay(&offer, &signer, |_| {});
        permit(&mut payment).permit2_authorization.nonce = "7".into();
        assert_eq!(
            reason(verify_payment(&payment, &offer, now)),
            ErrorCode::InvalidPermit2Signature
        );
        let mut payment = pay(&offer, &signer, |_| {});
        permit(&mut payment).permit2_authorization.from = pay_to.to_string();
        assert_eq!(
            reason(verify_payment(&payment, &offer, now)),
            ErrorCode::InvalidPermit2Signature
        );
        let mut payment = pay(&offer, &signer, |_| {});
        permit(&mut payment).signature = "0x12".into();
        assert_eq!(
            reason(verify_payment(&payment, &offer, now)),
            ErrorCode::InvalidPermit2Signature
        );
        let mut payment = pay(&offer, &signer, |_| {});
        permit(&mut payment).permit2_authorization.deadline = "soon".into();
        assert_eq!(
            reason(verify_payment(&payment, &offer, now)),
            ErrorCode::InvalidPayload
        );
        // An `exact` payment is not accepted by a metered offer.
        let exact = crate::schemes::exact_evm::signing::sign(
            &signer,
            &offer.accepts[0].0,
            &offer.accepts[0].1,
            |_| {},
        )
        .unwrap();
        let mut accepted = json!(offer.accepts[0].1);
        accepted["scheme"] = json!("exact");
        let payment = header::decode(&header::encode(
            &json!({"x402Version": 2, "accepted": accepted, "payload": exact}),
        ))
        .unwrap();
        assert_eq!(
            reason(verify_payment(&payment, &offer, now)),
            ErrorCode::InvalidScheme
        );
    }

    /// The typed data hashed is Permit2's with x402's witness, as viem encodes it: the type
    /// string with its referenced types in alphabetical order.
    #[test]
    fn the_type_string_is_permit2s() {
        assert_eq!(
            PermitWitnessTransferFrom::eip712_encode_type(),
            "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)"
        );
    }
}
