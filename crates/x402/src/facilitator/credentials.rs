//! How toolhost proves who it is to a hosted facilitator.
//!
//! Hosted facilitators want credentials: the Coinbase Developer Platform (CDP) facilitator a
//! JWT signed with the operator's API key on every request, PayAI a bearer token beyond its
//! free tier, others an API-key header. The operator configures any of them
//! ([`FacilitatorAuth`]); secrets come from owner-only files or the environment, are read once
//! at start-up, and are never logged: every header built from one is marked sensitive, and no
//! error says more than which file or which setting was wrong.
//!
//! # The CDP JWT
//! As CDP documents it (and its SDKs build it): a compact JWS signed with the API key, EdDSA
//! for an Ed25519 key, ES256 for an EC P-256 key, with
//! - header `{alg, kid: <key id>, typ: "JWT", nonce: <16 random bytes, hex>}`;
//! - claims `{sub: <key id>, iss: "cdp", nbf: <now>, exp: <now + 120 s>, uris: ["<METHOD> <host><path>"]}`,
//!
//! where host is the facilitator URL's host (with `:port` when the URL names one) and path the
//! request's. A token is made per request, so each names only the request it authorizes and
//! expires two minutes later.

use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde_json::{json, Value};

use crate::config::{CdpKey, FacilitatorAuth};

/// How long a CDP token is valid (the SDKs' default, and CDP's limit).
const CDP_TOKEN_LIFETIME_SECS: u64 = 120;

/// The credentials, loaded: what every request to the facilitator carries.
pub(super) struct Credentials {
    /// Sent as they are on every request (a bearer token, configured headers).
    fixed: HeaderMap,
    /// Signs a token per request.
    cdp: Option<CdpSigner>,
}

impl Credentials {
    /// Reads every configured secret and checks it can be used; the error says which setting
    /// is wrong, never what a secret holds.
    pub(super) fn load(auth: &FacilitatorAuth) -> Result<Self, String> {
        if auth.bearer.is_some() && auth.cdp.is_some() {
            return Err(
                "give one of a bearer token and a CDP key: both are the Authorization header"
                    .into(),
            );
        }
        let mut fixed = HeaderMap::new();
        if let Some(bearer) = &auth.bearer {
            let token = bearer.read().map_err(|e| format!("bearer token: {e}"))?;
            if token.is_empty() {
                return Err("bearer token: it is empty".into());
            }
            fixed.insert(
                header::AUTHORIZATION,
                sensitive(&format!("Bearer {token}"))
                    .ok_or("bearer token: it holds characters a header cannot carry")?,
            );
        }
        for (name, secret) in &auth.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("header {name:?}: not a header name"))?;
            let owned =
                (auth.bearer.is_some() || auth.cdp.is_some()) && name == header::AUTHORIZATION;
            if owned || fixed.contains_key(&name) {
                return Err(format!("header {name}: given more than once"));
            }
            let value = secret.read().map_err(|e| format!("header {name}: {e}"))?;
            let value = sensitive(&value).ok_or_else(|| {
                format!("header {name}: its value holds characters a header cannot carry")
            })?;
            fixed.insert(name, value);
        }
        let cdp = auth.cdp.as_ref().map(CdpSigner::load).transpose()?;
        Ok(Self { fixed, cdp })
    }

    /// Whether any credential is configured.
    pub(super) fn is_empty(&self) -> bool {
        self.fixed.is_empty() && self.cdp.is_none()
    }

    /// The headers a `method` request to `url` carries.
    pub(super) fn headers(&self, method: &Method, url: &reqwest::Url) -> HeaderMap {
        let mut headers = self.fixed.clone();
        if let Some(cdp) = &self.cdp {
            let token = cdp.token(&request_uri(method, url), unix_now());
            if let Some(value) = sensitive(&format!("Bearer {token}")) {
                headers.insert(header::AUTHORIZATION, value);
            }
        }
        headers
    }
}

