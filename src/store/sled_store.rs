//! The embedded default engine: sled, one sled tree per [`Tree`].

use std::collections::HashMap;
use std::path::Path;

use sled::transaction::{
    ConflictableTransactionError, TransactionError, Transactional, TransactionalTree,
};

use super::{Batch, Condition, Entry, Store, StoreError, StoreResult, Tree, Write};

pub struct SledStore {
    db: sled::Db,
    trees: HashMap<Tree, sled::Tree>,
    changes: tokio::sync::broadcast::Sender<super::Change>,
}

impl SledStore {
    /// Opens (or creates) the store. sled holds an exclusive file lock that a previous owner in
    /// this process, or a process just restarted by a supervisor, releases a moment after it
    /// drops the database; wait briefly for it rather than failing the start.
    pub fn open(dir: &Path) -> StoreResult<Self> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match sled::Config::new().path(dir).open() {
                Ok(db) => return Self::from_db(db),
                Err(sled::Error::Io(e))
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(e) => return Err(engine(e)),
            }
        }
    }

    /// A throwaway store for unit tests; removed when dropped.
    pub fn temporary() -> StoreResult<Self> {
        let db = sled::Config::new().temporary(true).open().map_err(engine)?;
        Self::from_db(db)
    }

    fn from_db(db: sled::Db) -> StoreResult<Self> {
        let mut trees = HashMap::new();
        for tree in Tree::ALL {
            trees.insert(tree, db.open_tree(tree.name()).map_err(engine)?);
        }
        Ok(Self {
            db,
            trees,
            changes: tokio::sync::broadcast::channel(1024).0,
        })
    }

    fn tree(&self, tree: Tree) -> &sled::Tree {
        // Every variant is opened in `from_db`.
        &self.trees[&tree]
    }
}

fn engine(e: impl std::fmt::Display) -> StoreError {
    StoreError::Engine(e.to_string())
}

