//! Endpoint secrets: named values encrypted at rest, readable only by the sandbox at run time.
//!
//! Values are sealed with AES-256-GCM-SIV (misuse-resistant: a repeated random nonce leaks
//! equality of two values, never the key) under a master key from the config or generated into
//! the data dir. The endpoint's id and the name are the associated data, so a sealed value
//! copied to another endpoint or name fails to open. No route ever returns a value; they reach
//! only `ctx.env`.
//!
//! # Layout
//! - `cipher`: the master key and sealing.
//! - `vault`: stored secrets per endpoint: set, delete, list, decrypt.
//! - `rekey`: the start-up move of secrets an earlier release kept under slugs.

mod cipher;
pub mod rekey;
pub mod vault;

pub use cipher::SecretsCipher;
pub use vault::{
    apply_changes, decrypted, delete_all, is_env_name, list, SecretChanges, SecretInfo,
    SecretsError,
};
