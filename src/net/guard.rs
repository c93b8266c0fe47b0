//! Which destination addresses and hosts an outbound request may reach.
//!
//! The rules are a deny-list of every special-purpose range plus, for IPv6, an allow-list of
//! global unicast (`2000::/3`): anything that is not plainly a public host is refused. IPv6
//! forms that embed an IPv4 address (mapped, compatible, 6to4, Teredo, NAT64) are refused
//! outright rather than unwrapped, so no translation path can reach an internal IPv4 address.
//!
//! [`check_url`] applies the rules a URL must meet before anything is resolved. This file
//! depends on `std` and `url` only: the fuzz target `fuzz/fuzz_targets/ssrf_url.rs` compiles it
//! as is (see `docs/fuzzing.md`), so keep it free of `crate::` paths.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use url::{Host, Url};

/// Checks one destination address. `Err` carries the reason, phrased to follow "resolves to".
///
/// `allow_loopback` (a dev setting) lets `127.0.0.0/8` and `::1` through; every other internal
/// range stays refused.
pub fn check_ip(ip: IpAddr, allow_loopback: bool) -> Result<(), &'static str> {
    match ip {
        IpAddr::V4(v4) => check_v4(v4, allow_loopback),
        IpAddr::V6(v6) => check_v6(v6, allow_loopback),
    }
}

/// Whether `ip` is in a private network (RFC 1918, IPv6 unique-local): what `toolhost dev
/// --allow-private-upstreams` lets through. Link-local (cloud metadata at 169.254.169.254)
/// is not.
pub(super) fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(addr) => [
            ([10, 0, 0, 0], 8),
            ([172, 16, 0, 0], 12),
            ([192, 168, 0, 0], 16),
        ]
        .iter()
        .any(|(net, len)| in_v4(addr, *net, *len)),
        IpAddr::V6(addr) => in_v6(addr, v6([0xfc00, 0, 0, 0, 0, 0, 0, 0]), 7),
    }
}

/// `addr` lies in `net/len`.
fn in_v4(addr: Ipv4Addr, net: [u8; 4], len: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
    u32::from(addr) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

/// `addr` lies in `net/len`.
fn in_v6(addr: Ipv6Addr, net: Ipv6Addr, len: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - len).unwrap_or(0);
    u128::from(addr) & mask == u128::from(net) & mask
}

/// IPv4 special-purpose ranges, most specific reason first.
const V4_DENY: &[([u8; 4], u32, &str)] = &[
    ([255, 255, 255, 255], 32, "a broadcast address"),
    ([0, 0, 0, 0], 8, "an unspecified address"),
    ([10, 0, 0, 0], 8, "a private address"),
    ([172, 16, 0, 0], 12, "a private address"),
    ([192, 168, 0, 0], 16, "a private address"),
    ([169, 254, 0, 0], 16, "a link-local address"),
    ([100, 64, 0, 0], 10, "a shared (CGNAT) address"),
    ([192, 0, 0, 0], 24, "a reserved address"),
    ([192, 0, 2, 0], 24, "a documentation address"),
    ([198, 51, 100, 0], 24, "a documentation address"),
    ([203, 0, 113, 0], 24, "a documentation address"),
    ([198, 18, 0, 0], 15, "a benchmarking address"),
    ([192, 88, 99, 0], 24, "a reserved address"),
    ([224, 0, 0, 0], 4, "a multicast address"),
    ([240, 0, 0, 0], 4, "a reserved address"),
];

fn check_v4(ip: Ipv4Addr, allow_loopback: bool) -> Result<(), &'static str> {
    if in_v4(ip, [127, 0, 0, 0], 8) {
        return if allow_loopback {
            Ok(())
        } else {
            Err("a loopback address")
        };
    }
    match V4_DENY.iter().find(|(net, len, _)| in_v4(ip, *net, *len)) {
        Some((_, _, reason)) => Err(reason),
        None => Ok(()),
    }
}

const fn v6(segments: [u16; 8]) -> Ipv6Addr {
    Ipv6Addr::new(
        segments[0],
        segments[1],
        segments[2],
        segments[3],
        segments[4],
        segments[5],
        segments[6],
        segments[7],
    )
}

