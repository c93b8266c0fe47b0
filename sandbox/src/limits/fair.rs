//! The server's own work for `ctx` operations, shared fairly among builders.
//!
//! A `ctx` operation costs the server CPU outside any isolate: reading the store, decoding
//! values, encoding the reply for a worker. Left to the async runtime, one builder's flood of
//! large `kv.list` pages keeps every runtime thread busy encoding, and every other builder's
//! operations (and the HTTP requests behind them) wait in line behind it: measured, a victim's
//! p99 went from 7 ms to 3.5 s under one such builder.
//!
//! So every poll of such work takes a turn from [`FairShare`]: at most `slots` polls run at
//! once (one fewer than the server's cores, so a runtime thread is always left for everything
//! else), and when a turn frees, the builder waiting with the least work charged so far goes
//! next (start-time fair queueing, the work measured as the time its polls took). A builder
//! that just arrived starts level with the ones being served, neither behind their debts nor
//! ahead of them; one alone uses every turn. Time spent waiting on I/O holds no turn, so an
//! outbound request that waits seconds costs its builder nothing while it waits.
//!
//! Work a charged poll spawns elsewhere is charged to the same builder: [`inherit_charge`]
//! wraps it with the charge current where it was spawned (in-process, the store host spawns
//! an op's work on the server's runtime from the isolate's thread).

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

tokio::task_local! {
    /// The account charged for the poll in progress on this thread, if any.
    static CURRENT: Account;
}

/// Turns for the server's work on `ctx` operations, shared by builders (see the module docs).
pub(crate) struct FairShare {
    slots: usize,
    state: Mutex<State>,
}

/// A poll waiting for a turn, numbered in the order it began to wait.
type Ticket = u64;

#[derive(Default)]
struct State {
    /// Turns taken: polls running, and turns granted to waiters that have not polled yet.
    busy: usize,
    /// The charge of the builder last granted a turn: where a newly arrived builder starts.
    floor: u64,
    next_ticket: u64,
    builders: HashMap<Arc<str>, Builder>,
    /// Tickets waiting for a turn, with the waker to call when it is theirs.
    waiting: HashMap<Ticket, Waker>,
    /// Tickets granted a turn whose future has not polled since.
    granted: HashSet<Ticket>,
}

#[derive(Default)]
struct Builder {
    /// Nanoseconds of polls charged so far, counted from where the builder started.
    charged: u64,
    /// Polls of this builder running now.
    polling: usize,
    /// Its tickets waiting, oldest first.
    queue: VecDeque<Ticket>,
}

/// Whose work a poll is charged to.
#[derive(Clone)]
struct Account {
    share: Arc<FairShare>,
    builder: Arc<str>,
}

impl FairShare {
    /// A share with `slots` turns (at least one).
    pub(crate) fn new(slots: usize) -> Arc<FairShare> {
        Arc::new(FairShare {
            slots: slots.max(1),
            state: Mutex::default(),
        })
    }

