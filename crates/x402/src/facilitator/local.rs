//! Verification in-process; settlement recorded in the ledger, or submitted on-chain.
//!
//! Without a settler, recording is honest about what it is: every receipt of a locally settled
//! payment says `onChain:false` and carries no transaction, and the signed authorization stays
//! valid for `transferWithAuthorization` by whoever holds it until `validBefore`. With a settler
//! (an RPC URL and a key configured), verification also asks the chain whether the payment
//! can settle (nonce unused, balance sufficient) before the handler runs, and the transfer is
//! submitted on-chain; see [`super::chain`] for what each outcome means. `upto` (metered)
//! payments are recorded for the amount charged; the on-chain settler does not offer them.

use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::{json, Value};

use super::chain::Settler;
use super::{
    ChainStatus, Facilitator, Repayer, SettleJournal, Settlement, SettlementStatus, SetupError,
};
use crate::config::NetworkConfig;
use crate::header::PaymentPayload;
use crate::requirements::Offer;
use crate::schemes::Proof;
use crate::verify::{self, unix_now, Verified};
use crate::{PaymentError, Reason};
use alloy_primitives::Address;
use toolhost_values::money::Usd;

pub struct LocalFacilitator {
    networks: Vec<NetworkConfig>,
    settler: Option<Settler>,
}

impl LocalFacilitator {
    pub fn new(networks: Vec<NetworkConfig>, settler: Option<Settler>) -> Self {
        Self { networks, settler }
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
                    Proof::Permit2(_) => return Err(not_on_chain()),
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
        _amount: Usd,
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
                Proof::Permit2(_) => return Err(not_on_chain()),
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

    fn check(&self) -> BoxFuture<'_, Result<(), SetupError>> {
        async move {
            match &self.settler {
                Some(settler) => Ok(settler.check_chain().await?),
                None => Ok(()),
            }
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
    /// says). On-chain: not offered; this release settles `upto` by recording or through a
    /// hosted facilitator only.
    fn upto_facilitator(&self, _network: &NetworkConfig) -> Option<String> {
        match self.settler {
            None => Some(Address::ZERO.to_checksum(None)),
            Some(_) => None,
        }
    }
}

/// The refusal of a Permit2 payment by the on-chain settler, which is never offered one.
fn not_on_chain() -> PaymentError {
    PaymentError::refused(
        Reason::InvalidScheme,
        "Permit2 payments (`upto`, and `exact` by Permit2) are not settled on-chain by this server",
    )
}
