//! A builder's share of isolate CPU: builders whose calls run long bursts of CPU yield the cores
//! to the others.
//!
//! Each isolate runs on a thread of its own, and the kernel shares the cores among threads, not
//! builders: a builder whose calls spin for their whole time limit (an endless loop, a heap
//! bomb, a timer storm, decoding page after page) takes as many cores as it has calls running,
//! and a neighbour's 2 ms call waits its turn behind them. So the isolate thread measures the
//! CPU each call takes (the thread's own CPU clock, before and after; the cold start the call
//! needed, if any, included), and a call that took at least [`HEAVY_CALL_CPU`], or that lost
//! its isolate (timed out, over its heap limit, stuck), marks its builder *heavy* for
//! [`HEAVY_FOR`]. A heavy builder's calls run on threads at the lowest CPU priority
//! ([`DEMOTED_NICE`]): they still use every idle core, and when others want one the kernel
//! gives the others nearly all of it. Builders whose calls are short never notice. The pool
//! also holds a heavy builder's new isolates back (`pool::make_room`), and its demoted threads
//! get a longer grace at their time limit (`limits::deadline`).
//!
//! A thread lowers its own priority (the only change the worker's seccomp filter allows,
//! `confine::seccomp`), and an unprivileged thread cannot raise it again: a demoted thread
//! stays demoted for its life, and so do the threads that take its endpoint over when its
//! runtime is spent (they inherit it). Its endpoint's isolates are replaced sooner or later
//! (a limit hit, `recycle_after_invocations`, eviction), and fresh threads start at the normal
//! priority. A builder whose first call ever is a long one runs that call at the normal
//! priority: the burst is known when the call ends.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::throttle::{self, HeavyBudget};

/// A call that takes this much CPU on its isolate thread marks its builder heavy. A plain call
/// takes well under a millisecond; one doing real work (parsing a large input, a few thousand
/// crypto operations) a few tens.
pub(crate) const HEAVY_CALL_CPU: Duration = Duration::from_millis(50);
/// How long a builder stays heavy after its last heavy call.
pub(crate) const HEAVY_FOR: Duration = Duration::from_secs(60);
/// The nice value of a demoted thread: the lowest priority (a weight of 15 against 1,024 at
/// the default nice 0).
pub(crate) const DEMOTED_NICE: i32 = 19;
/// Builders remembered at once; past it the ones heavy longest ago are forgotten first.
const MAX_REMEMBERED: usize = 4096;

thread_local! {
    /// This thread has lowered its priority (or inherited the lower one).
    static DEMOTED: Cell<bool> = const { Cell::new(false) };
}

/// Which builders ran heavy calls lately, for one pool (one worker process's isolates).
pub(crate) struct CpuShares {
    /// Whether heavy builders' threads are demoted: not where the isolate threads are the
    /// server's own ([`crate::PoolConfig::cpu_shares`]). Builders are marked heavy either way,
    /// for the pool's placement.
    demote: bool,
    /// What demoted threads may spend together (`limits::throttle`); `None`: no limit.
    budget: Option<Arc<HeavyBudget>>,
    heavy: Mutex<HashMap<String, Instant>>,
    /// When each builder last lost an isolate (a subset of `heavy`'s marks).
    lost: Mutex<HashMap<String, Instant>>,
    /// When each builder last ran a call of a heavy call's CPU here (a subset of `heavy`'s
    /// marks: not those of isolates lost, nor those carried over from elsewhere).
    bursts: Mutex<HashMap<String, Instant>>,
    /// Isolate threads demoted so far.
    demotions: AtomicU64,
}

/// A call's CPU, measured on its isolate thread from [`CpuShares::before_call`].
pub(crate) struct CallCpu {
    started: Duration,
}

impl CallCpu {
    /// Counts from now: what the thread did since the call started was the host's work (a
    /// runtime built for the call's cold start), not the builder's.
    pub(crate) fn restart(&mut self) {
        self.started = thread_cpu();
        throttle::restart(self.started);
    }
}

impl CpuShares {
    /// `heavy_cpu_per_sec`: [`crate::PoolConfig::heavy_cpu_per_sec`].
    pub(crate) fn new(demote: bool, heavy_cpu_per_sec: Duration) -> CpuShares {
        CpuShares {
            demote,
            budget: HeavyBudget::new(heavy_cpu_per_sec),
            heavy: Mutex::default(),
            lost: Mutex::default(),
            bursts: Mutex::default(),
            demotions: AtomicU64::new(0),
        }
    }