    /// Turns for this machine: one fewer than its cores, at least one.
    pub(crate) fn for_this_machine() -> Arc<FairShare> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        FairShare::new(cores - 1)
    }

    /// `work`, each of its polls taking a turn charged to `builder`.
    pub(crate) fn charged<F: Future>(self: &Arc<Self>, builder: &str, work: F) -> Charged<F> {
        Charged {
            work: Box::pin(work),
            account: Some(self.account(builder)),
            ticket: None,
        }
    }

    /// Runs `f` charged to `builder` as one poll would be: work the store host spawns while
    /// `f` runs is charged to it too (see [`inherit_charge`]). For hosts called from an
    /// isolate's own thread (in-process), where no charged future polls.
    pub(crate) fn within<T>(self: &Arc<Self>, builder: &str, f: impl FnOnce() -> T) -> T {
        CURRENT.sync_scope(self.account(builder), f)
    }

    fn account(self: &Arc<Self>, builder: &str) -> Account {
        Account {
            share: self.clone(),
            builder: builder.into(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a turn for `builder` now, or queues (or keeps queued) its ticket: whether the
    /// poll may run.
    fn enter(&self, account: &Account, ticket: &mut Option<Ticket>, waker: &Waker) -> bool {
        let builder = &account.builder;
        let mut state = self.lock();
        let state = &mut *state;
        match *ticket {
            Some(t) if state.granted.remove(&t) => *ticket = None,
            Some(t) => {
                state.waiting.insert(t, waker.clone());
                return false;
            }
            None if state.busy < self.slots && state.waiting.is_empty() => state.busy += 1,
            None => {
                let t = state.next_ticket;
                state.next_ticket += 1;
                state.waiting.insert(t, waker.clone());
                state.builder(builder).queue.push_back(t);
                *ticket = Some(t);
                return false;
            }
        }
        state.builder(builder).polling += 1;
        true
    }

    /// Ends a poll of `builder` that took `nanos`: charges it and hands the turn on.
    fn leave(&self, builder: &Arc<str>, nanos: u64) {
        let mut state = self.lock();
        if let Some(account) = state.builders.get_mut(builder) {
            account.charged = account.charged.saturating_add(nanos);
            account.polling -= 1;
        }
        state.busy -= 1;
        state.forget_if_idle(builder);
        self.grant(&mut state);
    }

    /// A future dropped with `ticket`: gives back its turn if one was granted, or leaves the
    /// queue.
    fn abandon(&self, builder: &Arc<str>, ticket: Ticket) {
        let mut state = self.lock();
        if state.granted.remove(&ticket) {
            state.busy -= 1;
        } else {
            state.waiting.remove(&ticket);
            if let Some(account) = state.builders.get_mut(builder) {
                account.queue.retain(|t| *t != ticket);
            }
        }
        state.forget_if_idle(builder);
        self.grant(&mut state);
    }

    /// Grants free turns, each to the oldest ticket of the waiting builder charged least.
    fn grant(&self, state: &mut State) {
        while state.busy < self.slots {
            let next = state
                .builders
                .iter_mut()
                .filter(|(_, b)| !b.queue.is_empty())
                .min_by_key(|(_, b)| b.charged);
            let Some((_, builder)) = next else { return };
            let ticket = builder.queue.pop_front().expect("a builder with a queue");
            let charged = builder.charged;
            state.floor = state.floor.max(charged);
            state.busy += 1;
            state.granted.insert(ticket);
            if let Some(waker) = state.waiting.remove(&ticket) {
                waker.wake();
            }
        }
    }

    #[cfg(test)]
    fn charged_to(&self, builder: &str) -> Option<u64> {
        let state = self.lock();
        let floor = state.floor;
        state
            .builders
            .get(builder)
            .map(|b| b.charged - floor.min(b.charged))
    }
}

impl State {
    /// `builder`'s entry, new ones starting at the floor.
    fn builder(&mut self, builder: &Arc<str>) -> &mut Builder {
        let floor = self.floor;
        self.builders
            .entry(builder.clone())
            .or_insert_with(|| Builder {
                charged: floor,
                ..Builder::default()
            })
    }

    /// Drops `builder`'s entry once nothing of it runs or waits and it owes nothing over the
    /// floor (where it would start again anyway), so the map holds only builders in play.
    fn forget_if_idle(&mut self, builder: &Arc<str>) {
        let floor = self.floor;
        if let Some(b) = self.builders.get(builder) {
            if b.polling == 0 && b.queue.is_empty() && b.charged <= floor {
                self.builders.remove(builder);
            }
        }
    }
}

/// `work` wrapped so each poll takes a turn (see [`FairShare::charged`]); without an account,
/// it polls as it is.
pub struct Charged<F> {
    /// Boxed, so `Charged` moves freely whatever `F` is.
    work: Pin<Box<F>>,
    account: Option<Account>,
    ticket: Option<Ticket>,
}

/// `work` charged to the builder whose charged poll is spawning it, or as it is outside one.
pub fn inherit_charge<F: Future>(work: F) -> Charged<F> {
    Charged {
        work: Box::pin(work),
        account: CURRENT.try_with(Account::clone).ok(),
        ticket: None,
    }
}

impl<F: Future> Future for Charged<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        let Some(account) = &this.account else {
            return this.work.as_mut().poll(cx);
        };
        if !account.share.enter(account, &mut this.ticket, cx.waker()) {
            return Poll::Pending;
        }
        // Charged and handed on when dropped, even if the poll panics.
        let _turn = Turn {
            account,
            started: Instant::now(),
        };
        CURRENT.sync_scope(account.clone(), || this.work.as_mut().poll(cx))
    }
}

/// A poll in progress, charged and ended when dropped.
struct Turn<'a> {
    account: &'a Account,
    started: Instant,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let nanos = u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.account.share.leave(&self.account.builder, nanos);
    }
}

