//! The server's side of the worker processes: spawning, routing calls, serving their `ctx`
//! operations, and replacing a worker that dies, hangs, breaks the protocol or holds an isolate
//! that would not stop.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use tokio::process::{Child, ChildStdout, Command};
use tokio::sync::{oneshot, Notify};

use super::lanes::Lanes;
use super::newcomers::Newcomers;
use super::wire::{self, FromWorker, ToWorker};
use crate::invocation::RawReport;
use crate::limits::fair::FairShare;
use crate::{
    EndpointCode, Host, HostAnswer, Invocation, InvocationReport, Overload, PoolConfig, PoolStats,
    SandboxError, Wear,
};

/// How long a new worker may take to start (exec, runtime, confinement) before it counts as
/// failed.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long past a call's time limit plus grace (and the time a cold start may take on top,
/// see [`WorkerPool::answer_deadline`]) the server waits for its worker's answer before it asks
/// whether the worker is alive at all. A live worker answers every call by then itself, so
/// this only catches a worker that is wedged or gone.
const ANSWER_MARGIN: Duration = Duration::from_secs(2);
/// What the sandbox's own work in a cold start (building a runtime) is allowed at least,
/// as the worker's pool allows it.
const COLD_START_WORK: Duration = Duration::from_secs(5);
/// A worker that does not answer a ping within this time is killed.
const PING_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a planned recycle lets the successor load what its predecessor served before calls
/// switch to it anyway (the predecessor serves on meanwhile).
const WARM_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a warm-up looks whether the predecessor is still alive.
const WARM_POLL: Duration = Duration::from_millis(50);
/// A worker being replaced finishes its calls within this time, or is killed with them.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(60);
/// `ctx` operations one worker may have in progress in the server at once; more are refused
/// (`overloaded`), so a compromised worker cannot flood the server with tasks.
const MAX_HOST_OPS_PER_WORKER: usize = 4096;
/// `ctx` operations of one builder (an endpoint's owner; the operator's endpoints each count
/// as their own) in progress on one worker at once; more are refused (`resource_limit`), so
/// one builder cannot spend the worker's share, nor hold more than this many replies being
/// built (a file read is at most about 1.4 MiB of reply).
const MAX_HOST_OPS_PER_BUILDER: usize = 128;
/// Bytes of one builder's replies waiting to be written to a worker: a reply that would go
/// past it is replaced by a `resource_limit` error (a worker that stops reading, or a handler
/// that starts many large reads, cannot pile replies up in the server).
const MAX_QUEUED_REPLY_BYTES_PER_BUILDER: usize = 32 << 20;
/// How long the builders whose calls were running in a worker that crashed are served by the
/// quarantine worker (each new crash there starts it again for those running then).
const QUARANTINE_FOR: Duration = Duration::from_secs(10 * 60);
/// How long a builder whose call lost its isolate (timed out, over its heap limit, or did not
/// stop) is served by the quarantine worker, renewed by each such call.
const LOST_ISOLATE_APART_FOR: Duration = Duration::from_secs(60);
/// How long a builder whose call used a heavy call's CPU (`limits::cpu`) is served by the
/// heavy worker, renewed by each such call. Its neighbours then share neither their worker's
/// reader, pipe and allocator with its calls: measured, a `kv.list` flood slowed the light
/// builders hashed to its worker far more than the others (bench/RESULTS.md).
const HEAVY_APART_FOR: Duration = Duration::from_secs(60);
/// The CPU priority the workers apart run at, all of them (their start, their reader, their
/// isolates): they serve only builders whose calls run long bursts of CPU, crashed a worker
/// or lost isolates, and those yield the cores to everyone else's calls, starting with the
/// work of each fresh worker's start (a process, its runtime and its spare isolates built).
/// A weight of 110 against 1,024: not the lowest, so their threads still see their time
/// limits within the grace on busy cores (demoted isolate threads go on to 19).
const APART_NICE: i32 = 10;

/// How to start a worker: the program and its arguments (`toolhost sandbox-worker`). The
/// worker gets no environment, no other arguments and only its three standard streams.
#[derive(Clone, Debug)]
pub struct WorkerCommand {
    /// The executable (the server's own, re-executed in worker mode).
    pub program: PathBuf,
    /// Arguments selecting the worker mode.
    pub args: Vec<String>,
    /// Sent to the worker as its `tracing` filter (its logs go to the server's stderr).
    pub log_filter: String,
}

/// How many worker processes to run, how to start them, and when to recycle one.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// How to start one (`toolhost sandbox-worker`).
    pub command: WorkerCommand,
    /// How many; an owner's endpoints always share one.
    pub count: usize,
    /// A worker is replaced (its calls finish first) once it has dropped this many isolates
    /// (recycled, evicted or retired). The engine binding keeps a little of each dropped
    /// isolate in its own tables (0.3 to 0.5 MiB, measured: `sandbox/tests/dropped_isolates.rs`;
    /// the isolate's heap itself is given back, third_party/README.md), so a process that
    /// drops isolates forever grows forever; ending the process is what returns it all.
    pub recycle_after_dropped: u64,
}

impl WorkerOptions {
    /// The default: a worker keeps at most about 30 MiB it cannot give back.
    pub const DEFAULT_RECYCLE_AFTER_DROPPED: u64 = 64;

    /// The largest heap limit an isolate of a builder's endpoint (`builder`) or of the
    /// operator's can run with in these workers under `config`: what a worker's share holds,
    /// and for a builder what the quarantine worker's holds too (the smaller of the workers
    /// apart), where its calls go if it is set apart. An endpoint limited to more would never
    /// find room, and every call of it would be refused as overloaded.
    pub fn largest_heap(&self, config: &PoolConfig, builder: bool) -> usize {
        let share = share_of(config, self.count.max(1));
        if builder {
            apart_share_of(&share, Place::Quarantine).largest_heap(true)
        } else {
            share.largest_heap(false)
        }
    }
}

/// Runs handlers in worker processes. Cheap to clone; all clones share the workers.
#[derive(Clone)]
pub struct WorkerPool {
    inner: Arc<Inner>,
}

