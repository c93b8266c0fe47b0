//! JSON Schema checks for endpoint inputs and outputs.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Map, Value};

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
    jsonschema::options()
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

/// Compiles a schema stored before patterns had to be linear-time: with the backtracking
/// engine, capped so that one match gives up (and fails validation) after a bounded number of
/// steps. New and changed schemas go through [`compile`].
pub(super) fn compile_stored(schema: &Value) -> Result<jsonschema::Validator, SchemaError> {
    compile(schema).or_else(|refused| {
        jsonschema::options()
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

/// Every violation of `instance`, in document order.
pub(super) fn violations(validator: &jsonschema::Validator, instance: &Value) -> Vec<Violation> {
    validator
        .iter_errors(instance)
        .map(|e| Violation {
            pointer: e.instance_path.to_string(),
            message: e.to_string(),
            schema_path: e.schema_path.to_string(),
        })
        .collect()
}

/// [`violations`] for request handlers: a large document is validated on the blocking pool, so
/// validating it (linear in its size with linear-time patterns, but up to the body or result
/// limit) never holds an async worker that `/healthz` and other requests need. Small ones,
/// nearly every call, stay inline: a hop to the blocking pool costs more than they do.
pub(crate) async fn violations_off_worker(
    validator: &Arc<jsonschema::Validator>,
    instance: &Value,
) -> Vec<Violation> {
    if !is_large(instance) {
        return violations(validator, instance);
    }
    let (validator, instance) = (validator.clone(), instance.clone());
    tokio::task::spawn_blocking(move || violations(&validator, &instance))
        .await
        .unwrap_or_else(|e| {
            vec![Violation {
                pointer: String::new(),
                message: format!("validation did not complete: {e}"),
                schema_path: String::new(),
            }]
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
    fn violations_carry_pointers() {
        let schema = json!({"type":"object","required":["url"],"properties":{"url":{"type":"string"},"n":{"type":"integer"}}});
        let v = compile(&schema).unwrap();
        let found = violations(&v, &json!({"n": "x"}));
        let pointers: Vec<&str> = found.iter().map(|v| v.pointer.as_str()).collect();
        assert!(pointers.contains(&""), "{found:?}");
        assert!(pointers.contains(&"/n"), "{found:?}");
        assert!(violations(&v, &json!({"url": "https://a"})).is_empty());
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
}
