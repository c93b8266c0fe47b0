//! The isolate thread: one per endpoint instance, each with its own current-thread tokio
//! runtime (a `JsRuntime` is not `Send`). A thread starts unbound (a spare) or is bound right
//! away; once bound to an endpoint it serves that endpoint only, one invocation at a time.
//! Whenever it is idle without an isolate it prepares a [`Blank`] runtime, so the next cold
//! start only binds. It replaces its isolate after a limit hit or `recycle_after_invocations`,
//! and ends when the pool drops its sender, after serving what was already queued, or right
//! after the call it was stuck in when a caller gave up on it ([`Progress`], poisoned).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use deno_core::futures::FutureExt;
use tokio::sync::{mpsc, oneshot};

use crate::isolate::{BindError, Blank, Isolate, IsolateEnv, WebPreload};
use crate::limits::deadline::{ExitGuard, Progress};
use crate::limits::timeout::Watchdog;
use crate::ops::web::{names_web_globals, web_globals_named};
use crate::{
    ConsoleLine, EndpointCode, HandlerResponse, Host, Invocation, InvocationReport, PoolConfig,
    SandboxError,
};

/// Isolates one thread builds before it ends and its endpoint gets a fresh thread. The engine
/// keeps per-thread state that every runtime adds to and none gives back: on one thread, the
/// ~136th isolate of a 32 MiB heap limit could no longer evaluate its module (tests/pool.rs,
/// `a_thread_is_replaced_before_its_engine_state_wears_out`), while a new thread could.
const ISOLATES_PER_THREAD: u32 = 32;

/// Room for QuickJS's own stack limit (1 MiB) plus the Rust frames of ops and the event loop.
const WORKER_STACK_BYTES: usize = 8 * 1024 * 1024;

/// Pool-wide state shared with every worker thread.
pub(crate) struct Shared {
    pub(crate) config: PoolConfig,
    pub(crate) host: Arc<dyn Host>,
    pub(crate) watchdog: Watchdog,
    pub(crate) counters: Counters,
}

/// Monotonic counters reported by `Pool::stats`.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) isolates_created: AtomicU64,
    pub(crate) invocations: AtomicU64,
    pub(crate) recycled: AtomicU64,
    pub(crate) evictions: AtomicU64,
    pub(crate) retired: AtomicU64,
    pub(crate) overloaded: AtomicU64,
    pub(crate) abandoned: AtomicU64,
}

pub(crate) enum Command {
    /// Makes the thread the instance of an endpoint; sent once, before any invocation.
    Bind(Arc<EndpointCode>),
    Invoke {
        invocation: Invocation,
        /// When `Pool::invoke` was called, so the report's duration includes queueing.
        received: Instant,
        reply: oneshot::Sender<InvocationReport>,
    },
}

/// Why a command could not be queued.
pub(crate) enum QueueError {
    Full,
    Closed,
}

/// The pool's side of a worker thread.
pub(crate) struct WorkerHandle {
    sender: mpsc::Sender<Command>,
    /// Invocations sent and not yet finished, to spread load across instances.
    queued: Arc<AtomicUsize>,
    /// The thread holds a blank runtime built ahead of time (a spare ready for a cold start).
    ready: Arc<AtomicBool>,
    /// How far the thread is, for callers whose answer is late.
    progress: Arc<Progress>,
    /// Invocations queued so far: the ticket of the next one (see [`Progress::check`]).
    sent: u64,
    /// As a spare, its blank runtime has every web global's scripts loaded ([`WebPreload`]).
    web: bool,
}

impl WorkerHandle {
    /// Starts an unbound thread; it prepares a blank runtime while it waits, with every web
    /// global's scripts loaded when `web`.
    pub(crate) fn spawn(
        shared: Arc<Shared>,
        queue_bound: usize,
        web: bool,
    ) -> std::io::Result<(WorkerHandle, JoinHandle<()>)> {
        // One extra slot for the `Bind` command.
        let (sender, receiver) = mpsc::channel(queue_bound.max(1) + 1);
        let queued = Arc::new(AtomicUsize::new(0));
        let ready = Arc::new(AtomicBool::new(false));
        let progress = Arc::new(Progress::new(shared.config.timeout_grace));
        let thread = {
            let (queued, ready, progress) = (queued.clone(), ready.clone(), progress.clone());
            std::thread::Builder::new()
                .name("sandbox-isolate".to_owned())
                .stack_size(WORKER_STACK_BYTES)
                .spawn(move || run(&shared, receiver, &queued, &ready, &progress, web))?
        };
        Ok((
            WorkerHandle {
                sender,
                queued,
                ready,
                progress,
                sent: 0,
                web,
            },
            thread,
        ))
    }

