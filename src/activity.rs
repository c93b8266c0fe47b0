//! The activity recorder: invocation log entries and builder events, written off the request
//! path by one task, in batches.
//!
//! Every call leaves a log entry and, on a builder's endpoint, an event. Written inline they
//! cost two store transactions per call (and a retry loop on the log count when calls finish
//! together), and the store's write amplification made them the largest cost of a small
//! handler (about 16 KB written to disk per call). Instead the call hands them here: the thread
//! gathers what arrives within [`LINGER`] (a round) and stores each endpoint's entries in one
//! batch and all events in another. Ids and times are given when the call ends, so the order is
//! the calls' order.
//!
//! A log entry is stored only while its endpoint is still the one that ran the call: entries of
//! an endpoint deleted (or deleted and created again under the same slug) while they were queued
//! are dropped, so a deleted endpoint's logs stay deleted.
//!
//! A call of an endpoint in a gradual rollout is also counted ([`tallies`]), from the mark its log
//! message carries (one message per call either way): each round stores
//! this node's whole count of each endpoint it touched.
//!
//! Nothing else is dropped while the process runs: the queue is bounded and a full queue makes
//! callers wait. [`Recorder::flush`] ends the current round at once and returns when everything
//! queued before it is stored; readers of logs and events, and shutdown, call it. A crash can
//! lose the last round (at most [`LINGER`] of records); money and receipts never go this way.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use crate::events::Event;
use crate::logs::{self, LogEntry};
use crate::store::{Batch, EventRow, Store, StoreResult};
use crate::tallies::{self, Mark, NodeTallies};

/// Records queued before callers wait.
const QUEUE: usize = 8192;
/// Records stored per round at most, so a flood still gets written in bounded transactions.
const MAX_ROUND: usize = 1024;
/// How long a round gathers records after its first one.
pub const LINGER: Duration = Duration::from_millis(50);

/// The handle callers use; cheap to share behind the app.
pub struct Recorder {
    sender: mpsc::Sender<Message>,
}

/// Whether `(slug, endpoint id)` names an endpoint that exists now.
pub type IsCurrent = Box<dyn Fn(&str, &str) -> bool + Send + Sync>;

enum Message {
    Log {
        slug: String,
        endpoint_id: String,
        entry: LogEntry,
        /// The call counted in its endpoint's rollout, when one runs.
        mark: Option<Mark>,
    },
    Event {
        owner: String,
        event: Event,
    },
    Flush(oneshot::Sender<()>),
    /// Store what is queued, stop, and answer once the store is released.
    Close(oneshot::Sender<()>),
}

impl Recorder {
    /// Starts the writer task on the current runtime; it ends when the recorder is dropped,
    /// after storing the queue. `is_current` tells which endpoints still exist when their
    /// entries are stored.
    /// `node_id` names this process's rollout counts.
    pub fn start(store: Arc<dyn Store>, is_current: IsCurrent, node_id: String) -> Recorder {
        let (sender, receiver) = mpsc::channel(QUEUE);
        tokio::spawn(async move {
            let mut writer = Writer {
                store: store.as_ref(),
                is_current: &is_current,
                node_id,
                tallies: HashMap::new(),
            };
            let closed = writer.run(receiver).await;
            drop(store);
            if let Some(closed) = closed {
                let _ = closed.send(());
            }
        });
        Recorder { sender }
    }

    /// Queues an invocation's log entry for the endpoint `slug` whose id is `endpoint_id`,
    /// and the call's `mark` in the endpoint's rollout when one runs (one message per call).
    pub async fn log(&self, slug: &str, endpoint_id: &str, entry: LogEntry, mark: Option<Mark>) {
        self.send(Message::Log {
            slug: slug.to_owned(),
            endpoint_id: endpoint_id.to_owned(),
            entry,
            mark,
        })
        .await;
    }

    /// Queues an event for the builder `owner`'s feed.
    pub async fn event(&self, owner: &str, event: Event) {
        self.send(Message::Event {
            owner: owner.to_owned(),
            event,
        })
        .await;
    }

    /// Waits until everything queued before this call is stored.
    pub async fn flush(&self) {
        let (done, stored) = oneshot::channel();
        if self.sender.send(Message::Flush(done)).await.is_ok() {
            let _ = stored.await;
        }
    }

