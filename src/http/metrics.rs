//! Request metrics as middleware, and `GET /metrics` (the counters live in `crate::metrics`).

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::app::AppState;
use crate::metrics::{ReceiptTotals, SandboxSnapshot};

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
    let pool = app.runtime.pool().stats().await;
    let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    app.metrics.observe_sandbox(SandboxSnapshot {
        live_isolates: count(pool.live_isolates),
        live_heap_bytes: count(pool.live_heap_bytes),
        spare_isolates: count(pool.spare_isolates),
        abandoned_isolates: count(pool.abandoned_isolates),
        isolates_created: pool.isolates_created,
        invocations: pool.invocations,
        recycled: pool.recycled,
        evictions: pool.evictions,
        overloaded: pool.overloaded,
        abandoned: pool.abandoned,
        engine_resets: pool.engine_resets,
        cpu_demotions: pool.cpu_demotions,
        worker_processes: count(pool.worker_pids.len()),
        worker_restarts: pool.worker_restarts,
        worker_recycles: pool.worker_recycles,
        quarantined_builders: count(pool.quarantined_builders),
        heavy_builders: count(pool.heavy_builders),
    });
    let (log_entries, checkpoints) = app.receipt_log.totals();
    let (batches, batched) = app.receipt_batches.totals();
    app.metrics.observe_receipts(ReceiptTotals {
        log_entries,
        checkpoints,
        batched,
        batches,
        own_signatures: app.receipt_signer.receipts_signed(),
    });
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        app.metrics.render(),
    )
}
