//! The `toolhost` command line: `toolhost serve` and `toolhost restore`, and the client
//! commands of `toolhost::cli` (`init`, `dev`, `deploy`, ..., `backup`; docs/cli.md).

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use toolhost::config::{Config, Quotas, StoreLocation};
use toolhost::server::Server;
use toolhost::x402::config::{
    CdpKey, FacilitatorAuth, FacilitatorConfig, NetworkConfig, OnChainConfig, RemoteConfig, Secret,
};

/// jemalloc instead of glibc's malloc, for the server and its sandbox workers (the same
/// binary). A call allocates and frees many small objects on several threads (request, JSON
/// values, the receipt and its records, the store's transaction); in a profile of free
/// `receipt_echo` calls glibc's malloc and free were about a fifth of the request threads' CPU.
/// jemalloc cut the server's CPU per call by about a fifth for 18 MB more RSS; mimalloc did as
/// well on CPU for 65 MB more (bench/RESULTS.md, "Allocator"). It needs no system call the
/// sandbox workers' seccomp list refuses once it has started.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(
    name = "toolhost",
    version,
    about = "Host paid AI/API tools: catalog, x402 payments, receipts, MCP, sandboxed JS handlers"
)]
struct Cli {
    /// Log output format.
    #[arg(
        long,
        global = true,
        env = "TOOLHOST_LOG_FORMAT",
        default_value = "text"
    )]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP server (on the embedded store, or a shared PostgreSQL with --store).
    Serve(Box<ServeArgs>),
    /// Make a new data dir of a backup (`toolhost backup`): the embedded store and its key
    /// files as they were; then `toolhost serve --data DIR` serves it.
    Restore(RestoreArgs),
    #[command(flatten)]
    Client(toolhost::cli::Command),
}

