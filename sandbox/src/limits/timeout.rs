//! Wall-clock limit: one watchdog thread for the whole pool keeps the deadlines of running
//! invocations and calls `terminate_execution` on the isolate whose deadline passes. This
//! stops JS that never yields (a `while (true)`, a microtask loop); the worker also races the
//! event loop against the same deadline, for handlers stuck awaiting the host.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use deno_core::v8;

use super::cpu::HEAVY_CALL_CPU;
use super::throttle::{self, Checks, CHECK_EVERY};

/// How often an idle watchdog looks at its alarms: shorter than any usual time limit, and
/// as long as a call runs before its CPU is checked (`limits::throttle`), so that a call armed
/// while the watchdog sleeps is checked at most that much late.
const IDLE_TICK: Duration = HEAVY_CALL_CPU;

/// Handle to the watchdog thread; the thread ends when this is dropped.
pub(crate) struct Watchdog {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
struct State {
    next_id: u64,
    alarms: BTreeMap<(Instant, u64), Alarm>,
    /// Alarms whose calls are checked while they run: while there are any, the watchdog
    /// wakes when the first is due (see [`Checks::due`]), then every [`CHECK_EVERY`] to ask
    /// those due to check.
    checked: usize,
    /// When the watchdog thread wakes up next by itself (`None`: only when notified). An alarm
    /// due after that needs no wake-up call, which keeps arming free of thread switches.
    wakes_at: Option<Instant>,
    closed: bool,
}

struct Alarm {
    isolate: v8::IsolateHandle,
    fired: Arc<AtomicBool>,
    /// When it was armed.
    armed: Instant,
    /// The checks of the call's CPU while it runs (`limits::throttle`), if it has them.
    checks: Option<Checks>,
}

/// An armed deadline; disarmed when dropped.
pub(crate) struct Armed {
    shared: Arc<Shared>,
    key: (Instant, u64),
    fired: Arc<AtomicBool>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Watchdog {
    pub(crate) fn start() -> std::io::Result<Watchdog> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name("sandbox-watchdog".to_owned())
            .spawn(move || run(&thread_shared))?;
        Ok(Watchdog { shared })
    }

    /// Terminates `isolate`'s JS if the returned guard is still alive at `deadline`. Called
    /// on the isolate's thread: if the call running there is checked while it runs, the
    /// watchdog also asks the isolate for its checks until then, from when the call has run
    /// [`HEAVY_CALL_CPU`]. Arming never wakes the watchdog for the checks (that would be a
    /// thread switch per call): a watchdog asleep for [`IDLE_TICK`] starts them up to that
    /// late, one that has checks in hand on time (the earlier calls' are due first).
    pub(crate) fn arm(&self, deadline: Instant, isolate: v8::IsolateHandle) -> Armed {
        let fired = Arc::new(AtomicBool::new(false));
        let checks = throttle::checks_wanted();
        let armed = Instant::now();
        let mut state = self.shared.lock();
        let key = (deadline, state.next_id);
        state.next_id += 1;
        let sooner_than_planned = state.wakes_at.is_none_or(|wakes_at| deadline < wakes_at);
        state.checked += usize::from(checks.is_some());
        state.alarms.insert(
            key,
            Alarm {
                isolate,
                fired: fired.clone(),
                armed,
                checks,
            },
        );
        drop(state);
        if sooner_than_planned {
            self.shared.wake.notify_one();
        }
        Armed {
            shared: self.shared.clone(),
            key,
            fired,
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.wake.notify_one();
    }
}

impl Armed {
    /// Whether the deadline passed and the isolate was told to terminate.
    pub(crate) fn fired(&self) -> bool {
        self.fired.load(Ordering::Acquire)
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        if let Some(alarm) = state.alarms.remove(&self.key) {
            state.checked -= usize::from(alarm.checks.is_some());
        }
    }
}

fn run(shared: &Shared) {
    let mut state = shared.lock();
    while !state.closed {
        let now = Instant::now();
        while let Some(entry) = state.alarms.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let alarm = entry.remove();
            state.checked -= usize::from(alarm.checks.is_some());
            alarm.fired.store(true, Ordering::Release);
            if let Some(checks) = &alarm.checks {
                checks.terminated();
            }
            alarm.isolate.terminate_execution();
        }
        // With no alarm, still look again after IDLE_TICK: an alarm armed meanwhile for later
        // than that then needs no notification.
        let mut wakes_at = match state.alarms.keys().next() {
            Some((deadline, _)) => *deadline,
            None => now + IDLE_TICK,
        };
        if state.checked > 0 {
            for alarm in state.alarms.values() {
                let Some(checks) = &alarm.checks else {
                    continue;
                };
                let check_at = if checks.due(now.saturating_duration_since(alarm.armed)) {
                    checks.ask(&alarm.isolate);
                    now + CHECK_EVERY
                } else {
                    alarm.armed + HEAVY_CALL_CPU
                };
                wakes_at = wakes_at.min(check_at);
            }
        }
        state.wakes_at = Some(wakes_at);
        state = shared
            .wake
            .wait_timeout(state, wakes_at.saturating_duration_since(now))
            .unwrap_or_else(PoisonError::into_inner)
            .0;
        state.wakes_at = None;
    }
}
