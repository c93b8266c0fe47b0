//! Prometheus metrics: requests and latency by route and status, and the isolate pool's state
//! (live, spare and abandoned isolates; totals of invocations, recycling, evictions, overload and
//! abandonment), read at each scrape. One registry per [`Metrics`],
//! no globals, so several servers in one test process keep separate counts. The HTTP layer
//! feeds it (`http::metrics::track`) and serves it (`GET /metrics`).

use std::sync::Mutex;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatencyLabels {
    method: String,
    route: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

pub struct Metrics {
    registry: Mutex<Registry>,
    requests: Family<RequestLabels, Counter>,
    latency: HistogramFamily<LatencyLabels>,
    sandbox: SandboxMetrics,
    /// Receipts this node appended to the receipt log, and the checkpoints it signed for them:
    /// their ratio is how many calls one signature covers.
    receipt_log_entries: Counter,
    receipt_log_checkpoints: Counter,
    /// Free calls' receipts proven in signed batches, and the batches' notes signed.
    receipts_batched: Counter,
    receipt_batches: Counter,
    /// Receipts signed by themselves (paid calls'): with the checkpoints and the batches' notes,
    /// every signature made.
    receipt_signatures: Counter,
}

/// What this node's receipts took since it started, as the receipt domain counts it: calls
/// per signature is (`log_entries` + `batched`) / (`checkpoints` + `batches` + `own_signatures`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ReceiptTotals {
    /// Receipts appended to the receipt log, and the checkpoints signed for them.
    pub log_entries: u64,
    pub checkpoints: u64,
    /// Free receipts proven in batches, and the batches' notes signed.
    pub batched: u64,
    pub batches: u64,
    /// Receipts signed by themselves.
    pub own_signatures: u64,
}

/// The isolate pool's state as of the last scrape (see [`Metrics::observe_sandbox`]).
#[derive(Default)]
struct SandboxMetrics {
    live_isolates: Gauge,
    live_heap_bytes: Gauge,
    spare_isolates: Gauge,
    abandoned_isolates: Gauge,
    worker_processes: Gauge,
    quarantined_builders: Gauge,
    heavy_builders: Gauge,
    isolates_created: Counter,
    invocations: Counter,
    recycled: Counter,
    evictions: Counter,
    overloaded: Counter,
    abandoned: Counter,
    engine_resets: Counter,
    cpu_demotions: Counter,
    worker_restarts: Counter,
    worker_recycles: Counter,
}

/// What the isolate pool reports, in plain numbers (the HTTP layer reads it from the runtime
/// when `/metrics` is scraped).
#[derive(Clone, Copy, Debug, Default)]
pub struct SandboxSnapshot {
    pub live_isolates: u64,
    pub live_heap_bytes: u64,
    pub spare_isolates: u64,
    pub abandoned_isolates: u64,
    pub isolates_created: u64,
    pub invocations: u64,
    pub recycled: u64,
    pub evictions: u64,
    pub overloaded: u64,
    pub abandoned: u64,
    pub engine_resets: u64,
    pub cpu_demotions: u64,
    pub worker_processes: u64,
    pub quarantined_builders: u64,
    pub heavy_builders: u64,
    pub worker_restarts: u64,
    pub worker_recycles: u64,
}

