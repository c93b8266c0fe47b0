//! A JSON value kept in memory as its compact text: the schemas, fixed response and example of
//! an endpoint record.
//!
//! The catalog holds every endpoint in memory, and most of its endpoints are never called by
//! a given process; as `serde_json` trees (maps of maps of strings) these values were most of an
//! endpoint's memory at rest, several times their text (bench/RESULTS.md, catalog size). As
//! text they cost their bytes; they are parsed when an endpoint is called (its validators,
//! its response) and spliced into listings as they are, unparsed.
//!
//! The text is always what `serde_json` writes for the value (compact, keys in their order), so
//! serializing a `JsonText` gives the same bytes as serializing the value it holds.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

#[derive(Clone)]
pub struct JsonText(Box<RawValue>);

impl JsonText {
    /// The value, parsed from the text.
    pub fn value(&self) -> Value {
        serde_json::from_str(self.0.get()).expect("a JsonText holds valid JSON")
    }

    /// The compact JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }
}

impl From<&Value> for JsonText {
    fn from(value: &Value) -> Self {
        Self(serde_json::value::to_raw_value(value).expect("a JSON value serializes"))
    }
}

impl From<Value> for JsonText {
    fn from(value: Value) -> Self {
        Self::from(&value)
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // `serde_json` writes the text as it is; other serializers (`to_value`, `json!`) get
        // the parsed value.
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for JsonText {
    /// Parsed and written again rather than kept as read: text from a request or written by
    /// hand may have spaces, escapes or repeated keys that the compact form has not.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_as_the_value_would() {
        let value = json!({"type": "object", "z": [1, 2.5, -3, "é\n\u{1}"], "a": {"b": null, "c": true}, "big": u64::MAX, "f": 1.0e300});
        let text = JsonText::from(&value);
        assert_eq!(
            serde_json::to_string(&text).unwrap(),
            serde_json::to_string(&value).unwrap()
        );
        assert_eq!(text.value(), value);
        assert_eq!(serde_json::to_value(&text).unwrap(), value);
        // Inside a larger document, and read back from it.
        let doc = json!({"schema": text, "n": 1});
        assert_eq!(doc["schema"], value);
        let read: JsonText =
            serde_json::from_str(r#" { "type" : "object", "z": [1, 2.5, -3, "\u00e9\n\u0001"], "a": {"b": null, "c": true}, "big": 18446744073709551615, "f": 1e300 } "#)
                .unwrap();
        assert_eq!(read, text);
    }

    proptest::proptest! {
        /// Any value: its text serializes, and a record holding it stores and reads back, to the
        /// same bytes as the value itself.
        #[test]
        fn any_value_keeps_its_bytes(value in crate::arbitrary::json(&["type", "properties"])) {
            let text = JsonText::from(&value);
            let expected = serde_json::to_string(&value).unwrap();
            proptest::prop_assert_eq!(serde_json::to_string(&text).unwrap(), expected.clone());
            let read: JsonText = serde_json::from_str(&expected).unwrap();
            proptest::prop_assert_eq!(read.as_str(), expected.as_str());
            proptest::prop_assert_eq!(text.value(), value);
        }
    }
}
