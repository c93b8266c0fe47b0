//! Integration tests of the HTTP API against a real server on an ephemeral port.

#[path = "../util/mod.rs"]
mod util;

mod catalog;
mod cli;
mod errors;
mod ops;
mod readiness;
mod sandbox;
mod tools;
mod web;
