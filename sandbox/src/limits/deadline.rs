//! Hard deadline, on the host side: a caller gets its answer at the call's time limit plus a
//! grace whatever the engine is doing. The watchdog's `terminate_execution` (see [`timeout`])
//! only takes effect when the engine next checks for it; an engine busy in garbage collection
//! near its heap limit, or a thread blocked in native code, may not check for a long time.
//!
//! Each worker thread shares a [`Progress`] with the pool: how many invocations it has taken
//! off its queue, and by when it must be done with what it is doing now (each phase that runs
//! handler code, with its deadline plus the grace). `Pool::invoke` waits for its answer until
//! the first instant its call could be overdue (received + time limit + grace) and only then
//! looks at the thread's progress ([`Progress::check`]): its call done (the answer is on its
//! way), still within its time, or overdue. An overdue thread is *poisoned*: every caller
//! waiting on it is answered (`Timeout`, or `ResourceLimit` if the heap limit was reached
//! during the call), and the pool takes the thread out of service. When the thread comes back
//! it sees the poison, drops its isolate and ends without serving anything else.
//!
//! On the normal path this costs an uncontended lock per phase on the worker thread and a
//! timer the caller never sees fire.
//!
//! [`timeout`]: super::timeout

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::SandboxError;

/// How long a caller whose call is done but whose answer has not arrived yet waits before it
/// looks again (the worker thread is between sending the report and the caller's wake-up).
const ANSWER_IN_FLIGHT: Duration = Duration::from_millis(10);

/// The least time the sandbox's own work gets before a caller counts its thread as stuck.
/// That work (building a runtime, running the glue's setup, dropping an isolate) runs no
/// handler code and takes milliseconds, but a loaded machine stretches it, and the process's
/// first runtime also builds the startup snapshot: abandoning a thread for that would only
/// fail a call that was about to succeed.
const OWN_WORK_MIN: Duration = Duration::from_secs(5);

/// The grace of a thread demoted to the lowest CPU priority (`limits::cpu`). On a machine
/// whose cores are all busy such a thread waits a few hundred milliseconds for its turn on a
/// core, so it may not even see the watchdog's termination within the usual grace; abandoned
/// for that, its worker process would be replaced (with a cold start for every builder there)
/// when the thread was only waiting. Its callers, the heavy builder's, wait that much longer
/// for their `Timeout`.
const DEMOTED_GRACE: Duration = Duration::from_secs(2);

/// What a worker thread is doing, shared with the pool.
#[derive(Debug)]
pub(crate) struct Progress {
    grace: Duration,
    current: Mutex<Current>,
    /// The thread missed a hard deadline: it must never serve another call.
    poisoned: AtomicBool,
    /// The thread has ended (its isolate is dropped).
    exited: AtomicBool,
}

#[derive(Debug, Default)]
struct Current {
    /// Invocations the thread has taken off its queue, the one in progress included; the
    /// pool numbers the invocations it queues the same way (tickets from 0).
    started: u64,
    /// When the thread must be done with what it is doing now; `None` while it waits for work.
    answer_by: Option<Instant>,
    /// The heap-limit flag of the isolate that runs now (see `limits::heap`).
    heap_exceeded: Option<Arc<AtomicBool>>,
}

/// What a caller whose answer is late does next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// Keep waiting for the answer, and look again at this instant.
    WaitUntil(Instant),
    /// The thread is overdue: answer with this error. `retire` is `true` for the one caller
    /// that found it so; it takes the thread out of the pool.
    GiveUp { error: SandboxError, retire: bool },
}