struct Inner {
    /// The whole pool's configuration (per-call limits, checks of host operations).
    config: PoolConfig,
    /// What each worker's own pool is configured with.
    share: PoolConfig,
    /// ... the heavy worker's and the quarantine's ([`apart_share_of`]).
    heavy_share: PoolConfig,
    quarantine_share: PoolConfig,
    host: Arc<dyn Host>,
    /// Turns for the server's work on the workers' `ctx` operations, shared by builders.
    fair: Arc<FairShare>,
    command: WorkerCommand,
    recycle_after_dropped: u64,
    /// The workers' places: `options.count` shared by builders hashed to them, then the
    /// heavy worker's and the quarantine's, which serve only builders in [`Inner::apart`].
    slots: Vec<Slot>,
    /// Builders (as [`EndpointCode::builder`] names them) served apart, where and until when.
    /// A crash takes every call of its worker with it, isolates lost to their limits are the
    /// ones that fill a worker's memory and make it recycle, and a builder's long bursts of
    /// CPU keep its worker's reader and pipe busy; placed apart, such a builder cannot cost
    /// the same neighbours again.
    apart: Mutex<HashMap<String, Stay>>,
    /// `apart` is not empty: calls look it up only then.
    any_apart: AtomicBool,
    /// Builders known to run calls within their limits; the others' calls go one at a time.
    newcomers: Newcomers,
    next_id: AtomicU64,
    /// Workers started after the first of their slot to replace one that failed.
    restarts: AtomicU64,
    /// Workers started after the first of their slot to replace one recycled as planned.
    recycles: AtomicU64,
    /// The counters of workers replaced so far (as they reported them before they ended), so
    /// the pool's totals do not go back when a worker does.
    departed: Mutex<PoolStats>,
    closed: AtomicBool,
}

/// Where a builder's calls are served: the shared worker it is hashed to, or a worker apart.
/// A builder apart moves on to a later place (from the heavy worker to the quarantine), never
/// back to an earlier one before its stay ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    #[default]
    Shared,
    /// The heavy worker: builders whose calls ran long bursts of CPU.
    Heavy,
    /// The quarantine worker: builders whose calls crashed a worker or lost isolates.
    Quarantine,
}

/// A builder's stay apart.
#[derive(Clone, Copy, Debug)]
struct Stay {
    place: Place,
    until: Instant,
}

/// One worker's place: the process serving it now, started on demand.
#[derive(Default)]
struct Slot {
    /// Whom it serves: builders hashed to it, or those apart in one place.
    place: Place,
    current: Mutex<Option<Arc<Worker>>>,
    /// A recycle's successor while it warms up, before it becomes `current`: it is told of
    /// endpoints retired meanwhile too.
    warming: Mutex<Option<Arc<Worker>>>,
    /// The worker the last recycle replaced, which finishes its calls before it ends.
    predecessor: Mutex<Weak<Worker>>,
    /// Held while a worker starts, so concurrent callers wait for the one being started.
    starting: tokio::sync::Mutex<()>,
    started: AtomicBool,
}

impl Slot {
    /// The worker serving this slot, unless it died or is being replaced.
    fn usable(&self) -> Option<Arc<Worker>> {
        let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        current
            .as_ref()
            .filter(|w| w.alive.load(Ordering::Acquire) && !w.retiring.load(Ordering::Acquire))
            .cloned()
    }

    fn current(&self) -> Option<Arc<Worker>> {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The worker serving this slot and a successor warming up to take over, if any.
    fn workers(&self) -> impl Iterator<Item = Arc<Worker>> {
        let warming = self
            .warming
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        self.current().into_iter().chain(warming)
    }
}

/// A live worker process, as the server sees it.
struct Worker {
    pid: u32,
    frames: Arc<Lanes<Frame>>,
    /// Each builder's `ctx` operations in progress and reply bytes queued on this worker.
    builders: Arc<Mutex<HashMap<String, BuilderOps>>>,
    state: Mutex<WorkerState>,
    alive: AtomicBool,
    kill: Notify,
    /// `ctx` operations of this worker in progress in the server.
    host_ops: AtomicUsize,
    /// Set once the server decided to replace this worker; new calls go elsewhere.
    retiring: AtomicBool,
    /// Set once the server decided to recycle it (it dropped its share of isolates); it takes
    /// calls until its successor is ready.
    recycled: AtomicBool,
}

/// A frame on its way to a worker, with what it holds of its builder's reply budget (given
/// back when it is dropped, once written: see `wire::write_all`).
struct Frame {
    bytes: Vec<u8>,
    _reply: Option<QueuedReply>,
}

impl AsRef<[u8]> for Frame {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

/// One builder's share of a worker's `ctx` operations.
#[derive(Default)]
struct BuilderOps {
    in_progress: usize,
    queued_bytes: usize,
}

/// A reply's bytes counted against its builder until the reply is written.
struct QueuedReply {
    builders: Arc<Mutex<HashMap<String, BuilderOps>>>,
    builder: String,
    bytes: usize,
}

impl Drop for QueuedReply {
    fn drop(&mut self) {
        let mut builders = self.builders.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(ops) = builders.get_mut(&self.builder) {
            ops.queued_bytes -= self.bytes;
            if ops.in_progress == 0 && ops.queued_bytes == 0 {
                builders.remove(&self.builder);
            }
        }
    }
}

/// The writer writes what is queued, then ends: nothing can queue more.
impl Drop for Worker {
    fn drop(&mut self) {
        self.frames.close();
    }
}

impl Worker {
    /// Admits an op of the isolate given the code of `slug` at `version` during `call`: the
    /// code the server sent, and the builder it counts toward, with the op counted in progress
    /// in the worker and for the builder ([`Worker::end_op`] ends it). Refused over the
    /// worker's cap (`overloaded`), for a call that is not in progress here or runs other code
    /// (`call_ended`: it ended, timed out or its endpoint was deleted), while loading for code
    /// with no call in progress here (`sandbox_internal`), and over the builder's share
    /// (`resource_limit`).
    fn admit_op(
        &self,
        call: u64,
        slug: &str,
        version: &str,
    ) -> Result<(Arc<EndpointCode>, String), crate::HostError> {
        let code = {
            let state = self.lock();
            if call == crate::NO_CALL {
                state
                    .served(slug, version)
                    .filter(|served| served.calls > 0)
                    .map(|served| served.code.clone())
                    .ok_or_else(|| {
                        crate::HostError::new(
                            "sandbox_internal",
                            "no call of this endpoint is in progress",
                        )
                    })
            } else {
                state
                    .calls
                    .get(&call)
                    .map(|running| running.code.clone())
                    .filter(|code| code.slug == slug && code.version == version)
                    .ok_or_else(|| {
                        crate::HostError::new(
                            "call_ended",
                            "the call this operation belongs to has ended",
                        )
                    })
            }
        };
        if self.host_ops.fetch_add(1, Ordering::AcqRel) >= MAX_HOST_OPS_PER_WORKER {
            self.host_ops.fetch_sub(1, Ordering::AcqRel);
            return Err(crate::HostError::new(
                "overloaded",
                "too many operations in progress",
            ));
        }
        let admitted = code.and_then(|code| {
            let builder = code.builder().to_owned();
            self.begin_op(&builder)?;
            Ok((code, builder))
        });
        if admitted.is_err() {
            self.host_ops.fetch_sub(1, Ordering::AcqRel);
        }
        admitted
    }

