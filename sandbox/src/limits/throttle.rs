//! Checks of a running call's CPU: a long burst is demoted while it runs, and demoted isolate
//! threads (`limits::cpu`) together spend at most [`crate::PoolConfig::heavy_cpu_per_sec`] of
//! CPU a second, pausing when they are over.
//!
//! Demotion to the lowest priority gives the other builders nearly all of a core *when the
//! kernel switches to them*, but a core held by a demoted thread is handed over only at the
//! scheduler's next decision: every step of a light call (the server's runtime, the worker's
//! reader, its isolate thread) may wake behind a heavy thread's running slice. With several
//! heavy builders spinning on two cores that wait comes at nearly every step, and a light
//! call's few milliseconds become tens. A budget takes the heavy threads off the cores for
//! most of the time instead, as a CPU quota does for a cgroup (Cloudflare Workers bound each
//! tenant's CPU the same way): the cores are free when a light call wakes. And a builder's
//! first long call, which nothing marked heavy yet, is demoted once it has used a heavy call's
//! CPU rather than when it ends: an endless loop no longer spins its whole time limit at the
//! normal priority.
//!
//! The watchdog (`limits::timeout`) asks the isolate of a call that has run
//! [`cpu::HEAVY_CALL_CPU`] of wall time, or whose thread is demoted, to run
//! [`check_running_call`] at the engine's next interrupt check (loop back-edges and calls),
//! every [`CHECK_EVERY`]. There the thread demotes itself if the call has used a heavy call's
//! CPU, and a demoted thread charges the CPU it used since its last check to the pool's token
//! bucket and, if the bucket is in debt, sleeps until the debt is paid, in pauses of at most
//! [`MAX_PAUSE`] between which it looks for its call's termination. A call's pauses count
//! against its time limit like any other wait: a heavy builder's calls get slower, never more.
//! Native work between two checks (an op, a garbage collection) is charged at the next check;
//! work no check follows (a large string built and serialized, an answer encoded after the
//! handler returned) is charged as the call ends, and the thread's next call pays the debt
//! before its handler runs ([`before_handler`]), or is refused `overloaded` if that would take
//! more than half its time limit. Without that, calls doing their work natively were never
//! paused: oversized answers took 1.6 cores of two against a budget of half a core
//! (bench/RESULTS.md, 2026-12-01). Short calls are never interrupted: a call is checked only
//! once it has run 50 ms.

use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use deno_core::v8;

use super::cpu::{self, CpuShares};

/// How often a throttled call is asked to check its budget.
pub(crate) const CHECK_EVERY: Duration = Duration::from_millis(5);
/// The longest single pause: a terminated call notices its termination within this.
const MAX_PAUSE: Duration = Duration::from_millis(20);
/// CPU the demoted threads may spend at once after a quiet spell, as a share of a second's
/// budget: a short heavy call that comes rarely is not paused at all.
const BURST_SHARE: u32 = 4;

/// The pool's budget of CPU for demoted threads.
pub(crate) struct HeavyBudget {
    per_sec: Duration,
    burst: Duration,
    bucket: Mutex<Bucket>,
}

struct Bucket {
    /// CPU time left to spend, in nanoseconds; negative while in debt.
    tokens: i128,
    refilled: Instant,
}

impl HeavyBudget {
    /// A budget of `per_sec` of CPU a second; `None` for zero (no throttle).
    pub(crate) fn new(per_sec: Duration) -> Option<Arc<HeavyBudget>> {
        if per_sec.is_zero() {
            return None;
        }
        let burst = per_sec / BURST_SHARE;
        Some(Arc::new(HeavyBudget {
            per_sec,
            burst,
            bucket: Mutex::new(Bucket {
                tokens: burst.as_nanos() as i128,
                refilled: Instant::now(),
            }),
        }))
    }

    /// Charges `used` of CPU at `now`; answers how long until the debt is paid (zero if there is
    /// none).
    fn charge(&self, used: Duration, now: Instant) -> Duration {
        let mut bucket = self.bucket.lock().unwrap_or_else(PoisonError::into_inner);
        let elapsed = now.saturating_duration_since(bucket.refilled).as_nanos();
        bucket.refilled = now.max(bucket.refilled);
        let earned = elapsed * self.per_sec.as_nanos() / 1_000_000_000;
        bucket.tokens = (bucket.tokens + earned as i128).min(self.burst.as_nanos() as i128);
        bucket.tokens -= used.as_nanos() as i128;
        if bucket.tokens >= 0 {
            return Duration::ZERO;
        }
        let debt = bucket.tokens.unsigned_abs();
        let pause = debt * 1_000_000_000 / self.per_sec.as_nanos();
        Duration::from_nanos(u64::try_from(pause).unwrap_or(u64::MAX))
    }
}

