//! What a call offers to pay with, read from its transport: an x402 payment or a developer
//! credit (the gate, `gate.rs`, decides what it is worth).

use std::sync::Arc;

use axum::http::HeaderMap;

use crate::x402::header::{self, PaymentPayload};

/// How a call offers to pay, as its transport read it (HTTP headers, or MCP `_meta`); the gate
/// decides what it is worth.
#[derive(Debug)]
pub enum Tender {
    /// Nothing offered.
    Nothing,
    /// A developer credit token (`X-Developer-Credit`).
    Credit(String),
    /// An x402 payment payload, shared with the settlement that may follow (not copied).
    X402(Arc<PaymentPayload>),
    /// Something was offered that is not a payment (answered 400 when payment is due).
    Malformed(String),
}

impl Tender {
    /// From HTTP headers: a developer credit wins over an x402 payment header.
    pub fn from_headers(headers: &HeaderMap) -> Tender {
        let credit = headers
            .get(super::credits::CREDIT_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|t| !t.is_empty());
        if let Some(token) = credit {
            return Tender::Credit(token.to_string());
        }
        match header::from_headers(headers) {
            Ok(None) => Tender::Nothing,
            Ok(Some(payment)) => Tender::X402(Arc::new(payment)),
            Err(e) => Tender::Malformed(e.to_string()),
        }
    }
}