#[derive(clap::Args)]
struct RestoreArgs {
    /// The backup file.
    #[arg(long)]
    from: PathBuf,
    /// The data dir to make: it must not exist, or be empty.
    #[arg(long)]
    data: PathBuf,
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "TOOLHOST_ADDR", default_value = "127.0.0.1:8402")]
    addr: SocketAddr,
    /// Data directory of the embedded store (store, generated admin token and keys); unused with
    /// a PostgreSQL --store.
    #[arg(long, env = "TOOLHOST_DATA", default_value = "./data")]
    data: PathBuf,
    /// Where state lives: `embedded` (sled in DATA/store, the default) or a PostgreSQL URL
    /// (`postgres://user@host/db`) shared by every node of a cluster.
    #[arg(
        long,
        env = "TOOLHOST_STORE",
        default_value = "embedded",
        hide_env_values = true
    )]
    store: StoreLocation,
    /// Page cache of the embedded store, in MiB (more keeps more of the store in memory).
    #[arg(long, env = "TOOLHOST_STORE_CACHE_MB", default_value_t = toolhost::config::DEFAULT_EMBEDDED_CACHE_BYTES / (1024 * 1024), value_parser = clap::value_parser!(u64).range(1..=65536))]
    store_cache_mb: u64,
    /// Public base URL for absolute links; defaults to http://ADDR.
    #[arg(long, env = "TOOLHOST_BASE_URL")]
    base_url: Option<String>,
    /// Admin token. When unset, one is generated on first start into DATA/admin_token (mode 0600) and printed once.
    #[arg(long, env = "TOOLHOST_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    /// Master key of endpoint secrets (64 hex digits). When unset, one is generated on first start into DATA/secrets_master_key (mode 0600).
    #[arg(long, env = "TOOLHOST_SECRETS_MASTER_KEY", hide_env_values = true)]
    secrets_master_key: Option<String>,
    /// Namespace of the catalog schema id (<namespace>.x402.hosted-endpoint-catalog.v1).
    #[arg(long, env = "TOOLHOST_CATALOG_NAMESPACE", default_value = "toolhost")]
    catalog_namespace: String,
    /// Seed the catalog from this fixtures directory instead of the built-in one.
    #[arg(long, env = "TOOLHOST_SEED_DIR")]
    seed_dir: Option<PathBuf>,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "TOOLHOST_BODY_LIMIT", default_value_t = 1024 * 1024)]
    body_limit: usize,
    /// Whole-request deadline in seconds.
    #[arg(long, env = "TOOLHOST_REQUEST_TIMEOUT_SECS", default_value_t = 30)]
    request_timeout_secs: u64,
    /// Seconds a connection may take to send a whole request head (also the idle time allowed
    /// between keep-alive requests) before it is closed.
    #[arg(long, env = "TOOLHOST_HEADER_READ_TIMEOUT_SECS", default_value_t = 10)]
    header_read_timeout_secs: u64,
    /// Open connections served at once; more are answered 503 `overloaded`. Default: 80% of
    /// the open-file limit (raised to the hard limit at start), less a reserve.
    #[arg(long, env = "TOOLHOST_MAX_CONNECTIONS")]
    max_connections: Option<usize>,
    /// Anonymous writes (quotes, free tool calls, builder registration attempts) allowed per
    /// client address and minute; 0 disables the limit (benchmarks).
    #[arg(
        long,
        env = "TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE",
        default_value_t = 600
    )]
    anonymous_writes_per_minute: u32,
    /// How many of those one client may make at once before the per-minute rate applies.
    #[arg(long, env = "TOOLHOST_ANONYMOUS_WRITES_BURST", default_value_t = 120)]
    anonymous_writes_burst: u32,
    #[command(flatten)]
    admission: AdmissionArgs,
    /// Days receipts of free calls (no money moved) are kept; older ones are deleted in the
    /// background (paid receipts are kept for good).
    #[arg(
        long,
        env = "TOOLHOST_FREE_RECEIPT_RETENTION_DAYS",
        default_value_t = 30
    )]
    free_receipt_retention_days: u64,
    /// Days builder events are kept.
    #[arg(long, env = "TOOLHOST_EVENT_RETENTION_DAYS", default_value_t = 90)]
    event_retention_days: u64,
    /// Days a deleted endpoint's slug stays reserved for its former owner (0: free at once).
    #[arg(
        long,
        env = "TOOLHOST_DELETED_SLUG_RESERVATION_DAYS",
        default_value_t = 30
    )]
    deleted_slug_reservation_days: u64,
    /// DEV ONLY: let outbound requests (readiness checks, handler HTTP) reach loopback addresses.
    #[arg(long, env = "TOOLHOST_DEV_ALLOW_LOOPBACK")]
    dev_allow_loopback: bool,
    /// An endpoint whose time limit is over this many seconds is long-running: `POST /ai/invoke`
    /// answers it 409 `streaming_required` unless the caller accepts `text/event-stream`.
    #[arg(long, env = "TOOLHOST_LONG_RUNNING_AFTER_SECS", default_value_t = 10)]
    long_running_after_secs: u64,
    /// Default wall-clock limit of one JS handler invocation, in milliseconds.
    #[arg(long, env = "TOOLHOST_JS_TIMEOUT_MS", default_value_t = 2000)]
    js_timeout_ms: u64,
    /// How long past a JS call's time limit its caller still waits for an engine that has not
    /// stopped (busy in garbage collection or native code), in milliseconds; then the caller
    /// is answered and the isolate thread abandoned.
    #[arg(long, env = "TOOLHOST_JS_TIMEOUT_GRACE_MS", default_value_t = 250)]
    js_timeout_grace_ms: u64,
    /// Worker processes that run builders' JavaScript (each confined: no keys, no files, no
    /// network; an owner's endpoints share one).
    #[arg(long, env = "TOOLHOST_SANDBOX_WORKERS", default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=64))]
    sandbox_workers: u16,
    /// A sandbox worker is replaced by a fresh one (its calls finish first) once it has
    /// dropped this many isolates (recycled, evicted, retired): the JavaScript engine binding
    /// keeps a little of each dropped isolate (0.3 to 0.5 MiB) until its process ends.
    #[arg(long, env = "TOOLHOST_SANDBOX_WORKER_RECYCLE_AFTER", default_value_t = sandbox::WorkerOptions::DEFAULT_RECYCLE_AFTER_DROPPED, value_parser = clap::value_parser!(u64).range(1..))]
    sandbox_worker_recycle_after: u64,
    /// Accepted and ignored, so that earlier command lines still start: it recycled a worker
    /// by the heap of the isolates it had dropped, which the engine now gives back.
    #[arg(
        long,
        env = "TOOLHOST_SANDBOX_WORKER_RECYCLE_AFTER_HEAP_MB",
        hide = true
    )]
    sandbox_worker_recycle_after_heap_mb: Option<u64>,
    /// Development only: run JavaScript on threads of the server process instead of in worker
    /// processes. Faster to start and to debug, but the isolate is then the only wall between a
    /// handler and the server's keys, secrets and store.
    #[arg(long, env = "TOOLHOST_SANDBOX_IN_PROCESS")]
    sandbox_in_process: bool,
    /// CPU that builders whose calls run long bursts (50 ms of CPU, or a lost isolate, within
    /// the last minute) may use together in each sandbox worker, in percent of one core; past
    /// it their calls pause so that other builders' calls find the cores free (0: no limit
    /// beyond their lowest CPU priority).
    #[arg(long, env = "TOOLHOST_JS_HEAVY_CPU_PERCENT", default_value_t = (sandbox::PoolConfig::DEFAULT_HEAVY_CPU_PER_SEC.as_millis() / 10) as u32)]
    js_heavy_cpu_percent: u32,
    /// Default heap limit of a JS isolate, in MiB.
    #[arg(long, env = "TOOLHOST_JS_HEAP_MB", default_value_t = 64)]
    js_heap_mb: usize,
    /// Memory all JS isolates together may claim, in MiB, each counted at its heap limit;
    /// beyond it idle isolates are evicted, and calls that would exceed it get 429 `overloaded`.
    #[arg(long, env = "TOOLHOST_JS_MEMORY_BUDGET_MB", default_value_t = 1024)]
    js_memory_budget_mb: usize,
    /// Live JS isolates one builder's endpoints may hold at once.
    #[arg(long, env = "TOOLHOST_JS_ISOLATES_PER_BUILDER", default_value_t = 8)]
    js_isolates_per_builder: usize,
    /// Heap limits of one builder's live isolates, summed, in MiB.
    #[arg(long, env = "TOOLHOST_JS_HEAP_PER_BUILDER_MB", default_value_t = 256)]
    js_heap_per_builder_mb: usize,
    /// Heap limits, summed, every builder can count on however many others fill the memory
    /// budget, in MiB: past it a builder may not take the budget's last this many MiB (at most
    /// half of a worker's share), and evicts only idle isolates of its own or of builders also
    /// past theirs.
    #[arg(
        long,
        env = "TOOLHOST_JS_HEAP_FLOOR_PER_BUILDER_MB",
        default_value_t = 128
    )]
    js_heap_floor_per_builder_mb: usize,
    /// kv keys all of one builder's endpoints may hold together (each endpoint also has its own
    /// quota of 10,000); a handler write past it is refused with `quota_exceeded`.
    #[arg(long, env = "TOOLHOST_BUILDER_KV_KEYS", default_value_t = Quotas::DEFAULT_BUILDER_KV_KEYS)]
    builder_kv_keys: u64,
    /// kv bytes all of one builder's endpoints may hold together, in MiB.
    #[arg(long, env = "TOOLHOST_BUILDER_KV_MB", default_value_t = Quotas::DEFAULT_BUILDER_KV_MB)]
    builder_kv_mb: u64,
    /// File bytes (uploaded and handler-written) all of one builder's endpoints may hold
    /// together, in MiB.
    #[arg(long, env = "TOOLHOST_BUILDER_FILES_MB", default_value_t = Quotas::DEFAULT_BUILDER_FILES_MB)]
    builder_files_mb: u64,
    /// Bytes, in KiB, one builder's handlers may write to kv and files per second on this node
    /// once their burst is spent; a write that would wait longer than 250 ms for its turn is
    /// refused with `resource_limit`. 0: unpaced.
    #[arg(long, env = "TOOLHOST_BUILDER_WRITE_KB_PER_SEC", default_value_t = Quotas::DEFAULT_BUILDER_WRITE_KB_PER_SEC)]
    builder_write_kb_per_sec: u64,
    /// Bytes, in MiB, one builder's handlers may write at once before the pace applies (also
    /// the largest single write).
    #[arg(long, env = "TOOLHOST_BUILDER_WRITE_BURST_MB", default_value_t = Quotas::DEFAULT_BUILDER_WRITE_BURST_MB)]
    builder_write_burst_mb: u64,
    /// Isolates one endpoint may scale to under load (default: the number of cores).
    #[arg(long, env = "TOOLHOST_ISOLATES_PER_ENDPOINT")]
    isolates_per_endpoint: Option<usize>,
    /// Address that receives x402 payments (EVM address).
    #[arg(long, env = "TOOLHOST_PAY_TO")]
    pay_to: Option<String>,
    /// Browser origins allowed on the MCP endpoint besides the service's own, comma-separated (`*` for any).
    #[arg(long, env = "TOOLHOST_MCP_ALLOWED_ORIGINS", value_delimiter = ',')]
    mcp_allowed_origins: Vec<String>,
    /// Base URL of a remote x402 facilitator (POST /verify, POST /settle, GET /supported).
    /// Unset: payments are verified locally and settlement is recorded off-chain, or submitted
    /// on-chain with --evm-rpc-url and a settler key.
    #[arg(long, env = "TOOLHOST_FACILITATOR_URL", conflicts_with = "evm_rpc_url")]
    facilitator_url: Option<String>,
    /// File holding a bearer token sent to the facilitator (`Authorization: Bearer ...`), e.g.
    /// PayAI's; owner-only. Alternatively the token itself in TOOLHOST_FACILITATOR_BEARER.
    #[arg(long, env = "TOOLHOST_FACILITATOR_BEARER_FILE")]
    facilitator_bearer_file: Option<PathBuf>,
    /// The id of a Coinbase Developer Platform API key: each request to the facilitator then
    /// carries a JWT signed with it (the CDP facilitator). Not needed when the key file is the
    /// JSON file CDP hands out, which names it.
    #[arg(long, env = "TOOLHOST_FACILITATOR_CDP_KEY_ID")]
    facilitator_cdp_key_id: Option<String>,
    /// File holding that key's secret (Ed25519 in base64, an EC P-256 PEM, or CDP's JSON key
    /// file); owner-only. Alternatively the secret itself in TOOLHOST_FACILITATOR_CDP_KEY_SECRET.
    #[arg(long, env = "TOOLHOST_FACILITATOR_CDP_KEY_FILE")]
    facilitator_cdp_key_file: Option<PathBuf>,
    /// A further header sent to the facilitator, as `Name=file:PATH` (an owner-only file) or
    /// `Name=env:VARIABLE` (read at start-up); repeat for several (env: `;`-separated).
    #[arg(
        long = "facilitator-header",
        env = "TOOLHOST_FACILITATOR_HEADERS",
        value_delimiter = ';'
    )]
    facilitator_headers: Vec<String>,
    /// How often, in seconds, the facilitator's GET /supported is read again.
    #[arg(long, env = "TOOLHOST_FACILITATOR_SUPPORTED_REFRESH_SECS", default_value_t = 300,
        value_parser = clap::value_parser!(u64).range(1..))]
    facilitator_supported_refresh_secs: u64,
    /// Accepted payment network (repeat for several; env: `;`-separated): `base-sepolia`, `base`,
    /// or a custom `v1Name,eip155:<chainId>,<asset>,<eip712Name>,<eip712Version>[,permit2]` (`permit2`: the asset is paid by Permit2). Default: base-sepolia.
    #[arg(long = "network", env = "TOOLHOST_NETWORKS", value_delimiter = ';')]
    networks: Vec<NetworkConfig>,
    /// EVM JSON-RPC URL of the accepted network's chain: the local facilitator then submits each
    /// payment's transferWithAuthorization on-chain (needs a settler key).
    #[arg(long, env = "TOOLHOST_EVM_RPC_URL", hide_env_values = true)]
    evm_rpc_url: Option<String>,
    /// File holding the settler's hex private key (the account that submits transfers and pays
    /// their gas); must not be readable by group or others. Alternatively, the key itself in the
    /// environment variable TOOLHOST_SETTLER_KEY (there is no flag for it: argv is visible to
    /// every local user).
    #[arg(long, env = "TOOLHOST_SETTLER_KEY_FILE")]
    settler_key_file: Option<PathBuf>,
    /// Seconds an x402 authorization must remain valid beyond now to be accepted (it is settled
    /// after the handler runs; one that expires meanwhile can never be collected).
    #[arg(long, env = "TOOLHOST_SETTLE_MARGIN_SECS", default_value_t = 30)]
    settle_margin_secs: u64,
    /// How long to wait for a settlement transaction to be mined before recording it as pending.
    #[arg(long, env = "TOOLHOST_SETTLEMENT_TIMEOUT_SECS", default_value_t = 15)]
    settlement_timeout_secs: u64,
    /// Age in seconds after which a payment's nonce claim belongs to no live call, so recovery
    /// releases it (or records the sale when the chain says the transfer happened). Default:
    /// request timeout + settlement timeout + 60. On the embedded store every claim found at
    /// start-up is resolved whatever its age (no other process can hold one).
    #[arg(long, env = "TOOLHOST_CLAIM_STALE_AFTER_SECS")]
    claim_stale_after_secs: Option<u64>,
    /// How often, in seconds, orphaned nonce claims and pending on-chain settlements are checked.
    #[arg(long, env = "TOOLHOST_RECOVERY_INTERVAL_SECS", default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..))]
    recovery_interval_secs: u64,
}

