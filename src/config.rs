//! All settings in one struct. The CLI (`main.rs`, flags and their `TOOLHOST_*` environment
//! variables) and the tests both build a [`Config`]; the service reads its settings from here.
//! The exceptions are development and test aids read where they act: `TOOLHOST_DEV_WEB_DIR`
//! (serve `web/` from disk) and `TOOLHOST_PG_BINDIR` (where the test cluster finds PostgreSQL).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::money::Usd;
use crate::x402::config::{FacilitatorConfig, NetworkConfig};
use crate::x402::Terms;

#[derive(Clone, Debug)]
pub struct Config {
    /// Where the HTTP server listens.
    pub addr: SocketAddr,
    /// Directory of the embedded store and generated secrets (admin token, keys).
    pub data_dir: PathBuf,
    /// Where state lives: the embedded store in `data_dir`, or a PostgreSQL database shared by
    /// every node.
    pub store: StoreLocation,
    /// Memory the embedded store may use to cache its pages. sled's own default (1 GiB) lets
    /// the server grow with everything it writes for a long while; reads past the cache come
    /// from the OS page cache.
    pub embedded_cache_bytes: u64,
    /// Public base URL used in every absolute URL the service returns. `None`: derived from the
    /// bound address (`http://127.0.0.1:PORT`), which is right for local use and tests.
    pub base_url: Option<String>,
    /// Admin token; generated into the data dir on first start when absent.
    pub admin_token: Option<String>,
    /// Master key of endpoint secrets, 64 hex digits; generated into the data dir
    /// (`secrets_master_key`, mode 0600) on first start when absent.
    pub secrets_master_key: Option<String>,
    /// First segment of the catalog schema id: `<namespace>.x402.hosted-endpoint-catalog.v1`.
    pub catalog_namespace: String,
    /// Directory to seed the catalog from instead of the fixtures compiled into the binary.
    pub seed_dir: Option<PathBuf>,
    pub limits: HttpLimits,
    pub outbound: OutboundPolicy,
    pub payment: PaymentConfig,
    pub mcp: McpConfig,
    /// An endpoint whose time limit exceeds this is long-running: `POST /ai/invoke` answers it
    /// 409 `streaming_required` unless the caller accepts `text/event-stream`.
    pub long_running_after: Duration,
    /// How long an `/ai/quote` stays valid.
    pub quote_ttl: Duration,
    /// How long what nobody paid for is kept (see `maintenance`).
    pub retention: Retention,
    /// Prices and costs behind `/ai/conversion/quote`.
    pub conversion: ConversionTable,
    /// The platform's cut of each builder sale, in basis points (1000 = 10%).
    pub platform_fee_bps: u64,
    pub runtime: RuntimeConfig,
}

/// How often the payment recovery passes run (orphaned claims, pending settlements).
pub const DEFAULT_RECOVERY_INTERVAL: Duration = Duration::from_secs(30);

/// Retention of records anonymous callers can create, swept in the background.
#[derive(Clone, Debug)]
pub struct Retention {
    /// Receipts of free calls (no money moved) are deleted this long after they were issued.
    pub free_receipts: Duration,
    /// Builder events are deleted this long after they happened.
    pub events: Duration,
    /// Expired quotes are deleted this long after their expiry; until then they answer
    /// `quote_expired` rather than `quote_not_found`.
    pub quote_grace: Duration,
    /// Time between two sweeps.
    pub sweep_every: Duration,
    /// A deleted endpoint's slug stays its former owner's this long (zero: free at once).
    pub deleted_slugs: Duration,
}

const DAY: Duration = Duration::from_secs(86_400);

pub use crate::store::DEFAULT_EMBEDDED_CACHE_BYTES;

/// Where a node keeps its state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreLocation {
    /// sled in `DATA/store`: one process, nothing to install.
    Embedded,
    /// A PostgreSQL URL (`postgres://user@host/db`); nodes sharing it form a cluster.
    Postgres(String),
}