    /// Counts an operation of `builder` in progress, or refuses it over its share.
    fn begin_op(&self, builder: &str) -> Result<(), crate::HostError> {
        let mut builders = self.builders.lock().unwrap_or_else(PoisonError::into_inner);
        let ops = builders.entry(builder.to_owned()).or_default();
        if ops.in_progress >= MAX_HOST_OPS_PER_BUILDER {
            return Err(crate::HostError::new(
                "resource_limit",
                format!(
                    "more than {MAX_HOST_OPS_PER_BUILDER} ctx operations of this builder are in \
                     progress at once"
                ),
            ));
        }
        ops.in_progress += 1;
        Ok(())
    }

    /// Ends an operation of `builder`: its reply, counted until written, or a
    /// `resource_limit` error in its place when the builder's queued replies are at their cap.
    fn end_op(&self, builder: &str, id: u64, result: Result<HostAnswer, crate::HostError>) {
        let frame = wire::encode(&ToWorker::HostReply { id, result }).unwrap_or_else(|too_large| {
            wire::encode(&ToWorker::HostReply {
                id,
                result: Err(crate::HostError::new(
                    "resource_limit",
                    format!("the operation's answer is {too_large}"),
                )),
            })
            .expect("an error reply fits in a frame")
        });
        let mut builders = self.builders.lock().unwrap_or_else(PoisonError::into_inner);
        let ops = builders.entry(builder.to_owned()).or_default();
        ops.in_progress -= 1;
        if ops.queued_bytes + frame.len() > MAX_QUEUED_REPLY_BYTES_PER_BUILDER {
            if ops.in_progress == 0 && ops.queued_bytes == 0 {
                builders.remove(builder);
            }
            drop(builders);
            let result = Err(crate::HostError::new(
                "resource_limit",
                format!(
                    "the reply ({} bytes) would take this builder's replies waiting for the \
                     sandbox past {MAX_QUEUED_REPLY_BYTES_PER_BUILDER} bytes",
                    frame.len()
                ),
            ));
            self.send(&ToWorker::HostReply { id, result });
            return;
        }
        ops.queued_bytes += frame.len();
        drop(builders);
        let reply = QueuedReply {
            builders: self.builders.clone(),
            builder: builder.to_owned(),
            bytes: frame.len(),
        };
        self.frames.push_reply(
            builder,
            Frame {
                bytes: frame,
                _reply: Some(reply),
            },
        );
    }
}

#[derive(Default)]
struct WorkerState {
    /// Calls in progress here by the id of their `Invoke`, each with its endpoint's code.
    calls: HashMap<u64, InProgress>,
    /// Endpoint versions with calls in progress here, by slug, with the code the server sent:
    /// host operations name the slug and version their isolate was given, are checked against
    /// that code (the identity the host keys data by), and are refused for any version not in
    /// progress. A slug may have more than one: an old call of a deleted endpoint keeps its own
    /// code, never the code of the next endpoint with its slug.
    serving: HashMap<String, Vec<Served>>,
    /// Endpoint versions whose code this worker was sent.
    sent: HashMap<String, String>,
    stats: HashMap<u64, oneshot::Sender<PoolStats>>,
    warmed: HashMap<u64, oneshot::Sender<()>>,
    #[cfg(feature = "wall-probe")]
    probes: HashMap<u64, oneshot::Sender<Vec<String>>>,
    ready: Option<oneshot::Sender<String>>,
}

/// A call waiting for its worker's answer.
struct InProgress {
    reply: oneshot::Sender<Reply>,
    /// The code the call runs, which its host operations must name.
    code: Arc<EndpointCode>,
}

// `Done` is the reply nearly every call gets, each in a oneshot channel of its own: boxing
// it would add an allocation a call to make the other variants' slot smaller.
#[allow(clippy::large_enum_variant)]
enum Reply {
    /// The endpoint was stopped (deleted) while the call ran: its caller is answered at once
    /// and every operation it makes from then on is refused.
    Stopped,
    Done {
        report: RawReport,
        wear: Wear,
        lost_isolate: bool,
        ran_heavy: bool,
    },
    NeedCode,
}

impl WorkerPool {
    /// A pool of `options.count` processes, each started on its first call.
    pub fn new(config: PoolConfig, host: Arc<dyn Host>, options: WorkerOptions) -> WorkerPool {
        let workers = options.count.max(1);
        let share = share_of(&config, workers);
        WorkerPool {
            inner: Arc::new(Inner {
                heavy_share: apart_share_of(&share, Place::Heavy),
                quarantine_share: apart_share_of(&share, Place::Quarantine),
                share,
                config,
                host,
                fair: FairShare::for_this_machine(),
                command: options.command,
                recycle_after_dropped: options.recycle_after_dropped.max(1),
                slots: (0..workers)
                    .map(|_| Slot::default())
                    .chain([Place::Heavy, Place::Quarantine].map(|place| Slot {
                        place,
                        ..Slot::default()
                    }))
                    .collect(),
                apart: Mutex::new(HashMap::new()),
                any_apart: AtomicBool::new(false),
                newcomers: Newcomers::default(),
                next_id: AtomicU64::new(1),
                restarts: AtomicU64::new(0),
                recycles: AtomicU64::new(0),
                departed: Mutex::new(PoolStats::default()),
                closed: AtomicBool::new(false),
            }),
        }
    }

    /// Starts every worker now rather than on first use (so the first calls do not wait).
    pub async fn start(&self) -> Result<(), SandboxError> {
        for slot in self.shared_slots() {
            self.worker(slot).await?;
        }
        Ok(())
    }

    /// Runs `code`'s handler once in its worker. Never panics; every failure is in the report.
    pub async fn invoke(&self, code: &EndpointCode, invocation: Invocation) -> InvocationReport {
        let received = Instant::now();
        let mut report = self.run(code, invocation).await;
        report.duration = received.elapsed();
        report
    }