/// The settler's key itself, read from the environment only.
const SETTLER_KEY_ENV: &str = "TOOLHOST_SETTLER_KEY";

impl ServeArgs {
    fn into_config(self) -> Result<Config, String> {
        let mut config = Config::new(self.data);
        config.addr = self.addr;
        config.store = self.store;
        config.embedded_cache_bytes = self.store_cache_mb * 1024 * 1024;
        config.base_url = self.base_url;
        config.admin_token = self.admin_token.filter(|t| !t.is_empty());
        config.secrets_master_key = self.secrets_master_key.filter(|k| !k.is_empty());
        config.catalog_namespace = self.catalog_namespace;
        config.seed_dir = self.seed_dir;
        config.limits.body_bytes = self.body_limit;
        if self.sandbox_worker_recycle_after_heap_mb.is_some() {
            tracing::warn!(
                "--sandbox-worker-recycle-after-heap-mb has no effect any more: a dropped \
                 isolate's heap is given back (see --sandbox-worker-recycle-after)"
            );
        }
        config.limits.request_timeout = Duration::from_secs(self.request_timeout_secs);
        if self.header_read_timeout_secs == 0 {
            return Err("--header-read-timeout-secs must be at least 1".into());
        }
        config.limits.header_read_timeout = Duration::from_secs(self.header_read_timeout_secs);
        if self.max_connections == Some(0) {
            return Err("--max-connections must be at least 1".into());
        }
        config.limits.max_connections = self.max_connections;
        config.limits.anonymous_writes =
            (self.anonymous_writes_per_minute > 0).then_some(toolhost::config::RateLimit {
                per_minute: self.anonymous_writes_per_minute,
                burst: self.anonymous_writes_burst.max(1),
            });
        config.limits.admission = self.admission.into_config()?;
        const DAY_SECS: u64 = 86_400;
        config.retention.free_receipts =
            Duration::from_secs(self.free_receipt_retention_days.saturating_mul(DAY_SECS));
        config.retention.events =
            Duration::from_secs(self.event_retention_days.saturating_mul(DAY_SECS));
        config.retention.deleted_slugs =
            Duration::from_secs(self.deleted_slug_reservation_days.saturating_mul(DAY_SECS));
        config.outbound.allow_loopback = self.dev_allow_loopback;
        config.long_running_after = Duration::from_secs(self.long_running_after_secs);
        config.runtime.isolation = if self.sandbox_in_process {
            sandbox::Isolation::InProcess
        } else {
            toolhost::config::worker_isolation(
                usize::from(self.sandbox_workers),
                self.sandbox_worker_recycle_after,
                std::env::var("RUST_LOG").unwrap_or_else(|_| "info".to_owned()),
            )?
        };
        let pool = &mut config.runtime.pool;
        pool.default_limits.timeout = Duration::from_millis(self.js_timeout_ms);
        pool.timeout_grace = Duration::from_millis(self.js_timeout_grace_ms);
        pool.heavy_cpu_per_sec = Duration::from_millis(u64::from(self.js_heavy_cpu_percent) * 10);
        const MIB: usize = 1024 * 1024;
        pool.default_limits.heap_bytes = self.js_heap_mb.saturating_mul(MIB);
        pool.memory_budget_bytes = self.js_memory_budget_mb.saturating_mul(MIB);
        pool.max_isolates_per_owner = self.js_isolates_per_builder;
        pool.max_heap_per_owner_bytes = self.js_heap_per_builder_mb.saturating_mul(MIB);
        pool.heap_floor_per_owner_bytes = self.js_heap_floor_per_builder_mb.saturating_mul(MIB);
        if pool.default_limits.heap_bytes
            > pool.max_heap_per_owner_bytes.min(pool.memory_budget_bytes)
        {
            return Err(
                "--js-heap-mb must fit in --js-heap-per-builder-mb and --js-memory-budget-mb"
                    .into(),
            );
        }
        if let Some(n) = self.isolates_per_endpoint.filter(|n| *n > 0) {
            pool.instances_per_endpoint = n;
        }
        let quotas = &mut config.runtime.quotas;
        quotas.builder_kv_keys = self.builder_kv_keys;
        quotas.builder_kv_bytes = self.builder_kv_mb.saturating_mul(MIB as u64);
        quotas.builder_file_bytes = self.builder_files_mb.saturating_mul(MIB as u64);
        quotas.builder_write_bytes_per_sec = self.builder_write_kb_per_sec.saturating_mul(1024);
        quotas.builder_write_burst_bytes = self.builder_write_burst_mb.saturating_mul(MIB as u64);
        if quotas.builder_write_bytes_per_sec > 0 && self.builder_write_burst_mb == 0 {
            return Err(
                "--builder-write-burst-mb must be at least 1 (the largest single write) while \
                 writes are paced"
                    .into(),
            );
        }
        config.payment.pay_to = self.pay_to;
        if self.settle_margin_secs >= config.payment.max_timeout_seconds {
            return Err(format!(
                "--settle-margin-secs must be below the {} s an authorization is asked to last",
                config.payment.max_timeout_seconds
            ));
        }
        config.payment.settle_margin = Duration::from_secs(self.settle_margin_secs);
        if !self.networks.is_empty() {
            config.payment.networks = self.networks;
        }
        config.mcp.allowed_origins = self.mcp_allowed_origins;
        config.payment.claim_stale_after = self.claim_stale_after_secs.map(Duration::from_secs);
        config.payment.recovery_interval = Duration::from_secs(self.recovery_interval_secs);
        let settler_key = secret(
            "the settler key",
            "--settler-key-file",
            self.settler_key_file,
            SETTLER_KEY_ENV,
        )?;
        match (self.evm_rpc_url.filter(|u| !u.is_empty()), settler_key) {
            (Some(rpc_url), Some(settler_key)) => {
                config.payment.facilitator = FacilitatorConfig::OnChain(OnChainConfig {
                    rpc_url,
                    settler_key,
                    confirmation_timeout: Duration::from_secs(self.settlement_timeout_secs),
                });
            }
            (Some(_), None) => {
                return Err(format!(
                    "--evm-rpc-url needs a settler key (--settler-key-file or {SETTLER_KEY_ENV})"
                ))
            }
            (None, Some(_)) => return Err("a settler key needs --evm-rpc-url".into()),
            (None, None) => {}
        }
        let auth = FacilitatorAuth {
            bearer: secret(
                "the facilitator's bearer token",
                "--facilitator-bearer-file",
                self.facilitator_bearer_file,
                FACILITATOR_BEARER_ENV,
            )?,
            cdp: secret(
                "the CDP key's secret",
                "--facilitator-cdp-key-file",
                self.facilitator_cdp_key_file,
                FACILITATOR_CDP_KEY_ENV,
            )?
            .map(|secret| CdpKey {
                id: self.facilitator_cdp_key_id.clone(),
                secret,
            }),
            headers: (self.facilitator_headers.iter())
                .filter(|h| !h.trim().is_empty())
                .map(|h| header_secret(h))
                .collect::<Result<_, _>>()?,
        };
        if auth.cdp.is_none() && self.facilitator_cdp_key_id.is_some() {
            return Err(format!(
                "--facilitator-cdp-key-id needs the key's secret (--facilitator-cdp-key-file or {FACILITATOR_CDP_KEY_ENV})"
            ));
        }
        match self.facilitator_url.filter(|u| !u.is_empty()) {
            Some(url) => {
                config.payment.facilitator = FacilitatorConfig::Remote(RemoteConfig {
                    url,
                    auth,
                    supported_refresh: Duration::from_secs(self.facilitator_supported_refresh_secs),
                })
            }
            None if auth != FacilitatorAuth::default() => {
                return Err("facilitator credentials need --facilitator-url".into())
            }
            None => {}
        }
        Ok(config)
    }
}

