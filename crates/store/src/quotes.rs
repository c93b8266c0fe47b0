//! Hosted-service quotes as the store keeps them: each quote's entry (its JSON) under its id,
//! with the moment it expires, swept once expired.
//!
//! [`kv`] is the shape any key-value engine can use (sled's: the entry in the `quotes` tree
//! under its id, as every release has stored it; its expiry read from the entry's `expiresAt`
//! when swept, in id order, which is issue order); PostgreSQL keeps a table with the expiry as
//! a column and an index on it, so a sweep is one bounded delete.

use async_trait::async_trait;

use crate::StoreResult;

/// One stored quote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuoteRow {
    /// `qt_` and a uuid v7: ids sort in issue order.
    pub id: String,
    /// When it expires, in Unix milliseconds; the entry's `expiresAt` says the same.
    pub expires_at_ms: u64,
    /// The quote's JSON.
    pub entry: Vec<u8>,
}

/// Where quotes are kept. Every engine implements it (the conformance suite's `quotes_*`
/// cases); each write is durable when it returns, as every store write.
#[async_trait]
pub trait HostedQuotes {
    /// Stores a new quote.
    async fn save_quote(&self, quote: &QuoteRow) -> StoreResult<()>;
    /// A quote's entry, if it is kept.
    async fn quote(&self, id: &str) -> StoreResult<Option<Vec<u8>>>;
    /// Removes at most `limit` quotes that expired before `before_ms`; returns how many went.
    async fn sweep_quotes(&self, before_ms: u64, limit: usize) -> StoreResult<u64>;
}

/// Quotes over any [`Store`](crate::Store)'s trees, for engines without a shape of their own.
pub mod kv {
    use serde::Deserialize;

    use crate::{Batch, Store, StoreResult, Tree};

    use super::QuoteRow;

    /// What a sweep reads of an entry: when it expires.
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Expiry {
        expires_at: String,
    }

    /// When an entry expires, in Unix milliseconds; `None` when it cannot say (an unreadable
    /// entry can never be honoured, so it is swept).
    fn expires_at_ms(entry: &[u8]) -> Option<u64> {
        let expiry: Expiry = serde_json::from_slice(entry).ok()?;
        let at = time::OffsetDateTime::parse(
            &expiry.expires_at,
            &time::format_description::well_known::Rfc3339,
        )
        .ok()?;
        u64::try_from(at.unix_timestamp_nanos() / 1_000_000).ok()
    }

    pub(crate) async fn save<S: Store + ?Sized>(store: &S, quote: &QuoteRow) -> StoreResult<()> {
        store
            .put(Tree::Quotes, quote.id.as_bytes(), &quote.entry)
            .await
    }

    pub(crate) async fn get<S: Store + ?Sized>(
        store: &S,
        id: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        store.get(Tree::Quotes, id.as_bytes()).await
    }

    /// In id order (issue order) up to the first quote still valid at `before_ms`: the TTL
    /// being one setting, issue order is nearly expiry order. (After the TTL is shortened,
    /// older long-lived quotes can hold back younger short-lived ones until they expire too.)
    pub(crate) async fn sweep<S: Store + ?Sized>(
        store: &S,
        before_ms: u64,
        limit: usize,
    ) -> StoreResult<u64> {
        let page = store.scan_prefix(Tree::Quotes, b"", None, limit).await?;
        let expired = page
            .into_iter()
            .take_while(|(_, entry)| expires_at_ms(entry).is_none_or(|at| at < before_ms));
        let batch = expired.fold(Batch::new(), |batch, (key, _)| {
            batch.delete(Tree::Quotes, key)
        });
        let swept = batch.writes.len() as u64;
        if swept > 0 {
            store.apply(batch).await?;
        }
        Ok(swept)
    }
}
