//! The call pipeline: one call of an endpoint, whichever transport brought it (`/tools/{slug}`,
//! `/ai/invoke`, MCP `tools/call`).
//!
//! prepare (status, input schema) -> authorize payment (the gate: credit hold or x402 claim) ->
//! run the handler (a built-in here, a JS handler in the sandbox) -> settle (only when the
//! handler succeeded; otherwise the payment is released unspent) -> receipt and records.
//!
//! [`prepare`] does the first two, [`complete`] the rest; [`call`] both. Transports shape the
//! [`Outcome`] (or the error) into their own answer.
//!
//! - `record`: the invocation record (endpoint logs, owner events) every call leaves.

mod activity;

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use serde_json::{json, Value};

use crate::app::App;
use crate::builders::Caller;
use crate::builtins;
use crate::catalog::{grant, CatalogError, CompiledEndpoint, Endpoint, HandlerType, Status};
use crate::endpoints;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::js_handlers::{HandlerOutput, HandlerRequest, JsOutcome};
use crate::payments::bazaar::Transport;
use crate::payments::Tender;
use crate::payments::{self, Authorized, GateError};
use crate::rate_limit;
use crate::receipts::log::Inclusion;
use crate::receipts::Receipt;
use crate::x402::header::SettlementResponse;

pub const RECEIPT_ID_HEADER: HeaderName = HeaderName::from_static("x-receipt-id");
/// Asks for a test call (value `1`), and marks the answer of one.
pub const TEST_HEADER: HeaderName = HeaderName::from_static("x-toolhost-test");
/// The revision a test call runs (a kept one, such as one waiting for a grant); a test call
/// by itself, owner's or admin's.
pub const REVISION_HEADER: HeaderName = HeaderName::from_static("x-toolhost-revision");

/// One call as the pipeline sees it, whatever route it came through.
pub struct Call {
    pub method: Method,
    pub input: Value,
    pub request_id: String,
    /// The caller's headers (an allow-list reaches a JS handler).
    pub headers: HeaderMap,
    /// How the call offers to pay, as its transport read it.
    pub tender: Tender,
    /// A test call of the endpoint's owner or the admin (see [`allow_test`]): unpaid, no
    /// receipt, marked in the logs and events, answered with `X-Toolhost-Test: 1`.
    pub test: bool,
    /// Which transport brought it (the 402's discovery info says how to call again).
    pub transport: Transport,
    /// The client's address, as the transport saw it: who a free call is from, for a rollout.
    pub client: Option<std::net::IpAddr>,
}

impl Call {
    pub fn new(method: Method, input: Value, headers: HeaderMap) -> Self {
        let request_id = headers
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        Self {
            method,
            input,
            request_id,
            tender: Tender::from_headers(&headers),
            transport: Transport::Http,
            headers,
            test: false,
            client: None,
        }
    }

    /// Who pays for the call, as a rollout tells payers apart: the payer's address of an x402
    /// payment, the developer credit, else the client's address.
    pub fn payer(&self) -> Vec<u8> {
        match &self.tender {
            Tender::X402(payment) => match payment.payload.claimed_payer() {
                "" => self.client_key(),
                payer => format!("evm:{}", payer.to_ascii_lowercase()).into_bytes(),
            },
            Tender::Credit(token) => [b"credit:".as_slice(), token.as_bytes()].concat(),
            Tender::Nothing | Tender::Malformed(_) => self.client_key(),
        }
    }

    fn client_key(&self) -> Vec<u8> {
        match self.client {
            Some(address) => format!("ip:{}", rate_limit::client_key(address)).into_bytes(),
            None => Vec::new(),
        }
    }

    /// The call as its handler sees it; `url` is the tool's public URL.
    pub fn handler_request<'a>(&'a self, url: &'a str) -> HandlerRequest<'a> {
        HandlerRequest {
            method: &self.method,
            input: &self.input,
            headers: &self.headers,
            request_id: &self.request_id,
            url,
        }
    }
}

