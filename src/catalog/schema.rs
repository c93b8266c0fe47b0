//! JSON Schema checks for endpoint inputs and outputs.

use std::sync::Arc;

use crate::error::clip;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// The OpenAPI schema of a field holding a JSON Schema: an object or a boolean (`true` accepts
/// everything, `false` nothing), as JSON Schema itself allows.
pub fn json_schema_schema() -> utoipa::openapi::schema::Object {
    json_schema_types(&[])
}

/// [`json_schema_schema`] or `null`, for an optional field that reads `null` as absent.
pub fn optional_json_schema_schema() -> utoipa::openapi::schema::Object {
    json_schema_types(&[utoipa::openapi::schema::Type::Null])
}

fn json_schema_types(more: &[utoipa::openapi::schema::Type]) -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    let types = [Type::Object, Type::Boolean]
        .into_iter()
        .chain(more.iter().cloned());
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter(types))
        .build()
}

/// One failed constraint, located by JSON pointer so a client can point at the offending field.
#[derive(Debug, Clone, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Violation {
    /// JSON pointer into the submitted document (`""` is the whole document).
    pub pointer: String,
    pub message: String,
    /// JSON pointer of the schema keyword that failed.
    pub schema_path: String,
}

/// A schema that cannot be compiled, with the JSON pointer (into the schema) of the offending
/// part when it is known.
#[derive(Debug)]
pub(super) struct SchemaError {
    pub message: String,
    pub pointer: Option<String>,
}

/// Largest compiled size of one schema pattern. The `regex` crate matches in time linear in
/// the input for a given pattern; this bounds the pattern's side of that product.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// Compiles a schema, refusing documents that are not themselves valid JSON Schema.
///
/// `pattern` and `patternProperties` use the `regex` crate, which never backtracks: a
/// builder's pattern cannot make validation take more than linear time in the input. Patterns
/// it cannot express (lookaround, backreferences) are refused here, at publish time, with the
/// pointer of the pattern.
pub(super) fn compile(schema: &Value) -> Result<jsonschema::Validator, SchemaError> {
    if let Err(e) = jsonschema::meta::validate(schema) {
        return Err(SchemaError {
            message: format!("not a valid JSON Schema: {e} (at {})", e.instance_path),
            pointer: Some(e.instance_path.to_string()),
        });
    }
    if let Some(pointer) = in_place_loop(schema) {
        return Err(SchemaError {
            message: format!(
                "the schema at {pointer} applies itself to the same value (through $ref, allOf, \
                 anyOf, oneOf, not, if/then/else) without descending into it, or through more \
                 than {MAX_IN_PLACE_DEPTH} such steps: validation would not end (or its \
                 references are too many to check)"
            ),
            pointer: Some(pointer),
        });
    }
    jsonschema::options()
        .should_validate_formats(true)
        .with_pattern_options(jsonschema::PatternOptions::regex().size_limit(PATTERN_SIZE_LIMIT))
        .build(schema)
        .map_err(|e| match &e.kind {
            jsonschema::error::ValidationErrorKind::Format { format } if format == "regex" => {
                let pointer = pattern_pointer(schema, e.instance_path.as_str(), &e.instance);
                SchemaError {
                    message: format!(
                        "the pattern at {pointer} is not supported: patterns use a linear-time \
                         regular expression engine, without lookaround, backreferences or \
                         oversized repetitions"
                    ),
                    pointer: Some(pointer),
                }
            }
            _ => SchemaError {
                message: format!("not a valid JSON Schema: {e}"),
                pointer: None,
            },
        })
}

/// The pointer of the refused pattern. jsonschema reports the schema holding a `pattern` (with
/// the pattern), or a `patternProperties` object (with one of its subschemas); in the latter,
/// the first key the `regex` crate refuses is named (ECMA-262 classes such as `\d` mean the same
/// there).
fn pattern_pointer(schema: &Value, at: &str, instance: &Value) -> String {
    if instance.is_string() {
        return format!("{at}/pattern");
    }
    schema
        .pointer(at)
        .and_then(Value::as_object)
        .and_then(|patterns| {
            patterns.keys().find(|key| {
                regex::RegexBuilder::new(key)
                    .size_limit(PATTERN_SIZE_LIMIT)
                    .build()
                    .is_err()
            })
        })
        .map_or_else(
            || at.to_string(),
            |key| format!("{at}/{}", key.replace('~', "~0").replace('/', "~1")),
        )
}

