//! EIP-3009 nonce claims: the replay guard.
//!
//! A nonce is unique per token contract and authorizer, so the key is
//! `{chainId}/{asset}/{from}/{nonce}`. A claim is written with `require_absent` in one atomic
//! step, so of any number of concurrent requests carrying the same authorization exactly one
//! gets it. The claim holds `pending/{claimId}` while the handler runs; settling replaces it
//! with the receipt id in the same batch that writes the receipt, and a failed call deletes it
//! (only if it is still ours) so the caller may retry the unspent authorization.

use alloy_primitives::{Address, B256};

use super::{PaymentError, Reason};
use crate::store::{Batch, Store, StoreError, Tree};

/// A pending claim on one nonce.
#[derive(Debug, Clone)]
pub(crate) struct NonceClaim {
    pub(crate) key: Vec<u8>,
    pub(crate) pending: Vec<u8>,
}

pub(crate) fn key(chain_id: u64, asset: &str, from: Address, nonce: B256) -> Vec<u8> {
    format!(
        "{chain_id}/{}/{}/{nonce}",
        asset.to_ascii_lowercase(),
        from.to_string().to_ascii_lowercase()
    )
    .into_bytes()
}

/// Claims the nonce, or refuses with `invalid_exact_evm_nonce_already_used`.
pub(crate) async fn claim(store: &dyn Store, key: Vec<u8>) -> Result<NonceClaim, PaymentError> {
    let pending = format!("pending/{}", uuid::Uuid::new_v4().simple()).into_bytes();
    let batch = Batch::new().require_absent(Tree::Nonces, key.clone()).put(
        Tree::Nonces,
        key.clone(),
        pending.clone(),
    );
    match store.apply(batch).await {
        Ok(()) => Ok(NonceClaim { key, pending }),
        Err(StoreError::ConditionFailed(_)) => Err(PaymentError::refused(
            Reason::NonceAlreadyUsed,
            "this authorization's nonce was already used (or is being used by a request in flight)",
        )),
        Err(e) => Err(e.into()),
    }
}

impl NonceClaim {
    /// Adds "the claim is still ours" and "now it is spent by `receipt_id`" to a settling batch.
    pub(crate) fn commit(&self, batch: Batch, receipt_id: &str) -> Batch {
        batch
            .require_equals(Tree::Nonces, self.key.clone(), Some(self.pending.clone()))
            .put(
                Tree::Nonces,
                self.key.clone(),
                receipt_id.as_bytes().to_vec(),
            )
    }

    /// Gives the nonce back after a failed call. A claim already committed is left alone.
    pub(crate) async fn release(&self, store: &dyn Store) {
        let batch = Batch::new()
            .require_equals(Tree::Nonces, self.key.clone(), Some(self.pending.clone()))
            .delete(Tree::Nonces, self.key.clone());
        match store.apply(batch).await {
            Ok(()) | Err(StoreError::ConditionFailed(_)) => {}
            Err(e) => tracing::error!(error = %e, "could not release a nonce claim"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;

    #[tokio::test]
    async fn claims_once_and_releases_only_pending() {
        let store = SledStore::temporary().unwrap();
        let k = key(84532, "0xAB", Address::ZERO, B256::ZERO);
        let first = claim(&store, k.clone()).await.unwrap();
        assert!(matches!(
            claim(&store, k.clone()).await,
            Err(PaymentError::Refused {
                reason: Reason::NonceAlreadyUsed,
                ..
            })
        ));
        first.release(&store).await;
        let second = claim(&store, k.clone()).await.unwrap();
        store
            .apply(second.commit(Batch::new(), "rcpt_1"))
            .await
            .unwrap();
        second.release(&store).await;
        assert_eq!(
            store.get(Tree::Nonces, &k).await.unwrap().as_deref(),
            Some(&b"rcpt_1"[..])
        );
        assert!(claim(&store, k).await.is_err());
    }
}