/// What a call runs: the serving revision of `compiled`, or for a test call the one it named
/// (`X-Toolhost-Revision`, see `TestRequest::serving`), or in a gradual rollout the revision
/// its payer falls on ([`endpoints::rollout::route`]).
pub fn route(compiled: &Arc<CompiledEndpoint>, call: &Call) -> Arc<CompiledEndpoint> {
    if call.test || compiled.endpoint.rollout.is_none() {
        return compiled.clone();
    }
    endpoints::rollout::route(compiled, &call.payer())
}

/// A finished call: the handler's status and result, the receipt when one was issued, and the
/// headers (the handler's, and those reporting settlement).
pub struct Outcome {
    pub status: StatusCode,
    pub result: Value,
    /// The JSON text `result` was parsed from, as a JavaScript handler wrote it: an answer
    /// that adds nothing to the result is this text (see [`Outcome::answer_text`]).
    pub result_text: Option<String>,
    pub receipt: Option<Receipt>,
    /// The receipt's proof: where it is in the receipt log (a paid call's; absent if it could
    /// not be appended in time: the receipt is stored, and its inclusion can be asked for
    /// later), or in its signed batch (a free call's).
    pub receipt_log: Option<Inclusion>,
    /// The salt of the receipt's digests (hex), given to this caller alone: with it the caller
    /// can prove the input it sent and the result it got match the receipt.
    pub receipt_salt: Option<String>,
    /// The x402 settlement response of a paid call (also among `headers`).
    pub payment_response: Option<SettlementResponse>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl Outcome {
    /// The result as `/tools/{slug}` and MCP return it: an object result also carries its
    /// `receipt`.
    pub fn result_with_receipt(&self) -> Value {
        serde_json::to_value(self.answer_body()).unwrap_or(Value::Null)
    }

    /// The result with its receipt as [`AnswerBody`] places it, serialized straight from the
    /// outcome (as `/tools/{slug}` answers): neither the result nor the receipt is copied into a
    /// new `Value` first.
    pub fn answer_body(&self) -> AnswerBody<'_> {
        AnswerBody(self)
    }

    /// The answer's JSON text when it is the handler's own text unchanged (no receipt goes
    /// into it, [`AnswerBody`]), taken out of the outcome: written as it is, the answer costs
    /// no serialization of the result (bench/RESULTS.md, "A handler's JSON text answered as
    /// it is"). Its keys are in the handler's order; a result re-serialized has them sorted.
    pub fn answer_text(&mut self) -> Option<String> {
        if self.receipt.is_some() && self.result.is_object() {
            return None;
        }
        self.result_text.take()
    }

    /// A paid call's first answer, kept for its `payment-identifier` id.
    fn replayed(answer: &payments::payment_ids::Answer) -> Self {
        Outcome {
            status: StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK),
            result: answer.result.clone(),
            result_text: None,
            receipt: Some(answer.receipt.clone()),
            receipt_log: None,
            receipt_salt: answer.salt.clone(),
            payment_response: answer.payment_response.clone(),
            headers: answer
                .headers
                .iter()
                .filter_map(|(n, v)| {
                    Some((
                        HeaderName::from_bytes(n.as_bytes()).ok()?,
                        HeaderValue::from_str(v).ok()?,
                    ))
                })
                .collect(),
        }
    }

    /// The handler's headers, those reporting settlement, and the receipt id header.
    pub fn headers(&self) -> Vec<(HeaderName, HeaderValue)> {
        let mut headers = self.headers.clone();
        if let Some(id) = self
            .receipt
            .as_ref()
            .and_then(|r| HeaderValue::from_str(&r.receipt_id).ok())
        {
            headers.push((RECEIPT_ID_HEADER, id));
        }
        headers
    }
}