impl std::str::FromStr for StoreLocation {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() || text == "embedded" || text == "sled" {
            Ok(StoreLocation::Embedded)
        } else if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Ok(StoreLocation::Postgres(text.to_owned()))
        } else {
            Err("expected `embedded` or a postgres:// URL".into())
        }
    }
}

/// A static price table for conversion quotes: operator-maintained, dated, never fetched live.
#[derive(Clone, Debug)]
pub struct ConversionTable {
    /// When these prices were taken (RFC 3339); every quote repeats it.
    pub as_of: String,
    pub assets: Vec<PricedAsset>,
    /// Swap fee in basis points of the swapped value.
    pub swap_fee_bps: u64,
    /// Flat bridge fee.
    pub bridge_fee: Usd,
}

#[derive(Clone, Debug)]
pub struct PricedAsset {
    /// CAIP-2 network id.
    pub network: String,
    pub symbol: String,
    pub decimals: u32,
    /// Price of one whole token, in micro-dollars.
    pub usd_micros: u64,
    /// Typical gas cost of one transaction on this network.
    pub gas: Usd,
}

impl ConversionTable {
    /// A conservative built-in table; operators replace it with current prices.
    pub fn builtin() -> Self {
        let asset = |network: &str, symbol: &str, decimals, usd_micros, gas_units| PricedAsset {
            network: network.into(),
            symbol: symbol.into(),
            decimals,
            usd_micros,
            gas: Usd::from_units(gas_units),
        };
        Self {
            as_of: "2026-11-01T00:00:00Z".into(),
            assets: vec![
                asset("eip155:84532", "USDC", 6, 1_000_000, 0),
                asset("eip155:84532", "ETH", 18, 3_000_000_000, 0),
                asset("eip155:8453", "USDC", 6, 1_000_000, 2_000),
                asset("eip155:8453", "ETH", 18, 3_000_000_000, 2_000),
                asset("eip155:1", "USDC", 6, 1_000_000, 1_500_000),
                asset("eip155:1", "ETH", 18, 3_000_000_000, 1_500_000),
                asset("eip155:42161", "USDC", 6, 1_000_000, 10_000),
                asset("eip155:137", "USDC", 6, 1_000_000, 5_000),
            ],
            swap_fee_bps: 30,
            bridge_fee: Usd::from_units(100_000),
        }
    }
}

/// The JS runtime: the isolate pool's limits and the per-endpoint storage quotas.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    pub pool: sandbox::PoolConfig,
    /// Where isolates run: worker processes (what `toolhost serve` uses unless told
    /// `--sandbox-in-process`), or this process (the default here, for in-process tests).
    pub isolation: sandbox::Isolation,
    pub quotas: Quotas,
    /// Answer 502 `output_invalid` when a handler's result breaks its outputSchema, instead of
    /// only logging it.
    pub reject_invalid_output: bool,
}

/// The argument that makes the `toolhost` binary a sandbox worker (`main` checks it first).
pub const SANDBOX_WORKER_ARG: &str = "sandbox-worker";

/// Isolates in `count` worker processes of this very executable (`toolhost sandbox-worker`),
/// as `toolhost serve` and `toolhost dev` run them. `log_filter` is the workers' `RUST_LOG`.
pub fn worker_isolation(
    count: usize,
    recycle_after_dropped: u64,
    log_filter: String,
) -> Result<sandbox::Isolation, String> {
    let program = std::env::current_exe()
        .map_err(|e| format!("cannot find the toolhost executable for its sandbox workers: {e}"))?;
    Ok(sandbox::Isolation::Workers(sandbox::WorkerOptions {
        command: sandbox::WorkerCommand {
            program,
            args: vec![SANDBOX_WORKER_ARG.to_owned()],
            log_filter,
        },
        count,
        recycle_after_dropped,
    }))
}

