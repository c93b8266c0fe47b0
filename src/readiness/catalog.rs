//! Endpoint catalogs: a service's list of callable tools, such as toolhost's own `/ai/endpoints`
//! (`{schema, endpoints: [{slug, url, priceUsd, inputSchema, …}]}`) and similar listings that
//! name their entries under `endpoints` or `tools`.
//!
//! An agent picks a tool from such a list and calls it, so each entry needs an absolute URL, a
//! stated price (free is a price) and an input schema.

use serde_json::Value;

use super::payment::is_http_url;
use super::report::{quote, str_field, Findings};

/// Keys an entry's URL may be under.
const URL_KEYS: [&str; 4] = ["url", "endpoint", "href", "resource"];
/// Keys naming an entry.
const NAME_KEYS: [&str; 4] = ["slug", "name", "id", "title"];
/// Keys of an entry's input schema.
const SCHEMA_KEYS: [&str; 3] = ["inputSchema", "input_schema", "parameters"];

/// The entries of a catalog, if `doc` is one: an object whose `endpoints` or `tools` is an array
/// of named objects (each with a URL or a price), or an empty such array under a `schema` that
/// calls itself a catalog.
pub(super) fn entries(doc: &Value) -> Option<&Vec<Value>> {
    let map = doc.as_object()?;
    let list = ["endpoints", "tools"]
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_array))?;
    if list.is_empty() {
        let says_catalog = ["schema", "$schema"]
            .iter()
            .any(|k| str_field(doc, k).is_some_and(|s| s.contains("catalog")));
        return says_catalog.then_some(list);
    }
    let entry_like = |item: &Value| {
        item.is_object()
            && NAME_KEYS.iter().any(|k| str_field(item, k).is_some())
            && (url(item).is_some() || price(item).is_some())
    };
    list.iter().all(entry_like).then_some(list)
}

/// What a listing names the entry by, for notes.
fn name(item: &Value, index: usize) -> String {
    NAME_KEYS
        .iter()
        .find_map(|k| str_field(item, k))
        .map_or_else(|| format!("entry {index}"), quote)
}

/// The entry's URL: a string under one of [`URL_KEYS`], or such an object's `url`.
fn url(item: &Value) -> Option<&str> {
    URL_KEYS.iter().find_map(|k| match item.get(*k)? {
        Value::String(s) => Some(s.as_str()),
        Value::Object(o) => o.get("url").and_then(Value::as_str),
        _ => None,
    })
}

/// A stated price: `priceUsd` (a number of dollars), `price`, `pricing`, or x402 `accepts`.
fn price(item: &Value) -> Option<&Value> {
    ["priceUsd", "price", "pricing", "accepts"]
        .iter()
        .find_map(|k| item.get(*k).filter(|v| !v.is_null()))
}

/// Whether the entry says it costs something (`Some(false)`: free; `None`: cannot tell).
fn is_paid(item: &Value) -> Option<bool> {
    match item.get("priceUsd").and_then(Value::as_f64) {
        Some(p) => Some(p > 0.0),
        None => item
            .get("pricingMode")
            .and_then(Value::as_str)
            .map(|m| !m.starts_with("free")),
    }
}

