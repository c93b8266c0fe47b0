//! `static_json`: returns the endpoint's fixed response.

use serde_json::Value;

use crate::catalog::Endpoint;

pub fn respond(endpoint: &Endpoint) -> Value {
    endpoint.response.clone().unwrap_or(Value::Null)
}
