//! Payment nonces as the store keeps them: each under its claim key, read by key, and the ones
//! still open (a call or a settlement may hold them) found without reading the spent ones.
//!
//! A nonce is written only inside batches (claimed with
//! [`Batch::require_nonce`](crate::Batch::require_nonce) `None` and
//! [`Batch::put_nonce`](crate::Batch::put_nonce), then changed only as read); this trait reads
//! them. Every payment ever taken leaves its nonce spent, so the nonces grow with the service's
//! history while the open ones stay as few as the calls in flight: recovery, which looks at the
//! open ones on every pass, must not pay for the history. [`kv`] is the shape any key-value
//! engine keeps (sled's: the entry in the `nonces` tree under its key, as every release has
//! stored it; a pass reads every nonce and skips the spent ones by a byte check); PostgreSQL
//! keeps a table with the state as a column and the open ones indexed apart
//! (`toolhost_nonces`, migration 8), so a pass reads only them.

use async_trait::async_trait;

use crate::StoreResult;

/// One stored nonce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NonceRow {
    /// `{chainId}/{asset}/{payer}/{nonce}`.
    pub key: String,
    pub state: NonceState,
    /// What the domain keeps: a claim record's JSON, the receipt id that spent it, or a marker
    /// (see [`NonceState`]).
    pub entry: Vec<u8>,
}

/// Where a nonce's payment is. Each state's entry starts its own way, so a key-value engine
/// (which keeps the entry alone) tells open ones from the rest by their bytes ([`is_open`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NonceState {
    /// A call runs with it (a claim record, JSON: `{`).
    Claimed,
    /// Its settlement is leaving our hands (a claim record, JSON: `{`).
    Settling,
    /// A claim written before claim records existed (`pending/…`).
    Legacy,
    /// Spent by the receipt it names (`rcpt_…`).
    Spent,
    /// Burned: the handler ran and the settlement failed (`failed/…`).
    Failed,
}

impl NonceState {
    /// As the `state` column says it.
    pub fn name(self) -> &'static str {
        match self {
            NonceState::Claimed => "claimed",
            NonceState::Settling => "settling",
            NonceState::Legacy => "legacy",
            NonceState::Spent => "spent",
            NonceState::Failed => "failed",
        }
    }

    /// Whether a call or a settlement may still hold it (recovery's business).
    pub fn is_open(self) -> bool {
        matches!(
            self,
            NonceState::Claimed | NonceState::Settling | NonceState::Legacy
        )
    }
}

/// Whether a stored entry is an open nonce's ([`NonceState::is_open`]): a claim record or a
/// legacy claim.
pub fn is_open(entry: &[u8]) -> bool {
    entry.first() == Some(&b'{') || entry.starts_with(b"pending/")
}

/// Where nonces are read. Every engine implements it (the conformance suite's `nonces_*`
/// case).
#[async_trait]
pub trait NonceClaims {
    /// A nonce's entry, if it was ever claimed (and not released).
    async fn nonce(&self, key: &str) -> StoreResult<Option<Vec<u8>>>;
    /// Open nonces whose key sorts after `after` (from the first when `None`), in key order,
    /// at most `limit`: keys and entries. An empty page means there are no more.
    async fn open_nonces(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
}

/// Nonces over any [`Store`](crate::Store)'s trees, for engines without a shape of their own.
pub mod kv {
    use crate::{Store, StoreResult, Tree};

    /// Nonces read per page while looking for open ones.
    const PAGE: usize = 512;

    pub(crate) async fn get<S: Store + ?Sized>(
        store: &S,
        key: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        store.get(Tree::Nonces, key.as_bytes()).await
    }

    /// Every nonce after `after`, a page at a time, the spent and burned ones skipped, until
    /// `limit` open ones are found or the tree ends.
    pub(crate) async fn open<S: Store + ?Sized>(
        store: &S,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let mut found = Vec::new();
        let mut cursor = after.map(|key| key.as_bytes().to_vec());
        while found.len() < limit {
            let page = (store.scan_prefix(Tree::Nonces, b"", cursor.as_deref(), PAGE)).await?;
            let full = page.len() == PAGE;
            for (key, entry) in page {
                if found.len() == limit {
                    break;
                }
                if super::is_open(&entry) {
                    found.push((String::from_utf8_lossy(&key).into_owned(), entry));
                }
                cursor = Some(key);
            }
            if !full {
                break;
            }
        }
        Ok(found)
    }
}
