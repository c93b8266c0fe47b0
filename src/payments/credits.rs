//! Developer credit: prepaid USD an admin grants, spent in place of an x402 payment.
//!
//! The admin issues a grant (amount, optional expiry) and receives its token once; callers send
//! the token in `X-Developer-Credit`. Only the SHA-256 of a token is stored, so a copy of the
//! store cannot spend anyone's credit.
//!
//! A call's price is [reserved](reserve) before its handler runs: one atomic batch moves it from
//! the balance into a [`Hold`] of that call, so concurrent calls on a nearly spent credit cannot
//! all run. When the handler succeeds the hold becomes the charge, deleted in the same atomic
//! batch that writes the receipt and ledger entry; when it fails (or the request is cancelled)
//! the hold goes back to the balance. Holds carry their time: a process that dies between
//! reserve and settle leaves one behind, and [`release_stale`] returns it once no call can still
//! be running on it.
//!
//! Grants, balances and holds are the store's typed records ([`crate::store::credits`]): a
//! grant by its id and its token's SHA-256, a balance as its remaining atomic units, a hold as
//! a held amount (JSON: credit id, units, time) under its id.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use crate::money::Usd;
use crate::store::{Batch, CreditHoldRow, CreditRow, Store, StoreError, StoreResult};
use crate::x402::{PaymentError, Reason};

pub const CREDIT_HEADER: &str = "x-developer-credit";

/// The most one grant may hold: what a balance keeps exactly as a signed 64-bit count of atomic
/// units (9,223,372,036,854.775807 USD), the store's column for it.
pub const MAX_GRANT: Usd = Usd::from_units(i64::MAX as u64);

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

/// What the store keeps of a token: its SHA-256, lower-case hex.
fn token_digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A balance as the store keeps it: atomic units, at most `i64::MAX`.
fn stored_units(credit_id: &str, amount: Usd) -> Result<i64, StoreError> {
    i64::try_from(amount.units())
        .map_err(|_| StoreError::Corrupt(format!("balance of {credit_id} is out of range")))
}

fn corrupt(e: serde_json::Error) -> StoreError {
    StoreError::Corrupt(e.to_string())
}

/// An amount taken from a balance for one call that has not ended yet.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HoldRecord {
    credit_id: String,
    units: u64,
    #[serde(with = "time::serde::rfc3339")]
    held_at: OffsetDateTime,
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
    let id = &grant.credit_id;
    let row = CreditRow {
        credit_id: id.clone(),
        token_sha256: token_digest(&token),
        entry: serde_json::to_vec(&grant).map_err(corrupt)?,
    };
    let batch = Batch::new()
        .require_credit(id, None)
        .put_credit(row)
        .put_credit_balance(id, stored_units(id, amount)?);
    store.apply(batch).await?;
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
    let raw = store.credit_balance(credit_id).await?;
    let units = parse_units(credit_id, raw.as_deref())?;
    Ok((raw, Usd::from_units(units)))
}

/// A balance's units from its stored text (none stored: nothing left).
fn parse_units(credit_id: &str, raw: Option<&[u8]>) -> Result<u64, StoreError> {
    Ok(match raw {
        None => 0,
        Some(bytes) => std::str::from_utf8(bytes)
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| StoreError::Corrupt(format!("balance of {credit_id}")))?,
    })
}

/// The grant a token names, if it exists and has not expired, with enough balance for `price`.
async fn authorize(store: &dyn Store, token: &str, price: Usd) -> Result<Grant, PaymentError> {
    let invalid = || {
        PaymentError::refused(
            Reason::InvalidCredit,
            "the developer credit is unknown or has expired",
        )
    };
    let (id, bytes) = (store.credit_by_token(&token_digest(token)).await?).ok_or_else(invalid)?;
    let grant: Grant = serde_json::from_slice(&bytes).map_err(corrupt)?;
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
    let sub = |available: Usd| {
        available
            .checked_sub(price)
            .ok_or_else(|| insufficient(available, price))
    };
    change_balance(store, &grant.credit_id, sub, with).await
}

