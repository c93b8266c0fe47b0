//! ECDSA on P-256 (FIPS 186-5): keys as raw points, SPKI, PKCS #8 and JWK (RFC 7518);
//! signatures as WebCrypto has them, `r || s` (IEEE P1363), not DER. P-384 and P-521 are not
//! here (`NotSupportedError`).

use p256::ecdsa::signature::hazmat::{PrehashSigner, PrehashVerifier};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use p256::elliptic_curve::sec1::{EncodedPoint, FromEncodedPoint, ToEncodedPoint};
use p256::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use p256::{NistP256, PublicKey, SecretKey};
use rand::rngs::OsRng;

use super::digest::Hash;
use super::jwk::{self, Jwk};
use super::{encoding_failed, CryptoError, Exported, Format, KeyData, KeyKind};

/// Refuses a `namedCurve` other than P-256.
pub(super) fn check_curve(curve: Option<&str>) -> Result<(), CryptoError> {
    match curve {
        Some("P-256") => Ok(()),
        Some(curve) => Err(CryptoError::NotSupported(format!(
            "the curve {curve} is not supported (P-256 is)"
        ))),
        None => Err(CryptoError::NotSupported(
            "ECDSA needs a namedCurve".to_owned(),
        )),
    }
}

/// The public key as stored: the uncompressed point.
fn point(key: &PublicKey) -> Vec<u8> {
    key.to_encoded_point(false).as_bytes().to_vec()
}

fn public_key(bytes: &[u8]) -> Result<PublicKey, CryptoError> {
    PublicKey::from_sec1_bytes(bytes)
        .map_err(|_| CryptoError::Data("not a P-256 public key".to_owned()))
}

fn private_key(bytes: &[u8]) -> Result<SecretKey, CryptoError> {
    SecretKey::from_slice(bytes)
        .map_err(|_| CryptoError::Data("not a P-256 private key".to_owned()))
}

/// `raw` (a public point, compressed or not), `spki`, `pkcs8`, or an `EC` JWK on `P-256`
/// (private with `d`, whose public key must be its `x` and `y`).
pub(super) fn import(data: KeyData<'_>) -> Result<(KeyKind, Vec<u8>), CryptoError> {
    match data {
        KeyData::Raw(bytes) => Ok((KeyKind::Public, point(&public_key(bytes)?))),
        KeyData::Spki(der) => {
            let key = PublicKey::from_public_key_der(der)
                .map_err(|_| CryptoError::Data("not a P-256 SPKI key".to_owned()))?;
            Ok((KeyKind::Public, point(&key)))
        }
        KeyData::Pkcs8(der) => {
            let key = SecretKey::from_pkcs8_der(der)
                .map_err(|_| CryptoError::Data("not a P-256 PKCS #8 key".to_owned()))?;
            Ok((KeyKind::Private, key.to_bytes().to_vec()))
        }
        KeyData::Jwk(jwk) => import_jwk(jwk),
    }
}

fn import_jwk(jwk: &Jwk) -> Result<(KeyKind, Vec<u8>), CryptoError> {
    jwk.expect_kty("EC")?;
    if jwk.crv.as_deref() != Some("P-256") {
        return Err(CryptoError::Data("the JWK's crv must be P-256".to_owned()));
    }
    jwk.expect_alg(&["ES256"])?;
    let x = jwk::decode_exact(&jwk.x, "x", 32)?;
    let y = jwk::decode_exact(&jwk.y, "y", 32)?;
    let encoded = EncodedPoint::<NistP256>::from_affine_coordinates(
        x.as_slice().into(),
        y.as_slice().into(),
        false,
    );
    let public = Option::<PublicKey>::from(PublicKey::from_encoded_point(&encoded))
        .ok_or_else(|| CryptoError::Data("the JWK's x and y are not a P-256 point".to_owned()))?;
    if jwk.d.is_none() {
        return Ok((KeyKind::Public, point(&public)));
    }
    let private = private_key(&jwk::decode_exact(&jwk.d, "d", 32)?)?;
    if private.public_key() != public {
        return Err(CryptoError::Data(
            "the JWK's x and y are not the public key of its d".to_owned(),
        ));
    }
    Ok((KeyKind::Private, private.to_bytes().to_vec()))
}

pub(super) fn export(format: Format, kind: KeyKind, key: &[u8]) -> Result<Exported, CryptoError> {
    match (kind, format) {
        (KeyKind::Public, Format::Raw) => Ok(Exported::Bytes(point(&public_key(key)?).into())),
        (KeyKind::Public, Format::Spki) => {
            let der = public_key(key)?
                .to_public_key_der()
                .map_err(encoding_failed)?;
            Ok(Exported::Bytes(der.into_vec().into()))
        }
        (KeyKind::Public, Format::Jwk) => Ok(Exported::Jwk(ec(&public_key(key)?, None))),
        (KeyKind::Private, Format::Pkcs8) => {
            let der = private_key(key)?.to_pkcs8_der().map_err(encoding_failed)?;
            Ok(Exported::Bytes(der.as_bytes().to_vec().into()))
        }
        (KeyKind::Private, Format::Jwk) => {
            let private = private_key(key)?;
            Ok(Exported::Jwk(ec(&private.public_key(), Some(&private))))
        }
        _ => Err(CryptoError::InvalidAccess(format!(
            "an ECDSA {} key cannot be exported as {}",
            kind.name(),
            format.name()
        ))),
    }
}

fn ec(public: &PublicKey, private: Option<&SecretKey>) -> Jwk {
    let point = public.to_encoded_point(false);
    Jwk {
        kty: Some("EC".to_owned()),
        crv: Some("P-256".to_owned()),
        x: point.x().and_then(|x| jwk::encode(x)),
        y: point.y().and_then(|y| jwk::encode(y)),
        d: private.and_then(|key| jwk::encode(&key.to_bytes())),
        ..Jwk::default()
    }
}

/// The private scalar and the public point.
pub(super) fn generate() -> (Vec<u8>, Vec<u8>) {
    let key = SecretKey::random(&mut OsRng);
    (key.to_bytes().to_vec(), point(&key.public_key()))
}

/// Signs the `hash` of `data` (deterministic nonce, RFC 6979).
pub(super) fn sign(hash: Hash, key: &[u8], data: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let key = SigningKey::from(private_key(key)?);
    let signature: Signature = key
        .sign_prehash(&hash.digest(data))
        .map_err(|_| CryptoError::Operation("ECDSA signing failed".to_owned()))?;
    Ok(signature.to_bytes().to_vec())
}

pub(super) fn verify(hash: Hash, key: &[u8], signature: &[u8], data: &[u8]) -> bool {
    let Ok(signature) = Signature::from_slice(signature) else {
        return false;
    };
    let Ok(key) = public_key(key) else {
        return false;
    };
    VerifyingKey::from(key)
        .verify_prehash(&hash.digest(data), &signature)
        .is_ok()
}
