//! Developer credit: prepaid USD an admin grants, spent in place of an x402 payment.
//!
//! The admin issues a grant (amount, optional expiry) and receives its token once; callers send
//! the token in `X-Developer-Credit`. Only the SHA-256 of a token is stored, so a copy of the
//! store cannot spend anyone's credit. Each spend is one atomic batch that compares-and-swaps the
//! balance and writes the receipt and ledger entry with it, so concurrent spends never overdraw
//! and money never moves without its receipt.
//!
//! Keys in the credits tree: `grant/{creditId}` → [`Grant`], `token/{sha256(token)}` →
//! creditId, `balance/{creditId}` → remaining atomic units as decimal text.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use super::{PaymentError, Reason};
use crate::money::Usd;
use crate::store::{get_json, Batch, Store, StoreError, Tree};

pub const CREDIT_HEADER: &str = "x-developer-credit";

/// A credit grant as stored (the token itself never is).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    pub credit_id: String,
    pub granted_usd: Usd,
    #[serde(with = "time::serde::rfc3339::option")]
    pub expires_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    pub note: Option<String>,
}

impl Grant {
    /// The id as receipts show it: enough to tell grants apart, not the whole id.
    pub fn masked_id(&self) -> String {
        let id = &self.credit_id;
        let tail = id.get(id.len().saturating_sub(4)..).unwrap_or_default();
        format!("{}…{tail}", id.get(..9).unwrap_or(id))
    }
}

fn token_key(token: &str) -> Vec<u8> {
    format!("token/{}", hex::encode(Sha256::digest(token.as_bytes()))).into_bytes()
}

fn grant_key(id: &str) -> Vec<u8> {
    format!("grant/{id}").into_bytes()
}

fn balance_key(id: &str) -> Vec<u8> {
    format!("balance/{id}").into_bytes()
}

/// Creates a grant; returns it with its token, which is shown to the admin once.
pub async fn issue(
    store: &dyn Store,
    amount: Usd,
    expires_at: Option<OffsetDateTime>,
    note: Option<String>,
) -> Result<(Grant, String), StoreError> {
    let grant = Grant {
        credit_id: crate::keyfile::random_token("cred_", 12),
        granted_usd: amount,
        expires_at,
        created_at: OffsetDateTime::now_utc(),
        note,
    };
    let token = crate::keyfile::random_token("thdc_", 32);
    let bytes = serde_json::to_vec(&grant).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    store
        .apply(
            Batch::new()
                .require_absent(Tree::Credits, grant_key(&grant.credit_id))
                .put(Tree::Credits, grant_key(&grant.credit_id), bytes)
                .put(
                    Tree::Credits,
                    token_key(&token),
                    grant.credit_id.as_bytes().to_vec(),
                )
                .put(
                    Tree::Credits,
                    balance_key(&grant.credit_id),
                    amount.units().to_string().into_bytes(),
                ),
        )
        .await?;
    Ok((grant, token))
}

/// The remaining balance of a grant.
pub async fn balance(store: &dyn Store, credit_id: &str) -> Result<Usd, StoreError> {
    Ok(read_balance(store, credit_id).await?.1)
}

async fn read_balance(
    store: &dyn Store,
    credit_id: &str,
) -> Result<(Option<Vec<u8>>, Usd), StoreError> {
    let raw = store.get(Tree::Credits, &balance_key(credit_id)).await?;
    let units = match &raw {
        None => 0,
        Some(bytes) => std::str::from_utf8(bytes)
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| StoreError::Corrupt(format!("balance of {credit_id}")))?,
    };
    Ok((raw, Usd::from_units(units)))
}

/// The grant a token names, if it exists and has not expired, with enough balance for `price`.
pub async fn authorize(store: &dyn Store, token: &str, price: Usd) -> Result<Grant, PaymentError> {
    let invalid = || {
        PaymentError::refused(
            Reason::InvalidCredit,
            "the developer credit is unknown or has expired",
        )
    };
    let id = store
        .get(Tree::Credits, &token_key(token))
        .await?
        .ok_or_else(invalid)?;
    let id = String::from_utf8(id).map_err(|_| StoreError::Corrupt("credit token index".into()))?;
    let grant: Grant = get_json(store, Tree::Credits, &grant_key(&id))
        .await?
        .ok_or_else(invalid)?;
    if grant
        .expires_at
        .is_some_and(|at| at <= OffsetDateTime::now_utc())
    {
        return Err(invalid());
    }
    let available = balance(store, &id).await?;
    if available < price {
        return Err(insufficient(available, price));
    }
    Ok(grant)
}

