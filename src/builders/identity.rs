//! The builder record, and the functions that create, authenticate and re-key builders.
//!
//! These are plain functions over the store so that the payments module can call [`register`]
//! after verifying a payment, and the admin route can call it without one.

use axum::http::StatusCode;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::keys::secrets_equal;
use super::keys::{self, KeyEntry};
use crate::error::{ApiError, ErrorCode};
use crate::store::{Batch, BuilderKeyRow, BuilderRow, Store, StoreError};
use crate::timestamp::rfc3339;

/// How a builder's registration was paid for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum PayerInfo {
    /// Onboarded by an admin, without payment.
    Admin,
    /// Paid with x402: the payer's address and the settlement reference (transaction or receipt).
    X402 { payer: String, reference: String },
    /// Paid with a developer credit.
    DeveloperCredit { credit_id: String },
}

impl PayerInfo {
    fn method(&self) -> &'static str {
        match self {
            PayerInfo::Admin => "admin",
            PayerInfo::X402 { .. } => "x402",
            PayerInfo::DeveloperCredit { .. } => "developer_credit",
        }
    }
}

// The OpenAPI patterns of what `validate` accepts: Rust's whitespace (what `trim` removes)
// around a run without control characters whose ends are not whitespace.
macro_rules! ws {
    () => {
        r"\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
    };
}
macro_rules! control {
    () => {
        r"\x00-\x1f\x7f-\x9f"
    };
}
const NAME_PATTERN: &str = concat!(
    "^[",
    ws!(),
    "]*[^",
    ws!(),
    control!(),
    "]([^",
    control!(),
    "]{0,78}[^",
    ws!(),
    control!(),
    "])?[",
    ws!(),
    "]*$"
);
const CONTACT_PATTERN: &str = concat!(
    "^[",
    ws!(),
    "]*([^",
    ws!(),
    control!(),
    "]([^",
    control!(),
    "]{0,198}[^",
    ws!(),
    control!(),
    "])?)?[",
    ws!(),
    "]*$"
);

fn name_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(NAME_PATTERN))
        .build()
}

fn contact_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .pattern(Some(CONTACT_PATTERN))
        .build()
}

/// The body of `POST /ai/builders/register` and `POST /ai/admin/builders`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegisterRequest {
    /// Display name, 1 to 80 characters without control characters once surrounding
    /// whitespace is trimmed.
    #[schema(schema_with = name_schema)]
    pub name: String,
    /// How to reach the builder (email, URL), up to 200 characters without control characters
    /// once trimmed. Never shown publicly.
    #[serde(default)]
    #[schema(schema_with = contact_schema)]
    pub contact: Option<String>,
}

