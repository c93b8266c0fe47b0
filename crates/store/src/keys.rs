//! Key-range arithmetic shared by the engines' prefix scans, so both bound a prefix identically.

/// The smallest key greater than every key that starts with `prefix` (the exclusive end of the
/// prefix's range), or `None` when no such key exists: the empty prefix and prefixes of only
/// `0xff` bytes run to the end of the key space.
pub(super) fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let last = prefix.iter().rposition(|b| *b != 0xff)?;
    let mut end = prefix[..=last].to_vec();
    end[last] += 1;
    Some(end)
}

/// Where a scan of `prefix`'s keys that sort after `after` starts: just past `after` when it
/// is in the prefix's range or beyond, the prefix itself otherwise.
pub(super) fn scan_start(prefix: &[u8], after: Option<&[u8]>) -> Vec<u8> {
    match after {
        Some(after) if after >= prefix => successor(after),
        _ => prefix.to_vec(),
    }
}

/// The smallest key strictly greater than `key`.
pub(super) fn successor(key: &[u8]) -> Vec<u8> {
    let mut next = Vec::with_capacity(key.len() + 1);
    next.extend_from_slice(key);
    next.push(0);
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_bounds_exactly_the_prefixed_keys() {
        assert_eq!(prefix_end(b""), None);
        assert_eq!(prefix_end(&[0xff, 0xff]), None);
        assert_eq!(prefix_end(b"a/"), Some(b"a0".to_vec()));
        assert_eq!(prefix_end(&[0x01, 0xff]), Some(vec![0x02]));
        assert_eq!(prefix_end(&[0x00]), Some(vec![0x01]));
        let prefix = [0x61, 0xfe, 0xff];
        let end = prefix_end(&prefix).unwrap();
        for key in [
            &[0x61, 0xfe, 0xff][..],
            &[0x61, 0xfe, 0xff, 0xff, 0xff],
            &[0x61, 0xfe, 0xff, 0x00],
        ] {
            assert!(key.starts_with(&prefix) && key < &end[..]);
        }
        assert!([0x61, 0xff][..] >= end[..]);
    }

    #[test]
    fn successor_is_the_next_key() {
        assert_eq!(successor(b"a"), b"a\0".to_vec());
        assert!(successor(b"a").as_slice() > &b"a"[..]);
        assert!(successor(b"a").as_slice() < &b"a\x00\x00"[..]);
    }
}