/// The facilitator's bearer token itself, read from the environment only.
const FACILITATOR_BEARER_ENV: &str = "TOOLHOST_FACILITATOR_BEARER";
/// The CDP key's secret itself, read from the environment only.
const FACILITATOR_CDP_KEY_ENV: &str = "TOOLHOST_FACILITATOR_CDP_KEY_SECRET";

/// A secret given by a file flag or, itself, by an environment variable (never by a flag:
/// argv is visible to every local user); at most one of the two.
fn secret(
    what: &str,
    flag: &str,
    file: Option<PathBuf>,
    env: &str,
) -> Result<Option<Secret>, String> {
    let value = std::env::var(env).ok().filter(|v| !v.trim().is_empty());
    match (file, value) {
        (Some(_), Some(_)) => Err(format!("give {what} once: {flag} or {env}")),
        (Some(path), None) => Ok(Some(Secret::File(path))),
        (None, Some(value)) => Ok(Some(Secret::Value(value))),
        (None, None) => Ok(None),
    }
}

/// `--facilitator-header Name=file:PATH` or `Name=env:VARIABLE`.
fn header_secret(spec: &str) -> Result<(String, Secret), String> {
    // Named by its header name only: a value given here by mistake is not repeated in a log.
    let shape = || {
        let name = spec.split('=').next().unwrap_or_default().trim();
        format!("--facilitator-header {name}: expected Name=file:PATH or Name=env:VARIABLE")
    };
    let (name, source) = spec.split_once('=').ok_or_else(shape)?;
    let name = name.trim().to_string();
    let secret = match source.trim().split_once(':') {
        Some(("file", path)) if !path.is_empty() => Secret::File(PathBuf::from(path)),
        Some(("env", variable)) if !variable.is_empty() => Secret::Value(
            std::env::var(variable)
                .map_err(|_| format!("--facilitator-header {name}: {variable} is not set"))?,
        ),
        _ => return Err(shape()),
    };
    Ok((name, secret))
}

