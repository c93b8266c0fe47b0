//! A test run of a draft: a module nobody has published yet, run once with one input, so a
//! builder sees what it answers (status, body, log lines, an error at its line and column)
//! before deploying it.
//!
//! The draft runs in a throwaway isolate of its own (a slug no endpoint can have, retired
//! afterwards), under the default limits of a call and counted against its builder's isolate
//! quotas, with the env it came with, `logs`, and `kv` and `files` on a **scratch** of its own
//! (the caller's id, never an endpoint's, wiped after the run): no secrets, `httpGetJson` or
//! `fetch`. It belongs to no endpoint, so there is no endpoint data it could read; its log
//! lines go back to the one who ran it.

use std::collections::BTreeMap;

use axum::http::{header, HeaderMap, HeaderValue, Method};
use serde::Serialize;
use serde_json::Value;

use super::check::describe;
use super::run::{log_lines, request_object, sandbox_error, HandlerRequest};
use super::slots::DRAFT_SCRATCH_PREFIX;
use super::typescript::{self, TranspileError};
use super::{CheckError, EndpointRuntime};
use crate::catalog::SourceLanguage;
use crate::error::ApiError;
use crate::logs::{InvocationError, LogLine};

/// The slug `req.endpoint.slug` shows when the draft names none.
const DRAFT_SLUG: &str = "draft";

/// What to run.
pub struct Draft<'a> {
    pub source: &'a str,
    /// Whether `source` is JavaScript or TypeScript (transpiled first, as at publish).
    pub language: SourceLanguage,
    pub input: &'a Value,
    pub env: BTreeMap<String, String>,
    /// `req.endpoint.slug`: the endpoint the draft is meant for, if any. Only a label.
    pub slug: Option<&'a str>,
    /// `req.url`, and the URL of a Workers-style handler's `Request`.
    pub url: &'a str,
    /// The builder who runs it, whose isolate and storage quotas it counts against.
    pub owner: &'a str,
    /// The id its `ctx.kv` and `ctx.files` are kept under: [`DRAFT_SCRATCH_PREFIX`] and a
    /// fresh id, wiped by the caller after the run.
    pub scratch: &'a str,
}

/// What the draft did with the input.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DraftRun {
    /// The status a call would have answered: the handler's own, or the error's (500
    /// `handler_error`, 504 `timeout`, ...).
    pub status: u16,
    /// The handler's result (`null` when it failed): shaped by the draft, like a tool call's.
    pub body: Value,
    /// The headers the handler set with `ctx.respond`.
    pub headers: BTreeMap<String, String>,
    pub logs: Vec<LogLine>,
    pub duration_ms: u64,
    /// Why it failed: the code and message a caller would get, and where in the source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<InvocationError>,
}

impl EndpointRuntime {
    /// Runs `draft` once. A module that does not load is [`CheckError::Refused`], as at
    /// publish; a busy or failed sandbox is [`CheckError::Unavailable`]; everything the handler
    /// does, failures included, is in the [`DraftRun`].
    pub async fn run_draft(&self, draft: Draft<'_>) -> Result<DraftRun, CheckError> {
        let refused = |message, position| {
            CheckError::Refused(Box::new(describe(
                draft.source,
                draft.language,
                message,
                position,
            )))
        };
        // A TypeScript draft runs as its JavaScript; positions are mapped back, as for a call.
        let module =
            match typescript::module(draft.language, draft.source.to_owned(), Some(draft.owner))
                .await
            {
                Ok(module) => module,
                Err(TranspileError::Source { message, position }) => {
                    return Err(refused(message, position))
                }
                Err(TranspileError::Failed(message)) => {
                    return Err(CheckError::Unavailable(ApiError::internal(message)))
                }
            };
        let id = draft
            .scratch
            .strip_prefix(DRAFT_SCRATCH_PREFIX)
            .unwrap_or(draft.scratch)
            .to_owned();
        let code = sandbox::EndpointCode {
            // Not a valid endpoint slug or id: no endpoint's isolate or data is ever this one's.
            id: draft.scratch.to_owned(),
            slug: draft.scratch.to_owned(),
            version: id.clone(),
            source: module.js,
            capabilities: sandbox::Capabilities {
                logs: true,
                kv: true,
                files: true,
                ..Default::default()
            },
            env: draft.env,
            limits: None,
            owner: Some(draft.owner.to_owned()),
        };
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let request_id = format!("draft-{id}");
        let call = HandlerRequest {
            method: &Method::POST,
            input: draft.input,
            headers: &headers,
            request_id: &request_id,
            url: draft.url,
        };
        let request = request_object(draft.slug.unwrap_or(DRAFT_SLUG), &call, &Value::Null)
            .map_err(CheckError::Unavailable)?;
        let invocation = sandbox::Invocation {
            request,
            request_id: request_id.clone(),
            load_only: false,
        };
        let report = self.pool().invoke(&code, invocation).await;
        self.pool().retire(&code.slug);
        let duration_ms = u64::try_from(report.duration.as_millis()).unwrap_or(u64::MAX);
        let logs = log_lines(report.logs, report.duration);
        let trace = match &module.map {
            Some(map) => report.trace.map(|t| map.trace(t)),
            None => report.trace,
        };
        let position = trace.as_ref().and_then(|t| t.line.zip(t.column));
        match report.result {
            Ok(response) => Ok(DraftRun {
                status: response.status,
                body: response.body,
                headers: response.headers.into_iter().collect(),
                logs,
                duration_ms,
                error: None,
            }),
            Err(sandbox::SandboxError::CompileError(message)) => Err(refused(message, position)),
            Err(
                e @ (sandbox::SandboxError::Overloaded { .. } | sandbox::SandboxError::Internal(_)),
            ) => Err(CheckError::Unavailable(sandbox_error(e))),
            Err(e) => {
                let error = sandbox_error(e);
                let trace = trace.unwrap_or_default();
                Ok(DraftRun {
                    status: error.status.as_u16(),
                    body: Value::Null,
                    headers: BTreeMap::new(),
                    logs,
                    duration_ms,
                    error: Some(InvocationError {
                        code: error.code.as_str().to_owned(),
                        message: error.message,
                        line: trace.line,
                        column: trace.column,
                        stack: trace.stack,
                    }),
                })
            }
        }
    }
}
