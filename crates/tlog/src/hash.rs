//! The tree's hashes (RFC 6962, section 2.1): SHA-256, with a leaf's input prefixed by `0x00`
//! and an interior node's by `0x01`. Without the prefixes an interior node's two child hashes,
//! 64 bytes, could be presented as a leaf, and a proof could show an entry that was never
//! logged.

use sha2::{Digest, Sha256};

/// A node's hash: SHA-256, 32 bytes.
pub type Hash = [u8; 32];

/// The root of the empty tree: SHA-256 of nothing.
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// The hash of a leaf holding `entry`.
pub fn leaf(entry: &[u8]) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update([0x00]);
    hasher.update(entry);
    hasher.finalize().into()
}

/// The hash of an interior node whose children hash to `left` and `right`.
pub fn node(left: &Hash, right: &Hash) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update([0x01]);
    hasher.update(left);
    hasher.update(right);
    hasher.finalize().into()
}
