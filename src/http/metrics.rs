//! Request metrics as middleware, and `GET /metrics` (the counters live in `crate::metrics`).

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::app::AppState;

/// Middleware recording every request under its route template (`/tools/{slug}`), so label
/// cardinality stays bounded whatever paths clients send.
pub async fn track(State(app): State<AppState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let method = request.method().as_str().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    app.metrics.observe(
        &method,
        &route,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

/// `GET /metrics`: Prometheus text exposition.
#[utoipa::path(get, path = "/metrics", tag = "ops", responses((status = 200, description = "Prometheus text format", content_type = "text/plain")))]
pub async fn metrics(State(app): State<AppState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        app.metrics.render(),
    )
}
