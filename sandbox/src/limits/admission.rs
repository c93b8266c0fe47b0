//! Per-endpoint concurrency: at most `max_concurrent_per_endpoint` invocations admitted at once
//! (running plus queued); the next one is refused with `Overloaded` instead of waiting.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[derive(Debug)]
pub(crate) struct Admission {
    in_flight: Arc<AtomicUsize>,
    max: usize,
}

/// One admitted invocation; admission ends when it is dropped.
#[derive(Debug)]
pub(crate) struct Permit(Arc<AtomicUsize>);

impl Admission {
    pub(crate) fn new(max: usize) -> Self {
        Admission {
            in_flight: Arc::new(AtomicUsize::new(0)),
            max,
        }
    }

    pub(crate) fn try_admit(&self) -> Option<Permit> {
        self.in_flight
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()
            .map(|_| Permit(self.in_flight.clone()))
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_the_bound() {
        let admission = Admission::new(2);
        let a = admission.try_admit().unwrap();
        let _b = admission.try_admit().unwrap();
        assert!(admission.try_admit().is_none());
        drop(a);
        assert_eq!(admission.in_flight(), 1);
        assert!(admission.try_admit().is_some());
    }
}