    /// Stores everything queued and stops the writer, releasing its hold on the store (at
    /// shutdown, before the store is flushed and its lock let go). Later records are lost.
    pub async fn close(&self) {
        let (done, closed) = oneshot::channel();
        if self.sender.send(Message::Close(done)).await.is_ok() {
            let _ = closed.await;
        }
    }

    async fn send(&self, message: Message) {
        if self.sender.send(message).await.is_err() {
            tracing::error!("the activity recorder has stopped; a log entry or event was lost");
        }
    }
}

/// The writer task's state: where it stores, and this node's rollout counts so far.
struct Writer<'a> {
    store: &'a dyn Store,
    is_current: &'a IsCurrent,
    node_id: String,
    /// By endpoint id: the count of its current rollout (a mark of a new rollout starts anew).
    tallies: HashMap<String, NodeTallies>,
}

impl Writer<'_> {
    /// Stores rounds until the channel closes or a `Close` arrives (returned, to be answered
    /// once the store is dropped).
    async fn run(&mut self, mut receiver: mpsc::Receiver<Message>) -> Option<oneshot::Sender<()>> {
        let mut round = Vec::with_capacity(MAX_ROUND);
        while let Some(first) = receiver.recv().await {
            let mut round_over = ends_round(&first);
            round.push(first);
            let ends = tokio::time::Instant::now() + LINGER;
            while !round_over && round.len() < MAX_ROUND {
                match tokio::time::timeout_at(ends, receiver.recv()).await {
                    Ok(Some(message)) => {
                        round_over = ends_round(&message);
                        round.push(message);
                    }
                    Ok(None) | Err(_) => break,
                }
            }
            if let Some(closed) = self.store_round(round.drain(..)).await {
                return Some(closed);
            }
        }
        None
    }

    /// Stores one round: each endpoint's entries in order, then the events and the counts
    /// the round changed; then answers flushes. Returns the `Close` request if the round
    /// ended with one.
    async fn store_round(
        &mut self,
        round: impl Iterator<Item = Message>,
    ) -> Option<oneshot::Sender<()>> {
        let store = self.store;
        let mut entries: BTreeMap<(String, String), Vec<LogEntry>> = BTreeMap::new();
        let mut feed: Vec<(String, Event)> = Vec::new();
        let mut counted: Vec<(String, String)> = Vec::new();
        let mut flushes = Vec::new();
        let mut close = None;
        for message in round {
            match message {
                Message::Log {
                    slug,
                    endpoint_id,
                    entry,
                    mark,
                } => {
                    if let Some(mark) = mark {
                        self.count(&endpoint_id, &mark);
                        let key = (slug.clone(), endpoint_id.clone());
                        if !counted.contains(&key) {
                            counted.push(key);
                        }
                    }
                    entries.entry((slug, endpoint_id)).or_default().push(entry)
                }
                Message::Event { owner, event } => feed.push((owner, event)),
                Message::Flush(done) => flushes.push(done),
                Message::Close(done) => close = Some(done),
            }
        }
        for ((slug, endpoint_id), entries) in &entries {
            if !(self.is_current)(slug, endpoint_id) {
                tracing::debug!(endpoint = %slug, dropped = entries.len(), "log entries of a deleted endpoint dropped");
                continue;
            }
            if let Err(e) = logs::append(store, endpoint_id, entries).await {
                tracing::error!(error = %e, endpoint = %slug, lost = entries.len(), "storing invocation logs failed");
            }
        }
        let rows: StoreResult<Vec<(&str, EventRow)>> = (feed.iter())
            .map(|(owner, event)| Ok((owner.as_str(), event.row()?)))
            .collect();
        let recorded = match rows {
            Ok(rows) => store.record_events(&rows).await,
            Err(e) => Err(e),
        };
        if let Err(e) = recorded {
            tracing::error!(error = %e, lost = feed.len(), "storing builder events failed");
        }
        let mut batch = Ok(Batch::new());
        // Not for a deleted endpoint: its counts stay deleted, like its logs.
        counted.retain(|(slug, endpoint_id)| (self.is_current)(slug, endpoint_id));
        for (_, endpoint_id) in &counted {
            let node = &self.tallies[endpoint_id];
            batch = batch.and_then(|b| tallies::put(b, endpoint_id, &self.node_id, node));
        }
        if !counted.is_empty() {
            let stored = match batch {
                Ok(batch) => store.apply(batch).await,
                Err(e) => Err(e),
            };
            if let Err(e) = stored {
                tracing::error!(error = %e, endpoints = counted.len(), "storing rollout counts failed");
            }
        }
        for done in flushes {
            let _ = done.send(());
        }
        close
    }

    fn count(&mut self, endpoint_id: &str, mark: &Mark) {
        let node = self.tallies.entry(endpoint_id.to_owned()).or_default();
        if node.rollout != *mark.rollout {
            *node = NodeTallies {
                rollout: mark.rollout.to_string(),
                revisions: BTreeMap::new(),
            };
        }
        node.revisions
            .entry(mark.revision)
            .or_default()
            .count(mark.status, mark.micros);
    }
}

