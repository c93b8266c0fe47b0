//! Canonical JSON: object keys sorted at every level (by their bytes), no whitespace, values as
//! serde_json writes them. What receipts and payout packets are signed over and what the
//! receipt log's entries are, so that anyone holding the JSON in any form makes the same bytes;
//! here at the bottom so the command line's verifier and the service share it.

use serde::Serialize;
use serde_json::Value;

/// JSON with object keys sorted at every level and no whitespace.
pub fn canonical_json(value: &Value) -> String {
    let mut out = Vec::with_capacity(256);
    write_canonical(value, &mut out);
    // Only serde_json's own output and ASCII punctuation went in, which is UTF-8.
    String::from_utf8(out)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

/// Appends `value`'s canonical JSON to `out`, in one buffer for the whole value: a receipt
/// canonicalizes three values per call (its request and result digests, then the signed
/// bytes). A string per member showed as 9% of a free native call's request-thread CPU under
/// glibc's malloc; under jemalloc neither version stands out (bench/RESULTS.md, "Where a free
/// native call's CPU goes").
fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_unstable_by_key(|(key, _)| *key);
            out.push(b'{');
            for (at, (key, member)) in members.into_iter().enumerate() {
                if at > 0 {
                    out.push(b',');
                }
                write_plain(key, out);
                out.push(b':');
                write_canonical(member, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (at, item) in items.iter().enumerate() {
                if at > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        scalar => write_plain(scalar, out),
    }
}

/// A string, number, boolean or null as serde_json writes it (escapes included).
fn write_plain<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) {
    // Serializing these into a Vec cannot fail.
    let _ = serde_json::to_writer(out, value);
}
