//! What selling answers instead of taking a payment, and its one conversion into the service's
//! error shape (which HTTP and MCP each render in their one place).

use std::sync::Arc;

use axum::http::StatusCode;

use crate::error::{ApiError, ErrorCode};
use crate::store::StoreError;
use crate::x402::requirements::Offer;
use crate::x402::PaymentError;

#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// A paid call offered nothing: the 402 that asks, with the offer's requirements.
    #[error("payment required")]
    Unpaid(Arc<Offer>),
    /// The payment or credit offered was refused (402 with fresh requirements), was malformed
    /// (400), or could not be checked or settled (502).
    #[error("{error}")]
    Payment {
        offer: Arc<Offer>,
        error: PaymentError,
    },
    /// The `payment-identifier` id answered before with another payment or request (409).
    #[error("the payment identifier was used with another payment or request")]
    IdConflict,
    /// The `payment-identifier` id's first call is still running (409).
    #[error("the payment identifier's call is still running")]
    IdInProgress,
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What cannot happen did (500; the text goes to the log only).
    #[error("{0}")]
    Internal(&'static str),
}

impl GateError {
    pub fn payment(offer: &Arc<Offer>, error: PaymentError) -> Self {
        GateError::Payment {
            offer: offer.clone(),
            error,
        }
    }

    /// Whether the answer is a 402: a payment asked for or refused, which the caller's payment
    /// standing counts.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            GateError::Unpaid(_)
                | GateError::Payment {
                    error: PaymentError::Refused { .. },
                    ..
                }
        )
    }
}

impl From<GateError> for ApiError {
    fn from(e: GateError) -> Self {
        match e {
            GateError::Unpaid(offer) => offer.ask(),
            GateError::Payment { offer, error } => offer.refuse(error),
            GateError::IdConflict => ApiError::new(
                StatusCode::CONFLICT,
                ErrorCode::PaymentIdentifierConflict,
                "this payment-identifier id was already used with another payment, endpoint or input; choose a new id",
            ),
            GateError::IdInProgress => ApiError::new(
                StatusCode::CONFLICT,
                ErrorCode::PaymentIdentifierInProgress,
                "a call with this payment-identifier id and payment is still running; retry once it has answered to get its answer",
            ),
            GateError::Store(e) => e.into(),
            GateError::Internal(cause) => ApiError::internal(cause),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::money::Usd;
    use crate::x402::{Reason, ResourceInfo};

    /// Each answer keeps the status and code it had when the gate built HTTP errors itself, and
    /// exactly the 402s count against the caller's payment standing.
    #[test]
    fn converts_to_the_statuses_clients_know() {
        let resource = ResourceInfo {
            url: "http://x/tools/a".into(),
            description: "A".into(),
            mime_type: "application/json".into(),
        };
        let offer = Arc::new(Offer::new(
            Config::new("/unused")
                .payment
                .terms("0x0000000000000000000000000000000000000001"),
            resource,
            Usd::from_units(1000),
        ));
        let cases = [
            (
                GateError::Unpaid(offer.clone()),
                StatusCode::PAYMENT_REQUIRED,
                ErrorCode::PaymentRequired,
                true,
            ),
            (
                GateError::payment(&offer, PaymentError::refused(Reason::Signature, "no")),
                StatusCode::PAYMENT_REQUIRED,
                ErrorCode::InvalidExactEvmPayloadSignature,
                true,
            ),
            (
                GateError::payment(&offer, PaymentError::Malformed("no".into())),
                StatusCode::BAD_REQUEST,
                ErrorCode::InvalidPayload,
                false,
            ),
            (
                GateError::payment(&offer, PaymentError::Facilitator("down".into())),
                StatusCode::BAD_GATEWAY,
                ErrorCode::FacilitatorUnavailable,
                false,
            ),
            (
                GateError::IdConflict,
                StatusCode::CONFLICT,
                ErrorCode::PaymentIdentifierConflict,
                false,
            ),
            (
                GateError::IdInProgress,
                StatusCode::CONFLICT,
                ErrorCode::PaymentIdentifierInProgress,
                false,
            ),
            (
                GateError::Internal("lost"),
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::InternalError,
                false,
            ),
        ];
        for (error, status, code, refusal) in cases {
            assert_eq!(error.is_refusal(), refusal, "{error:?}");
            let answer = ApiError::from(error);
            assert_eq!((answer.status, answer.code), (status, code));
        }
    }
}
