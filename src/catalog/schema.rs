//! JSON Schema checks for endpoint inputs and outputs.

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

/// Compiles a schema, refusing documents that are not themselves valid JSON Schema.
pub(super) fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    if let Err(e) = jsonschema::meta::validate(schema) {
        return Err(format!(
            "not a valid JSON Schema: {e} (at {})",
            e.instance_path
        ));
    }
    jsonschema::validator_for(schema).map_err(|e| format!("not a valid JSON Schema: {e}"))
}

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
