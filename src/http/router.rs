//! Every route and middleware of the service, in one function tests can drive.

use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderName, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{metrics, openapi, rate_limit};
use crate::app::AppState;
use crate::error::{ApiError, ErrorCode};
use crate::{
    builders, catalog, endpoints, events, logs, manifest, mcp, payments, quotes, receipts, revenue,
    safety, secrets, tools,
};

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The documented API: every route here lands in `/openapi.json`.
fn api_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::base_document())
        .routes(routes!(health))
        .routes(routes!(metrics::metrics))
        .routes(routes!(catalog::routes::list_endpoints))
        .routes(routes!(
            catalog::routes::get_endpoint,
            endpoints::routes::patch_endpoint,
            endpoints::routes::delete_endpoint
        ))
        .routes(routes!(endpoints::routes::create_endpoint))
        .routes(routes!(
            secrets::routes::list_secrets,
            secrets::routes::change_secrets
        ))
        .routes(routes!(logs::routes::endpoint_logs))
        .routes(routes!(builders::routes::register))
        .routes(routes!(builders::routes::rotate_key))
        .routes(routes!(events::routes::builder_events))
        .routes(routes!(endpoints::routes::builder_endpoints))
        .routes(routes!(endpoints::templates::creator_skill))
        .routes(routes!(builders::routes::admin_create_builder))
        .routes(routes!(endpoints::routes::review_endpoint))
        .routes(routes!(endpoints::routes::review_queue))
        .routes(routes!(manifest::manifest))
        .routes(routes!(crate::well_known::x402_discovery))
        .routes(routes!(crate::well_known::mcp_server_json))
        .routes(routes!(
            tools::routes::invoke_get,
            tools::routes::invoke_post
        ))
        .routes(routes!(receipts::routes::get_receipt))
        .routes(routes!(safety::routes::policy))
        .routes(routes!(mcp::transport::post))
        // Undocumented on purpose: they exist only to answer 405 the way MCP clients expect.
        .route(
            "/ai/mcp",
            get(mcp::transport::method_not_allowed).delete(mcp::transport::method_not_allowed),
        )
        .routes(routes!(
            payments::routes::issue_credit,
            payments::routes::list_credits
        ))
        .routes(routes!(payments::routes::supported))
        .routes(routes!(tools::invoke::invoke))
        .routes(routes!(quotes::routes::quote))
        .routes(routes!(quotes::routes::conversion_quote))
        .routes(routes!(quotes::routes::external_quote))
        .routes(routes!(revenue::routes::revenue))
        .routes(routes!(
            revenue::routes::get_payout_settings,
            revenue::routes::set_payout_settings
        ))
        .routes(routes!(
            revenue::routes::list_payouts,
            revenue::routes::create_payout
        ))
        .routes(routes!(revenue::routes::mark_paid))
}

pub fn build_router(app: AppState) -> Router {
    let (router, document) = api_routes().split_for_parts();
    let document = std::sync::Arc::new(document);
    let timeout = app.config.limits.request_timeout;
    let limiter = app
        .config
        .limits
        .anonymous_writes
        .map(|limit| std::sync::Arc::new(rate_limit::RateLimiter::new(limit)));
    router
        .route(
            "/openapi.json",
            get(move || {
                let document = document.clone();
                async move { Json(document.as_ref().clone()) }
            }),
        )
        .merge(crate::web::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(limiter, rate_limit::limit))
        .layer(middleware::from_fn_with_state(app.clone(), metrics::track))
        .layer(middleware::from_fn_with_state(timeout, deadline))
        .layer(DefaultBodyLimit::max(app.config.limits.body_bytes))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request| {
            let request_id = request
                .headers()
                .get(REQUEST_ID)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            tracing::info_span!("request", method = %request.method(), uri = %request.uri().path(), request_id)
        }))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(CatchPanicLayer::custom(|_panic| {
            ApiError::internal("handler panicked").into_response()
        }))
        .with_state(app)
}

/// `GET /healthz`: the process is up and the store answers.
#[utoipa::path(get, path = "/healthz", tag = "ops", responses((status = 200, description = "Healthy"), (status = 503, description = "Store unavailable", body = crate::error::ErrorBody)))]
async fn health(State(app): State<AppState>) -> Result<Json<serde_json::Value>, ApiError> {
    app.store
        .get(crate::store::Tree::Meta, b"health")
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::StoreUnavailable,
                e.to_string(),
            )
        })?;
    Ok(Json(
        serde_json::json!({"ok": true, "version": env!("CARGO_PKG_VERSION")}),
    ))
}

async fn not_found(request: Request) -> ApiError {
    ApiError::not_found(
        ErrorCode::RouteNotFound,
        format!("no route for {}", request.uri().path()),
    )
}

async fn method_not_allowed(request: Request) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::MethodNotAllowed,
        format!(
            "{} is not allowed on {}",
            request.method(),
            request.uri().path()
        ),
    )
}

/// Ends any request that outlives the configured deadline with 504 `request_timeout`.
async fn deadline(State(limit): State<Duration>, request: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            ErrorCode::RequestTimeout,
            format!("request took longer than {} ms", limit.as_millis()),
        )
        .into_response(),
    }
}
