//! The one error shape of every route: `{"ok":false,"error":{"code","message","details"?}}`.
//!
//! It sits at the bottom of the crate (like crates.io's `util/errors.rs`) so every layer can
//! answer with it. Domain modules keep their own error enums and convert into [`ApiError`] with
//! `From`; [`ErrorCode`] is the closed list of codes a client can see. An error is logged once,
//! when it is answered ([`ApiError::answer`], used by the HTTP response and by MCP), and an
//! internal cause is replaced by a generic message so no host detail reaches the client.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;

/// Declares [`ErrorCode`]: each variant with the snake_case string clients see.
macro_rules! error_codes {
    ($($(#[$comment:meta])* $variant:ident = $code:literal,)*) => {
        /// Every code an error answer can carry, in the order of the error table of `docs/errors.md`
        /// (a test checks the table against [`ErrorCode::ALL`], both ways). The type is the list:
        /// a code that is not here cannot be answered.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($variant,)*
        }

        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The stable snake_case code of the JSON error body.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $code,)*
                }
            }
        }
    };
}

error_codes! {
    // 400
    MalformedJson = "malformed_json",
    UnreadableBody = "unreadable_body",
    InvalidQuery = "invalid_query",
    InvalidCursor = "invalid_cursor",
    InvalidSince = "invalid_since",
    InvalidPayload = "invalid_payload",
    InvalidTestHeader = "invalid_test_header",
    InvalidRevisionHeader = "invalid_revision_header",
    // 401
    Unauthorized = "unauthorized",
    InvalidAdminToken = "invalid_admin_token",
    InvalidBuilderKey = "invalid_builder_key",
    BuilderKeyRevoked = "builder_key_revoked",
    // 402: payment required, and the x402 refusal reasons
    PaymentRequired = "payment_required",
    InvalidScheme = "invalid_scheme",
    InvalidNetwork = "invalid_network",
    InvalidX402Version = "invalid_x402_version",
    InvalidExactEvmPayloadAssetMismatch = "invalid_exact_evm_payload_asset_mismatch",
    InvalidExactEvmPayloadSignature = "invalid_exact_evm_payload_signature",
    InvalidExactEvmPayloadRecipientMismatch = "invalid_exact_evm_payload_recipient_mismatch",
    InvalidExactEvmPayloadAuthorizationValueMismatch = "invalid_exact_evm_payload_authorization_value_mismatch",
    InvalidExactEvmPayloadAuthorizationValidBefore = "invalid_exact_evm_payload_authorization_valid_before",
    InvalidExactEvmPayloadAuthorizationValidAfter = "invalid_exact_evm_payload_authorization_valid_after",
    InvalidExactEvmNonceAlreadyUsed = "invalid_exact_evm_nonce_already_used",
    InvalidExactEvmInsufficientBalance = "invalid_exact_evm_insufficient_balance",
    InvalidExactEvmTransactionSimulationFailed = "invalid_exact_evm_transaction_simulation_failed",
    InvalidExactEvmTransactionFailed = "invalid_exact_evm_transaction_failed",
    InvalidExactEvmTransferEventMismatch = "invalid_exact_evm_transfer_event_mismatch",
    InvalidPermit2Signature = "invalid_permit2_signature",
    InvalidPermit2Spender = "invalid_permit2_spender",
    InvalidPermit2RecipientMismatch = "invalid_permit2_recipient_mismatch",
    Permit2AmountMismatch = "permit2_amount_mismatch",
    Permit2TokenMismatch = "permit2_token_mismatch",
    Permit2DeadlineExpired = "permit2_deadline_expired",
    Permit2NotYetValid = "permit2_not_yet_valid",
    UptoFacilitatorMismatch = "upto_facilitator_mismatch",
    InvalidUptoEvmPayloadSettlementExceedsAmount = "invalid_upto_evm_payload_settlement_exceeds_amount",
    Permit2AllowanceRequired = "permit2_allowance_required",
    InsufficientDeveloperCredit = "insufficient_developer_credit",
    InvalidDeveloperCredit = "invalid_developer_credit",
    PaymentRejected = "payment_rejected",
    SettlementFailed = "settlement_failed",
    // 403
    NotOwner = "not_owner",
    TestCallNotAllowed = "test_call_not_allowed",
    AdminOnlyField = "admin_only_field",
    SsrfRefused = "ssrf_refused",
    HostNotAllowed = "host_not_allowed",
    // 404
    RouteNotFound = "route_not_found",
    EndpointNotFound = "endpoint_not_found",
    ReceiptNotFound = "receipt_not_found",
    QuoteNotFound = "quote_not_found",
    ServiceNotFound = "service_not_found",
    PayoutNotFound = "payout_not_found",
    RevisionNotFound = "revision_not_found",
    FileNotFound = "file_not_found",
    TileNotFound = "tile_not_found",
    NotInLog = "not_in_log",
    // 405, 413, 415
    MethodNotAllowed = "method_not_allowed",
    BodyTooLarge = "body_too_large",
    UnsupportedMediaType = "unsupported_media_type",
    // 4xx: the status a JS handler threw
    HandlerRefused = "handler_refused",
    // 409
    SlugTaken = "slug_taken",
    SlugReserved = "slug_reserved",
    EditConflict = "edit_conflict",
    UnderReview = "under_review",
    ContentRejected = "content_rejected",
    NotUnderReview = "not_under_review",
    NotAwaitingGrant = "not_awaiting_grant",
    RevisionConflict = "revision_conflict",
    RolloutRefused = "rollout_refused",
    NoRollout = "no_rollout",
    StreamingRequired = "streaming_required",
    QuoteExpired = "quote_expired",
    QuoteMismatch = "quote_mismatch",
    AlreadyPaid = "already_paid",
    BelowMinimum = "below_minimum",
    NothingCollectable = "nothing_collectable",
    PayoutConflict = "payout_conflict",
    PayoutSettingsMissing = "payout_settings_missing",
    PaymentIdentifierConflict = "payment_identifier_conflict",
    PaymentIdentifierInProgress = "payment_identifier_in_progress",
    BackupUnsupported = "backup_unsupported",
    NotRefundable = "not_refundable",
    AlreadyRefunded = "already_refunded",
    RefundUnavailable = "refund_unavailable",
    RefundExceedsBalance = "refund_exceeds_balance",
    RefundInProgress = "refund_in_progress",
    // 422
    InputInvalid = "input_invalid",
    InvalidUrl = "invalid_url",
    InvalidSchema = "invalid_schema",
    InvalidBody = "invalid_body",
    InvalidField = "invalid_field",
    AttestationRequired = "attestation_required",
    ContentBlocked = "content_blocked",
    HandlerNotAllowed = "handler_not_allowed",
    InvalidBuilder = "invalid_builder",
    InvalidSecret = "invalid_secret",
    InvalidAmount = "invalid_amount",
    InvalidExpiry = "invalid_expiry",
    InvalidMethod = "invalid_method",
    InvalidAsset = "invalid_asset",
    InvalidPayTo = "invalid_pay_to",
    InvalidTransaction = "invalid_transaction",
    NotPaymentRequired = "not_payment_required",
    UnknownNetwork = "unknown_network",
    UnknownAsset = "unknown_asset",
    AmountTooLarge = "amount_too_large",
    // 429 (and 503)
    Overloaded = "overloaded",
    RateLimited = "rate_limited",
    // 500
    HandlerError = "handler_error",
    InvalidHandlerResponse = "invalid_handler_response",
    ResourceLimit = "resource_limit",
    CapabilityDenied = "capability_denied",
    CompileError = "compile_error",
    InternalError = "internal_error",
    // 502
    OutputInvalid = "output_invalid",
    FacilitatorUnavailable = "facilitator_unavailable",
    InvalidX402Answer = "invalid_x402_answer",
    UpstreamError = "upstream_error",
    NotJson = "not_json",
    ResponseTooLarge = "response_too_large",
    TooManyRedirects = "too_many_redirects",
    // 503
    EndpointPaused = "endpoint_paused",
    AwaitingGrant = "awaiting_grant",
    StoreUnavailable = "store_unavailable",
    // 504
    Timeout = "timeout",
    RequestTimeout = "request_timeout",
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    /// Stable snake_case code clients can branch on.
    pub code: ErrorCode,
    pub message: String,
    /// Boxed, like the headers, to keep `Result<_, ApiError>` small on the happy path.
    pub details: Option<Box<Value>>,
    /// Extra headers such as `Retry-After` or x402's `PAYMENT-REQUIRED`.
    pub headers: Option<Box<Vec<(header::HeaderName, HeaderValue)>>>,
    /// A body whose shape a protocol fixes, sent instead of [`ErrorBody`]. Only x402's 402 uses
    /// it (see `x402::requirements`); it still carries `ok:false`, `code` and `message`.
    pub body_override: Option<Box<Value>>,
    /// What went wrong inside, for the log only (never sent): set by [`ApiError::internal`].
    cause: Option<Box<str>>,
}

