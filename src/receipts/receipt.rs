//! The receipt record and the canonical bytes its signature covers.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
pub use toolhost_values::canonical::canonical_json;

/// How a call was paid for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PaymentMethod {
    X402,
    DeveloperCredit,
    /// A free call that still gets a receipt (the free receipt echo); nothing is charged.
    Free,
}

impl PaymentMethod {
    /// As JSON names it (a sale's `method` column in the store).
    pub fn name(self) -> &'static str {
        match self {
            PaymentMethod::X402 => "x402",
            PaymentMethod::DeveloperCredit => "developer_credit",
            PaymentMethod::Free => "free",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptSettlement {
    /// `recorded` (ledger only, not on-chain), `settled` (on-chain, mined), `pending` (broadcast
    /// on-chain, not yet seen mined), `failed` (mined but reverted, or without the transfer) or
    /// `dropped` (never mined) after being pending (both `charged:false`), `debited` (developer
    /// credit) or `not_applicable` (free). A receipt recovered after a crash may have empty
    /// request and result digests: the call died before they existed.
    pub status: String,
    pub on_chain: bool,
    #[schema(required = true)]
    pub transaction: Option<String>,
    /// `local` or `remote` for x402 payments.
    #[schema(required = true)]
    pub facilitator: Option<String>,
    /// x402 payments only: whether the money reached `payTo`, which only a transfer seen mined
    /// shows. `false` for a payment merely recorded (a test deployment without a chain RPC or a
    /// remote facilitator: nothing was collected, and the authorization is redeemable by
    /// whoever holds it) or still pending. Absent on receipts issued before it existed, so
    /// their signatures still verify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collected: Option<bool>,
}

impl ReceiptSettlement {
    /// A free call's: nothing to settle.
    pub fn not_applicable() -> Self {
        Self {
            status: "not_applicable".into(),
            on_chain: false,
            transaction: None,
            facilitator: None,
            collected: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptSignature {
    /// Always `ed25519`.
    pub alg: String,
    /// Base64 of the service's 32-byte public key, as `/ai/manifest` publishes it.
    pub public_key: String,
    /// Base64 of the 64-byte signature over the canonical JSON of the receipt without `signature`.
    pub value: String,
}

/// A receipt as stored and served. Money is in strings: `priceUsd` in decimal dollars, `amount`
/// in atomic units of the asset (USDC has 6 decimals, so they are the same integer).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    pub receipt_id: String,
    pub schema: String,
    /// What was bought: `invocation` or `builder_registration`.
    pub purpose: String,
    #[schema(required = true)]
    pub endpoint_slug: Option<String>,
    pub price_usd: String,
    #[schema(schema_with = crate::money::units_schema)]
    pub amount: String,
    #[schema(required = true)]
    pub asset: Option<String>,
    #[schema(required = true)]
    pub network: Option<String>,
    /// The paying address, or the developer credit id masked.
    #[schema(required = true)]
    pub payer: Option<String>,
    pub payment_method: PaymentMethod,
    #[schema(required = true)]
    pub x402_version: Option<u8>,
    pub charged: bool,
    pub settlement: ReceiptSettlement,
    pub request_sha256: String,
    pub result_sha256: String,
    pub issued_at: String,
    pub url: String,
    /// A metered call's maximum and units; its `priceUsd` and `amount` are what it was
    /// charged. Absent on fixed-price and free calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metering: Option<ReceiptMetering>,
    /// The receipt's own signature. Absent on a free call's receipt (schema `v3`): the signed
    /// checkpoint of the receipt log that includes it proves it, one signature for a group of
    /// calls (docs/receipt-log.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<ReceiptSignature>,
}

/// A metered receipt's terms and use (its `priceUsd` and `amount` are what was charged).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptMetering {
    /// The most the call could cost, in USD: what the payer signed as a maximum.
    pub max_usd: String,
    /// The same in atomic units.
    #[schema(schema_with = crate::money::units_schema)]
    pub max_amount: String,
    /// What a unit is (the endpoint's `metering.unit`).
    pub unit: String,
    /// How many units the call reported, as a decimal string.
    pub units: String,
    /// The handler's note, if it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The handler reported more than the maximum and was charged the maximum.
    pub capped: bool,
}

/// The schema of receipts issued now. `v3`: `signature` may be absent (a free call's receipt,
/// proven by the receipt log alone). `v2` (and `v3`): `requestSha256` and `resultSha256` are
/// salted ([`DigestSalt`]); `v1` receipts hold plain SHA-256 of the canonical JSON. Receipts of
/// `v1` and `v2` are always signed.
pub const RECEIPT_SCHEMA: &str = "toolhost.receipt.v3";

#[cfg(test)]
impl Receipt {
    /// A free call's receipt, unsigned, for tests that need one.
    pub(crate) fn example() -> Receipt {
        Receipt {
            receipt_id: "rcpt_1".into(),
            schema: RECEIPT_SCHEMA.into(),
            purpose: "invocation".into(),
            endpoint_slug: Some("a".into()),
            price_usd: "0.001".into(),
            amount: "1000".into(),
            asset: None,
            network: None,
            payer: None,
            payment_method: PaymentMethod::Free,
            x402_version: None,
            charged: false,
            settlement: ReceiptSettlement::not_applicable(),
            request_sha256: "00".into(),
            result_sha256: "11".into(),
            issued_at: "2026-01-01T00:00:00Z".into(),
            url: "http://x/ai/receipts/rcpt_1".into(),
            metering: None,
            signature: None,
        }
    }
}

impl Receipt {
    /// The bytes the signature covers: canonical JSON of everything but `signature`.
    pub fn signed_bytes(&self) -> Vec<u8> {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(object) = value.as_object_mut() {
            object.remove("signature");
        }
        canonical_json(&value).into_bytes()
    }
}

/// SHA-256 of the canonical JSON of a value, as lowercase hex.
pub fn sha256_hex(value: &Value) -> String {
    hex::encode(Sha256::digest(canonical_json(value).as_bytes()))
}

/// The per-call random salt of a receipt's digests, given to the caller alone: a receipt's
/// `requestSha256` and `resultSha256` commit to the call's input and result without letting
/// anyone else confirm a guess of them (a phone number, an id), while the caller, holding the
/// salt, can still prove what it sent and got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DigestSalt([u8; 16]);

impl DigestSalt {
    pub fn random() -> DigestSalt {
        DigestSalt(rand::random())
    }

    /// Lowercase hex, as answers carry it (`receiptSalt`).
    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }

    /// SHA-256 of the salt's 16 bytes followed by the canonical JSON of `value`, as lowercase
    /// hex: a receipt's digest of `value`.
    pub fn digest(&self, value: &Value) -> String {
        let mut hasher = Sha256::new();
        hasher.update(self.0);
        hasher.update(canonical_json(value).as_bytes());
        hex::encode(hasher.finalize())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// What the signatures of receipts already issued were computed over: a string per
    /// member, joined. The one-buffer version must give the same bytes.
    fn canonical_json_reference(value: &Value) -> String {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let fields: Vec<String> = keys
                    .into_iter()
                    .map(|k| {
                        let key = Value::String(k.clone());
                        format!("{key}:{}", canonical_json_reference(&map[k]))
                    })
                    .collect();
                format!("{{{}}}", fields.join(","))
            }
            Value::Array(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(canonical_json_reference)
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            other => other.to_string(),
        }
    }

    fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            any::<String>().prop_map(Value::from),
            "[a-z\\\\\"\\u{0}-\\u{1f}\\u{7f}-\\u{10ffff}]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                proptest::collection::vec((any::<String>(), inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn canonical_json_is_byte_for_byte_what_receipts_were_signed_over(value in any_json()) {
            proptest::prop_assert_eq!(canonical_json(&value), canonical_json_reference(&value));
        }
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let value = json!({"b": 1, "a": {"d": [true, null, "x"], "c": "y"}});
        assert_eq!(
            canonical_json(&value),
            r#"{"a":{"c":"y","d":[true,null,"x"]},"b":1}"#
        );
    }
}