/// Longest chain of subschemas applied to one value of the input (see [`in_place_loop`]).
const MAX_IN_PLACE_DEPTH: usize = 32;

/// In-place edges [`in_place_loop`] follows before it gives up and refuses the schema: a bound
/// on the work a builder's schema can cause at publish time (references resolved generously
/// can make edges quadratic in the schema's size).
const MAX_IN_PLACE_EDGES: usize = 100_000;

/// Keywords whose subschemas apply to the same value as their schema.
const IN_PLACE_LISTS: [&str; 3] = ["allOf", "anyOf", "oneOf"];
const IN_PLACE_ONE: [&str; 4] = ["not", "if", "then", "else"];
const IN_PLACE_MAPS: [&str; 2] = ["dependentSchemas", "dependencies"];
/// Keywords whose subschemas apply to a part of the value (or only hold definitions).
const NESTED_ONE: [&str; 8] = [
    "additionalProperties",
    "items",
    "additionalItems",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
];
const NESTED_MAPS: [&str; 4] = ["properties", "patternProperties", "$defs", "definitions"];
const NESTED_LISTS: [&str; 2] = ["prefixItems", "items"];

/// The pointer of a `$ref` (or an applicator) from which validation would apply schemas to
/// the same value forever, or through more than [`MAX_IN_PLACE_DEPTH`] steps; `None` when the
/// schema always descends into the value before it comes back to a schema it is in.
///
/// jsonschema 0.33 follows such a loop (`{"anyOf": [{"$ref": "#"}]}`) until the thread's
/// stack overflows, which aborts the whole server on the first call; the fuzzing work of
/// issue 14 found it (docs/fuzzing.md). Every subschema of the document is a node; its edges
/// are its in-place subschemas and the targets of its references (`$ref`, `$dynamicRef`,
/// `$recursiveRef`), resolved generously: a reference that may lead to several places leads to
/// all of them, so a loop is never missed, at the cost of refusing a few exotic schemas.
fn in_place_loop(root: &Value) -> Option<String> {
    let mut nodes = Vec::new();
    collect_schemas(root, String::new(), &mut nodes);
    let anchors: Vec<(String, &str)> = nodes
        .iter()
        .filter_map(|p| root.pointer(p).map(|s| (p, s)))
        .flat_map(|(p, s)| {
            ["$anchor", "$dynamicAnchor", "$id"]
                .into_iter()
                .filter_map(move |k| s.get(k).and_then(Value::as_str).map(|a| (p.clone(), a)))
        })
        .collect();
    // Depth of the longest in-place chain from each node; `None` while it is being explored.
    let mut depth: std::collections::HashMap<String, Option<usize>> = Default::default();
    let mut budget = MAX_IN_PLACE_EDGES;
    for node in &nodes {
        if let Err(at) = chain_depth(root, node, &anchors, &mut depth, 0, &mut budget) {
            return Some(at);
        }
    }
    None
}

