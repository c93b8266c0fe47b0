//! A tree's root and the proofs a log serves, over its leaf hashes in order (RFC 6962,
//! sections 2.1, 2.1.1 and 2.1.2).
//!
//! A tree of `n` leaves splits at `k`, the largest power of two below `n`: the left subtree
//! is complete (`k` leaves), the right one holds the rest. So a subtree that is complete never
//! changes as the log grows, which is what makes a consistency proof short and lets a log
//! serve its complete subtrees as immutable tiles.
//!
//! These functions recurse over the slice they are given, hashing every leaf of it: the log
//! passes only what the proof needs, or, for large logs, computes the same values from stored
//! subtree hashes.

use crate::hash::{self, Hash};

/// The largest power of two below `n` (for `n > 1`): where a tree of `n` leaves splits.
pub(crate) fn split(n: u64) -> u64 {
    debug_assert!(n > 1);
    1 << (63 - (n - 1).leading_zeros())
}

/// The root of the tree whose leaves hash to `leaves` (MTH in RFC 6962).
pub fn root(leaves: &[Hash]) -> Hash {
    match leaves {
        [] => hash::empty_root(),
        [leaf] => *leaf,
        _ => {
            let (left, right) = halves(leaves);
            hash::node(&root(left), &root(right))
        }
    }
}

/// The inclusion proof of leaf `index` in the tree of `leaves` (PATH in RFC 6962): the
/// hashes a reader combines with the leaf's, from the bottom up, to reach the root. `None`
/// when `index` is not in the tree.
pub fn inclusion_proof(index: u64, leaves: &[Hash]) -> Option<Vec<Hash>> {
    if index >= leaves.len() as u64 {
        return None;
    }
    let mut proof = Vec::new();
    path(index, leaves, &mut proof);
    Some(proof)
}

fn path(index: u64, leaves: &[Hash], proof: &mut Vec<Hash>) {
    if leaves.len() <= 1 {
        return;
    }
    let (left, right) = halves(leaves);
    let k = left.len() as u64;
    if index < k {
        path(index, left, proof);
        proof.push(root(right));
    } else {
        path(index - k, right, proof);
        proof.push(root(left));
    }
}

/// The proof that the tree of the first `old_size` of `leaves` is a prefix of the tree of all
/// of them (PROOF in RFC 6962). `None` unless `0 < old_size <= leaves.len()`; empty when the
/// sizes are equal.
pub fn consistency_proof(old_size: u64, leaves: &[Hash]) -> Option<Vec<Hash>> {
    if old_size == 0 || old_size > leaves.len() as u64 {
        return None;
    }
    let mut proof = Vec::new();
    subproof(old_size, leaves, true, &mut proof);
    Some(proof)
}

/// SUBPROOF in RFC 6962: `whole` says the old tree's root is the one the reader holds (so it
/// need not be sent).
fn subproof(old_size: u64, leaves: &[Hash], whole: bool, proof: &mut Vec<Hash>) {
    if old_size == leaves.len() as u64 {
        if !whole {
            proof.push(root(leaves));
        }
        return;
    }
    let (left, right) = halves(leaves);
    let k = left.len() as u64;
    if old_size <= k {
        subproof(old_size, left, whole, proof);
        proof.push(root(right));
    } else {
        subproof(old_size - k, right, false, proof);
        proof.push(root(left));
    }
}

/// A tree's two subtrees (for at least two leaves).
fn halves(leaves: &[Hash]) -> (&[Hash], &[Hash]) {
    let k = split(leaves.len() as u64);
    leaves.split_at(usize::try_from(k).unwrap_or(usize::MAX))
}
