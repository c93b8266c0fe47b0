//! A tree's root and the proofs a log serves (RFC 6962, sections 2.1, 2.1.1 and 2.1.2).
//!
//! A tree of `n` leaves splits at `k`, the largest power of two below `n`: the left subtree
//! is complete (`k` leaves), the right one holds the rest. So a subtree that is complete never
//! changes as the log grows, which is what makes a consistency proof short and lets a log
//! serve its complete subtrees as immutable tiles.
//!
//! The functions take the tree as [`Nodes`]: the root of any complete subtree, which is what a
//! log stores (its tiles, `crate::tile`); every other hash a root or a proof needs is computed
//! from those along the RFC's own recursion. A slice of leaf hashes is [`Nodes`] too
//! ([`Leaves`]), for small trees and tests.

use std::convert::Infallible;

use crate::hash::{self, Hash};

/// The complete subtrees of a tree: a log's stored hashes.
pub trait Nodes {
    type Error;

    /// The root of the complete subtree of height `height` (`2^height` leaves) at `index`:
    /// the leaves `index·2^height` to `(index+1)·2^height - 1`.
    fn node(&self, height: u32, index: u64) -> Result<Hash, Self::Error>;
}

/// A tree given as all its leaf hashes.
pub struct Leaves<'a>(pub &'a [Hash]);

impl Nodes for Leaves<'_> {
    type Error = Infallible;

    fn node(&self, height: u32, index: u64) -> Result<Hash, Infallible> {
        let width = 1usize << height;
        let start = usize::try_from(index).unwrap_or(usize::MAX) * width;
        Ok(complete_root(&self.0[start..start + width]))
    }
}

/// Every complete subtree of a tree held in memory, computed once from its leaves: so the root
/// and the inclusion proofs of all `n` leaves cost `n - 1` node hashes to prepare and a few
/// more each, where [`Leaves`] rehashes the subtrees a proof names for every proof (a batch of
/// receipts proven at once).
pub struct Subtrees {
    /// `levels[h][i]`: the root of the complete subtree of height `h` at `i`.
    levels: Vec<Vec<Hash>>,
}

impl Subtrees {
    pub fn new(leaves: Vec<Hash>) -> Subtrees {
        let mut levels = vec![leaves];
        while let Some(below) = levels.last().filter(|level| level.len() > 1) {
            let above = below
                .chunks_exact(2)
                .map(|pair| hash::node(&pair[0], &pair[1]))
                .collect();
            levels.push(above);
        }
        Subtrees { levels }
    }

    /// How many leaves the tree has.
    pub fn size(&self) -> u64 {
        self.levels[0].len() as u64
    }

    pub fn root(&self) -> Hash {
        match root_of(self, self.size()) {
            Ok(root) => root,
            Err(never) => match never {},
        }
    }

    /// The inclusion proof of leaf `index` (`None` past the last leaf).
    pub fn inclusion_proof(&self, index: u64) -> Option<Vec<Hash>> {
        match inclusion_proof_of(self, index, self.size()) {
            Ok(proof) => proof,
            Err(never) => match never {},
        }
    }
}

impl Nodes for Subtrees {
    type Error = Infallible;

    fn node(&self, height: u32, index: u64) -> Result<Hash, Infallible> {
        // The recursion asks only for complete subtrees of the tree, which are all here.
        Ok(self.levels[height as usize][usize::try_from(index).unwrap_or(usize::MAX)])
    }
}

/// The root of a complete subtree's leaves (a power of two of them), pairwise.
pub(crate) fn complete_root(leaves: &[Hash]) -> Hash {
    match leaves {
        [leaf] => *leaf,
        _ => {
            let (left, right) = leaves.split_at(leaves.len() / 2);
            hash::node(&complete_root(left), &complete_root(right))
        }
    }
}

/// The largest power of two below `n` (for `n > 1`): where a tree of `n` leaves splits.
fn split(n: u64) -> u64 {
    debug_assert!(n > 1);
    1 << (63 - (n - 1).leading_zeros())
}

