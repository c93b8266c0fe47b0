//! The top of the crate: every route and middleware of the service (the HTTP routes, MCP, the
//! web pages, the well-known documents), in one function tests can drive.

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

use crate::app::AppState;
use crate::error::{ApiError, ErrorCode};
use crate::http::{metrics, openapi, rate_limit, routes};
use crate::{endpoints, mcp, tools};

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The documented API: every route here lands in `/openapi.json`.
fn api_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::base_document())
        .routes(routes!(health))
        .routes(routes!(metrics::metrics))
        .routes(routes!(routes::catalog::list_endpoints))
        .routes(routes!(
            routes::catalog::get_endpoint,
            routes::endpoints::patch_endpoint,
            routes::endpoints::delete_endpoint
        ))
        .routes(routes!(routes::endpoints::create_endpoint))
        .routes(routes!(
            routes::secrets::list_secrets,
            routes::secrets::change_secrets
        ))
        .routes(routes!(routes::logs::endpoint_logs))
        .routes(routes!(routes::builders::register))
        .routes(routes!(routes::builders::rotate_key))
        .routes(routes!(routes::events::builder_events))
        .routes(routes!(routes::endpoints::builder_endpoints))
        .routes(routes!(endpoints::templates::creator_skill))
        .routes(routes!(routes::builders::admin_create_builder))
        .routes(routes!(routes::endpoints::review_endpoint))
        .routes(routes!(routes::endpoints::review_queue))
        .routes(routes!(routes::manifest::manifest))
        .routes(routes!(crate::well_known::x402_discovery))
        .routes(routes!(crate::well_known::mcp_server_json))
        .routes(routes!(
            tools::routes::invoke_get,
            tools::routes::invoke_post
        ))
        .routes(routes!(routes::receipts::get_receipt))
        .routes(routes!(routes::safety::policy))
        .routes(routes!(mcp::transport::post))
        // Undocumented on purpose: they exist only to answer 405 the way MCP clients expect.
        .route(
            "/ai/mcp",
            get(mcp::transport::method_not_allowed).delete(mcp::transport::method_not_allowed),
        )
        .routes(routes!(
            routes::payments::issue_credit,
            routes::payments::list_credits
        ))
        .routes(routes!(routes::payments::supported))
        .routes(routes!(tools::invoke::invoke))
        .routes(routes!(routes::quotes::quote))
        .routes(routes!(routes::quotes::conversion_quote))
        .routes(routes!(routes::quotes::external_quote))
        .routes(routes!(routes::revenue::revenue))
        .routes(routes!(
            routes::revenue::get_payout_settings,
            routes::revenue::set_payout_settings
        ))
        .routes(routes!(
            routes::revenue::list_payouts,
            routes::revenue::create_payout
        ))
        .routes(routes!(routes::revenue::mark_paid))
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
