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
//! stored it, and the open ones' keys in an index tree beside it); PostgreSQL keeps a table with
//! the state as a column and the open ones indexed apart (`toolhost_nonces`, migration 8). On
//! both a pass reads only the open ones.

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

/// A legacy claim's entry starts so (`pending/{claimId}`, written before claim records): the
/// domain parses it by this, and a key-value engine tells it open by it.
pub const LEGACY_PREFIX: &[u8] = b"pending/";

/// Whether a stored entry is an open nonce's ([`NonceState::is_open`]): a claim record or a
/// legacy claim (what [`kv::upgrade`] indexes, written before the index existed).
pub fn is_open(entry: &[u8]) -> bool {
    entry.first() == Some(&b'{') || entry.starts_with(LEGACY_PREFIX)
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
    /// Brings nonces an earlier release stored into the shape this one reads, at start-up
    /// before anything is served; returns how many it indexed. Safe to run again.
    async fn upgrade_nonces(&self) -> StoreResult<u64>;
}

/// Nonces over any [`Store`](crate::Store)'s trees, for engines without a shape of their own:
/// each entry in `nonces` under its key, as every release has stored it, and the open ones'
/// keys again in `open_nonces`, an index the store keeps with them, so recovery reads the open
/// ones without the history. The index may name more than the open nonces, never fewer: a
/// nonce put open has its key indexed *ahead* of its batch ([`KeyBatch::ahead`], so a claim
/// stays a write of one key, sled's compare-and-swap), whether or not the batch then applies
/// (a replayed payment's claim fails after indexing a spent nonce); a nonce put spent or
/// burned, or deleted, leaves the index in its batch. [`open`] skips what the index names that
/// is not open, and removes the entries of spent and burned nonces as it passes them (those
/// never open again). A store written before the index existed is indexed once, at start-up
/// ([`upgrade`]).
///
/// [`KeyBatch::ahead`]: crate::batch::KeyBatch::ahead
pub mod kv {
    use crate::batch::KeyWrite;
    use crate::{Batch, NonceRow, Store, StoreError, StoreResult, Tree};

    /// In `meta`, present once every nonce stored before `open_nonces` existed is indexed.
    const INDEXED: &[u8] = b"nonces/open_indexed";
    /// Nonces read per page by [`upgrade`], and index entries per page by [`open`].
    const PAGE: usize = 512;

    /// The keys a put of `row` writes: its index entry (put when it is open, to be written
    /// ahead of its batch; removed otherwise, in it), and the entry.
    pub(crate) fn put(row: NonceRow) -> (KeyWrite, KeyWrite) {
        let index = KeyWrite {
            tree: Tree::OpenNonces,
            key: row.key.as_bytes().to_vec(),
            value: row.state.is_open().then(Vec::new),
        };
        let entry = KeyWrite {
            tree: Tree::Nonces,
            key: row.key.into_bytes(),
            value: Some(row.entry),
        };
        (index, entry)
    }

    /// The keys a delete of `key` removes.
    pub(crate) fn delete(key: String) -> [KeyWrite; 2] {
        [
            KeyWrite {
                tree: Tree::OpenNonces,
                key: key.as_bytes().to_vec(),
                value: None,
            },
            KeyWrite {
                tree: Tree::Nonces,
                key: key.into_bytes(),
                value: None,
            },
        ]
    }

    pub(crate) async fn get<S: Store + ?Sized>(
        store: &S,
        key: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        store.get(Tree::Nonces, key.as_bytes()).await
    }