/// Gives `amount` back to the grant (a refund) and applies `with` in the same atomic batch.
/// Retries when a concurrent spend changed the balance in between.
pub async fn give_back(
    store: &dyn Store,
    credit_id: &str,
    amount: Usd,
    with: impl Fn(Batch) -> Batch,
) -> Result<Usd, PaymentError> {
    let add = |available: Usd| {
        available.checked_add(amount).ok_or_else(|| {
            PaymentError::Store(StoreError::Corrupt(format!(
                "balance of {credit_id} overflows"
            )))
        })
    };
    change_balance(store, credit_id, add, with).await
}

/// Sets the balance to `change(balance)` and applies `with` in the same atomic batch, after the
/// balance's own condition (index 0). Retries when a concurrent spend changed the balance in
/// between; any other failed condition is the caller's to interpret.
async fn change_balance(
    store: &dyn Store,
    credit_id: &str,
    change: impl Fn(Usd) -> Result<Usd, PaymentError>,
    with: impl Fn(Batch) -> Batch,
) -> Result<Usd, PaymentError> {
    const ATTEMPTS: usize = 64;
    for _ in 0..ATTEMPTS {
        let (raw, available) = read_balance(store, credit_id).await?;
        let remaining = change(available)?;
        let batch = with(
            Batch::new()
                .require_credit_balance(credit_id, raw)
                .put_credit_balance(credit_id, stored_units(credit_id, remaining)?),
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

/// Checks the token and takes `price` from its balance into a hold for one call, atomically:
/// of concurrent calls only as many as the balance pays for get a hold; the others are refused
/// with `insufficient_developer_credit` before their handler runs.
pub async fn reserve(store: Arc<dyn Store>, token: &str, price: Usd) -> Result<Hold, PaymentError> {
    let grant = authorize(store.as_ref(), token, price).await?;
    let hold_id = format!("hold_{}", uuid::Uuid::now_v7().simple());
    let record = HoldRecord {
        credit_id: grant.credit_id.clone(),
        units: price.units(),
        held_at: OffsetDateTime::now_utc(),
    };
    let record = serde_json::to_vec(&record).map_err(corrupt)?;
    let sub = |available: Usd| {
        available
            .checked_sub(price)
            .ok_or_else(|| insufficient(available, price))
    };
    change_balance(store.as_ref(), &grant.credit_id, sub, |batch| {
        batch
            .require_credit_hold(&hold_id, None)
            .put_credit_hold(CreditHoldRow {
                hold_id: hold_id.clone(),
                credit_id: grant.credit_id.clone(),
                entry: record.clone(),
            })
    })
    .await?;
    Ok(Hold {
        grant,
        price,
        hold_id,
        record,
        store,
        done: false,
    })
}

/// Gives a held amount back to its balance and deletes the hold, atomically. A hold already
/// gone (settled, or released by another path) is left alone: `Ok(false)`.
async fn release_hold(store: &dyn Store, hold_id: &str, record: &[u8]) -> StoreResult<bool> {
    let held: HoldRecord =
        serde_json::from_slice(record).map_err(|e| StoreError::Corrupt(format!("hold: {e}")))?;
    let amount = Usd::from_units(held.units);
    let add = |available: Usd| {
        available.checked_add(amount).ok_or_else(|| {
            PaymentError::Store(StoreError::Corrupt(format!(
                "balance of {} overflows",
                held.credit_id
            )))
        })
    };
    let released = change_balance(store, &held.credit_id, add, |batch| {
        batch
            .require_credit_hold(hold_id, Some(record.to_vec()))
            .delete_credit_hold(hold_id)
    })
    .await;
    match released {
        Ok(_) => Ok(true),
        Err(PaymentError::Store(StoreError::ConditionFailed(1))) => Ok(false),
        Err(PaymentError::Store(e)) => Err(e),
        Err(e) => Err(StoreError::Engine(e.to_string())),
    }
}

/// Returns every hold older than `older_than` to its balance: holds left by calls that never
/// ended (the process died between reserve and settle). `older_than` must exceed the longest a
/// call can run, so no live call loses its hold (and if one did, its settle would debit the
/// balance directly). Returns how many were released.
pub async fn release_stale(
    store: &dyn Store,
    older_than: std::time::Duration,
) -> StoreResult<usize> {
    let Some(cutoff) = time::Duration::try_from(older_than)
        .ok()
        .and_then(|age| OffsetDateTime::now_utc().checked_sub(age))
    else {
        return Ok(0);
    };
    let mut released = 0;
    let mut after: Option<String> = None;
    loop {
        let page = store.credit_holds(after.as_deref(), 256).await?;
        let Some((last, _)) = page.last() else { break };
        after = Some(last.clone());
        for (hold_id, record) in page {
            let held: HoldRecord = serde_json::from_slice(&record)
                .map_err(|e| StoreError::Corrupt(format!("hold: {e}")))?;
            if held.held_at < cutoff && release_hold(store, &hold_id, &record).await? {
                tracing::warn!(credit = %held.credit_id, units = held.units, "released a stale credit hold");
                released += 1;
            }
        }
    }
    Ok(released)
}

/// A call's reserved credit. Settle it with the receipt, or release it; dropped otherwise
/// (handler error, cancelled request), it goes back to the balance in a task of its own.
pub struct Hold {
    grant: Grant,
    price: Usd,
    hold_id: String,
    /// The stored record exactly, so settling and releasing act only on this very hold.
    record: Vec<u8>,
    store: Arc<dyn Store>,
    /// Settled or released: nothing left to do on drop.
    done: bool,
}

impl Hold {
    pub fn grant(&self) -> &Grant {
        &self.grant
    }

    /// Turns the hold into the charge of `charged` (the price held, or a metered call's bill,
    /// at most that): deletes it in the same atomic batch as `writes` (the receipt and ledger
    /// entry), giving what was held beyond `charged` back to the balance. Should the hold be
    /// gone (released as stale by a call that outlived every deadline), `charged` is debited
    /// from the balance instead, if it still covers it.
    pub async fn settle(mut self, charged: Usd, writes: Batch) -> Result<(), PaymentError> {
        let unused = self.price.checked_sub(charged).unwrap_or(Usd::ZERO);
        let with_hold = |batch: Batch| {
            batch
                .require_credit_hold(&self.hold_id, Some(self.record.clone()))
                .delete_credit_hold(&self.hold_id)
                .extend(writes.clone())
        };
        // The hold's condition is the first of the batch, or the second after the balance's.
        let (settled, hold_condition) = if unused.is_zero() {
            let applied = self.store.apply(with_hold(Batch::new())).await;
            (applied.map_err(PaymentError::from), 0)
        } else {
            let give_back = |available: Usd| {
                available.checked_add(unused).ok_or_else(|| {
                    PaymentError::Store(StoreError::Corrupt(format!(
                        "balance of {} overflows",
                        self.grant.credit_id
                    )))
                })
            };
            let changed = change_balance(
                self.store.as_ref(),
                &self.grant.credit_id,
                give_back,
                with_hold,
            )
            .await;
            (changed.map(|_| ()), 1)
        };
        self.done = true;
        match settled {
            Err(PaymentError::Store(StoreError::ConditionFailed(n))) if n == hold_condition => {
                debit(self.store.as_ref(), &self.grant, charged, |batch| {
                    batch.extend(writes.clone())
                })
                .await
                .map(|_| ())
            }
            other => other,
        }
    }

    /// Gives the held amount back before the caller gets its answer, so the credit can pay for
    /// a retry at once.
    pub async fn release(mut self) {
        if let Err(e) = release_hold(self.store.as_ref(), &self.hold_id, &self.record).await {
            // Left for `release_stale`, which returns it once it is old enough.
            tracing::error!(error = %e, "releasing a credit hold failed");
        }
        self.done = true;
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        // Drop cannot wait: the release runs as a task of its own. Were the process to end
        // first, `release_stale` returns the hold later.
        let (store, hold_id, record) = (
            self.store.clone(),
            self.hold_id.clone(),
            self.record.clone(),
        );
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if let Err(e) = release_hold(store.as_ref(), &hold_id, &record).await {
                        tracing::error!(error = %e, "releasing a dropped credit hold failed");
                    }
                });
            }
            Err(_) => tracing::error!("a credit hold was dropped outside the runtime; left held"),
        }
    }
}

