//! Pool configuration: per-endpoint capabilities and limits, and the pool-wide defaults.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What an endpoint's handler may reach through `ctx`. Everything is off by default.
///
/// The check is made in Rust inside each op, so a handler that somehow reached a raw op
/// would still be refused.
#[derive(Clone, Copy, Default, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", default)]
pub struct Capabilities {
    /// `ctx.kv`: the endpoint's key-value store.
    pub kv: bool,
    /// `ctx.files`: the endpoint's file area (assets uploaded with the endpoint, files it writes).
    pub files: bool,
    /// `ctx.httpGetJson`: outbound GET requests through the server's SSRF-guarded client.
    pub http_get_json: bool,
    /// `fetch`: outbound requests of any method through the server's SSRF-guarded client, to
    /// the endpoint's allowed hosts only.
    pub fetch: bool,
    /// `ctx.log`: log lines returned in [`crate::InvocationReport::logs`].
    pub logs: bool,
}

/// Per-endpoint resource limits; [`PoolConfig::default_limits`] applies when an endpoint sets none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Heap of the endpoint's isolate. Exceeding it ends the invocation with `ResourceLimit`
    /// and recycles the isolate.
    pub heap_bytes: usize,
    /// Wall-clock budget of one invocation, including the time spent awaiting host calls.
    /// The caller gets its answer at the latest [`PoolConfig::timeout_grace`] after it, even
    /// when the engine does not stop in time.
    pub timeout: Duration,
}

/// Sizes the sandbox validates before it calls the [`crate::Host`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageLimits {
    /// Longest KV key, in UTF-8 bytes.
    pub max_key_bytes: usize,
    /// Largest KV value, measured as its JSON text.
    pub max_value_bytes: usize,
    /// Largest file a handler may write.
    pub max_file_bytes: usize,
    /// Longest file path after normalization.
    pub max_path_bytes: usize,
    /// Upper bound of `ctx.kv.list({ limit })`; larger requests are clamped.
    pub max_list_limit: usize,
    /// Checks and mutations of one `ctx.kv.atomic()` together: each is a read in the commit.
    pub max_atomic_ops: usize,
    /// Largest `ctx.kv.atomic()`, measured as its JSON text (keys, values and all).
    pub max_atomic_bytes: usize,
}

impl Default for StorageLimits {
    fn default() -> Self {
        StorageLimits {
            max_key_bytes: 512,
            max_value_bytes: 64 * 1024,
            max_file_bytes: 1024 * 1024,
            max_path_bytes: 256,
            max_list_limit: 1000,
            max_atomic_ops: 100,
            max_atomic_bytes: 1024 * 1024,
        }
    }
}

/// Caps of a handler's `fetch`, per call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchLimits {
    /// Largest request body; a larger one is refused (`too_large`) before anything is sent.
    pub max_request_body_bytes: usize,
    /// Largest response body; reading past it errors the body's stream (`response_too_large`).
    pub max_response_body_bytes: usize,
    /// Requests of one call in progress at once (sent, or with a body not read to its end).
    pub max_concurrent: usize,
    /// Requests one call may start in all.
    pub max_per_call: usize,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits {
            max_request_body_bytes: 1024 * 1024,
            max_response_body_bytes: 8 * 1024 * 1024,
            max_concurrent: 6,
            max_per_call: 50,
        }
    }
}