fn latency_histogram() -> Histogram {
    // 100 µs .. ~6.5 s
    Histogram::new(exponential_buckets(0.0001, 2.0, 17))
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("toolhost");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency: HistogramFamily<LatencyLabels> =
            Family::new_with_constructor(latency_histogram);
        registry.register(
            "http_requests",
            "HTTP requests by route and status",
            requests.clone(),
        );
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency by route",
            latency.clone(),
        );
        let sandbox = SandboxMetrics::default();
        let gauges: [(&str, &str, &Gauge); 7] = [
            ("sandbox_live_isolates", "Isolate threads bound to endpoints", &sandbox.live_isolates),
            ("sandbox_live_heap_bytes", "Heap limits of live and abandoned isolates, summed (what counts against the memory budget)", &sandbox.live_heap_bytes),
            ("sandbox_spare_isolates", "Unbound isolate threads kept for cold starts", &sandbox.spare_isolates),
            ("sandbox_abandoned_isolates", "Isolate threads past their hard deadline that have not ended yet", &sandbox.abandoned_isolates),
            ("sandbox_worker_processes", "Live sandbox worker processes (0 with --sandbox-in-process)", &sandbox.worker_processes),
            ("sandbox_quarantined_builders", "Builders served by the quarantine worker (a worker crashed during their calls, or their calls lost isolates)", &sandbox.quarantined_builders),
            ("sandbox_heavy_builders", "Builders served by the heavy worker (their calls ran long bursts of CPU)", &sandbox.heavy_builders),
        ];
        for (name, help, gauge) in gauges {
            registry.register(name, help, gauge.clone());
        }
        let counters: [(&str, &str, &Counter); 10] = [
            (
                "sandbox_isolates_created",
                "Isolates built",
                &sandbox.isolates_created,
            ),
            (
                "sandbox_invocations",
                "Invocations that reached an isolate thread",
                &sandbox.invocations,
            ),
            (
                "sandbox_recycled",
                "Isolates replaced after a limit hit or their recycling count",
                &sandbox.recycled,
            ),
            (
                "sandbox_evictions",
                "Isolates evicted to stay within the isolate cap",
                &sandbox.evictions,
            ),
            (
                "sandbox_overloaded",
                "Invocations refused as overloaded",
                &sandbox.overloaded,
            ),
            (
                "sandbox_abandoned",
                "Isolate threads abandoned past their hard deadline",
                &sandbox.abandoned,
            ),
            (
                "sandbox_engine_resets",
                "Calls served again on a fresh isolate thread because their thread's engine could no longer load a module that had loaded before",
                &sandbox.engine_resets,
            ),
            (
                "sandbox_cpu_demotions",
                "Isolate threads moved to the lowest CPU priority because their builder's calls ran long CPU bursts",
                &sandbox.cpu_demotions,
            ),
            (
                "sandbox_worker_restarts",
                "Sandbox worker processes started to replace one that crashed, hung, broke the protocol or held an isolate that would not stop",
                &sandbox.worker_restarts,
            ),
            (
                "sandbox_worker_recycles",
                "Sandbox worker processes replaced as planned after building their share of isolates",
                &sandbox.worker_recycles,
            ),
        ];
        for (name, help, counter) in counters {
            registry.register(name, help, counter.clone());
        }
        let receipt_log_entries = Counter::default();
        let receipt_log_checkpoints = Counter::default();
        registry.register(
            "receipt_log_entries",
            "Receipts this node appended to the receipt log",
            receipt_log_entries.clone(),
        );
        registry.register(
            "receipt_log_checkpoints",
            "Checkpoints this node signed, one per group of receipts appended",
            receipt_log_checkpoints.clone(),
        );
        let receipts_batched = Counter::default();
        let receipt_batches = Counter::default();
        registry.register(
            "receipts_batched",
            "Free calls' receipts this node proved in signed batches (they are not in the log)",
            receipts_batched.clone(),
        );
        registry.register(
            "receipt_batches",
            "Batches of free receipts this node signed, one note each",
            receipt_batches.clone(),
        );
        let receipt_signatures = Counter::default();
        registry.register(
            "receipt_signatures",
            "Receipts this node signed by themselves (paid calls'; a free call's is proven by its batch)",
            receipt_signatures.clone(),
        );
        Self {
            registry: Mutex::new(registry),
            requests,
            latency,
            sandbox,
            receipt_log_entries,
            receipt_log_checkpoints,
            receipts_batched,
            receipt_batches,
            receipt_signatures,
        }
    }
}

impl Metrics {
    pub fn render(&self) -> String {
        let mut out = String::new();
        let registry = self.registry.lock().unwrap_or_else(|p| p.into_inner());
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
        out
    }

    /// Takes the isolate pool's numbers for the next exposition.
    pub fn observe_sandbox(&self, snapshot: SandboxSnapshot) {
        let set = |gauge: &Gauge, value: u64| {
            gauge.set(i64::try_from(value).unwrap_or(i64::MAX));
        };
        set(&self.sandbox.live_isolates, snapshot.live_isolates);
        set(&self.sandbox.live_heap_bytes, snapshot.live_heap_bytes);
        set(&self.sandbox.spare_isolates, snapshot.spare_isolates);
        set(
            &self.sandbox.abandoned_isolates,
            snapshot.abandoned_isolates,
        );
        follow(&self.sandbox.isolates_created, snapshot.isolates_created);
        follow(&self.sandbox.invocations, snapshot.invocations);
        follow(&self.sandbox.recycled, snapshot.recycled);
        follow(&self.sandbox.evictions, snapshot.evictions);
        follow(&self.sandbox.overloaded, snapshot.overloaded);
        follow(&self.sandbox.abandoned, snapshot.abandoned);
        follow(&self.sandbox.engine_resets, snapshot.engine_resets);
        follow(&self.sandbox.cpu_demotions, snapshot.cpu_demotions);
        follow(&self.sandbox.worker_restarts, snapshot.worker_restarts);
        follow(&self.sandbox.worker_recycles, snapshot.worker_recycles);
        set(&self.sandbox.worker_processes, snapshot.worker_processes);
        set(
            &self.sandbox.quarantined_builders,
            snapshot.quarantined_builders,
        );
        set(&self.sandbox.heavy_builders, snapshot.heavy_builders);
    }

    /// Takes the receipt log's totals (entries appended, checkpoints signed) for the next
    /// exposition.
    /// The receipts' totals as of the scrape.
    pub fn observe_receipts(&self, totals: ReceiptTotals) {
        follow(&self.receipt_log_entries, totals.log_entries);
        follow(&self.receipt_log_checkpoints, totals.checkpoints);
        follow(&self.receipts_batched, totals.batched);
        follow(&self.receipt_batches, totals.batches);
        follow(&self.receipt_signatures, totals.own_signatures);
    }

    pub fn observe(&self, method: &str, route: &str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                method: method.to_string(),
                route: route.to_string(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&LatencyLabels {
                method: method.to_string(),
                route: route.to_string(),
            })
            .observe(seconds);
    }
}

/// A counter following a total that only grows (the pool's, the log's), by the difference.
fn follow(counter: &Counter, total: u64) {
    counter.inc_by(total.saturating_sub(counter.get()));
}
