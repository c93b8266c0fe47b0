//! Rollout tallies: how each revision of an endpoint in a gradual rollout answers (calls,
//! successes, client and server errors, and a latency histogram), so its owner can compare the
//! new revision with the serving one before promoting it. A call counts once its handler ran:
//! one refused before (bad input, no payment) tells nothing of the revision.
//!
//! Every node counts the calls it ran itself, in memory in the activity recorder, and stores its
//! whole count under its own key once per recorder round (the store's
//! [`RolloutTallies`](crate::store::RolloutTallies), by endpoint and node). Nodes never write each
//! other's keys, so there is nothing to merge on write and nothing to lose to a race; a reader adds
//! every node's count of the current rollout. A node's count outlives its restart under the old
//! node's key (a restarted node counts anew under a new one). A count names its rollout, so the
//! counts of an earlier rollout are left out; all are deleted with the endpoint or when its rollout
//! ends.
//!
//! Latency is kept as a histogram of quarter-powers of two of microseconds: a percentile is
//! read as the upper bound of its bucket, within 19 % of the true value, in a few hundred
//! bytes whatever the number of calls.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::store::{Batch, RolloutTallyRow, Store, StoreError, StoreResult};

/// Node keys read at most per endpoint: one per node process that counted the rollout.
const MAX_NODES: usize = 10_000;

/// One call to count: which rollout and revision ran it, its status and how long it took.
#[derive(Clone, Debug)]
pub struct Mark {
    pub rollout: std::sync::Arc<str>,
    pub revision: u64,
    pub status: u16,
    pub micros: u64,
}

/// The calls one revision answered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tally {
    pub calls: u64,
    /// Answered 2xx.
    pub ok: u64,
    /// Answered 4xx by the handler (its own refusal).
    pub client_errors: u64,
    /// Answered 5xx (the handler threw, timed out or ran out of memory).
    pub server_errors: u64,
    pub total_micros: u64,
    /// Calls by latency bucket ([`bucket`]).
    pub latency: BTreeMap<u16, u64>,
}

impl Tally {
    pub fn count(&mut self, status: u16, micros: u64) {
        self.calls += 1;
        match status {
            200..=299 => self.ok += 1,
            400..=499 => self.client_errors += 1,
            500.. => self.server_errors += 1,
            _ => {}
        }
        self.total_micros = self.total_micros.saturating_add(micros);
        *self.latency.entry(bucket(micros)).or_default() += 1;
    }

    pub fn add(&mut self, other: &Tally) {
        self.calls += other.calls;
        self.ok += other.ok;
        self.client_errors += other.client_errors;
        self.server_errors += other.server_errors;
        self.total_micros = self.total_micros.saturating_add(other.total_micros);
        for (bucket, calls) in &other.latency {
            *self.latency.entry(*bucket).or_default() += calls;
        }
    }