/// A header value that `Debug` and HTTP/2 header compression leave alone; `None` when the
/// text cannot be a header value (a line break, a control character).
fn sensitive(text: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(text).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// `<METHOD> <host[:port]><path>`, the request a CDP token names.
fn request_uri(method: &Method, url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{method} {host}:{port}{}", url.path()),
        None => format!("{method} {host}{}", url.path()),
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// A CDP API key, ready to sign tokens.
struct CdpSigner {
    id: String,
    key: CdpSigningKey,
}

enum CdpSigningKey {
    Ed25519(ed25519_dalek::SigningKey),
    Es256(p256::ecdsa::SigningKey),
}

impl CdpSigner {
    fn load(key: &CdpKey) -> Result<Self, String> {
        let text = key.secret.read().map_err(|e| format!("CDP key: {e}"))?;
        // CDP's downloaded key file: `{"id" (or, for older keys, "name"), "privateKey"}`.
        let (named, secret) = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(file)) => {
                let named = ["id", "name"]
                    .iter()
                    .find_map(|field| file.get(*field).and_then(Value::as_str))
                    .map(str::to_string);
                let secret = file
                    .get("privateKey")
                    .and_then(Value::as_str)
                    .ok_or("CDP key: the key file has no privateKey")?
                    .to_string();
                (named, secret)
            }
            _ => (None, text),
        };
        let id = match (&key.id, named) {
            (Some(id), _) => id.clone(),
            (None, Some(named)) => named,
            (None, None) => {
                return Err(
                    "CDP key: no key id (give it, or the JSON key file that names it)".into(),
                )
            }
        };
        if id.trim().is_empty() {
            return Err("CDP key: the key id is empty".into());
        }
        Ok(Self {
            id,
            key: CdpSigningKey::parse(secret.trim())?,
        })
    }

    /// A token for one request, valid from `now` for two minutes.
    fn token(&self, uri: &str, now: u64) -> String {
        let nonce: [u8; 16] = rand::random();
        let head = json!({
            "alg": self.key.algorithm(),
            "kid": self.id,
            "typ": "JWT",
            "nonce": hex::encode(nonce),
        });
        let claims = json!({
            "sub": self.id,
            "iss": "cdp",
            "nbf": now,
            "exp": now + CDP_TOKEN_LIFETIME_SECS,
            "uris": [uri],
        });
        let signed = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(head.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self.key.sign(signed.as_bytes());
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature))
    }
}

impl CdpSigningKey {
    /// An EC P-256 key in PEM (SEC1 `EC PRIVATE KEY` or PKCS#8 `PRIVATE KEY`), or an Ed25519
    /// key in base64: CDP shows 64 bytes (the seed, then the public key, which must match);
    /// 32 bytes are taken as the seed alone. Errors never quote the key.
    fn parse(secret: &str) -> Result<Self, String> {
        use p256::pkcs8::DecodePrivateKey;
        if secret.starts_with("-----BEGIN") {
            let key = p256::SecretKey::from_sec1_pem(secret)
                .or_else(|_| p256::SecretKey::from_pkcs8_pem(secret))
                .map_err(|_| "CDP key: the PEM is not an EC P-256 private key")?;
            return Ok(CdpSigningKey::Es256(key.into()));
        }
        let bytes = STANDARD
            .decode(secret)
            .map_err(|_| "CDP key: neither a PEM nor base64")?;
        let seed: [u8; 32] = bytes
            .get(..32)
            .and_then(|seed| seed.try_into().ok())
            .filter(|_| matches!(bytes.len(), 32 | 64))
            .ok_or("CDP key: an Ed25519 key is 32 or 64 bytes of base64")?;
        let key = ed25519_dalek::SigningKey::from_bytes(&seed);
        if bytes.len() == 64 && key.verifying_key().as_bytes() != &bytes[32..] {
            return Err("CDP key: its public half does not belong to its private half".into());
        }
        Ok(CdpSigningKey::Ed25519(key))
    }