fn init_tracing(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,tower_http=info"));
    // Colours only for a person at a terminal (as the CLI's output: not with `NO_COLOR`): a log
    // file or collector gets plain text, and no call pays for escape codes around its span.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

/// `toolhost sandbox-worker` is how the server starts its sandbox worker processes (see
/// `sandbox::run_worker`); it is not for people, so it is not in `--help`, and it is chosen
/// before anything else runs: no tracing set-up, no runtime, nothing read from the environment.
fn main() -> std::process::ExitCode {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == toolhost::config::SANDBOX_WORKER_ARG)
        && std::env::args_os().len() == 2
    {
        return sandbox::run_worker();
    }
    // The QuickJS backend caches compiled modules on disk (under ~/.cache, or /tmp), keyed by
    // a fast non-cryptographic hash: a module whose hash collides with another's would load the
    // other's bytecode, and a cache dir others can write would inject bytecode. Off, before any
    // thread exists (workers get the same switch from `sandbox::confine::prepare_command`).
    std::env::set_var("V82JSC_NO_BC_CACHE", "1");
    match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(run()),
        Err(e) => {
            eprintln!("toolhost: cannot start the async runtime: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(*args, cli.log_format).await,
        Command::Restore(args) => restore(&args).await,
        Command::Client(command) => toolhost::cli::run(command).await,
    }
}

async fn restore(args: &RestoreArgs) -> std::process::ExitCode {
    match toolhost::backup::restore(&args.from, &args.data).await {
        Ok(contents) => {
            println!(
                "restored {} entries and {} key files into {}; serve it with `toolhost serve --data {}`",
                contents.entries,
                contents.key_files,
                args.data.display(),
                args.data.display()
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolhost restore: {e}; nothing was restored");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn serve(args: ServeArgs, log_format: LogFormat) -> std::process::ExitCode {
    init_tracing(log_format);
    let config = match args.into_config() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("toolhost: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match toolhost::server::raise_file_limit() {
        Ok(limit) => tracing::info!(open_files = limit, "open-file limit"),
        Err(e) => tracing::warn!(error = %e, "could not raise the open-file limit"),
    }
    if config.outbound.allow_loopback {
        tracing::warn!("dev flag: outbound requests may reach loopback addresses");
    }
    let server = match Server::bind(config).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("toolhost: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    // Before "listening" is printed: from then on a SIGTERM means a clean shutdown.
    let shutdown = toolhost::server::shutdown_signal();
    if let Some(token) = &server.notes.generated_admin_token {
        // Printed once, on the start that generated it; afterwards it is only where it is kept.
        let kept = match &server.app.config.store {
            StoreLocation::Embedded => {
                format!("{}/admin_token", server.app.config.data_dir.display())
            }
            StoreLocation::Postgres(_) => "the shared store; every node loads it".to_owned(),
        };
        println!("Generated admin token (saved to {kept}, shown once): {token}");
    }
    if !server.notes.seeded.is_empty() {
        tracing::info!(endpoints = ?server.notes.seeded, "seeded catalog");
    }
    tracing::info!(addr = %server.local_addr(), base_url = server.app.urls.base(), "toolhost listening");
    println!("toolhost listening on http://{}", server.local_addr());
    match server.run(shutdown).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolhost: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// What a request may cost before it is served (docs/api.md, "Limits on anonymous callers").
#[derive(clap::Args, Debug)]
struct AdmissionArgs {
    /// MiB of request bodies (and their parsed JSON) in flight, server-wide; a body that does
    /// not fit is answered 503 `overloaded`.
    #[arg(long, env = "TOOLHOST_BODY_BUDGET_MB", default_value_t = 64)]
    body_budget_mb: usize,
    /// MiB of that budget one client address may hold; over it, 429 `rate_limited`.
    #[arg(long, env = "TOOLHOST_BODY_BUDGET_PER_CLIENT_MB", default_value_t = 16)]
    body_budget_per_client_mb: usize,
    /// Seconds a whole request body may take to arrive (408 `request_timeout` after).
    #[arg(long, env = "TOOLHOST_BODY_READ_TIMEOUT_SECS", default_value_t = 10)]
    body_read_timeout_secs: u64,
    /// Least average rate, in bytes per second, of a request body after a grace period.
    #[arg(long, env = "TOOLHOST_BODY_MIN_BYTES_PER_SEC", default_value_t = 16 * 1024)]
    body_min_bytes_per_sec: u64,
    /// Seconds of that grace period.
    #[arg(long, env = "TOOLHOST_BODY_GRACE_SECS", default_value_t = 2)]
    body_grace_secs: u64,
    /// Open connections one client address (IPv6: one /64) may hold; more get 503 `overloaded`.
    #[arg(
        long,
        env = "TOOLHOST_MAX_CONNECTIONS_PER_CLIENT",
        default_value_t = 512
    )]
    max_connections_per_client: usize,
    /// New connections one client address may open per second (after a burst of twice as
    /// many); the rest are served in their turn, up to 2 s later. 0 disables it.
    #[arg(
        long,
        env = "TOOLHOST_NEW_CONNECTIONS_PER_CLIENT_PER_SEC",
        default_value_t = 100
    )]
    new_connections_per_client_per_sec: u32,
    /// Bytes a connection may buffer for a request head (at least 8192); a longer head gets 431.
    #[arg(long, env = "TOOLHOST_MAX_HEAD_BYTES", default_value_t = 64 * 1024)]
    max_head_bytes: usize,
    /// Deepest nesting of arrays and objects in a JSON body (400 `malformed_json` beyond).
    #[arg(long, env = "TOOLHOST_JSON_MAX_DEPTH", default_value_t = 64)]
    json_max_depth: usize,
    /// Most values in a JSON body (413 `body_too_large` beyond).
    #[arg(long, env = "TOOLHOST_JSON_MAX_VALUES", default_value_t = 100_000)]
    json_max_values: usize,
    /// KiB per second of request bodies answered with a client error (4xx) one client address
    /// may send, after a burst; past it, its bodies get 429 `rate_limited` before they are
    /// read. 0 disables it.
    #[arg(long, env = "TOOLHOST_REFUSED_BODY_KIB_PER_SEC", default_value_t = 256)]
    refused_body_kib_per_sec: u64,
    /// KiB of that burst (at least the body limit's worth is sensible).
    #[arg(long, env = "TOOLHOST_REFUSED_BODY_BURST_KIB", default_value_t = 2048)]
    refused_body_burst_kib: u64,
    /// 429 answers one client address gets per second at once, after a burst of twice as
    /// many; past it, each next one is held back until the pace allows (at most 2 s). 0
    /// disables it.
    #[arg(
        long,
        env = "TOOLHOST_RATE_LIMITED_ANSWERS_PER_CLIENT_PER_SEC",
        default_value_t = 20
    )]
    rate_limited_answers_per_client_per_sec: u32,
}