    /// On the isolate thread, as a call of `builder` starts: the thread yields to the others'
    /// if the builder is heavy, and the call is checked while it runs (`limits::throttle`).
    /// Answers the call's meter.
    pub(crate) fn before_call(self: &Arc<Self>, builder: &str) -> CallCpu {
        // A thread already demoted stays so: no lookup (and no lock) for it.
        if self.demote && !DEMOTED.get() && self.is_heavy(builder, Instant::now()) {
            self.demote_this_thread();
        }
        let started = thread_cpu();
        if self.demote {
            throttle::start(self, builder, started);
        }
        CallCpu { started }
    }

    /// On the isolate thread, as the call ends: a heavy call marks its builder and demotes the
    /// thread.
    pub(crate) fn after_call(&self, builder: &str, call: CallCpu) {
        let ended = thread_cpu();
        throttle::end(ended);
        if ended.saturating_sub(call.started) >= HEAVY_CALL_CPU {
            self.mark_burst(builder);
            if self.demote {
                self.demote_this_thread();
            }
        }
    }

    /// On the isolate thread, while a call of `builder` runs: it has used a heavy call's CPU
    /// already, so its builder is heavy and the thread yields from now on.
    pub(crate) fn burst_ran_long(&self, builder: &str) {
        self.mark_burst(builder);
        if self.demote {
            self.demote_this_thread();
        }
    }

    /// The budget of demoted threads, if they have one.
    pub(crate) fn budget(&self) -> Option<&Arc<HeavyBudget>> {
        self.budget.as_ref()
    }

    /// A call of `builder` lost its isolate (it timed out, went over its heap limit, or its
    /// thread did not stop): the isolate built in its place costs a cold start, so the builder
    /// counts as heavy as after a long burst of CPU.
    pub(crate) fn lost_isolate(&self, builder: &str) {
        let now = Instant::now();
        self.mark_heavy(builder, now);
        remember(&self.lost, builder, now);
    }

    /// `builder` is heavy in the worker this one replaces: it stays heavy here (for
    /// [`HEAVY_FOR`] from now), rather than starting afresh with a new worker.
    pub(crate) fn heavy_elsewhere(&self, builder: &str) {
        self.mark_heavy(builder, Instant::now());
    }

    /// Whether `builder` ran a heavy call, or lost an isolate, within [`HEAVY_FOR`]. The pool
    /// holds such a builder's new isolates back as it does those of a builder past its memory
    /// floor (`pool::make_room`).
    pub(crate) fn is_heavy_now(&self, builder: &str) -> bool {
        self.is_heavy(builder, Instant::now())
    }

    /// Whether `builder` lost an isolate at `since` or later.
    pub(crate) fn lost_since(&self, builder: &str, since: Instant) -> bool {
        marked_since(&self.lost, builder, since)
    }

    /// Whether a call of `builder` used a heavy call's CPU here at `since` or later.
    pub(crate) fn burst_since(&self, builder: &str, since: Instant) -> bool {
        marked_since(&self.bursts, builder, since)
    }

    /// Isolate threads demoted so far.
    pub(crate) fn demotions(&self) -> u64 {
        self.demotions.load(Ordering::Relaxed)
    }

    /// Lowers this thread's CPU priority to [`DEMOTED_NICE`], once. On Linux a nice value
    /// belongs to a thread, and `setpriority(PRIO_PROCESS, 0, ..)` sets the calling thread's.
    fn demote_this_thread(&self) {
        if DEMOTED.get() {
            return;
        }
        DEMOTED.set(true);
        match rustix::process::setpriority_process(None, DEMOTED_NICE) {
            Ok(()) => {
                self.demotions.fetch_add(1, Ordering::Relaxed);
            }
            Err(err) => tracing::warn!(%err, "an isolate thread could not lower its CPU priority"),
        }
    }

    fn is_heavy(&self, builder: &str, now: Instant) -> bool {
        let heavy = self.heavy.lock().unwrap_or_else(PoisonError::into_inner);
        heavy
            .get(builder)
            .is_some_and(|since| now.saturating_duration_since(*since) < HEAVY_FOR)
    }

    fn mark_heavy(&self, builder: &str, now: Instant) {
        remember(&self.heavy, builder, now);
    }

    /// A call of `builder` used a heavy call's CPU.
    fn mark_burst(&self, builder: &str) {
        let now = Instant::now();
        self.mark_heavy(builder, now);
        remember(&self.bursts, builder, now);
    }
}

