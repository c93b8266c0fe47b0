//! The log's arithmetic against the published RFC 6962 vectors (the eight-entry tree of
//! Certificate Transparency's reference implementation), then every proof of every tree up to
//! 70 leaves made and checked, and each one tampered with in every way a forger could.

use toolhost_tlog::hash::{self, Hash};
use toolhost_tlog::{tree, verify, ProofError};

/// The reference entries, in order.
const ENTRIES: [&str; 8] = [
    "",
    "00",
    "10",
    "2021",
    "3031",
    "40414243",
    "5051525354555657",
    "606162636465666768696a6b6c6d6e6f",
];

/// The roots of the trees of the first 0..=8 entries.
const ROOTS: [&str; 9] = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];

fn h(hex: &str) -> Hash {
    hex::decode(hex).unwrap().try_into().unwrap()
}

fn hashes(hexes: &[&str]) -> Vec<Hash> {
    hexes.iter().map(|hex| h(hex)).collect()
}

fn reference_leaves() -> Vec<Hash> {
    ENTRIES
        .iter()
        .map(|entry| hash::leaf(&hex::decode(entry).unwrap()))
        .collect()
}

/// Leaves of a tree of `n` entries of our own.
fn leaves(n: u64) -> Vec<Hash> {
    (0..n).map(|i| hash::leaf(&i.to_be_bytes())).collect()
}

#[test]
fn roots_match_the_reference() {
    let leaves = reference_leaves();
    for (size, want) in ROOTS.iter().enumerate() {
        assert_eq!(tree::root(&leaves[..size]), h(want), "size {size}");
    }
    assert_eq!(hash::empty_root(), h(ROOTS[0]));
}

#[test]
fn inclusion_proofs_match_the_reference() {
    let leaves = reference_leaves();
    let vectors: [(u64, u64, Vec<Hash>); 4] = [
        (
            0,
            8,
            hashes(&[
                "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
            ]),
        ),
        (
            5,
            8,
            hashes(&[
                "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
            ]),
        ),
        (2, 3, hashes(&[ROOTS[2]])),
        (0, 1, Vec::new()),
    ];
    for (index, size, proof) in vectors {
        let tree = &leaves[..size as usize];
        assert_eq!(tree::inclusion_proof(index, tree), Some(proof.clone()));
        let leaf = &leaves[index as usize];
        let root = h(ROOTS[size as usize]);
        assert_eq!(verify::inclusion(leaf, index, size, &proof, &root), Ok(()));
    }
}

#[test]
fn consistency_proofs_match_the_reference() {
    let leaves = reference_leaves();
    let vectors: [(u64, u64, Vec<Hash>); 4] = [
        (1, 1, Vec::new()),
        (
            1,
            8,
            hashes(&[
                "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
            ]),
        ),
        (
            6,
            8,
            hashes(&[
                "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
                "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
            ]),
        ),
        (
            2,
            5,
            hashes(&[
                "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            ]),
        ),
    ];
    for (old, new, proof) in vectors {
        let tree = &leaves[..new as usize];
        assert_eq!(tree::consistency_proof(old, tree), Some(proof.clone()));
        let (old_root, root) = (h(ROOTS[old as usize]), h(ROOTS[new as usize]));
        assert_eq!(
            verify::consistency(old, new, &old_root, &root, &proof),
            Ok(())
        );
    }
}

/// Every changed hash, a hash left out or added, another index or another size: refused.
fn tampered(proof: &[Hash]) -> Vec<Vec<Hash>> {
    let mut forged = Vec::new();
    for i in 0..proof.len() {
        let mut changed = proof.to_vec();
        changed[i][i % 32] ^= 1;
        forged.push(changed);
        let mut shorter = proof.to_vec();
        shorter.remove(i);
        forged.push(shorter);
    }
    let mut longer = proof.to_vec();
    longer.push(hash::leaf(b"extra"));
    forged.push(longer);
    forged
}

#[test]
fn every_inclusion_proof_up_to_70_leaves_verifies_and_no_forgery_does() {
    let all = leaves(71);
    for size in 1..=70u64 {
        let tree = &all[..size as usize];
        let root = tree::root(tree);
        for index in 0..size {
            let leaf = &tree[index as usize];
            let proof = tree::inclusion_proof(index, tree).unwrap();
            assert_eq!(verify::inclusion(leaf, index, size, &proof, &root), Ok(()));
            for forged in tampered(&proof) {
                assert!(verify::inclusion(leaf, index, size, &forged, &root).is_err());
            }
            let other = hash::leaf(b"never logged");
            assert!(verify::inclusion(&other, index, size, &proof, &root).is_err());
            if index + 1 < size {
                assert!(verify::inclusion(leaf, index + 1, size, &proof, &root).is_err());
            }
            // Against the next tree's head (its size and root, as signed together).
            let next = tree::root(&all[..size as usize + 1]);
            assert!(verify::inclusion(leaf, index, size + 1, &proof, &next).is_err());
        }
        assert_eq!(tree::inclusion_proof(size, tree), None);
        assert!(matches!(
            verify::inclusion(&tree[0], size, size, &[], &root),
            Err(ProofError::Sizes { .. })
        ));
    }
}

#[test]
fn every_consistency_proof_up_to_70_leaves_verifies_and_no_forgery_does() {
    let all = leaves(70);
    // A tree that differs from `all` in one leaf: no proof may join its heads to `all`'s.
    let mut rewritten = all.clone();
    rewritten[3] = hash::leaf(b"rewritten");
    for size in 1..=70u64 {
        let tree = &all[..size as usize];
        let root = tree::root(tree);
        for old in 1..=size {
            let old_root = tree::root(&all[..old as usize]);
            let proof = tree::consistency_proof(old, tree).unwrap();
            assert_eq!(
                verify::consistency(old, size, &old_root, &root, &proof),
                Ok(())
            );
            for forged in tampered(&proof) {
                assert!(verify::consistency(old, size, &old_root, &root, &forged).is_err());
            }
            let forked = tree::root(&rewritten[..old as usize]);
            if old > 3 {
                assert_eq!(
                    verify::consistency(old, size, &forked, &root, &proof),
                    Err(ProofError::Mismatch)
                );
            }
            if old < size {
                assert!(verify::consistency(old + 1, size, &old_root, &root, &proof).is_err());
            }
        }
        assert_eq!(tree::consistency_proof(0, tree), None);
        assert_eq!(tree::consistency_proof(size + 1, tree), None);
        assert!(matches!(
            verify::consistency(0, size, &root, &root, &[]),
            Err(ProofError::Sizes { .. })
        ));
    }
}

#[test]
fn a_leaf_cannot_pass_for_an_interior_node() {
    let leaves = leaves(2);
    let root = tree::root(&leaves);
    // The two children's hashes, logged as one entry, hash to something else.
    let mut children = leaves[0].to_vec();
    children.extend_from_slice(&leaves[1]);
    assert_ne!(hash::leaf(&children), root);
    assert_eq!(hash::node(&leaves[0], &leaves[1]), root);
}

#[test]
fn subtrees_computed_once_give_the_same_roots_and_proofs() {
    for size in 0..=70u64 {
        let tree = leaves(size);
        let subtrees = tree::Subtrees::new(tree.clone());
        assert_eq!(subtrees.size(), size);
        assert_eq!(subtrees.root(), tree::root(&tree), "size {size}");
        for index in 0..=size {
            assert_eq!(
                subtrees.inclusion_proof(index),
                tree::inclusion_proof(index, &tree),
                "leaf {index} of {size}"
            );
        }
    }
}