impl AdmissionArgs {
    fn into_config(self) -> Result<toolhost::config::Admission, String> {
        const MIB: usize = 1024 * 1024;
        if self.max_head_bytes < 8192 {
            return Err("--max-head-bytes must be at least 8192".into());
        }
        if self.body_read_timeout_secs == 0 || self.max_connections_per_client == 0 {
            return Err(
                "--body-read-timeout-secs and --max-connections-per-client must be at least 1"
                    .into(),
            );
        }
        Ok(toolhost::config::Admission {
            body_budget_bytes: self.body_budget_mb.saturating_mul(MIB),
            body_budget_per_client_bytes: self.body_budget_per_client_mb.saturating_mul(MIB),
            body_read_timeout: Duration::from_secs(self.body_read_timeout_secs),
            body_min_bytes_per_sec: self.body_min_bytes_per_sec,
            body_grace: Duration::from_secs(self.body_grace_secs),
            max_connections_per_client: self.max_connections_per_client,
            new_connections_per_client_per_sec: self.new_connections_per_client_per_sec,
            max_head_bytes: self.max_head_bytes,
            json_max_depth: self.json_max_depth,
            json_max_values: self.json_max_values,
            refused_body_bytes_per_sec: self.refused_body_kib_per_sec.saturating_mul(1024),
            refused_body_burst_bytes: self.refused_body_burst_kib.saturating_mul(1024),
            rate_limited_answers_per_client_per_sec: self.rate_limited_answers_per_client_per_sec,
        })
    }
}
