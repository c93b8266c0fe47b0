//! The x402 protocol: what a seller asks for and a payer sends, checking a payment, and the
//! facilitators that verify and settle it. It knows nothing of what is sold: endpoints, credits,
//! nonce claims, receipts and recovery are the service's `payments`, which uses this wing.
//!
//! # Layout
//! - `config`: what the operator sets: the networks accepted, the facilitator.
//! - `requirements`: what we ask for ([`Offer`]) and the 402 answer in both versions.
//! - `header`: parsing the payment headers and writing the response header.
//! - `schemes`: the seam per scheme, one file each (`exact_evm`: EIP-3009 under EIP-712);
//!   `evm`: the signature rules every EVM scheme shares.
//! - `verify`: the terms every scheme shares, then the scheme's own check.
//! - `facilitator`: the verify/settle seam, `local` (ledger or on-chain settlement, `chain`) and
//!   `remote` implementations.

pub mod config;
pub mod evm;
pub mod facilitator;
pub mod header;
pub mod requirements;
pub mod schemes;
pub mod verify;

use axum::http::StatusCode;

pub use facilitator::Facilitator;
pub use requirements::{Offer, PaymentRequirements, ResourceInfo, Terms};

use toolhost_store::StoreError;
use toolhost_values::error::{ApiError, ErrorCode};

/// Why a payment was not accepted. Reason names are x402's, so clients of any SDK can branch on
/// them; they appear as the `error` string of the 402 answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    InvalidPayload,
    InvalidScheme,
    InvalidNetwork,
    InvalidX402Version,
    AssetMismatch,
    Signature,
    RecipientMismatch,
    ValueMismatch,
    ValidBefore,
    ValidAfter,
    NonceAlreadyUsed,
    InsufficientCredit,
    InvalidCredit,
    /// Permit2 (`upto`, and `exact` by Permit2): the signature was not made by the owner.
    Permit2Signature,
    /// Permit2: the spender is not the x402 proxy the scheme settles through.
    Permit2Spender,
    /// Permit2: the witness pays someone else.
    Permit2RecipientMismatch,
    /// Permit2: the permitted amount is not the one asked for.
    Permit2AmountMismatch,
    /// Permit2: the permitted token is not the asset asked for.
    Permit2TokenMismatch,
    /// Permit2: the deadline has passed, or is too close to settle before it.
    Permit2DeadlineExpired,
    /// Permit2: the witness's `validAfter` is in the future.
    Permit2NotYetValid,
    /// `upto`: the witness names another facilitator than the one offered.
    UptoFacilitatorMismatch,
    /// `upto`: the amount to settle is above the permitted maximum.
    UptoSettlementExceedsAmount,
    /// Permit2, on-chain: the payer has not let Permit2 move its tokens.
    Permit2AllowanceRequired,
    /// A remote facilitator refused for a reason we have no name for (its text is in the message).
    Rejected,
    SettlementFailed,
    /// On-chain settlement: the payer's balance is below the authorized value.
    InsufficientBalance,
    /// On-chain settlement: the transfer would revert for another reason.
    SimulationFailed,
    /// On-chain settlement: the transaction was mined and reverted.
    TransactionFailed,
    /// On-chain settlement: the transaction succeeded without the authorized `Transfer`.
    TransferEventMismatch,
}

