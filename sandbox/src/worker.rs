//! The isolate thread: one per endpoint instance, each with its own current-thread tokio
//! runtime (a `JsRuntime` is not `Send`). It owns at most one [`Isolate`], creates it on the
//! first invocation, runs invocations one at a time, and replaces the isolate after a limit
//! hit or `recycle_after_invocations`. It ends when the pool drops its sender, after serving
//! what was already queued.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use crate::isolate::{Isolate, IsolateEnv};
use crate::limits::timeout::Watchdog;
use crate::{EndpointCode, Host, Invocation, InvocationReport, PoolConfig, SandboxError};

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
}

pub(crate) enum Command {
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
}

impl WorkerHandle {
    pub(crate) fn spawn(
        code: Arc<EndpointCode>,
        shared: Arc<Shared>,
        queue_bound: usize,
    ) -> std::io::Result<(WorkerHandle, JoinHandle<()>)> {
        let (sender, receiver) = mpsc::channel(queue_bound.max(1));
        let queued = Arc::new(AtomicUsize::new(0));
        let worker_queued = queued.clone();
        let thread = std::thread::Builder::new()
            .name(format!("sandbox-{}", code.slug))
            .stack_size(WORKER_STACK_BYTES)
            .spawn(move || run(&code, &shared, receiver, &worker_queued))?;
        Ok((WorkerHandle { sender, queued }, thread))
    }

    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    /// The thread ended (it panicked, or could not start its runtime).
    pub(crate) fn is_dead(&self) -> bool {
        self.sender.is_closed()
    }

    /// Queues a command without waiting.
    pub(crate) fn try_send(&self, command: Command) -> Result<(), QueueError> {
        self.queued.fetch_add(1, Ordering::AcqRel);
        self.sender.try_send(command).map_err(|err| {
            self.queued.fetch_sub(1, Ordering::AcqRel);
            match err {
                mpsc::error::TrySendError::Full(_) => QueueError::Full,
                mpsc::error::TrySendError::Closed(_) => QueueError::Closed,
            }
        })
    }
}

fn run(
    code: &EndpointCode,
    shared: &Shared,
    mut receiver: mpsc::Receiver<Command>,
    queued: &AtomicUsize,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            tracing::error!(slug = %code.slug, %err, "cannot start isolate thread runtime");
            return;
        }
    };
    let env = IsolateEnv {
        config: &shared.config,
        host: &shared.host,
        watchdog: &shared.watchdog,
    };
    runtime.block_on(async {
        let mut worker = Worker {
            code,
            shared,
            isolate: None,
            compile_error: None,
        };
        while let Some(Command::Invoke {
            invocation,
            received,
            reply,
        }) = receiver.recv().await
        {
            if !reply.is_closed() {
                let report = worker.serve(&invocation, received, &env).await;
                // The caller may have given up meanwhile; nothing to do then.
                let _ = reply.send(report);
            }
            queued.fetch_sub(1, Ordering::AcqRel);
        }
    });
}

struct Worker<'a> {
    code: &'a EndpointCode,
    shared: &'a Shared,
    isolate: Option<Isolate>,
    /// A module that does not compile never will (its version is fixed): answer at once.
    compile_error: Option<SandboxError>,
}

impl Worker<'_> {
    async fn serve(
        &mut self,
        invocation: &Invocation,
        received: Instant,
        env: &IsolateEnv<'_>,
    ) -> InvocationReport {
        let counters = &self.shared.counters;
        counters.invocations.fetch_add(1, Ordering::Relaxed);
        if let Some(err) = &self.compile_error {
            return report(Err(err.clone()), Vec::new(), received);
        }
        let isolate = match &mut self.isolate {
            Some(isolate) => isolate,
            slot @ None => match Isolate::create(self.code, env).await {
                Ok(isolate) => {
                    counters.isolates_created.fetch_add(1, Ordering::Relaxed);
                    slot.insert(isolate)
                }
                Err(err) => {
                    if matches!(err, SandboxError::CompileError(_)) {
                        self.compile_error = Some(err.clone());
                    }
                    return report(Err(err), Vec::new(), received);
                }
            },
        };
        let finished = isolate.invoke(&invocation.request, env).await;
        let worn_out = isolate.invocations() >= self.shared.config.recycle_after_invocations;
        if !finished.reusable || worn_out {
            tracing::debug!(
                slug = %self.code.slug,
                request_id = %invocation.request_id,
                reusable = finished.reusable,
                "recycling isolate"
            );
            self.isolate = None;
            counters.recycled.fetch_add(1, Ordering::Relaxed);
        }
        report(finished.result, finished.logs, received)
    }
}

pub(crate) fn report(
    result: Result<crate::HandlerResponse, SandboxError>,
    logs: Vec<crate::LogLine>,
    received: Instant,
) -> InvocationReport {
    InvocationReport {
        result,
        logs,
        duration: received.elapsed(),
    }
}
