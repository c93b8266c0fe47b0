//! Proptest strategies for the property tests of the parsers that take untrusted input and
//! need the whole service (payment headers, MCP messages, endpoint bodies, input schemas);
//! `docs/fuzzing.md` says which parsers are fuzzed instead.

use proptest::prelude::*;
use serde_json::{Map, Number, Value};

/// Any JSON value a few levels deep. Half the strings and keys are drawn from `words` (the keys
/// and values the parser under test looks at), so generated documents reach past its first
/// check; small integers are frequent for the same reason (`x402Version`, JSON-RPC ids).
pub fn json(words: &'static [&'static str]) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-2i64..5).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        text(words).prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            object(words, inner).prop_map(Value::Object),
        ]
    })
    .boxed()
}

/// A string: one of `words` half the time, else any text.
pub fn text(words: &'static [&'static str]) -> BoxedStrategy<String> {
    prop_oneof![
        prop::sample::select(words).prop_map(str::to_string),
        any::<String>(),
    ]
    .boxed()
}

/// An object whose keys are mostly `words`, with values from `values`.
pub fn object(
    words: &'static [&'static str],
    values: impl Strategy<Value = Value> + 'static,
) -> BoxedStrategy<Map<String, Value>> {
    prop::collection::btree_map(text(words), values, 0..6)
        .prop_map(|map| map.into_iter().collect())
        .boxed()
}
