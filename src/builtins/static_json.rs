//! `static_json`: returns the endpoint's fixed response.

use serde_json::Value;

use crate::catalog::Endpoint;

pub fn respond(endpoint: &Endpoint) -> Value {
    endpoint
        .response
        .as_ref()
        .map_or(Value::Null, |response| response.value())
}