/// An outcome's answer as [`Outcome::answer_body`] serializes it: an object result with its
/// `receipt` member set to the receipt, `receiptLog` to where the receipt is in the log and
/// `receiptSalt` to the salt of its digests (each where the result had one, in its place, else
/// last), any other result as it is.
pub struct AnswerBody<'a>(&'a Outcome);

/// A member the server adds to an object result, serialized as its value.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Added<'a> {
    Receipt(&'a Receipt),
    Log(&'a Inclusion),
    Salt(&'a str),
}

impl serde::Serialize for AnswerBody<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Outcome {
            result,
            receipt,
            receipt_log,
            receipt_salt,
            ..
        } = self.0;
        let (Some(object), Some(receipt)) = (result.as_object(), receipt) else {
            return result.serialize(serializer);
        };
        let added: Vec<(&str, Added)> = [
            Some((RECEIPT_MEMBER, Added::Receipt(receipt))),
            receipt_log
                .as_ref()
                .map(|inclusion| (RECEIPT_LOG_MEMBER, Added::Log(inclusion))),
            receipt_salt
                .as_deref()
                .map(|salt| (RECEIPT_SALT_MEMBER, Added::Salt(salt))),
        ]
        .into_iter()
        .flatten()
        .collect();
        let new = added
            .iter()
            .filter(|(name, _)| !object.contains_key(*name))
            .count();
        let mut map = serializer.serialize_map(Some(object.len() + new))?;
        for (key, value) in object {
            match added.iter().find(|(name, _)| name == key) {
                Some((_, member)) => map.serialize_entry(key, member)?,
                None => map.serialize_entry(key, value)?,
            }
        }
        for (name, member) in &added {
            if !object.contains_key(*name) {
                map.serialize_entry(name, member)?;
            }
        }
        map.end()
    }
}

/// The member of an object result that carries the call's receipt.
const RECEIPT_MEMBER: &str = "receipt";
/// The member that carries the receipt's proof (its place in the log, or in its batch).
const RECEIPT_LOG_MEMBER: &str = "receiptLog";
/// The member that carries the salt of the receipt's digests (the caller's alone).
const RECEIPT_SALT_MEMBER: &str = "receiptSalt";

/// One whole call: [`prepare`], then [`complete`]. `/tools/{slug}` and MCP `tools/call` run
/// this, so both transports answer alike; `/ai/invoke` runs the two halves itself to answer a
/// 402 before it starts streaming.
pub async fn call(app: &App, compiled: &CompiledEndpoint, call: &Call) -> ApiResult<Outcome> {
    let authorized = prepare(app, compiled, call).await?;
    complete(app, compiled, call, authorized).await
}

/// Whether `asker` (the credential of a request with `X-Toolhost-Test: 1`, if any) may make
/// a test call of `endpoint`: its owner and the admin may; anyone else is refused with 403
/// `test_call_not_allowed` (an endpoint held by content-safety review stays not found to them).
pub fn allow_test(endpoint: &Endpoint, asker: Option<&Caller>) -> ApiResult<()> {
    if asker.is_some_and(|c| endpoints::can_manage(c, endpoint)) {
        return Ok(());
    }
    if !endpoint.passes_review() {
        return Err(CatalogError::NotFound(endpoint.slug.clone()).into());
    }
    Err(ApiError::new(
        StatusCode::FORBIDDEN,
        ErrorCode::TestCallNotAllowed,
        format!(
            "only the owner of {:?} (X-Builder-Key) or the admin (X-Admin-Token) may make test calls of it",
            endpoint.slug
        ),
    ))
}