#[derive(Clone, Debug)]
pub struct HttpLimits {
    /// Largest accepted request body.
    pub body_bytes: usize,
    /// Whole-request deadline, answered with 504 `request_timeout`.
    pub request_timeout: Duration,
    /// A connection that does not send a whole request head within this time (from its start,
    /// or from the end of its previous request) is closed.
    pub header_read_timeout: Duration,
    /// Open connections served at once; more are answered 503 `overloaded` and closed. `None`:
    /// derived from the open-file limit (80% of it, less a reserve).
    pub max_connections: Option<usize>,
    /// Anonymous writes (quotes, free tool calls, builder registration attempts) allowed per
    /// client address; `None` disables the limit (benchmarks, tests).
    pub anonymous_writes: Option<RateLimit>,
    /// What a request may cost before it is served (issue 43).
    pub admission: Admission,
}

/// Walls every request meets before a handler sees it, so an anonymous caller cannot exhaust
/// the server: the bytes of bodies in flight, slow bodies, connections per client, and the
/// shape of JSON. A client is its address (IPv6 grouped by /64).
#[derive(Clone, Debug)]
pub struct Admission {
    /// Bytes of request bodies (and of the JSON parsed from them) in flight, server-wide; a
    /// body that does not fit is answered 503 `overloaded` with `Retry-After` before it is read.
    pub body_budget_bytes: usize,
    /// One client's share of that budget; over it, 429 `rate_limited` with `Retry-After`.
    pub body_budget_per_client_bytes: usize,
    /// A whole body must arrive within this, else 408 `request_timeout` and the connection closes.
    pub body_read_timeout: Duration,
    /// ... and at this average rate at least, once `body_grace` has passed.
    pub body_min_bytes_per_sec: u64,
    pub body_grace: Duration,
    /// Open connections one client may hold; more are answered 503 `overloaded` and closed.
    pub max_connections_per_client: usize,
    /// New connections one client may open per second, after a burst of twice as many; the
    /// ones past it are served in their turn (accepted, then read when the client's pace
    /// allows: at most two seconds later), so a client cannot make the server parse heads
    /// and answer refusals as fast as it can reconnect. 0 disables it.
    pub new_connections_per_client_per_sec: u32,
    /// Bytes a connection buffers for a request head (hyper's read buffer, 400 KiB unless
    /// set; at least 8 KiB): a longer head is answered 431 and the connection closed.
    pub max_head_bytes: usize,
    /// Deepest nesting of arrays and objects in a JSON body (400 `malformed_json` beyond).
    pub json_max_depth: usize,
    /// Most values (scalars, arrays, objects) in a JSON body (413 `body_too_large` beyond).
    pub json_max_values: usize,
    /// Bytes of request bodies answered with a client error (4xx: invalid, unpaid, refused)
    /// one client may send per second, after a burst of `refused_body_burst_bytes`; past it,
    /// its bodies are answered 429 `rate_limited` before they are read. Reading, scanning and
    /// parsing a body is most of what an anonymous request costs, and a caller whose requests
    /// succeed never spends from it. 0 disables it.
    pub refused_body_bytes_per_sec: u64,
    pub refused_body_burst_bytes: u64,
    /// 429 answers one client gets per second at once, after a burst of twice as many; past
    /// that pace each next one is held back until the pace allows it (at most 2 s), holding
    /// its connection: a client that ignores `Retry-After` waits anyway, instead of making the
    /// server answer refusals as fast as it can ask. 0 disables it.
    pub rate_limited_answers_per_client_per_sec: u32,
}

impl Default for Admission {
    fn default() -> Self {
        Self {
            body_budget_bytes: 64 * 1024 * 1024,
            body_budget_per_client_bytes: 16 * 1024 * 1024,
            body_read_timeout: Duration::from_secs(10),
            body_min_bytes_per_sec: 16 * 1024,
            body_grace: Duration::from_secs(2),
            max_connections_per_client: 512,
            new_connections_per_client_per_sec: 100,
            max_head_bytes: 64 * 1024,
            json_max_depth: 64,
            json_max_values: 100_000,
            refused_body_bytes_per_sec: 256 * 1024,
            refused_body_burst_bytes: 2 * 1024 * 1024,
            rate_limited_answers_per_client_per_sec: 20,
        }
    }
}

/// A token bucket: `burst` at once, refilled at `per_minute`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    pub per_minute: u32,
    pub burst: u32,
}