/// IPv6 ranges refused although they may look routable, most specific reason first. Everything
/// outside `2000::/3` is refused after these.
const V6_DENY: &[(Ipv6Addr, u32, &str)] = &[
    (Ipv6Addr::UNSPECIFIED, 128, "an unspecified address"),
    (
        v6([0, 0, 0, 0, 0, 0xffff, 0, 0]),
        96,
        "an IPv4-mapped IPv6 address",
    ),
    (Ipv6Addr::UNSPECIFIED, 96, "an IPv4-compatible IPv6 address"),
    (v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0]), 96, "a NAT64 address"),
    (v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0]), 48, "a NAT64 address"),
    (
        v6([0xfc00, 0, 0, 0, 0, 0, 0, 0]),
        7,
        "a unique-local address",
    ),
    (
        v6([0xfe80, 0, 0, 0, 0, 0, 0, 0]),
        10,
        "a link-local address",
    ),
    (
        v6([0xfec0, 0, 0, 0, 0, 0, 0, 0]),
        10,
        "a site-local address",
    ),
    (v6([0xff00, 0, 0, 0, 0, 0, 0, 0]), 8, "a multicast address"),
    (v6([0x2001, 0, 0, 0, 0, 0, 0, 0]), 32, "a Teredo address"),
    (
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0]),
        32,
        "a documentation address",
    ),
    (v6([0x2001, 0, 0, 0, 0, 0, 0, 0]), 23, "a reserved address"),
    (v6([0x2002, 0, 0, 0, 0, 0, 0, 0]), 16, "a 6to4 address"),
    (
        v6([0x3fff, 0, 0, 0, 0, 0, 0, 0]),
        20,
        "a documentation address",
    ),
];

fn check_v6(ip: Ipv6Addr, allow_loopback: bool) -> Result<(), &'static str> {
    if ip == Ipv6Addr::LOCALHOST {
        return if allow_loopback {
            Ok(())
        } else {
            Err("a loopback address")
        };
    }
    if let Some((_, _, reason)) = V6_DENY.iter().find(|(net, len, _)| in_v6(ip, *net, *len)) {
        return Err(reason);
    }
    if in_v6(ip, v6([0x2000, 0, 0, 0, 0, 0, 0, 0]), 3) {
        Ok(())
    } else {
        Err("a reserved address")
    }
}

/// Why a URL was refused before any lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum UrlRefusal {
    /// Not a URL the client fetches: not absolute, not http(s), credentials, no host or port.
    Invalid(&'static str),
    /// The host is not on the request's allow-list.
    HostNotAllowed(String),
    /// The host is an IP literal that [`check_ip`] refuses (its reason).
    Address(&'static str),
}

/// Where a URL that passed [`check_url`] leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Destination<'a> {
    /// The host is an IP literal, already checked: connect to exactly this.
    Address(SocketAddr),
    /// A host name: every address it resolves to must pass [`check_ip`].
    Name(&'a str, u16),
}

/// Parses a caller's URL as the client does (surrounding whitespace ignored). Every numeric
/// host form (`0x7f.1`, `2130706433`, `[::ffff:127.0.0.1]`) becomes an IP literal here, per
/// the WHATWG URL rules for http(s).
pub(super) fn parse_url(text: &str) -> Result<Url, UrlRefusal> {
    Url::parse(text.trim()).map_err(|_| UrlRefusal::Invalid("not an absolute URL"))
}

/// The checks on a URL before any lookup: http(s) only, no credentials, a host and a port, the
/// host on `allow_hosts` when that is given, and an IP-literal host passing [`check_ip`].
pub(super) fn check_url<'a>(
    url: &'a Url,
    allow_hosts: Option<&[String]>,
    allow_loopback: bool,
) -> Result<Destination<'a>, UrlRefusal> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlRefusal::Invalid("only http and https URLs are allowed"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlRefusal::Invalid(
            "credentials in the URL are not allowed",
        ));
    }
    let host = url
        .host()
        .ok_or(UrlRefusal::Invalid("the URL has no host"))?;
    let port = url
        .port_or_known_default()
        .ok_or(UrlRefusal::Invalid("the URL has no port"))?;
    if let Some(list) = allow_hosts {
        let name = url.host_str().unwrap_or_default();
        if !host_allowed(name, list) {
            return Err(UrlRefusal::HostNotAllowed(name.to_string()));
        }
    }
    let ip = match host {
        Host::Ipv4(ip) => IpAddr::V4(ip),
        Host::Ipv6(ip) => IpAddr::V6(ip),
        Host::Domain(name) => return Ok(Destination::Name(name, port)),
    };
    check_ip(ip, allow_loopback).map_err(UrlRefusal::Address)?;
    Ok(Destination::Address(SocketAddr::new(ip, port)))
}

