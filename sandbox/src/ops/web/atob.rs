//! `atob` decoding by the Infra standard's forgiving-base64. deno_web's `op_base64_atob`
//! decodes with the engine's simdutf, and on the QuickJS backend that decoder also takes the
//! URL-safe alphabet (`-` and `_` count as `+` and `/`), so `atob("--")` returned a byte where
//! every browser throws: the two cases of WPT's base64.json the handler isolates failed
//! (sandbox/tests/wpt.rs). [`op_web_base64_atob`] takes that op's place.

use deno_core::convert::ByteString;
use deno_core::op2;
use deno_web::WebError;

/// Takes the place of deno_web's `op_base64_atob` (see `web::replace_ops`): the same argument
/// and result, and the same error (`InvalidCharacterError`) for input that is not base64.
#[op2]
pub(crate) fn op_web_base64_atob(#[scoped] data: ByteString) -> Result<ByteString, WebError> {
    forgiving_base64_decode(&data)
        .map(ByteString::from)
        .ok_or(WebError::Base64Decode)
}

/// <https://infra.spec.whatwg.org/#forgiving-base64-decode>: ASCII whitespace is ignored, one
/// or two `=` may end input whose length is a multiple of four, bits left over at the end are
/// dropped; anything outside `A-Z a-z 0-9 + /` fails.
fn forgiving_base64_decode(data: &[u8]) -> Option<Vec<u8>> {
    let mut data: Vec<u8> = data
        .iter()
        .copied()
        .filter(|b| !matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' '))
        .collect();
    if data.len().is_multiple_of(4) {
        let padding = data
            .iter()
            .rev()
            .take(2)
            .take_while(|b| **b == b'=')
            .count();
        data.truncate(data.len() - padding);
    }
    if data.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(data.len() / 4 * 3 + 2);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for byte in data {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::forgiving_base64_decode as decode;

    #[test]
    fn decodes_by_the_forgiving_rules() {
        assert_eq!(decode(b"aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode(b" aGVs\tbG8\n").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode(b"ab==").as_deref(), Some(&[105][..]));
        // Leftover bits that are not zero are dropped, not refused.
        assert_eq!(decode(b"ab").as_deref(), Some(&[105][..]));
        assert_eq!(decode(b"+/+/").as_deref(), Some(&[0xfb, 0xff, 0xbf][..]));
        assert_eq!(decode(b"").as_deref(), Some(&[][..]));
    }

    #[test]
    fn refuses_what_is_not_base64() {
        for bad in [
            &b"--"[..],
            b"__",
            b"a",
            b"abcde",
            b"ab=",
            b"a===",
            b"ab=c",
            b"=",
            b"abc\x00",
            b"\xc3\xa9",
        ] {
            assert_eq!(decode(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