/// The call running on this thread, as the checks see it.
struct Running {
    shares: Arc<CpuShares>,
    builder: String,
    /// The thread's CPU clock when the call started (its cold start included).
    started: Duration,
    /// The thread's CPU clock when it last charged the budget.
    charged_to: Duration,
    /// Shared with the watchdog's alarm of the call.
    checks: Checks,
}

thread_local! {
    static RUNNING: RefCell<Option<Running>> = const { RefCell::new(None) };
}

/// On the isolate thread, as a call of `builder` starts at `cpu_now` on this thread's CPU
/// clock: the watchdog may check it from now on (see [`checks_wanted`]).
pub(crate) fn start(shares: &Arc<CpuShares>, builder: &str, cpu_now: Duration) {
    RUNNING.set(Some(Running {
        shares: shares.clone(),
        builder: builder.to_owned(),
        started: cpu_now,
        charged_to: cpu_now,
        checks: Checks(Arc::new(CheckFlags {
            asked: AtomicBool::new(false),
            throttled: AtomicBool::new(shares.budget().is_some() && cpu::this_thread_is_demoted()),
            terminated: AtomicBool::new(false),
        })),
    }));
}

/// The call's CPU counts from `cpu_now` (see `CallCpu::restart`).
pub(crate) fn restart(cpu_now: Duration) {
    RUNNING.with_borrow_mut(|running| {
        if let Some(running) = running {
            running.started = cpu_now;
            running.charged_to = cpu_now;
        }
    });
}

/// On the isolate thread, as the call ends at `cpu_now`: if the thread is throttled, what the
/// call used since its last check is charged (the next heavy call pays for it).
pub(crate) fn end(cpu_now: Duration) {
    if let Some(running) = RUNNING.take() {
        if let (Some(budget), true) = (running.shares.budget(), cpu::this_thread_is_demoted()) {
            budget.charge(cpu_now.saturating_sub(running.charged_to), Instant::now());
        }
    }
}

/// What the watchdog needs to check the call running on this thread: `None` if it is not
/// checked (no call, or CPU shares off).
pub(crate) fn checks_wanted() -> Option<Checks> {
    RUNNING.with_borrow(|running| running.as_ref().map(|running| running.checks.clone()))
}

/// The watchdog's side of a checked call (one allocation per call, shared with its thread).
#[derive(Clone)]
pub(crate) struct Checks(Arc<CheckFlags>);

struct CheckFlags {
    /// A check is asked for and has not run yet: the watchdog asks for one at a time.
    asked: AtomicBool,
    /// The call's thread is demoted and spends from the budget: checked every
    /// [`CHECK_EVERY`], not only once it has run [`cpu::HEAVY_CALL_CPU`].
    throttled: AtomicBool,
    /// The call's deadline passed and the watchdog told its isolate to terminate: a pause
    /// ends at once.
    terminated: AtomicBool,
}

impl Checks {
    /// Whether the watchdog checks the call now, `running_for` after it was armed: a call
    /// that has not yet run for a heavy call's CPU in wall time cannot have used that much.
    pub(crate) fn due(&self, running_for: Duration) -> bool {
        running_for >= cpu::HEAVY_CALL_CPU || self.0.throttled.load(Ordering::Acquire)
    }

    /// Asks `isolate` to check its call at its next interrupt check, unless it was asked
    /// already and has not checked yet.
    pub(crate) fn ask(&self, isolate: &v8::IsolateHandle) {
        if !self.0.asked.swap(true, Ordering::AcqRel) {
            isolate.request_interrupt(check_running_call, std::ptr::null_mut());
        }
    }

    /// The watchdog terminates the call: a pause in progress ends within [`MAX_PAUSE`].
    pub(crate) fn terminated(&self) {
        self.0.terminated.store(true, Ordering::Release);
    }
}

