//! Atomic write batches with optimistic preconditions.

use super::Tree;

/// A precondition checked inside the same atomic step as the writes.
#[derive(Debug, Clone)]
pub enum Condition {
    /// The key must not exist (claiming a nonce, reserving a slug).
    Absent { tree: Tree, key: Vec<u8> },
    /// The key must hold exactly these bytes (`None`: must be absent). This is compare-and-swap,
    /// used for balances: read, compute, then write only if nobody changed it meanwhile.
    Equals {
        tree: Tree,
        key: Vec<u8>,
        value: Option<Vec<u8>>,
    },
}

#[derive(Debug, Clone)]
pub enum Write {
    Put {
        tree: Tree,
        key: Vec<u8>,
        value: Vec<u8>,
    },
    Delete {
        tree: Tree,
        key: Vec<u8>,
    },
}

/// Conditions and writes applied all-or-nothing by [`super::Store::apply`].
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub conditions: Vec<Condition>,
    pub writes: Vec<Write>,
}

impl Batch {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn require_absent(mut self, tree: Tree, key: impl Into<Vec<u8>>) -> Self {
        self.conditions.push(Condition::Absent {
            tree,
            key: key.into(),
        });
        self
    }

    pub fn require_equals(
        mut self,
        tree: Tree,
        key: impl Into<Vec<u8>>,
        value: Option<Vec<u8>>,
    ) -> Self {
        self.conditions.push(Condition::Equals {
            tree,
            key: key.into(),
            value,
        });
        self
    }

    pub fn put(mut self, tree: Tree, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Self {
        self.writes.push(Write::Put {
            tree,
            key: key.into(),
            value: value.into(),
        });
        self
    }

    pub fn delete(mut self, tree: Tree, key: impl Into<Vec<u8>>) -> Self {
        self.writes.push(Write::Delete {
            tree,
            key: key.into(),
        });
        self
    }

    /// Appends another batch's conditions and writes after this one's (condition indexes of
    /// `self` are unchanged).
    pub fn extend(mut self, other: Batch) -> Self {
        self.conditions.extend(other.conditions);
        self.writes.extend(other.writes);
        self
    }

    /// Every tree the batch touches, sorted and deduplicated (engines lock or open these).
    pub fn trees(&self) -> Vec<Tree> {
        let mut trees: Vec<Tree> = self
            .conditions
            .iter()
            .map(|c| match c {
                Condition::Absent { tree, .. } | Condition::Equals { tree, .. } => *tree,
            })
            .chain(self.writes.iter().map(|w| match w {
                Write::Put { tree, .. } | Write::Delete { tree, .. } => *tree,
            }))
            .collect();
        trees.sort();
        trees.dedup();
        trees
    }
}
