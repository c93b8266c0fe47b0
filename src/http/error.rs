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

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
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