fn ends_round(message: &Message) -> bool {
    matches!(message, Message::Flush(_) | Message::Close(_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventKind;
    use crate::logs::InvocationLog;
    use crate::paging::PageRequest;
    use crate::store::SledStore;

    fn entry(request_id: &str) -> LogEntry {
        logs::entry(
            InvocationLog {
                request_id: request_id.to_owned(),
                status: 200,
                duration_ms: 1,
                lines: Vec::new(),
                test: false,
                error: None,
            },
            &[],
        )
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn flush_waits_for_everything_queued_before_it() {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let recorder = Arc::new(Recorder::start(
            store.clone(),
            Box::new(|_, _| true),
            "node_t".into(),
        ));
        let callers: Vec<_> = (0..4)
            .map(|caller| {
                let recorder = recorder.clone();
                tokio::spawn(async move {
                    for i in 0..250 {
                        recorder
                            .log("s", "ep1", entry(&format!("{caller}-{i}")), None)
                            .await;
                        let event = Event::new(EventKind::InvocationSucceeded, Some("s"), json());
                        recorder.event("b1", event).await;
                    }
                })
            })
            .collect();
        for caller in callers {
            caller.await.unwrap();
        }
        recorder.flush().await;
        let all = PageRequest::parse(None, Some(100)).unwrap();
        let mut stored = 0;
        let mut page = logs::page(store.as_ref(), "ep1", &all).await.unwrap();
        loop {
            stored += page.items.len();
            let Some(cursor) = page.next_cursor.clone() else {
                break;
            };
            let next = PageRequest::parse(Some(&cursor), Some(100)).unwrap();
            page = logs::page(store.as_ref(), "ep1", &next).await.unwrap();
        }
        assert_eq!(stored, 1000);
        let query = crate::store::EventQuery {
            before: None,
            from: "0",
            endpoint: None,
            limit: 2000,
        };
        let events = store.events_page("b1", &query).await.unwrap();
        assert_eq!(events.rows.len(), 1000);
    }

    #[tokio::test]
    async fn entries_of_endpoints_gone_meanwhile_are_dropped() {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        // "s" exists now with id "ep2": "ep1" was an earlier endpoint under the same slug.
        let is_current: IsCurrent = Box::new(|slug, id| slug == "s" && id == "ep2");
        let recorder = Recorder::start(store.clone(), is_current, "node_t".into());
        recorder.log("s", "ep1", entry("old"), None).await;
        recorder.log("s", "ep2", entry("new"), None).await;
        recorder.log("gone", "ep3", entry("deleted"), None).await;
        recorder.close().await;
        let all = PageRequest::parse(None, Some(10)).unwrap();
        // Entries are kept under the endpoint's id.
        let kept: Vec<String> = logs::page(store.as_ref(), "ep2", &all)
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|e| e.request_id)
            .collect();
        assert_eq!(kept, ["new"]);
        for gone in ["ep1", "ep3"] {
            assert!(logs::page(store.as_ref(), gone, &all)
                .await
                .unwrap()
                .items
                .is_empty());
        }
    }

    fn json() -> serde_json::Value {
        serde_json::json!({"status": 200})
    }
}
