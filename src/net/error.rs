//! Why an outbound request failed, in words safe to show the caller: messages name the rule that
//! refused a request, never the address a host resolved to or a lower-level error's text.

use axum::http::StatusCode;

use super::guard::UrlRefusal;
use crate::error::{ApiError, ErrorCode};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    #[error("invalid url: {0}")]
    InvalidUrl(&'static str),
    /// The destination is an internal address; the reason follows "the host resolves to".
    #[error("outbound request refused: the host resolves to {0}")]
    SsrfRefused(&'static str),
    #[error("outbound request refused: host {0} is not in the allowed hosts")]
    HostNotAllowed(String),
    #[error("too many redirects (more than {0})")]
    TooManyRedirects(usize),
    #[error("the upstream did not answer within {0} ms")]
    Timeout(u128),
    #[error("the upstream response is larger than {0} bytes")]
    ResponseTooLarge(usize),
    #[error("the upstream response is not JSON")]
    NotJson,
    #[error("upstream request failed: {0}")]
    Upstream(String),
}

impl NetError {
    /// Stable snake_case code, also used as the API error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            NetError::InvalidUrl(_) => ErrorCode::InvalidUrl,
            NetError::SsrfRefused(_) => ErrorCode::SsrfRefused,
            NetError::HostNotAllowed(_) => ErrorCode::HostNotAllowed,
            NetError::TooManyRedirects(_) => ErrorCode::TooManyRedirects,
            NetError::Timeout(_) => ErrorCode::Timeout,
            NetError::ResponseTooLarge(_) => ErrorCode::ResponseTooLarge,
            NetError::NotJson => ErrorCode::NotJson,
            NetError::Upstream(_) => ErrorCode::UpstreamError,
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            NetError::InvalidUrl(_) => StatusCode::UNPROCESSABLE_ENTITY,
            NetError::SsrfRefused(_) | NetError::HostNotAllowed(_) => StatusCode::FORBIDDEN,
            NetError::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            NetError::TooManyRedirects(_)
            | NetError::ResponseTooLarge(_)
            | NetError::NotJson
            | NetError::Upstream(_) => StatusCode::BAD_GATEWAY,
        }
    }
}

impl From<UrlRefusal> for NetError {
    fn from(refusal: UrlRefusal) -> Self {
        match refusal {
            UrlRefusal::Invalid(why) => NetError::InvalidUrl(why),
            UrlRefusal::HostNotAllowed(host) => NetError::HostNotAllowed(host),
            UrlRefusal::Address(reason) => NetError::SsrfRefused(reason),
        }
    }
}

impl From<NetError> for ApiError {
    fn from(e: NetError) -> Self {
        ApiError::new(e.status(), e.code(), e.to_string())
    }
}
