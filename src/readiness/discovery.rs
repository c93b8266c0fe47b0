//! x402 discovery documents: lists of paid resources (a `/.well-known/x402` file or a
//! facilitator's discovery listing), each by URL or with its payment requirements.

use serde_json::Value;

use super::payment::{declared_version, is_http_url, requirement_problems, Version};
use super::report::{quote, Findings};

/// The resources a discovery document lists, if `doc` is one: an object with `x402Version` and
/// `resources`/`items`/`accepts`, an object whose `resources` are URLs or priced resources, or an
/// array of priced resources.
pub(super) fn items(doc: &Value) -> Option<Vec<&Value>> {
    let priced = |v: &Value| v.get("accepts").is_some();
    match doc {
        Value::Array(items) if !items.is_empty() && items.iter().all(priced) => {
            Some(items.iter().collect())
        }
        Value::Object(map) => {
            let versioned = map.contains_key("x402Version");
            if let Some(list) = map
                .get("resources")
                .or_else(|| map.get("items"))
                .and_then(Value::as_array)
            {
                let listy = list.iter().all(|v| v.is_string() || priced(v));
                (versioned || (listy && map.contains_key("resources")))
                    .then(|| list.iter().collect())
            } else if versioned && map.contains_key("accepts") {
                Some(vec![doc])
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The URL a listed resource is served at: a string item, `resource` or `resource.url`.
fn resource_url(item: &Value) -> Option<&str> {
    match item {
        Value::String(s) => Some(s.as_str()),
        _ => item
            .get("resource")
            .and_then(|r| r.as_str().or_else(|| r.get("url").and_then(Value::as_str))),
    }
}

pub(super) fn analyze(doc: &Value, f: &mut Findings) {
    let top_version = declared_version(doc);
    match doc.get("x402Version") {
        None => {}
        Some(_) if top_version.is_some() => f.pass("x402_version", "x402Version is 1 or 2"),
        Some(v) => f.fail(
            "x402_version",
            format!("x402Version {} is not 1 or 2", quote(&v.to_string())),
            "Set x402Version to 2 (or 1 for legacy clients)",
        ),
    }
    let items = items(doc).unwrap_or_default();
    if items.is_empty() {
        f.fail(
            "resources_listed",
            "the document lists no resources",
            "List each paid endpoint with its URL and payment requirements",
        );
        return;
    }
    f.pass(
        "resources_listed",
        format!("{} resource(s) listed", items.len()),
    );

    let mut url_problems = Vec::new();
    let mut first_url = None;
    for (i, item) in items.iter().enumerate() {
        match resource_url(item) {
            Some(u) if is_http_url(u) => {
                first_url.get_or_insert(u);
            }
            Some(u) => url_problems.push(format!(
                "resources[{i}] URL {} is not an absolute http(s) URL",
                quote(u)
            )),
            None => url_problems.push(format!("resources[{i}] has no resource URL")),
        }
    }
    f.verdict(
        "resource_urls",
        "every resource has an absolute URL",
        &url_problems,
        "Give every listed resource an absolute https URL",
    );

    let mut priced = 0;
    let mut problems = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(accepts) = item.get("accepts") else {
            continue;
        };
        priced += 1;
        let version = declared_version(item)
            .or(top_version)
            .unwrap_or_else(|| guess_version(accepts));
        match accepts.as_array().filter(|a| !a.is_empty()) {
            Some(options) => {
                for (j, option) in options.iter().enumerate() {
                    problems.extend(requirement_problems(
                        option,
                        version,
                        &format!("resources[{i}].accepts[{j}]"),
                    ));
                }
            }
            None => problems.push(format!("resources[{i}].accepts is empty")),
        }
    }
    if priced == 0 {
        f.pass(
            "payment_requirements",
            "resources are listed by URL only; each should answer unpaid requests with HTTP 402",
        );
    } else {
        f.verdict(
            "payment_requirements",
            format!("{priced} resource(s) carry valid payment requirements"),
            &problems,
            "Fix the listed payment requirements (see the check notes)",
        );
    }
    if let Some(url) = first_url {
        f.action(format!(
            "Run this check on a listed resource, e.g. {url}, to confirm it answers HTTP 402"
        ));
    }
}

/// v1 items carry `maxAmountRequired`, v2 items `amount`.
fn guess_version(accepts: &Value) -> Version {
    let v1 = accepts
        .as_array()
        .and_then(|a| a.first())
        .is_some_and(|o| o.get("maxAmountRequired").is_some());
    if v1 {
        Version::V1
    } else {
        Version::V2
    }
}
