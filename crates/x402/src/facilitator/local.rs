//! Verification in-process; settlement recorded in the ledger, or submitted on-chain.
//!
//! Without a settler, recording is honest about what it is: every receipt of a locally settled
//! payment says `onChain:false` and carries no transaction, and the signed authorization stays
//! valid for `transferWithAuthorization` by whoever holds it until `validBefore`. With a settler
//! (an RPC URL and a key configured), verification also asks the chain whether the payment
//! can settle (nonce unused, balance sufficient) before the handler runs, and the transfer is
//! submitted on-chain; see [`super::chain`] for what each outcome means. Permit2 payments
//! (`upto` for metered calls, `exact` on an asset paid by Permit2) are recorded for the amount
//! charged, or settled on-chain through x402's proxies where the chain has them.

use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::{json, Value};

use super::chain::Settler;
use super::{
    ChainError, ChainStatus, Facilitator, Repayer, SettleJournal, Settlement, SettlementStatus,
    SetupError,
};
use crate::config::NetworkConfig;
use crate::config::TransferMethod;
use crate::header::PaymentPayload;
use crate::requirements::Offer;
use crate::schemes::permit2;
use crate::schemes::Proof;
use crate::verify::{self, unix_now, Verified};
use crate::PaymentError;
use alloy_primitives::{Address, U256};
use std::sync::atomic::{AtomicBool, Ordering};
use toolhost_values::money::Usd;

pub struct LocalFacilitator {
    networks: Vec<NetworkConfig>,
    settler: Option<Settler>,
    /// On-chain: Permit2 and x402's proxies have code on the chain (read by `check`), so
    /// Permit2 payments (`upto`, `exact` by Permit2) can settle there.
    permit2_ready: AtomicBool,
}

impl LocalFacilitator {
    pub fn new(networks: Vec<NetworkConfig>, settler: Option<Settler>) -> Self {
        Self {
            networks,
            settler,
            permit2_ready: AtomicBool::new(false),
        }
    }
}

impl Facilitator for LocalFacilitator {
    fn verify<'a>(
        &'a self,
        payment: &'a PaymentPayload,
        offer: &'a Offer,
    ) -> BoxFuture<'a, Result<Verified, PaymentError>> {
        async move { verify::verify(payment, offer, unix_now()) }.boxed()
    }

    fn precheck<'a>(&'a self, verified: &'a Verified) -> BoxFuture<'a, Result<(), PaymentError>> {
        async move {
            // With a chain to settle on, a payment that cannot settle is refused before the
            // paid handler runs.
            if let Some(settler) = &self.settler {
                match &verified.proof {
                    Proof::ExactEvm(transfer) => {
                        settler
                            .precheck(&verified.requirement.asset, transfer)
                            .await?
                    }
                    Proof::Permit2(permit) => settler.precheck_permit2(permit).await?,
                }
            }
            Ok(())
        }
        .boxed()
    }

    fn settle<'a>(
        &'a self,
        _: &'a PaymentPayload,
        _: &'a Offer,
        verified: &'a Verified,
        amount: Usd,
        journal: &'a dyn SettleJournal,
    ) -> BoxFuture<'a, Result<Settlement, PaymentError>> {
        async move {
            // Recording only: nothing leaves our hands, so there is nothing to journal.
            let Some(settler) = &self.settler else {
                return Ok(Settlement {
                    status: SettlementStatus::Recorded,
                    transaction: None,
                    facilitator: "local",
                });
            };
            let submitted = match &verified.proof {
                Proof::ExactEvm(transfer) => {
                    settler
                        .settle(&verified.requirement.asset, transfer, journal)
                        .await?
                }
                // A metered call that used nothing: nothing to transfer.
                Proof::Permit2(_) if amount.is_zero() => {
                    return Ok(Settlement {
                        status: SettlementStatus::Recorded,
                        transaction: None,
                        facilitator: "local",
                    })
                }
                Proof::Permit2(permit) => {
                    settler
                        .settle_permit2(permit, U256::from(amount.units()), journal)
                        .await?
                }
            };
            Ok(Settlement {
                status: if submitted.confirmed {
                    SettlementStatus::Settled
                } else {
                    SettlementStatus::Pending
                },
                transaction: Some(submitted.transaction.to_string()),
                facilitator: "local",
            })
        }
        .boxed()
    }

    fn supported(&self) -> BoxFuture<'_, Result<Value, PaymentError>> {
        let kinds: Vec<Value> = self
            .networks
            .iter()
            .flat_map(|n| {
                let upto = self.upto_facilitator(n).map(|address| {
                    json!({"x402Version": 2, "scheme": "upto", "network": n.caip2,
                        "extra": {"facilitatorAddress": address}})
                });
                [
                    Some(json!({"x402Version": 2, "scheme": "exact", "network": n.caip2})),
                    Some(json!({"x402Version": 1, "scheme": "exact", "network": n.v1_name})),
                    upto,
                ]
                .into_iter()
                .flatten()
            })
            .collect();
        let signers: Vec<String> = self
            .settler
            .iter()
            .map(|s| s.address().to_checksum(None))
            .collect();
        async move { Ok(json!({ "kinds": kinds, "signers": {"eip155:*": signers} })) }.boxed()
    }

    /// On-chain: the RPC serves the configured chain, and whether Permit2 payments can settle
    /// there (a network whose asset is paid by Permit2 needs them; `upto` is offered only then).
    fn check(&self) -> BoxFuture<'_, Result<(), SetupError>> {
        async move {
            let Some(settler) = &self.settler else {
                return Ok(());
            };
            settler.check_chain().await?;
            let ready = settler.permit2_deployed().await?;
            self.permit2_ready.store(ready, Ordering::Release);
            let needs_permit2 = self
                .networks
                .iter()
                .any(|n| n.transfer_method == TransferMethod::Permit2);
            if needs_permit2 && !ready {
                return Err(SetupError::Chain(ChainError::Networks(format!(
                    "an accepted network's asset is paid by Permit2, but the chain has no code at Permit2 ({}) or x402's proxies ({}, {})",
                    permit2::PERMIT2,
                    permit2::EXACT_PROXY,
                    permit2::UPTO_PROXY
                ))));
            }
            if !ready {
                tracing::info!("no Permit2 or x402 proxies on the chain: metered endpoints are not offered x402 `upto` here");
            }
            Ok(())
        }
        .boxed()
    }

    fn chain(&self) -> Option<&dyn ChainStatus> {
        self.settler.as_ref().map(|s| s as &dyn ChainStatus)
    }

    fn repayer(&self) -> Option<&dyn Repayer> {
        self.settler.as_ref().map(|s| s as &dyn Repayer)
    }

    /// Recording only: the zero address, which no one can send from, so a permit made out to
    /// it can never be settled on-chain by anyone (nothing leaves the payer, as the receipt
    /// says). On-chain: the settler, which calls the upto proxy, when Permit2 and the proxy are
    /// on the chain.
    fn upto_facilitator(&self, _network: &NetworkConfig) -> Option<String> {
        match &self.settler {
            None => Some(Address::ZERO.to_checksum(None)),
            Some(settler) if self.permit2_ready.load(Ordering::Acquire) => {
                Some(settler.address().to_checksum(None))
            }
            Some(_) => None,
        }
    }
}
