//! The `upto` scheme on EVM chains: the payer signs a Permit2 `PermitWitnessTransferFrom` of a
//! maximum, and the seller settles what the call actually cost, at most that, after the work
//! (x402's `specs/schemes/upto/scheme_upto_evm.md`). The permit, its witness (which names the
//! facilitator that may settle) and its checks are [`super::permit2`]'s.

use crate::config::NetworkConfig;
use crate::requirements::{Offer, PaymentRequirements};
use crate::PaymentError;

use super::permit2::{self, Kind};
pub use super::permit2::{Authorization, Payload, Permit, PERMIT2, UPTO_PROXY as PROXY};

/// The scheme's name in requirements and payments.
pub const SCHEME: &str = "upto";

/// Checks `payload` against `requirement` (the offer's terms on `network`) at unix time `now`.
pub fn verify(
    payload: &Payload,
    network: &NetworkConfig,
    requirement: &PaymentRequirements,
    offer: &Offer,
    now: u64,
) -> Result<Permit, PaymentError> {
    permit2::verify(payload, Kind::Upto, network, requirement, offer, now)
}

/// What a remote facilitator's verification needs read here (the signature is its to check).
pub fn read(
    payload: &Payload,
    requirement: &PaymentRequirements,
    offer: &Offer,
    now: u64,
) -> Result<Permit, PaymentError> {
    permit2::read(payload, Kind::Upto, requirement, offer, now)
}

/// The paying side: sign an `upto` permit of the maximum as x402's `upto` client does.
pub mod signing {
    use alloy_signer_local::PrivateKeySigner;
    use serde_json::Value;

    use super::*;

    /// A signed `upto` payload for `requirement` (its `amount` the maximum), with `adjust`
    /// applied to the permit before signing.
    pub fn sign(
        signer: &PrivateKeySigner,
        network: &NetworkConfig,
        requirement: &PaymentRequirements,
        adjust: impl FnOnce(&mut Authorization),
    ) -> Result<Value, PaymentError> {
        permit2::signing::sign(signer, Kind::Upto, network, requirement, adjust)
    }
}

#[cfg(test)]
mod tests {
    use alloy_primitives::Address;
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
        assert!(
            matches!(&verified.proof, Proof::Permit2(p) if p.kind == crate::schemes::permit2::Kind::Upto)
        );
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
                Box::new(move |a| a.witness.facilitator = Some(s))
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
}