fn insufficient(available: Usd, price: Usd) -> PaymentError {
    PaymentError::refused(
        Reason::InsufficientCredit,
        format!("the developer credit has {available} USD left; this costs {price} USD"),
    )
}

/// Debits `price` and applies `with` (the receipt and ledger writes) in the same atomic batch.
/// Retries when a concurrent spend changed the balance in between.
pub async fn debit(
    store: &dyn Store,
    grant: &Grant,
    price: Usd,
    with: impl Fn(Batch) -> Batch,
) -> Result<Usd, PaymentError> {
    const ATTEMPTS: usize = 64;
    for _ in 0..ATTEMPTS {
        let (raw, available) = read_balance(store, &grant.credit_id).await?;
        let remaining = available
            .checked_sub(price)
            .ok_or_else(|| insufficient(available, price))?;
        let key = balance_key(&grant.credit_id);
        let batch = with(
            Batch::new()
                .require_equals(Tree::Credits, key.clone(), raw)
                .put(
                    Tree::Credits,
                    key,
                    remaining.units().to_string().into_bytes(),
                ),
        );
        match store.apply(batch).await {
            Ok(()) => return Ok(remaining),
            Err(StoreError::ConditionFailed(0)) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(PaymentError::Store(StoreError::Engine(
        "the credit balance kept changing; try again".into(),
    )))
}

/// Every grant, newest last, with its balance.
pub async fn list(store: &dyn Store) -> Result<Vec<(Grant, Usd)>, StoreError> {
    let mut out = Vec::new();
    let mut after: Option<Vec<u8>> = None;
    loop {
        let page = store
            .scan_prefix(Tree::Credits, b"grant/", after.as_deref(), 256)
            .await?;
        let Some((last, _)) = page.last() else { break };
        after = Some(last.clone());
        for (_, bytes) in page {
            let grant: Grant =
                serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let left = balance(store, &grant.credit_id).await?;
            out.push((grant, left));
        }
    }
    out.sort_by_key(|(g, _)| g.created_at);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;

    #[tokio::test]
    async fn spends_exactly_and_never_overdraws() {
        let store = SledStore::temporary().unwrap();
        let (grant, token) = issue(&store, Usd::from_units(2500), None, None)
            .await
            .unwrap();
        assert!(grant.masked_id().contains('…'));
        assert!(!grant.masked_id().contains(&grant.credit_id));
        let price = Usd::from_units(1000);
        let authorized = authorize(&store, &token, price).await.unwrap();
        assert_eq!(
            debit(&store, &authorized, price, |b| b)
                .await
                .unwrap()
                .units(),
            1500
        );
        assert_eq!(
            debit(&store, &authorized, price, |b| b)
                .await
                .unwrap()
                .units(),
            500
        );
        assert!(matches!(
            authorize(&store, &token, price).await,
            Err(PaymentError::Refused {
                reason: Reason::InsufficientCredit,
                ..
            })
        ));
        assert!(matches!(
            debit(&store, &authorized, price, |b| b).await,
            Err(PaymentError::Refused {
                reason: Reason::InsufficientCredit,
                ..
            })
        ));
        assert!(matches!(
            authorize(&store, "thdc_nope", price).await,
            Err(PaymentError::Refused {
                reason: Reason::InvalidCredit,
                ..
            })
        ));
    }

    #[tokio::test]
    async fn expired_grants_are_refused() {
        let store = SledStore::temporary().unwrap();
        let past = OffsetDateTime::now_utc() - time::Duration::hours(1);
        let (_, token) = issue(&store, Usd::from_units(2500), Some(past), None)
            .await
            .unwrap();
        assert!(matches!(
            authorize(&store, &token, Usd::from_units(1)).await,
            Err(PaymentError::Refused {
                reason: Reason::InvalidCredit,
                ..
            })
        ));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_spends_reconcile() {
        let store = std::sync::Arc::new(SledStore::temporary().unwrap());
        let (grant, _) = issue(store.as_ref(), Usd::from_units(10_000), None, None)
            .await
            .unwrap();
        let handles: Vec<_> = (0..16)
            .map(|_| {
                let store = store.clone();
                let grant = grant.clone();
                tokio::spawn(async move {
                    debit(store.as_ref(), &grant, Usd::from_units(1000), |b| b)
                        .await
                        .is_ok()
                })
            })
            .collect();
        let mut served = 0;
        for handle in handles {
            served += usize::from(handle.await.unwrap());
        }
        assert_eq!(served, 10);
        assert_eq!(
            balance(store.as_ref(), &grant.credit_id).await.unwrap(),
            Usd::ZERO
        );
    }
}
