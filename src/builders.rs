//! Builders: third-party owners of endpoints, identified by a builder key.
//!
//! A builder is created by registering (paid, `POST /ai/builders/register`) or by an admin
//! onboarding a partner (`POST /ai/admin/builders`). Either way the caller gets the builder
//! record and a plaintext key exactly once; the store keeps only the key's SHA-256.
//!
//! # Layout
//! - `keys`: key generation, hashing and the hash index.
//! - `identity`: the builder record, registration, authentication and rotation.
//! - [`Caller`]: who acts on an endpoint, the admin or a builder (the HTTP layer's extractors
//!   produce it from the request's credentials).

pub mod identity;
mod keys;

pub use identity::{
    authenticate, find, register, rotate_key, Builder, BuilderError, BuilderRecord, PayerInfo,
    RegisterRequest,
};
pub use keys::{secrets_equal, KEY_PREFIX};

/// Who acts: the admin (the admin token) or a builder (a valid builder key).
#[derive(Debug, Clone)]
pub enum Caller {
    Admin,
    Builder(Builder),
}

impl Caller {
    pub fn is_admin(&self) -> bool {
        matches!(self, Caller::Admin)
    }
}
