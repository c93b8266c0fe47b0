//! The isolate worker: one per endpoint instance, each on a thread with its own current-thread
//! tokio runtime (a `JsRuntime` is not `Send`). A worker starts unbound (a spare) or is bound
//! right away; once bound to an endpoint it serves that endpoint only, one invocation at a
//! time. Whenever it is idle without an isolate it prepares a [`Blank`] runtime, so the next
//! cold start only binds. It replaces its isolate after a limit hit or
//! `recycle_after_invocations`, and ends when the pool drops its sender, after serving what was
//! already queued, or right after the call it was stuck in when a caller gave up on it
//! ([`Progress`], poisoned).
//!
//! One thread builds one runtime. The QuickJS engine keeps per-thread state that a dropped
//! runtime leaves behind, and a later runtime on the same thread can trip over it: under load
//! with isolates recycled, after a few dozen runtimes on one thread a call's promise stopped
//! settling (a `Timeout` within milliseconds) and no module could be evaluated there any more
//! ("Module evaluation is still pending ..."), for good (tests/pool.rs,
//! `recycling_under_load_never_breaks_an_endpoint`), while one runtime serving 32 000 calls on
//! its own thread never failed. So once a thread's runtime is gone (recycled,
//! failed to bind, a check's), the worker moves to a fresh thread before it builds the next
//! one: the [`Seat`] (its queue, endpoint and counters) is handed over, and the pool sees the
//! same instance. Should a runtime still fail to load a module that loaded before, the call is
//! served again on a fresh thread and counted (`engine_resets`) instead of remembered as a
//! compile error.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use deno_core::futures::FutureExt;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

use crate::invocation::RawReport;
use crate::isolate::{BindError, Blank, Isolate, IsolateEnv, WebPreload};
use crate::limits::cpu::{CallCpu, CpuShares};
use crate::limits::deadline::{ExitGuard, Progress};
use crate::limits::timeout::Watchdog;
use crate::ops::web::lazy_globals_named;
use crate::pool::DirectReply;
use crate::{
    ConsoleLine, EndpointCode, HandlerResponse, Host, Invocation, InvocationReport, PoolConfig,
    SandboxError,
};

/// Room for QuickJS's own stack limit (1 MiB) plus the Rust frames of ops and the event loop.
const WORKER_STACK_BYTES: usize = 8 * 1024 * 1024;

/// Pool-wide state shared with every worker thread.
pub(crate) struct Shared {
    pub(crate) config: PoolConfig,
    pub(crate) host: Arc<dyn Host>,
    pub(crate) watchdog: Watchdog,
    pub(crate) counters: Counters,
    /// Which builders ran long CPU bursts lately, whose threads yield to the others'.
    pub(crate) cpu: Arc<CpuShares>,
    /// Every worker thread started, for `Pool::shutdown` to join; a thread that hands its
    /// worker over registers the next one here before it ends.
    pub(crate) threads: Mutex<Vec<(Arc<Progress>, JoinHandle<()>)>>,
}

impl Shared {
    pub(crate) fn threads(&self) -> MutexGuard<'_, Vec<(Arc<Progress>, JoinHandle<()>)>> {
        self.threads.lock().unwrap_or_else(PoisonError::into_inner)
    }
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
    pub(crate) engine_resets: AtomicU64,
}

pub(crate) enum Command {
    /// Makes the thread the instance of an endpoint; sent once, before any invocation.
    Bind(Arc<EndpointCode>),
    /// Loads the bound endpoint's module now rather than on the first call; answers whether
    /// the isolate is ready. Queued right after `Bind` by a warm-up ([`crate::Pool::warm`]).
    Load(oneshot::Sender<bool>),
    Invoke {
        invocation: Invocation,
        /// See [`Pending::call`].
        call: u64,
        /// When `Pool::invoke` was called, so the report's duration includes queueing.
        received: Instant,
        reply: Reply,
    },
}

/// Where an invocation's report goes.
pub(crate) enum Reply {
    /// To a caller awaiting it ([`crate::Pool::invoke`]).
    Awaited(oneshot::Sender<RawReport>),
    /// Out of the worker process from this thread, with no task waiting for it
    /// (`pool::direct`).
    Direct(DirectReply),
}

impl Reply {
    /// The call has its answer already (its caller gave up): there is nothing to do.
    fn is_closed(&self) -> bool {
        match self {
            Reply::Awaited(reply) => reply.is_closed(),
            Reply::Direct(reply) => reply.is_answered(),
        }
    }

