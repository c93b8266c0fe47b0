//! Checking a log's proofs with nothing but hashes (RFC 9162, sections 2.1.3.2 and 2.1.4.2):
//! what a reader, a monitor or `toolhost receipt verify` runs against a signed tree head.
//!
//! Both walks follow the positions of the nodes in the tree from the sizes alone, so a proof
//! of the wrong length, for another index or another size, fails: no hash can make it pass.

use crate::hash::{self, Hash};

/// Why a proof does not prove what it was offered for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// The index is not in the tree, or the old size is 0 or above the new one.
    #[error("the sizes do not describe a proof (index {index}, sizes {old_size} and {size})")]
    Sizes {
        index: u64,
        old_size: u64,
        size: u64,
    },
    /// The proof holds more or fewer hashes than the sizes call for.
    #[error("the proof has the wrong number of hashes for these sizes")]
    Length,
    /// The hashes lead to another root: the entry is not there, or the trees differ.
    #[error("the proof leads to another root")]
    Mismatch,
}

/// Checks that `leaf` (a leaf hash, [`hash::leaf`]) is leaf `index` of the tree of `size`
/// leaves whose root is `root`.
pub fn inclusion(
    leaf: &Hash,
    index: u64,
    size: u64,
    proof: &[Hash],
    root: &Hash,
) -> Result<(), ProofError> {
    if index >= size {
        return Err(ProofError::Sizes {
            index,
            old_size: 0,
            size,
        });
    }
    let (mut f, mut s) = (index, size - 1);
    let mut r = *leaf;
    for p in proof {
        if s == 0 {
            return Err(ProofError::Length);
        }
        if f & 1 == 1 || f == s {
            r = hash::node(p, &r);
            // Past a right edge the tree has no sibling at some levels: skip them.
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            r = hash::node(&r, p);
        }
        f >>= 1;
        s >>= 1;
    }
    if s != 0 {
        return Err(ProofError::Length);
    }
    if r != *root {
        return Err(ProofError::Mismatch);
    }
    Ok(())
}

/// Checks that the tree of `old_size` leaves with root `old_root` is a prefix of the tree of
/// `size` leaves with root `root`.
pub fn consistency(
    old_size: u64,
    size: u64,
    old_root: &Hash,
    root: &Hash,
    proof: &[Hash],
) -> Result<(), ProofError> {
    if old_size == 0 || old_size > size {
        return Err(ProofError::Sizes {
            index: 0,
            old_size,
            size,
        });
    }
    if old_size == size {
        if !proof.is_empty() {
            return Err(ProofError::Length);
        }
        return match old_root == root {
            true => Ok(()),
            false => Err(ProofError::Mismatch),
        };
    }
    // The old tree's root is a node of the new tree when its size is a power of two: the
    // proof then leaves it out, and the reader starts from the root it holds.
    let mut path = proof.iter();
    let start = match old_size.is_power_of_two() {
        true => *old_root,
        false => *path.next().ok_or(ProofError::Length)?,
    };
    let (mut f, mut s) = (old_size - 1, size - 1);
    while f & 1 == 1 {
        f >>= 1;
        s >>= 1;
    }
    let (mut old, mut new) = (start, start);
    for c in path {
        if s == 0 {
            return Err(ProofError::Length);
        }
        if f & 1 == 1 || f == s {
            old = hash::node(c, &old);
            new = hash::node(c, &new);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            new = hash::node(&new, c);
        }
        f >>= 1;
        s >>= 1;
    }
    if s != 0 {
        return Err(ProofError::Length);
    }
    if old != *old_root || new != *root {
        return Err(ProofError::Mismatch);
    }
    Ok(())
}