/// Rules for every request the service makes on a caller's behalf (readiness checks, handler
/// `ctx.httpGetJson`, external x402 quotes).
#[derive(Clone, Debug)]
pub struct OutboundPolicy {
    /// Dev only: let outbound requests reach loopback addresses (local test peers). Private,
    /// link-local and other internal ranges stay refused even then.
    pub allow_loopback: bool,
    /// Dev only (`toolhost dev --allow-private-upstreams`): let outbound requests reach private
    /// networks too (10/8, 172.16/12, 192.168/16, fc00::/7). Link-local (cloud metadata) and
    /// the other internal ranges stay refused even then.
    pub allow_private: bool,
    pub timeout: Duration,
    pub max_response_bytes: usize,
    pub max_redirects: usize,
}

/// The MCP endpoint (`POST /ai/mcp`).
#[derive(Clone, Debug)]
pub struct McpConfig {
    /// Browser origins allowed to call the endpoint besides the service's own (the base URL's
    /// origin). Requests without `Origin` (agents, SDK clients) are always accepted; a foreign
    /// `Origin` is refused with 403, which stops DNS-rebinding pages from driving a local server.
    /// `*` allows every origin.
    pub allowed_origins: Vec<String>,
    /// Tools per `tools/list` page.
    pub page_size: usize,
}

/// What the service accepts as payment. Networks and assets are the x402 `exact` scheme's.
#[derive(Clone, Debug)]
pub struct PaymentConfig {
    /// The EVM address paid by callers. `None`: on test networks only, the address of a key
    /// generated into the data dir (`dev_pay_to_key`), so a fresh local server takes payments end
    /// to end; start-up refuses a mainnet network without an explicit address.
    pub pay_to: Option<String>,
    pub networks: Vec<NetworkConfig>,
    /// How long a signed authorization may stay valid when we ask for one.
    pub max_timeout_seconds: u64,
    /// How long an authorization must remain valid beyond now to be accepted: the handler runs
    /// and the transfer is submitted after verification, and one that expires meanwhile can
    /// never be collected.
    pub settle_margin: Duration,
    /// Fee to register as a builder.
    pub builder_registration_fee: Usd,
    /// Who verifies and settles x402 payments.
    pub facilitator: FacilitatorConfig,
    /// Age after which a nonce claim belongs to no live call and recovery resolves it. `None`:
    /// request timeout + settlement timeout + 60 s (see `payments::recovery`).
    pub claim_stale_after: Option<Duration>,
    /// How often orphaned claims and pending on-chain settlements are checked.
    pub recovery_interval: Duration,
}

impl PaymentConfig {
    /// What every offer asks, paid to `pay_to` (the configured address or the development one).
    pub fn terms<'a>(&'a self, pay_to: &'a str) -> Terms<'a> {
        Terms {
            networks: &self.networks,
            pay_to,
            max_timeout_seconds: self.max_timeout_seconds,
            settle_margin: self.settle_margin,
        }
    }
}

