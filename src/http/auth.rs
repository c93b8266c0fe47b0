//! Who is calling, as types: handlers state the credential they need by taking an extractor.
//!
//! - [`Admin`]: a valid `X-Admin-Token`.
//! - [`BuilderAuth`]: a valid `X-Builder-Key`; the builder it belongs to.
//! - [`Caller`] (a `builders` value): either of the two (endpoint lifecycle, logs, secrets). `Option<Caller>` is the
//!   same check on routes where credentials are optional (a missing one is `None`, a wrong one
//!   still fails).
//! - [`TestRequest`]: `X-Toolhost-Test: 1` on a call, with whichever of the two came with it.
//!
//! Status codes: 401 when the credential is missing, not recognised or revoked (spec 5 rule 1
//! and section 7: create without a valid token or key is 401), 403 when the caller is known but
//! may not do this: another builder's endpoint, an admin-only field.
//!
//! Secrets are compared in constant time so response timing says nothing about how much of a
//! guess was right.

use axum::extract::{FromRequestParts, OptionalFromRequestParts};
use axum::http::request::Parts;
use axum::http::StatusCode;

use crate::app::AppState;
use crate::builders::{self, secrets_equal, Builder, Caller};
use std::sync::Arc;

use crate::catalog::{CompiledEndpoint, Endpoint};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::pipeline;

pub const ADMIN_TOKEN_HEADER: &str = "x-admin-token";
pub const BUILDER_KEY_HEADER: &str = "x-builder-key";

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
    /// `Some(Admin)` when the header holds the admin token, `None` when absent, 401 when wrong.
    pub fn check(parts: &Parts, app: &AppState) -> Result<Option<Admin>, ApiError> {
        match header_value(parts, ADMIN_TOKEN_HEADER) {
            None => Ok(None),
            Some(token) if secrets_equal(token, &app.admin_token) => Ok(Some(Admin)),
            Some(_) => Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                ErrorCode::InvalidAdminToken,
                "the admin token is not valid",
            )),
        }
    }
}

impl FromRequestParts<AppState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
        let (admin, _) = credentials(parts, app).await?;
        admin.ok_or_else(|| ApiError::unauthorized("this route requires X-Admin-Token"))
    }
}

/// The builder whose key the request carries.
#[derive(Debug, Clone)]
pub struct BuilderAuth(pub Builder);

impl BuilderAuth {
    /// `Some` for a valid key, `None` when absent, 401 for an unknown or revoked key.
    pub async fn check(parts: &Parts, app: &AppState) -> Result<Option<BuilderAuth>, ApiError> {
        match header_value(parts, BUILDER_KEY_HEADER) {
            None => Ok(None),
            Some(key) => Ok(Some(BuilderAuth(
                builders::authenticate(app.store.as_ref(), key).await?,
            ))),
        }
    }
}

impl FromRequestParts<AppState> for BuilderAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
        let (_, builder) = credentials(parts, app).await?;
        builder.ok_or_else(|| ApiError::unauthorized("this route requires X-Builder-Key"))
    }
}

/// Both credential headers, each checked when sent: whichever one a route needs, a wrong one
/// beside it is 401, never ignored (a builder-only route with a stale admin token, an admin
/// route with a revoked builder key).
async fn credentials(
    parts: &Parts,
    app: &AppState,
) -> Result<(Option<Admin>, Option<BuilderAuth>), ApiError> {
    let admin = Admin::check(parts, app)?;
    let builder = BuilderAuth::check(parts, app).await?;
    Ok((admin, builder))
}

/// The admin or a builder ([`Caller`]). When both headers are sent, both must be valid and the
/// admin wins.
async fn caller(parts: &Parts, app: &AppState) -> Result<Option<Caller>, ApiError> {
    Ok(match credentials(parts, app).await? {
        (Some(Admin), _) => Some(Caller::Admin),
        (None, Some(BuilderAuth(b))) => Some(Caller::Builder(b)),
        (None, None) => None,
    })
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
        caller(parts, app).await?.ok_or_else(|| {
            ApiError::unauthorized("this route requires X-Admin-Token or X-Builder-Key")
        })
    }
}

impl OptionalFromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        app: &AppState,
    ) -> Result<Option<Self>, ApiError> {
        caller(parts, app).await
    }
}

/// What a call's `X-Toolhost-Test` and `X-Toolhost-Revision` headers ask for. Credentials are
/// read only when one is sent, so a live call never fails on a stray `X-Builder-Key`.
pub enum TestRequest {
    /// Neither header: a live call.
    Live,
    /// `X-Toolhost-Test: 1` or `X-Toolhost-Revision: N` (a test call of revision N), with the
    /// caller its credential names (`None`: it carried none).
    Test {
        asker: Option<Box<Caller>>,
        revision: Option<u64>,
    },
}

impl TestRequest {
    /// Whether the call is a test call of `endpoint`: 403 `test_call_not_allowed` unless its
    /// owner or the admin asks (see [`pipeline::allow_test`]).
    pub fn check(&self, endpoint: &Endpoint) -> ApiResult<bool> {
        match self {
            TestRequest::Live => Ok(false),
            TestRequest::Test { asker, .. } => {
                pipeline::allow_test(endpoint, asker.as_deref()).map(|()| true)
            }
        }
    }

    /// What the call runs: `compiled` (its serving revision), or the kept revision a test call
    /// named (404 `revision_not_found` when it is not kept). Call after [`Self::check`].
    pub async fn serving(
        &self,
        app: &AppState,
        compiled: Arc<CompiledEndpoint>,
    ) -> ApiResult<Arc<CompiledEndpoint>> {
        match self {
            TestRequest::Test {
                revision: Some(number),
                ..
            } => Ok(crate::endpoints::revisions::as_revision(
                &app.endpoint_parts(),
                compiled,
                *number,
            )
            .await?),
            _ => Ok(compiled),
        }
    }
}

impl FromRequestParts<AppState> for TestRequest {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
        let test = parts.headers.get(pipeline::TEST_HEADER);
        let revision = parts.headers.get(pipeline::REVISION_HEADER);
        if test.is_none() && revision.is_none() {
            return Ok(TestRequest::Live);
        }
        if test.is_some_and(|value| value.as_bytes().trim_ascii() != b"1") {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                ErrorCode::InvalidTestHeader,
                "X-Toolhost-Test must be 1 (a test call by the endpoint's owner or the admin), or absent",
            ));
        }
        let revision = match revision {
            None => None,
            Some(value) => Some(
                value
                    .to_str()
                    .ok()
                    .and_then(|text| text.trim().parse::<u64>().ok())
                    .ok_or_else(|| {
                        ApiError::new(
                            StatusCode::BAD_REQUEST,
                            ErrorCode::InvalidRevisionHeader,
                            "X-Toolhost-Revision must be a revision number (a test call of that kept revision by the endpoint's owner or the admin), or absent",
                        )
                    })?,
            ),
        };
        Ok(TestRequest::Test {
            asker: caller(parts, app).await?.map(Box::new),
            revision,
        })
    }
}
