//! The top of the crate: every route and middleware of the service (the HTTP routes, MCP, the
//! web pages, the well-known documents), in one function tests can drive.

use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderName, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;
use crate::error::{ApiError, ErrorCode};
use crate::http::{admission, metrics, openapi, routes};
use crate::payments::settling::{self, Settling};
use crate::rate_limit;
use crate::{endpoints, mcp};

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
        .routes(routes!(routes::endpoints::run_draft))
        .routes(routes!(routes::revisions::list_revisions))
        .routes(routes!(routes::revisions::get_revision))
        .routes(routes!(routes::revisions::rollback))
        .routes(routes!(
            routes::revisions::rollout_status,
            routes::revisions::start_rollout,
            routes::revisions::end_rollout
        ))
        .routes(routes!(routes::revisions::promote_rollout))
        .routes(routes!(
            routes::secrets::list_secrets,
            routes::secrets::change_secrets
        ))
        .routes(routes!(routes::logs::endpoint_logs))
        .routes(routes!(routes::files::get_file))
        .routes(routes!(routes::builders::register))
        .routes(routes!(routes::builders::rotate_key))
        .routes(routes!(routes::events::builder_events))
        .routes(routes!(routes::endpoints::builder_endpoints))
        .routes(routes!(endpoints::templates::creator_skill))
        .routes(routes!(routes::builders::admin_create_builder))
        .routes(routes!(routes::endpoints::review_endpoint))
        .routes(routes!(routes::endpoints::review_queue))
        .routes(routes!(routes::endpoints::grant_endpoint))
        .routes(routes!(routes::endpoints::grant_queue))
        .routes(routes!(routes::manifest::manifest))
        .routes(routes!(crate::well_known::x402_discovery))
        .routes(routes!(crate::well_known::mcp_server_json))
        .routes(routes!(crate::well_known::bazaar_resources))
        .routes(routes!(
            routes::tools::invoke_get,
            routes::tools::invoke_post
        ))
        .routes(routes!(routes::receipts::get_receipt))
        .routes(routes!(
            routes::receipts::refund,
            routes::receipts::get_refund
        ))
        .routes(routes!(routes::receipts::inclusion))
        .routes(routes!(routes::receipts::consistency))
        .routes(routes!(routes::receipts::checkpoint))
        .routes(routes!(routes::receipts::well_known))
        .routes(routes!(routes::safety::policy))
        .routes(routes!(mcp::transport::post))
        // Every other method (GET and DELETE included: MCP clients try them) answers 405 with
        // `Allow: POST`, the one the document lists.
        .route(
            "/ai/mcp",
            axum::routing::MethodRouter::new().fallback(mcp::transport::method_not_allowed),
        )
        .routes(routes!(
            routes::payments::issue_credit,
            routes::payments::list_credits
        ))
        .routes(routes!(routes::payments::supported))
        .routes(routes!(routes::invoke::invoke))
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
        .routes(routes!(routes::revenue::admin_revenue))
        .routes(routes!(routes::backup::backup))
        .routes(routes!(crate::web::handler_types))
}