/// Whether `host` (lowercase, as the URL parser leaves it) matches an allow-list entry: an exact
/// host name, or `*.example.com` for any subdomain of `example.com` (not the apex itself).
pub(super) fn host_allowed(host: &str, allow_hosts: &[String]) -> bool {
    let host = host.trim_end_matches('.');
    allow_hosts.iter().any(|pattern| {
        let pattern = pattern.trim().trim_end_matches('.').to_ascii_lowercase();
        match pattern.strip_prefix("*.") {
            Some(suffix) => host
                .strip_suffix(suffix)
                .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
            None => host == pattern,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(addr: &str) -> &'static str {
        let ip: IpAddr = addr.parse().expect("test address");
        match check_ip(ip, false) {
            Err(reason) => reason,
            Ok(()) => panic!("{addr} should be refused"),
        }
    }

    fn allowed(addr: &str, allow_loopback: bool) -> bool {
        let ip: IpAddr = addr.parse().expect("test address");
        check_ip(ip, allow_loopback).is_ok()
    }

    #[test]
    fn public_addresses_pass() {
        for addr in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "192.169.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
        ] {
            assert!(allowed(addr, false), "{addr}");
        }
    }

    #[test]
    fn ipv4_special_ranges_are_refused() {
        let cases = [
            ("127.0.0.1", "a loopback address"),
            ("127.255.255.254", "a loopback address"),
            ("10.0.0.1", "a private address"),
            ("10.255.255.255", "a private address"),
            ("172.16.0.1", "a private address"),
            ("172.31.255.255", "a private address"),
            ("192.168.1.1", "a private address"),
            ("169.254.169.254", "a link-local address"),
            ("169.254.0.1", "a link-local address"),
            ("100.64.0.1", "a shared (CGNAT) address"),
            ("100.127.255.255", "a shared (CGNAT) address"),
            ("0.0.0.0", "an unspecified address"),
            ("0.1.2.3", "an unspecified address"),
            ("224.0.0.1", "a multicast address"),
            ("239.255.255.250", "a multicast address"),
            ("255.255.255.255", "a broadcast address"),
            ("192.0.0.8", "a reserved address"),
            ("192.0.2.1", "a documentation address"),
            ("198.51.100.7", "a documentation address"),
            ("203.0.113.9", "a documentation address"),
            ("198.18.0.1", "a benchmarking address"),
            ("198.19.255.255", "a benchmarking address"),
            ("240.0.0.1", "a reserved address"),
            ("192.88.99.1", "a reserved address"),
        ];
        for (addr, reason) in cases {
            assert_eq!(refused(addr), reason, "{addr}");
        }
    }

    #[test]
    fn ipv6_special_ranges_are_refused() {
        let cases = [
            ("::1", "a loopback address"),
            ("::", "an unspecified address"),
            ("::ffff:127.0.0.1", "an IPv4-mapped IPv6 address"),
            ("::ffff:8.8.8.8", "an IPv4-mapped IPv6 address"),
            ("::127.0.0.1", "an IPv4-compatible IPv6 address"),
            ("64:ff9b::7f00:1", "a NAT64 address"),
            ("64:ff9b:1::1", "a NAT64 address"),
            ("fc00::1", "a unique-local address"),
            ("fd12:3456::1", "a unique-local address"),
            ("fe80::1", "a link-local address"),
            ("febf::1", "a link-local address"),
            ("fec0::1", "a site-local address"),
            ("ff02::1", "a multicast address"),
            ("2001::1", "a Teredo address"),
            ("2001:db8::1", "a documentation address"),
            ("2001:2::1", "a reserved address"),
            ("2002:7f00:1::1", "a 6to4 address"),
            ("3fff::1", "a documentation address"),
            ("100::1", "a reserved address"),
            ("4000::1", "a reserved address"),
        ];
        for (addr, reason) in cases {
            assert_eq!(refused(addr), reason, "{addr}");
        }
    }

    #[test]
    fn private_networks_are_told_apart_from_link_local() {
        for ip in [
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "fd00::1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "169.254.169.254",
            "127.0.0.1",
            "172.32.0.1",
            "8.8.8.8",
            "fe80::1",
            "::1",
        ] {
            assert!(!is_private(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn allow_loopback_admits_loopback_only() {
        assert!(allowed("127.0.0.1", true));
        assert!(allowed("127.1.2.3", true));
        assert!(allowed("::1", true));
        for addr in [
            "10.0.0.1",
            "192.168.0.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::",
            "::ffff:127.0.0.1",
            "fe80::1",
            "fd00::1",
        ] {
            assert!(!allowed(addr, true), "{addr}");
        }
    }

    #[test]
    fn host_allow_list_matches_exact_and_subdomains() {
        let list = vec!["api.example.com".to_string(), "*.Data.org".to_string()];
        assert!(host_allowed("api.example.com", &list));
        assert!(host_allowed("api.example.com.", &list));
        assert!(!host_allowed("example.com", &list));
        assert!(!host_allowed("evilapi.example.com", &list));
        assert!(host_allowed("x.data.org", &list));
        assert!(host_allowed("a.b.data.org", &list));
        assert!(!host_allowed("data.org", &list));
        assert!(!host_allowed("baddata.org", &list));
        assert!(!host_allowed("data.org.evil.com", &list));
        assert!(!host_allowed("anything", &[]));
    }
}
