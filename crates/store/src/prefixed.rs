//! Records a key-value engine keeps one a key, under `{prefix}{id}` in a tree: the shape of
//! refunds, paid-out marks, pending settlements and the receipt log's pending entries there,
//! declared once ([`Prefixed`]) with the reads they all need (many by id, a page by id).

use crate::{Store, StoreResult, Tree};

/// Where a kind of record is kept: the tree, and the prefix its ids follow (a kind's, or the
/// records of one owner's within it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prefixed<'p> {
    pub(crate) tree: Tree,
    pub(crate) prefix: &'p [u8],
}

impl Prefixed<'_> {
    /// The key of the record of `id`.
    pub(crate) fn key(self, id: &str) -> Vec<u8> {
        [self.prefix, id.as_bytes()].concat()
    }

    /// The records of `ids` (`None` where there is none), in their order, in one read.
    pub(crate) async fn get_many<S: Store + ?Sized>(
        self,
        store: &S,
        ids: &[&str],
    ) -> StoreResult<Vec<Option<Vec<u8>>>> {
        let keys: Vec<Vec<u8>> = ids.iter().map(|id| self.key(id)).collect();
        store.get_many(self.tree, &keys).await
    }

    /// The records whose id sorts after `after` (from the first when `None`), in id order, at
    /// most `limit`: ids and records. A key whose id is not UTF-8 is no record of this kind
    /// (none is written) and is skipped.
    pub(crate) async fn page<S: Store + ?Sized>(
        self,
        store: &S,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let after = after.map(|id| self.key(id));
        let rows = (store.scan_prefix(self.tree, self.prefix, after.as_deref(), limit)).await?;
        Ok(rows
            .into_iter()
            .filter_map(|(key, entry)| {
                let id = std::str::from_utf8(key.strip_prefix(self.prefix)?).ok()?;
                Some((id.to_owned(), entry))
            })
            .collect())
    }
}
