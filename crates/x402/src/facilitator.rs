//! The facilitator seam: who verifies a payment and who settles it.
//!
//! [`local::LocalFacilitator`] verifies here and either records settlement in our ledger only
//! (receipts say `onChain:false`) or, with an RPC URL and a settler key, submits the transfer
//! on-chain ([`chain`]); [`remote::RemoteFacilitator`] speaks the standard facilitator API
//! (`POST /verify`, `POST /settle`, `GET /supported`). Nonce claims and receipts stay ours
//! whichever is used, so replay protection never depends on the facilitator.
//!
//! # Recovery
//! A process can die between moving the money and recording it. Two seams let
//! the service's payment recovery put that right:
//! - [`SettleJournal`]: a facilitator that hands the payment to someone else (a transaction to
//!   the chain, a `/settle` to a remote facilitator) first tells the journal, which records it
//!   durably in the nonce claim; if that fails, nothing is submitted.
//! - [`Facilitator::chain`]: whether it can tell afterwards what became of a payment
//!   (EIP-3009 `authorizationState`, the transaction's receipt). The local facilitator with
//!   on-chain settlement can; recording only has nothing to ask (nothing left our hands);
//!   a remote facilitator cannot, because the standard API (`/verify`, `/settle`,
//!   `/supported`) has no status call, so a claim that was handed to it and never recorded is
//!   kept, not released (see `recovery`).

pub mod chain;
mod credentials;
pub mod local;
pub mod remote;

use std::sync::Arc;
use std::time::Duration;

use alloy_primitives::{Address, B256, U256};
use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::Value;

pub use self::chain::ChainError;

use super::header::PaymentPayload;
use super::requirements::Offer;
use super::verify::Verified;
use super::PaymentError;
use crate::config::{FacilitatorConfig, NetworkConfig};
use toolhost_values::money::Usd;

/// How a payment was settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settlement {
    pub status: SettlementStatus,
    /// The transaction hash, once one was broadcast.
    pub transaction: Option<String>,
    /// Who settled it: `local` or `remote`.
    pub facilitator: &'static str,
}

/// Where the money is, as the receipt's `settlement.status` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettlementStatus {
    /// Recorded in our ledger only; nothing was submitted on-chain.
    Recorded,
    /// Transferred on-chain: mined, and successful.
    Settled,
    /// Broadcast, but not seen mined before the confirmation timeout.
    Pending,
}

impl SettlementStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SettlementStatus::Recorded => "recorded",
            SettlementStatus::Settled => "settled",
            SettlementStatus::Pending => "pending",
        }
    }

    /// Whether the receipt may say `onChain:true`: only a transfer seen mined.
    pub fn on_chain(self) -> bool {
        self == SettlementStatus::Settled
    }
}

