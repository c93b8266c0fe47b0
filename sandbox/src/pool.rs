//! The isolate pool: the front of the actor system. It maps endpoints to their worker threads,
//! admits or refuses invocations, starts instances on demand, evicts the least recently used
//! idle isolate when a new one would break a limit (`max_isolates`, the memory budget, the
//! owner's quotas), and retires an endpoint's isolates when its version changes.
//!
//! Memory is counted at each isolate's heap limit. A new isolate that would break its owner's
//! quota evicts that owner's least recently used idle isolate; one that would break a pool-wide
//! limit evicts the owner's first, then anyone's. An owner past its floor
//! (`heap_floor_per_owner_bytes`) is held to the budget less a reserve of that size, kept for
//! owners below theirs, and evicts only its own idle isolates and those of owners also past
//! their floor; so is a heavy builder (`limits::cpu`: long CPU bursts, or calls that lost
//! their isolates), whose isolates are the ones filling the pool, where heavy builders share
//! it with light ones (`PoolConfig::hold_back_heavy`). With nothing idle to evict,
//! the call goes to a busy instance of its endpoint if there is one. Otherwise, over its
//! owner's quota it is refused `Overloaded`; short of room in the pool (the budget, or stuck
//! threads) it waits for room up to its time limit, woken as calls end (`place`), unless its
//! builder is held back as heavy: the limits are never exceeded to serve it.
//!
//! A caller waits for its answer until its call's time limit plus `timeout_grace` at most
//! (`limits::deadline`). A thread still busy then is abandoned: taken out of its endpoint
//! (whose next call starts a fresh instance) and kept in `abandoned`, where it still counts
//! against every limit, until it comes back and ends. At `max_abandoned_isolates` no new
//! isolate starts.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::error::Overload;
use crate::invocation::RawReport;
use crate::limits::admission::{Admission, Permit};
use crate::limits::cpu::CpuShares;
use crate::limits::deadline::{Check, Progress};
use crate::limits::timeout::Watchdog;
use crate::ops::web::names_web_globals;
use crate::worker::{report, Command, Counters, QueueError, Reply, Shared, WorkerHandle};
use crate::{EndpointCode, Host, Invocation, InvocationReport, PoolConfig, SandboxError};

mod direct;
pub(crate) use direct::{AnswerSink, Answered, DirectReply};

/// Runs handlers in isolates. Cheap to clone; all clones share one pool.
#[derive(Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    state: Mutex<State>,
    /// Woken when a call ends while calls wait for room ([`Pool::place`]).
    room: tokio::sync::Notify,
    /// Calls waiting for room (as `State::waiting`, summed): read without the lock as each
    /// call ends.
    waiting: std::sync::atomic::AtomicUsize,
    /// The number of the next call [`Pool::invoke`] runs (from 1: see [`crate::NO_CALL`]).
    next_call: std::sync::atomic::AtomicU64,
    /// The hard deadlines of calls answered by their isolate threads (`direct`), watched once
    /// the first such call is placed.
    overdue: std::sync::OnceLock<Arc<direct::Overdue>>,
}

#[derive(Default)]
struct State {
    endpoints: HashMap<String, Endpoint>,
    /// Logical clock for least-recently-used eviction.
    tick: u64,
    /// Unbound threads holding a ready blank runtime, handed to the next cold start. Each is
    /// plain or has the web scripts loaded; a spare taken is replaced by one of the kind its
    /// endpoint wanted, so the mix follows the cold starts (docs/handler-platform.md, "Spares").
    spares: Vec<WorkerHandle>,
    /// Threads a caller gave up on (stuck past their hard deadline) that have not ended yet.
    abandoned: Vec<Abandoned>,
    /// Calls waiting for room for an isolate, by builder ([`Pool::place`]).
    waiting: HashMap<String, usize>,
    closed: bool,
}

/// Calls that may wait for room for an isolate at once, in all and of one builder; more are
/// refused at once, so waiting cannot pile up.
const MAX_WAITING: usize = 64;
const MAX_WAITING_PER_BUILDER: usize = 4;
/// How often a call waiting for room looks again besides when a call ends (an abandoned
/// thread that ends frees room, and no call ends with it).
const ROOM_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Why [`Pool::dispatch`] did not queue a call.
enum Unplaced {
    /// No isolate fits now, for a reason that passes as others' calls end: the call is given
    /// back, still admitted, to wait for room.
    NoRoom(Overload, Job, Permit),
    Refused(SandboxError),
}

/// A call not queued yet: what its isolate runs and where its report goes.
struct Job {
    invocation: Invocation,
    reply: Reply,
}

/// An abandoned thread still holds its isolate's memory: it counts as a live isolate of its
/// endpoint's owner until it ends.
struct Abandoned {
    progress: Arc<Progress>,
    owner: Option<String>,
    heap: usize,
}

/// Where an invocation was queued: its thread's progress, and its ticket there (see
/// [`Progress::check`]).
struct Placed {
    progress: Arc<Progress>,
    ticket: u64,
}

struct Endpoint {
    code: Arc<EndpointCode>,
    instances: Vec<WorkerHandle>,
    admission: Admission,
    last_used: u64,
}