/// The root of the tree whose leaves hash to `leaves` (MTH in RFC 6962).
pub fn root(leaves: &[Hash]) -> Hash {
    match root_of(&Leaves(leaves), leaves.len() as u64) {
        Ok(root) => root,
        Err(never) => match never {},
    }
}

/// The root of the tree of the first `size` leaves of `nodes`.
pub fn root_of<N: Nodes>(nodes: &N, size: u64) -> Result<Hash, N::Error> {
    match size {
        0 => Ok(hash::empty_root()),
        size => range(nodes, 0, size),
    }
}

/// MTH of the leaves `start..end` (not empty), where `start` is a multiple of a power of two
/// at least `end - start`, as every subtree the RFC's recursion meets is: a complete subtree
/// is one stored node, any other splits as the RFC splits it.
fn range<N: Nodes>(nodes: &N, start: u64, end: u64) -> Result<Hash, N::Error> {
    let n = end - start;
    if n.is_power_of_two() {
        let height = n.trailing_zeros();
        return nodes.node(height, start >> height);
    }
    let k = split(n);
    Ok(hash::node(
        &range(nodes, start, start + k)?,
        &range(nodes, start + k, end)?,
    ))
}

/// The inclusion proof of leaf `index` in the tree of `leaves` (PATH in RFC 6962): the
/// hashes a reader combines with the leaf's, from the bottom up, to reach the root. `None`
/// when `index` is not in the tree.
pub fn inclusion_proof(index: u64, leaves: &[Hash]) -> Option<Vec<Hash>> {
    match inclusion_proof_of(&Leaves(leaves), index, leaves.len() as u64) {
        Ok(proof) => proof,
        Err(never) => match never {},
    }
}

/// The inclusion proof of leaf `index` in the tree of the first `size` leaves of `nodes`.
pub fn inclusion_proof_of<N: Nodes>(
    nodes: &N,
    index: u64,
    size: u64,
) -> Result<Option<Vec<Hash>>, N::Error> {
    if index >= size {
        return Ok(None);
    }
    let mut proof = Vec::new();
    let (mut start, mut end, mut index) = (0, size, index);
    // PATH(m, D[start:end]) from the top down; the proof lists it from the bottom up.
    while end - start > 1 {
        let k = split(end - start);
        if index < k {
            proof.push(range(nodes, start + k, end)?);
            end = start + k;
        } else {
            proof.push(range(nodes, start, start + k)?);
            start += k;
            index -= k;
        }
    }
    proof.reverse();
    Ok(Some(proof))
}

/// The proof that the tree of the first `old_size` of `leaves` is a prefix of the tree of all
/// of them (PROOF in RFC 6962). `None` unless `0 < old_size <= leaves.len()`; empty when the
/// sizes are equal.
pub fn consistency_proof(old_size: u64, leaves: &[Hash]) -> Option<Vec<Hash>> {
    match consistency_proof_of(&Leaves(leaves), old_size, leaves.len() as u64) {
        Ok(proof) => proof,
        Err(never) => match never {},
    }
}

/// The consistency proof between the trees of the first `old_size` and the first `size`
/// leaves of `nodes`.
pub fn consistency_proof_of<N: Nodes>(
    nodes: &N,
    old_size: u64,
    size: u64,
) -> Result<Option<Vec<Hash>>, N::Error> {
    if old_size == 0 || old_size > size {
        return Ok(None);
    }
    let mut proof = Vec::new();
    // SUBPROOF(m, D[start:end], whole) from the top down; listed from the bottom up.
    let (mut start, mut end, mut m, mut whole) = (0, size, old_size, true);
    while m != end - start {
        let k = split(end - start);
        if m <= k {
            proof.push(range(nodes, start + k, end)?);
            end = start + k;
        } else {
            proof.push(range(nodes, start, start + k)?);
            start += k;
            m -= k;
            whole = false;
        }
    }
    if !whole {
        proof.push(range(nodes, start, end)?);
    }
    proof.reverse();
    Ok(Some(proof))
}