/// A builder as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Builder {
    pub id: String,
    pub name: String,
    pub contact: Option<String>,
    pub payer: PayerInfo,
    /// SHA-256 of the current key.
    pub key_hash: String,
    pub key_prefix: String,
    #[serde(with = "time::serde::rfc3339")]
    pub key_created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// What the builder (and the admin) see of a builder record. Never carries the key or its hash.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BuilderRecord {
    pub id: String,
    pub name: String,
    #[schema(required = true)]
    pub contact: Option<String>,
    /// `admin`, `x402` or `developer_credit`.
    #[schema(pattern = "^(admin|x402|developer_credit)$")]
    pub registered_via: &'static str,
    /// The first characters of the current key, to tell keys apart.
    pub key_prefix: String,
    #[schema(format = DateTime)]
    pub key_created_at: String,
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl From<&Builder> for BuilderRecord {
    fn from(b: &Builder) -> Self {
        BuilderRecord {
            id: b.id.clone(),
            name: b.name.clone(),
            contact: b.contact.clone(),
            registered_via: b.payer.method(),
            key_prefix: b.key_prefix.clone(),
            key_created_at: rfc3339(b.key_created_at),
            created_at: rfc3339(b.created_at),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BuilderError {
    #[error("{0}")]
    Invalid(String),
    #[error("the builder key is not recognised")]
    UnknownKey,
    #[error("the builder key was revoked; use the current key")]
    RevokedKey,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<BuilderError> for ApiError {
    fn from(e: BuilderError) -> Self {
        match e {
            BuilderError::Invalid(_) => {
                ApiError::unprocessable(ErrorCode::InvalidBuilder, e.to_string())
            }
            BuilderError::UnknownKey => ApiError::new(
                StatusCode::UNAUTHORIZED,
                ErrorCode::InvalidBuilderKey,
                e.to_string(),
            ),
            // A rotated key is no longer a credential: 401 like any key that is not valid (spec 5
            // rule 1 and section 7 for create, and the same on every route), with its own code so
            // the builder knows to use the new key rather than re-register.
            BuilderError::RevokedKey => ApiError::new(
                StatusCode::UNAUTHORIZED,
                ErrorCode::BuilderKeyRevoked,
                e.to_string(),
            ),
            BuilderError::Store(e) => e.into(),
        }
    }
}

fn to_bytes<T: Serialize>(value: &T) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(value).map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn from_bytes<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, StoreError> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// The builder as the store keeps it.
fn builder_row(builder: &Builder) -> Result<BuilderRow, StoreError> {
    Ok(BuilderRow {
        builder_id: builder.id.clone(),
        entry: to_bytes(builder)?,
    })
}

/// A key's entry as the store keeps it, under the key's digest.
fn key_row(key_sha256: &str, entry: &KeyEntry) -> Result<BuilderKeyRow, StoreError> {
    Ok(BuilderKeyRow {
        key_sha256: key_sha256.to_owned(),
        builder_id: entry.builder_id.clone(),
        revoked: entry.revoked_at.is_some(),
        entry: to_bytes(entry)?,
    })
}

impl RegisterRequest {
    /// Checks the body without registering, so a paid route can refuse a bad body before payment.
    pub fn check(&self) -> Result<(), BuilderError> {
        validate(self.clone()).map(|_| ())
    }
}

fn validate(request: RegisterRequest) -> Result<(String, Option<String>), BuilderError> {
    let name = request.name.trim().to_string();
    if name.is_empty() || name.chars().count() > 80 || name.chars().any(char::is_control) {
        return Err(BuilderError::Invalid(
            "name must be 1 to 80 printable characters".into(),
        ));
    }
    let contact = request
        .contact
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty());
    if contact
        .as_ref()
        .is_some_and(|c| c.chars().count() > 200 || c.chars().any(char::is_control))
    {
        return Err(BuilderError::Invalid(
            "contact must be at most 200 printable characters".into(),
        ));
    }
    Ok((name, contact))
}

/// Creates a builder and its first key. Call only after the registration was paid for (or an
/// admin onboards the builder). Returns the record and the plaintext key, which is not stored.
pub async fn register(
    store: &dyn Store,
    request: RegisterRequest,
    payer: PayerInfo,
) -> Result<(BuilderRecord, String), BuilderError> {
    let (name, contact) = validate(request)?;
    let now = OffsetDateTime::now_utc();
    let key = keys::generate();
    let builder = Builder {
        id: format!("bld_{}", uuid::Uuid::now_v7().simple()),
        name,
        contact,
        payer,
        key_hash: keys::hash(&key),
        key_prefix: keys::display_prefix(&key),
        key_created_at: now,
        created_at: now,
    };
    let entry = KeyEntry {
        builder_id: builder.id.clone(),
        created_at: now,
        revoked_at: None,
    };
    store
        .apply(
            Batch::new()
                .require_builder_key(&builder.key_hash, None)
                .put_builder_key(key_row(&builder.key_hash, &entry)?)
                .put_builder(builder_row(&builder)?),
        )
        .await?;
    Ok((BuilderRecord::from(&builder), key))
}

/// The builder with id `id`, if there is one.
pub async fn find(store: &dyn Store, id: &str) -> Result<Option<Builder>, BuilderError> {
    let stored = store.builder(id).await?;
    Ok(stored.map(|bytes| from_bytes(&bytes)).transpose()?)
}

/// The builder holding `key`, found with the key in one read. Unknown keys are
/// [`BuilderError::UnknownKey`] (401), keys replaced by a rotation [`BuilderError::RevokedKey`]
/// (401 too, with its own code).
pub async fn authenticate(store: &dyn Store, key: &str) -> Result<Builder, BuilderError> {
    let hash = keys::hash(key);
    let (entry, builder) = (store.builder_by_key(&hash).await?).ok_or(BuilderError::UnknownKey)?;
    let entry: KeyEntry = from_bytes(&entry)?;
    if entry.revoked_at.is_some() {
        return Err(BuilderError::RevokedKey);
    }
    let builder: Builder = from_bytes(&builder.ok_or(BuilderError::UnknownKey)?)?;
    if !secrets_equal(&builder.key_hash, &hash) {
        return Err(BuilderError::RevokedKey);
    }
    Ok(builder)
}

/// Replaces the builder's key: the old one is revoked in the same atomic step that stores the
/// new one. Fails with [`BuilderError::RevokedKey`] if another rotation won the race.
pub async fn rotate_key(
    store: &dyn Store,
    builder: &Builder,
) -> Result<(BuilderRecord, String), BuilderError> {
    let current_bytes = (store.builder(&builder.id).await?).ok_or(BuilderError::UnknownKey)?;
    let current: Builder = from_bytes(&current_bytes)?;
    if current.key_hash != builder.key_hash {
        return Err(BuilderError::RevokedKey);
    }
    let old_entry =
        (store.builder_key(&current.key_hash).await?).ok_or(BuilderError::UnknownKey)?;
    let old_entry: KeyEntry = from_bytes(&old_entry)?;
    let old_hash = current.key_hash.clone();
    let now = OffsetDateTime::now_utc();
    let key = keys::generate();
    let updated = Builder {
        key_hash: keys::hash(&key),
        key_prefix: keys::display_prefix(&key),
        key_created_at: now,
        ..current
    };
    let new_entry = KeyEntry {
        builder_id: updated.id.clone(),
        created_at: now,
        revoked_at: None,
    };
    let revoked = KeyEntry {
        revoked_at: Some(now),
        ..old_entry
    };
    let result = store
        .apply(
            Batch::new()
                .require_builder(&updated.id, Some(current_bytes))
                .require_builder_key(&updated.key_hash, None)
                .put_builder_key(key_row(&updated.key_hash, &new_entry)?)
                .put_builder_key(key_row(&old_hash, &revoked)?)
                .put_builder(builder_row(&updated)?),
        )
        .await;
    match result {
        Err(StoreError::ConditionFailed(_)) => Err(BuilderError::RevokedKey),
        other => other.map_err(BuilderError::from),
    }?;
    Ok((BuilderRecord::from(&updated), key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{SledStore, Tree};

    /// The OpenAPI patterns say exactly what `validate` accepts, at the edges of its rules.
    #[test]
    fn document_patterns_match_validation() {
        let name = regex::Regex::new(NAME_PATTERN).unwrap();
        let contact = regex::Regex::new(CONTACT_PATTERN).unwrap();
        let long = |n| "x".repeat(n);
        let samples = [
            String::new(),
            " ".into(),
            "a".into(),
            " \t a b \u{3000}".into(),
            "a\u{1c}".into(),
            "\u{1c}a".into(),
            "a\u{85}".into(),
            "a\nb".into(),
            "\u{200b}".into(),
            long(80),
            format!("  {}\n", long(80)),
            long(81),
            long(200),
            long(201),
        ];
        for sample in samples {
            let name_ok = validate(RegisterRequest {
                name: sample.clone(),
                contact: None,
            })
            .is_ok();
            assert_eq!(name.is_match(&sample), name_ok, "name {sample:?}");
            let contact_ok = validate(RegisterRequest {
                name: "a".into(),
                contact: Some(sample.clone()),
            })
            .is_ok();
            assert_eq!(contact.is_match(&sample), contact_ok, "contact {sample:?}");
        }
    }

    fn request(name: &str) -> RegisterRequest {
        RegisterRequest {
            name: name.into(),
            contact: Some("ops@acme.test".into()),
        }
    }

    #[tokio::test]
    async fn register_authenticate_rotate_revoke() {
        let store = SledStore::temporary().unwrap();
        let (record, key) = register(&store, request("Acme"), PayerInfo::Admin)
            .await
            .unwrap();
        assert_eq!(record.registered_via, "admin");
        let builder = authenticate(&store, &key).await.unwrap();
        assert_eq!(builder.id, record.id);
        assert!(matches!(
            authenticate(&store, "thb_nope").await,
            Err(BuilderError::UnknownKey)
        ));

        let (rotated, new_key) = rotate_key(&store, &builder).await.unwrap();
        assert_ne!(new_key, key);
        assert_eq!(rotated.id, record.id);
        assert!(matches!(
            authenticate(&store, &key).await,
            Err(BuilderError::RevokedKey)
        ));
        assert_eq!(authenticate(&store, &new_key).await.unwrap().id, record.id);
        // Rotating with the stale identity loses.
        assert!(matches!(
            rotate_key(&store, &builder).await,
            Err(BuilderError::RevokedKey)
        ));

        // Nothing stored holds the plaintext key.
        for tree in [Tree::Builders] {
            for (_, v) in store.scan_prefix(tree, b"", None, 100).await.unwrap() {
                let text = String::from_utf8_lossy(&v);
                assert!(!text.contains(&key[4..]) && !text.contains(&new_key[4..]));
            }
        }
    }

    #[tokio::test]
    async fn names_are_validated() {
        let store = SledStore::temporary().unwrap();
        assert!(matches!(
            register(&store, request("  "), PayerInfo::Admin).await,
            Err(BuilderError::Invalid(_))
        ));
        assert!(matches!(
            register(&store, request(&"x".repeat(81)), PayerInfo::Admin).await,
            Err(BuilderError::Invalid(_))
        ));
    }
}