/// Configuration of a [`crate::Pool`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PoolConfig {
    /// Live isolates across all endpoints; beyond it the least recently used idle one is evicted.
    pub max_isolates: usize,
    /// Memory all live isolates together may claim, each counted at its heap limit (what it may
    /// grow to, not what it uses now: an isolate cannot be stopped from growing to its limit
    /// once it runs, so only the limit bounds the worst case). Beyond it idle isolates are
    /// evicted; when none is idle the call is refused with `Overloaded`. Spares (blank runtimes
    /// of a few MiB, bounded by `spare_isolates`) are not counted.
    pub memory_budget_bytes: usize,
    /// Live isolates of one owner's endpoints ([`crate::EndpointCode::owner`]) at once.
    pub max_isolates_per_owner: usize,
    /// Heap limits of one owner's live isolates, summed, as for `memory_budget_bytes`.
    pub max_heap_per_owner_bytes: usize,
    /// Heap (counted as for `memory_budget_bytes`) every owner can count on however many
    /// others fill the pool. Past it an owner's new isolate may not take the last
    /// `heap_floor_per_owner_bytes` of the budget (at most half of it), which stays for owners
    /// below theirs, and makes room only by evicting idle isolates of its own or of owners
    /// also past theirs: a few builders filling the pool with busy isolates leave room for the
    /// others' cold starts, and do not push out the warm isolates of builders using little.
    pub heap_floor_per_owner_bytes: usize,
    /// Limits of endpoints whose [`crate::EndpointCode::limits`] is `None`.
    pub default_limits: Limits,
    /// Largest handler result, measured as the JSON text of the response body.
    pub max_result_bytes: usize,
    /// Log bytes kept per invocation; the rest is dropped behind one `[log truncated]` line.
    pub max_log_bytes_per_invocation: usize,
    /// Log lines kept per invocation (the truncation marker is not counted).
    pub max_log_lines: usize,
    /// Invocations of one endpoint admitted at once (running plus queued); beyond it
    /// `invoke` answers `Overloaded` at once instead of queueing.
    pub max_concurrent_per_endpoint: usize,
    /// Isolates one endpoint may use in parallel. Each instance is its own isolate on its own
    /// thread, owned by that endpoint alone; a second one starts only when the first is busy.
    pub instances_per_endpoint: usize,
    /// Unbound isolate threads kept ready (runtime built, glue loaded) for cold starts; they
    /// come on top of `max_isolates`. 0 disables them: cold starts then build the runtime.
    pub spare_isolates: usize,
    /// An isolate is replaced by a fresh one after this many invocations, which bounds what
    /// a handler can accumulate in its globals and what a slow leak can grow to.
    pub recycle_after_invocations: u64,
    /// `Retry-After` suggested with `Overloaded`.
    pub overload_retry_after_secs: u64,
    /// How long past a call's time limit its caller still waits for the isolate thread to
    /// stop. Past it the caller is answered `Timeout` (`ResourceLimit` if the heap limit was
    /// reached) and the thread, stuck in the engine or in native code, is abandoned: it never
    /// serves another call and ends when it comes back (see `max_abandoned_isolates`).
    pub timeout_grace: Duration,
    /// Abandoned isolate threads (see `timeout_grace`) that may still be stuck at once. Each
    /// counts against every limit as a live isolate of its endpoint until it ends. At the cap
    /// no new isolate starts (cold starts answer `Overloaded`) until one of them ends; isolates
    /// already live keep serving.
    pub max_abandoned_isolates: usize,
    /// Upper bound of `ctx.httpGetJson(url, { timeoutMs })`; it is also cut to the time left
    /// in the invocation.
    pub max_http_timeout: Duration,
    /// Key, value, file and path sizes.
    pub storage: StorageLimits,
    /// Body sizes and request counts of `fetch`; its time is the call's.
    #[serde(default)]
    pub fetch: FetchLimits,
    /// A builder whose call took 50 ms of CPU or more has its isolate threads moved to the
    /// lowest CPU priority for a minute, so that its long bursts yield the cores to other
    /// builders' short calls (`limits::cpu`). Off when the isolates run in the server's own
    /// process ([`crate::Isolation::InProcess`]): a thread started from a demoted one inherits
    /// its priority, and there the server's own threads may be started from isolate threads.
    #[serde(default = "cpu_shares_on")]
    pub cpu_shares: bool,
    /// CPU time the demoted threads of heavy builders (see `cpu_shares`) may use together per
    /// second; past it they pause, so that the cores are free when other builders' calls wake
    /// (`limits::throttle`). Zero: no limit beyond their priority.
    #[serde(default = "heavy_cpu_per_sec")]
    pub heavy_cpu_per_sec: Duration,
    /// Whether a heavy builder's new isolates (`limits::cpu`) are held back: counted as past
    /// its floor whatever its heap, and refused rather than waiting for room. So where heavy
    /// builders share a pool with light ones (the shared workers); not in the workers apart,
    /// where every builder is heavy and their budget is what holds them.
    #[serde(default = "hold_back_heavy_on")]
    pub hold_back_heavy: bool,
}

fn heavy_cpu_per_sec() -> Duration {
    PoolConfig::DEFAULT_HEAVY_CPU_PER_SEC
}

fn cpu_shares_on() -> bool {
    true
}

fn hold_back_heavy_on() -> bool {
    true
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            max_isolates: 256,
            memory_budget_bytes: 1024 * 1024 * 1024,
            max_isolates_per_owner: 8,
            max_heap_per_owner_bytes: 256 * 1024 * 1024,
            heap_floor_per_owner_bytes: 128 * 1024 * 1024,
            default_limits: Limits {
                heap_bytes: 64 * 1024 * 1024,
                timeout: Duration::from_secs(2),
            },
            max_result_bytes: 1024 * 1024,
            max_log_bytes_per_invocation: 64 * 1024,
            max_log_lines: 100,
            max_concurrent_per_endpoint: 64,
            instances_per_endpoint: 1,
            spare_isolates: 2,
            recycle_after_invocations: 10_000,
            overload_retry_after_secs: 1,
            timeout_grace: Duration::from_millis(250),
            max_abandoned_isolates: 16,
            max_http_timeout: Duration::from_secs(10),
            storage: StorageLimits::default(),
            fetch: FetchLimits::default(),
            cpu_shares: true,
            heavy_cpu_per_sec: PoolConfig::DEFAULT_HEAVY_CPU_PER_SEC,
            hold_back_heavy: true,
        }
    }
}

impl PoolConfig {
    /// Default of [`PoolConfig::heavy_cpu_per_sec`]: half a core.
    pub const DEFAULT_HEAVY_CPU_PER_SEC: Duration = Duration::from_millis(500);

    /// The largest heap limit one isolate of a builder's endpoint (`builder`) or of the
    /// operator's can have in a pool of this configuration: the budget, and for a builder its
    /// heap cap too. An isolate limited to more never finds room in the pool.
    pub fn largest_heap(&self, builder: bool) -> usize {
        if builder {
            self.memory_budget_bytes.min(self.max_heap_per_owner_bytes)
        } else {
            self.memory_budget_bytes
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_use_camel_case() {
        let caps: Capabilities =
            serde_json::from_str(r#"{"kv":true,"files":false,"httpGetJson":true,"logs":true}"#)
                .unwrap();
        assert!(caps.http_get_json && caps.kv && caps.logs && !caps.files);
        let json = serde_json::to_value(caps).unwrap();
        assert_eq!(json["httpGetJson"], serde_json::json!(true));
    }
}
