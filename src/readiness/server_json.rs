//! MCP registry `server.json`: the document an MCP client or registry reads to learn how to
//! reach a server (`remotes` for hosted servers, `packages` for installable ones).

use serde_json::Value;

use super::payment::is_http_url;
use super::report::{quote, str_field, Findings};

const MCP_REMOTE_TRANSPORTS: [&str; 2] = ["streamable-http", "sse"];
const MCP_PACKAGE_TRANSPORTS: [&str; 3] = ["stdio", "streamable-http", "sse"];

pub(super) fn matches(doc: &Value) -> bool {
    let schema = str_field(doc, "$schema").is_some_and(|s| s.contains("server.schema.json"));
    let shaped = str_field(doc, "name").is_some()
        && (doc.get("remotes").is_some() || doc.get("packages").is_some());
    schema || shaped
}

pub(super) fn analyze(doc: &Value, f: &mut Findings) {
    match str_field(doc, "$schema") {
        Some(s) if s.contains("server.schema.json") => {
            f.pass("schema", format!("$schema is {}", quote(s)))
        }
        _ => f.fail(
            "schema",
            "$schema does not reference server.schema.json",
            "Set $schema to the MCP registry's server.schema.json URL",
        ),
    }
    match str_field(doc, "name") {
        Some(n) if is_reverse_dns_name(n) => f.pass("name", format!("name is {}", quote(n))),
        Some(n) => f.fail(
            "name",
            format!(
                "name {} is not in reverse-DNS form <namespace>/<server>",
                quote(n)
            ),
            "Name the server <reverse-dns-namespace>/<name>, e.g. io.github.owner/server",
        ),
        None => f.fail(
            "name",
            "name is missing",
            "Add a name such as io.github.owner/server",
        ),
    }
    let version = str_field(doc, "version").or_else(|| {
        doc.get("version_detail")
            .and_then(|d| str_field(d, "version"))
    });
    match version {
        Some(v) => f.pass("version", format!("version is {}", quote(v))),
        None => f.fail(
            "version",
            "version is missing",
            "Add a version (semantic versioning, e.g. 1.0.0)",
        ),
    }
    match str_field(doc, "description") {
        Some(_) => f.pass("description", "description is present"),
        None => f.fail(
            "description",
            "description is missing",
            "Add a one-line description",
        ),
    }

    let remotes = doc.get("remotes").and_then(Value::as_array);
    let packages = doc.get("packages").and_then(Value::as_array);
    let count = remotes.map_or(0, Vec::len) + packages.map_or(0, Vec::len);
    if count == 0 {
        f.fail(
            "remotes_or_packages",
            "neither remotes nor packages lists a way to reach the server",
            "Add a remotes entry {\"type\": \"streamable-http\", \"url\": \"https://.../mcp\"}",
        );
        return;
    }
    f.pass(
        "remotes_or_packages",
        format!("{count} way(s) to reach the server"),
    );
    if let Some(remotes) = remotes.filter(|r| !r.is_empty()) {
        let mut problems = Vec::new();
        for (i, remote) in remotes.iter().enumerate() {
            match str_field(remote, "type") {
                Some(t) if MCP_REMOTE_TRANSPORTS.contains(&t) => {}
                Some(t) => problems.push(format!(
                    "remotes[{i}].type {} is not streamable-http or sse",
                    quote(t)
                )),
                None => problems.push(format!("remotes[{i}].type is missing")),
            }
            match str_field(remote, "url") {
                Some(u) if is_http_url(u) && (u.starts_with("https://") || is_loopback_url(u)) => {}
                Some(u) => problems.push(format!(
                    "remotes[{i}].url {} is not an absolute https URL (http only on a loopback host)",
                    quote(u)
                )),
                None => problems.push(format!("remotes[{i}].url is missing")),
            }
        }
        let first = remotes
            .iter()
            .find_map(|r| str_field(r, "url"))
            .unwrap_or_default();
        f.verdict(
            "remotes",
            format!(
                "{} remote(s) with valid transport and https URL",
                remotes.len()
            ),
            &problems,
            "Give every remote a type of streamable-http or sse and an absolute https url",
        );
        if is_http_url(first) {
            f.action(format!(
                "Check that {first} answers an MCP initialize request over its transport"
            ));
        }
    }
    if let Some(packages) = packages.filter(|p| !p.is_empty()) {
        let mut problems = Vec::new();
        for (i, package) in packages.iter().enumerate() {
            let identifier =
                str_field(package, "identifier").or_else(|| str_field(package, "name"));
            if identifier.is_none() {
                problems.push(format!("packages[{i}].identifier is missing"));
            }
            let transport = package.get("transport").and_then(|t| str_field(t, "type"));
            match transport {
                Some(t) if MCP_PACKAGE_TRANSPORTS.contains(&t) => {}
                Some(t) => problems.push(format!(
                    "packages[{i}].transport.type {} is not stdio, streamable-http or sse",
                    quote(t)
                )),
                None => problems.push(format!("packages[{i}].transport.type is missing")),
            }
        }
        f.verdict(
            "packages",
            format!(
                "{} package(s) with identifier and transport",
                packages.len()
            ),
            &problems,
            "Give every package an identifier and a transport {\"type\": \"stdio\"}",
        );
    }
}

/// A URL on this machine (`localhost`, 127.0.0.0/8, `::1`): plain http is normal there during
/// development, and such a server is not reachable by anyone else anyway. The readiness check
/// only reaches loopback with `--dev-allow-loopback`.
fn is_loopback_url(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    })
}

/// `<namespace>/<name>` with a dotted namespace, as the MCP registry requires.
fn is_reverse_dns_name(name: &str) -> bool {
    match name.split_once('/') {
        Some((namespace, server)) => {
            namespace.contains('.') && !server.is_empty() && !server.contains('/')
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_urls_may_be_plain_http() {
        assert!(is_loopback_url("http://127.0.0.1:8402/ai/mcp"));
        assert!(is_loopback_url("http://localhost/mcp"));
        assert!(is_loopback_url("http://[::1]:9/mcp"));
        assert!(!is_loopback_url("http://tools.example.com/mcp"));
        assert!(!is_loopback_url("http://10.0.0.1/mcp"));
    }

    #[test]
    fn reverse_dns_names() {
        assert!(is_reverse_dns_name("io.github.owner/server"));
        assert!(is_reverse_dns_name("com.example/weather"));
        assert!(!is_reverse_dns_name("weather"));
        assert!(!is_reverse_dns_name("example/weather"));
        assert!(!is_reverse_dns_name("com.example/"));
        assert!(!is_reverse_dns_name("com.example/a/b"));
    }
}
