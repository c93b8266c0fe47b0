//! What every invocation leaves behind: an entry in the endpoint's logs (status, duration,
//! request id, the handler's redacted log lines, and for a failure its error code, message and
//! position in the handler's source) and, for builder-owned endpoints, an event carrying the
//! same error. Both are redacted of the endpoint's secrets; the caller's answer never gains
//! the position or the stack.
//!
//! Both go to the [`Recorder`](crate::activity::Recorder), which stores them off the request
//! path; recording never fails the call, whose answer is already decided.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::json;

use crate::app::App;
use crate::catalog::{CompiledEndpoint, Endpoint};
use crate::error::ApiError;
use crate::events::{Event, EventKind};
use crate::js_handlers::HandlerOutput;
use crate::logs::{self, InvocationError, InvocationLog, LogLevel, LogLine};
use crate::payments::metering::Bill;
use crate::receipts::Receipt;
use crate::tallies::Mark;

/// The facts of one finished call.
pub(super) struct Ran<'a> {
    pub(super) request_id: &'a str,
    pub(super) status: StatusCode,
    pub(super) elapsed: Duration,
    /// Secret values to redact from the stored lines and error.
    pub(super) secrets: &'a [String],
    /// A test call: marked so in the log entry and the event.
    pub(super) test: bool,
    /// Why the call failed, unredacted (see [`failure`]).
    pub(super) error: Option<InvocationError>,
    /// The call as its endpoint's rollout counts it ([`rollout_mark`]).
    pub(super) mark: Option<Mark>,
}

/// The error of a failed call for its owner: the code and message the caller got, and where in
/// the handler's source it arose.
pub(super) fn failure(
    result: &Result<HandlerOutput, ApiError>,
    trace: Option<&sandbox::SourceTrace>,
) -> Option<InvocationError> {
    let error = result.as_ref().err()?;
    Some(InvocationError {
        code: error.code.as_str().to_owned(),
        message: error.message.clone(),
        line: trace.and_then(|t| t.line),
        column: trace.and_then(|t| t.column),
        stack: trace.map(|t| t.stack.clone()).unwrap_or_default(),
    })
}

pub(super) async fn invocation(app: &App, endpoint: &Endpoint, ran: Ran<'_>, lines: Vec<LogLine>) {
    let Ran {
        request_id,
        status,
        elapsed,
        secrets,
        test,
        error,
        mark,
    } = ran;
    let duration_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    // Debug, not info: every call is already in the endpoint's logs and in `/metrics`, and a
    // line per call on stderr cost about a tenth of a small handler's throughput.
    tracing::debug!(endpoint = %endpoint.slug, status = status.as_u16(), duration_ms, "invocation");
    let log = InvocationLog {
        request_id: request_id.to_string(),
        status: status.as_u16(),
        duration_ms,
        lines,
        test,
        error,
    };
    let entry = logs::entry(log, secrets);
    let error = entry.error.clone();
    app.recorder
        .log(&endpoint.slug, &endpoint.id, entry, mark)
        .await;
    if let Some(owner) = endpoint.owner_builder() {
        let kind = if status.is_success() {
            EventKind::InvocationSucceeded
        } else {
            EventKind::InvocationFailed
        };
        let mut data = json!({"status": status.as_u16(), "durationMs": duration_ms, "requestId": request_id, "test": test});
        if let Some(error) = error {
            data["error"] = json!(error);
        }
        app.recorder
            .event(owner, Event::new(kind, Some(&endpoint.slug), data))
            .await;
    }
}

/// A live call of an endpoint in a gradual rollout, as counted for the revision that ran it;
/// `None` outside a rollout and for a test call.
pub(super) fn rollout_mark(
    compiled: &CompiledEndpoint,
    test: bool,
    status: StatusCode,
    elapsed: Duration,
) -> Option<Mark> {
    let rollout = compiled.rollout_id.as_ref().filter(|_| !test)?;
    Some(Mark {
        rollout: rollout.clone(),
        revision: compiled.endpoint.serving_revision,
        status: status.as_u16(),
        micros: u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
    })
}

/// What the owner is told in the call's log about what its handler reported it cost: a
/// report on a fixed-price or free endpoint is ignored, one above a metered endpoint's
/// maximum is charged the maximum.
pub(super) fn metering_diagnostic(endpoint: &Endpoint, output: &HandlerOutput) -> Option<LogLine> {
    let usage = output.usage.as_ref()?;
    if !output.status.is_success() {
        return None;
    }
    let message = match &endpoint.metering {
        None => format!(
            "ctx.charge was ignored: {:?} is {} (set pricingMode metered_success_receipt to charge what a call uses)",
            endpoint.slug,
            endpoint.pricing_mode().as_str()
        ),
        Some(metering) => {
            let bill = Bill::of(metering, endpoint.price_usd, Some(usage));
            if !bill.capped {
                return None;
            }
            format!(
                "the call reported {} USD, more than the most it can cost ({} USD, the endpoint's priceUsd and the payer's signed maximum): charged {} USD",
                bill.reported.unwrap_or_default(),
                endpoint.price_usd,
                bill.charged
            )
        }
    };
    Some(LogLine {
        level: LogLevel::Warn,
        message,
        at: time::OffsetDateTime::now_utc(),
    })
}

/// A paid call settled: the owner sees the sale in its event feed.
pub(super) async fn payment_settled(app: &App, endpoint: &Endpoint, receipt: &Receipt) {
    let Some(owner) = endpoint.owner_builder().filter(|_| receipt.charged) else {
        return;
    };
    let data = json!({
        "receiptId": receipt.receipt_id,
        "amount": receipt.amount,
        "priceUsd": receipt.price_usd,
        "paymentMethod": receipt.payment_method,
        "metering": receipt.metering,
    });
    app.recorder
        .event(
            owner,
            Event::new(EventKind::PaymentSettled, Some(&endpoint.slug), data),
        )
        .await;
}