/// Notes `now` as `builder`'s last mark in `marks`, forgetting the oldest past
/// [`MAX_REMEMBERED`].
fn remember(marks: &Mutex<HashMap<String, Instant>>, builder: &str, now: Instant) {
    let mut marks = marks.lock().unwrap_or_else(PoisonError::into_inner);
    if marks.len() >= MAX_REMEMBERED && !marks.contains_key(builder) {
        marks.retain(|_, since| now.saturating_duration_since(*since) < HEAVY_FOR);
        if marks.len() >= MAX_REMEMBERED {
            let oldest = marks.iter().min_by_key(|(_, since)| **since);
            if let Some(oldest) = oldest.map(|(builder, _)| builder.clone()) {
                marks.remove(&oldest);
            }
        }
    }
    marks.insert(builder.to_owned(), now);
}

/// Whether `builder`'s last mark in `marks` is at `since` or later.
fn marked_since(marks: &Mutex<HashMap<String, Instant>>, builder: &str, since: Instant) -> bool {
    let marks = marks.lock().unwrap_or_else(PoisonError::into_inner);
    marks.get(builder).is_some_and(|at| *at >= since)
}

/// Whether this thread runs at the demoted priority.
pub(crate) fn this_thread_is_demoted() -> bool {
    DEMOTED.get()
}

/// The CPU time this thread has used.
pub(crate) fn thread_cpu() -> Duration {
    let time = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(time.tv_sec).unwrap_or(0),
        u32::try_from(time.tv_nsec).unwrap_or(0),
    )
}

/// This thread's nice value (tests).
#[cfg(test)]
fn this_threads_nice() -> i32 {
    rustix::process::getpriority_process(None).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(cpu: Duration) {
        let started = thread_cpu();
        while thread_cpu().saturating_sub(started) < cpu {
            std::hint::black_box(0u64);
        }
    }

    /// Runs `call` as a call of `builder` on a thread of its own; answers the thread's nice
    /// value when the call ended.
    fn call_on_a_thread(shares: &Arc<CpuShares>, builder: &str, call: impl FnOnce() + Send) -> i32 {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let meter = shares.before_call(builder);
                    call();
                    shares.after_call(builder, meter);
                    this_threads_nice()
                })
                .join()
                .unwrap()
        })
    }

    #[test]
    fn a_long_call_demotes_its_thread_and_its_builders_next_calls() {
        let normal = this_threads_nice();
        let shares = Arc::new(CpuShares::new(true, Duration::ZERO));
        let short = || spin(Duration::from_millis(2));
        let long = || spin(HEAVY_CALL_CPU + Duration::from_millis(5));
        assert_eq!(call_on_a_thread(&shares, "light", short), normal);
        assert_eq!(shares.demotions(), 0);
        // A long call: its thread ends it demoted.
        assert_eq!(call_on_a_thread(&shares, "heavy", long), DEMOTED_NICE);
        assert_eq!(shares.demotions(), 1);
        // The heavy builder's next call, short, on another thread, is demoted from its start;
        // the light builder's is not.
        assert_eq!(call_on_a_thread(&shares, "heavy", short), DEMOTED_NICE);
        assert_eq!(call_on_a_thread(&shares, "light", short), normal);
        assert_eq!(shares.demotions(), 2);
    }

    #[test]
    fn shares_off_demote_nothing() {
        let normal = this_threads_nice();
        let shares = Arc::new(CpuShares::new(false, Duration::ZERO));
        let long = || spin(HEAVY_CALL_CPU + Duration::from_millis(5));
        assert_eq!(call_on_a_thread(&shares, "heavy", long), normal);
        assert_eq!(call_on_a_thread(&shares, "heavy", long), normal);
        assert_eq!(shares.demotions(), 0);
    }

    #[test]
    fn a_builder_is_heavy_for_a_while_after_its_last_heavy_call() {
        let shares = CpuShares::new(true, Duration::ZERO);
        let now = Instant::now();
        shares.mark_heavy("b", now);
        assert!(shares.is_heavy("b", now + HEAVY_FOR / 2));
        assert!(!shares.is_heavy("b", now + HEAVY_FOR));
        assert!(!shares.is_heavy("other", now));
    }

    #[test]
    fn the_builders_remembered_are_bounded() {
        let shares = CpuShares::new(true, Duration::ZERO);
        let now = Instant::now();
        for i in 0..MAX_REMEMBERED + 10 {
            shares.mark_heavy(&format!("b{i}"), now + Duration::from_millis(i as u64));
        }
        let heavy = shares.heavy.lock().unwrap();
        assert_eq!(heavy.len(), MAX_REMEMBERED);
        assert!(!heavy.contains_key("b0") && heavy.contains_key("b4105"));
    }
}
