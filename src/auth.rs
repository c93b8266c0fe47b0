//! Who is calling, as types: handlers state the credential they need by taking an extractor.
//!
//! - [`Admin`]: a valid `X-Admin-Token` (401 when missing, 403 when wrong).
//!
//! Secrets are compared in constant time so response timing says nothing about how much of a
//! guess was right.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::StatusCode;
use subtle::ConstantTimeEq;

use crate::app::AppState;
use crate::http::error::ApiError;

pub const ADMIN_TOKEN_HEADER: &str = "x-admin-token";

/// Constant-time equality of two secrets (length is not secret).
pub fn secrets_equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// The value of a credential header, if present and non-empty.
pub fn header_value<'a>(parts: &'a Parts, name: &str) -> Option<&'a str> {
    parts
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// Proof that the request carries the admin token.
#[derive(Debug, Clone, Copy)]
pub struct Admin;

impl Admin {
    /// `Some(Admin)` when the header holds the admin token, `None` when absent, 403 when wrong.
    pub fn check(parts: &Parts, app: &AppState) -> Result<Option<Admin>, ApiError> {
        match header_value(parts, ADMIN_TOKEN_HEADER) {
            None => Ok(None),
            Some(token) if secrets_equal(token, &app.admin_token) => Ok(Some(Admin)),
            Some(_) => Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "invalid_admin_token",
                "the admin token is not valid",
            )),
        }
    }
}

impl FromRequestParts<AppState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
        Admin::check(parts, app)?
            .ok_or_else(|| ApiError::unauthorized("this route requires X-Admin-Token"))
    }
}

#[cfg(test)]
mod tests {
    use super::secrets_equal;

    #[test]
    fn equality() {
        assert!(secrets_equal("abc", "abc"));
        assert!(!secrets_equal("abc", "abd"));
        assert!(!secrets_equal("abc", "abcd"));
    }
}
