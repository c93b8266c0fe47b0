//! Builders: third-party owners of endpoints, identified by a builder key.
//!
//! A builder is created by registering (paid, `POST /ai/builders/register`) or by an admin
//! onboarding a partner (`POST /ai/admin/builders`). Either way the caller gets the builder
//! record and a plaintext key exactly once; the store keeps only the key's SHA-256.
//!
//! # Layout
//! - `keys`: key generation, hashing and the hash index.
//! - `identity`: the builder record, registration, authentication and rotation.
//! - `routes`: the HTTP handlers.

mod identity;
mod keys;
pub mod routes;

pub use identity::{
    authenticate, register, rotate_key, Builder, BuilderError, BuilderRecord, PayerInfo,
    RegisterRequest,
};
pub use keys::KEY_PREFIX;