/// The interrupt the watchdog asks for, run on the isolate thread between two steps of its
/// JS. A call that has used a heavy call's CPU marks its builder heavy and demotes its thread
/// now, not when it ends (an endless loop would otherwise spin its whole time limit at the
/// normal priority); a demoted thread charges the CPU it used since its last check to the
/// budget and pays the budget's debt ([`pay_debt`], never refusing: the call runs already). A
/// request left over from an ended call finds nothing to check. `unsafe` only because the
/// engine's callback type is; it touches neither the isolate nor `data`.
#[allow(unsafe_code)]
unsafe extern "C" fn check_running_call(_isolate: v8::UnsafeRawIsolatePtr, _data: *mut c_void) {
    RUNNING.with_borrow_mut(|running| {
        if let Some(running) = running.as_mut() {
            running.checks.0.asked.store(false, Ordering::Release);
            let now = cpu::thread_cpu();
            if !cpu::this_thread_is_demoted()
                && now.saturating_sub(running.started) >= cpu::HEAVY_CALL_CPU
            {
                running.shares.burst_ran_long(&running.builder);
                running.charged_to = now;
            }
        }
    });
    // The call runs already: it pays, however long that takes (its time limit ends it).
    let _ = pay_debt(None);
}

/// On the isolate thread, as a call's handler is about to run (its alarm armed) with its
/// time limit at `deadline`: a demoted thread pays what its calls before this one used (work
/// no check interrupted is charged as a call ends), waiting at most half the time left so the
/// handler keeps the other half. A debt that would take longer answers `Err` with how long it
/// takes to pay: the call is refused rather than left to time out, which would cost its
/// isolate and send its builder to the quarantine.
pub(crate) fn before_handler(deadline: Instant) -> Result<(), Duration> {
    pay_debt(Some(deadline))
}

/// On the isolate thread of a call: a demoted thread charges the CPU it used since it last
/// charged, then pauses until the budget's debt is paid, in pauses of [`MAX_PAUSE`] at most
/// between which it looks for the call's termination. Every demoted thread pays the whole debt
/// before it runs on, so together they spend the budget and no more. With the `deadline` of a
/// call whose handler has not run yet, a debt that would take more than half the time left is
/// not waited for: `Err` with its time.
fn pay_debt(deadline: Option<Instant>) -> Result<(), Duration> {
    let charge = RUNNING.with_borrow_mut(|running| {
        let running = running.as_mut()?;
        if !cpu::this_thread_is_demoted() {
            return None;
        }
        let budget = running.shares.budget()?.clone();
        running.checks.0.throttled.store(true, Ordering::Release);
        let now = cpu::thread_cpu();
        let used = now.saturating_sub(running.charged_to);
        running.charged_to = now;
        Some((budget, used, running.checks.clone()))
    });
    let Some((budget, mut used, checks)) = charge else {
        return Ok(());
    };
    // Looked at only for a thread that pays: every call comes here before its handler.
    let refuse_past = deadline.map(|deadline| {
        let now = Instant::now();
        now + deadline.saturating_duration_since(now) / 2
    });
    let mut paused = false;
    let paid = loop {
        let now = Instant::now();
        let owed = budget.charge(used, now);
        used = Duration::ZERO;
        if owed.is_zero() || checks.0.terminated.load(Ordering::Acquire) {
            break Ok(());
        }
        if refuse_past.is_some_and(|refuse_past| now + owed > refuse_past) {
            break Err(owed);
        }
        std::thread::sleep(owed.min(MAX_PAUSE));
        paused = true;
    };
    if paused {
        // The pause is not CPU; what the thread does next is charged from here.
        restart_charge();
    }
    paid
}

fn restart_charge() {
    RUNNING.with_borrow_mut(|running| {
        if let Some(running) = running {
            running.charged_to = cpu::thread_cpu();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_budget_pauses_what_it_cannot_cover_and_refills_with_time() {
        let budget = HeavyBudget::new(100 * MS).unwrap();
        let start = Instant::now();
        // The burst (a quarter of a second's budget) is free.
        assert_eq!(budget.charge(25 * MS, start), Duration::ZERO);
        // 10 ms more puts it 10 ms in debt: 100 ms of wall time at 100 ms a second.
        assert_eq!(budget.charge(1 * MS, start), 10 * MS);
        assert_eq!(budget.charge(9 * MS, start), 100 * MS);
        // Half a second later it earned 50 ms: the debt is paid and the rest capped at the
        // burst, 25 ms; 20 ms are free, 6 more are 1 ms of debt.
        assert_eq!(budget.charge(20 * MS, start + 500 * MS), Duration::ZERO);
        assert_eq!(budget.charge(6 * MS, start + 500 * MS), 10 * MS);
    }

    #[test]
    fn no_budget_no_throttle() {
        assert!(HeavyBudget::new(Duration::ZERO).is_none());
    }
}