    async fn run(&self, code: &EndpointCode, invocation: Invocation) -> InvocationReport {
        let failed = |error| InvocationReport {
            result: Err(error),
            logs: Vec::new(),
            duration: Duration::ZERO,
            trace: None,
        };
        if self.inner.closed.load(Ordering::Acquire) {
            return failed(SandboxError::Internal("the pool is shut down".into()));
        }
        let limit = code
            .limits
            .unwrap_or(self.inner.config.default_limits)
            .timeout;
        // A builder not yet known runs one call at a time (`newcomers`); the operator's own
        // endpoints and builders served apart are not held.
        let mut first_call = None;
        if code.owner.is_some() && self.place_of(code.builder()) == Place::Shared {
            let give_up = self.answer_deadline(limit);
            match self.inner.newcomers.turn(code.builder(), give_up).await {
                Ok(turn) => first_call = turn,
                Err(()) => {
                    return failed(SandboxError::Overloaded {
                        retry_after_secs: self.inner.config.overload_retry_after_secs,
                        why: Overload::FirstCallRunning,
                    })
                }
            }
        }
        // Set apart while it waited: the workers apart hold nothing back.
        let place = self.place_of(code.builder());
        let apart = place != Place::Shared;
        if apart {
            first_call = None;
        }
        let worker = match self.worker(self.slot_at(code.builder(), place)).await {
            Ok(worker) => worker,
            Err(e) => return failed(e),
        };
        let deadline = self.answer_deadline(limit);
        let serving = Serving::begin(&worker, code);
        let mut with_code = worker.needs_code(code);
        loop {
            let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
            let frame = match wire::encode(&wire::InvokeFrame::Invoke {
                id,
                slug: &code.slug,
                version: &code.version,
                code: with_code.then_some(code),
                invocation: &invocation,
                apart,
            }) {
                Ok(frame) => frame,
                Err(too_large) => {
                    return failed(SandboxError::ResourceLimit(format!(
                        "the call (its request and its endpoint's code) is {too_large}"
                    )))
                }
            };
            let (reply, answer) = oneshot::channel();
            worker.lock().calls.insert(
                id,
                InProgress {
                    reply,
                    code: serving.code.clone(),
                },
            );
            // The reader marks a worker dead before it drops the waiting calls: a call
            // registered after that sees it here, instead of waiting for its deadline.
            if !worker.alive.load(Ordering::Acquire) {
                worker.lock().calls.remove(&id);
                return failed(SandboxError::Internal(
                    "the sandbox worker stopped during the call".into(),
                ));
            }
            worker.send_frame(frame);
            match tokio::time::timeout_at(deadline.into(), answer).await {
                Ok(Ok(Reply::Done {
                    report,
                    wear,
                    lost_isolate,
                    ran_heavy,
                })) => {
                    // Builders' code only: the operator's own endpoints stay where they are.
                    if code.owner.is_some() && lost_isolate {
                        self.set_apart(
                            code.builder(),
                            Place::Quarantine,
                            LOST_ISOLATE_APART_FOR,
                            "a call of this builder lost its isolate (timed out, over its \
                             heap limit, or did not stop)",
                        );
                    } else if code.owner.is_some() && ran_heavy && !invocation.load_only {
                        // A publish's check (its module loaded, no call) is not one of the
                        // builder's calls: a large module loads once.
                        self.set_apart(
                            code.builder(),
                            Place::Heavy,
                            HEAVY_APART_FOR,
                            "a call of this builder ran a long burst of CPU",
                        );
                    }
                    // A call that ran and kept its isolate makes its builder known; the turn
                    // is given up only now, once a builder that lost one is apart.
                    let ran = !matches!(report.result, Err(SandboxError::Overloaded { .. }));
                    if let Some(first_call) = first_call.take() {
                        if ran && !lost_isolate {
                            first_call.proven();
                        }
                    }
                    if wear.abandoned_isolates > 0 {
                        self.replace(&worker, "an isolate did not stop at its time limit");
                    } else if wear.isolates_dropped >= self.inner.recycle_after_dropped {
                        self.recycle(&worker, wear);
                    }
                    // The body's one parse, on the caller's task rather than the reader's.
                    return report.parsed();
                }
                Ok(Ok(Reply::Stopped)) => return failed(SandboxError::Stopped),
                Ok(Ok(Reply::NeedCode)) if !with_code => with_code = true,
                Ok(Ok(Reply::NeedCode)) => {
                    self.kill(&worker, "asked again for code it was just sent");
                    return failed(SandboxError::Internal("the sandbox worker failed".into()));
                }
                Ok(Err(_)) => {
                    return failed(SandboxError::Internal(
                        "the sandbox worker stopped during the call".into(),
                    ))
                }
                Err(_) => {
                    worker.lock().calls.remove(&id);
                    self.check_alive(worker.clone());
                    return failed(SandboxError::Timeout);
                }
            }
        }
    }

    /// When the server stops waiting for a call's answer, counted from when its worker is
    /// there (a worker being started is not the call's time): the worker's own pool answers
    /// by then even for a cold start (building a runtime, at least 5 s allowed; loading the
    /// module, the limit; the call, the limit and the grace).
    fn answer_deadline(&self, limit: Duration) -> Instant {
        Instant::now()
            + COLD_START_WORK.max(limit)
            + limit * 2
            + self.inner.config.timeout_grace
            + ANSWER_MARGIN
    }

    /// The slot serving `builder` at `place`. An owner's endpoints share one worker, so its
    /// quotas hold exactly; the operator's endpoints spread by slug (their `builder`). A
    /// builder apart ([`Self::place_of`]) is served by the worker of its place.
    fn slot_at(&self, builder: &str, place: Place) -> &Slot {
        let slots = &self.inner.slots;
        match place {
            Place::Shared => self.shared_slot_of(builder),
            Place::Heavy => &slots[slots.len() - 2],
            Place::Quarantine => &slots[slots.len() - 1],
        }
    }

    /// The shared slot `builder` is hashed to.
    fn shared_slot_of(&self, builder: &str) -> &Slot {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        builder.hash(&mut hasher);
        let slots = self.shared_slots();
        &slots[(hasher.finish() % slots.len() as u64) as usize]
    }

    /// The slots builders share, by hash.
    fn shared_slots(&self) -> &[Slot] {
        &self.inner.slots[..self.inner.slots.len() - 2]
    }

    /// Where `builder`'s calls are served now.
    fn place_of(&self, builder: &str) -> Place {
        if !self.inner.any_apart.load(Ordering::Acquire) {
            return Place::Shared;
        }
        self.apart()
            .get(builder)
            .map_or(Place::Shared, |stay| stay.place)
    }

    /// The builders served apart now (ended stays are forgotten here).
    fn apart(&self) -> MutexGuard<'_, HashMap<String, Stay>> {
        let mut apart = self
            .inner
            .apart
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        apart.retain(|_, stay| stay.until > now);
        self.inner
            .any_apart
            .store(!apart.is_empty(), Ordering::Release);
        apart
    }

    /// Puts the builders of `calls` (those in progress in a worker that crashed) in quarantine.
    fn quarantine(&self, calls: &HashMap<u64, InProgress>) {
        for call in calls.values() {
            self.set_apart(
                call.code.builder(),
                Place::Quarantine,
                QUARANTINE_FOR,
                "a sandbox worker crashed during a call of this builder",
            );
        }
    }

    /// Serves `builder` from the worker of `place` for `stay` from now at least (a longer stay,
    /// or a later place, it is in already holds).
    fn set_apart(&self, builder: &str, place: Place, stay: Duration, why: &str) {
        let until = Instant::now() + stay;
        self.inner.newcomers.forget(builder);
        let mut apart = self.apart();
        let was = apart.get(builder).map_or(Place::Shared, |stay| stay.place);
        let stay = apart
            .get(builder)
            .map_or(Stay { place, until }, |stay| Stay {
                place: stay.place.max(place),
                until: stay.until.max(until),
            });
        apart.insert(builder.to_owned(), stay);
        self.inner.any_apart.store(true, Ordering::Release);
        drop(apart);
        if stay.place != was {
            tracing::warn!(builder, why, place = ?stay.place, "its calls go to a worker apart");
            // Its isolates left where it was served would hold their heap there, and its
            // quota would count twice (there and where it goes).
            for worker in self.slot_at(builder, was).workers() {
                worker.send(&ToWorker::SetApart {
                    builder: builder.into(),
                });
            }
        }
    }

