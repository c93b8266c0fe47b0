//! WebCrypto for every handler: `crypto.getRandomValues`, `crypto.randomUUID` and
//! `crypto.subtle` (`50_crypto.js`).
//!
//! The glue does what WebIDL and the key's bookkeeping ask (argument conversion, algorithm
//! names, usages, `extractable`); these ops do the key formats and the mathematics, with
//! RustCrypto crates, and fail with the DOMException names WebCrypto specifies. Why an
//! extension of our own rather than Deno's `deno_crypto`: the README's "WebCrypto" part.
//!
//! No capability gates these ops: like `Math.random`, they touch nothing outside the isolate.
//! They are pure computation on the isolate's thread, so nothing crosses the worker IPC and no
//! host op exists for them; the randomness is the kernel's (`getrandom`, on the worker's seccomp
//! allow-list). Keys live in the isolate's memory only: the glue keeps a key's bytes in a
//! private slot of its `CryptoKey` and hands them to each op, and Rust keeps nothing between
//! calls, so a key goes when the handler drops it or the isolate is recycled.
//!
//! # Layout
//!
//! - `digest`: the SHA family, [`digest::Hash`].
//! - `hmac`, `ed25519`, `ecdsa` (P-256): one file per algorithm, each with its import, export,
//!   generate, sign and verify.
//! - `jwk`: the JSON Web Key members the algorithms read and write.

use std::borrow::Cow;

use deno_core::{op2, ToJsBuffer};
use deno_error::{AdditionalProperties, JsErrorClass};
use rand::rngs::OsRng;
use rand::RngCore;
use serde::{Deserialize, Serialize};

mod digest;
mod ecdsa;
mod ed25519;
mod hmac;
mod jwk;

use digest::Hash;
use jwk::Jwk;

deno_core::extension!(
    toolhost_crypto,
    ops = [
        op_crypto_get_random_values,
        op_crypto_random_uuid,
        op_crypto_digest,
        op_crypto_import_key,
        op_crypto_export_key,
        op_crypto_generate_key,
        op_crypto_sign,
        op_crypto_verify,
    ]
);

/// `getRandomValues` fills at most this many bytes per call (WebCrypto's quota).
pub(crate) const MAX_RANDOM_BYTES: usize = 65_536;

/// The largest message, key or signature an op takes. The heap limit bounds inputs anyway;
/// this keeps one native call (which the time limit cannot interrupt) to tens of milliseconds.
pub(crate) const MAX_INPUT_BYTES: usize = 16 << 20;

/// A WebCrypto failure, named as the DOMException the specification throws. The glue builds
/// the JS error from the class name (`DOMException<Name>`, Deno's convention).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CryptoError {
    /// An algorithm, curve, hash or format this implementation does not have.
    #[error("{0}")]
    NotSupported(String),
    /// Key data that is malformed or does not fit the algorithm.
    #[error("{0}")]
    Data(String),
    /// The operation failed for a reason of its own (a bad length, an input over the limit).
    #[error("{0}")]
    Operation(String),
    /// The key cannot be used so (exported in a format its type does not have).
    #[error("{0}")]
    InvalidAccess(String),
    /// `getRandomValues` asked for more than [`MAX_RANDOM_BYTES`].
    #[error("{0}")]
    QuotaExceeded(String),
}

impl CryptoError {
    fn name(&self) -> &'static str {
        match self {
            CryptoError::NotSupported(_) => "NotSupportedError",
            CryptoError::Data(_) => "DataError",
            CryptoError::Operation(_) => "OperationError",
            CryptoError::InvalidAccess(_) => "InvalidAccessError",
            CryptoError::QuotaExceeded(_) => "QuotaExceededError",
        }
    }
}

impl JsErrorClass for CryptoError {
    fn get_class(&self) -> Cow<'static, str> {
        format!("DOMException{}", self.name()).into()
    }

    fn get_message(&self) -> Cow<'static, str> {
        self.to_string().into()
    }

    fn get_additional_properties(&self) -> AdditionalProperties {
        Box::new(std::iter::empty())
    }

    fn get_ref(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }
}

/// The algorithms of `crypto.subtle` beyond `digest`, by the names the glue normalized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Algorithm {
    Hmac,
    Ed25519,
    Ecdsa,
}