    /// The latency under which `quantile` (0-1) of the calls finished, in milliseconds; `None`
    /// before any call.
    pub fn percentile_ms(&self, quantile: f64) -> Option<f64> {
        let total: u64 = self.latency.values().sum();
        if total == 0 {
            return None;
        }
        // The rank of the call at the quantile, 1-based: ceil(q * n), at least the first.
        let rank = ((quantile * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        self.latency.iter().find_map(|(bucket, calls)| {
            seen += calls;
            (seen >= rank).then(|| upper_bound_micros(*bucket) / 1000.0)
        })
    }
}

/// The bucket of a latency: `floor(4 * log2(micros))`, so bucket `b` holds latencies up to
/// `2^((b+1)/4)` microseconds.
pub fn bucket(micros: u64) -> u16 {
    if micros <= 1 {
        return 0;
    }
    (4.0 * (micros as f64).log2()).floor() as u16
}

fn upper_bound_micros(bucket: u16) -> f64 {
    2f64.powf(f64::from(bucket + 1) / 4.0)
}

/// What one node counted of one rollout, by revision.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeTallies {
    pub rollout: String,
    pub revisions: BTreeMap<u64, Tally>,
}

/// Puts a node's whole count for an endpoint into `batch`.
pub fn put(
    batch: Batch,
    endpoint_id: &str,
    node_id: &str,
    tallies: &NodeTallies,
) -> StoreResult<Batch> {
    let bytes = serde_json::to_vec(tallies).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let row = RolloutTallyRow::new(endpoint_id, node_id, &tallies.rollout, bytes);
    Ok(batch.put_rollout_tally(row))
}

/// Every node's count of rollout `rollout` of the endpoint, added up by revision.
pub async fn read(
    store: &dyn Store,
    endpoint_id: &str,
    rollout: &str,
) -> StoreResult<BTreeMap<u64, Tally>> {
    let mut sum: BTreeMap<u64, Tally> = BTreeMap::new();
    for (_, value) in (store.rollout_tallies(endpoint_id, rollout, MAX_NODES)).await? {
        // A count this release cannot read is left out, not an error of the whole view.
        let Ok(node) = serde_json::from_slice::<NodeTallies>(&value) else {
            continue;
        };
        if node.rollout == rollout {
            for (revision, tally) in &node.revisions {
                sum.entry(*revision).or_default().add(tally);
            }
        }
    }
    Ok(sum)
}

/// Deletes every node's counts of the endpoint (its rollout ended, or it was deleted).
pub async fn delete_all(store: &dyn Store, endpoint_id: &str) -> StoreResult<()> {
    store.delete_rollout_tallies(endpoint_id).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_within_a_bucket_of_the_truth() {
        let mut tally = Tally::default();
        for micros in 1..=1000u64 {
            tally.count(200, micros * 100);
        }
        assert_eq!(tally.calls, 1000);
        assert_eq!(tally.ok, 1000);
        for (quantile, truth_ms) in [(0.5, 50.0), (0.95, 95.0), (0.99, 99.0)] {
            let read = tally.percentile_ms(quantile).unwrap();
            assert!(
                read >= truth_ms && read <= truth_ms * 1.19 + 0.01,
                "p{quantile}: {read} against {truth_ms}"
            );
        }
        assert_eq!(Tally::default().percentile_ms(0.5), None);
    }

    #[test]
    fn statuses_are_counted_by_class_and_tallies_add_up() {
        let mut a = Tally::default();
        a.count(200, 10);
        a.count(422, 10);
        a.count(500, 10);
        let mut b = Tally::default();
        b.count(503, 2_000_000);
        a.add(&b);
        assert_eq!(
            (a.calls, a.ok, a.client_errors, a.server_errors),
            (4, 1, 1, 2)
        );
        assert_eq!(a.total_micros, 2_000_030);
        assert_eq!(a.percentile_ms(1.0).map(|ms| ms >= 2000.0), Some(true));
    }

    #[tokio::test]
    async fn a_reader_adds_every_node_of_the_current_rollout_only() {
        let store = crate::store::SledStore::temporary().unwrap();
        let mut counted = Tally::default();
        counted.count(200, 100);
        let node = |rollout: &str| NodeTallies {
            rollout: rollout.into(),
            revisions: BTreeMap::from([(2, counted.clone())]),
        };
        let batch = put(Batch::new(), "ep_1", "node_a", &node("r1")).unwrap();
        let batch = put(batch, "ep_1", "node_b", &node("r1")).unwrap();
        let batch = put(batch, "ep_1", "node_c", &node("r0")).unwrap();
        let batch = put(batch, "ep_2", "node_a", &node("r1")).unwrap();
        store.apply(batch).await.unwrap();
        let read_back = read(&store, "ep_1", "r1").await.unwrap();
        assert_eq!(read_back[&2].calls, 2);
        delete_all(&store, "ep_1").await.unwrap();
        assert!(read(&store, "ep_1", "r1").await.unwrap().is_empty());
        assert_eq!(read(&store, "ep_2", "r1").await.unwrap()[&2].calls, 1);
    }
}
