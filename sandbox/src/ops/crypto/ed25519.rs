//! Ed25519 (RFC 8032): keys as raw public bytes, SPKI, PKCS #8 and JWK (RFC 8037). Verifying
//! is strict: non-canonical signatures and small-order public keys do not verify.

use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use rand::rngs::OsRng;

use super::jwk::{self, Jwk};
use super::{encoding_failed, CryptoError, Exported, Format, KeyData, KeyKind};

fn public_key(bytes: &[u8]) -> Result<VerifyingKey, CryptoError> {
    let bytes: &[u8; 32] = bytes
        .try_into()
        .map_err(|_| CryptoError::Data("an Ed25519 public key is 32 bytes".to_owned()))?;
    VerifyingKey::from_bytes(bytes)
        .map_err(|_| CryptoError::Data("not an Ed25519 public key".to_owned()))
}

fn private_key(seed: &[u8]) -> Result<SigningKey, CryptoError> {
    let seed: &[u8; 32] = seed
        .try_into()
        .map_err(|_| CryptoError::Data("an Ed25519 private key is 32 bytes".to_owned()))?;
    Ok(SigningKey::from_bytes(seed))
}

/// `raw` (public only), `spki`, `pkcs8`, or an `OKP` JWK on `Ed25519` (private with `d`,
/// whose public key must be its `x`).
pub(super) fn import(data: KeyData<'_>) -> Result<(KeyKind, Vec<u8>), CryptoError> {
    match data {
        KeyData::Raw(bytes) => Ok((KeyKind::Public, public_key(bytes)?.to_bytes().to_vec())),
        KeyData::Spki(der) => {
            let key = VerifyingKey::from_public_key_der(der)
                .map_err(|_| CryptoError::Data("not an Ed25519 SPKI key".to_owned()))?;
            Ok((KeyKind::Public, key.to_bytes().to_vec()))
        }
        KeyData::Pkcs8(der) => {
            let key = SigningKey::from_pkcs8_der(der)
                .map_err(|_| CryptoError::Data("not an Ed25519 PKCS #8 key".to_owned()))?;
            Ok((KeyKind::Private, key.to_bytes().to_vec()))
        }
        KeyData::Jwk(jwk) => import_jwk(jwk),
    }
}

fn import_jwk(jwk: &Jwk) -> Result<(KeyKind, Vec<u8>), CryptoError> {
    jwk.expect_kty("OKP")?;
    if jwk.crv.as_deref() != Some("Ed25519") {
        return Err(CryptoError::Data(
            "the JWK's crv must be Ed25519".to_owned(),
        ));
    }
    jwk.expect_alg(&["Ed25519", "EdDSA"])?;
    let public = public_key(&jwk::decode_exact(&jwk.x, "x", 32)?)?;
    if jwk.d.is_none() {
        return Ok((KeyKind::Public, public.to_bytes().to_vec()));
    }
    let key = private_key(&jwk::decode_exact(&jwk.d, "d", 32)?)?;
    if key.verifying_key() != public {
        return Err(CryptoError::Data(
            "the JWK's x is not the public key of its d".to_owned(),
        ));
    }
    Ok((KeyKind::Private, key.to_bytes().to_vec()))
}

pub(super) fn export(format: Format, kind: KeyKind, key: &[u8]) -> Result<Exported, CryptoError> {
    match (kind, format) {
        (KeyKind::Public, Format::Raw) => {
            Ok(Exported::Bytes(public_key(key)?.to_bytes().to_vec().into()))
        }
        (KeyKind::Public, Format::Spki) => {
            let der = public_key(key)?
                .to_public_key_der()
                .map_err(encoding_failed)?;
            Ok(Exported::Bytes(der.into_vec().into()))
        }
        (KeyKind::Public, Format::Jwk) => Ok(Exported::Jwk(okp(public_key(key)?, None))),
        (KeyKind::Private, Format::Pkcs8) => {
            // Without the public key (PKCS #8 v1), as browsers write it.
            let pair = ed25519_dalek::pkcs8::KeypairBytes {
                secret_key: private_key(key)?.to_bytes(),
                public_key: None,
            };
            let der = pair.to_pkcs8_der().map_err(encoding_failed)?;
            Ok(Exported::Bytes(der.as_bytes().to_vec().into()))
        }
        (KeyKind::Private, Format::Jwk) => {
            let private = private_key(key)?;
            Ok(Exported::Jwk(okp(private.verifying_key(), Some(&private))))
        }
        _ => Err(CryptoError::InvalidAccess(format!(
            "an Ed25519 {} key cannot be exported as {}",
            kind.name(),
            format.name()
        ))),
    }
}

fn okp(public: VerifyingKey, private: Option<&SigningKey>) -> Jwk {
    Jwk {
        kty: Some("OKP".to_owned()),
        crv: Some("Ed25519".to_owned()),
        x: jwk::encode(public.as_bytes()),
        d: private.and_then(|key| jwk::encode(&key.to_bytes())),
        ..Jwk::default()
    }
}

/// The private seed and the public key.
pub(super) fn generate() -> (Vec<u8>, Vec<u8>) {
    let key = SigningKey::generate(&mut OsRng);
    (
        key.to_bytes().to_vec(),
        key.verifying_key().to_bytes().to_vec(),
    )
}

pub(super) fn sign(seed: &[u8], data: &[u8]) -> Result<Vec<u8>, CryptoError> {
    Ok(private_key(seed)?.sign(data).to_bytes().to_vec())
}

pub(super) fn verify(public: &[u8], signature: &[u8], data: &[u8]) -> bool {
    let Ok(signature) = Signature::from_slice(signature) else {
        return false;
    };
    public_key(public).is_ok_and(|key| key.verify_strict(data, &signature).is_ok())
}
