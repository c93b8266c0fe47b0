//! `POST /ai/builders/drafts/run`: a builder's test run of a module before it is published
//! (the dashboard editor's "Run draft"). The body is checked like a create body's fields, then
//! the module runs once with the input in a throwaway isolate ([`EndpointRuntime::run_draft`])
//! with `logs` and a scratch `ctx.kv` and `ctx.files` of its own, never an endpoint's data: the
//! scratch starts empty and is wiped after the run (and, should the node die first, by the
//! next maintenance pass, as a deleted endpoint's data is).
//!
//! [`EndpointRuntime::run_draft`]: crate::js_handlers::EndpointRuntime::run_draft

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::error::EndpointError;
use super::input::{self, FieldErrors};
use super::wipe;
use crate::catalog::{HandlerType, SourceLanguage};
use crate::js_handlers::{Draft, DraftRun, EndpointRuntime, DRAFT_SCRATCH_PREFIX};
use crate::store::Store;
use crate::urls::Urls;

/// Where drafts are run: the path of `routes::endpoints::run_draft` (its annotation), and
/// `req.url` of a draft without a slug.
pub const DRAFTS_RUN_PATH: &str = "/ai/builders/drafts/run";

/// The body of `POST /ai/builders/drafts/run`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DraftRequest {
    /// The ES module, as `source` of create: its default export is the handler.
    pub source: String,
    /// `javascript` (the default) or `typescript`, as `sourceLanguage` of create.
    #[serde(default)]
    pub source_language: SourceLanguage,
    /// `req.input`: any JSON value (default `{}`). Not checked against any schema.
    #[serde(default = "empty_object")]
    #[schema(value_type = Value)]
    pub input: Value,
    /// `ctx.env`, with the rules of create's `env`. Nothing else reaches the draft: no secrets.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `req.endpoint.slug` (default `draft`): only a label, it gives no access to that
    /// endpoint.
    #[serde(default)]
    #[schema(pattern = "^(?!create$)[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$")]
    pub slug: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// Checks `request` (every field error at once, as create does) and runs it for `builder_id`.
/// A module that does not load is 422 `compile_error`, as at publish. `req.url` is the URL the
/// tool will have under the draft's slug, or this route's when it names none.
pub async fn run(
    runtime: &EndpointRuntime,
    store: &dyn Store,
    urls: &Urls,
    builder_id: &str,
    request: DraftRequest,
) -> Result<DraftRun, EndpointError> {
    let mut errors = FieldErrors::default();
    errors.check(input::handler_fields(
        HandlerType::JsRequestResponse,
        Some(&request.source),
        None,
    ));
    errors.check(input::env(&request.env));
    if let Some(slug) = &request.slug {
        errors.check(input::slug(slug));
    }
    errors.finish()?;
    let url = match &request.slug {
        Some(slug) => urls.tool(slug),
        None => urls.at(DRAFTS_RUN_PATH),
    };
    // The scratch's id: no endpoint's (ids are `ep_` and hex), so no endpoint's data is ever
    // this one's. Its wipe is owed before anything is written under it.
    let scratch = format!("{DRAFT_SCRATCH_PREFIX}{}", uuid::Uuid::new_v4().simple());
    store.apply(wipe::owed(&scratch)).await?;
    let draft = Draft {
        source: &request.source,
        language: request.source_language,
        input: &request.input,
        env: request.env,
        slug: request.slug.as_deref(),
        url: &url,
        owner: builder_id,
        scratch: &scratch,
    };
    let ran = runtime.run_draft(draft).await;
    if let Err(e) = wipe::wipe(store, &scratch).await {
        tracing::warn!(scratch = %scratch, error = %e, "a draft's scratch data was not wiped; maintenance finishes it");
    }
    Ok(ran?)
}
