//! HMAC (RFC 2104) over the SHA family: raw and jwk keys.

use hmac::{Hmac, Mac};
use rand::rngs::OsRng;
use rand::RngCore;
use sha1::Sha1;
use sha2::{Sha256, Sha384, Sha512};

use super::digest::Hash;
use super::jwk::{self, Jwk};
use super::{CryptoError, Exported, Format, KeyData, MAX_INPUT_BYTES};

/// The secret and its length in bits: all its bits, or `length`, which WebCrypto lets end
/// inside the last byte only.
fn with_length(secret: Vec<u8>, length: Option<u32>) -> Result<(Vec<u8>, u32), CryptoError> {
    if secret.is_empty() {
        return Err(CryptoError::Data("an HMAC key cannot be empty".to_owned()));
    }
    let bits = u32::try_from(secret.len() * 8)
        .map_err(|_| CryptoError::Data("the HMAC key is too long".to_owned()))?;
    match length {
        None => Ok((secret, bits)),
        Some(length) if length != 0 && length <= bits && length > bits - 8 => Ok((secret, length)),
        Some(length) => Err(CryptoError::Data(format!(
            "an HMAC length of {length} bits does not fit a key of {} bytes",
            secret.len()
        ))),
    }
}

/// `raw`, or an `oct` JWK whose `alg`, if any, names `hash`.
pub(super) fn import(
    data: KeyData<'_>,
    hash: Hash,
    length: Option<u32>,
) -> Result<(Vec<u8>, u32), CryptoError> {
    match data {
        KeyData::Raw(bytes) => with_length(bytes.to_vec(), length),
        KeyData::Jwk(jwk) => {
            jwk.expect_kty("oct")?;
            jwk.expect_alg(&[hash.hmac_jwk_alg()])?;
            let secret = jwk::decode(&jwk.k, "k")?
                .ok_or_else(|| CryptoError::Data("the JWK has no k".to_owned()))?;
            with_length(secret, length)
        }
        KeyData::Spki(_) | KeyData::Pkcs8(_) => Err(CryptoError::NotSupported(
            "HMAC keys are imported as raw or jwk".to_owned(),
        )),
    }
}

pub(super) fn export(format: Format, secret: &[u8], hash: Hash) -> Result<Exported, CryptoError> {
    match format {
        Format::Raw => Ok(Exported::Bytes(secret.to_vec().into())),
        Format::Jwk => Ok(Exported::Jwk(Jwk {
            kty: Some("oct".to_owned()),
            alg: Some(hash.hmac_jwk_alg().to_owned()),
            k: jwk::encode(secret),
            ..Jwk::default()
        })),
        Format::Spki | Format::Pkcs8 => Err(CryptoError::NotSupported(
            "HMAC keys are exported as raw or jwk".to_owned(),
        )),
    }
}

/// A new secret of `length` bits (the hash's block size by default); bits past the length in
/// the last byte are zero.
pub(super) fn generate(hash: Hash, length: Option<u32>) -> Result<(Vec<u8>, u32), CryptoError> {
    let bits = length.unwrap_or_else(|| hash.block_bits());
    if bits == 0 || bits as usize > MAX_INPUT_BYTES * 8 {
        return Err(CryptoError::Operation(format!(
            "an HMAC key of {bits} bits cannot be generated"
        )));
    }
    let mut secret = vec![0u8; bits.div_ceil(8) as usize];
    OsRng.fill_bytes(&mut secret);
    if !bits.is_multiple_of(8) {
        let last = secret.len() - 1;
        secret[last] &= 0xffu8 << (8 - bits % 8);
    }
    Ok((secret, bits))
}

fn mac<M: Mac + hmac::digest::KeyInit>(secret: &[u8], data: &[u8]) -> M {
    let mut mac = <M as Mac>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(data);
    mac
}

pub(super) fn sign(hash: Hash, secret: &[u8], data: &[u8]) -> Vec<u8> {
    match hash {
        Hash::Sha1 => mac::<Hmac<Sha1>>(secret, data)
            .finalize()
            .into_bytes()
            .to_vec(),
        Hash::Sha256 => mac::<Hmac<Sha256>>(secret, data)
            .finalize()
            .into_bytes()
            .to_vec(),
        Hash::Sha384 => mac::<Hmac<Sha384>>(secret, data)
            .finalize()
            .into_bytes()
            .to_vec(),
        Hash::Sha512 => mac::<Hmac<Sha512>>(secret, data)
            .finalize()
            .into_bytes()
            .to_vec(),
    }
}

/// Compares in constant time.
pub(super) fn verify(hash: Hash, secret: &[u8], signature: &[u8], data: &[u8]) -> bool {
    match hash {
        Hash::Sha1 => mac::<Hmac<Sha1>>(secret, data).verify_slice(signature),
        Hash::Sha256 => mac::<Hmac<Sha256>>(secret, data).verify_slice(signature),
        Hash::Sha384 => mac::<Hmac<Sha384>>(secret, data).verify_slice(signature),
        Hash::Sha512 => mac::<Hmac<Sha512>>(secret, data).verify_slice(signature),
    }
    .is_ok()
}
