//! The arithmetic of an append-only log of receipts, as Certificate Transparency defined it
//! (RFC 6962, section 2.1; RFC 9162, section 2.1): a Merkle tree over the log's entries, whose
//! root (with the tree's size) a log signs as its tree head, and the two proofs a reader checks
//! against signed heads: that an entry is in the tree (inclusion), and that a later tree
//! still holds an earlier one unchanged (consistency).
//!
//! Kept in a crate of its own, with no other dependency than SHA-256 and Ed25519, because every party
//! runs it: the service building heads and proofs, `toolhost` verifying them offline, and any
//! auditor reimplementing it (the tests hold it to the RFC's published vectors, so another
//! implementation that passes them agrees with this one). It holds no storage: [`tree`] works
//! over a slice of leaf hashes, and the log that stores them decides how to fetch them.
//!
//! - [`hash`]: leaf and interior hashes, domain-separated (`0x00` / `0x01` prefixes), so no
//!   leaf can pass for an interior node.
//! - [`tree`]: the root of a tree, and the proofs a log serves.
//! - [`verify`]: checking those proofs, as a reader does with nothing but hashes.
//! - [`note`] and [`checkpoint`]: the signed tree head (C2SP `signed-note` and
//!   `tlog-checkpoint`), in the text every tlog tool reads.
//! - [`tile`]: where the log's hashes and entries are served and what each file holds (C2SP
//!   `tlog-tiles`).

pub mod checkpoint;
pub mod hash;
pub mod note;
pub mod tile;
pub mod tree;
pub mod verify;

pub use checkpoint::Checkpoint;
pub use hash::Hash;
pub use note::{NoteError, Signer, Verifier};
pub use tile::Tile;
pub use verify::ProofError;