    /// The slot's worker, started if there is none (or the last one died or is retiring).
    async fn worker(&self, slot: &Slot) -> Result<Arc<Worker>, SandboxError> {
        if let Some(worker) = slot.usable() {
            return Ok(worker);
        }
        let _starting = slot.starting.lock().await;
        if let Some(worker) = slot.usable() {
            return Ok(worker);
        }
        if slot.started.swap(true, Ordering::AcqRel) {
            self.inner.restarts.fetch_add(1, Ordering::Relaxed);
        }
        let worker = self.spawn(slot).await.map_err(|e| {
            tracing::error!(error = %e, "cannot start a sandbox worker");
            SandboxError::Internal("the sandbox worker could not start".into())
        })?;
        *slot.current.lock().unwrap_or_else(PoisonError::into_inner) = Some(worker.clone());
        Ok(worker)
    }

    /// Starts a worker for `slot`, with that slot's share of the pool.
    async fn spawn(&self, slot: &Slot) -> std::io::Result<Arc<Worker>> {
        let config = match slot.place {
            Place::Shared => &self.inner.share,
            Place::Heavy => &self.inner.heavy_share,
            Place::Quarantine => &self.inner.quarantine_share,
        };
        let command = &self.inner.command;
        let mut spawn = std::process::Command::new(&command.program);
        spawn.args(&command.args).env_clear();
        // Dies with the server, in namespaces of its own (after env_clear: it sets variables).
        crate::confine::prepare_command(&mut spawn);
        if slot.place != Place::Shared {
            crate::confine::lower_priority(&mut spawn, APART_NICE);
        }
        let mut child = Command::from(spawn)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()?;
        let pid = child.id().unwrap_or_default();
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let frames = Arc::new(Lanes::new());
        let (ready, is_ready) = oneshot::channel();
        let worker = Arc::new(Worker {
            pid,
            frames: frames.clone(),
            builders: Arc::default(),
            state: Mutex::new(WorkerState {
                ready: Some(ready),
                ..WorkerState::default()
            }),
            alive: AtomicBool::new(true),
            kill: Notify::new(),
            host_ops: AtomicUsize::new(0),
            retiring: AtomicBool::new(false),
            recycled: AtomicBool::new(false),
        });
        worker.send(&ToWorker::Hello {
            config: config.clone(),
            log_filter: command.log_filter.clone(),
        });
        tokio::spawn(async move {
            if let Err(e) = wire::write_all(stdin, frames).await {
                tracing::debug!(error = %e, "a sandbox worker's stdin closed");
            }
        });
        tokio::spawn(self.clone().read(worker.clone(), stdout));
        tokio::spawn(reap(worker.clone(), child));
        match tokio::time::timeout(START_TIMEOUT, is_ready).await {
            Ok(Ok(confinement)) => {
                tracing::info!(pid, %confinement, "sandbox worker started");
                Ok(worker)
            }
            _ => {
                worker.kill.notify_one();
                Err(std::io::Error::other("the worker did not become ready"))
            }
        }
    }

    /// Reads the worker's frames until it ends; anything malformed kills it.
    async fn read(self, worker: Arc<Worker>, stdout: ChildStdout) {
        let (mut stdout, mut buffer) = (wire::buffered(stdout), Vec::new());
        loop {
            match wire::read::<FromWorker>(&mut stdout, &mut buffer).await {
                Ok(Some(message)) => {
                    if let Err(fault) = self.handle(&worker, message) {
                        self.kill(&worker, fault);
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    self.kill(&worker, &format!("unreadable frame: {e}"));
                    break;
                }
            }
        }
        worker.alive.store(false, Ordering::Release);
        // Dropping the callers' senders answers each of them "the worker stopped".
        let state = std::mem::take(&mut *worker.lock());
        // A worker that ends with calls in progress, unasked, crashed (or broke the protocol).
        if !worker.retiring.load(Ordering::Acquire) && !self.inner.closed.load(Ordering::Acquire) {
            self.quarantine(&state.calls);
        }
        drop(state);
        self.start_successor(&worker);
    }

    /// Starts the replacement of a worker that died or is being replaced now, rather than
    /// on the next call, so no caller waits for it.
    fn start_successor(&self, worker: &Arc<Worker>) {
        if self.inner.closed.load(Ordering::Acquire) {
            return;
        }
        let Some(index) = self.slot_serving(worker) else {
            return;
        };
        let pool = self.clone();
        tokio::spawn(async move {
            // A failure is logged by `worker`; the next call tries again.
            let _ = pool.worker(&pool.inner.slots[index]).await;
        });
    }

    fn handle(&self, worker: &Arc<Worker>, message: FromWorker) -> Result<(), &'static str> {
        match message {
            FromWorker::Ready { confinement } => {
                let ready = worker.lock().ready.take().ok_or("a second Ready")?;
                let _ = ready.send(confinement);
            }
            FromWorker::Done {
                id,
                report,
                wear,
                lost_isolate,
                ran_heavy,
            } => {
                // A call the server gave up on has no waiter any more.
                if let Some(call) = worker.lock().calls.remove(&id) {
                    let _ = call.reply.send(Reply::Done {
                        report,
                        wear,
                        lost_isolate,
                        ran_heavy,
                    });
                }
            }
            FromWorker::NeedCode { id } => {
                let mut state = worker.lock();
                if let Some(call) = state.calls.remove(&id) {
                    let _ = call.reply.send(Reply::NeedCode);
                }
            }
            FromWorker::HostCall {
                id,
                call,
                slug,
                version,
                op,
            } => {
                let (code, builder) = match worker.admit_op(call, &slug, &version) {
                    Ok(admitted) => admitted,
                    Err(refused) => {
                        worker.send(&ToWorker::HostReply {
                            id,
                            result: Err(refused),
                        });
                        return Ok(());
                    }
                };
                let pool = self.clone();
                let worker = worker.clone();
                // The op and the encoding of its reply are this builder's share of the
                // server's work.
                let charged_to = builder.clone();
                tokio::spawn(self.inner.fair.charged(&charged_to, async move {
                    let result = match op.checked(&code, &pool.inner.config) {
                        Ok(op) => pool.inner.host.call(&code, call, op).await,
                        Err(refused) => Err(refused.into()),
                    };
                    worker.host_ops.fetch_sub(1, Ordering::AcqRel);
                    worker.end_op(&builder, id, result);
                }));
            }
            FromWorker::Stats { id, stats } => {
                if let Some(reply) = worker.lock().stats.remove(&id) {
                    let _ = reply.send(stats);
                }
            }
            FromWorker::Warmed { id } => {
                if let Some(reply) = worker.lock().warmed.remove(&id) {
                    let _ = reply.send(());
                }
            }
            #[cfg(feature = "wall-probe")]
            FromWorker::Probed { id, outcome } => {
                if let Some(reply) = worker.lock().probes.remove(&id) {
                    let _ = reply.send(outcome);
                }
            }
        }
        Ok(())
    }