    fn algorithm(&self) -> &'static str {
        match self {
            CdpSigningKey::Ed25519(_) => "EdDSA",
            CdpSigningKey::Es256(_) => "ES256",
        }
    }

    /// The JWS signature: Ed25519's 64 bytes, or ES256's `r || s` (32 bytes each).
    fn sign(&self, message: &[u8]) -> Vec<u8> {
        // One trait (the `signature` crate's) signs with both keys.
        use ed25519_dalek::Signer as _;
        match self {
            CdpSigningKey::Ed25519(key) => key.sign(message).to_bytes().to_vec(),
            CdpSigningKey::Es256(key) => {
                let signature: p256::ecdsa::Signature = key.sign(message);
                signature.to_bytes().to_vec()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Secret;

    fn decode(part: &str) -> Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    fn cdp(id: Option<&str>, secret: String) -> FacilitatorAuth {
        FacilitatorAuth {
            cdp: Some(CdpKey {
                id: id.map(str::to_string),
                secret: Secret::Value(secret),
            }),
            ..Default::default()
        }
    }

    fn token_of(credentials: &Credentials, url: &str) -> String {
        let headers = credentials.headers(&Method::POST, &url.parse().unwrap());
        let value = headers.get(header::AUTHORIZATION).unwrap();
        assert!(value.is_sensitive());
        value
            .to_str()
            .unwrap()
            .strip_prefix("Bearer ")
            .unwrap()
            .to_string()
    }

    #[test]
    fn an_ed25519_token_names_its_key_and_request_and_verifies() {
        let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
        let secret = STANDARD.encode([&[7u8; 32][..], key.verifying_key().as_bytes()].concat());
        let credentials = Credentials::load(&cdp(Some("key-1"), secret)).unwrap();
        let token = token_of(
            &credentials,
            "https://api.cdp.coinbase.com/platform/v2/x402/verify",
        );
        let parts: Vec<&str> = token.split('.').collect();
        let head = decode(parts[0]);
        assert_eq!(head["alg"], "EdDSA");
        assert_eq!(head["kid"], "key-1");
        assert_eq!(head["nonce"].as_str().unwrap().len(), 32);
        let claims = decode(parts[1]);
        assert_eq!(claims["sub"], "key-1");
        assert_eq!(claims["iss"], "cdp");
        assert_eq!(
            claims["uris"],
            json!(["POST api.cdp.coinbase.com/platform/v2/x402/verify"])
        );
        let nbf = claims["nbf"].as_u64().unwrap();
        assert_eq!(claims["exp"].as_u64().unwrap(), nbf + 120);
        let signature: [u8; 64] = URL_SAFE_NO_PAD
            .decode(parts[2])
            .unwrap()
            .try_into()
            .unwrap();
        key.verifying_key()
            .verify_strict(
                format!("{}.{}", parts[0], parts[1]).as_bytes(),
                &ed25519_dalek::Signature::from_bytes(&signature),
            )
            .unwrap();
        // Every token is new: its own nonce.
        assert_ne!(
            token,
            token_of(
                &credentials,
                "https://api.cdp.coinbase.com/platform/v2/x402/verify"
            )
        );
        // A port the URL names is part of the host.
        let local = token_of(&credentials, "http://127.0.0.1:8402/x/settle");
        assert_eq!(
            decode(local.split('.').nth(1).unwrap())["uris"],
            json!(["POST 127.0.0.1:8402/x/settle"])
        );
    }

    #[test]
    fn an_es256_token_from_cdps_key_file_verifies() {
        use p256::ecdsa::signature::Verifier as _;
        use p256::pkcs8::EncodePrivateKey as _;
        let secret = p256::SecretKey::from_slice(&[9; 32]).unwrap();
        let pem = secret.to_sec1_pem(Default::default()).unwrap().to_string();
        let file = json!({"name": "organizations/o/apiKeys/k", "privateKey": pem}).to_string();
        let credentials = Credentials::load(&cdp(None, file)).unwrap();
        let token = token_of(&credentials, "https://facilitator.example/verify");
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(decode(parts[0])["alg"], "ES256");
        assert_eq!(decode(parts[1])["sub"], "organizations/o/apiKeys/k");
        let signature =
            p256::ecdsa::Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()).unwrap();
        p256::ecdsa::VerifyingKey::from(secret.public_key())
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .unwrap();
        // PKCS#8 is taken too.
        let pkcs8 = secret.to_pkcs8_pem(Default::default()).unwrap().to_string();
        assert!(Credentials::load(&cdp(Some("k"), pkcs8)).is_ok());
    }

    #[test]
    fn bad_credentials_are_refused_without_quoting_them() {
        let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
        let other = ed25519_dalek::SigningKey::from_bytes(&[8; 32]);
        let mismatched =
            STANDARD.encode([&[7u8; 32][..], other.verifying_key().as_bytes()].concat());
        let good = STANDARD.encode(key.to_bytes());
        let secret_header = |name: &str, value: &str| FacilitatorAuth {
            headers: vec![(name.into(), Secret::Value(value.into()))],
            ..Default::default()
        };
        let cases = [
            (cdp(Some("k"), mismatched.clone()), "does not belong"),
            (
                cdp(Some("k"), "c2VjcmV0LXNlY3JldA==".into()),
                "32 or 64 bytes",
            ),
            (
                cdp(
                    Some("k"),
                    "-----BEGIN EC PRIVATE KEY-----\nsecret-secret\n-----END EC PRIVATE KEY-----"
                        .into(),
                ),
                "not an EC P-256",
            ),
            (cdp(None, good.clone()), "no key id"),
            (cdp(Some(" "), good.clone()), "key id is empty"),
            (
                FacilitatorAuth {
                    bearer: Some(Secret::Value("secret-secret".into())),
                    ..cdp(Some("k"), good.clone())
                },
                "one of a bearer token and a CDP key",
            ),
            (secret_header("X Bad", "secret-secret"), "not a header name"),
            (
                secret_header("X-Key", "secret-secret\r\nX-Evil: 1"),
                "cannot carry",
            ),
            (
                FacilitatorAuth {
                    bearer: Some(Secret::Value("secret-secret".into())),
                    ..secret_header("authorization", "secret-secret")
                },
                "more than once",
            ),
        ];
        for (auth, expected) in cases {
            let error = Credentials::load(&auth).err().unwrap();
            assert!(error.contains(expected), "{error}");
            for secret in ["secret-secret", &mismatched[..20], &good[..20]] {
                assert!(!error.contains(secret), "{error}");
            }
        }
    }

    #[test]
    fn a_bearer_token_and_headers_are_sent_as_configured_and_marked_sensitive() {
        let auth = FacilitatorAuth {
            bearer: Some(Secret::Value(" token-1 \n".into())),
            headers: vec![("X-Api-Key".into(), Secret::Value("key-2".into()))],
            ..Default::default()
        };
        let credentials = Credentials::load(&auth).unwrap();
        let headers = credentials.headers(
            &Method::GET,
            &"http://127.0.0.1:1/supported".parse().unwrap(),
        );
        assert_eq!(headers[header::AUTHORIZATION], "Bearer token-1");
        assert_eq!(headers["x-api-key"], "key-2");
        assert!(headers.values().all(HeaderValue::is_sensitive));
        assert!(!format!("{headers:?}").contains("token-1"));
        assert!(Credentials::load(&FacilitatorAuth::default())
            .unwrap()
            .is_empty());
    }
}