/// Status, input validation, then payment. Endpoints held for or refused by content-safety
/// review are not found, as in the catalog; those awaiting a capability grant answer 503
/// `awaiting_grant`, test calls included (their handler would be refused what it asked for).
/// A test call may run a paused endpoint and pays nothing, but spends the client's
/// anonymous-write tokens like a free call.
pub async fn prepare(app: &App, compiled: &CompiledEndpoint, call: &Call) -> ApiResult<Authorized> {
    let endpoint = &compiled.endpoint;
    if !endpoint.passes_review() {
        return Err(CatalogError::NotFound(endpoint.slug.clone()).into());
    }
    if endpoint.awaits_grant() {
        let missing = grant::names(&endpoint.missing_capabilities());
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::AwaitingGrant,
            format!(
                "endpoint {:?} is waiting for the admin to grant the capabilities it requested ({}); it is not callable until then",
                endpoint.slug,
                missing.join(", ")
            ),
        )
        .with_details(json!({ "missing": missing })));
    }
    if endpoint.status == Status::Paused && !call.test {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::EndpointPaused,
            format!(
                "endpoint {:?} is paused (its owner or the admin can resume it)",
                endpoint.slug
            ),
        ));
    }
    let unpaid = matches!(call.tender, Tender::Nothing | Tender::Malformed(_));
    if !endpoint.is_paid() || call.test || unpaid {
        // A free call stores a log entry (and, for receipt-echo, a receipt) for nobody in
        // particular: limited per client. A paid one is limited by its payment. A test call
        // pays nothing either, and runs on the host's CPU: limited like a free one. So is a
        // paid endpoint's request that offers no payment: its validation and 402 cost the
        // server and nobody pays for them (issue 43); one that offers a payment or a credit
        // spends no token, so paying callers are never slowed by the limit.
        rate_limit::anonymous_write()?;
    }
    let violations = compiled.input_violations_async(&call.input).await;
    if !violations.is_empty() {
        return Err(ApiError::unprocessable(
            ErrorCode::InputInvalid,
            format!(
                "input does not match the inputSchema of {:?} (violations: {}{}, listed: {})",
                endpoint.slug,
                if violations.truncated {
                    "at least "
                } else {
                    ""
                },
                violations.count,
                violations.listed.len(),
            ),
        )
        .with_details(violations.details()));
    }
    if call.test {
        return Ok(Authorized::unpaid(
            app.charge_for(&compiled.endpoint, call.transport),
        ));
    }
    if endpoint.is_paid() && !unpaid {
        // A client whose payments keep being refused has them verified no more for a while
        // (a forged payment costs a signature recovery and pays for nothing); a payment that
        // is accepted spends nothing, so paying callers are never held up.
        rate_limit::payment_standing()?;
    }
    let gated = payments::gate(
        &app.payment_parts(),
        app.charge_for(&compiled.endpoint, call.transport),
        &call.tender,
        &call.input,
    )
    .await;
    if !unpaid && gated.as_ref().is_err_and(GateError::is_refusal) {
        rate_limit::payment_refused();
    }
    gated.map_err(ApiError::from)
}

