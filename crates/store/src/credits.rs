//! Developer credits as the store keeps them: a grant (found by its id, and by the SHA-256 of
//! its token, the only form of the token stored), its balance, and the holds of calls running
//! on it.
//!
//! All three are written only inside batches: a grant when it is issued
//! ([`Batch::put_credit`](crate::Batch::put_credit)), a balance by compare-and-swap, on condition
//! it is still as read ([`Batch::require_credit_balance`](crate::Batch::require_credit_balance)), a
//! hold with the balance it comes out of and deleted, as read, with the receipt it becomes or the
//! balance it returns to. [`kv`] is the shape any key-value engine keeps (sled's, the keys of the
//! `credits` tree every release has written: `grant/{creditId}`, `token/{sha256}` → creditId,
//! `balance/{creditId}` → atomic units as decimal text, `hold/{holdId}`); PostgreSQL keeps three
//! tables (`toolhost_credits`, with the token's digest a unique column; `toolhost_credit_balances`,
//! the units a column; `toolhost_credit_holds`, by hold id with its credit's id: migration 15), so
//! listing the grants with their balances is one statement.

use async_trait::async_trait;

use crate::StoreResult;

/// A grant as issued.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreditRow {
    pub credit_id: String,
    /// The SHA-256 of its token, lower-case hex.
    pub token_sha256: String,
    /// The grant's JSON.
    pub entry: Vec<u8>,
}

/// A call's hold on a credit: what it took from the balance until it ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreditHoldRow {
    pub hold_id: String,
    pub credit_id: String,
    /// The hold's JSON (its credit, units and time).
    pub entry: Vec<u8>,
}

/// A grant as listed: its id, its JSON and its balance (atomic units as decimal text, as
/// stored; `None` if it has none).
pub type CreditListing = (String, Vec<u8>, Option<Vec<u8>>);

/// Where credits are read. Every engine implements it (the conformance suite's `credits_*`
/// case).
#[async_trait]
pub trait CreditRecords {
    /// The grant whose token has this digest (lower-case hex SHA-256): its id and JSON.
    async fn credit_by_token(&self, token_sha256: &str) -> StoreResult<Option<(String, Vec<u8>)>>;
    /// The balance of a grant, as stored (atomic units as decimal text).
    async fn credit_balance(&self, credit_id: &str) -> StoreResult<Option<Vec<u8>>>;
    /// Grants whose id sorts after `after` (from the first when `None`), in id order, at most
    /// `limit`, each with its balance.
    async fn credits(&self, after: Option<&str>, limit: usize) -> StoreResult<Vec<CreditListing>>;
    /// Holds whose id sorts after `after`, in id order, at most `limit`: ids and JSON.
    async fn credit_holds(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
}

/// Credits over any [`Store`](crate::Store)'s trees, for engines without a shape of their own.
pub mod kv {
    use super::{CreditListing, CreditRow};
    use crate::prefixed::Prefixed;
    use crate::{KeyWrite, Store, StoreResult, Tree};

    pub(crate) const GRANTS: Prefixed = Prefixed {
        tree: Tree::Credits,
        prefix: b"grant/",
    };
    pub(crate) const TOKENS: Prefixed = Prefixed {
        tree: Tree::Credits,
        prefix: b"token/",
    };
    pub(crate) const BALANCES: Prefixed = Prefixed {
        tree: Tree::Credits,
        prefix: b"balance/",
    };
    pub(crate) const HOLDS: Prefixed = Prefixed {
        tree: Tree::Credits,
        prefix: b"hold/",
    };

    /// A grant's keys: its record and its token's index entry.
    pub(crate) fn put(credit: CreditRow) -> [KeyWrite; 2] {
        [
            KeyWrite {
                tree: Tree::Credits,
                key: TOKENS.key(&credit.token_sha256),
                value: Some(credit.credit_id.as_bytes().to_vec()),
            },
            KeyWrite {
                tree: Tree::Credits,
                key: GRANTS.key(&credit.credit_id),
                value: Some(credit.entry),
            },
        ]
    }

    pub(crate) async fn by_token<S: Store + ?Sized>(
        store: &S,
        token_sha256: &str,
    ) -> StoreResult<Option<(String, Vec<u8>)>> {
        let Some(id) = store.get(Tree::Credits, &TOKENS.key(token_sha256)).await? else {
            return Ok(None);
        };
        let id = String::from_utf8(id)
            .map_err(|_| crate::StoreError::Corrupt("credit token index".into()))?;
        let grant = store.get(Tree::Credits, &GRANTS.key(&id)).await?;
        Ok(grant.map(|grant| (id, grant)))
    }

    pub(crate) async fn listing<S: Store + ?Sized>(
        store: &S,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<CreditListing>> {
        let grants = GRANTS.page(store, after, limit).await?;
        let ids: Vec<&str> = grants.iter().map(|(id, _)| id.as_str()).collect();
        let balances = BALANCES.get_many(store, &ids).await?;
        Ok((grants.into_iter().zip(balances))
            .map(|((id, grant), balance)| (id, grant, balance))
            .collect())
    }
}