pub fn build_router(app: AppState) -> Router {
    let (router, document) = api_routes().split_for_parts();
    let document = std::sync::Arc::new(openapi::complete(document));
    let timeout = Deadline {
        limit: app.config.limits.request_timeout,
        settlement: crate::payments::recovery::settlement_bound(&app.config),
    };
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
        // Tiles' paths have slashes (a wildcard), which the OpenAPI document cannot declare:
        // docs/receipt-log.md describes them, as C2SP `tlog-tiles` does.
        .route("/ai/receipts/log/tile/{*path}", get(routes::receipts::tile))
        .merge(crate::web::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // One layer for the whole stack: `Router::layer` wraps every route in a boxed service
        // of its own per layer, and a request clones its route's service, so nine layers
        // applied one by one made nine boxes (and their clones' clones) a request; composed
        // first, a route's stack is one box (bench/RESULTS.md, "The middleware stack as one
        // layer"). The first layer listed is the outermost.
        .layer(
            ServiceBuilder::new()
                .layer(CatchPanicLayer::custom(|_panic| {
                    ApiError::internal("handler panicked").into_response()
                }))
                .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
                .layer(TraceLayer::new_for_http().make_span_with(|request: &Request| {
                    let request_id = request
                        .headers()
                        .get(REQUEST_ID)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default();
                    tracing::info_span!("request", method = %request.method(), uri = %request.uri().path(), request_id)
                }))
                .layer(PropagateRequestIdLayer::new(REQUEST_ID))
                .layer(DefaultBodyLimit::max(app.config.limits.body_bytes))
                .layer(middleware::from_fn_with_state(timeout, deadline))
                .layer(middleware::from_fn_with_state(app.clone(), metrics::track))
                .layer(middleware::from_fn_with_state(
                    admission::Admission::new(&app.config.limits),
                    admission::admit,
                ))
                .layer(middleware::from_fn_with_state(limiter, rate_limit::limit)),
        )
        .with_state(app)
}

/// The answer of `GET /healthz`.
#[derive(serde::Serialize, utoipa::ToSchema)]
struct Health {
    /// Always true.
    ok: bool,
    /// The server's version.
    version: &'static str,
}

/// `GET /healthz`: the process is up and the store answers.
#[utoipa::path(get, path = "/healthz", tag = "ops", responses((status = 200, description = "Healthy", body = Health), (status = 503, description = "Store unavailable", body = crate::error::ErrorBody)))]
async fn health(State(app): State<AppState>) -> Result<Json<Health>, ApiError> {
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
    Ok(Json(Health {
        ok: true,
        version: env!("CARGO_PKG_VERSION"),
    }))
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

/// The whole-request deadline, and how long a call that is settling its payment may outlive
/// it.
#[derive(Clone, Copy)]
struct Deadline {
    limit: Duration,
    /// The settlement's own bound (its confirmation or facilitator timeout, plus a margin).
    settlement: Duration,
}

/// Ends any request that outlives the configured deadline with 504 `request_timeout`, except
/// one that is settling its payment when the deadline passes: the handler's work is done, the
/// money may be moving, and a 504 then would leave the payer charged without the result or the
/// receipt. Such a call is given up to the settlement's own bound more, and answers normally
/// (200 with the receipt, or the settlement's own error). Should even that pass, the 504 names
/// the receipt the settlement is writing (`details.receiptId`, `details.receiptUrl`).
async fn deadline(State(deadline): State<Deadline>, request: Request, next: Next) -> Response {
    let settling = std::sync::Arc::new(Settling::default());
    let run = settling::scope(settling.clone(), next.run(request));
    tokio::pin!(run);
    if let Ok(response) = tokio::time::timeout(deadline.limit, &mut run).await {
        return response;
    }
    let timed_out = || {
        ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            ErrorCode::RequestTimeout,
            format!("request took longer than {} ms", deadline.limit.as_millis()),
        )
    };
    let receipt = settling.receipt();
    let Some((receipt_id, receipt_url)) = receipt else {
        return timed_out().into_response();
    };
    tracing::info!(receipt = %receipt_id, "the request deadline passed while the payment settles; waiting for the settlement");
    match tokio::time::timeout(deadline.settlement, run).await {
        Ok(response) => response,
        Err(_) => {
            let mut error = timed_out();
            error.message = format!(
                "the handler finished and its payment was still settling after {} ms more; \
                 if the settlement succeeds, its receipt is {receipt_url}",
                deadline.settlement.as_millis()
            );
            error
                .with_details(
                    serde_json::json!({"receiptId": receipt_id, "receiptUrl": receipt_url}),
                )
                .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    use super::*;

    /// A route that "settles" (or not) and then takes `millis`.
    fn app(settles: bool, millis: u64) -> Router {
        let deadline = Deadline {
            limit: Duration::from_millis(100),
            settlement: Duration::from_millis(300),
        };
        Router::new()
            .route(
                "/",
                get(move || async move {
                    if settles {
                        crate::payments::settling::begins(
                            "rcpt_x",
                            "http://test/ai/receipts/rcpt_x",
                        );
                    }
                    tokio::time::sleep(Duration::from_millis(millis)).await;
                    "done"
                }),
            )
            .layer(middleware::from_fn_with_state(deadline, super::deadline))
    }

    async fn answer(router: Router) -> (StatusCode, serde_json::Value) {
        let response = router
            .oneshot(Request::get("/").body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
        )
    }

    #[tokio::test]
    async fn the_deadline_waits_for_a_settling_call_within_the_settlement_bound() {
        // Not settling: cut at the deadline.
        let (status, body) = answer(app(false, 200)).await;
        assert_eq!(status, StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(body["error"]["code"], "request_timeout");
        assert!(body["error"].get("details").is_none(), "{body}");
        // Settling past the deadline: answered normally.
        let (status, _) = answer(app(true, 200)).await;
        assert_eq!(status, StatusCode::OK);
        // Settling past the settlement bound too: 504 naming the receipt.
        let (status, body) = answer(app(true, 1_000)).await;
        assert_eq!(status, StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(body["error"]["code"], "request_timeout");
        assert_eq!(body["error"]["details"]["receiptId"], "rcpt_x");
        assert!(body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("http://test/ai/receipts/rcpt_x"));
    }
}
