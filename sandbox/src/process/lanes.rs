//! The frames on their way to one worker, in lanes taken in turn: the server's own (calls,
//! control) first, then one lane per builder for the replies to its `ctx` operations.
//!
//! A worker reads its stdin in order, so with one queue in arrival order a builder whose
//! handlers read megabytes at once (150 `kv.list` pages of 256 KiB in one call) put every other
//! builder's replies behind its own: a neighbour's 100-byte `kv.get` answer waited for up to
//! that builder's cap of queued replies (32 MiB) to be written and decoded first. Taken in
//! turn, a reply waits for at most one frame of each other builder with replies queued (and
//! the batch being written).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

use super::wire::{FrameSource, MAX_BATCH_BYTES};

/// The lanes of one worker's frames. Closed when the worker is dropped: the writer writes
/// what is queued, then ends.
pub(super) struct Lanes<F> {
    state: Mutex<State<F>>,
    queued: Notify,
}

struct State<F> {
    /// The server's own frames (calls, code, control), before any builder's.
    server: VecDeque<F>,
    /// Each builder with replies queued and its replies, oldest first, in the order their
    /// turns come.
    builders: VecDeque<(String, VecDeque<F>)>,
    closed: bool,
}

impl<F: AsRef<[u8]>> Lanes<F> {
    pub(super) fn new() -> Lanes<F> {
        Lanes {
            state: Mutex::new(State {
                server: VecDeque::new(),
                builders: VecDeque::new(),
                closed: false,
            }),
            queued: Notify::new(),
        }
    }

    /// Queues one of the server's own frames; once closed, drops it (the worker is gone, and
    /// its reader answers the callers waiting on it).
    pub(super) fn push_server(&self, frame: F) {
        let mut state = self.lock();
        if !state.closed {
            state.server.push_back(frame);
            drop(state);
            self.queued.notify_one();
        }
    }

    /// Queues a reply to one of `builder`'s operations.
    pub(super) fn push_reply(&self, builder: &str, frame: F) {
        let mut state = self.lock();
        if state.closed {
            return;
        }
        // Few builders have replies queued at once: each is written within moments.
        match state.builders.iter_mut().find(|(name, _)| name == builder) {
            Some((_, lane)) => lane.push_back(frame),
            None => state
                .builders
                .push_back((builder.to_owned(), VecDeque::from([frame]))),
        }
        drop(state);
        self.queued.notify_one();
    }

    /// No more frames are queued from now on.
    pub(super) fn close(&self) {
        self.lock().closed = true;
        self.queued.notify_one();
    }

    /// Waits for frames and moves the next ones into `batch` (the server's first, then one of
    /// each builder's in turn); `false` once closed with nothing left.
    async fn next_batch(&self, batch: &mut Vec<F>) -> bool {
        loop {
            {
                let mut state = self.lock();
                let mut bytes = 0;
                while bytes < MAX_BATCH_BYTES {
                    let Some(frame) = state.take() else { break };
                    bytes += frame.as_ref().len();
                    batch.push(frame);
                }
                if !batch.is_empty() {
                    return true;
                }
                if state.closed {
                    return false;
                }
            }
            // A frame queued since the lock was let go left a permit: no wake-up is lost.
            self.queued.notified().await;
        }
    }

    /// The next frame to write, if any is queued (tests).
    #[cfg(test)]
    pub(super) fn try_take(&self) -> Option<F> {
        self.lock().take()
    }

    fn lock(&self) -> MutexGuard<'_, State<F>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The writer's side: it writes the lanes' frames until they are closed and empty.
impl<F: AsRef<[u8]>> FrameSource<F> for Arc<Lanes<F>> {
    async fn next_batch(&mut self, batch: &mut Vec<F>) -> bool {
        Lanes::next_batch(self, batch).await
    }
}

impl<F> State<F> {
    /// The next frame: the server's oldest, else the builder's whose turn it is.
    fn take(&mut self) -> Option<F> {
        if let Some(frame) = self.server.pop_front() {
            return Some(frame);
        }
        let (builder, mut lane) = self.builders.pop_front()?;
        let frame = lane.pop_front();
        if !lane.is_empty() {
            self.builders.push_back((builder, lane));
        }
        frame
    }
}

#[cfg(test)]
mod tests {
    use super::super::wire;
    use super::*;

    fn taken(lanes: &Lanes<Vec<u8>>) -> Vec<u8> {
        let mut state = lanes.lock();
        std::iter::from_fn(|| state.take().map(|frame| frame[0])).collect()
    }

    #[test]
    fn the_servers_frames_go_first_then_each_builders_in_turn() {
        let lanes = Lanes::new();
        for n in [1, 2, 3, 4] {
            lanes.push_reply("flood", vec![n]);
        }
        lanes.push_reply("victim", vec![10]);
        lanes.push_server(vec![100]);
        lanes.push_reply("other", vec![20]);
        lanes.push_reply("victim", vec![11]);
        assert_eq!(taken(&lanes), [100, 1, 10, 20, 2, 11, 3, 4]);
        assert!(lanes.lock().builders.is_empty());
    }

    #[tokio::test]
    async fn the_writer_writes_what_is_queued_then_ends_once_closed() {
        let lanes = Arc::new(Lanes::new());
        lanes.push_reply("b", vec![1, 2]);
        lanes.push_server(vec![3]);
        let (mut read, write) = tokio::io::duplex(64);
        let writer = tokio::spawn(wire::write_all(write, lanes.clone()));
        lanes.push_reply("b", vec![4]);
        lanes.close();
        lanes.push_server(vec![5]);
        writer.await.unwrap().unwrap();
        let mut written = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut read, &mut written)
            .await
            .unwrap();
        assert_eq!(written, [3, 1, 2, 4]);
    }
}