/// A snapshot of the pool's state and counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PoolStats {
    /// Isolate threads currently bound to endpoints.
    pub live_isolates: usize,
    /// Their heap limits, summed with those of abandoned threads: what counts against the
    /// memory budget.
    pub live_heap_bytes: usize,
    /// Unbound threads kept for the next cold starts (their runtime may still be in the making).
    pub spare_isolates: usize,
    /// Spares whose runtime is built: that many cold starts only bind and load the module.
    pub ready_spares: usize,
    /// Spares whose runtime has every web global's scripts loaded (taken first by endpoints
    /// that use the web globals).
    pub web_spares: usize,
    /// Per endpoint: instances and admitted invocations.
    pub endpoints: Vec<EndpointStats>,
    /// Isolates built (first use, after recycling, for a new version).
    pub isolates_created: u64,
    /// Invocations that reached an isolate thread.
    pub invocations: u64,
    /// Isolates replaced after a limit hit or `recycle_after_invocations`.
    pub recycled: u64,
    /// Isolates evicted to stay within `max_isolates`.
    pub evictions: u64,
    /// Endpoints whose isolates were dropped by `retire` or a version change.
    pub retired: u64,
    /// Invocations refused with `Overloaded`.
    pub overloaded: u64,
    /// Isolate threads abandoned past their hard deadline (see
    /// [`PoolConfig::timeout_grace`]) that have not ended yet.
    pub abandoned_isolates: usize,
    /// Isolate threads abandoned so far.
    pub abandoned: u64,
    /// Calls served again on a fresh thread because their thread's engine could no longer
    /// load a module that had loaded before (see the `worker` module docs); each is logged.
    pub engine_resets: u64,
    /// Isolate threads moved to the lowest CPU priority because their builder ran long CPU
    /// bursts ([`PoolConfig::cpu_shares`]).
    #[serde(default)]
    pub cpu_demotions: u64,
    /// Process ids of the live worker processes (empty when isolates run in the server).
    pub worker_pids: Vec<u32>,
    /// Worker processes started to replace one that crashed, hung, broke the protocol or held
    /// an isolate that would not stop.
    pub worker_restarts: u64,
    /// Worker processes replaced as planned, after dropping their share of isolates (see
    /// [`crate::WorkerOptions::recycle_after_dropped`]).
    pub worker_recycles: u64,
    /// Builders served by the quarantine worker now: their calls were in progress in a worker
    /// that crashed, or lost their isolates (see `WorkerPool`).
    pub quarantined_builders: usize,
    /// Builders served by the heavy worker now: their calls ran long bursts of CPU (see
    /// `WorkerPool`).
    pub heavy_builders: usize,
}

impl PoolStats {
    /// Only the running totals of these figures (what was built, run, recycled...), with
    /// the gauges of what is live now at zero: what a worker that ended still counts for.
    pub(crate) fn counters_only(self) -> PoolStats {
        PoolStats {
            isolates_created: self.isolates_created,
            invocations: self.invocations,
            recycled: self.recycled,
            evictions: self.evictions,
            retired: self.retired,
            overloaded: self.overloaded,
            abandoned: self.abandoned,
            engine_resets: self.engine_resets,
            cpu_demotions: self.cpu_demotions,
            ..PoolStats::default()
        }
    }

    /// Adds another pool's figures (one worker process's) to these.
    pub(crate) fn add(&mut self, other: PoolStats) {
        self.live_isolates += other.live_isolates;
        self.live_heap_bytes += other.live_heap_bytes;
        self.spare_isolates += other.spare_isolates;
        self.ready_spares += other.ready_spares;
        self.web_spares += other.web_spares;
        self.endpoints.extend(other.endpoints);
        self.isolates_created += other.isolates_created;
        self.invocations += other.invocations;
        self.recycled += other.recycled;
        self.evictions += other.evictions;
        self.retired += other.retired;
        self.overloaded += other.overloaded;
        self.abandoned_isolates += other.abandoned_isolates;
        self.abandoned += other.abandoned;
        self.engine_resets += other.engine_resets;
        self.cpu_demotions += other.cpu_demotions;
    }
}

/// A pool's wear, as [`Pool::wear`] reports it.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Wear {
    /// Abandoned isolate threads not ended yet (as [`PoolStats::abandoned_isolates`]).
    pub abandoned_isolates: usize,
    /// Isolates built and dropped since.
    pub isolates_dropped: u64,
}

fn abandoned_in(state: &State) -> usize {
    state
        .abandoned
        .iter()
        .filter(|a| !a.progress.has_exited())
        .count()
}

/// One endpoint in [`PoolStats`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EndpointStats {
    /// Endpoint slug.
    pub slug: String,
    /// Version whose isolates are live.
    pub version: String,
    /// Isolate threads of this endpoint.
    pub instances: usize,
    /// Whose endpoint it is ([`crate::EndpointCode::owner`]).
    pub owner: Option<String>,
    /// Invocations admitted and not finished.
    pub in_flight: usize,
    /// Whether its builder is heavy now (a heavy call or a lost isolate in the last minute,
    /// `limits::cpu`): a recycled worker's successor does not warm such endpoints up.
    #[serde(default)]
    pub heavy: bool,
}