/// Every subschema position of the document, as JSON pointers.
fn collect_schemas(schema: &Value, at: String, out: &mut Vec<String>) {
    let Value::Object(map) = schema else {
        out.push(at);
        return;
    };
    out.push(at.clone());
    let child = |k: &str| format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
    for (key, value) in map {
        let key = key.as_str();
        let one = IN_PLACE_ONE.contains(&key) || NESTED_ONE.contains(&key);
        let lists = IN_PLACE_LISTS.contains(&key) || NESTED_LISTS.contains(&key);
        let maps = IN_PLACE_MAPS.contains(&key) || NESTED_MAPS.contains(&key);
        match value {
            Value::Object(_) if one => collect_schemas(value, child(key), out),
            Value::Array(items) if lists => {
                for (i, item) in items.iter().enumerate() {
                    collect_schemas(item, format!("{}/{i}", child(key)), out);
                }
            }
            Value::Object(entries) if maps => {
                for (name, sub) in entries {
                    if sub.is_object() || sub.is_boolean() {
                        collect_schemas(
                            sub,
                            child(key) + "/" + &name.replace('~', "~0").replace('/', "~1"),
                            out,
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

/// The nodes validation moves to from `at` without descending into the value.
fn in_place_edges(root: &Value, at: &str, anchors: &[(String, &str)]) -> Vec<String> {
    let Some(Value::Object(map)) = root.pointer(at) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let child = |k: &str| format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
    for key in IN_PLACE_ONE {
        if map.get(key).is_some_and(|v| v.is_object()) {
            out.push(child(key));
        }
    }
    for key in IN_PLACE_LISTS {
        if let Some(Value::Array(items)) = map.get(key) {
            out.extend((0..items.len()).map(|i| format!("{}/{i}", child(key))));
        }
    }
    for key in IN_PLACE_MAPS {
        if let Some(Value::Object(entries)) = map.get(key) {
            out.extend(
                entries
                    .iter()
                    .filter(|(_, v)| v.is_object())
                    .map(|(name, _)| {
                        child(key) + "/" + &name.replace('~', "~0").replace('/', "~1")
                    }),
            );
        }
    }
    for key in ["$ref", "$dynamicRef", "$recursiveRef"] {
        let Some(reference) = map.get(key).and_then(Value::as_str) else {
            continue;
        };
        let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let fragment = percent_decode(fragment);
        // The resources the reference may name: the document itself, or (for an absolute or
        // relative URI) any subschema with an `$id`.
        let mut resources = vec![String::new()];
        if !base.is_empty() {
            resources.extend(anchors.iter().map(|(p, _)| p.clone()));
        }
        for resource in resources {
            if fragment.is_empty() || fragment.starts_with('/') {
                out.push(format!("{resource}{fragment}"));
            } else {
                // A plain-name fragment: any subschema with that anchor.
                out.extend(
                    anchors
                        .iter()
                        .filter(|(_, a)| a.trim_start_matches('#') == fragment)
                        .map(|(p, _)| p.clone()),
                );
            }
        }
        if key == "$recursiveRef" || key == "$dynamicRef" {
            // Dynamic scope may resolve to any anchor of the document, or to its root.
            out.extend(anchors.iter().map(|(p, _)| p.clone()));
            out.push(String::new());
        }
    }
    out.sort();
    out.dedup();
    out
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The longest in-place chain from `at`; `Err` with the node where a loop, a chain longer
/// than [`MAX_IN_PLACE_DEPTH`], or the end of `budget` was found.
fn chain_depth(
    root: &Value,
    at: &str,
    anchors: &[(String, &str)],
    memo: &mut std::collections::HashMap<String, Option<usize>>,
    level: usize,
    budget: &mut usize,
) -> Result<usize, String> {
    if level > MAX_IN_PLACE_DEPTH {
        return Err(at.to_string());
    }
    match memo.get(at) {
        Some(Some(depth)) => return Ok(*depth),
        Some(None) => return Err(at.to_string()),
        None => {}
    }
    memo.insert(at.to_string(), None);
    let mut deepest = 0;
    let edges = in_place_edges(root, at, anchors);
    *budget = budget
        .checked_sub(edges.len())
        .ok_or_else(|| at.to_string())?;
    for next in edges {
        if matches!(memo.get(&next), Some(None)) {
            // `at` leads back to a schema still being explored: the loop closes here.
            return Err(at.to_string());
        }
        deepest = deepest.max(chain_depth(root, &next, anchors, memo, level + 1, budget)? + 1);
        if deepest > MAX_IN_PLACE_DEPTH {
            return Err(at.to_string());
        }
    }
    memo.insert(at.to_string(), Some(deepest));
    Ok(deepest)
}

/// A validator that refuses every value.
pub(super) fn refuse_all() -> jsonschema::Validator {
    jsonschema::validator_for(&Value::Bool(false)).expect("`false` is a valid schema")
}

/// Compiles a schema stored before patterns had to be linear-time: with the backtracking
/// engine, capped so that one match gives up (and fails validation) after a bounded number of
/// steps. New and changed schemas go through [`compile`].
pub(super) fn compile_stored(schema: &Value) -> Result<jsonschema::Validator, SchemaError> {
    if let Some(pointer) = in_place_loop(schema) {
        // Stored before loops were refused: validating with it would abort the server, and
        // refusing it would stop the server starting. It refuses every value instead.
        tracing::warn!(%pointer, "a stored schema applies itself to the same value; it now refuses every value");
        return Ok(refuse_all());
    }
    compile(schema).or_else(|refused| {
        jsonschema::options()
            .should_validate_formats(true)
            .with_pattern_options(
                jsonschema::PatternOptions::fancy_regex()
                    .backtrack_limit(STORED_BACKTRACK_LIMIT)
                    .size_limit(PATTERN_SIZE_LIMIT),
            )
            .build(schema)
            .map_err(|_| refused)
    })
}

/// Backtracking steps one match of a legacy stored pattern may take.
const STORED_BACKTRACK_LIMIT: usize = 100_000;

/// Most violations one answer lists; those past it are counted (up to
/// [`MAX_COUNTED_VIOLATIONS`]), not listed, so the answer stays small whatever the input.
pub(super) const MAX_LISTED_VIOLATIONS: usize = 20;
/// Violations counted before validation stops: a count past this is reported as a lower bound.
pub(super) const MAX_COUNTED_VIOLATIONS: usize = 1_000;
/// Most bytes of a violation's message, pointer or schema path: a message quotes the value at
/// fault, and a pointer the keys leading to it, both of which the caller chose.
const MAX_VIOLATION_TEXT: usize = 512;

/// The violations of a document, bounded: the first [`MAX_LISTED_VIOLATIONS`] in document
/// order, and how many there are (validation stops after [`MAX_COUNTED_VIOLATIONS`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Violations {
    pub listed: Vec<Violation>,
    /// Every violation found, listed or not.
    pub count: usize,
    /// Validation stopped at [`MAX_COUNTED_VIOLATIONS`]: `count` is a lower bound.
    pub truncated: bool,
}

impl Violations {
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The `details` of an error answer: `violations` (the listed ones), `violationCount`, and
    /// `truncated` when the count stopped short.
    pub fn details(&self) -> serde_json::Value {
        serde_json::json!({
            "violations": self.listed,
            "violationCount": self.count,
            "truncated": self.truncated,
        })
    }
}

/// The violations of `instance` (see [`Violations`]). `iter_errors` is lazy only at the top:
/// a keyword such as `items` collects every error below it before yielding the first, so its
/// cost grows with the violations; [`check_off_worker`] spares large documents that.
pub(super) fn check(validator: &jsonschema::Validator, instance: &Value) -> Violations {
    let mut found = Violations::default();
    for error in validator.iter_errors(instance) {
        if found.count == MAX_COUNTED_VIOLATIONS {
            found.truncated = true;
            break;
        }
        found.count += 1;
        if found.listed.len() < MAX_LISTED_VIOLATIONS {
            found.listed.push(violation(&error));
        }
    }
    found
}

fn violation(error: &jsonschema::ValidationError<'_>) -> Violation {
    Violation {
        pointer: clip(&error.instance_path.to_string(), MAX_VIOLATION_TEXT),
        message: clip(&error.to_string(), MAX_VIOLATION_TEXT),
        schema_path: clip(&error.schema_path.to_string(), MAX_VIOLATION_TEXT),
    }
}

/// The first violation of `instance` alone, found without collecting the others (`validate`
/// stops at the first): for large documents, whose every violation listed would cost memory in
/// proportion to the document (issue 43 measured 826 MB for one 1 MB body). `truncated`, since
/// there may be more.
fn first_violation(validator: &jsonschema::Validator, instance: &Value) -> Violations {
    match validator.validate(instance) {
        Ok(()) => Violations::default(),
        Err(error) => Violations {
            listed: vec![violation(&error)],
            count: 1,
            truncated: true,
        },
    }
}

/// The first violations of `instance` (at most [`MAX_LISTED_VIOLATIONS`]), in document order.
pub(super) fn violations(validator: &jsonschema::Validator, instance: &Value) -> Vec<Violation> {
    check(validator, instance).listed
}

/// [`check`] for request handlers: a large document is validated on the blocking pool, so
/// validating it (linear in its size with linear-time patterns, but up to the body or result
/// limit) never holds an async worker that `/healthz` and other requests need, and up to its
/// first violation only ([`first_violation`]). Small ones, nearly every call, stay inline: a
/// hop to the blocking pool costs more than they do.
pub(crate) async fn check_off_worker(
    validator: &Arc<jsonschema::Validator>,
    instance: &Value,
) -> Violations {
    if !is_large(instance) {
        return check(validator, instance);
    }
    let (validator, instance) = (validator.clone(), instance.clone());
    tokio::task::spawn_blocking(move || first_violation(&validator, &instance))
        .await
        .unwrap_or_else(|e| Violations {
            listed: vec![Violation {
                pointer: String::new(),
                message: format!("validation did not complete: {e}"),
                schema_path: String::new(),
            }],
            count: 1,
            truncated: false,
        })
}

/// Documents above this many bytes (strings and keys counted) are validated off the async workers.
const LARGE_INPUT_BYTES: usize = 16 * 1024;

/// Whether `value` holds more than [`LARGE_INPUT_BYTES`]; stops counting once it does.
fn is_large(value: &Value) -> bool {
    fn spend(budget: &mut usize, n: usize) -> bool {
        *budget = budget.saturating_sub(n.max(1));
        *budget == 0
    }
    fn count(value: &Value, budget: &mut usize) -> bool {
        match value {
            Value::String(s) => spend(budget, s.len()),
            Value::Array(items) => {
                spend(budget, items.len()) || items.iter().any(|v| count(v, budget))
            }
            Value::Object(map) => map
                .iter()
                .any(|(k, v)| spend(budget, k.len()) || count(v, budget)),
            _ => spend(budget, 8),
        }
    }
    let mut budget = LARGE_INPUT_BYTES;
    count(value, &mut budget)
}

/// A plausible request body for a schema: its `examples`/`default` where given, otherwise
/// placeholders for the required properties.
pub fn example_for_schema(schema: &Value) -> Value {
    if let Some(first) = schema
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
    {
        return first.clone();
    }
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") | None if schema.get("properties").is_some() => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (name, prop) in props {
                    if required.contains(&name.as_str()) || prop.get("examples").is_some() {
                        out.insert(name.clone(), example_for_schema(prop));
                    }
                }
            }
            Value::Object(out)
        }
        Some("object") | None => json!({}),
        Some("array") => json!([example_for_schema(
            schema.get("items").unwrap_or(&json!({}))
        )]),
        Some("integer") | Some("number") => json!(1),
        Some("boolean") => json!(true),
        Some(_) => match schema.get("format").and_then(Value::as_str) {
            Some("uri") => json!("https://example.com"),
            _ => json!("example"),
        },
    }
}

/// Turns query-string pairs into an input object, guided by the schema's property types:
/// numbers, integers and booleans are parsed, array properties collect repeated keys. A value
/// that does not parse stays a string, so validation reports it against its pointer.
pub fn input_from_query(schema: &Value, pairs: Vec<(String, String)>) -> Value {
    let props = schema.get("properties").and_then(Value::as_object);
    let kind = |name: &str| {
        props
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("string")
            .to_string()
    };
    let mut out = Map::new();
    for (name, raw) in pairs {
        let kind = kind(&name);
        let item_kind = props
            .and_then(|p| p.get(&name))
            .and_then(|p| p.pointer("/items/type"))
            .and_then(Value::as_str)
            .unwrap_or("string");
        if kind == "array" {
            let entry = out.entry(name).or_insert_with(|| json!([]));
            if let Value::Array(items) = entry {
                items.push(scalar(item_kind, raw));
            }
        } else {
            out.insert(name, scalar(&kind, raw));
        }
    }
    Value::Object(out)
}

fn scalar(kind: &str, raw: String) -> Value {
    let parsed = match kind {
        "integer" => raw.parse::<i64>().ok().map(Value::from),
        "number" => raw
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        "boolean" => match raw.as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        _ => None,
    };
    parsed.unwrap_or(Value::String(raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn violations_are_listed_up_to_a_cap_with_their_count_and_clipped() {
        let v = compile(&json!({"additionalProperties": {"type": "integer"}})).unwrap();
        let long = "x".repeat(5_000);
        let many: Map<String, Value> = (0..1_500)
            .map(|i| (format!("{i}{long}"), Value::String(long.clone())))
            .collect();
        let found = check(&v, &Value::Object(many));
        assert_eq!(found.listed.len(), MAX_LISTED_VIOLATIONS);
        assert_eq!(found.count, MAX_COUNTED_VIOLATIONS);
        assert!(found.truncated);
        for violation in &found.listed {
            assert!(violation.message.len() <= MAX_VIOLATION_TEXT);
            assert!(violation.pointer.len() <= MAX_VIOLATION_TEXT);
        }
        let details = found.details().to_string();
        assert!(details.len() < 40 * 1024, "{}", details.len());
        let few = check(&v, &json!({"a": "x", "b": 1, "c": "y"}));
        assert_eq!((few.listed.len(), few.count, few.truncated), (2, 2, false));
        // A large document: its first violation only, without collecting the rest.
        let first = first_violation(&v, &json!({"a": "x", "b": 1, "c": "y"}));
        assert_eq!(
            (first.listed.len(), first.count, first.truncated),
            (1, 1, true)
        );
        assert!(first_violation(&v, &json!({"b": 1})).is_empty());
    }

    #[test]
    fn violations_carry_pointers() {
        let schema = json!({"type":"object","required":["url"],"properties":{"url":{"type":"string"},"n":{"type":"integer"}}});
        let v = compile(&schema).unwrap();
        let found = violations(&v, &json!({"n": "x"}));
        let pointers: Vec<&str> = found.iter().map(|v| v.pointer.as_str()).collect();
        assert!(pointers.contains(&""), "{found:?}");
        assert!(pointers.contains(&"/n"), "{found:?}");
        assert!(violations(&v, &json!({"url": "https://a"})).is_empty());
    }

    /// `format` is an assertion here, not an annotation: a caller's malformed URL or date is
    /// the caller's mistake (422 with its pointer), not something for the handler to trip on.
    #[test]
    fn formats_are_enforced() {
        let schema = json!({"type": "object", "properties": {
            "url": {"type": "string", "format": "uri"},
            "when": {"type": "string", "format": "date-time"},
            "mail": {"type": "string", "format": "email"},
            "odd": {"type": "string", "format": "no-such-format"},
        }});
        for stored in [false, true] {
            let v = if stored {
                compile_stored(&schema)
            } else {
                compile(&schema)
            }
            .unwrap();
            let good = json!({"url": "https://example.com/a?b=c", "when": "2026-11-23T02:30:00Z",
                "mail": "a@example.com", "odd": "anything"});
            assert!(
                violations(&v, &good).is_empty(),
                "{:?}",
                violations(&v, &good)
            );
            let bad = json!({"url": "not a url", "when": "yesterday", "mail": "nobody"});
            let pointers: Vec<String> = violations(&v, &bad)
                .into_iter()
                .map(|v| v.pointer)
                .collect();
            assert_eq!(pointers.len(), 3, "{pointers:?}");
            for pointer in ["/url", "/when", "/mail"] {
                assert!(pointers.iter().any(|p| p == pointer), "{pointers:?}");
            }
        }
    }

    #[test]
    fn refuses_invalid_schemas() {
        assert!(compile(&json!({"type": "no-such-type"})).is_err());
        assert!(compile(&json!({"required": "url"})).is_err());
        assert!(compile(&json!({"type": "object"})).is_ok());
    }

    #[test]
    fn refuses_patterns_the_linear_engine_cannot_run() {
        let lookbehind =
            json!({"properties": {"name": {"type": "string", "pattern": "^(\\w+\\s?)*(?<!x)$"}}});
        let e = compile(&lookbehind).unwrap_err();
        assert_eq!(
            e.pointer.as_deref(),
            Some("/properties/name/pattern"),
            "{e:?}"
        );
        let keyed = json!({"patternProperties": {"^a$": {}, "(a)\\1": {}}});
        let e = compile(&keyed).unwrap_err();
        assert_eq!(
            e.pointer.as_deref(),
            Some("/patternProperties/(a)\\1"),
            "{e:?}"
        );
        let closed = json!({"additionalProperties": false, "patternProperties": {"^(?=a)": {}}});
        assert!(compile(&closed).is_err());
        // ECMA-262 classes keep working.
        let digits = compile(&json!({"pattern": "^\\d+$"})).unwrap();
        assert!(violations(&digits, &json!("123")).is_empty());
        assert!(!violations(&digits, &json!("12a")).is_empty());
        // Stored schemas from before load with a bounded backtracking engine.
        assert!(compile_stored(&lookbehind).is_ok());
        // A stored schema that loops loads, and refuses everything rather than abort.
        let looping = compile_stored(&json!({"anyOf": [{"$ref": "#"}]})).unwrap();
        assert!(!violations(&looping, &json!({})).is_empty());
    }

    #[test]
    fn query_input_is_typed_by_schema() {
        let schema = json!({"properties":{"n":{"type":"integer"},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}}}});
        let input = input_from_query(
            &schema,
            vec![
                ("n".into(), "3".into()),
                ("ok".into(), "true".into()),
                ("tags".into(), "a".into()),
                ("tags".into(), "b".into()),
                ("other".into(), "x".into()),
            ],
        );
        assert_eq!(
            input,
            json!({"n": 3, "ok": true, "tags": ["a", "b"], "other": "x"})
        );
    }

    #[test]
    fn examples_satisfy_their_schema() {
        let schema = json!({"type":"object","required":["url","count"],"properties":{"url":{"type":"string","format":"uri"},"count":{"type":"integer"},"opt":{"type":"string"}}});
        let example = example_for_schema(&schema);
        assert_eq!(example, json!({"url": "https://example.com", "count": 1}));
        assert!(violations(&compile(&schema).unwrap(), &example).is_empty());
    }

    #[test]
    fn refuses_schemas_that_apply_themselves_to_the_same_value() {
        // Found by the schema property test (docs/fuzzing.md): each of these overflowed the
        // validating thread's stack on the first input, aborting the server.
        for (schema, at) in [
            (json!({"not": {"$ref": "#"}}), "/not"),
            (json!({"anyOf": [{"$ref": "#"}]}), "/anyOf/0"),
            (json!({"$ref": ""}), ""),
            (
                json!({"$defs": {"d": {"$ref": "#"}}, "$ref": "#/$defs/d"}),
                "/$defs/d",
            ),
            (
                json!({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"not": {"$ref": "#/%24defs/a"}}},
                "properties": {"x": {"$ref": "#/$defs/a"}}}),
                "/$defs/b/not",
            ),
            (
                json!({"$defs": {"n": {"$anchor": "n", "if": {"$ref": "#n"}}}}),
                "/$defs/n/if",
            ),
        ] {
            let e = compile(&schema).unwrap_err();
            assert!(
                e.message.contains("validation would not end"),
                "{schema}: {e:?}"
            );
            assert_eq!(e.pointer.as_deref(), Some(at), "{schema}");
        }
        // Recursion through a part of the value ends with the value: trees stay allowed.
        let tree = json!({"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#"}}}});
        let v = compile(&tree).unwrap();
        assert!(violations(&v, &json!({"children": [{"children": []}]})).is_empty());
        // A long chain without a loop is refused too: it multiplies the depth of the input.
        let mut chain = json!({"type": "string"});
        for _ in 0..=MAX_IN_PLACE_DEPTH {
            chain = json!({"allOf": [chain]});
        }
        assert!(compile(&chain).is_err());
        // Checking is bounded: references to any of many resources are refused, quickly.
        let defs: serde_json::Map<String, Value> = (0..400)
            .map(|i| {
                (
                    format!("d{i}"),
                    json!({"$id": format!("d{i}"), "allOf": [{"$ref": "x"}]}),
                )
            })
            .collect();
        let started = std::time::Instant::now();
        assert!(compile(&json!({"$defs": defs})).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn the_deepest_schema_allowed_validates_the_deepest_input_on_a_small_stack() {
        // The longest in-place chain allowed, around a recursion into each array item...
        let mut schema = json!({"type": "array", "items": {"$ref": "#"}, "minItems": 1});
        for _ in 1..MAX_IN_PLACE_DEPTH {
            schema = json!({"allOf": [schema]});
        }
        let validator = compile(&schema).unwrap();
        // ...against an input as deep as serde_json parses (128 levels), on a thread with the
        // 2 MiB stack of the runtime's workers and blocking threads.
        let mut input = json!([]);
        for _ in 0..126 {
            input = json!([input]);
        }
        let text = input.to_string();
        let input: Value = serde_json::from_str(&text).unwrap();
        let found = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || violations(&validator, &input).len())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(found, 1, "the innermost array is empty");
    }

    mod properties {
        //! A builder's inputSchema and a caller's input (docs/fuzzing.md): compiling any
        //! document refuses or yields a validator, never panics; validating any input against
        //! it reports violations whose pointers lead into that input.

        use proptest::prelude::*;
        use serde_json::{json, Value};

        use super::super::*;
        use crate::arbitrary;

        const WORDS: &[&str] = &[
            "type",
            "properties",
            "required",
            "items",
            "pattern",
            "patternProperties",
            "additionalProperties",
            "enum",
            "const",
            "anyOf",
            "allOf",
            "oneOf",
            "not",
            "minimum",
            "maximum",
            "minLength",
            "maxLength",
            "format",
            "$ref",
            "$defs",
            "#",
            "object",
            "string",
            "integer",
            "number",
            "array",
            "boolean",
            "null",
            "url",
            "n",
        ];
        const TYPES: &[&str] = &[
            "object", "string", "integer", "number", "array", "boolean", "null",
        ];
        const FORMATS: &[&str] = &[
            "uri",
            "email",
            "date-time",
            "regex",
            "ipv4",
            "hostname",
            "uuid",
        ];

        /// Regex-like text: the pieces ECMA-262 and the `regex` crate disagree about.
        fn pattern() -> impl Strategy<Value = String> {
            let piece = proptest::sample::select(
                &[
                    "^", "$", "(", ")", "[", "]", "{", "}", "*", "+", "?", ".", "|", "\\", "\\d",
                    "\\w", "\\s", "\\b", "\\1", "(?=", "(?!", "(?<=", "(?<!", "(?:", "(?<n>",
                    "\\k<n>", "\\p{L}", "\\u00e9", "\\cA", "\\x41", "{2,}", "{1000}", "a", "-",
                    "0", ",", "é",
                ][..],
            );
            proptest::collection::vec(piece, 0..12).prop_map(|p| p.concat())
        }

        fn name() -> impl Strategy<Value = String> {
            proptest::sample::select(&["url", "n", "a", "", "~", "a/b", "0"][..])
                .prop_map(String::from)
        }

        fn schema() -> BoxedStrategy<Value> {
            let leaf = prop_oneof![
                Just(json!({})),
                any::<bool>().prop_map(Value::Bool),
                proptest::sample::select(TYPES).prop_map(|t| json!({"type": t})),
                pattern().prop_map(|p| json!({"type": "string", "pattern": p})),
                (0u64..5).prop_map(|n| json!({"minLength": n, "maxLength": n + 3})),
                (-5i64..5).prop_map(|n| json!({"minimum": n})),
                arbitrary::json(WORDS).prop_map(|v| json!({"enum": [v, 1]})),
                arbitrary::json(WORDS).prop_map(|v| json!({"const": v})),
                proptest::sample::select(FORMATS).prop_map(|f| json!({"format": f})),
                Just(json!({"$ref": "#"})),
                arbitrary::json(WORDS),
            ];
            leaf.prop_recursive(3, 24, 4, |inner| {
                prop_oneof![
                    (
                        proptest::collection::btree_map(name(), inner.clone(), 0..4),
                        any::<bool>()
                    )
                        .prop_map(|(props, strict)| {
                            let required: Vec<&String> = props.keys().take(1).collect();
                            json!({"type": "object", "properties": props, "required": required,
                                "additionalProperties": !strict})
                        }),
                    inner
                        .clone()
                        .prop_map(|s| json!({"type": "array", "items": s})),
                    proptest::collection::vec(inner.clone(), 1..3)
                        .prop_map(|v| json!({"anyOf": v})),
                    proptest::collection::vec(inner.clone(), 1..3)
                        .prop_map(|v| json!({"oneOf": v})),
                    inner.clone().prop_map(|s| json!({"not": s})),
                    (pattern(), inner.clone())
                        .prop_map(|(p, s)| json!({"patternProperties": {p: s}})),
                    inner
                        .clone()
                        .prop_map(|s| json!({"$defs": {"d": s}, "$ref": "#/$defs/d"})),
                    inner
                        .clone()
                        .prop_map(|s| json!({"properties": {"a": {"$ref": "#"}}, "allOf": [s]})),
                ]
            })
            .boxed()
        }

        fn instance() -> BoxedStrategy<Value> {
            prop_oneof![
                arbitrary::json(WORDS),
                arbitrary::object(&["url", "n", "a", "~", "a/b", "0"], arbitrary::json(WORDS))
                    .prop_map(Value::Object),
            ]
            .boxed()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            #[test]
            fn any_schema_compiles_or_is_refused_and_validates_any_input(
                schema in schema(),
                inputs in proptest::collection::vec(instance(), 1..4),
            ) {
                let _ = example_for_schema(&schema);
                let _ = compile_stored(&schema);
                let Ok(validator) = compile(&schema) else { return Ok(()) };
                for input in &inputs {
                    for violation in violations(&validator, input) {
                        prop_assert!(
                            input.pointer(&violation.pointer).is_some(),
                            "{} in {}", violation.pointer, input
                        );
                    }
                }
                let example = example_for_schema(&schema);
                let _ = violations(&validator, &example);
            }

            #[test]
            fn query_input_keeps_every_name(
                schema in schema(),
                pairs in proptest::collection::vec((name(), any::<String>()), 0..6),
            ) {
                let input = input_from_query(&schema, pairs.clone());
                let object = input.as_object().expect("an object");
                for (name, _) in &pairs {
                    prop_assert!(object.contains_key(name));
                }
                prop_assert!(object.len() <= pairs.len());
            }
        }
    }
}
