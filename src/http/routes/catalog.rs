//! `GET /ai/endpoints` and `GET /ai/endpoints/{slug}`. Endpoints held for or refused by
//! content-safety review are not listed and are not found except by their owner and the admin.

use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::app::AppState;
use crate::builders::Caller;
use crate::catalog::{example_for_schema, listing, CatalogForm, EndpointRecord, PricingMode};
use crate::endpoints;
use crate::error::{ApiError, ApiResult, ErrorBody, ErrorCode};
use crate::http::extract::QueryParams;

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct CatalogQuery {
    /// Only endpoints carrying this tag (case-insensitive).
    tag: Option<String>,
    /// Case-insensitive text search over slug, title, description and tags.
    q: Option<String>,
    /// `free_public_utility` or `fixed_price_success_receipt`.
    pricing_mode: Option<String>,
    /// `legacy` for the older form without content-safety fields.
    form: Option<String>,
}

fn parse_form(form: Option<&str>) -> ApiResult<CatalogForm> {
    CatalogForm::parse(form).ok_or_else(|| {
        ApiError::bad_request(
            ErrorCode::InvalidQuery,
            "form must be `current` or `legacy`",
        )
    })
}

/// The catalog envelope (spec 2.3) with every endpoint that passes the filters.
#[utoipa::path(get, path = "/ai/endpoints", tag = "catalog", params(CatalogQuery),
    responses((status = 200, description = "Catalog envelope", body = Object), (status = 400, description = "Bad filter", body = ErrorBody)))]
pub async fn list_endpoints(
    State(app): State<AppState>,
    QueryParams(query): QueryParams<CatalogQuery>,
) -> ApiResult<Json<Value>> {
    let form = parse_form(query.form.as_deref())?;
    let mode = query
        .pricing_mode
        .as_deref()
        .map(|m| {
            PricingMode::parse(m).ok_or_else(|| {
                ApiError::bad_request(
                    ErrorCode::InvalidQuery,
                    "pricingMode must be `free_public_utility` or `fixed_price_success_receipt`",
                )
            })
        })
        .transpose()?;
    Ok(Json(listing(
        &app.catalog,
        &app.urls,
        &app.config.catalog_namespace,
        form,
        query.tag.as_deref(),
        query.q.as_deref(),
        mode,
    )))
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct RecordQuery {
    /// `legacy` for the older form without content-safety fields.
    form: Option<String>,
}

/// One endpoint record plus a copyable example request and its price. The owner and the admin
/// also get `manage` (source, env, files, secret names, capabilities, limits) and see endpoints
/// held for review, which are not found for everyone else.
#[utoipa::path(get, path = "/ai/endpoints/{slug}", tag = "catalog",
    params(("slug" = String, Path, description = "Endpoint slug"), RecordQuery),
    responses((status = 200, description = "Endpoint record", body = Object), (status = 401, description = "Credential sent but not valid", body = ErrorBody), (status = 404, description = "No such endpoint", body = ErrorBody)))]
pub async fn get_endpoint(
    State(app): State<AppState>,
    caller: Option<Caller>,
    Path(slug): Path<String>,
    QueryParams(query): QueryParams<RecordQuery>,
) -> ApiResult<Json<Value>> {
    let form = parse_form(query.form.as_deref())?;
    let compiled = app.catalog.require(&slug)?;
    let endpoint = &compiled.endpoint;
    let manager = caller
        .as_ref()
        .is_some_and(|c| endpoints::can_manage(c, endpoint));
    if !endpoint.is_listed() && !manager {
        return Err(crate::catalog::CatalogError::NotFound(slug).into());
    }
    let body = endpoint
        .example_input
        .clone()
        .unwrap_or_else(|| example_for_schema(&endpoint.input_schema));
    let url = app.urls.tool(&endpoint.slug);
    let curl = format!(
        "curl -sS -X POST '{url}' -H 'Content-Type: application/json' -d '{}'",
        body.to_string().replace('\'', "'\\''")
    );
    let manage = if manager {
        Some(endpoints::manage_view(&app.endpoint_parts(), endpoint).await?)
    } else {
        None
    };
    Ok(Json(json!({
        "ok": true,
        "endpoint": EndpointRecord::new(endpoint, &app.urls, form),
        "manage": manage,
        "example": {
            "request": {"method": "POST", "url": url, "headers": {"Content-Type": "application/json"}, "body": body},
            "curl": curl,
            "priceUsd": endpoint.price_usd,
            "pricingMode": endpoint.pricing_mode(),
            "paymentRequired": endpoint.is_paid(),
        },
    })))
}