    /// The index a page at a time, each key's entry read with it, until `limit` open ones are
    /// found or the index ends; the entries of spent and burned nonces it passes are removed
    /// from the index (each only while its nonce holds what was read: those never change).
    pub(crate) async fn open<S: Store + ?Sized>(
        store: &S,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let mut found = Vec::new();
        let mut cursor = after.map(|key| key.as_bytes().to_vec());
        while found.len() < limit {
            let page = (store.scan_prefix(Tree::OpenNonces, b"", cursor.as_deref(), PAGE)).await?;
            let full = page.len() == PAGE;
            let keys: Vec<Vec<u8>> = page.into_iter().map(|(key, _)| key).collect();
            let entries = store.get_many(Tree::Nonces, &keys).await?;
            let mut stale = Batch::new();
            for (key, entry) in keys.into_iter().zip(entries) {
                if found.len() == limit {
                    break;
                }
                cursor = Some(key.clone());
                match entry {
                    Some(entry) if super::is_open(&entry) => {
                        found.push((String::from_utf8_lossy(&key).into_owned(), entry))
                    }
                    // A claim that never landed, or was given back meanwhile: left, as a claim
                    // may be on its way to it.
                    None => {}
                    Some(entry) => {
                        stale = stale
                            .require_equals(Tree::Nonces, key.clone(), Some(entry))
                            .delete(Tree::OpenNonces, key);
                    }
                }
            }
            if !stale.writes.is_empty() {
                match store.apply(stale).await {
                    Ok(()) | Err(StoreError::ConditionFailed(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            if !full {
                break;
            }
        }
        Ok(found)
    }

    /// Indexes the open nonces an earlier release stored, once (a walk over every nonce), at
    /// start-up before anything is served; returns how many it indexed. Safe to run again
    /// (after a crash, on every start).
    pub(crate) async fn upgrade<S: Store + ?Sized>(store: &S) -> StoreResult<u64> {
        if store.get(Tree::Meta, INDEXED).await?.is_some() {
            return Ok(0);
        }
        let mut indexed = 0;
        let mut after: Option<Vec<u8>> = None;
        loop {
            let page = (store.scan_prefix(Tree::Nonces, b"", after.as_deref(), PAGE)).await?;
            let Some((last, _)) = page.last() else { break };
            after = Some(last.clone());
            let mut batch = Batch::new();
            for (key, entry) in page {
                if super::is_open(&entry) {
                    batch = batch.put(Tree::OpenNonces, key, Vec::new());
                    indexed += 1;
                }
            }
            if !batch.writes.is_empty() {
                store.apply(batch).await?;
            }
        }
        store.put(Tree::Meta, INDEXED, b"1").await?;
        Ok(indexed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Batch, SledStore, Store, Tree};

    fn keys(page: Vec<(String, Vec<u8>)>) -> Vec<String> {
        page.into_iter().map(|(key, _)| key).collect()
    }

    /// Nonces an earlier release wrote (the entries alone) are found open once indexed; typed
    /// writes keep the index with the entries: a nonce spent or given back leaves it.
    #[tokio::test]
    async fn open_nonces_are_indexed_once_an_earlier_store_is_upgraded() {
        let store = SledStore::temporary().unwrap();
        let claim = br#"{"claimId":"c","state":"claimed"}"#;
        for (key, entry) in [
            ("n1", &claim[..]),
            ("n2", b"rcpt_2"),
            ("n3", b"pending/c"),
            ("n4", b"failed/rcpt_4"),
        ] {
            store
                .put(Tree::Nonces, key.as_bytes(), entry)
                .await
                .unwrap();
        }
        assert!(store.open_nonces(None, 10).await.unwrap().is_empty());
        assert_eq!(store.upgrade_nonces().await.unwrap(), 2);
        assert_eq!(store.upgrade_nonces().await.unwrap(), 0, "once");
        assert_eq!(
            keys(store.open_nonces(None, 10).await.unwrap()),
            ["n1", "n3"]
        );

        let row = |key: &str, state, entry: &[u8]| NonceRow {
            key: key.to_owned(),
            state,
            entry: entry.to_vec(),
        };
        let claimed = Batch::new().put_nonce(row("n0", NonceState::Claimed, claim));
        store.apply(claimed).await.unwrap();
        let spent = Batch::new().put_nonce(row("n1", NonceState::Spent, b"rcpt_1"));
        store.apply(spent).await.unwrap();
        store.apply(Batch::new().delete_nonce("n3")).await.unwrap();
        assert_eq!(keys(store.open_nonces(None, 10).await.unwrap()), ["n0"]);
        assert_eq!(index(&store).await, ["n0"]);

        // A replayed claim of a spent nonce fails after indexing it: the pass skips the entry
        // and removes it; the nonce stays spent.
        let replay =
            Batch::new()
                .require_nonce("n1", None)
                .put_nonce(row("n1", NonceState::Claimed, claim));
        assert!(matches!(
            store.apply(replay).await,
            Err(crate::StoreError::ConditionFailed(0))
        ));
        assert_eq!(index(&store).await, ["n0", "n1"]);
        assert_eq!(keys(store.open_nonces(None, 10).await.unwrap()), ["n0"]);
        assert_eq!(index(&store).await, ["n0"]);
        assert_eq!(store.nonce("n1").await.unwrap(), Some(b"rcpt_1".to_vec()));
    }

    /// The keys the index holds.
    async fn index(store: &SledStore) -> Vec<String> {
        let entries = store.scan_prefix(Tree::OpenNonces, b"", None, 10).await;
        (entries.unwrap().into_iter())
            .map(|(key, _)| String::from_utf8(key).unwrap())
            .collect()
    }
}
