//! Integration tests of the HTTP API against a real server on an ephemeral port.

#[path = "../util/mod.rs"]
mod util;

mod abuse;
mod authz;
mod builder_cli;
mod builders;
mod catalog;
mod chain;
mod cli;
mod cluster;
mod crash;
mod drafts;
mod errors;
mod fetch;
mod grants;
mod health_and_metrics;
mod hostile_agents;
mod hostile_builders;
mod js_client;
mod kv_atomic;
mod lifecycle;
mod mcp;
mod payment_ids;
mod payments;
mod platform;
mod publish;
mod py_client;
mod quotes;
mod readiness;
mod receipt_log;
mod revenue;
mod revisions;
mod rollouts;
mod runtime;
mod safety;
mod sandbox;
mod secrets;
mod tenant_ops;
mod test_calls;
mod tools;
mod typescript;
mod upgrade;
mod web;
mod webcrypto;
mod workers;
