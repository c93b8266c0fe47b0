//! `GET /ai/endpoints` (whole, or paged with `limit`/`cursor`) and `GET /ai/endpoints/{slug}`. Endpoints held for or refused by
//! content-safety review are not listed and are not found except by their owner and the admin.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::app::AppState;
use crate::builders::Caller;
use crate::catalog::{
    example_for_schema, listing, listing_page, CatalogFilter, CatalogForm, CatalogPosition,
    EndpointRecord, PricingMode,
};
use crate::endpoints::{self, ManageView};
use crate::error::{ApiError, ApiResult, ErrorBody, ErrorCode};
use crate::http::extract::QueryParams;
use crate::paging;

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct CatalogQuery {
    /// Only endpoints carrying this tag (case-insensitive).
    tag: Option<String>,
    /// Case-insensitive text search over slug, title, description and tags.
    q: Option<String>,
    /// `free_public_utility` or `fixed_price_success_receipt`.
    #[param(value_type = Option<PricingMode>)]
    pricing_mode: Option<String>,
    /// `legacy` for the older form without content-safety fields.
    #[param(pattern = "^(current|legacy)$")]
    form: Option<String>,
    /// Records per page, 1 to 200. With `limit` or `cursor` the answer is one page and carries
    /// `nextCursor`; without either, every matching endpoint.
    #[param(minimum = 1, maximum = 200)]
    limit: Option<usize>,
    /// `nextCursor` of the previous page.
    #[param(pattern = "^[A-Za-z0-9_-]+$")]
    cursor: Option<String>,
}

fn parse_form(form: Option<&str>) -> ApiResult<CatalogForm> {
    CatalogForm::parse(form).ok_or_else(|| {
        ApiError::bad_request(
            ErrorCode::InvalidQuery,
            "form must be `current` or `legacy`",
        )
    })
}

/// The catalog envelope (spec 2.3) with every endpoint that passes the filters, or one page of
/// them. The unfiltered listing carries an `ETag` and answers `If-None-Match` with 304.
#[utoipa::path(get, path = "/ai/endpoints", tag = "catalog", params(CatalogQuery),
    responses((status = 200, description = "Catalog envelope; `nextCursor` when paged", body = crate::catalog::Listing),
        (status = 304, description = "The unfiltered listing has not changed since the `ETag` in `If-None-Match`"),
        (status = 400, description = "Bad filter, limit or cursor", body = ErrorBody)))]
pub async fn list_endpoints(
    State(app): State<AppState>,
    headers: HeaderMap,
    QueryParams(query): QueryParams<CatalogQuery>,
) -> ApiResult<Response> {
    let form = parse_form(query.form.as_deref())?;
    let mode = query
        .pricing_mode
        .as_deref()
        .map(|m| {
            PricingMode::parse(m).ok_or_else(|| {
                ApiError::bad_request(
                    ErrorCode::InvalidQuery,
                    "pricingMode must be `free_public_utility`, `fixed_price_success_receipt` or `metered_success_receipt`",
                )
            })
        })
        .transpose()?;
    let filter = CatalogFilter::new(query.tag.as_deref(), query.q.as_deref(), mode);
    let namespace = &app.config.catalog_namespace;
    if query.limit.is_some() || query.cursor.is_some() {
        let limit = paging::parse_limit(query.limit)?;
        let after = query
            .cursor
            .as_deref()
            .map(|c| {
                CatalogPosition::from_cursor(c).ok_or_else(|| {
                    ApiError::bad_request(
                        ErrorCode::InvalidCursor,
                        "cursor must be a nextCursor from a previous page",
                    )
                })
            })
            .transpose()?;
        let page = listing_page(
            &app.catalog,
            &app.urls,
            namespace,
            form,
            &filter,
            after.as_ref(),
            limit,
        );
        return Ok(Json(page).into_response());
    }
    if !filter.is_empty() {
        let body = listing(&app.catalog, &app.urls, namespace, form, &filter);
        return Ok(Json(body).into_response());
    }
    let full = app
        .catalog_listing
        .full(&app.catalog, &app.urls, namespace, form);
    // Caches may keep it but must ask again before reuse: the catalog changes at any time.
    let cache = [
        (header::ETAG, full.etag.clone()),
        (header::CACHE_CONTROL, "no-cache".to_owned()),
    ];
    if crate::web::etag_matches(&headers, &full.etag) {
        return Ok((StatusCode::NOT_MODIFIED, cache).into_response());
    }
    Ok((
        cache,
        [(header::CONTENT_TYPE, "application/json".to_owned())],
        full.body,
    )
        .into_response())
}

/// One endpoint as `GET /ai/endpoints/{slug}` answers it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EndpointView {
    /// Always true.
    ok: bool,
    endpoint: EndpointRecord,
    /// The owner's view, for the owner and the admin; `null` for everyone else.
    #[schema(required = true)]
    manage: Option<ManageView>,
    example: Example,
}

/// A copyable call of the endpoint and what it costs.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Example {
    request: ExampleRequest,
    /// The same request as a shell command.
    curl: String,
    #[schema(value_type = f64, minimum = 0)]
    price_usd: crate::money::Usd,
    pricing_mode: PricingMode,
    payment_required: bool,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExampleRequest {
    /// Always `POST`.
    method: &'static str,
    url: String,
    headers: ExampleHeaders,
    /// The endpoint's example input, or one made from its inputSchema.
    body: Value,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExampleHeaders {
    /// Always `application/json`.
    #[serde(rename = "Content-Type")]
    content_type: &'static str,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RecordQuery {
    /// `legacy` for the older form without content-safety fields.
    #[param(pattern = "^(current|legacy)$")]
    form: Option<String>,
}

/// One endpoint record plus a copyable example request and its price. The owner and the admin
/// also get `manage` (source, env, files, secret names, capabilities, limits) and see endpoints
/// held for review, which are not found for everyone else.
#[utoipa::path(get, path = "/ai/endpoints/{slug}", tag = "catalog",
    params(("slug" = String, Path, description = "Endpoint slug"), RecordQuery),
    responses((status = 200, description = "Endpoint record", body = EndpointView), (status = 400, description = "Bad `form`", body = ErrorBody), (status = 401, description = "Credential sent but not valid", body = ErrorBody), (status = 404, description = "No such endpoint", body = ErrorBody)))]
pub async fn get_endpoint(
    State(app): State<AppState>,
    caller: Option<Caller>,
    Path(slug): Path<String>,
    QueryParams(query): QueryParams<RecordQuery>,
) -> ApiResult<Json<EndpointView>> {
    let form = parse_form(query.form.as_deref())?;
    let compiled = app.catalog.require(&slug)?;
    let endpoint = &compiled.endpoint;
    let manager = caller
        .as_ref()
        .is_some_and(|c| endpoints::can_manage(c, endpoint));
    if !endpoint.is_listed() && !manager {
        return Err(crate::catalog::CatalogError::NotFound(slug).into());
    }
    let body = endpoint.example_input.as_ref().map_or_else(
        || example_for_schema(&endpoint.input_schema.value()),
        |e| e.value(),
    );
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
    Ok(Json(EndpointView {
        ok: true,
        endpoint: EndpointRecord::new(endpoint, &app.urls, form),
        manage,
        example: Example {
            request: ExampleRequest {
                method: "POST",
                url,
                headers: ExampleHeaders {
                    content_type: "application/json",
                },
                body,
            },
            curl,
            price_usd: endpoint.price_usd,
            pricing_mode: endpoint.pricing_mode(),
            payment_required: endpoint.is_paid(),
        },
    }))
}