    pub(crate) fn progress(&self) -> &Arc<Progress> {
        &self.progress
    }

    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    /// A blank runtime is built and waiting for the next cold start.
    pub(crate) fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Started as a spare for endpoints that use the web globals.
    pub(crate) fn is_web(&self) -> bool {
        self.web
    }

    /// The thread ended (it panicked, or could not start its runtime).
    pub(crate) fn is_dead(&self) -> bool {
        self.sender.is_closed()
    }

    pub(crate) fn bind(&self, code: Arc<EndpointCode>) -> Result<(), QueueError> {
        self.sender
            .try_send(Command::Bind(code))
            .map_err(queue_error)
    }

    /// Queues an invocation without waiting; returns its ticket for [`Progress::check`].
    pub(crate) fn try_send(&mut self, command: Command) -> Result<u64, QueueError> {
        self.queued.fetch_add(1, Ordering::AcqRel);
        match self.sender.try_send(command) {
            Ok(()) => {
                self.sent += 1;
                Ok(self.sent - 1)
            }
            Err(err) => {
                self.queued.fetch_sub(1, Ordering::AcqRel);
                Err(queue_error(err))
            }
        }
    }
}

fn queue_error(err: mpsc::error::TrySendError<Command>) -> QueueError {
    match err {
        mpsc::error::TrySendError::Full(_) => QueueError::Full,
        mpsc::error::TrySendError::Closed(_) => QueueError::Closed,
    }
}

fn run(
    shared: &Shared,
    mut receiver: mpsc::Receiver<Command>,
    queued: &AtomicUsize,
    ready: &AtomicBool,
    progress: &Progress,
    web: bool,
) {
    // Dropped last: the thread counts as ended only once its isolates are gone.
    let _exit = ExitGuard(progress);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            tracing::error!(%err, "cannot start an isolate thread runtime");
            return;
        }
    };
    let env = IsolateEnv {
        config: &shared.config,
        host: &shared.host,
        watchdog: &shared.watchdog,
        progress,
    };
    runtime.block_on(async {
        let mut worker = Worker {
            shared,
            code: None,
            web,
            blank: None,
            isolate: None,
            retired: None,
            compile_error: None,
            isolates_built: 0,
        };
        // A poisoned thread (a caller gave up on it) serves nothing more: it ends, and its
        // isolate and whatever was still queued are dropped.
        while !progress.is_poisoned() {
            if receiver.is_empty() && worker.needs_blank() {
                progress.busy_for(worker.timeout());
                worker.prepare_blank();
            }
            ready.store(worker.blank.is_some(), Ordering::Release);
            progress.idle();
            let Some(command) = receiver.recv().await else {
                break;
            };
            if progress.is_poisoned() {
                break;
            }
            match command {
                Command::Bind(code) => {
                    worker.web = names_web_globals(&code.source);
                    worker.code = Some(code);
                }
                Command::Invoke {
                    invocation,
                    received,
                    reply,
                } => {
                    progress.start_invocation(worker.timeout());
                    // The caller may have given up meanwhile; then there is nothing to do.
                    let report = if reply.is_closed() {
                        None
                    } else {
                        Some(worker.serve(&invocation, received, &env).await)
                    };
                    // Before replying, so a caller that got its answer sees this thread idle.
                    queued.fetch_sub(1, Ordering::AcqRel);
                    if let Some(report) = report {
                        let _ = reply.send(report);
                    }
                    // After replying: dropping a large heap is no part of the call's latency.
                    if worker.retired.is_some() {
                        progress.busy_for(worker.timeout());
                        worker.retired = None;
                        if worker.isolates_built >= ISOLATES_PER_THREAD {
                            // New calls go to a fresh thread (the pool drops an instance whose
                            // queue is closed); what is queued here is still served.
                            receiver.close();
                        }
                    }
                }
            }
        }
    });
}

struct Worker<'a> {
    shared: &'a Shared,
    /// The endpoint this thread serves; `None` while it is a spare.
    code: Option<Arc<EndpointCode>>,
    /// Its blank runtimes load web scripts ahead of time: every global's for a spare, those
    /// its endpoint's source names once bound (see [`Worker::preload`]).
    web: bool,
    /// A runtime made ahead of time, not bound yet.
    blank: Option<Blank>,
    isolate: Option<Isolate>,
    /// An isolate recycled by the last call, dropped once the caller has its answer.
    retired: Option<Isolate>,
    /// A module that does not compile never will (its version is fixed): answer at once.
    compile_error: Option<BindError>,
    /// Isolates this thread has built (see [`ISOLATES_PER_THREAD`]).
    isolates_built: u32,
}