    /// A call's answer is overdue: kill the worker unless it still answers a ping.
    fn check_alive(&self, worker: Arc<Worker>) {
        let pool = self.clone();
        tokio::spawn(async move {
            if pool.ask_stats(&worker, PING_TIMEOUT).await.is_none() {
                pool.kill(&worker, "it stopped answering");
            }
        });
    }

    /// Replaces a worker that went wrong: new calls go to a fresh worker at once, and this one
    /// is killed once its calls are done.
    fn replace(&self, worker: &Arc<Worker>, why: &str) {
        if worker.retiring.swap(true, Ordering::AcqRel) {
            return;
        }
        tracing::error!(pid = worker.pid, why, "replacing a sandbox worker");
        self.start_successor(worker);
        self.end_after_its_calls(worker);
    }

    /// Replaces a worker that dropped its share of isolates, the planned way: it keeps taking
    /// calls until its successor is started and warm (a start can take seconds on a loaded
    /// machine, and no caller should wait for it), then ends after the calls it holds.
    ///
    /// One predecessor at a time per slot: while the last one still finishes its calls, the
    /// worker serves on (a later call recycles it). Builders whose calls drop isolates fast
    /// (those set apart) would otherwise start a worker every few seconds, each beside the
    /// ones still waiting for their calls to reach their time limits.
    fn recycle(&self, worker: &Arc<Worker>, wear: Wear) {
        let Some(slot) = self.slot_serving(worker) else {
            return;
        };
        let predecessor = self.inner.slots[slot]
            .predecessor
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .upgrade();
        if predecessor.is_some_and(|p| p.alive.load(Ordering::Acquire)) {
            return;
        }
        if worker.recycled.swap(true, Ordering::AcqRel) {
            return;
        }
        tracing::info!(
            pid = worker.pid,
            isolates_dropped = wear.isolates_dropped,
            "recycling a sandbox worker that dropped its share of isolates"
        );
        let (pool, worker) = (self.clone(), worker.clone());
        tokio::spawn(async move {
            let slot = &pool.inner.slots[slot];
            let _starting = slot.starting.lock().await;
            // If it failed meanwhile, `worker` has replaced it (or will, on the next call).
            if pool.slot_serving(&worker).is_none() || worker.retiring.load(Ordering::Acquire) {
                return;
            }
            match pool.spawn(slot).await {
                Ok(successor) => {
                    *slot.warming.lock().unwrap_or_else(PoisonError::into_inner) =
                        Some(successor.clone());
                    pool.warm_up(&successor, &worker).await;
                    *slot.warming.lock().unwrap_or_else(PoisonError::into_inner) = None;
                    *slot.current.lock().unwrap_or_else(PoisonError::into_inner) = Some(successor);
                    pool.inner.recycles.fetch_add(1, Ordering::Relaxed);
                    worker.retiring.store(true, Ordering::Release);
                    *slot
                        .predecessor
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = Arc::downgrade(&worker);
                    pool.end_after_its_calls(&worker);
                }
                Err(e) => {
                    // It serves on; a later call tries again.
                    tracing::error!(error = %e, "cannot start a sandbox worker to recycle one");
                    worker.recycled.store(false, Ordering::Release);
                }
            }
        });
    }

    /// Loads into a recycle's `successor` the endpoints `predecessor` holds isolates of (but
    /// those of heavy builders, who stay heavy there), as many of each, before calls switch to it ([`WARM_TIMEOUT`] at most, and not past the
    /// predecessor's death). A worker is `Ready`
    /// before it has built any runtime: switched to cold, every call behind the switch queued
    /// behind its runtime builds and module loads (half a second under load, bench/RESULTS.md).
    /// The warm-up counts as a call of each endpoint, so its module's top level may use `ctx`
    /// as in a call's cold start.
    async fn warm_up(&self, successor: &Arc<Worker>, predecessor: &Worker) {
        let Some(stats) = self.ask_stats(predecessor, PING_TIMEOUT).await else {
            return;
        };
        // A heavy builder's endpoints start cold if called again (warming them doubles what an
        // attacker holds while the two workers overlap), and the builder stays heavy in the
        // successor: a recycle must not reset its mark.
        let mut endpoints: Vec<(Arc<EndpointCode>, usize)> = Vec::new();
        let mut heavy: Vec<String> = Vec::new();
        {
            let state = predecessor.lock();
            for endpoint in &stats.endpoints {
                let Some(served) = state.served(&endpoint.slug, &endpoint.version) else {
                    continue;
                };
                if endpoint.heavy {
                    heavy.push(served.code.builder().to_owned());
                } else if endpoint.instances > 0 {
                    endpoints.push((served.code.clone(), endpoint.instances));
                }
            }
        }
        let mut warm: Vec<wire::WarmRef> = endpoints
            .iter()
            .map(|(code, instances)| wire::WarmRef {
                code,
                instances: *instances,
            })
            .collect();
        // The busiest first: when they do not all fit in one frame, they are the ones warmed.
        warm.sort_by_key(|endpoint| std::cmp::Reverse(endpoint.instances));
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = loop {
            match wire::encode(&wire::WarmFrame::Warm {
                id,
                endpoints: &warm,
                heavy: &heavy,
            }) {
                Ok(frame) => break frame,
                Err(_) if warm.len() > 1 => warm.truncate(warm.len() / 2),
                Err(_) => return,
            }
        };
        let _serving: Vec<Serving> = warm
            .iter()
            .map(|endpoint| Serving::begin(successor, endpoint.code))
            .collect();
        let (reply, warmed) = oneshot::channel();
        {
            let mut state = successor.lock();
            state.warmed.insert(id, reply);
            for endpoint in &warm {
                state
                    .sent
                    .insert(endpoint.code.slug.clone(), endpoint.code.version.clone());
            }
        }
        successor.send_frame(frame);
        // Not past the predecessor's end: calls of the slot wait for the switch then.
        let deadline = Instant::now() + WARM_TIMEOUT;
        tokio::pin!(warmed);
        while predecessor.alive.load(Ordering::Acquire) && Instant::now() < deadline {
            if tokio::time::timeout(WARM_POLL, &mut warmed).await.is_ok() {
                break;
            }
        }
        successor.lock().warmed.remove(&id);
    }