/// Every grant, newest last, with its balance.
pub async fn list(store: &dyn Store) -> Result<Vec<(Grant, Usd)>, StoreError> {
    let mut out = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = store.credits(after.as_deref(), 256).await?;
        let Some((last, _, _)) = page.last() else {
            break;
        };
        after = Some(last.clone());
        for (id, bytes, balance) in page {
            let grant: Grant = serde_json::from_slice(&bytes).map_err(corrupt)?;
            let left = Usd::from_units(parse_units(&id, balance.as_deref())?);
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
    async fn concurrent_reservations_never_overdraw_and_released_holds_return() {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let (grant, token) = issue(store.as_ref(), Usd::from_units(3000), None, None)
            .await
            .unwrap();
        let price = Usd::from_units(1000);
        let attempts: Vec<_> = (0..8)
            .map(|_| {
                let (store, token) = (store.clone(), token.clone());
                tokio::spawn(async move { reserve(store, &token, price).await })
            })
            .collect();
        let mut holds = Vec::new();
        for attempt in attempts {
            match attempt.await.unwrap() {
                Ok(hold) => holds.push(hold),
                Err(e) => assert!(
                    matches!(
                        e,
                        PaymentError::Refused {
                            reason: Reason::InsufficientCredit,
                            ..
                        }
                    ),
                    "{e}"
                ),
            }
        }
        assert_eq!(holds.len(), 3);
        let balance_now = || balance(store.as_ref(), &grant.credit_id);
        assert_eq!(balance_now().await.unwrap(), Usd::ZERO);
        // One settles, one is released, one is dropped (its release runs as a task).
        let mut holds = holds.into_iter();
        holds
            .next()
            .unwrap()
            .settle(Usd::from_units(1000), Batch::new())
            .await
            .unwrap();
        holds.next().unwrap().release().await;
        assert_eq!(balance_now().await.unwrap(), price);
        drop(holds.next());
        for _ in 0..100 {
            if balance_now().await.unwrap() == Usd::from_units(2000) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(balance_now().await.unwrap(), Usd::from_units(2000));
        assert!(store.credit_holds(None, 10).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn stale_holds_return_to_the_balance_and_their_settle_debits_directly() {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let (grant, token) = issue(store.as_ref(), Usd::from_units(2000), None, None)
            .await
            .unwrap();
        let price = Usd::from_units(1000);
        let hold = reserve(store.clone(), &token, price).await.unwrap();
        let young = std::time::Duration::from_secs(3600);
        assert_eq!(release_stale(store.as_ref(), young).await.unwrap(), 0);
        let balance_now = || balance(store.as_ref(), &grant.credit_id);
        assert_eq!(balance_now().await.unwrap(), price);
        // As after a crash: the hold is older than any call can run.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let stale = std::time::Duration::from_millis(10);
        assert_eq!(release_stale(store.as_ref(), stale).await.unwrap(), 1);
        assert_eq!(balance_now().await.unwrap(), Usd::from_units(2000));
        // A call that outlived its hold is still charged exactly once.
        hold.settle(price, Batch::new()).await.unwrap();
        assert_eq!(balance_now().await.unwrap(), price);
        assert_eq!(release_stale(store.as_ref(), stale).await.unwrap(), 0);
        assert_eq!(balance_now().await.unwrap(), price);
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