/// Runs the handler; settles and issues the receipt only when it succeeded (a 2xx result).
/// On failure (an error, or a handler's own non-2xx answer) the payment is released unspent
/// before the answer leaves.
pub async fn complete(
    app: &App,
    compiled: &CompiledEndpoint,
    call: &Call,
    authorized: Authorized,
) -> ApiResult<Outcome> {
    if let Some(answer) = authorized.replayed() {
        // The payment's payment-identifier id answered before: that answer; nothing runs. Its
        // receipt's place in the log is looked up, in the log as it is now.
        let mut outcome = Outcome::replayed(answer);
        outcome.receipt_log = app
            .receipt_log
            .inclusion_of(&answer.receipt.receipt_id, None)
            .await
            .ok();
        return Ok(outcome);
    }
    let endpoint = &compiled.endpoint;
    let started = std::time::Instant::now();
    let outcome = run_handler(app, compiled, call, authorized.summary()).await;
    let status = outcome
        .result
        .as_ref()
        .map_or_else(|e| e.status, |o| o.status);
    let elapsed = started.elapsed();
    let ran = activity::Ran {
        request_id: &call.request_id,
        status,
        elapsed,
        mark: activity::rollout_mark(compiled, call.test, status, elapsed),
        secrets: &outcome.secrets,
        test: call.test,
        error: activity::failure(&outcome.result, outcome.trace.as_ref()),
    };
    let mut lines = outcome.lines;
    if let Ok(output) = &outcome.result {
        lines.extend(activity::metering_diagnostic(endpoint, output));
    }
    activity::invocation(app, endpoint, ran, lines).await;
    let output = match outcome.result {
        Ok(output) => output,
        Err(e) => {
            authorized.release().await;
            return Err(e);
        }
    };
    let wants_receipt = endpoint.is_paid() || endpoint.handler_type == HandlerType::ReceiptEcho;
    if !wants_receipt || !output.status.is_success() || call.test {
        authorized.release().await;
        let mut headers = output.headers;
        if call.test {
            headers.push((TEST_HEADER, HeaderValue::from_static("1")));
        }
        return Ok(Outcome {
            status: output.status,
            result: output.body,
            result_text: output.text,
            receipt: None,
            receipt_log: None,
            receipt_salt: None,
            payment_response: None,
            headers,
        });
    }
    let served = payments::Served {
        status: output.status.as_u16(),
        result: &output.body,
        headers: &output.headers,
        usage: output.usage.as_ref(),
    };
    let settled = authorized
        .settle(&app.payment_parts(), &call.input, served)
        .await?;
    activity::payment_settled(app, endpoint, &settled.receipt).await;
    let appended = match settled.receipt_log {
        Some(inclusion) => Ok(inclusion),
        None => app.receipt_log.include(&settled.receipt).await,
    };
    let receipt_log = match appended {
        Ok(inclusion) => Some(inclusion),
        Err(e) => {
            tracing::warn!(error = %e, receipt = %settled.receipt.receipt_id, "answering without the receipt's place in the log");
            None
        }
    };
    let mut headers = output.headers;
    headers.extend(settled.headers);
    Ok(Outcome {
        status: output.status,
        result: output.body,
        result_text: output.text,
        receipt: Some(settled.receipt),
        receipt_log,
        receipt_salt: Some(settled.salt),
        payment_response: settled.settlement,
        headers,
    })
}

/// Runs the endpoint's handler; JS handlers also report the lines they logged.
async fn run_handler(
    app: &App,
    compiled: &CompiledEndpoint,
    call: &Call,
    payment: Value,
) -> JsOutcome {
    if compiled.endpoint.handler_type == HandlerType::JsRequestResponse {
        let slug = &compiled.endpoint.slug;
        let url = app.urls.tool(slug);
        return app
            .runtime
            .run(compiled, call.handler_request(&url), payment, || async {
                crate::secrets::decrypted(app.store.as_ref(), &app.secrets, &compiled.endpoint.id)
                    .await
                    .map_err(ApiError::from)
            })
            .await;
    }
    JsOutcome {
        result: run_builtin(app, compiled, call).await,
        lines: Vec::new(),
        secrets: Vec::new(),
        trace: None,
    }
}