// TEMPORARY shim (replaced by the group-commit engine on branch `pg`): each write flushes.
#[async_trait::async_trait]
impl Store for SledStore {
    async fn get(&self, tree: Tree, key: &[u8]) -> StoreResult<Option<Vec<u8>>> {
        self.get_sync(tree, key)
    }
    async fn put(&self, tree: Tree, key: &[u8], value: &[u8]) -> StoreResult<()> {
        self.put_sync(tree, key, value)?;
        self.flush_sync()
    }
    async fn delete(&self, tree: Tree, key: &[u8]) -> StoreResult<bool> {
        let existed = self.delete_sync(tree, key)?;
        self.flush_sync()?;
        Ok(existed)
    }
    async fn scan_prefix(
        &self,
        tree: Tree,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<Entry>> {
        self.scan_prefix_sync(tree, prefix, after, limit)
    }
    async fn scan_prefix_rev(
        &self,
        tree: Tree,
        prefix: &[u8],
        before: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<Entry>> {
        self.scan_prefix_rev_sync(tree, prefix, before, limit)
    }
    async fn apply(&self, batch: Batch) -> StoreResult<()> {
        self.apply_sync(batch)?;
        self.flush_sync()
    }
    fn changes(&self) -> tokio::sync::broadcast::Receiver<super::Change> {
        self.changes.subscribe()
    }
    async fn close(&self) -> StoreResult<()> {
        self.flush_sync()
    }
}

impl SledStore {
    fn get_sync(&self, tree: Tree, key: &[u8]) -> StoreResult<Option<Vec<u8>>> {
        Ok(self
            .tree(tree)
            .get(key)
            .map_err(engine)?
            .map(|v| v.to_vec()))
    }

    fn put_sync(&self, tree: Tree, key: &[u8], value: &[u8]) -> StoreResult<()> {
        self.tree(tree).insert(key, value).map_err(engine)?;
        Ok(())
    }

    fn delete_sync(&self, tree: Tree, key: &[u8]) -> StoreResult<bool> {
        Ok(self.tree(tree).remove(key).map_err(engine)?.is_some())
    }

    fn scan_prefix_sync(
        &self,
        tree: Tree,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<Entry>> {
        let t = self.tree(tree);
        let iter = match after {
            Some(after) => {
                let mut start = after.to_vec();
                start.push(0);
                t.range(start..)
            }
            None => t.range(prefix.to_vec()..),
        };
        let mut out = Vec::new();
        for item in iter {
            let (k, v) = item.map_err(engine)?;
            if !k.starts_with(prefix) || out.len() >= limit {
                break;
            }
            out.push((k.to_vec(), v.to_vec()));
        }
        Ok(out)
    }

    fn scan_prefix_rev_sync(
        &self,
        tree: Tree,
        prefix: &[u8],
        before: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<Entry>> {
        let t = self.tree(tree);
        let iter = match before {
            Some(before) => t.range(prefix.to_vec()..before.to_vec()),
            None => t.scan_prefix(prefix),
        };
        let mut out = Vec::new();
        for item in iter.rev() {
            let (k, v) = item.map_err(engine)?;
            if !k.starts_with(prefix) {
                continue;
            }
            if out.len() >= limit {
                break;
            }
            out.push((k.to_vec(), v.to_vec()));
        }
        Ok(out)
    }

    fn apply_sync(&self, batch: Batch) -> StoreResult<()> {
        let trees = batch.trees();
        if trees.is_empty() {
            return Ok(());
        }
        let index: HashMap<Tree, usize> = trees.iter().enumerate().map(|(i, t)| (*t, i)).collect();
        let handles: Vec<sled::Tree> = trees.iter().map(|t| self.tree(*t).clone()).collect();
        let result = handles
            .as_slice()
            .transaction(|txs: &Vec<TransactionalTree>| {
                for (i, cond) in batch.conditions.iter().enumerate() {
                    let holds = match cond {
                        Condition::Absent { tree, key } => txs[index[tree]].get(key)?.is_none(),
                        Condition::Equals { tree, key, value } => {
                            txs[index[tree]].get(key)?.as_deref() == value.as_deref()
                        }
                    };
                    if !holds {
                        return Err(ConflictableTransactionError::Abort(i));
                    }
                }
                for write in &batch.writes {
                    match write {
                        Write::Put { tree, key, value } => {
                            txs[index[tree]].insert(key.as_slice(), value.as_slice())?;
                        }
                        Write::Delete { tree, key } => {
                            txs[index[tree]].remove(key.as_slice())?;
                        }
                    }
                }
                Ok(())
            });
        match result {
            Ok(()) => Ok(()),
            Err(TransactionError::Abort(i)) => Err(StoreError::ConditionFailed(i)),
            Err(TransactionError::Storage(e)) => Err(engine(e)),
        }
    }

    fn flush_sync(&self) -> StoreResult<()> {
        self.db.flush().map_err(engine)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn batch_is_all_or_nothing() {
        let s = SledStore::temporary().unwrap();
        s.put(Tree::Nonces, b"n1", b"used").await.unwrap();
        let err = s
            .apply(
                Batch::new()
                    .put(Tree::Receipts, b"r1".to_vec(), b"x".to_vec())
                    .require_absent(Tree::Nonces, b"n1".to_vec()),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::ConditionFailed(0)));
        assert_eq!(s.get(Tree::Receipts, b"r1").await.unwrap(), None);

        s.apply(
            Batch::new()
                .require_absent(Tree::Nonces, b"n2".to_vec())
                .put(Tree::Nonces, b"n2".to_vec(), b"used".to_vec())
                .put(Tree::Receipts, b"r2".to_vec(), b"y".to_vec()),
        )
        .await
        .unwrap();
        assert_eq!(
            s.get(Tree::Receipts, b"r2").await.unwrap().as_deref(),
            Some(&b"y"[..])
        );
    }

    #[tokio::test]
    async fn compare_and_swap_detects_change() {
        let s = SledStore::temporary().unwrap();
        s.put(Tree::Credits, b"c", b"100").await.unwrap();
        let stale = Batch::new()
            .require_equals(Tree::Credits, b"c".to_vec(), Some(b"90".to_vec()))
            .put(Tree::Credits, b"c".to_vec(), b"80".to_vec());
        assert!(s.apply(stale).await.is_err());
        let fresh = Batch::new()
            .require_equals(Tree::Credits, b"c".to_vec(), Some(b"100".to_vec()))
            .put(Tree::Credits, b"c".to_vec(), b"80".to_vec());
        s.apply(fresh).await.unwrap();
        assert_eq!(
            s.get(Tree::Credits, b"c").await.unwrap().as_deref(),
            Some(&b"80"[..])
        );
    }

    #[tokio::test]
    async fn scans_page_in_both_directions() {
        let s = SledStore::temporary().unwrap();
        for k in ["a/1", "a/2", "a/3", "b/1"] {
            s.put(Tree::Logs, k.as_bytes(), b"v").await.unwrap();
        }
        let keys = |v: Vec<Entry>| {
            v.into_iter()
                .map(|(k, _)| String::from_utf8(k).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            keys(s.scan_prefix(Tree::Logs, b"a/", None, 2).await.unwrap()),
            ["a/1", "a/2"]
        );
        assert_eq!(
            keys(
                s.scan_prefix(Tree::Logs, b"a/", Some(b"a/2"), 10)
                    .await
                    .unwrap()
            ),
            ["a/3"]
        );
        assert_eq!(
            keys(s.scan_prefix_rev(Tree::Logs, b"a/", None, 2).await.unwrap()),
            ["a/3", "a/2"]
        );
        assert_eq!(
            keys(
                s.scan_prefix_rev(Tree::Logs, b"a/", Some(b"a/2"), 10)
                    .await
                    .unwrap()
            ),
            ["a/1"]
        );
    }
}