pub trait Facilitator: Send + Sync {
    /// Checks the payment against the offer; `Refused` carries the x402 reason.
    fn verify<'a>(
        &'a self,
        payment: &'a PaymentPayload,
        offer: &'a Offer,
    ) -> BoxFuture<'a, Result<Verified, PaymentError>>;

    /// Checks, after the nonce is claimed and before the paid handler runs, that the payment
    /// can settle where that can be asked (the local facilitator with on-chain settlement: the
    /// authorization unused and the payer's balance sufficient). Nothing to check by default.
    fn precheck<'a>(&'a self, _verified: &'a Verified) -> BoxFuture<'a, Result<(), PaymentError>> {
        futures::future::ready(Ok(())).boxed()
    }

    /// Settles a verified payment for `amount`: the price (`exact`), or what the call cost
    /// capped by the permitted maximum (`upto`). Called only after the paid work succeeded.
    /// Before anything leaves our hands (a transaction broadcast, a remote `/settle`),
    /// `journal` is told; when it fails, nothing is submitted and that error is returned.
    fn settle<'a>(
        &'a self,
        payment: &'a PaymentPayload,
        offer: &'a Offer,
        verified: &'a Verified,
        amount: Usd,
        journal: &'a dyn SettleJournal,
    ) -> BoxFuture<'a, Result<Settlement, PaymentError>>;

    /// The address an `upto` payer's permit must let settle on `network` (x402's
    /// `extra.facilitatorAddress`), or `None` when this facilitator does not settle `upto`
    /// there (a metered endpoint is then not offered for x402 on that network).
    fn upto_facilitator(&self, _network: &NetworkConfig) -> Option<String> {
        None
    }

    /// The `{kinds:[{x402Version, scheme, network}]}` this facilitator handles.
    fn supported(&self) -> BoxFuture<'_, Result<Value, PaymentError>>;

    /// Checks, once at start-up, what can be checked before the first payment (the chain an
    /// on-chain settler reaches, a hosted facilitator's credentials and supported kinds).
    /// Nothing to check by default.
    fn check(&self) -> BoxFuture<'_, Result<(), SetupError>> {
        futures::future::ready(Ok(())).boxed()
    }

    /// How often [`Facilitator::refresh`] should run, if it has anything to do.
    fn refresh_every(&self) -> Option<Duration> {
        None
    }

    /// Reads again what may change while toolhost runs (a hosted facilitator's supported
    /// kinds). Nothing by default.
    fn refresh(&self) -> BoxFuture<'_, ()> {
        futures::future::ready(()).boxed()
    }

    /// Bumped whenever what it says of itself changes (a hosted facilitator's supported kinds
    /// read again and found different), so offers built from the old answer are built again.
    /// 0 by default: nothing changes.
    fn epoch(&self) -> u64 {
        0
    }

    /// Whether it settles `scheme` payments on `network` (CAIP-2) under x402 v2, as far as
    /// it has said; `None` when it has not said (a hosted one not reached yet) or settles what
    /// it is configured with (local).
    fn settles(&self, _scheme: &str, _network: &str) -> Option<bool> {
        None
    }

    /// What can be asked of the chain about past settlements, if this facilitator can ask it.
    /// `None` by default (record-only, remote).
    fn chain(&self) -> Option<&dyn ChainStatus> {
        None
    }

    /// Who can give a settled payment back on-chain (the settlement wallet), if anyone here
    /// can. `None` by default: recording only moved nothing, and the standard facilitator API
    /// has no refund call.
    fn repayer(&self) -> Option<&dyn Repayer> {
        None
    }
}

/// Gives money back on-chain from the settlement wallet (refunds).
pub trait Repayer: Send + Sync {
    /// The wallet refunds are paid from.
    fn wallet(&self) -> Address;

    /// Transfers `value` of `asset` to `to`; `journal` is told the transaction's hash before
    /// it is broadcast (an error there sends nothing). `confirmed: false`: broadcast, not seen
    /// mined in time.
    fn repay<'a>(
        &'a self,
        asset: Address,
        to: Address,
        value: U256,
        journal: &'a dyn SettleJournal,
    ) -> BoxFuture<'a, Result<chain::Submitted, PaymentError>>;
}

/// Where a settlement notes, just before the payment leaves our hands, what recovery needs if
/// the process dies before the outcome is recorded.
pub trait SettleJournal: Send + Sync {
    /// `transaction`: the hash about to be broadcast (`None`: a remote facilitator submits).
    /// An error means the claim is no longer ours: submit nothing.
    fn before_submit(&self, transaction: Option<B256>) -> BoxFuture<'_, Result<(), PaymentError>>;
}

/// A journal that records nothing (callers with no claim to protect, tests).
pub struct NoJournal;

impl SettleJournal for NoJournal {
    fn before_submit(&self, _: Option<B256>) -> BoxFuture<'_, Result<(), PaymentError>> {
        futures::future::ready(Ok(())).boxed()
    }
}

/// The transfer a settlement was to make, as its `Transfer` log must show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpectedTransfer {
    pub asset: Address,
    pub from: Address,
    pub to: Address,
    pub value: U256,
}

/// What the chain says of a settlement transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferStatus {
    /// The node does not know the transaction (never arrived, or dropped from its pool).
    Unknown,
    /// Known, not yet mined.
    InPool,
    /// Mined with status 0: nothing moved.
    Reverted,
    /// Mined with status 1 and the expected `Transfer` log.
    Transferred,
    /// Mined with status 1 but without the expected `Transfer` log.
    MinedWithoutTransfer,
}