async fn run_builtin(
    app: &App,
    compiled: &CompiledEndpoint,
    call: &Call,
) -> ApiResult<HandlerOutput> {
    let parts = builtins::Parts {
        outbound: &app.outbound,
        catalog: &app.catalog,
        config: &app.config,
    };
    let request = builtins::Request {
        method: call.method.as_str(),
        input: &call.input,
        request_id: &call.request_id,
    };
    let answer = builtins::run(&parts, &compiled.endpoint, &request).await?;
    Ok(HandlerOutput {
        usage: answer.usage,
        ..HandlerOutput::ok(answer.body)
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn outcome(result: Value, receipt: bool) -> Outcome {
        Outcome {
            status: StatusCode::OK,
            result,
            result_text: None,
            receipt: receipt.then(|| Receipt {
                endpoint_slug: Some("a\"b".into()),
                network: Some("eip155:84532".into()),
                x402_version: Some(2),
                ..Receipt::example()
            }),
            receipt_log: receipt.then(|| Inclusion {
                leaf_index: 2,
                tree_size: 3,
                inclusion_proof: vec!["AA==".into()],
                checkpoint: "log\n3\nAA==\n\n\u{2014} log AA==\n".into(),
            }),
            receipt_salt: receipt.then(|| "00112233445566778899aabbccddeeff".into()),
            payment_response: None,
            headers: Vec::new(),
        }
    }

    /// The receipt placed as answers placed it before [`AnswerBody`]: the result cloned, the
    /// receipt, its place in the log and its salt inserted as `Value`s. What both routes must still make
    /// byte for byte.
    fn value_route(outcome: &Outcome) -> Value {
        let mut result = outcome.result.clone();
        if let (Some(object), Some(receipt)) = (result.as_object_mut(), &outcome.receipt) {
            object.insert("receipt".into(), serde_json::to_value(receipt).unwrap());
            if let Some(inclusion) = &outcome.receipt_log {
                object.insert(
                    "receiptLog".into(),
                    serde_json::to_value(inclusion).unwrap(),
                );
            }
            if let Some(salt) = &outcome.receipt_salt {
                object.insert("receiptSalt".into(), json!(salt));
            }
        }
        result
    }

    fn same_bytes(outcome: &Outcome) -> Result<(), TestCaseError> {
        let reference = serde_json::to_vec(&value_route(outcome)).unwrap();
        for made in [
            serde_json::to_vec(&outcome.answer_body()).unwrap(),
            serde_json::to_vec(&outcome.result_with_receipt()).unwrap(),
        ] {
            prop_assert_eq!(
                String::from_utf8(made).unwrap(),
                String::from_utf8(reference.clone()).unwrap()
            );
        }
        Ok(())
    }

    /// The handler's text is the answer where nothing goes into it: no receipt, or a result
    /// that is not an object (the receipt then travels in headers only).
    #[test]
    fn the_handlers_text_is_the_answer_only_where_no_receipt_goes_into_it() {
        let text = r#"{"z":1,"a":2}"#;
        let with_text = |result: Value, receipt: bool| Outcome {
            result_text: Some(text.to_owned()),
            ..outcome(result, receipt)
        };
        assert_eq!(
            with_text(json!({"z": 1, "a": 2}), false)
                .answer_text()
                .as_deref(),
            Some(text)
        );
        assert_eq!(
            with_text(json!([1]), true).answer_text().as_deref(),
            Some(text)
        );
        assert_eq!(with_text(json!({"z": 1, "a": 2}), true).answer_text(), None);
        assert_eq!(outcome(json!({}), false).answer_text(), None);
    }

    #[test]
    fn the_answer_body_puts_the_receipt_where_the_value_route_does() {
        for result in [
            json!({"words": 2, "upper": "A B"}),
            json!({"a": 1, "receipt": "the handler's own", "z": 2}),
            json!({"receiptLog": 1, "a": 1, "receipt": "the handler's own"}),
            json!({"receiptSalt": "mine", "z": 1}),
            json!({}),
            json!([1, 2]),
            json!("text"),
            Value::Null,
        ] {
            same_bytes(&outcome(result.clone(), true)).unwrap();
            same_bytes(&outcome(result, false)).unwrap();
        }
        let body = serde_json::to_value(outcome(json!({"receipt": 0, "z": 1}), true).answer_body())
            .unwrap();
        assert_eq!(body["receipt"]["receiptId"], "rcpt_1");
        assert_eq!(body["receiptLog"]["leafIndex"], 2);
    }

    proptest! {
        #[test]
        fn any_result_answers_the_same_bytes_as_the_value_route(
            result in crate::arbitrary::json(&["receipt", "receiptLog", "receiptSalt", "words"]),
            receipt in any::<bool>(),
        ) {
            same_bytes(&outcome(result, receipt))?;
        }
    }
}