impl Algorithm {
    fn parse(name: &str) -> Result<Algorithm, CryptoError> {
        match name {
            "HMAC" => Ok(Algorithm::Hmac),
            "Ed25519" => Ok(Algorithm::Ed25519),
            "ECDSA" => Ok(Algorithm::Ecdsa),
            _ => Err(CryptoError::NotSupported(format!(
                "the algorithm {name} is not supported"
            ))),
        }
    }
}

/// A key's type, as `CryptoKey.type` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum KeyKind {
    Secret,
    Public,
    Private,
}

/// A key format of `importKey` and `exportKey`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Format {
    Raw,
    Spki,
    Pkcs8,
    Jwk,
}

impl KeyKind {
    fn name(self) -> &'static str {
        match self {
            KeyKind::Secret => "secret",
            KeyKind::Public => "public",
            KeyKind::Private => "private",
        }
    }
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Raw => "raw",
            Format::Spki => "spki",
            Format::Pkcs8 => "pkcs8",
            Format::Jwk => "jwk",
        }
    }
}

/// Key data to import, by format.
#[derive(Clone, Copy)]
enum KeyData<'a> {
    Raw(&'a [u8]),
    Spki(&'a [u8]),
    Pkcs8(&'a [u8]),
    Jwk(&'a Jwk),
}

fn check_input(what: &str, bytes: &[u8]) -> Result<(), CryptoError> {
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(CryptoError::Operation(format!(
            "the {what} is larger than the sandbox's limit of {} MiB",
            MAX_INPUT_BYTES >> 20
        )));
    }
    Ok(())
}

/// DER encoding of a key that was checked when imported or generated does not fail; if the
/// encoder ever did, the export fails.
fn encoding_failed<E>(_: E) -> CryptoError {
    CryptoError::Operation("the key cannot be encoded".to_owned())
}

fn hash_arg(hash: Option<&str>) -> Result<Hash, CryptoError> {
    Hash::parse(hash.unwrap_or_default())
}

#[op2(fast)]
fn op_crypto_get_random_values(#[buffer] out: &mut [u8]) -> Result<(), CryptoError> {
    if out.len() > MAX_RANDOM_BYTES {
        return Err(CryptoError::QuotaExceeded(format!(
            "getRandomValues fills at most {MAX_RANDOM_BYTES} bytes, not {}",
            out.len()
        )));
    }
    OsRng.fill_bytes(out);
    Ok(())
}

#[op2]
#[string]
fn op_crypto_random_uuid() -> String {
    let mut bytes = [0u8; 16];
    OsRng.fill_bytes(&mut bytes);
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

#[op2]
#[buffer]
fn op_crypto_digest(#[string] hash: &str, #[buffer] data: &[u8]) -> Result<Vec<u8>, CryptoError> {
    check_input("message", data)?;
    Ok(Hash::parse(hash)?.digest(data))
}

/// `importKey`'s algorithm parameters and, for `jwk`, the key (the glue passes its string
/// members only); other formats bring their bytes beside.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ImportArgs {
    algorithm: String,
    format: Format,
    hash: Option<String>,
    /// HMAC's `length`, in bits.
    length: Option<u32>,
    named_curve: Option<String>,
    jwk: Option<Jwk>,
}

/// An imported key: its type and its bytes in the one form the ops take back (HMAC: the
/// secret; Ed25519: the 32-byte seed or public key; ECDSA: the scalar or the uncompressed
/// point), and HMAC's length in bits.
#[derive(Serialize)]
struct ImportedKey {
    kind: KeyKind,
    material: ToJsBuffer,
    length: Option<u32>,
}

#[op2]
#[serde]
fn op_crypto_import_key(
    #[serde] args: ImportArgs,
    #[buffer] data: &[u8],
) -> Result<ImportedKey, CryptoError> {
    check_input("key data", data)?;
    let data = match (args.format, &args.jwk) {
        (Format::Raw, _) => KeyData::Raw(data),
        (Format::Spki, _) => KeyData::Spki(data),
        (Format::Pkcs8, _) => KeyData::Pkcs8(data),
        (Format::Jwk, Some(jwk)) => KeyData::Jwk(jwk),
        (Format::Jwk, None) => {
            return Err(CryptoError::Data(
                "a jwk import needs a JSON Web Key".to_owned(),
            ))
        }
    };
    let (kind, material, length) = match Algorithm::parse(&args.algorithm)? {
        Algorithm::Hmac => {
            let hash = hash_arg(args.hash.as_deref())?;
            let (secret, bits) = hmac::import(data, hash, args.length)?;
            (KeyKind::Secret, secret, Some(bits))
        }
        Algorithm::Ed25519 => {
            let (kind, material) = ed25519::import(data)?;
            (kind, material, None)
        }
        Algorithm::Ecdsa => {
            ecdsa::check_curve(args.named_curve.as_deref())?;
            let (kind, material) = ecdsa::import(data)?;
            (kind, material, None)
        }
    };
    Ok(ImportedKey {
        kind,
        material: material.into(),
        length,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExportArgs {
    algorithm: String,
    format: Format,
    kind: KeyKind,
    hash: Option<String>,
}

/// An exported key: bytes for `raw`, `spki` and `pkcs8`, an object for `jwk` (the glue adds
/// `key_ops` and `ext`).
#[derive(Serialize)]
#[serde(untagged)]
enum Exported {
    Bytes(ToJsBuffer),
    Jwk(Jwk),
}

#[op2]
#[serde]
fn op_crypto_export_key(
    #[serde] args: ExportArgs,
    #[buffer] key: &[u8],
) -> Result<Exported, CryptoError> {
    match Algorithm::parse(&args.algorithm)? {
        Algorithm::Hmac => hmac::export(args.format, key, hash_arg(args.hash.as_deref())?),
        Algorithm::Ed25519 => ed25519::export(args.format, args.kind, key),
        Algorithm::Ecdsa => ecdsa::export(args.format, args.kind, key),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GenerateArgs {
    algorithm: String,
    hash: Option<String>,
    length: Option<u32>,
    named_curve: Option<String>,
}

/// A new key: `secret` (HMAC, with its `length` in bits) or a `public` and `private` pair.
#[derive(Serialize)]
struct Generated {
    secret: Option<ToJsBuffer>,
    length: Option<u32>,
    public: Option<ToJsBuffer>,
    private: Option<ToJsBuffer>,
}

impl Generated {
    fn pair((private, public): (Vec<u8>, Vec<u8>)) -> Generated {
        Generated {
            secret: None,
            length: None,
            public: Some(public.into()),
            private: Some(private.into()),
        }
    }
}

#[op2]
#[serde]
fn op_crypto_generate_key(#[serde] args: GenerateArgs) -> Result<Generated, CryptoError> {
    match Algorithm::parse(&args.algorithm)? {
        Algorithm::Hmac => {
            let (secret, bits) = hmac::generate(hash_arg(args.hash.as_deref())?, args.length)?;
            Ok(Generated {
                secret: Some(secret.into()),
                length: Some(bits),
                public: None,
                private: None,
            })
        }
        Algorithm::Ed25519 => Ok(Generated::pair(ed25519::generate())),
        Algorithm::Ecdsa => {
            ecdsa::check_curve(args.named_curve.as_deref())?;
            Ok(Generated::pair(ecdsa::generate()))
        }
    }
}

/// `hash` is "" for Ed25519, which has none.
#[op2]
#[buffer]
fn op_crypto_sign(
    #[string] algorithm: &str,
    #[string] hash: &str,
    #[buffer] key: &[u8],
    #[buffer] data: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    check_input("message", data)?;
    match Algorithm::parse(algorithm)? {
        Algorithm::Hmac => Ok(hmac::sign(Hash::parse(hash)?, key, data)),
        Algorithm::Ed25519 => ed25519::sign(key, data),
        Algorithm::Ecdsa => ecdsa::sign(Hash::parse(hash)?, key, data),
    }
}

/// A signature of the wrong length or shape is `false`, not an error (as WebCrypto says).
#[op2(fast)]
fn op_crypto_verify(
    #[string] algorithm: &str,
    #[string] hash: &str,
    #[buffer] key: &[u8],
    #[buffer] signature: &[u8],
    #[buffer] data: &[u8],
) -> Result<bool, CryptoError> {
    check_input("message", data)?;
    check_input("signature", signature)?;
    match Algorithm::parse(algorithm)? {
        Algorithm::Hmac => Ok(hmac::verify(Hash::parse(hash)?, key, signature, data)),
        Algorithm::Ed25519 => Ok(ed25519::verify(key, signature, data)),
        Algorithm::Ecdsa => Ok(ecdsa::verify(Hash::parse(hash)?, key, signature, data)),
    }
}