impl Reason {
    /// The x402 reason string (`invalidReason`), which is also our error code.
    pub fn as_str(self) -> &'static str {
        self.code().as_str()
    }

    pub fn code(self) -> ErrorCode {
        match self {
            Reason::InvalidPayload => ErrorCode::InvalidPayload,
            Reason::InvalidScheme => ErrorCode::InvalidScheme,
            Reason::InvalidNetwork => ErrorCode::InvalidNetwork,
            Reason::InvalidX402Version => ErrorCode::InvalidX402Version,
            Reason::AssetMismatch => ErrorCode::InvalidExactEvmPayloadAssetMismatch,
            Reason::Signature => ErrorCode::InvalidExactEvmPayloadSignature,
            Reason::RecipientMismatch => ErrorCode::InvalidExactEvmPayloadRecipientMismatch,
            Reason::ValueMismatch => ErrorCode::InvalidExactEvmPayloadAuthorizationValueMismatch,
            Reason::ValidBefore => ErrorCode::InvalidExactEvmPayloadAuthorizationValidBefore,
            Reason::ValidAfter => ErrorCode::InvalidExactEvmPayloadAuthorizationValidAfter,
            Reason::NonceAlreadyUsed => ErrorCode::InvalidExactEvmNonceAlreadyUsed,
            Reason::Permit2Signature => ErrorCode::InvalidPermit2Signature,
            Reason::Permit2Spender => ErrorCode::InvalidPermit2Spender,
            Reason::Permit2RecipientMismatch => ErrorCode::InvalidPermit2RecipientMismatch,
            Reason::Permit2AmountMismatch => ErrorCode::Permit2AmountMismatch,
            Reason::Permit2TokenMismatch => ErrorCode::Permit2TokenMismatch,
            Reason::Permit2DeadlineExpired => ErrorCode::Permit2DeadlineExpired,
            Reason::Permit2NotYetValid => ErrorCode::Permit2NotYetValid,
            Reason::UptoFacilitatorMismatch => ErrorCode::UptoFacilitatorMismatch,
            Reason::UptoSettlementExceedsAmount => {
                ErrorCode::InvalidUptoEvmPayloadSettlementExceedsAmount
            }
            Reason::Permit2AllowanceRequired => ErrorCode::Permit2AllowanceRequired,
            Reason::InsufficientCredit => ErrorCode::InsufficientDeveloperCredit,
            Reason::InvalidCredit => ErrorCode::InvalidDeveloperCredit,
            Reason::Rejected => ErrorCode::PaymentRejected,
            Reason::SettlementFailed => ErrorCode::SettlementFailed,
            Reason::InsufficientBalance => ErrorCode::InvalidExactEvmInsufficientBalance,
            Reason::SimulationFailed => ErrorCode::InvalidExactEvmTransactionSimulationFailed,
            Reason::TransactionFailed => ErrorCode::InvalidExactEvmTransactionFailed,
            Reason::TransferEventMismatch => ErrorCode::InvalidExactEvmTransferEventMismatch,
        }
    }

    /// Reasons a facilitator may report, matched by name (unknown ones become `SettlementFailed`
    /// or `InvalidPayload` at the call site).
    pub fn parse(text: &str) -> Option<Reason> {
        const ALL: [Reason; 29] = [
            Reason::InvalidPayload,
            Reason::InvalidScheme,
            Reason::InvalidNetwork,
            Reason::InvalidX402Version,
            Reason::AssetMismatch,
            Reason::Signature,
            Reason::RecipientMismatch,
            Reason::ValueMismatch,
            Reason::ValidBefore,
            Reason::ValidAfter,
            Reason::NonceAlreadyUsed,
            Reason::Permit2Signature,
            Reason::Permit2Spender,
            Reason::Permit2RecipientMismatch,
            Reason::Permit2AmountMismatch,
            Reason::Permit2TokenMismatch,
            Reason::Permit2DeadlineExpired,
            Reason::Permit2NotYetValid,
            Reason::UptoFacilitatorMismatch,
            Reason::UptoSettlementExceedsAmount,
            Reason::Permit2AllowanceRequired,
            Reason::InsufficientCredit,
            Reason::InvalidCredit,
            Reason::Rejected,
            Reason::SettlementFailed,
            Reason::InsufficientBalance,
            Reason::SimulationFailed,
            Reason::TransactionFailed,
            Reason::TransferEventMismatch,
        ];
        ALL.into_iter().find(|r| r.as_str() == text)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PaymentError {
    /// The payment header is not base64 JSON of a payment payload: 400.
    #[error("malformed payment header: {0}")]
    Malformed(String),
    /// A well-formed payment that we refuse: 402 with the reason and fresh requirements.
    #[error("{message}")]
    Refused { reason: Reason, message: String },
    /// The remote facilitator, or the chain's RPC, could not be reached or answered nonsense:
    /// 502.
    #[error("facilitator unavailable: {0}")]
    Facilitator(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl PaymentError {
    pub fn refused(reason: Reason, message: impl Into<String>) -> Self {
        PaymentError::Refused {
            reason,
            message: message.into(),
        }
    }
}

/// The errors that need no offer; refusals are turned into a 402 by [`Offer::refuse`].
impl From<PaymentError> for ApiError {
    fn from(e: PaymentError) -> Self {
        match e {
            PaymentError::Malformed(_) => {
                ApiError::bad_request(ErrorCode::InvalidPayload, e.to_string())
            }
            PaymentError::Refused { reason, message } => {
                ApiError::new(StatusCode::PAYMENT_REQUIRED, reason.code(), message)
            }
            PaymentError::Facilitator(_) => ApiError::new(
                StatusCode::BAD_GATEWAY,
                ErrorCode::FacilitatorUnavailable,
                e.to_string(),
            ),
            PaymentError::Store(e) => e.into(),
        }
    }
}