impl Pool {
    /// Creates an empty pool; isolates start on demand.
    ///
    /// # Panics
    /// If the watchdog thread cannot be spawned.
    pub fn new(config: PoolConfig, host: Arc<dyn Host>) -> Pool {
        let watchdog = Watchdog::start().expect("cannot spawn the sandbox watchdog thread");
        let pool = Pool {
            inner: Arc::new(Inner {
                shared: Arc::new(Shared {
                    cpu: Arc::new(CpuShares::new(config.cpu_shares, config.heavy_cpu_per_sec)),
                    config,
                    host,
                    watchdog,
                    counters: Counters::default(),
                    threads: Mutex::default(),
                }),
                state: Mutex::new(State::default()),
                room: tokio::sync::Notify::new(),
                waiting: std::sync::atomic::AtomicUsize::new(0),
                next_call: std::sync::atomic::AtomicU64::new(crate::NO_CALL + 1),
                overdue: std::sync::OnceLock::new(),
            }),
        };
        pool.refill_spares(&mut pool.lock(), false);
        pool
    }

    /// Runs `code`'s handler once. Never panics; every failure is in the report.
    pub async fn invoke(&self, code: &EndpointCode, invocation: Invocation) -> InvocationReport {
        let call = self.inner.next_call.fetch_add(1, Ordering::Relaxed);
        self.invoke_raw(code, invocation, call).await.parsed()
    }

    /// [`Pool::invoke`] with the body as the isolate left it, JSON text, and the call's number
    /// given: a worker process's, numbered by the server, whose reports it sends as they are.
    async fn invoke_raw(
        &self,
        code: &EndpointCode,
        invocation: Invocation,
        call: u64,
    ) -> RawReport {
        let received = Instant::now();
        let (reply, answer) = oneshot::channel();
        let job = Job {
            invocation,
            reply: Reply::Awaited(reply),
        };
        let (placed, permit) = match self.place(code, job, call, received).await {
            Ok(sent) => sent,
            Err(err) => return self.refused(err, received),
        };
        let answer = self.answer(code, answer, placed, received).await;
        // A call whose promise can never settle ends early (its isolate serves on), but it is
        // answered at its time limit, as documented for `timeout`, and stays admitted until
        // then: answered at once, a caller could loop on it as fast as the server answers.
        if matches!(answer.result, Err(SandboxError::Timeout)) {
            tokio::time::sleep_until((received + self.time_limit(code)).into()).await;
        }
        self.release(permit);
        answer
    }

    /// Ends a call's admission, waking the calls waiting for room if any.
    fn release(&self, permit: Permit) {
        drop(permit);
        if self.inner.waiting.load(Ordering::Acquire) > 0 {
            self.inner.room.notify_waiters();
        }
    }

    /// The time limit of `code`'s calls.
    fn time_limit(&self, code: &EndpointCode) -> Duration {
        code.limits
            .unwrap_or(self.inner.shared.config.default_limits)
            .timeout
    }

    /// Queues the call on an isolate. When none fits because the pool's budget is taken or
    /// too many isolates are stuck, the call waits for room (up to its time limit, looking
    /// again as others' calls end) rather than being refused at once: busy isolates free
    /// their room within their own time limits. A held-back heavy builder's calls do not wait
    /// (their isolates are what fills the pool), nor more than a few of one builder's.
    async fn place(
        &self,
        code: &EndpointCode,
        job: Job,
        call: u64,
        received: Instant,
    ) -> Result<(Placed, Permit), SandboxError> {
        match self.dispatch(code, job, call, received, None) {
            Ok(placed) => Ok(placed),
            Err(Unplaced::Refused(err)) => Err(err),
            Err(Unplaced::NoRoom(why, job, permit)) => {
                self.wait_for_room(code, (why, job, permit), call, received)
                    .await
            }
        }
    }

    /// [`Pool::place`] once the call found no room: it waits for room, looking again as
    /// others' calls end, until its time limit.
    async fn wait_for_room(
        &self,
        code: &EndpointCode,
        unplaced: (Overload, Job, Permit),
        call: u64,
        received: Instant,
    ) -> Result<(Placed, Permit), SandboxError> {
        let overloaded = |why| SandboxError::Overloaded {
            retry_after_secs: self.inner.shared.config.overload_retry_after_secs,
            why,
        };
        let (mut why, mut job, mut permit) = unplaced;
        let builder = code.builder();
        if self.held_back(builder) {
            return Err(overloaded(why));
        }
        let Some(_waiting) = Waiting::join(self, builder) else {
            return Err(overloaded(why));
        };
        let give_up = received + self.time_limit(code);
        loop {
            let now = Instant::now();
            if now >= give_up {
                return Err(overloaded(why));
            }
            let room = self.inner.room.notified();
            let _ = tokio::time::timeout(ROOM_POLL.min(give_up - now), room).await;
            match self.dispatch(code, job, call, received, Some(permit)) {
                Ok(placed) => return Ok(placed),
                Err(Unplaced::Refused(err)) => return Err(err),
                Err(Unplaced::NoRoom(again, back, held)) => {
                    (why, job, permit) = (again, back, held);
                }
            }
        }
    }