impl Config {
    /// Defaults for a data directory: local address, embedded seed, Base Sepolia payments.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 8402)),
            data_dir: data_dir.into(),
            store: StoreLocation::Embedded,
            embedded_cache_bytes: DEFAULT_EMBEDDED_CACHE_BYTES,
            base_url: None,
            admin_token: None,
            secrets_master_key: None,
            catalog_namespace: "toolhost".into(),
            seed_dir: None,
            limits: HttpLimits {
                body_bytes: 1024 * 1024,
                request_timeout: Duration::from_secs(30),
                header_read_timeout: Duration::from_secs(10),
                max_connections: None,
                anonymous_writes: Some(RateLimit {
                    per_minute: 600,
                    burst: 120,
                }),
                admission: Admission::default(),
            },
            outbound: OutboundPolicy {
                allow_loopback: false,
                allow_private: false,
                timeout: Duration::from_secs(5),
                max_response_bytes: 512 * 1024,
                max_redirects: 3,
            },
            payment: PaymentConfig {
                pay_to: None,
                networks: vec![NetworkConfig::base_sepolia()],
                max_timeout_seconds: 300,
                settle_margin: Duration::from_secs(30),
                builder_registration_fee: Usd::from_units(1_000_000),
                facilitator: FacilitatorConfig::Local,
                claim_stale_after: None,
                recovery_interval: DEFAULT_RECOVERY_INTERVAL,
            },
            mcp: McpConfig {
                allowed_origins: Vec::new(),
                page_size: 50,
            },
            long_running_after: Duration::from_secs(10),
            quote_ttl: Duration::from_secs(300),
            retention: Retention {
                free_receipts: DAY * 30,
                events: DAY * 90,
                quote_grace: Duration::from_secs(600),
                sweep_every: Duration::from_secs(60),
                deleted_slugs: DAY * 30,
            },
            conversion: ConversionTable::builtin(),
            platform_fee_bps: 1000,
            runtime: RuntimeConfig {
                // One isolate runs on one core: let a hot endpoint scale to every core.
                pool: sandbox::PoolConfig {
                    instances_per_endpoint: std::thread::available_parallelism()
                        .map_or(1, |n| n.get()),
                    ..sandbox::PoolConfig::default()
                },
                isolation: sandbox::Isolation::InProcess,
                quotas: Default::default(),
                reject_invalid_output: false,
            },
        }
    }
}

/// Storage quotas: per endpoint, and totals across all of one builder's endpoints (a builder
/// could otherwise multiply the per-endpoint quotas by creating endpoints). The operator's and
/// the admin's endpoints have the per-endpoint quotas only.
#[derive(Clone, Debug)]
pub struct Quotas {
    pub kv_keys: u64,
    pub kv_bytes: u64,
    pub files: u64,
    pub file_bytes: u64,
    /// kv keys of all of a builder's endpoints together.
    pub builder_kv_keys: u64,
    /// kv bytes (keys' stored values) of all of a builder's endpoints together.
    pub builder_kv_bytes: u64,
    /// File bytes of all of a builder's endpoints together (uploaded and handler-written).
    pub builder_file_bytes: u64,
    /// Bytes a builder's handlers may write to kv and files per second, on each node
    /// (`handler_data::write_pace`); 0: unpaced.
    pub builder_write_bytes_per_sec: u64,
    /// Bytes a builder's handlers may write at once before the pace applies; also the largest
    /// single write.
    pub builder_write_burst_bytes: u64,
}

impl Quotas {
    /// Defaults of the builder totals (`--builder-kv-keys`, `--builder-kv-mb`,
    /// `--builder-files-mb`): room for a few endpoints at their full quotas.
    pub const DEFAULT_BUILDER_KV_KEYS: u64 = 50_000;
    pub const DEFAULT_BUILDER_KV_MB: u64 = 64;
    pub const DEFAULT_BUILDER_FILES_MB: u64 = 64;
    /// Default of `--builder-write-kb-per-sec`: far beyond what a builder can keep (its kv and
    /// files totals fill in two minutes), far below what a disk shared by everyone absorbs.
    pub const DEFAULT_BUILDER_WRITE_KB_PER_SEC: u64 = 1024;
    /// Default of `--builder-write-burst-mb`: a few of the largest writes (a 1 MiB file or
    /// `ctx.kv.atomic()`) at once.
    pub const DEFAULT_BUILDER_WRITE_BURST_MB: u64 = 4;
}

impl Default for Quotas {
    fn default() -> Self {
        const MIB: u64 = 1024 * 1024;
        Self {
            kv_keys: 10_000,
            kv_bytes: 16 * MIB,
            files: 100,
            file_bytes: 16 * MIB,
            builder_kv_keys: Self::DEFAULT_BUILDER_KV_KEYS,
            builder_kv_bytes: Self::DEFAULT_BUILDER_KV_MB * MIB,
            builder_file_bytes: Self::DEFAULT_BUILDER_FILES_MB * MIB,
            builder_write_bytes_per_sec: Self::DEFAULT_BUILDER_WRITE_KB_PER_SEC * 1024,
            builder_write_burst_bytes: Self::DEFAULT_BUILDER_WRITE_BURST_MB * MIB,
        }
    }
}
