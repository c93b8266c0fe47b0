//! The one error shape of every route: `{"ok":false,"error":{"code","message","details"?}}`.
//!
//! Domain modules keep their own error enums and convert into [`ApiError`] with `From`; this is
//! the only place an error becomes an HTTP response. Internal causes are logged here, once, and
//! replaced by a generic message so no host detail reaches the client.

use std::borrow::Cow;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;

use crate::store::StoreError;

/// Every code an error answer can carry, in the order of the README's error table. Codes are
/// written as literals at their call sites (and in the `code()` maps of `net`, `payments` and the
/// sandbox); the test below scans the sources so a new code cannot ship without being listed
/// here and in the README.
pub const ALL_CODES: &[&str] = &[
    // 400
    "malformed_json",
    "unreadable_body",
    "invalid_query",
    "invalid_cursor",
    "invalid_since",
    "invalid_payload",
    // 401
    "unauthorized",
    "invalid_admin_token",
    "invalid_builder_key",
    "builder_key_revoked",
    // 402: payment required, and the x402 refusal reasons
    "payment_required",
    "invalid_scheme",
    "invalid_network",
    "invalid_x402_version",
    "invalid_exact_evm_payload_asset_mismatch",
    "invalid_exact_evm_payload_signature",
    "invalid_exact_evm_payload_recipient_mismatch",
    "invalid_exact_evm_payload_authorization_value_mismatch",
    "invalid_exact_evm_payload_authorization_valid_before",
    "invalid_exact_evm_payload_authorization_valid_after",
    "invalid_exact_evm_nonce_already_used",
    "invalid_exact_evm_insufficient_balance",
    "invalid_exact_evm_transaction_simulation_failed",
    "invalid_exact_evm_transaction_failed",
    "invalid_exact_evm_transfer_event_mismatch",
    "insufficient_developer_credit",
    "invalid_developer_credit",
    "payment_rejected",
    "settlement_failed",
    // 403
    "not_owner",
    "admin_only_field",
    "ssrf_refused",
    "host_not_allowed",
    // 404
    "route_not_found",
    "endpoint_not_found",
    "receipt_not_found",
    "quote_not_found",
    "service_not_found",
    "payout_not_found",
    // 405, 413, 415
    "method_not_allowed",
    "body_too_large",
    "unsupported_media_type",
    // 409
    "slug_taken",
    "edit_conflict",
    "under_review",
    "content_rejected",
    "not_under_review",
    "streaming_required",
    "quote_expired",
    "quote_mismatch",
    "already_paid",
    "below_minimum",
    "payout_conflict",
    "payout_settings_missing",
    // 422
    "input_invalid",
    "invalid_url",
    "invalid_schema",
    "invalid_body",
    "invalid_field",
    "attestation_required",
    "content_blocked",
    "handler_not_allowed",
    "invalid_builder",
    "invalid_secret",
    "invalid_amount",
    "invalid_expiry",
    "invalid_method",
    "invalid_asset",
    "invalid_pay_to",
    "invalid_transaction",
    "not_payment_required",
    "unknown_network",
    "unknown_asset",
    "amount_too_large",
    // 429 (and 503)
    "overloaded",
    "rate_limited",
    // 500
    "handler_error",
    "invalid_handler_response",
    "resource_limit",
    "capability_denied",
    "compile_error",
    "internal_error",
    // 502
    "output_invalid",
    "facilitator_unavailable",
    "invalid_x402_answer",
    "upstream_error",
    "not_json",
    "response_too_large",
    "too_many_redirects",
    // 503
    "endpoint_paused",
    "store_unavailable",
    // 504
    "timeout",
    "request_timeout",
];

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    /// Stable snake_case code clients can branch on.
    pub code: Cow<'static, str>,
    pub message: String,
    /// Boxed, like the headers, to keep `Result<_, ApiError>` small on the happy path.
    pub details: Option<Box<Value>>,
    /// Extra headers such as `Retry-After` or x402's `PAYMENT-REQUIRED`.
    pub headers: Option<Box<Vec<(header::HeaderName, HeaderValue)>>>,
    /// A body whose shape a protocol fixes, sent instead of [`ErrorBody`]. Only x402's 402 uses
    /// it (see `payments::requirements`); it still carries `ok:false`, `code` and `message`.
    pub body_override: Option<Box<Value>>,
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
    pub fn new(
        status: StatusCode,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            status,
            code: code.into(),
            message: message.into(),
            details: None,
            headers: None,
            body_override: None,
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

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    pub fn unprocessable(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, code, message)
    }

    /// A failure the client cannot fix. The cause is logged; the client sees a generic message.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "internal server error",
        )
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            ok: false,
            error: ErrorDetail {
                code: self.code.to_string(),
                message: self.message.clone(),
                details: self.details.as_deref().cloned(),
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
        if self.status.is_server_error() {
            tracing::warn!(status = self.status.as_u16(), code = %self.code, message = %self.message, "request failed");
        }
        let mut response = match self.body_override {
            Some(ref body) => (self.status, axum::Json(body.as_ref())).into_response(),
            None => (self.status, axum::Json(self.body())).into_response(),
        };
        let headers = response.headers_mut();
        for (name, value) in self.headers.into_iter().flat_map(|h| *h) {
            headers.insert(name, value);
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            // Retryable: nothing was written, and the node reconnects by itself.
            StoreError::Unavailable(cause) => {
                tracing::warn!(error = %cause, "store unavailable");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store_unavailable",
                    "storage is unavailable; nothing was changed, try again shortly",
                )
                .with_retry_after(2)
            }
            StoreError::InDoubt(cause) => {
                tracing::warn!(error = %cause, "store went away while committing");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store_unavailable",
                    "storage went away while saving; the change may or may not have been made, \
                     try again shortly (payments are never taken twice)",
                )
                .with_retry_after(2)
            }
            other => ApiError::internal(other),
        }
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::ALL_CODES;

    /// snake_case string literals in the sources that are not error codes: handler types,
    /// pricing modes, check ids, store trees, metric names, key file names, test fixtures, and
    /// the codes a handler's `ctx` operations reject with inside the isolate (they reach HTTP
    /// only as `handler_error`). A new snake_case literal must be sorted into this list or
    /// [`ALL_CODES`], so a new error code cannot slip past the README.
    const NOT_CODES: &[&str] = &[
        "a_b",
        "admin_gated_js_request_response_v1",
        "admin_token",
        "builder_registration",
        "catalog_search",
        "catalog_url",
        "conversion_quote",
        "dc_123",
        "dev_pay_to_key",
        "developer_credit",
        "empty_object",
        "ep_1",
        "eth_call",
        "evm_rpc_url",
        "fixed_price_success_receipt",
        "free_public_utility",
        "handler_files",
        "handler_kv",
        "http_402",
        "http_request_duration_seconds",
        "http_requests",
        "js_request_response",
        "managed_builtin_handler",
        "mcp_url",
        "multi_thread",
        "network_gas",
        "not_applicable",
        "paid_endpoint",
        "pay_to",
        "payment_assets",
        "payment_networks",
        "payment_requirements",
        "payment_schemes",
        "payment_versions",
        "pg_ctl",
        "rcpt_1",
        "rcpt_2",
        "rcpt_forged",
        "rcpt_real",
        "receipt_echo",
        "receipt_lookup",
        "receipt_signing_key",
        "receipts_url",
        "remotes_or_packages",
        "resource_urls",
        "resources_listed",
        "secrets_master_key",
        "sk_l",
        "snake_case",
        "static_json",
        "thb_nope",
        "thdc_nope",
        "v1_body_requirements",
        "v2_body_requirements",
        "v2_payment_required_header",
        "version_detail",
        "x402_quote",
        "x402_readiness_check",
        "x402_version",
        "runtime_unavailable",
        "creator_skill",
        // ctx operation errors inside the isolate
        "storage_busy",
        "storage_error",
        "quota_exceeded",
        "invalid_header",
        "invalid_argument",
        "not_found",
        "too_large",
        "sandbox_internal",
        // sandbox op names
        "op_eval_context",
        "op_import_sync",
        "op_import_sync_with_source",
        "op_panic",
        "op_print",
    ];

    fn rust_sources(dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                rust_sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let mut text = std::fs::read_to_string(&path).unwrap();
                if path.ends_with("http/error.rs") {
                    // The list itself is not a use: drop it.
                    let start = text.find("pub const ALL_CODES").unwrap();
                    let end = start + text[start..].find("];").unwrap();
                    text.replace_range(start..end, "");
                }
                // Unit tests (a file's `mod tests` at its end) make up ids and names freely;
                // only what the server itself can answer counts.
                if let Some(tests) = text.find("#[cfg(test)]\nmod tests") {
                    text.truncate(tests);
                }
                out.push(text);
            }
        }
    }

    fn sources() -> Vec<String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out = Vec::new();
        rust_sources(&root.join("src"), &mut out);
        rust_sources(&root.join("sandbox/src"), &mut out);
        out
    }

    #[test]
    fn every_code_in_the_sources_is_listed_and_every_listed_code_is_used() {
        let listed: BTreeSet<&str> = ALL_CODES.iter().copied().collect();
        assert_eq!(listed.len(), ALL_CODES.len(), "ALL_CODES has a duplicate");
        let sources = sources().join("\n");
        // Any snake_case literal, and any literal in a constructor's code position (covers
        // one-word codes such as `unauthorized`).
        let snake = regex::Regex::new(r#""([a-z][a-z0-9]*(?:_[a-z0-9]+)+)""#).unwrap();
        let positioned = regex::Regex::new(
            r#"(?:ApiError::\w+\(\s*(?:StatusCode::\w+,\s*)?|Self::new\(\s*StatusCode::\w+,\s*)"([a-z][a-z0-9_]*)""#,
        )
        .unwrap();
        let unknown: BTreeSet<&str> = snake
            .captures_iter(&sources)
            .chain(positioned.captures_iter(&sources))
            .map(|c| c.get(1).unwrap().as_str())
            .filter(|literal| !listed.contains(literal) && !NOT_CODES.contains(literal))
            .collect();
        assert!(
            unknown.is_empty(),
            "literals neither in ALL_CODES nor NOT_CODES (sort each into one, and list codes in the README): {unknown:?}"
        );
        // One-word codes come from `code()` maps (`=> "timeout"`), so a listed code only has to
        // appear as a literal somewhere.
        let unused: Vec<_> = ALL_CODES
            .iter()
            .filter(|c| !sources.contains(&format!("\"{c}\"")))
            .collect();
        assert!(
            unused.is_empty(),
            "listed but not in the sources: {unused:?}"
        );
    }

    #[test]
    fn the_readme_error_table_lists_exactly_the_codes() {
        let readme =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/errors.md"))
                .unwrap();
        let start = readme
            .find("| status | codes |")
            .expect("README error table");
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
        let listed: BTreeSet<&str> = ALL_CODES.iter().copied().collect();
        let missing: Vec<_> = listed.difference(&documented).collect();
        let extra: Vec<_> = documented.difference(&listed).collect();
        assert!(
            missing.is_empty(),
            "codes missing from the README table: {missing:?}"
        );
        assert!(
            extra.is_empty(),
            "README table codes the server never returns: {extra:?}"
        );
    }
}
