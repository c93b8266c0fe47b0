//! A worker process's calls, answered by the isolate threads that ran them.
//!
//! In process, a call is a future its caller awaits ([`Pool::invoke`]): the isolate thread
//! sends its report over a oneshot channel, which wakes the caller's task. In a worker process
//! that task would only pass the report on to the pipe, so the worker's main thread would wake
//! once a call to forward bytes, and once more to register the call's deadline timer
//! (bench/RESULTS.md, "What a call through a worker process costs in wake-ups"). Here the
//! isolate thread hands its report to the [`AnswerSink`] (the pipe to the server) itself and
//! ends the call's admission; the main thread only places calls.
//!
//! The caller's hard deadline (`limits::deadline`) holds without a task a call: every call
//! placed is watched by one task of the pool, [`Overdue`], which sleeps until the earliest
//! instant a watched call could be overdue. An answered call leaves the watch at once, so under
//! steady load that task wakes about once per time limit, not once per call. Whichever
//! answers first, the isolate thread or the watch (`Timeout`, or `ResourceLimit` at the heap
//! limit), claims the call; the other then does nothing.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::time::Instant;

use super::{Check, Inner, Job, Placed, Pool, Unplaced};
use crate::invocation::RawReport;
use crate::limits::admission::Permit;
use crate::worker::{report, Reply};
use crate::{EndpointCode, Invocation, SandboxError};

/// Where a worker process's reports go (the pipe to the server), from whichever thread made
/// them: an isolate thread, the watch of overdue calls, or the main thread for a call refused.
pub(crate) trait AnswerSink: Send + Sync + 'static {
    fn answer(&self, answered: Answered<'_>, report: RawReport);
}

/// The call an [`AnswerSink`] sends the report of.
pub(crate) struct Answered<'a> {
    pub(crate) pool: &'a Pool,
    /// Its number, as the server gave it.
    pub(crate) call: u64,
    pub(crate) code: &'a EndpointCode,
    pub(crate) received: Instant,
}

/// A call answered by whoever claims it first.
struct DirectCall {
    call: u64,
    code: Arc<EndpointCode>,
    received: Instant,
    /// The end of its time limit: a `Timeout` is not answered before.
    time_is_up: Instant,
    sink: Arc<dyn AnswerSink>,
    /// Weak: the pool's watch holds calls, and a call must not keep its pool alive.
    pool: Weak<Inner>,
    /// The runtime that placed the call: a `Timeout` is answered at the time limit from there.
    runtime: tokio::runtime::Handle,
    answered: AtomicBool,
    /// The call's admission, held until it is answered.
    permit: Mutex<Option<Permit>>,
    /// Where it was queued, and its key in the watch.
    placed: OnceLock<(Placed, u64)>,
}

impl DirectCall {
    /// Answers the call unless someone did already.
    fn finish(&self, report: RawReport) {
        if self.answered.swap(true, Ordering::AcqRel) {
            return;
        }
        let Some(inner) = self.pool.upgrade() else {
            return;
        };
        let pool = Pool { inner };
        if let (Some((_, key)), Some(overdue)) = (self.placed.get(), pool.inner.overdue.get()) {
            overdue.forget(*key);
        }
        // Before the answer leaves: a caller answered may call again at once, and must find
        // this call's admission ended (as `Pool::invoke` ends it before it returns).
        if let Some(permit) = lock(&self.permit).take() {
            pool.release(permit);
        }
        let answered = Answered {
            pool: &pool,
            call: self.call,
            code: &self.code,
            received: self.received,
        };
        self.sink.answer(answered, report);
    }

    /// Answers with the isolate's report. A call whose promise can never settle ends early
    /// (its isolate serves on) and is answered at its time limit, as [`Pool::invoke`] does.
    fn answer(self: Arc<Self>, report: RawReport) {
        if matches!(report.result, Err(SandboxError::Timeout)) && self.time_is_up > Instant::now() {
            let runtime = self.runtime.clone();
            runtime.spawn(async move {
                tokio::time::sleep_until(self.time_is_up.into()).await;
                self.finish(report);
            });
            return;
        }
        self.finish(report);
    }
}

/// The isolate thread's end of a [`DirectCall`]: [`Reply::Direct`].
pub(crate) struct DirectReply(Option<Arc<DirectCall>>);

impl DirectReply {
    pub(crate) fn is_answered(&self) -> bool {
        self.0
            .as_ref()
            .is_none_or(|call| call.answered.load(Ordering::Acquire))
    }

    pub(crate) fn send(mut self, report: RawReport) {
        if let Some(call) = self.0.take() {
            call.answer(report);
        }
    }
}