    /// The index of the slot `worker` serves now, if it still does.
    fn slot_serving(&self, worker: &Arc<Worker>) -> Option<usize> {
        self.inner.slots.iter().position(|slot| {
            slot.current()
                .is_some_and(|current| Arc::ptr_eq(&current, worker))
        })
    }

    /// Kills a worker that no longer gets calls once the ones it holds are done (60 s at
    /// most), keeping its counters in the pool's totals.
    fn end_after_its_calls(&self, worker: &Arc<Worker>) {
        let (pool, worker) = (self.clone(), worker.clone());
        tokio::spawn(async move {
            let drained = Instant::now() + DRAIN_TIMEOUT;
            while Instant::now() < drained && !worker.lock().calls.is_empty() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            if let Some(last) = pool.ask_stats(&worker, PING_TIMEOUT).await {
                pool.inner
                    .departed
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .add(last.counters_only());
            }
            worker.kill.notify_one();
        });
    }

    fn kill(&self, worker: &Worker, why: &str) {
        if worker.alive.swap(false, Ordering::AcqRel) {
            tracing::error!(pid = worker.pid, why, "killing a sandbox worker");
        }
        worker.kill.notify_one();
    }

    async fn ask_stats(&self, worker: &Worker, within: Duration) -> Option<PoolStats> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        worker.lock().stats.insert(id, reply);
        worker.send(&ToWorker::Stats { id });
        let stats = tokio::time::timeout(within, answer).await.ok()?.ok();
        worker.lock().stats.remove(&id);
        stats
    }

    /// Test builds only: runs `probe` in the worker that serves `code`'s endpoint.
    #[cfg(feature = "wall-probe")]
    pub async fn probe(&self, code: &EndpointCode, probe: super::Probe) -> Vec<String> {
        let worker = self
            .worker(self.slot_at(code.builder(), self.place_of(code.builder())))
            .await
            .expect("worker starts");
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        worker.lock().probes.insert(id, reply);
        worker.send(&ToWorker::Probe { id, probe });
        answer
            .await
            .unwrap_or_else(|_| vec!["worker: gone".to_owned()])
    }

    /// Stops the endpoint's calls in progress, then retires it ([`WorkerPool::retire`]): what
    /// its delete does. Each caller is answered [`SandboxError::Stopped`] at once; whatever its
    /// code still runs in a worker reaches nothing, its operations naming a call that ended.
    pub fn stop(&self, slug: &str) {
        for worker in self.inner.slots.iter().flat_map(Slot::workers) {
            let mut state = worker.lock();
            let stopped: Vec<u64> = state
                .calls
                .iter()
                .filter(|(_, call)| call.code.slug == slug)
                .map(|(id, _)| *id)
                .collect();
            for id in stopped {
                if let Some(call) = state.calls.remove(&id) {
                    let _ = call.reply.send(Reply::Stopped);
                }
            }
        }
        self.retire(slug);
    }

    /// Drops the endpoint's isolates and code in every worker; its calls in progress finish.
    pub fn retire(&self, slug: &str) {
        for worker in self.inner.slots.iter().flat_map(Slot::workers) {
            let mut state = worker.lock();
            state.sent.remove(slug);
            if let Some(versions) = state.serving.get_mut(slug) {
                versions.retain(|served| served.calls > 0);
                if versions.is_empty() {
                    state.serving.remove(slug);
                }
            }
            drop(state);
            worker.send(&ToWorker::Retire { slug: slug.into() });
        }
    }

    /// The workers' pools summed, with the worker processes themselves.
    pub async fn stats(&self) -> PoolStats {
        let mut total = PoolStats::default();
        for slot in &self.inner.slots {
            let Some(worker) = slot.current().filter(|w| w.alive.load(Ordering::Acquire)) else {
                continue;
            };
            total.worker_pids.push(worker.pid);
            if let Some(stats) = self.ask_stats(&worker, PING_TIMEOUT).await {
                total.add(stats);
            }
        }
        total.add(
            self.inner
                .departed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        );
        total.worker_restarts = self.inner.restarts.load(Ordering::Relaxed);
        total.worker_recycles = self.inner.recycles.load(Ordering::Relaxed);
        let apart = self.apart();
        let at = |place| apart.values().filter(|stay| stay.place == place).count();
        (total.heavy_builders, total.quarantined_builders) =
            (at(Place::Heavy), at(Place::Quarantine));
        drop(apart);
        total.endpoints.sort_by(|a, b| a.slug.cmp(&b.slug));
        total
    }

    /// Refuses new calls and stops the workers: each finishes what it holds (10 s at most),
    /// then is killed.
    pub async fn shutdown(&self) {
        self.inner.closed.store(true, Ordering::Release);
        let workers = self.inner.slots.iter().filter_map(|slot| {
            slot.current
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
        });
        for worker in workers.collect::<Vec<_>>() {
            worker.send(&ToWorker::Shutdown);
            let ended = Instant::now() + Duration::from_secs(10);
            while worker.alive.load(Ordering::Acquire) && Instant::now() < ended {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            worker.kill.notify_one();
        }
    }
}

impl Worker {
    fn lock(&self) -> MutexGuard<'_, WorkerState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends a message of the server's own, each far below a frame's limit but a warm-up's,
    /// which [`WorkerPool::warm`] fits to it.
    fn send(&self, message: &ToWorker) {
        match wire::encode(message) {
            Ok(frame) => self.send_frame(frame),
            Err(too_large) => tracing::error!("a message to a sandbox worker is {too_large}"),
        }
    }

    fn send_frame(&self, frame: Vec<u8>) {
        self.frames.push_server(Frame {
            bytes: frame,
            _reply: None,
        });
    }

    /// Whether the worker must be sent the code with this call.
    fn needs_code(&self, code: &EndpointCode) -> bool {
        let mut state = self.lock();
        if state.sent.get(&code.slug) == Some(&code.version) {
            return false;
        }
        state.sent.insert(code.slug.clone(), code.version.clone());
        true
    }
}

/// One version of an endpoint served by a worker: the code the server sent, and its calls in
/// progress there.
struct Served {
    code: Arc<EndpointCode>,
    calls: usize,
}

impl WorkerState {
    fn served(&self, slug: &str, version: &str) -> Option<&Served> {
        self.serving
            .get(slug)?
            .iter()
            .find(|served| served.code.version == version)
    }
}

/// Counts a call of an endpoint in progress in a worker, for as long as it lives.
struct Serving<'a> {
    worker: &'a Worker,
    /// The entry's own code, which finds the entry again.
    code: Arc<EndpointCode>,
}