impl<F> Drop for Charged<F> {
    fn drop(&mut self) {
        if let (Some(account), Some(ticket)) = (&self.account, self.ticket) {
            account.share.abandon(&account.builder, ticket);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    /// A future that keeps its thread busy for `busy` in each of `polls` polls (as encoding a
    /// large reply does), yielding between them.
    async fn work(busy: Duration, polls: usize) {
        for _ in 0..polls {
            std::thread::sleep(busy);
            tokio::task::yield_now().await;
        }
    }

    /// A builder with a flood of heavy work queued, and one with a single light op queued
    /// behind it: the light op is served within a turn or two, not after the flood.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_light_builder_goes_before_a_heavy_builders_queue() {
        let fair = FairShare::new(1);
        let finished = Arc::new(AtomicUsize::new(0));
        let heavy: Vec<_> = (0..12)
            .map(|_| {
                let finished = finished.clone();
                tokio::spawn(fair.charged("heavy", async move {
                    work(Duration::from_millis(20), 1).await;
                    finished.fetch_add(1, Ordering::SeqCst)
                }))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(30)).await;
        let finished_before = finished.clone();
        let light =
            tokio::spawn(fair.charged(
                "light",
                async move { finished_before.load(Ordering::SeqCst) },
            ));
        let heavy_done_before_light = light.await.unwrap();
        assert!(
            heavy_done_before_light <= 3,
            "{heavy_done_before_light} heavy ops went first"
        );
        for op in heavy {
            op.await.unwrap();
        }
        assert_eq!(
            finished.load(Ordering::SeqCst),
            12,
            "a builder alone uses every turn"
        );
    }

    /// Two builders with floods of equal ops take turns: each starts about as many in the
    /// first half.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn two_busy_builders_share_the_turns() {
        let fair = FairShare::new(1);
        let order = Arc::new(Mutex::new(Vec::new()));
        let ops: Vec<_> = ["a", "b"]
            .into_iter()
            .flat_map(|builder| std::iter::repeat_n(builder, 10))
            .map(|builder| {
                let order = order.clone();
                tokio::spawn(fair.charged(builder, async move {
                    order.lock().unwrap().push(builder);
                    work(Duration::from_millis(5), 1).await;
                }))
            })
            .collect();
        for op in ops {
            op.await.unwrap();
        }
        let order = order.lock().unwrap();
        let first_half = &order[..10];
        let a = first_half.iter().filter(|b| **b == "a").count();
        assert!((3..=7).contains(&a), "{order:?}");
    }

    /// Work spawned from a charged poll (as the store host spawns its own) is charged to the
    /// same builder; spawned outside one, to nobody.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn spawned_work_is_charged_to_the_builder_that_spawned_it() {
        let fair = FairShare::new(1);
        let spawned = fair.charged("spawner", async {
            tokio::spawn(inherit_charge(work(Duration::from_millis(30), 1)))
                .await
                .unwrap();
        });
        spawned.await;
        let charged = fair.charged_to("spawner").unwrap_or(0);
        assert!(charged >= 30_000_000, "charged {charged} ns");
        tokio::spawn(inherit_charge(work(Duration::from_millis(1), 1)))
            .await
            .unwrap();
        assert!(inherit_charge(async {}).account.is_none());
    }

    fn noop_context() -> Context<'static> {
        Context::from_waker(Waker::noop())
    }

    /// A future dropped while it waits, or after it was granted a turn it never took, gives
    /// the turn back: the next one runs.
    #[test]
    fn dropped_futures_give_their_turns_back() {
        let fair = FairShare::new(1);
        let mut cx = noop_context();
        let mut waiting = Box::pin(fair.charged("b", async {}));
        let mut granted = Box::pin(fair.charged("c", async {}));
        let mut outer = Box::pin(fair.charged("a", async {
            // While this poll holds the only turn, the others queue.
            assert!(waiting.as_mut().poll(&mut noop_context()).is_pending());
            assert!(granted.as_mut().poll(&mut noop_context()).is_pending());
            (waiting, granted)
        }));
        let Poll::Ready((waiting, granted)) = outer.as_mut().poll(&mut cx) else {
            panic!("the first poll runs at once");
        };
        // The turn went to "b" (first queued); dropping it unpolled hands it to "c".
        drop(waiting);
        drop(granted);
        let mut next = Box::pin(fair.charged("d", async {}));
        assert!(next.as_mut().poll(&mut cx).is_ready(), "a turn is free");
        assert_eq!(fair.lock().busy, 0);
        assert!(fair.lock().waiting.is_empty() && fair.lock().granted.is_empty());
    }

    /// A poll that panics still hands its turn on.
    #[test]
    fn a_panicking_poll_gives_its_turn_back() {
        let fair = FairShare::new(1);
        let mut panicking = Box::pin(fair.charged("a", async { panic!("in the op") }));
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = panicking.as_mut().poll(&mut noop_context());
        }));
        assert!(unwound.is_err());
        let mut next = Box::pin(fair.charged("b", async {}));
        assert!(next.as_mut().poll(&mut noop_context()).is_ready());
    }
}