/// A queued call dropped unanswered: its thread ended without serving it, stuck past its
/// deadline (`Timeout`, as the watch would find) or otherwise. A call not queued yet is
/// answered by whoever placed it.
impl Drop for DirectReply {
    fn drop(&mut self) {
        let Some(call) = self.0.take() else {
            return;
        };
        let Some((placed, _)) = call.placed.get() else {
            return;
        };
        if call.answered.load(Ordering::Acquire) {
            return;
        }
        let error = if placed.progress.is_poisoned() {
            SandboxError::Timeout
        } else {
            SandboxError::Internal("the isolate thread ended unexpectedly".to_owned())
        };
        let received = call.received;
        call.answer(report(Err(error), Vec::new(), received));
    }
}

/// The watch of direct calls' hard deadlines: one task per pool.
#[derive(Default)]
pub(crate) struct Overdue {
    watched: Mutex<Watched>,
    /// A call was watched with a deadline before the one the task sleeps until.
    sooner: tokio::sync::Notify,
    next_key: AtomicU64,
}

#[derive(Default)]
struct Watched {
    by_due: BTreeMap<(Instant, u64), Arc<DirectCall>>,
    due_of: HashMap<u64, Instant>,
    /// When the task wakes next (`None`: when a call is watched).
    wakes_at: Option<Instant>,
}

impl Overdue {
    fn lock(&self) -> MutexGuard<'_, Watched> {
        lock(&self.watched)
    }

    fn watch(&self, key: u64, due: Instant, call: Arc<DirectCall>) {
        let mut watched = self.lock();
        watched.by_due.insert((due, key), call);
        watched.due_of.insert(key, due);
        if watched.wakes_at.is_none_or(|at| due < at) {
            watched.wakes_at = Some(due);
            self.sooner.notify_one();
        }
    }

    fn forget(&self, key: u64) {
        let mut watched = self.lock();
        if let Some(due) = watched.due_of.remove(&key) {
            watched.by_due.remove(&(due, key));
        }
    }

    /// The calls due by `now`, out of the watch.
    fn take_due(&self, now: Instant) -> Vec<(u64, Arc<DirectCall>)> {
        let mut watched = self.lock();
        let mut due = Vec::new();
        while let Some(entry) = watched.by_due.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let ((_, key), call) = entry.remove_entry();
            watched.due_of.remove(&key);
            due.push((key, call));
        }
        due
    }

    /// When the earliest watched call is due, noted as the task's next wake-up.
    fn next_wake(&self) -> Option<Instant> {
        let mut watched = self.lock();
        watched.wakes_at = watched.by_due.keys().next().map(|(at, _)| *at);
        watched.wakes_at
    }

    /// The task: answers each watched call found overdue, until the pool is gone.
    async fn run(self: Arc<Self>, pool: Weak<Inner>) {
        loop {
            let due = self.take_due(Instant::now());
            if !due.is_empty() {
                let Some(inner) = pool.upgrade() else { return };
                let pool = Pool { inner };
                for (key, call) in due {
                    pool.look_at(&self, key, call);
                }
            }
            match self.next_wake() {
                Some(at) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at.into()) => {}
                        () = self.sooner.notified() => {}
                    }
                }
                None => self.sooner.notified().await,
            }
            if pool.strong_count() == 0 {
                return;
            }
        }
    }
}

impl Pool {
    /// Runs `code`'s handler for `call` of a worker process, and sends its report to `sink`
    /// from the isolate thread that ran it (see the module docs). Never waits: a call that
    /// must wait for room in the pool does so on a task of its own.
    pub(crate) fn invoke_direct(
        &self,
        code: Arc<EndpointCode>,
        invocation: Invocation,
        call: u64,
        sink: Arc<dyn AnswerSink>,
    ) {
        let received = Instant::now();
        let direct = Arc::new(DirectCall {
            call,
            code: code.clone(),
            received,
            time_is_up: received + self.time_limit(&code),
            sink,
            pool: Arc::downgrade(&self.inner),
            runtime: tokio::runtime::Handle::current(),
            answered: AtomicBool::new(false),
            permit: Mutex::new(None),
            placed: OnceLock::new(),
        });
        let job = Job {
            invocation,
            reply: Reply::Direct(DirectReply(Some(direct.clone()))),
        };
        match self.dispatch(&code, job, call, received, None) {
            Ok((placed, permit)) => self.watch_direct(direct, placed, permit),
            Err(Unplaced::Refused(err)) => self.refuse_direct(&direct, err),
            Err(Unplaced::NoRoom(why, job, permit)) => {
                let pool = self.clone();
                tokio::spawn(async move {
                    let unplaced = (why, job, permit);
                    match pool.wait_for_room(&code, unplaced, call, received).await {
                        Ok((placed, permit)) => pool.watch_direct(direct, placed, permit),
                        Err(err) => pool.refuse_direct(&direct, err),
                    }
                });
            }
        }
    }

