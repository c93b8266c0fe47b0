//! A builder's calls go one at a time until one of them has ended within its limits.
//!
//! Nothing is known of a builder whose calls this server has not run yet: its first call may be
//! an endless loop or a heap bomb. Without this, a burst of such first calls lands on the shared
//! workers all at once, at the normal CPU priority and with every isolate its quotas allow,
//! before anything has marked the builder heavy (`limits::cpu`) or set it apart (the quarantine
//! worker): the first second of an attack was what the neighbours' slowest calls waited behind,
//! and the shared workers' memory peak.
//!
//! So while a call of a builder not yet *known* is in progress, the builder's other calls wait
//! for it. A call that ends with its isolate kept (an answer or a handler's error, within its
//! limits) makes the builder known, and its waiting calls go on side by side as its quotas
//! allow; one that lost its isolate has set its builder apart, and they go to the quarantine
//! worker; one that ended any other way (refused as overloaded, its worker gone) lets the next
//! waiting call try. A builder set apart is forgotten: back on the shared workers after its
//! stay, it proves itself again. The operator's own endpoints are never held. A legitimate
//! builder pays once per server start: its first call, alone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use tokio::sync::Notify;

/// Known builders remembered at once; past it the one known longest is forgotten (and proves
/// itself again with a call alone).
const MAX_KNOWN: usize = 16_384;

/// Which builders are known, and the first calls in progress of those that are not.
#[derive(Default)]
pub(super) struct Newcomers {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Builders one of whose calls ended within its limits, with when that was first seen.
    known: HashMap<String, Instant>,
    /// Builders not known with a call in progress: their other calls wait on its `Notify`.
    trying: HashMap<String, Arc<Notify>>,
}

/// The turn of a call of a builder not yet known: the builder's other calls wait until it is
/// dropped.
pub(super) struct FirstCall<'a> {
    newcomers: &'a Newcomers,
    builder: String,
}

impl Newcomers {
    /// Waits until a call of `builder` may go: at once (`None`) if the builder is known; else
    /// when none of its calls is in progress, with the turn that holds its other calls until
    /// dropped. Gives up at `give_up` (`Err`): the call in progress ends well before that, at
    /// its own deadline.
    pub(super) async fn turn(
        &self,
        builder: &str,
        give_up: Instant,
    ) -> Result<Option<FirstCall<'_>>, ()> {
        loop {
            let ended = {
                let mut state = self.lock();
                if state.known.contains_key(builder) {
                    return Ok(None);
                }
                match state.trying.get(builder) {
                    Some(trying) => trying.clone().notified_owned(),
                    None => {
                        state
                            .trying
                            .insert(builder.to_owned(), Arc::new(Notify::new()));
                        return Ok(Some(FirstCall {
                            newcomers: self,
                            builder: builder.to_owned(),
                        }));
                    }
                }
            };
            // Created under the lock, so the wake-up of a call ending since cannot be missed.
            if tokio::time::timeout_at(give_up.into(), ended)
                .await
                .is_err()
            {
                return Err(());
            }
        }
    }

    /// Forgets that `builder` is known (it was set apart).
    pub(super) fn forget(&self, builder: &str) {
        self.lock().known.remove(builder);
    }

    /// How many builders are known.
    #[cfg(test)]
    fn known(&self) -> usize {
        self.lock().known.len()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl FirstCall<'_> {
    /// The call ended within its limits: its builder is known from now on.
    pub(super) fn proven(self) {
        let mut state = self.newcomers.lock();
        if state.known.len() >= MAX_KNOWN {
            let oldest = state.known.iter().min_by_key(|(_, since)| **since);
            if let Some(oldest) = oldest.map(|(builder, _)| builder.clone()) {
                state.known.remove(&oldest);
            }
        }
        state.known.insert(self.builder.clone(), Instant::now());
    }
}

impl Drop for FirstCall<'_> {
    fn drop(&mut self) {
        if let Some(waiting) = self.newcomers.lock().trying.remove(&self.builder) {
            waiting.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    #[tokio::test]
    async fn a_builders_calls_wait_for_its_first_until_it_is_proven() {
        let newcomers = Newcomers::default();
        let first = newcomers.turn("b", soon()).await.unwrap().expect("a turn");
        // Another builder is not held; the same builder's next call waits.
        drop(newcomers.turn("other", soon()).await.unwrap());
        let waiting = newcomers.turn("b", Instant::now() + Duration::from_millis(50));
        assert!(
            waiting.await.is_err(),
            "waits while the first is in progress"
        );
        assert_eq!(newcomers.known(), 0);
        first.proven();
        assert!(newcomers.turn("b", soon()).await.unwrap().is_none());
        assert_eq!(newcomers.known(), 1);
        newcomers.forget("b");
        assert!(newcomers.turn("b", soon()).await.unwrap().is_some());
    }

    #[tokio::test]
    async fn a_first_call_that_proves_nothing_lets_the_next_one_try() {
        let newcomers: &'static Newcomers = Box::leak(Box::new(Newcomers::default()));
        let first = newcomers.turn("b", soon()).await.unwrap().expect("a turn");
        let next = tokio::spawn(async move {
            newcomers
                .turn("b", soon())
                .await
                .unwrap()
                .map(|turn| turn.builder.clone())
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!next.is_finished(), "the next call waits for the first");
        drop(first);
        assert_eq!(next.await.unwrap().as_deref(), Some("b"), "and then tries");
    }
}