impl Worker<'_> {
    fn limits(&self) -> crate::Limits {
        self.code
            .as_ref()
            .and_then(|code| code.limits)
            .unwrap_or(self.shared.config.default_limits)
    }

    fn heap_bytes(&self) -> usize {
        self.limits().heap_bytes
    }

    /// The time limit of this thread's endpoint (the default one while it is a spare).
    fn timeout(&self) -> Duration {
        self.limits().timeout
    }

    /// This thread will need a blank runtime and has none.
    fn needs_blank(&self) -> bool {
        self.isolate.is_none() && self.blank.is_none() && self.compile_error.is_none()
    }

    /// What a blank runtime made ahead of time loads for this thread's next isolate.
    fn preload(&self) -> WebPreload {
        match &self.code {
            _ if !self.web => WebPreload::Nothing,
            Some(code) => WebPreload::Named(web_globals_named(&code.source)),
            None => WebPreload::Every,
        }
    }

    /// Makes a blank runtime if this thread will need one.
    fn prepare_blank(&mut self) {
        if !self.needs_blank() {
            return;
        }
        let heap_bytes = self.heap_bytes();
        let preload = self.preload();
        match std::panic::catch_unwind(|| Blank::new(heap_bytes, preload)) {
            Ok(Ok(blank)) => self.blank = Some(blank),
            Ok(Err(err)) => tracing::error!(%err, "cannot prepare an isolate"),
            Err(_) => tracing::error!("preparing an isolate panicked"),
        }
    }

    async fn serve(
        &mut self,
        invocation: &Invocation,
        received: Instant,
        env: &IsolateEnv<'_>,
    ) -> InvocationReport {
        let counters = &self.shared.counters;
        counters.invocations.fetch_add(1, Ordering::Relaxed);
        let Some(code) = self.code.clone() else {
            let err = SandboxError::Internal("isolate thread is not bound".to_owned());
            return report(Err(err), Vec::new(), received);
        };
        if let Some(failed) = &self.compile_error {
            return failed_report(failed.clone(), received);
        }
        let isolate = match &mut self.isolate {
            Some(isolate) => isolate,
            slot @ None => {
                let heap_bytes = code
                    .limits
                    .unwrap_or(self.shared.config.default_limits)
                    .heap_bytes;
                let blank = self.blank.take().filter(|b| b.heap_bytes() == heap_bytes);
                // deno_core panics on some module graphs the QuickJS backend cannot link
                // (e.g. `import/**/x from "y"`); that is the module's fault, not the thread's.
                let created = AssertUnwindSafe(async {
                    let blank = match blank {
                        Some(blank) => blank,
                        // Binding loads what the source names: preloading would add nothing.
                        None => Blank::new(heap_bytes, WebPreload::Nothing)?,
                    };
                    blank.bind(&code, env).await
                })
                .catch_unwind()
                .await
                .unwrap_or_else(|_| {
                    Err(
                        SandboxError::CompileError("the module could not be loaded".to_owned())
                            .into(),
                    )
                });
                match created {
                    Ok(isolate) => {
                        counters.isolates_created.fetch_add(1, Ordering::Relaxed);
                        self.isolates_built += 1;
                        slot.insert(isolate)
                    }
                    Err(failed) => {
                        if matches!(failed.error, SandboxError::CompileError(_)) {
                            self.compile_error = Some(failed.clone());
                        }
                        return failed_report(failed, received);
                    }
                }
            }
        };
        if invocation.load_only {
            // A check's isolate serves no call: dropped once the caller has its answer.
            self.retired = self.isolate.take();
            let loaded = HandlerResponse {
                status: 204,
                body: serde_json::Value::Null,
                headers: Vec::new(),
            };
            return report(Ok(loaded), Vec::new(), received);
        }
        let finished = isolate.invoke(&invocation.request, env).await;
        let worn_out = isolate.invocations() >= self.shared.config.recycle_after_invocations;
        if !finished.reusable || worn_out {
            tracing::debug!(
                slug = %code.slug,
                request_id = %invocation.request_id,
                reusable = finished.reusable,
                "recycling isolate"
            );
            self.retired = self.isolate.take();
            counters.recycled.fetch_add(1, Ordering::Relaxed);
        }
        InvocationReport {
            trace: finished.trace,
            ..report(finished.result, finished.logs, received)
        }
    }
}

fn failed_report(failed: BindError, received: Instant) -> InvocationReport {
    InvocationReport {
        trace: failed.trace,
        ..report(Err(failed.error), Vec::new(), received)
    }
}

pub(crate) fn report(
    result: Result<HandlerResponse, SandboxError>,
    logs: Vec<ConsoleLine>,
    received: Instant,
) -> InvocationReport {
    InvocationReport {
        result,
        logs,
        duration: received.elapsed(),
        trace: None,
    }
}