/// A payment's single-use nonce, as the chain keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaymentNonce {
    /// EIP-3009: the asset's `authorizationState(authorizer, nonce)`.
    Eip3009(B256),
    /// Permit2: the owner's unordered nonce bitmap (`nonceBitmap`).
    Permit2(U256),
}

impl PaymentNonce {
    /// A nonce as claims and ledger entries keep it: 0x-hex for EIP-3009, decimal for Permit2.
    pub fn parse(text: &str, permit2: bool) -> Option<PaymentNonce> {
        use std::str::FromStr;
        if permit2 {
            U256::from_str_radix(text, 10)
                .ok()
                .map(PaymentNonce::Permit2)
        } else {
            B256::from_str(text).ok().map(PaymentNonce::Eip3009)
        }
    }
}

/// Questions about past settlements, answered by the chain.
pub trait ChainStatus: Send + Sync {
    /// Whether the payment's nonce was used (by anyone): EIP-3009 `authorizationState` of the
    /// asset, or Permit2's nonce bitmap of the payer.
    fn payment_used(
        &self,
        asset: Address,
        authorizer: Address,
        nonce: PaymentNonce,
    ) -> BoxFuture<'_, Result<bool, ChainError>>;

    /// What became of `transaction`, checked against the transfer it was to make.
    fn transfer_status(
        &self,
        transaction: B256,
        expected: ExpectedTransfer,
    ) -> BoxFuture<'_, Result<TransferStatus, ChainError>>;
}

/// Why a facilitator cannot be set up: its configuration, or what it said at start-up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Chain(#[from] ChainError),
    #[error("facilitator credentials: {0}")]
    Credentials(String),
    #[error("facilitator: {0}")]
    Facilitator(String),
}

/// Keeps what `facilitator` says of itself current: [`Facilitator::refresh`] every
/// [`Facilitator::refresh_every`], until the facilitator is dropped.
pub fn follow(facilitator: &Arc<dyn Facilitator>) {
    let Some(every) = facilitator.refresh_every() else {
        return;
    };
    let facilitator = Arc::downgrade(facilitator);
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The first tick is now: start-up's check has just read it.
        ticks.tick().await;
        loop {
            ticks.tick().await;
            let Some(facilitator) = facilitator.upgrade() else {
                return;
            };
            facilitator.refresh().await;
        }
    });
}

/// The facilitator the configuration names. On-chain settlement goes through one RPC, so every
/// accepted network must be its chain.
pub fn from_config(
    config: &FacilitatorConfig,
    networks: &[NetworkConfig],
) -> Result<Arc<dyn Facilitator>, SetupError> {
    Ok(match config {
        FacilitatorConfig::Local => Arc::new(local::LocalFacilitator::new(networks.to_vec(), None)),
        FacilitatorConfig::OnChain(onchain) => {
            let chain_id = match networks {
                [network] => network.chain_id,
                _ => {
                    return Err(SetupError::Chain(ChainError::Networks(format!(
                        "on-chain settlement uses one RPC, so accept exactly one network (configured: {})",
                        networks
                            .iter()
                            .map(|n| n.caip2.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))))
                }
            };
            let settler = chain::Settler::new(onchain, chain_id)?;
            Arc::new(local::LocalFacilitator::new(
                networks.to_vec(),
                Some(settler),
            ))
        }
        FacilitatorConfig::Remote(remote) => Arc::new(remote::RemoteFacilitator::new(remote)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{OnChainConfig, Secret};

    #[test]
    fn on_chain_settlement_needs_exactly_one_network() {
        let onchain = FacilitatorConfig::OnChain(OnChainConfig {
            rpc_url: "http://127.0.0.1:9".into(),
            settler_key: Secret::Value(
                "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d".into(),
            ),
            confirmation_timeout: std::time::Duration::from_secs(1),
        });
        let two = [NetworkConfig::base_sepolia(), NetworkConfig::base()];
        match from_config(&onchain, &two) {
            Err(SetupError::Chain(ChainError::Networks(message))) => {
                assert!(message.contains("eip155:84532, eip155:8453"), "{message}")
            }
            other => panic!("expected a refusal, got {:?}", other.err()),
        }
        assert!(from_config(&onchain, &two[..1]).is_ok());
    }
}
