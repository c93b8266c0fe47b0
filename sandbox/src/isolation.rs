//! Where handlers run: in worker processes that hold no keys (the default, and what production
//! runs), or on threads of the server itself (development: faster to start and to debug, but the
//! isolate is then the only wall between a handler and everything the server holds).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::limits::fair::FairShare;
use crate::{
    Capabilities, EndpointCode, Host, HostAnswer, HostFuture, HostOp, Invocation, InvocationReport,
    Pool, PoolConfig, PoolStats, WorkerOptions, WorkerPool,
};

/// How [`Sandbox::new`] runs isolates.
#[derive(Clone, Debug)]
pub enum Isolation {
    /// In worker processes.
    Workers(WorkerOptions),
    /// On threads of this process.
    InProcess,
}

impl Isolation {
    /// The largest heap limit an isolate of a builder's endpoint (`builder`) or of the
    /// operator's can run with here under `config`: an endpoint limited to more would find no
    /// room anywhere ([`WorkerOptions::largest_heap`], [`PoolConfig::largest_heap`]).
    pub fn largest_heap(&self, config: &PoolConfig, builder: bool) -> usize {
        match self {
            Isolation::Workers(options) => options.largest_heap(config, builder),
            Isolation::InProcess => config.largest_heap(builder),
        }
    }
}

/// The isolate pool, wherever it runs. Cheap to clone.
#[derive(Clone)]
pub enum Sandbox {
    /// Isolates on threads of this process.
    InProcess(Pool),
    /// Isolates in worker processes.
    Workers(WorkerPool),
}

impl Sandbox {
    /// A pool for `host`, run as `isolation` says.
    pub fn new(mut config: PoolConfig, host: Arc<dyn Host>, isolation: Isolation) -> Sandbox {
        match isolation {
            Isolation::InProcess => {
                let fair = FairShare::for_this_machine();
                let host = Arc::new(FairHost { host, fair });
                config.cpu_shares = false;
                Sandbox::InProcess(Pool::new(config, host))
            }
            Isolation::Workers(options) => Sandbox::Workers(WorkerPool::new(config, host, options)),
        }
    }

    /// Starts the worker processes now, so the first calls do not wait for them and a worker
    /// that cannot start stops the server at start-up rather than failing calls.
    pub async fn start(&self) -> Result<(), crate::SandboxError> {
        match self {
            Sandbox::InProcess(_) => Ok(()),
            Sandbox::Workers(pool) => pool.start().await,
        }
    }

    /// Runs `code`'s handler once. Never panics; every failure is in the report.
    pub async fn invoke(&self, code: &EndpointCode, invocation: Invocation) -> InvocationReport {
        match self {
            Sandbox::InProcess(pool) => pool.invoke(code, invocation).await,
            Sandbox::Workers(pool) => pool.invoke(code, invocation).await,
        }
    }

    /// Loads `code`'s module as a call's cold start would, under the same time and heap
    /// limits, checks that its default export is a function, and drops the isolate: the
    /// publish-time check. The handler is not called. Top-level code runs with no capabilities
    /// and an empty env (it cannot reach `ctx` anyway), in an instance of its own that calls of
    /// the endpoint never share. The report is a 204, or the failure with its [`SourceTrace`].
    ///
    /// [`SourceTrace`]: crate::SourceTrace
    pub async fn check(&self, code: &EndpointCode) -> InvocationReport {
        let probe = EndpointCode {
            // Not a valid endpoint slug or id, so no endpoint's calls land in this instance.
            id: format!("{}#check", code.id),
            slug: format!("{}#check", code.slug),
            version: code.version.clone(),
            source: code.source.clone(),
            capabilities: Capabilities::default(),
            env: BTreeMap::new(),
            limits: code.limits,
            owner: code.owner.clone(),
        };
        let invocation = Invocation {
            request: serde_json::value::RawValue::NULL.to_owned(),
            request_id: format!("check-{}", code.version),
            load_only: true,
        };
        let report = self.invoke(&probe, invocation).await;
        self.retire(&probe.slug);
        report
    }

    /// Drops the endpoint's isolates (and, in workers, its code and env); its calls in
    /// progress finish.
    pub fn retire(&self, slug: &str) {
        match self {
            Sandbox::InProcess(pool) => pool.retire(slug),
            Sandbox::Workers(pool) => pool.retire(slug),
        }
    }

    /// What an endpoint's delete does: in workers, its calls in progress are stopped (each
    /// caller answered [`crate::SandboxError::Stopped`] at once, the code left running reaching
    /// nothing), then it is retired. In the server's process the calls run on, and the host
    /// refuses their operations.
    pub fn stop(&self, slug: &str) {
        match self {
            Sandbox::InProcess(pool) => pool.retire(slug),
            Sandbox::Workers(pool) => pool.stop(slug),
        }
    }

    /// Isolates and counters (summed over the workers, with their process ids).
    pub async fn stats(&self) -> PoolStats {
        match self {
            Sandbox::InProcess(pool) => pool.stats(),
            Sandbox::Workers(pool) => pool.stats().await,
        }
    }

    /// Refuses new calls and lets those in progress finish.
    pub async fn shutdown(&self) {
        match self {
            Sandbox::InProcess(pool) => pool.shutdown().await,
            Sandbox::Workers(pool) => pool.shutdown().await,
        }
    }
}

/// In-process isolates call the host from their own threads, where no charged future polls:
/// what the host spawns on the server's runtime for an operation is charged to its builder
/// here (a worker's operations are charged where the server takes them, `process::supervisor`).
struct FairHost {
    host: Arc<dyn Host>,
    fair: Arc<FairShare>,
}

impl Host for FairHost {
    fn call(&self, endpoint: &EndpointCode, call: u64, op: HostOp) -> HostFuture<HostAnswer> {
        self.fair
            .within(endpoint.builder(), || self.host.call(endpoint, call, op))
    }
}