    fn send(self, report: RawReport) {
        match self {
            Reply::Awaited(reply) => drop(reply.send(report)),
            Reply::Direct(reply) => reply.send(report),
        }
    }
}

/// Why a command could not be queued.
pub(crate) enum QueueError {
    Full,
    Closed,
}

/// The pool's side of a worker (whichever thread it runs on now).
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
    /// Starts an unbound worker; it prepares a blank runtime while it waits, with every web
    /// global's scripts loaded when `web`.
    pub(crate) fn spawn(
        shared: Arc<Shared>,
        queue_bound: usize,
        web: bool,
    ) -> Result<WorkerHandle, SandboxError> {
        // One extra slot for the `Bind` command.
        let (sender, receiver) = mpsc::channel(queue_bound.max(1) + 1);
        let queued = Arc::new(AtomicUsize::new(0));
        let ready = Arc::new(AtomicBool::new(false));
        let progress = Arc::new(Progress::new(shared.config.timeout_grace));
        let seat = Seat {
            shared,
            receiver,
            queued: queued.clone(),
            ready: ready.clone(),
            progress: progress.clone(),
            code: None,
            web,
            compile_error: None,
            loaded: false,
            pending: None,
            _exit: ExitGuard(progress.clone()),
        };
        seat.start().map_err(|failed| {
            SandboxError::Internal(format!("cannot start an isolate thread: {}", failed.1))
        })?;
        Ok(WorkerHandle {
            sender,
            queued,
            ready,
            progress,
            sent: 0,
            web,
        })
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

    /// The worker ended (its thread panicked, or could not start its runtime).
    pub(crate) fn is_dead(&self) -> bool {
        self.sender.is_closed()
    }

    pub(crate) fn bind(&self, code: Arc<EndpointCode>) -> Result<(), QueueError> {
        self.sender
            .try_send(Command::Bind(code))
            .map_err(queue_error)
    }

    /// Asks the bound worker to load its module now; `loaded` hears whether it did.
    pub(crate) fn load(&self, loaded: oneshot::Sender<bool>) -> Result<(), QueueError> {
        self.sender
            .try_send(Command::Load(loaded))
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

/// What a worker is apart from its engine: its queue, its endpoint and what it learned of it.
/// It is `Send`, and moves to a fresh thread whenever its thread's runtime is gone.
struct Seat {
    shared: Arc<Shared>,
    receiver: mpsc::Receiver<Command>,
    queued: Arc<AtomicUsize>,
    ready: Arc<AtomicBool>,
    progress: Arc<Progress>,
    /// The endpoint this worker serves; `None` while it is a spare.
    code: Option<Arc<EndpointCode>>,
    /// Its blank runtimes load web scripts ahead of time: every global's for a spare, those
    /// its endpoint's source names once bound, with the engine's lazy globals it names (see
    /// [`Engine::preload`]).
    web: bool,
    /// A module that does not compile never will (its version is fixed): answer at once.
    compile_error: Option<BindError>,
    /// The endpoint's module has loaded here before, so a failure to load it again is the
    /// engine's, not the module's (it is not remembered as a compile error).
    loaded: bool,
    /// The call the previous thread took off the queue but could not serve: served first.
    pending: Option<Pending>,
    /// Last: the worker counts as ended only once its isolates are gone.
    _exit: ExitGuard,
}

/// An invocation taken off the queue, with what answering it needs.
struct Pending {
    invocation: Invocation,
    /// The call's number, which each of its host operations carries ([`crate::Host::call`]).
    call: u64,
    /// When `Pool::invoke` was called, so the report's duration includes queueing.
    received: Instant,
    reply: Reply,
}

/// How a thread's turn with a worker ended.
enum Turn {
    /// The queue is closed or a caller gave up on the thread: the worker ends.
    Ended,
    /// The thread's runtime is gone and another is needed: a fresh thread takes over.
    HandOver,
}

impl Seat {
    /// Runs the worker on a new thread; gives it back with the error if none could start.
    fn start(self) -> Result<(), Box<(Seat, std::io::Error)>> {
        // The seat goes to the thread only once it runs, so it can come back if it does not.
        let (hand, take) = std::sync::mpsc::sync_channel::<Seat>(1);
        let spawned = std::thread::Builder::new()
            .name("sandbox-isolate".to_owned())
            .stack_size(WORKER_STACK_BYTES)
            .spawn(move || {
                if let Ok(seat) = take.recv() {
                    run(seat);
                }
            });
        match spawned {
            Ok(thread) => {
                let mut threads = self.shared.threads();
                // A finished thread's handle dropped frees what the system kept of it.
                threads.retain(|(_, thread)| !thread.is_finished());
                threads.push((self.progress.clone(), thread));
                drop(threads);
                // The thread waits for it: it only ends early if it panicked before.
                hand.send(self).map_err(|back| {
                    let err = std::io::Error::other("the new isolate thread ended at once");
                    Box::new((back.0, err))
                })
            }
            Err(err) => Err(Box::new((self, err))),
        }
    }

    /// The time limit of this worker's endpoint (the default one while it is a spare).
    fn timeout(&self) -> Duration {
        self.limits().timeout
    }

    fn limits(&self) -> crate::Limits {
        self.code
            .as_ref()
            .and_then(|code| code.limits)
            .unwrap_or(self.shared.config.default_limits)
    }
}

thread_local! {
    static ISOLATE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this is an isolate's thread (in-process, the host's ops are called there, on the
/// isolate's own small runtime): a host runs its work on the server's runtime then, and can run
/// it in place elsewhere.
pub fn on_isolate_thread() -> bool {
    ISOLATE_THREAD.get()
}

/// One thread's turns with a worker, until it ends. A thread that cannot hand the worker over
/// (no thread could start) keeps it: its next runtime is built here, as before one runtime per
/// thread was the rule.
fn run(mut seat: Seat) {
    ISOLATE_THREAD.set(true);
    loop {
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
        let turn = runtime.block_on(serve_queue(&mut seat));
        drop(runtime);
        match turn {
            Turn::Ended => return,
            Turn::HandOver => match seat.start() {
                Ok(()) => return,
                Err(failed) => {
                    let (back, err) = *failed;
                    tracing::error!(%err, "cannot start a fresh isolate thread: staying on this one");
                    seat = back;
                }
            },
        }
    }
}

/// Serves the worker's queue with this thread's engine, until the worker ends or the engine's
/// runtime is gone and another one is needed.
async fn serve_queue(seat: &mut Seat) -> Turn {
    let (shared, progress) = (seat.shared.clone(), seat.progress.clone());
    let env = IsolateEnv {
        config: &shared.config,
        host: &shared.host,
        watchdog: &shared.watchdog,
        progress: &progress,
    };
    let mut engine = Engine::default();
    if let Some(pending) = seat.pending.take() {
        progress.busy_for(seat.timeout());
        if let Some(pending) = engine.answer(seat, pending, &env, false).await {
            seat.pending = Some(pending);
            return Turn::HandOver;
        }
    }
    // A poisoned worker (a caller gave up on it) serves nothing more: it ends, and its
    // isolate and whatever was still queued are dropped.
    while !progress.is_poisoned() {
        if engine.spent(seat) {
            return Turn::HandOver;
        }
        if seat.receiver.is_empty() && engine.needs_blank(seat) {
            progress.busy_for(seat.timeout());
            engine.prepare_blank(seat);
        }
        seat.ready.store(engine.blank.is_some(), Ordering::Release);
        progress.idle();
        let Some(command) = seat.receiver.recv().await else {
            break;
        };
        if progress.is_poisoned() {
            break;
        }
        match command {
            Command::Bind(code) => {
                seat.web = !lazy_globals_named(&code.source).is_empty();
                seat.code = Some(code);
            }
            Command::Load(loaded) => {
                progress.busy_for(seat.timeout());
                let ready = engine
                    .load(seat, &env, Instant::now(), false, None)
                    .await
                    .is_ok();
                let _ = loaded.send(ready);
            }
            Command::Invoke {
                invocation,
                call,
                received,
                reply,
            } => {
                progress.start_invocation(seat.timeout());
                let pending = Pending {
                    invocation,
                    call,
                    received,
                    reply,
                };
                if let Some(pending) = engine.answer(seat, pending, &env, true).await {
                    seat.pending = Some(pending);
                    return Turn::HandOver;
                }
            }
        }
    }
    Turn::Ended
}

/// This thread's part of a worker: the runtime it built, as a blank or an isolate.
#[derive(Default)]
struct Engine {
    /// A runtime made ahead of time, not bound yet.
    blank: Option<Blank>,
    isolate: Option<Isolate>,
    /// An isolate recycled by the last call, dropped once the caller has its answer.
    retired: Option<Isolate>,
    /// This thread built its runtime: it builds no other (see the module docs).
    built: bool,
}

/// How [`Engine::serve`] ended.
enum Served {
    Answered(RawReport),
    /// The call needs a runtime this thread may not build: a fresh thread serves it. `worn`
    /// when this thread's engine failed to load a module that loaded before.
    Elsewhere {
        worn: bool,
    },
}

impl Engine {
    /// The runtime this thread built is gone and the worker will need another.
    fn spent(&self, seat: &Seat) -> bool {
        self.built && self.blank.is_none() && self.isolate.is_none() && seat.compile_error.is_none()
    }

    /// This worker will need a blank runtime and has none.
    fn needs_blank(&self, seat: &Seat) -> bool {
        self.isolate.is_none() && self.blank.is_none() && seat.compile_error.is_none()
    }

    /// What a blank runtime made ahead of time loads for this worker's next isolate.
    fn preload(seat: &Seat) -> WebPreload {
        match &seat.code {
            _ if !seat.web => WebPreload::Nothing,
            Some(code) => WebPreload::Named(lazy_globals_named(&code.source)),
            None => WebPreload::Every,
        }
    }

    /// Makes a blank runtime if this worker will need one and this thread may build it.
    fn prepare_blank(&mut self, seat: &Seat) {
        if !self.needs_blank(seat) || self.built {
            return;
        }
        let heap_bytes = seat.limits().heap_bytes;
        let preload = Self::preload(seat);
        // A failure does not count as this thread's runtime: handing the worker over for it
        // would only fail again on the next thread, and the one after.
        match std::panic::catch_unwind(|| Blank::new(heap_bytes, preload)) {
            Ok(Ok(blank)) => {
                self.built = true;
                self.blank = Some(blank);
            }
            Ok(Err(err)) => tracing::error!(%err, "cannot prepare an isolate"),
            Err(_) => tracing::error!("preparing an isolate panicked"),
        }
    }

    /// Serves one call taken off the queue and answers it; gives it back when a fresh thread
    /// must serve it. `may_retry` is `false` for a call a worn thread already handed over.
    async fn answer(
        &mut self,
        seat: &mut Seat,
        pending: Pending,
        env: &IsolateEnv<'_>,
        may_retry: bool,
    ) -> Option<Pending> {
        // The caller may have given up meanwhile; then there is nothing to do.
        let report = if pending.reply.is_closed() {
            None
        } else {
            match self.serve(seat, &pending, env, may_retry).await {
                Served::Answered(report) => {
                    let counters = &seat.shared.counters;
                    counters.invocations.fetch_add(1, Ordering::Relaxed);
                    Some(report)
                }
                Served::Elsewhere { worn } => {
                    if worn {
                        seat.shared
                            .counters
                            .engine_resets
                            .fetch_add(1, Ordering::Relaxed);
                        tracing::warn!(
                            slug = seat.code.as_ref().map_or("", |code| code.slug.as_str()),
                            request_id = %pending.invocation.request_id,
                            "an isolate thread could no longer load a module that loaded \
                             before: serving the call on a fresh thread"
                        );
                    }
                    return Some(pending);
                }
            }
        };
        // Before replying, so a caller that got its answer sees this worker idle.
        seat.queued.fetch_sub(1, Ordering::AcqRel);
        if let Some(report) = report {
            pending.reply.send(report);
        }
        // After replying: dropping a large heap is no part of the call's latency.
        if self.retired.is_some() {
            env.progress.busy_for(seat.timeout());
            self.retired = None;
        }
        None
    }

    /// Makes sure this engine holds the bound endpoint's isolate, building it from the blank
    /// runtime (or a new one) and loading the module if it does not; answers the endpoint's
    /// code. `Err` is how the call that needed it is served instead: its failure, or elsewhere.
    async fn load(
        &mut self,
        seat: &mut Seat,
        env: &IsolateEnv<'_>,
        received: Instant,
        may_retry: bool,
        meter: Option<&mut CallCpu>,
    ) -> Result<Arc<EndpointCode>, Served> {
        let Some(code) = seat.code.clone() else {
            let err = SandboxError::Internal("isolate thread is not bound".to_owned());
            return Err(Served::Answered(report(Err(err), Vec::new(), received)));
        };
        if let Some(failed) = &seat.compile_error {
            return Err(Served::Answered(failed_report(failed.clone(), received)));
        }
        if self.isolate.is_some() {
            return Ok(code);
        }
        let heap_bytes = seat.limits().heap_bytes;
        let blank = self.blank.take().filter(|b| b.heap_bytes() == heap_bytes);
        if blank.is_none() && self.built {
            return Err(Served::Elsewhere { worn: false });
        }
        self.built = true;
        // deno_core panics on some module graphs the QuickJS backend cannot link
        // (e.g. `import/**/x from "y"`); that is the module's fault, not the thread's.
        let created = AssertUnwindSafe(async {
            let blank = match blank {
                Some(blank) => blank,
                // Binding loads what the source names: preloading would add nothing.
                None => Blank::new(heap_bytes, WebPreload::Nothing)?,
            };
            if let Some(meter) = meter {
                meter.restart();
            }
            blank.bind(&code, env).await
        })
        .catch_unwind()
        .await
        .unwrap_or_else(|_| {
            Err(SandboxError::CompileError("the module could not be loaded".to_owned()).into())
        });
        match created {
            Ok(isolate) => {
                let counters = &seat.shared.counters;
                counters.isolates_created.fetch_add(1, Ordering::Relaxed);
                seat.loaded = true;
                self.isolate = Some(isolate);
                Ok(code)
            }
            Err(failed) => {
                let compile_error = matches!(failed.error, SandboxError::CompileError(_));
                if compile_error && seat.loaded && may_retry {
                    return Err(Served::Elsewhere { worn: true });
                }
                // Remembered only if it never loaded: then its source is at fault.
                if compile_error && !seat.loaded {
                    seat.compile_error = Some(failed.clone());
                }
                Err(Served::Answered(failed_report(failed, received)))
            }
        }
    }

    async fn serve(
        &mut self,
        seat: &mut Seat,
        pending: &Pending,
        env: &IsolateEnv<'_>,
        may_retry: bool,
    ) -> Served {
        let (invocation, received) = (&pending.invocation, pending.received);
        // The call's CPU counts its cold start, if it needs one (its module evaluated; the
        // runtime built for it is the host's): a builder whose calls keep losing their
        // isolates (timed out, over their heap) pays for what that costs, not only for its
        // calls.
        let shared = seat.shared.clone();
        let cpu = &shared.cpu;
        let bound = seat.code.clone();
        let builder = bound.as_deref().map_or("", EndpointCode::builder);
        let mut meter = cpu.before_call(builder);
        let code = match self
            .load(seat, env, received, may_retry, Some(&mut meter))
            .await
        {
            Ok(code) => code,
            Err(served) => {
                cpu.after_call(builder, meter);
                return served;
            }
        };
        if invocation.load_only {
            cpu.after_call(builder, meter);
            // A check's isolate serves no call: dropped once the caller has its answer.
            self.retired = self.isolate.take();
            let loaded = HandlerResponse {
                status: 204,
                body: RawValue::NULL.to_owned(),
                headers: Vec::new(),
                usage: None,
                text: None,
            };
            return Served::Answered(report(Ok(loaded), Vec::new(), received));
        }
        let Some(isolate) = self.isolate.as_mut() else {
            unreachable!("a loaded engine holds its isolate");
        };
        let finished = isolate.invoke(&invocation.request, pending.call, env).await;
        cpu.after_call(builder, meter);
        if !finished.reusable {
            cpu.lost_isolate(builder);
        }
        let worn_out = isolate.invocations() >= seat.shared.config.recycle_after_invocations;
        if !finished.reusable || worn_out {
            tracing::debug!(
                slug = %code.slug,
                request_id = %invocation.request_id,
                reusable = finished.reusable,
                "recycling isolate"
            );
            self.retired = self.isolate.take();
            seat.shared
                .counters
                .recycled
                .fetch_add(1, Ordering::Relaxed);
        }
        Served::Answered(InvocationReport {
            trace: finished.trace,
            ..report(finished.result, finished.logs, received)
        })
    }
}

fn failed_report(failed: BindError, received: Instant) -> RawReport {
    InvocationReport {
        trace: failed.trace,
        ..report(Err(failed.error), Vec::new(), received)
    }
}

pub(crate) fn report<Body>(
    result: Result<HandlerResponse<Body>, SandboxError>,
    logs: Vec<ConsoleLine>,
    received: Instant,
) -> InvocationReport<Body> {
    InvocationReport {
        result,
        logs,
        duration: received.elapsed(),
        trace: None,
    }
}