pub(super) fn analyze(doc: &Value, f: &mut Findings) {
    let entries = entries(doc).map(Vec::as_slice).unwrap_or_default();
    if entries.is_empty() {
        f.fail(
            "endpoints_listed",
            "the catalog lists no endpoints",
            "List each callable endpoint with its URL, price and input schema",
        );
        return;
    }
    f.pass(
        "endpoints_listed",
        format!("{} endpoint(s) listed", entries.len()),
    );

    let mut url_problems = Vec::new();
    let mut price_problems = Vec::new();
    let mut schema_problems = Vec::new();
    for (i, item) in entries.iter().enumerate() {
        let who = name(item, i);
        match url(item) {
            Some(u) if is_http_url(u) => {}
            Some(u) => url_problems.push(format!(
                "{who}: URL {} is not an absolute http(s) URL",
                quote(u)
            )),
            None => url_problems.push(format!("{who} has no URL")),
        }
        match price(item) {
            None => price_problems.push(format!("{who} states no price")),
            Some(Value::Number(n)) if n.as_f64().is_some_and(|p| p < 0.0) => {
                price_problems.push(format!("{who}: price {n} is negative"))
            }
            Some(_) => {
                let mode = item.get("pricingMode").and_then(Value::as_str);
                let paid = item
                    .get("priceUsd")
                    .and_then(Value::as_f64)
                    .map(|p| p > 0.0);
                match (mode, paid) {
                    (Some(m), Some(true)) if m.starts_with("free") => price_problems.push(format!(
                        "{who}: pricingMode {} but priceUsd is above 0",
                        quote(m)
                    )),
                    (Some(m), Some(false)) if !m.starts_with("free") => price_problems
                        .push(format!("{who}: pricingMode {} but priceUsd is 0", quote(m))),
                    _ => {}
                }
            }
        }
        match SCHEMA_KEYS.iter().find_map(|k| item.get(*k)) {
            Some(Value::Object(_)) => {}
            Some(_) => schema_problems.push(format!("{who}: the input schema is not an object")),
            None => schema_problems.push(format!("{who} has no input schema")),
        }
    }
    f.verdict(
        "endpoint_urls",
        "every endpoint has an absolute URL",
        &url_problems,
        "Give every listed endpoint an absolute https URL",
    );
    f.verdict(
        "endpoint_prices",
        "every endpoint states its price",
        &price_problems,
        "State each endpoint's price (priceUsd, 0 when free) and keep its pricing mode consistent",
    );
    f.verdict(
        "input_schemas",
        "every endpoint has an input schema",
        &schema_problems,
        "Publish each endpoint's inputSchema (JSON Schema) so agents can build a valid call",
    );

    // A paid entry is the one whose 402 is worth checking next; else any entry.
    let next = entries
        .iter()
        .find(|e| is_paid(e) == Some(true))
        .or(entries.first())
        .and_then(|e| url(e))
        .filter(|u| is_http_url(u));
    if let Some(u) = next {
        f.action(format!(
            "Run this check on a listed endpoint, e.g. {u}, to confirm a paid one answers HTTP 402"
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn entries_by_shape() {
        let listed = json!({"endpoints": [{"slug": "a", "url": "https://x.example/a"}]});
        assert_eq!(entries(&listed).map(Vec::len), Some(1));
        let tools = json!({"tools": [{"name": "a", "price": "$0.01"}]});
        assert_eq!(entries(&tools).map(Vec::len), Some(1));
        let empty = json!({"schema": "acme.hosted-endpoint-catalog.v1", "endpoints": []});
        assert_eq!(entries(&empty).map(Vec::len), Some(0));
        for other in [
            json!({"endpoints": []}),
            json!({"endpoints": ["https://x.example/a"]}),
            json!({"endpoints": [{"url": "https://x.example/a"}]}),
            json!({"tools": [{"name": "a", "inputSchema": {}}]}),
            json!({"endpoints": {"a": {}}}),
            json!([{"slug": "a", "url": "https://x.example/a"}]),
        ] {
            assert_eq!(entries(&other), None, "{other}");
        }
    }

    #[test]
    fn problems_are_named_per_entry() {
        let doc = json!({"endpoints": [
            {"slug": "good", "url": "https://x.example/good", "priceUsd": 0.01, "pricingMode": "fixed_price_success_receipt", "inputSchema": {"type": "object"}},
            {"slug": "relative", "url": "/tools/relative", "priceUsd": 0, "inputSchema": {}},
            {"slug": "unpriced", "url": "https://x.example/unpriced", "inputSchema": true},
            {"slug": "confused", "url": "https://x.example/c", "priceUsd": 0.5, "pricingMode": "free_public_utility"},
        ]});
        let mut f = Findings::default();
        analyze(&doc, &mut f);
        let note = |id: &str| {
            let check = f.checks.iter().find(|c| c.id == id).unwrap();
            (check.passed, check.note.clone())
        };
        assert_eq!(
            note("endpoints_listed"),
            (true, "4 endpoint(s) listed".into())
        );
        let (passed, urls) = note("endpoint_urls");
        assert!(
            !passed && urls.contains("\"relative\"") && !urls.contains("good"),
            "{urls}"
        );
        let (passed, prices) = note("endpoint_prices");
        assert!(!passed, "{prices}");
        assert!(prices.contains("\"unpriced\" states no price"), "{prices}");
        assert!(prices.contains("\"confused\": pricingMode"), "{prices}");
        let (passed, schemas) = note("input_schemas");
        assert!(!passed, "{schemas}");
        assert!(schemas.contains("\"unpriced\": the input schema is not an object"));
        assert!(schemas.contains("\"confused\" has no input schema"));
        assert!(f
            .actions
            .iter()
            .any(|a| a.contains("https://x.example/good")));
    }
}