    /// Starts isolates of `code`'s endpoint until it has `instances` (at most
    /// `instances_per_endpoint`) and has each load its module, without a call; the future
    /// answers how many are ready. The isolates are started (and counted) when this is called,
    /// so whatever is done to the pool afterwards (a retire) applies to them. A worker process
    /// taking over from a recycled one warms what that one served this way, so the calls
    /// switched to it do not queue behind runtime builds. Every limit holds as for a call's
    /// cold start. Should a module fail to load, the endpoint's isolates are dropped, so
    /// nothing of it is remembered: the next call meets the failure itself, as a cold start.
    pub fn warm(
        &self,
        code: &EndpointCode,
        instances: usize,
    ) -> impl std::future::Future<Output = usize> + Send + 'static {
        let loads = self.start_warm(code, instances);
        let (pool, slug) = (self.clone(), code.slug.clone());
        async move {
            let mut ready = 0;
            let mut failed = false;
            for answer in loads {
                match answer.await {
                    Ok(true) => ready += 1,
                    _ => failed = true,
                }
            }
            if failed {
                pool.retire(&slug);
            }
            ready
        }
    }

    /// [`Pool::warm`]'s part under the lock: the instances started, each asked to load.
    fn start_warm(&self, code: &EndpointCode, instances: usize) -> Vec<oneshot::Receiver<bool>> {
        let mut state = self.lock();
        let mut loads = Vec::new();
        if state.closed {
            return loads;
        }
        self.touch(&mut state, code);
        let wanted = instances.min(self.inner.shared.config.instances_per_endpoint);
        while state.endpoints[&code.slug].instances.len() < wanted
            && self.make_room(&mut state, &code.slug).is_ok()
        {
            let Ok(index) = self.start_instance(&mut state, &code.slug) else {
                break;
            };
            let (loaded, answer) = oneshot::channel();
            if state.endpoints[&code.slug].instances[index]
                .load(loaded)
                .is_ok()
            {
                loads.push(answer);
            }
        }
        loads
    }

    /// Waits for the worker's report, or gives up on a thread that is past its hard deadline.
    /// Normally the answer comes first and the timer never fires.
    async fn answer(
        &self,
        code: &EndpointCode,
        mut answer: oneshot::Receiver<RawReport>,
        placed: Placed,
        received: Instant,
    ) -> RawReport {
        let config = &self.inner.shared.config;
        let timeout = code.limits.unwrap_or(config.default_limits).timeout;
        // The earliest instant this call can be overdue: it started at once and ran its time.
        let mut look_at = received + timeout + config.timeout_grace;
        loop {
            match tokio::time::timeout_at(look_at.into(), &mut answer).await {
                Ok(Ok(report)) => return report,
                // The thread ended without answering: it was abandoned with this call still
                // queued (so it never ran), or it died.
                Ok(Err(_)) if placed.progress.is_poisoned() => {
                    return report(Err(SandboxError::Timeout), Vec::new(), received)
                }
                Ok(Err(_)) => {
                    return report(
                        Err(SandboxError::Internal(
                            "the isolate thread ended unexpectedly".to_owned(),
                        )),
                        Vec::new(),
                        received,
                    )
                }
                Err(_late) => match placed.progress.check(placed.ticket, Instant::now()) {
                    Check::WaitUntil(instant) => look_at = instant,
                    Check::GiveUp { error, retire } => {
                        return self.given_up(code, &placed.progress, (error, retire), received)
                    }
                },
            }
        }
    }

    /// The report of a call refused before it ran; one refused for lack of room is counted.
    fn refused(&self, err: SandboxError, received: Instant) -> RawReport {
        if matches!(err, SandboxError::Overloaded { .. }) {
            self.counters().overloaded.fetch_add(1, Ordering::Relaxed);
        }
        report(Err(err), Vec::new(), received)
    }

    /// The report of a call whose thread is overdue ([`Check::GiveUp`]); the caller that found
    /// it so (`retire`) takes the thread out of service.
    fn given_up(
        &self,
        code: &EndpointCode,
        progress: &Arc<Progress>,
        (error, retire): (SandboxError, bool),
        received: Instant,
    ) -> RawReport {
        if retire {
            self.abandon(code, progress);
        }
        report(Err(error), Vec::new(), received)
    }

    /// Takes a thread that missed its hard deadline out of service. It stays counted (as an
    /// isolate of `code`'s endpoint) until it ends.
    fn abandon(&self, code: &EndpointCode, progress: &Arc<Progress>) {
        let config = &self.inner.shared.config;
        let mut state = self.lock();
        if let Some(endpoint) = state.endpoints.get_mut(&code.slug) {
            endpoint
                .instances
                .retain(|instance| !Arc::ptr_eq(instance.progress(), progress));
        }
        state.abandoned.retain(|a| !a.progress.has_exited());
        state.abandoned.push(Abandoned {
            progress: progress.clone(),
            owner: code.owner.clone(),
            heap: self.heap_of(code),
        });
        let stuck = state.abandoned.len();
        drop(state);
        self.inner.shared.cpu.lost_isolate(code.builder());
        self.counters().abandoned.fetch_add(1, Ordering::Relaxed);
        tracing::error!(
            slug = %code.slug,
            owner = code.owner.as_deref().unwrap_or(""),
            stuck,
            "an isolate thread did not stop at its time limit: abandoned"
        );
        if stuck >= config.max_abandoned_isolates {
            tracing::error!(
                stuck,
                "abandoned isolate threads at the cap: no new isolate starts until one ends"
            );
        }
    }

    /// Drops the endpoint's isolates (endpoint deleted or changed); queued invocations finish.
    pub fn retire(&self, slug: &str) {
        if self.lock().endpoints.remove(slug).is_some() {
            self.counters().retired.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Drops the isolates of every endpoint `owner` has here; queued invocations finish. Its
    /// calls go elsewhere now, and what its isolates hold (their heap, the owner's quota)
    /// should count once, where it is served.
    pub(crate) fn retire_owner(&self, owner: &str) {
        let mut state = self.lock();
        let before = state.endpoints.len();
        state
            .endpoints
            .retain(|_, endpoint| endpoint.code.owner.as_deref() != Some(owner));
        let retired = before - state.endpoints.len();
        drop(state);
        self.counters().retired.fetch_add(
            u64::try_from(retired).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// Whether a call of `builder` lost its isolate here (timed out, over its heap limit, or
    /// did not stop) at `since` or later.
    pub(crate) fn lost_isolate_since(&self, builder: &str, since: std::time::Instant) -> bool {
        self.inner.shared.cpu.lost_since(builder, since)
    }

    /// Whether a call of `builder` used a heavy call's CPU here (`limits::cpu`) at `since` or
    /// later.
    pub(crate) fn ran_heavy_since(&self, builder: &str, since: std::time::Instant) -> bool {
        self.inner.shared.cpu.burst_since(builder, since)
    }

    /// What a worker reports with each answer, under one lock: abandoned isolate threads not
    /// ended yet, and isolates built and dropped since (recycled, evicted, retired: what the
    /// engine keeps part of until the process ends).
    pub fn wear(&self) -> Wear {
        let state = self.lock();
        let live: usize = state
            .endpoints
            .values()
            .map(|endpoint| endpoint.instances.len())
            .sum();
        let created = self.counters().isolates_created.load(Ordering::Relaxed);
        Wear {
            abandoned_isolates: abandoned_in(&state),
            isolates_dropped: created.saturating_sub(u64::try_from(live).unwrap_or(u64::MAX)),
        }
    }

    /// `builder` is heavy by the server's account (heavy in the worker this pool's worker
    /// replaces, or served apart for it): it is heavy here too.
    pub(crate) fn heavy_elsewhere(&self, builder: &str) {
        self.inner.shared.cpu.heavy_elsewhere(builder);
    }

    /// Current isolates and counters.
    pub fn stats(&self) -> PoolStats {
        let state = self.lock();
        let mut endpoints: Vec<EndpointStats> = state
            .endpoints
            .iter()
            .map(|(slug, endpoint)| EndpointStats {
                slug: slug.clone(),
                version: endpoint.code.version.clone(),
                instances: endpoint.instances.len(),
                owner: endpoint.code.owner.clone(),
                in_flight: endpoint.admission.in_flight(),
                heavy: self.inner.shared.cpu.is_heavy_now(endpoint.code.builder()),
            })
            .collect();
        let live_heap_bytes = self.usage(&state, None).heap;
        let spare_isolates = state.spares.len();
        let ready_spares = state.spares.iter().filter(|s| s.is_ready()).count();
        let web_spares = state.spares.iter().filter(|s| s.is_web()).count();
        let abandoned_isolates = abandoned_in(&state);
        drop(state);
        endpoints.sort_by(|a, b| a.slug.cmp(&b.slug));
        let counters = self.counters();
        PoolStats {
            live_isolates: endpoints.iter().map(|e| e.instances).sum(),
            live_heap_bytes,
            spare_isolates,
            ready_spares,
            web_spares,
            endpoints,
            isolates_created: counters.isolates_created.load(Ordering::Relaxed),
            invocations: counters.invocations.load(Ordering::Relaxed),
            recycled: counters.recycled.load(Ordering::Relaxed),
            evictions: counters.evictions.load(Ordering::Relaxed),
            retired: counters.retired.load(Ordering::Relaxed),
            overloaded: counters.overloaded.load(Ordering::Relaxed),
            abandoned_isolates,
            abandoned: counters.abandoned.load(Ordering::Relaxed),
            engine_resets: counters.engine_resets.load(Ordering::Relaxed),
            cpu_demotions: self.inner.shared.cpu.demotions(),
            worker_pids: Vec::new(),
            worker_restarts: 0,
            worker_recycles: 0,
            quarantined_builders: 0,
            heavy_builders: 0,
        }
    }

    /// Refuses new invocations, lets queued ones finish, and joins every isolate thread but
    /// the abandoned ones still stuck (they may never come back).
    pub async fn shutdown(&self) {
        {
            let mut state = self.lock();
            state.closed = true;
            state.endpoints.clear();
            state.spares.clear();
        }
        let shared = self.inner.shared.clone();
        let joined = tokio::task::spawn_blocking(move || {
            // A thread joined may have handed its worker to a new one meanwhile: look again
            // until every thread is joined.
            let mut warned = false;
            loop {
                let threads = std::mem::take(&mut *shared.threads());
                let (stuck, threads): (Vec<_>, Vec<_>) = threads
                    .into_iter()
                    .partition(|(progress, _)| progress.is_poisoned() && !progress.has_exited());
                if !stuck.is_empty() && !warned {
                    warned = true;
                    tracing::warn!(
                        stuck = stuck.len(),
                        "shutting down without waiting for abandoned isolate threads"
                    );
                }
                if threads.is_empty() {
                    break;
                }
                for (_, thread) in threads {
                    if thread.join().is_err() {
                        tracing::error!("an isolate thread panicked");
                    }
                }
            }
        })
        .await;
        if joined.is_err() {
            tracing::error!("joining isolate threads failed");
        }
    }

    fn counters(&self) -> &Counters {
        &self.inner.shared.counters
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits the invocation (unless `admitted` already) and queues it on an instance, all
    /// under the pool lock (no await).
    fn dispatch(
        &self,
        code: &EndpointCode,
        job: Job,
        call: u64,
        received: Instant,
        admitted: Option<Permit>,
    ) -> Result<(Placed, Permit), Unplaced> {
        let config = &self.inner.shared.config;
        let overloaded = |why| {
            Unplaced::Refused(SandboxError::Overloaded {
                retry_after_secs: config.overload_retry_after_secs,
                why,
            })
        };
        if let Some(refusal) = self.never_fits(code) {
            return Err(Unplaced::Refused(refusal));
        }
        let mut state = self.lock();
        if state.closed {
            return Err(Unplaced::Refused(SandboxError::Internal(
                "the sandbox pool is shut down".to_owned(),
            )));
        }
        self.touch(&mut state, code);
        let endpoint = state
            .endpoints
            .get_mut(&code.slug)
            .expect("endpoint inserted by touch");
        let permit = match admitted {
            Some(permit) => permit,
            None => endpoint
                .admission
                .try_admit()
                .ok_or_else(|| overloaded(Overload::EndpointBusy))?,
        };

        let least_busy = endpoint
            .instances
            .iter()
            .enumerate()
            .min_by_key(|(_, instance)| instance.queued())
            .map(|(index, instance)| (index, instance.queued()));
        let wants_instance = match least_busy {
            None => true,
            Some((_, queued)) => {
                queued > 0 && endpoint.instances.len() < config.instances_per_endpoint
            }
        };
        let room = if wants_instance {
            self.make_room(&mut state, &code.slug)
        } else {
            Err(Overload::IsolateBusy)
        };
        let index = match (room, least_busy) {
            (Ok(()), _) => self
                .start_instance(&mut state, &code.slug)
                .map_err(Unplaced::Refused)?,
            // Queued behind a busy instance of its own rather than refused.
            (Err(_), Some((index, _))) => index,
            (Err(why @ (Overload::PoolFull | Overload::StuckIsolates)), None) => {
                return Err(Unplaced::NoRoom(why, job, permit))
            }
            (Err(why), None) => return Err(overloaded(why)),
        };

        let command = Command::Invoke {
            invocation: job.invocation,
            call,
            received,
            reply: job.reply,
        };
        let instance = &mut state
            .endpoints
            .get_mut(&code.slug)
            .expect("endpoint inserted above")
            .instances[index];
        match instance.try_send(command) {
            Ok(ticket) => Ok((
                Placed {
                    progress: instance.progress().clone(),
                    ticket,
                },
                permit,
            )),
            Err(QueueError::Full) => Err(overloaded(Overload::IsolateBusy)),
            // The worker ended since the dead instances were dropped above: the next call
            // gets a fresh one.
            Err(QueueError::Closed) => Err(overloaded(Overload::IsolateBusy)),
        }
    }

    /// Makes `code`'s version the endpoint's (dropping the isolates of another version) and
    /// marks it used now; forgets instances and abandoned threads that ended.
    fn touch(&self, state: &mut State, code: &EndpointCode) {
        state.tick += 1;
        let tick = state.tick;
        if state
            .endpoints
            .get(&code.slug)
            .is_some_and(|endpoint| endpoint.code.version != code.version)
        {
            state.endpoints.remove(&code.slug);
            self.counters().retired.fetch_add(1, Ordering::Relaxed);
        }
        let max_concurrent = self.inner.shared.config.max_concurrent_per_endpoint;
        let endpoint = state
            .endpoints
            .entry(code.slug.clone())
            .or_insert_with(|| Endpoint {
                code: Arc::new(code.clone()),
                instances: Vec::new(),
                admission: Admission::new(max_concurrent),
                last_used: tick,
            });
        endpoint.last_used = tick;
        endpoint.instances.retain(|instance| !instance.is_dead());
        state.abandoned.retain(|a| !a.progress.has_exited());
    }

    /// Ensures one more isolate of `for_slug` fits every limit (see the module docs), evicting
    /// least recently used idle instances of other endpoints as needed. The limit in the way
    /// when it cannot fit without exceeding one.
    fn make_room(&self, state: &mut State, for_slug: &str) -> Result<(), Overload> {
        let config = &self.inner.shared.config;
        let Some(code) = state.endpoints.get(for_slug).map(|e| e.code.clone()) else {
            return Err(Overload::IsolateBusy);
        };
        if state.abandoned.len() >= config.max_abandoned_isolates {
            return Err(Overload::StuckIsolates);
        }
        let heap = self.heap_of(&code);
        let owner = code.owner.as_deref();
        let reserve = config
            .heap_floor_per_owner_bytes
            .min(config.memory_budget_bytes / 2);
        let heavy = self.held_back(code.builder());
        loop {
            let all = self.usage(state, None);
            let owners = owner.map(|o| self.usage(state, Some(o)));
            let owner_full = owners.is_some_and(|used| {
                used.isolates >= config.max_isolates_per_owner
                    || used.heap.saturating_add(heap) > config.max_heap_per_owner_bytes
            });
            // A heavy builder (long CPU bursts, isolates lost to timeouts and heap limits) is
            // held back as one past its floor: its isolates are the ones that fill the pool.
            let past_floor = heavy
                || owners.is_some_and(|used| {
                    used.heap.saturating_add(heap) > config.heap_floor_per_owner_bytes
                });
            let budget = if past_floor {
                config.memory_budget_bytes - reserve
            } else {
                config.memory_budget_bytes
            };
            let pool_full =
                all.isolates >= config.max_isolates || all.heap.saturating_add(heap) > budget;
            if !owner_full && !pool_full {
                return Ok(());
            }
            // Over the owner's quota only the owner's own isolates can make room; over a
            // pool-wide limit the owner's go first, then anyone's (past its floor, only those
            // of owners past theirs).
            let others = |state: &State| {
                let evictable = |other: &EndpointCode| {
                    !past_floor
                        || self.held_back(other.builder())
                        || other.owner.as_deref().is_some_and(|o| {
                            self.usage(state, Some(o)).heap > config.heap_floor_per_owner_bytes
                        })
                };
                idle_victim(state, for_slug, None, evictable)
            };
            let victim = match owner {
                Some(owner) => idle_victim(state, for_slug, Some(owner), |_| true).or_else(|| {
                    if owner_full {
                        None
                    } else {
                        others(state)
                    }
                }),
                None => others(state),
            };
            let full = if owner_full {
                Overload::BuilderQuota
            } else {
                Overload::PoolFull
            };
            let Some(victim) = victim else {
                return Err(full);
            };
            if !self.evict_one(state, &victim) {
                return Err(full);
            }
        }
    }

    /// Whether `builder`'s new isolates are held back for its long bursts of CPU
    /// ([`PoolConfig::hold_back_heavy`]).
    fn held_back(&self, builder: &str) -> bool {
        let shared = &self.inner.shared;
        shared.config.hold_back_heavy && shared.cpu.is_heavy_now(builder)
    }

    /// Drops one idle instance of `slug`; `false` if it had none.
    fn evict_one(&self, state: &mut State, slug: &str) -> bool {
        let Some(endpoint) = state.endpoints.get_mut(slug) else {
            return false;
        };
        let Some(index) = endpoint.instances.iter().position(|i| i.queued() == 0) else {
            return false;
        };
        endpoint.instances.swap_remove(index);
        self.counters().evictions.fetch_add(1, Ordering::Relaxed);
        if endpoint.instances.is_empty() && endpoint.admission.in_flight() == 0 {
            state.endpoints.remove(slug);
        }
        true
    }

    /// The refusal of an endpoint whose heap limit no room in this pool can ever hold: over
    /// the memory budget, or a builder's over its builder's heap cap. Waiting or retrying
    /// would not help, so it is not `Overloaded`. (The server refuses such limits where they
    /// are set; this meets those stored before that, or under a sandbox configured smaller
    /// since.)
    fn never_fits(&self, code: &EndpointCode) -> Option<SandboxError> {
        let heap = self.heap_of(code);
        let largest = self.inner.shared.config.largest_heap(code.owner.is_some());
        (heap > largest).then(|| {
            SandboxError::ResourceLimit(format!(
                "the endpoint's heap limit ({} MiB) is more than this sandbox can give one of \
                 its isolates ({} MiB); the admin can lower limits.memoryMb",
                heap >> 20,
                largest >> 20
            ))
        })
    }

    /// The heap limit an isolate of `code` runs with.
    fn heap_of(&self, code: &EndpointCode) -> usize {
        code.limits
            .map_or(self.inner.shared.config.default_limits.heap_bytes, |l| {
                l.heap_bytes
            })
    }

    /// Live isolates (abandoned threads included) and their heap limits: all of them, or one
    /// owner's.
    fn usage(&self, state: &State, owner: Option<&str>) -> Usage {
        let owned = |o: Option<&str>| owner.is_none_or(|owner| o == Some(owner));
        let live = state
            .endpoints
            .values()
            .filter(|e| owned(e.code.owner.as_deref()))
            .fold(Usage::default(), |used, e| Usage {
                isolates: used.isolates + e.instances.len(),
                heap: used
                    .heap
                    .saturating_add(self.heap_of(&e.code).saturating_mul(e.instances.len())),
            });
        state
            .abandoned
            .iter()
            .filter(|a| owned(a.owner.as_deref()) && !a.progress.has_exited())
            .fold(live, |used, a| Usage {
                isolates: used.isolates + 1,
                heap: used.heap.saturating_add(a.heap),
            })
    }

    /// Binds a spare (or a new thread) to the endpoint and returns its instance index.
    fn start_instance(&self, state: &mut State, slug: &str) -> Result<usize, SandboxError> {
        let config = &self.inner.shared.config;
        let code = state
            .endpoints
            .get(slug)
            .expect("endpoint exists")
            .code
            .clone();
        // A spare's runtime has the default heap limit, which cannot change afterwards.
        let default_heap = code
            .limits
            .is_none_or(|limits| limits.heap_bytes == config.default_limits.heap_bytes);
        let web = names_web_globals(&code.source);
        state.spares.retain(|spare| !spare.is_dead());
        let spare = if default_heap {
            // One of the endpoint's kind, else any: on a plain runtime the endpoint loads the
            // scripts it names as it binds, and a plain endpoint just never reads the scripts
            // a web spare loaded.
            let kind = state.spares.iter().rposition(|spare| spare.is_web() == web);
            kind.or(state.spares.len().checked_sub(1))
                .map(|at| state.spares.remove(at))
        } else {
            None
        };
        let worker = match spare {
            Some(spare) => spare,
            None => self.spawn(false)?,
        };
        worker.bind(code).map_err(|_| {
            SandboxError::Internal("the isolate thread ended unexpectedly".to_owned())
        })?;
        let endpoint = state.endpoints.get_mut(slug).expect("endpoint exists");
        endpoint.instances.push(worker);
        let index = endpoint.instances.len() - 1;
        self.refill_spares(state, web);
        Ok(index)
    }

    /// Tops the spares up to `spare_isolates` with spares of the `web` kind; their runtimes
    /// are built on their own threads.
    fn refill_spares(&self, state: &mut State, web: bool) {
        while state.spares.len() < self.inner.shared.config.spare_isolates {
            match self.spawn(web) {
                Ok(spare) => state.spares.push(spare),
                Err(err) => {
                    tracing::error!(%err, "cannot start a spare isolate thread");
                    break;
                }
            }
        }
    }

    fn spawn(&self, web: bool) -> Result<WorkerHandle, SandboxError> {
        WorkerHandle::spawn(
            self.inner.shared.clone(),
            self.inner.shared.config.max_concurrent_per_endpoint,
            web,
        )
    }
}

/// What live isolates claim.
#[derive(Clone, Copy, Default)]
struct Usage {
    isolates: usize,
    heap: usize,
}

/// The least recently used endpoint other than `for_slug` with an idle instance, among
/// `owner`'s endpoints when given, and among endpoints whose owner `evictable` accepts.
/// A call counted among those waiting for room, until dropped.
struct Waiting<'a> {
    pool: &'a Pool,
    builder: &'a str,
}

impl<'a> Waiting<'a> {
    /// Counts a call of `builder` as waiting, if the caps allow one more.
    fn join(pool: &'a Pool, builder: &'a str) -> Option<Waiting<'a>> {
        let mut state = pool.lock();
        let all: usize = state.waiting.values().sum();
        let of_builder = state.waiting.get(builder).copied().unwrap_or(0);
        if all >= MAX_WAITING || of_builder >= MAX_WAITING_PER_BUILDER {
            return None;
        }
        *state.waiting.entry(builder.to_owned()).or_default() += 1;
        pool.inner.waiting.fetch_add(1, Ordering::AcqRel);
        Some(Waiting { pool, builder })
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.pool.inner.waiting.fetch_sub(1, Ordering::AcqRel);
        let mut state = self.pool.lock();
        if let Some(count) = state.waiting.get_mut(self.builder) {
            *count -= 1;
            if *count == 0 {
                state.waiting.remove(self.builder);
            }
        }
    }
}

fn idle_victim(
    state: &State,
    for_slug: &str,
    owner: Option<&str>,
    evictable: impl Fn(&EndpointCode) -> bool,
) -> Option<String> {
    state
        .endpoints
        .iter()
        .filter(|(slug, endpoint)| {
            slug.as_str() != for_slug
                && owner.is_none_or(|o| endpoint.code.owner.as_deref() == Some(o))
                && endpoint.instances.iter().any(|i| i.queued() == 0)
                && evictable(&endpoint.code)
        })
        .min_by_key(|(_, endpoint)| endpoint.last_used)
        .map(|(slug, _)| slug.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_is_shareable_across_tasks() {
        fn assert_shareable<T: Send + Sync + Clone + 'static>() {}
        assert_shareable::<Pool>();
    }
}