/// The JSON body of an error, also used as the OpenAPI schema of every error response.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Always false.
    pub ok: bool,
    pub error: ErrorDetail,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorDetail {
    /// Stable snake_case error code.
    pub code: String,
    /// Human-readable explanation.
    pub message: String,
    /// Structured context, e.g. schema violations with JSON pointers.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub details: Option<Value>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            details: None,
            headers: None,
            body_override: None,
            cause: None,
        }
    }

    pub fn with_body(mut self, body: Value) -> Self {
        self.body_override = Some(Box::new(body));
        self
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    /// For 429 and 503: when to try again.
    pub fn with_retry_after(self, seconds: u64) -> Self {
        self.with_header(header::RETRY_AFTER, HeaderValue::from(seconds))
    }

    pub fn with_header(mut self, name: header::HeaderName, value: HeaderValue) -> Self {
        self.headers
            .get_or_insert_with(Box::default)
            .push((name, value));
        self
    }

    pub fn bad_request(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, ErrorCode::Unauthorized, message)
    }

    pub fn not_found(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    pub fn unprocessable(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, code, message)
    }

    /// A failure the client cannot fix. The cause is logged when the error is answered; the
    /// client sees a generic message.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        let mut error = Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::InternalError,
            "internal server error",
        );
        error.cause = Some(cause.to_string().into());
        error
    }

    /// The body to answer with, logging a server-side failure once, here, whichever transport
    /// answers (HTTP response, MCP result, a stream's last event).
    pub fn answer(&self) -> ErrorBody {
        self.log();
        self.body()
    }

    fn log(&self) {
        if let Some(cause) = &self.cause {
            tracing::error!(code = %self.code, cause = %cause, "internal error");
        } else if self.status.is_server_error() {
            tracing::warn!(status = self.status.as_u16(), code = %self.code, message = %self.message, "request failed");
        }
    }

    /// The JSON shape alone, not logged: for an answer made ahead of time (the server's
    /// ready-made 503), whose every use is logged where it happens. Bounded whatever the error
    /// holds (see [`MAX_ERROR_BYTES`]).
    pub fn body(&self) -> ErrorBody {
        let details = self.details.as_deref().map(|details| {
            if fits(details, MAX_DETAILS_BYTES) {
                details.clone()
            } else {
                serde_json::json!({ "truncated": true })
            }
        });
        ErrorBody {
            ok: false,
            error: ErrorDetail {
                code: self.code.as_str().to_string(),
                message: clip(&self.message, MAX_MESSAGE_BYTES),
                details,
            },
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = match self.body_override {
            Some(ref body) => {
                self.log();
                (self.status, axum::Json(body.as_ref())).into_response()
            }
            None => (self.status, axum::Json(self.answer())).into_response(),
        };
        let headers = response.headers_mut();
        for (name, value) in self.headers.into_iter().flat_map(|h| *h) {
            headers.insert(name, value);
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

// Bounds of an error answer (issue 43): an error is what an anonymous caller gets most cheaply,
// so nothing in it may grow with the input. Builders of details bound them first (validation
// lists its first violations and a count, messages that quote input are clipped); this is the
// wall behind them: a message is clipped and details too large are replaced by
// `{"truncated":true}`, so no error answer exceeds `MAX_ERROR_BYTES`.

/// The most bytes an error answer's JSON takes.
pub const MAX_ERROR_BYTES: usize = 64 * 1024;
/// The most bytes of an error's message (longer ones are clipped, ending in `…`); above the
/// 2,048 characters a handler's thrown message is already cut to.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024;
/// The most bytes of an error's serialized details; the rest of the answer is the message,
/// code and framing.
const MAX_DETAILS_BYTES: usize = MAX_ERROR_BYTES - 2 * MAX_MESSAGE_BYTES;

/// `text` cut to at most `max` bytes (on a character boundary, ending in `…` when cut): for
/// messages and fields that quote a caller's input.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Whether `value` serializes to at most `max` bytes; stops writing once it does not.
fn fits(value: &Value, max: usize) -> bool {
    struct Budget(usize);
    impl std::io::Write for Budget {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self
                .0
                .checked_sub(buf.len())
                .ok_or(std::io::ErrorKind::WriteZero)?;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(Budget(max), value).is_ok()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    use super::ErrorCode;

    /// The workspace root: the service's sources and docs are where the codes are answered
    /// and listed.
    fn workspace() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    fn rust_sources(dir: &Path, out: &mut String) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                rust_sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let mut text = std::fs::read_to_string(&path).unwrap();
                if let Some(list) = text.find("error_codes! {") {
                    // The list itself is not a use.
                    let end = list + text[list..].find("\n}\n").unwrap();
                    text.replace_range(list..end, "");
                }
                // Unit tests (a file's `mod tests` at its end) may name any code; only what the
                // server itself can answer counts.
                if let Some(tests) = text.find("#[cfg(test)]\nmod tests") {
                    text.truncate(tests);
                }
                out.push_str(&text);
            }
        }
    }

    #[test]
    fn error_answers_are_bounded_whatever_they_hold() {
        use super::{clip, ApiError, MAX_ERROR_BYTES, MAX_MESSAGE_BYTES};
        let huge = "é".repeat(1_000_000);
        let error = ApiError::unprocessable(ErrorCode::InputInvalid, huge.clone())
            .with_details(serde_json::json!({ "echo": huge, "list": vec![0; 100_000] }));
        let body = serde_json::to_vec(&error.body()).unwrap();
        assert!(body.len() <= MAX_ERROR_BYTES, "{}", body.len());
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            body["error"]["details"],
            serde_json::json!({"truncated": true})
        );
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.len() <= MAX_MESSAGE_BYTES && message.ends_with('…'));
        // Small ones are untouched.
        let small = ApiError::unprocessable(ErrorCode::InputInvalid, "short")
            .with_details(serde_json::json!({ "a": 1 }));
        let body = serde_json::to_value(small.body()).unwrap();
        assert_eq!(body["error"]["details"]["a"], 1);
        assert_eq!(body["error"]["message"], "short");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcdef", 4), "a…");
    }

    #[test]
    fn codes_are_unique_snake_case_and_each_is_answered_somewhere() {
        let strings: BTreeSet<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            strings.len(),
            ErrorCode::ALL.len(),
            "two variants share a code"
        );
        let snake = regex::Regex::new(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$").unwrap();
        assert!(strings.iter().all(|c| snake.is_match(c)), "{strings:?}");
        // The compiler keeps unknown codes out; this keeps the list free of codes nothing
        // answers any more (a pub enum's unused variants draw no warning).
        let mut sources = String::new();
        for dir in ["src", "crates"] {
            rust_sources(&workspace().join(dir), &mut sources);
        }
        let unused: Vec<_> = ErrorCode::ALL
            .iter()
            .filter(|code| !sources.contains(&format!("ErrorCode::{code:?}")))
            .collect();
        assert!(unused.is_empty(), "codes nothing answers: {unused:?}");
    }

    #[test]
    fn the_error_table_in_the_docs_lists_exactly_the_codes() {
        let readme = std::fs::read_to_string(workspace().join("docs/errors.md")).unwrap();
        let start = readme
            .find("| status | codes |")
            .expect("the error table of docs/errors.md");
        let table: String = readme[start..]
            .lines()
            .take_while(|line| line.starts_with('|'))
            .collect::<Vec<_>>()
            .join("\n");
        let code = regex::Regex::new(r"`([a-z][a-z0-9_]*)`").unwrap();
        let documented: BTreeSet<&str> = code
            .captures_iter(&table)
            .map(|c| c.get(1).unwrap().as_str())
            .collect();
        let listed: BTreeSet<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        let missing: Vec<_> = listed.difference(&documented).collect();
        let extra: Vec<_> = documented.difference(&listed).collect();
        assert!(
            missing.is_empty(),
            "codes missing from the table of docs/errors.md: {missing:?}"
        );
        assert!(
            extra.is_empty(),
            "codes in docs/errors.md the server never returns: {extra:?}"
        );
    }
}
