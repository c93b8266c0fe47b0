//! The native built-in handlers: they run in the server, beside the sandboxed JS handlers.
//! [`run`] answers a call of any of them, so the call pipeline knows none by name.
//!
//! - `receipt_echo`: echoes a summary of the request; the free call still gets a receipt.
//! - `static_json`: answers the endpoint's configured JSON.
//! - `x402_readiness_check` and `conversion_quote`: their work belongs to their domains
//!   (`readiness`, `quotes`); this module only reads their input.

pub mod receipt_echo;
pub mod static_json;

use serde_json::{json, Value};

use crate::catalog::{Endpoint, HandlerType, Registry};
use crate::config::Config;
use crate::error::{ApiError, ApiResult};
use crate::net::OutboundClient;
use crate::quotes::conversion;

/// What the built-ins read of the service.
pub struct Parts<'a> {
    pub outbound: &'a OutboundClient,
    pub catalog: &'a Registry,
    pub config: &'a Config,
}

/// What the call pipeline knows about a call that a built-in may use.
pub struct Request<'a> {
    pub method: &'a str,
    pub input: &'a Value,
    pub request_id: &'a str,
}

/// What a built-in answered, and what it reports the call used (a native handler reports
/// units, priced by a metered endpoint's `metering.unitPriceUsd`).
pub struct Answer {
    pub body: Value,
    pub usage: Option<sandbox::Usage>,
}

/// The answer of `endpoint`'s built-in handler to `request`. A JS handler's endpoint is not
/// one (the pipeline runs those in the sandbox): an internal error.
pub async fn run(
    parts: &Parts<'_>,
    endpoint: &Endpoint,
    request: &Request<'_>,
) -> ApiResult<Answer> {
    let body = match endpoint.handler_type {
        HandlerType::StaticJson => static_json::respond(endpoint),
        HandlerType::ReceiptEcho => {
            let (echo, usage) = receipt_echo::answer(endpoint, request);
            return Ok(Answer {
                body: json!({"ok": true, "echo": echo}),
                usage,
            });
        }
        HandlerType::X402ReadinessCheck => {
            let url = request
                .input
                .get("url")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let report = crate::readiness::check(parts.outbound, url).await?;
            serde_json::to_value(report).map_err(ApiError::internal)?
        }
        HandlerType::ConversionQuote => {
            // The demo endpoint and `POST /ai/conversion/quote` share one planner and table, so
            // the same input is quoted the same cost on both.
            let field = |name: &str| {
                request
                    .input
                    .get(name)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            };
            let input = conversion::ConversionInput {
                service_id: field("serviceId"),
                start_network: field("startNetwork"),
                start_asset: field("startAsset"),
                amount: None,
            };
            json!(conversion::quote(
                parts.catalog,
                &parts.config.payment,
                &parts.config.conversion,
                None,
                &input,
            )?)
        }
        HandlerType::JsRequestResponse => {
            return Err(ApiError::internal(
                "JS handlers run in the sandbox, not here",
            ));
        }
    };
    Ok(Answer { body, usage: None })
}
