//! The SSRF guard's URL handling (`src/net/guard.rs`): parsing a caller's URL, the checks
//! before any lookup (`check_url`) and the address rules (`check_ip`).
//!
//! Input: one flag byte, then UTF-8. Flag bit 0: `allow_loopback` (the dev setting); bit 1: the
//! text is `url\npattern`, with `pattern` as a one-entry host allow-list; bit 2: raw mode, the
//! rest is an address's 4 or 16 bytes. Seeds use `0`..`3` as the flag byte so they read as text
//! (`0http://0x7f.1/`), `4` for raw addresses.
//!
//! Asserts, besides not panicking:
//! - a URL let through as an address is http(s), without credentials, and its address is not
//!   loopback (unless allowed), private, link-local, unspecified, broadcast, multicast,
//!   documentation, shared (CGNAT), reserved, or an IPv6 form that embeds an IPv4 address, by
//!   an oracle written from `std`'s address predicates rather than the guard's tables;
//! - a URL let through as a host name, when that name reads as a number to the system resolver
//!   (`inet_aton`: `127.1`, `0x7f000001`, `017700000001`), resolves to an address `check_ip`
//!   refuses whenever the oracle calls it internal (what the client then checks);
//! - a host let through under an allow-list matches the pattern;
//! - in raw mode, `check_ip` refuses every address the oracle calls internal.

#![no_main]

use std::net::{IpAddr, Ipv4Addr};

use libfuzzer_sys::fuzz_target;

// The server's own source file (it depends on `std` and `url` only).
#[path = "../../src/net/guard.rs"]
#[allow(dead_code, unreachable_pub)]
mod guard;

use guard::{check_ip, check_url, parse_url, Destination};

/// Internal by `std`'s predicates and the IANA special-purpose registry; independent of the
/// guard's tables. Only this direction is asserted: the guard may refuse more.
fn internal(ip: IpAddr, allow_loopback: bool) -> bool {
    match ip {
        IpAddr::V4(v4) => internal_v4(v4, allow_loopback),
        IpAddr::V6(v6) => {
            if v6.is_loopback() {
                return !allow_loopback;
            }
            let s = v6.segments();
            v6.is_unspecified()
                || v6.is_multicast()
                || v6.is_unique_local()
                || v6.is_unicast_link_local()
                || (s[0] & 0xffc0) == 0xfec0 // site-local
                || v6.to_ipv4_mapped().is_some()
                || v6.to_ipv4().is_some() // IPv4-compatible, `::a.b.c.d`
                || (s[0] == 0x64 && s[1] == 0xff9b) // NAT64
                || s[0] == 0x2002 // 6to4
                || (s[0] == 0x2001 && s[1] == 0) // Teredo
                || (s[0] == 0x2001 && s[1] == 0xdb8) // documentation
        }
    }
}

fn internal_v4(v4: Ipv4Addr, allow_loopback: bool) -> bool {
    if v4.is_loopback() {
        return !allow_loopback;
    }
    let [a, b, _, _] = v4.octets();
    v4.is_private()
        || v4.is_link_local()
        || a == 0
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || (a == 100 && (b & 0xc0) == 64) // shared, CGNAT
        || (a == 198 && (b & 0xfe) == 18) // benchmarking
        || a >= 240
}

/// A number as `inet_aton` reads one part: decimal, `0x` hex or `0` octal.
fn aton_part(text: &str) -> Option<u64> {
    let (digits, radix) =
        if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            (hex, 16)
        } else if text.len() > 1 && text.starts_with('0') {
            (&text[1..], 8)
        } else {
            (text, 10)
        };
    if digits.is_empty() && radix == 16 {
        return Some(0);
    }
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// What the system resolver makes of a host name that is a number (`inet_aton`'s forms `a`,
/// `a.b`, `a.b.c`, `a.b.c.d`); `None` for a real name.
fn aton(name: &str) -> Option<Ipv4Addr> {
    let parts: Vec<u64> = name.split('.').map(aton_part).collect::<Option<Vec<_>>>()?;
    let (last, leading) = parts.split_last()?;
    if leading.len() > 3 || leading.iter().any(|p| *p > 255) {
        return None;
    }
    let bits = 8 * (4 - leading.len() as u32);
    if bits < 64 && *last >= 1u64 << bits {
        return None;
    }
    let mut value = *last as u32;
    for (i, part) in leading.iter().enumerate() {
        value |= (*part as u32) << (24 - 8 * i);
    }
    Some(Ipv4Addr::from(value))
}

/// The allow-list rule, restated: exact name, or a proper subdomain of `*.suffix`.
fn matches_pattern(host: &str, pattern: &str) -> bool {
    let host = host.trim_end_matches('.');
    let pattern = pattern.trim().trim_end_matches('.').to_ascii_lowercase();
    match pattern.strip_prefix("*.") {
        Some(suffix) => host.len() > suffix.len() + 1 && host.ends_with(&format!(".{suffix}")),
        None => host == pattern,
    }
}

/// Raw mode: the bytes are an address (the first 16 as IPv6 when there are that many, else the
/// first 4 as IPv4), checked with and without `allow_loopback`.
fn check_address(bytes: &[u8]) {
    let ip = if let Some(v6) = bytes.get(..16) {
        IpAddr::from(<[u8; 16]>::try_from(v6).unwrap())
    } else if let Some(v4) = bytes.get(..4) {
        IpAddr::from(<[u8; 4]>::try_from(v4).unwrap())
    } else {
        return;
    };
    for allow_loopback in [false, true] {
        if internal(ip, allow_loopback) {
            assert!(check_ip(ip, allow_loopback).is_err(), "{ip} allowed");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    if flags & 4 == 4 {
        return check_address(rest);
    }
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let allow_loopback = flags & 1 == 1;
    let (url_text, pattern) = match text.split_once('\n') {
        Some((url, pattern)) if flags & 2 == 2 => (url, Some(pattern)),
        _ => (text, None),
    };
    let Ok(url) = parse_url(url_text) else {
        return;
    };
    let list = pattern.map(|p| vec![p.to_string()]);
    let Ok(destination) = check_url(&url, list.as_deref(), allow_loopback) else {
        return;
    };
    assert!(matches!(url.scheme(), "http" | "https"), "{url}");
    assert!(
        url.username().is_empty() && url.password().is_none(),
        "{url}"
    );
    if let Some(pattern) = pattern {
        let host = url.host_str().unwrap_or_default();
        assert!(matches_pattern(host, pattern), "{url} passed {pattern:?}");
    }
    match destination {
        Destination::Address(addr) => {
            assert!(
                !internal(addr.ip(), allow_loopback),
                "{url_text:?} -> {addr} allowed"
            );
            assert_eq!(Some(addr.port()), url.port_or_known_default(), "{url}");
        }
        Destination::Name(name, _) => {
            assert!(
                name.parse::<IpAddr>().is_err(),
                "{url}: {name} left as a name"
            );
            if let Some(ip) = aton(name) {
                if internal(IpAddr::V4(ip), allow_loopback) {
                    assert!(
                        check_ip(IpAddr::V4(ip), allow_loopback).is_err(),
                        "{url_text:?}: {name} resolves to {ip}, allowed"
                    );
                }
            }
        }
    }
});