impl Progress {
    pub(crate) fn new(grace: Duration) -> Progress {
        Progress {
            grace,
            current: Mutex::new(Current::default()),
            poisoned: AtomicBool::new(false),
            exited: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Current> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    // The worker thread's side.

    /// The thread took the next invocation off its queue; until its first phase that runs
    /// handler code, it does its own work (see [`Progress::busy_for`]).
    pub(crate) fn start_invocation(&self, limit: Duration) {
        let answer_by = self.own_work_until(limit);
        let mut current = self.lock();
        current.started += 1;
        current.answer_by = Some(answer_by);
        current.heap_exceeded = None;
    }

    /// The thread runs handler code until `deadline` (the watchdog terminates it then), in an
    /// isolate whose heap-limit flag is `heap_exceeded`. A thread at the lowest CPU priority
    /// (`limits::cpu`) gets [`DEMOTED_GRACE`] at least.
    pub(crate) fn run_until(&self, deadline: Instant, heap_exceeded: &Arc<AtomicBool>) {
        let grace = if crate::limits::cpu::this_thread_is_demoted() {
            self.grace.max(DEMOTED_GRACE)
        } else {
            self.grace
        };
        let mut current = self.lock();
        current.answer_by = Some(deadline + grace);
        if !current
            .heap_exceeded
            .as_ref()
            .is_some_and(|flag| Arc::ptr_eq(flag, heap_exceeded))
        {
            current.heap_exceeded = Some(heap_exceeded.clone());
        }
    }

    /// The thread does its own work (building a runtime, dropping an isolate), which may take
    /// the endpoint's time `limit` (at least [`OWN_WORK_MIN`]) plus the grace before a caller
    /// counts it as stuck.
    pub(crate) fn busy_for(&self, limit: Duration) {
        let answer_by = self.own_work_until(limit);
        self.lock().answer_by = Some(answer_by);
    }

    fn own_work_until(&self, limit: Duration) -> Instant {
        Instant::now() + limit.max(OWN_WORK_MIN) + self.grace
    }

    /// The thread waits for its next command.
    pub(crate) fn idle(&self) {
        self.lock().answer_by = None;
    }

    /// A caller found the thread overdue: it must end instead of serving anything else.
    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }

    pub(crate) fn set_exited(&self) {
        self.exited.store(true, Ordering::Release);
    }

    // The pool's side.

    /// The thread has ended.
    pub(crate) fn has_exited(&self) -> bool {
        self.exited.load(Ordering::Acquire)
    }

    /// Called by the caller of invocation number `ticket` when its answer is late at `now`.
    pub(crate) fn check(&self, ticket: u64, now: Instant) -> Check {
        let current = self.lock();
        if current.started > ticket + 1 {
            // Done: the report was sent (or is being sent) before the next one started.
            return Check::WaitUntil(now + ANSWER_IN_FLIGHT);
        }
        let running_mine = current.started == ticket + 1;
        let error = || {
            let heap = running_mine
                && current
                    .heap_exceeded
                    .as_ref()
                    .is_some_and(|flag| flag.load(Ordering::Acquire));
            if heap {
                SandboxError::ResourceLimit("heap limit exceeded".to_owned())
            } else {
                SandboxError::Timeout
            }
        };
        if self.is_poisoned() {
            return Check::GiveUp {
                error: error(),
                retire: false,
            };
        }
        match current.answer_by {
            Some(answer_by) if now >= answer_by => {
                let retire = !self.poisoned.swap(true, Ordering::AcqRel);
                Check::GiveUp {
                    error: error(),
                    retire,
                }
            }
            Some(answer_by) => Check::WaitUntil(answer_by),
            // Between commands: it takes the next one (perhaps this call) right away.
            None => Check::WaitUntil(now + self.grace),
        }
    }
}

/// Marks the worker ended when dropped (also when it unwinds). It moves with the worker to each
/// thread that takes over its queue (`worker`), so it drops with the last one.
pub(crate) struct ExitGuard(pub(crate) Arc<Progress>);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        self.0.set_exited();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRACE: Duration = Duration::from_millis(250);

    #[test]
    fn a_call_within_its_time_keeps_waiting() {
        let progress = Progress::new(GRACE);
        progress.start_invocation(Duration::from_secs(2));
        let deadline = Instant::now() + Duration::from_secs(1);
        let heap = Arc::new(AtomicBool::new(false));
        progress.run_until(deadline, &heap);
        assert_eq!(
            progress.check(0, Instant::now()),
            Check::WaitUntil(deadline + GRACE)
        );
        assert!(!progress.is_poisoned());
    }

    #[test]
    fn an_overdue_call_poisons_the_thread_once() {
        let progress = Progress::new(GRACE);
        progress.start_invocation(Duration::from_secs(2));
        let deadline = Instant::now();
        let heap = Arc::new(AtomicBool::new(false));
        progress.run_until(deadline, &heap);
        let late = deadline + GRACE;
        assert_eq!(
            progress.check(0, late),
            Check::GiveUp {
                error: SandboxError::Timeout,
                retire: true
            }
        );
        assert!(progress.is_poisoned());
        // The call queued behind it never ran: it times out too, and does not retire again.
        assert_eq!(
            progress.check(1, late),
            Check::GiveUp {
                error: SandboxError::Timeout,
                retire: false
            }
        );
    }

    #[test]
    fn an_overdue_call_past_its_heap_limit_is_a_resource_limit() {
        let progress = Progress::new(GRACE);
        progress.start_invocation(Duration::from_secs(2));
        let deadline = Instant::now();
        let heap = Arc::new(AtomicBool::new(true));
        progress.run_until(deadline, &heap);
        let Check::GiveUp { error, .. } = progress.check(0, deadline + GRACE) else {
            panic!("overdue");
        };
        assert_eq!(error.code(), "resource_limit");
        // Only the call that ran in that isolate hit the limit.
        assert_eq!(
            progress.check(1, deadline + GRACE),
            Check::GiveUp {
                error: SandboxError::Timeout,
                retire: false
            }
        );
    }

    #[test]
    fn queued_calls_wait_for_the_running_one() {
        let progress = Progress::new(GRACE);
        let now = Instant::now();
        // Idle: the thread is about to take the call.
        assert_eq!(progress.check(0, now), Check::WaitUntil(now + GRACE));
        progress.start_invocation(Duration::from_secs(2));
        let Check::WaitUntil(by) = progress.check(1, Instant::now()) else {
            panic!("not overdue");
        };
        assert!(by > now + OWN_WORK_MIN);
        // A finished call's answer is on its way.
        progress.start_invocation(Duration::from_secs(2));
        assert!(matches!(
            progress.check(0, Instant::now()),
            Check::WaitUntil(_)
        ));
    }
}