    fn refuse_direct(&self, direct: &DirectCall, err: SandboxError) {
        direct.finish(self.refused(err, direct.received));
    }

    /// A direct call queued: it holds its admission until answered, and its hard deadline is
    /// watched from the first instant it could be overdue (received, time limit, grace).
    fn watch_direct(&self, direct: Arc<DirectCall>, placed: Placed, permit: Permit) {
        {
            let mut held = lock(&direct.permit);
            if direct.answered.load(Ordering::Acquire) {
                drop(held);
                self.release(permit);
                return;
            }
            *held = Some(permit);
        }
        let overdue = self.inner.overdue.get_or_init(|| {
            let overdue = Arc::new(Overdue::default());
            tokio::spawn(overdue.clone().run(Arc::downgrade(&self.inner)));
            overdue
        });
        let key = overdue.next_key.fetch_add(1, Ordering::Relaxed);
        if direct.placed.set((placed, key)).is_err() {
            return;
        }
        let due = direct.time_is_up + self.inner.shared.config.timeout_grace;
        overdue.watch(key, due, direct.clone());
        // Answered meanwhile: its `finish` may have looked for it before it was watched.
        if direct.answered.load(Ordering::Acquire) {
            overdue.forget(key);
        }
    }

    /// A watched call is due: answered unless its thread is still within its time.
    fn look_at(&self, overdue: &Overdue, key: u64, direct: Arc<DirectCall>) {
        if direct.answered.load(Ordering::Acquire) {
            return;
        }
        let Some((placed, _)) = direct.placed.get() else {
            return;
        };
        match placed.progress.check(placed.ticket, Instant::now()) {
            Check::WaitUntil(at) => overdue.watch(key, at, direct),
            Check::GiveUp { error, retire } => {
                let given_up = self.given_up(
                    &direct.code,
                    &placed.progress,
                    (error, retire),
                    direct.received,
                );
                direct.finish(given_up);
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::{Capabilities, Host, HostAnswer, HostFuture, HostOp, Limits, Overload, PoolConfig};

    /// `ctx.kv.get("block")` blocks its isolate thread for [`BLOCKED`] in native code, where
    /// the watchdog cannot stop it (as an engine busy in garbage collection).
    struct BlockingHost;

    const BLOCKED: Duration = Duration::from_secs(3);
    const LIMIT: Duration = Duration::from_millis(600);

    impl Host for BlockingHost {
        fn call(&self, _: &EndpointCode, _: u64, op: HostOp) -> HostFuture<HostAnswer> {
            if matches!(&op, HostOp::KvGet { key } if key == "block") {
                std::thread::sleep(BLOCKED);
            }
            Box::pin(async { Ok(HostAnswer::Value(None)) })
        }
    }

    /// An answer as the pipe to the server would carry it, with the instant it left and how
    /// many calls of its endpoint were admitted then.
    type Answer = (u64, Instant, RawReport, usize);

    struct Collect(tokio::sync::mpsc::UnboundedSender<Answer>);

    impl AnswerSink for Collect {
        fn answer(&self, answered: Answered<'_>, report: RawReport) {
            let endpoints = answered.pool.stats().endpoints;
            let admitted = endpoints
                .iter()
                .find(|e| e.slug == answered.code.slug)
                .map_or(0, |e| e.in_flight);
            let _ = self
                .0
                .send((answered.call, Instant::now(), report, admitted));
        }
    }

    fn pool() -> Pool {
        let config = PoolConfig {
            default_limits: Limits {
                heap_bytes: 32 << 20,
                timeout: LIMIT,
            },
            instances_per_endpoint: 1,
            ..PoolConfig::default()
        };
        Pool::new(config, Arc::new(BlockingHost))
    }

    fn code(slug: &str, source: &str) -> Arc<EndpointCode> {
        Arc::new(EndpointCode {
            id: format!("ep-{slug}"),
            slug: slug.to_owned(),
            version: "v1".to_owned(),
            source: source.to_owned(),
            capabilities: Capabilities {
                kv: true,
                ..Capabilities::default()
            },
            env: BTreeMap::new(),
            limits: None,
            owner: None,
        })
    }

    fn invocation(input: serde_json::Value) -> Invocation {
        Invocation {
            request: serde_json::value::to_raw_value(&json!({ "input": input })).unwrap(),
            request_id: "r".to_owned(),
            load_only: false,
        }
    }

    type Answers = tokio::sync::mpsc::UnboundedReceiver<Answer>;

    fn sink() -> (Arc<Collect>, Answers) {
        let (send, answers) = tokio::sync::mpsc::unbounded_channel();
        (Arc::new(Collect(send)), answers)
    }

    async fn next(answers: &mut Answers) -> Answer {
        tokio::time::timeout(Duration::from_secs(30), answers.recv())
            .await
            .expect("every call is answered")
            .expect("the sink is open")
    }

    #[tokio::test]
    async fn a_call_is_answered_from_its_isolate_thread_and_ends_its_admission() {
        let pool = pool();
        let (sink, mut answers) = sink();
        let echo = code("echo", "export default (req) => req.input.n * 2");
        for n in 1..=20 {
            pool.invoke_direct(echo.clone(), invocation(json!({ "n": n })), n, sink.clone());
        }
        let mut seen = Vec::new();
        for _ in 1..=20 {
            let (call, _, report, _) = next(&mut answers).await;
            let body = report.parsed().result.expect("answered").body;
            assert_eq!(body, json!(call * 2));
            seen.push(call);
        }
        seen.sort_unstable();
        assert_eq!(seen, (1..=20).collect::<Vec<_>>());
        let stats = pool.stats();
        assert_eq!(stats.endpoints[0].in_flight, 0, "{stats:?}");
        assert!(answers.try_recv().is_err(), "each call is answered once");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_stuck_call_and_those_queued_behind_it_are_answered_at_the_hard_deadline() {
        let pool = pool();
        let (sink, mut answers) = sink();
        let stuck = code(
            "stuck",
            concat!(
                "export default async (req, ctx) => {",
                " if (req.input.block) await ctx.kv.get('block'); return 'ran'; }",
            ),
        );
        let placed = Instant::now();
        pool.invoke_direct(
            stuck.clone(),
            invocation(json!({ "block": true })),
            1,
            sink.clone(),
        );
        pool.invoke_direct(stuck.clone(), invocation(json!({})), 2, sink.clone());
        let mut answered = Vec::new();
        for _ in 0..2 {
            answered.push(next(&mut answers).await);
        }
        for (call, at, report, _) in answered {
            let waited = at - placed;
            assert_eq!(
                report.result.err(),
                Some(SandboxError::Timeout),
                "call {call}"
            );
            // The time limit and the grace, and well before the thread comes back.
            assert!(waited >= LIMIT, "call {call} answered after {waited:?}");
            assert!(waited < BLOCKED, "call {call} answered after {waited:?}");
        }
        assert_eq!(pool.stats().abandoned, 1);
        // The next call runs at once on a fresh isolate.
        pool.invoke_direct(stuck.clone(), invocation(json!({})), 3, sink.clone());
        let (call, _, report, _) = next(&mut answers).await;
        assert_eq!(call, 3);
        assert_eq!(report.parsed().result.expect("served").body, json!("ran"));
    }

    #[tokio::test]
    async fn a_promise_that_never_settles_is_answered_at_its_time_limit() {
        let pool = pool();
        let (sink, mut answers) = sink();
        let never = code("never", "export default () => new Promise(() => {})");
        let placed = Instant::now();
        pool.invoke_direct(never, invocation(json!({})), 1, sink);
        let (_, at, report, _) = next(&mut answers).await;
        assert_eq!(report.result.err(), Some(SandboxError::Timeout));
        assert!(at - placed >= LIMIT, "answered after {:?}", at - placed);
        assert_eq!(pool.stats().abandoned, 0);
    }

    #[tokio::test]
    async fn a_call_refused_at_once_is_answered_by_whoever_placed_it() {
        let config = PoolConfig {
            max_concurrent_per_endpoint: 1,
            ..PoolConfig::default()
        };
        let pool = Pool::new(config, Arc::new(BlockingHost));
        let (sink, mut answers) = sink();
        let slow = code(
            "slow",
            "export default () => new Promise((r) => setTimeout(() => r('late'), 300))",
        );
        pool.invoke_direct(slow.clone(), invocation(json!({})), 1, sink.clone());
        pool.invoke_direct(slow, invocation(json!({})), 2, sink);
        let (call, _, report, _) = next(&mut answers).await;
        assert_eq!(call, 2);
        assert!(
            matches!(
                report.result,
                Err(SandboxError::Overloaded {
                    why: Overload::EndpointBusy,
                    ..
                })
            ),
            "{:?}",
            report.result.err()
        );
        let (call, _, report, admitted) = next(&mut answers).await;
        assert_eq!(call, 1);
        assert_eq!(report.parsed().result.expect("served").body, json!("late"));
        // Its admission ended before its answer left: its caller may call again at once.
        assert_eq!(admitted, 0);
    }
}