impl<'a> Serving<'a> {
    fn begin(worker: &'a Worker, code: &EndpointCode) -> Self {
        let mut guard = worker.lock();
        let state = &mut *guard;
        let versions = match state.serving.get_mut(&code.slug) {
            Some(versions) => versions,
            None => state.serving.entry(code.slug.clone()).or_default(),
        };
        // Kept at zero calls too (until the endpoint is retired or its next version is
        // served), so a call of an endpoint served before does not copy its code again.
        let index = match versions
            .iter()
            .position(|served| served.code.version == code.version)
        {
            Some(index) => index,
            None => {
                versions.retain(|served| served.calls > 0);
                versions.push(Served {
                    code: Arc::new(code.clone()),
                    calls: 0,
                });
                versions.len() - 1
            }
        };
        let served = &mut versions[index];
        served.calls += 1;
        Serving {
            worker,
            code: served.code.clone(),
        }
    }
}

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        let mut state = self.worker.lock();
        let served = state.serving.get_mut(&self.code.slug).and_then(|versions| {
            versions
                .iter_mut()
                .find(|served| Arc::ptr_eq(&served.code, &self.code))
        });
        if let Some(served) = served {
            served.calls = served.calls.saturating_sub(1);
        }
    }
}

/// Waits for the worker process to end (or kills it when asked) and logs how it ended.
async fn reap(worker: Arc<Worker>, mut child: Child) {
    let status = tokio::select! {
        status = child.wait() => status,
        () = worker.kill.notified() => {
            let _ = child.start_kill();
            child.wait().await
        }
    };
    let was_alive = worker.alive.swap(false, Ordering::AcqRel);
    // A worker being replaced is killed on purpose once its calls are done.
    let expected = worker.retiring.load(Ordering::Acquire);
    match status {
        Ok(status) if was_alive && !expected && !status.success() => {
            tracing::error!(pid = worker.pid, %status, "a sandbox worker exited")
        }
        Ok(status) => tracing::debug!(pid = worker.pid, %status, "a sandbox worker ended"),
        Err(e) => tracing::error!(pid = worker.pid, error = %e, "cannot wait for a sandbox worker"),
    }
}

/// The pool of a worker apart serving `place`: a worker's share where heavy builders are not
/// held back (every builder there is heavy, and the budget is what holds them), with a memory
/// budget of its own whatever the number of builders there. The heavy worker's is one
/// builder's floor (128 MiB by default: two isolates at the default 64 MiB limit at once);
/// the quarantine's half of that (one such isolate: its builders lose isolates to their
/// limits or crashed a worker, and a heap bomb's isolate is 64 MiB). A cold start finding no
/// room waits for it as calls end.
fn apart_share_of(share: &PoolConfig, place: Place) -> PoolConfig {
    let floor = share
        .memory_budget_bytes
        .min(share.heap_floor_per_owner_bytes);
    PoolConfig {
        memory_budget_bytes: match place {
            Place::Quarantine => floor / 2,
            Place::Shared | Place::Heavy => floor,
        },
        hold_back_heavy: false,
        ..share.clone()
    }
}

/// The configuration a worker is given: its share of the pool-wide limits (each worker runs
/// its own pool), the per-call and per-owner limits unchanged (an owner's endpoints all run in
/// one worker, so its quotas hold exactly).
pub(crate) fn share_of(config: &PoolConfig, workers: usize) -> PoolConfig {
    let workers = workers.max(1);
    PoolConfig {
        max_isolates: config.max_isolates.div_ceil(workers),
        memory_budget_bytes: config.memory_budget_bytes.div_ceil(workers),
        spare_isolates: config.spare_isolates.div_ceil(workers),
        max_abandoned_isolates: config.max_abandoned_isolates.div_ceil(workers),
        ..config.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker with no process behind it, and what is queued for it.
    fn worker() -> (Worker, Arc<Lanes<Frame>>) {
        let frames = Arc::new(Lanes::new());
        let worker = Worker {
            pid: 0,
            frames: frames.clone(),
            builders: Arc::default(),
            state: Mutex::default(),
            alive: AtomicBool::new(true),
            kill: Notify::new(),
            host_ops: AtomicUsize::new(0),
            retiring: AtomicBool::new(false),
            recycled: AtomicBool::new(false),
        };
        (worker, frames)
    }

    /// A file read's reply of `bytes`, as `builder`'s operation `id`.
    fn read(worker: &Worker, builder: &str, id: u64, bytes: usize) {
        worker.begin_op(builder).unwrap();
        let answer = HostAnswer::File(Some(vec![0; bytes]));
        worker.end_op(builder, id, Ok(answer));
    }

    fn refused(frame: &Frame) -> bool {
        let code = b"resource_limit";
        frame.bytes.windows(code.len()).any(|w| w == code)
    }

    /// With the defaults (a 1 GiB budget over two workers, a builder's heap capped at 256 MiB
    /// and its floor at 128 MiB, the quarantine's budget half of that), a builder's endpoint
    /// can have at most 64 MiB of heap and the operator's 512; with a floor of 512, a
    /// builder's cap is what holds.
    #[test]
    fn the_largest_heap_fits_where_the_endpoint_can_run() {
        let options = WorkerOptions {
            command: WorkerCommand {
                program: "toolhost".into(),
                args: Vec::new(),
                log_filter: String::new(),
            },
            count: 2,
            recycle_after_dropped: WorkerOptions::DEFAULT_RECYCLE_AFTER_DROPPED,
        };
        let config = PoolConfig::default();
        assert_eq!(options.largest_heap(&config, true), 64 << 20);
        assert_eq!(options.largest_heap(&config, false), 512 << 20);
        let roomy_floor = PoolConfig {
            heap_floor_per_owner_bytes: 512 << 20,
            ..PoolConfig::default()
        };
        assert_eq!(options.largest_heap(&roomy_floor, true), 256 << 20);
    }

    /// A builder's replies waiting to be written are capped, its own only, and given back
    /// when written (dropped by the writer); its operations in progress are capped too.
    #[test]
    fn a_builders_share_of_a_worker_is_capped_and_given_back() {
        let (worker, queue) = worker();
        let big = 15 << 20; // about 20 MiB of reply in base64
        read(&worker, "attacker", 1, big);
        let first = queue.try_take().unwrap();
        assert!(!refused(&first) && first.bytes.len() > big);
        read(&worker, "attacker", 2, big);
        let second = queue.try_take().unwrap();
        assert!(refused(&second), "past 32 MiB queued: refused");
        assert!(second.bytes.len() < 1024);
        read(&worker, "victim", 3, big);
        assert!(
            !refused(&queue.try_take().unwrap()),
            "another builder's share"
        );
        drop(first);
        read(&worker, "attacker", 4, big);
        assert!(
            !refused(&queue.try_take().unwrap()),
            "given back once written"
        );

        for _ in 0..MAX_HOST_OPS_PER_BUILDER {
            worker.begin_op("busy").unwrap();
        }
        let over = worker.begin_op("busy").unwrap_err();
        assert_eq!(over.code, "resource_limit");
        assert!(worker.begin_op("other").is_ok());
        worker.end_op("busy", 5, Ok(HostAnswer::Done));
        assert!(
            worker.begin_op("busy").is_ok(),
            "one ended, one more may start"
        );
    }
}
