//! Free calls' receipts, proven in batches. The receipts stored at once (whatever free calls
//! queued while the previous group was written, up to [`MAX_GROUP`]) are the leaves of a small
//! Merkle tree of their own (RFC 6962 hashing, as the receipt log's), whose root one signed
//! note covers; each receipt's proof is its inclusion in that tree, stored beside it and given
//! to its call. One signature for the group, and nothing a receipt needs outlives it.
//!
//! Why not the receipt log: free receipts expire (`--free-receipt-retention-days`), and an
//! append-only log never forgets; they cost nobody anything, and an anonymous flood of them
//! would grow the log for good. So the log holds every receipt someone paid for, and a free
//! receipt is proven, for as long as it is kept, by its batch (docs/receipt-log.md).
//!
//! A batch's note is a C2SP checkpoint (size, root, `timestamp`) under a name of its own, the
//! log's with `batch` for `log` (`<host>/ai/receipts/batch`), signed by the receipt key: the
//! name is part of the verifier key, so a batch can never pass for a checkpoint of the log.
//! Batches are not a log: they neither extend nor are consistent with one another.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use tokio::sync::{mpsc, oneshot};
use toolhost_tlog::tree::Subtrees;
use toolhost_tlog::{hash, Signer, Verifier};

use super::log::{entry_of, signed_head, Inclusion, LogError};
use super::{Receipt, ReceiptSigner};
use crate::store::{Batch, Store, StoreError};

/// Receipts proven in one batch at most; more wait for the next.
const MAX_GROUP: usize = 1024;

/// The free receipts of a store, proven in batches. Cheap to clone.
#[derive(Clone)]
pub struct ReceiptBatches {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn Store>,
    signer: Signer,
    queue: mpsc::UnboundedSender<Message>,
    /// Batches this node signed, and the receipts they proved (`/metrics`).
    batches: AtomicU64,
    receipts: AtomicU64,
}

enum Message {
    Store(Job),
    Close(oneshot::Sender<()>),
}

/// A free receipt to store, and its call waiting for its proof.
struct Job {
    receipt_id: String,
    /// The receipt's write, conditional on its id being new ([`super::store_receipt_bare`]).
    writes: Batch,
    /// Its leaf: the receipt's canonical JSON.
    entry: Vec<u8>,
    reply: oneshot::Sender<Result<Inclusion, StoreError>>,
}

/// The batches' name: the receipt log's, `batch` for its last segment.
fn batch_origin(log_origin: &str) -> String {
    let host = log_origin.strip_suffix("/log").unwrap_or(log_origin);
    format!("{host}/batch")
}

impl ReceiptBatches {
    /// Starts proving free receipts into `store`, under the name that goes with the receipt
    /// log's (`log_origin`), signed with the receipt key.
    pub fn start(
        store: Arc<dyn Store>,
        key: &ReceiptSigner,
        log_origin: &str,
    ) -> Result<ReceiptBatches, LogError> {
        let signer = key
            .note_signer(&batch_origin(log_origin))
            .map_err(|e| LogError::Corrupt(format!("the log's origin cannot name a key: {e}")))?;
        let (queue, messages) = mpsc::unbounded_channel();
        let batches = ReceiptBatches {
            inner: Arc::new(Inner {
                store,
                signer,
                queue,
                batches: AtomicU64::new(0),
                receipts: AtomicU64::new(0),
            }),
        };
        let runner = batches.clone();
        tokio::spawn(async move {
            if let Some(done) = runner.run(messages).await {
                let _ = done.send(());
            }
        });
        Ok(batches)
    }

    /// The key the batches' notes are signed under (C2SP signed-note vkey).
    pub fn verifier(&self) -> Verifier {
        self.inner.signer.verifier()
    }

    /// Batches this node signed, and the receipts they proved, since it started.
    pub fn totals(&self) -> (u64, u64) {
        (
            self.inner.batches.load(Ordering::Relaxed),
            self.inner.receipts.load(Ordering::Relaxed),
        )
    }

    /// Stores a free call's `receipt` (durably, in one write for its whole batch) and answers
    /// its proof; nothing is stored when it fails (`ConditionFailed(0)`: a receipt with its id
    /// exists).
    pub async fn commit(&self, receipt: &Receipt) -> Result<Inclusion, StoreError> {
        let (reply, answer) = oneshot::channel();
        let entry = entry_of(receipt);
        let job = Job {
            receipt_id: receipt.receipt_id.clone(),
            writes: super::store_receipt_bare(Batch::new(), receipt, entry.clone())?,
            entry,
            reply,
        };
        let stopped = || StoreError::Unavailable("the receipts' batches have stopped".into());
        (self.inner.queue)
            .send(Message::Store(job))
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    /// The proof of a free receipt stored with one, if it has one.
    pub async fn proof_of(&self, receipt_id: &str) -> Result<Option<Inclusion>, StoreError> {
        let Some(proof) = self.inner.store.receipt_proof(receipt_id).await? else {
            return Ok(None);
        };
        serde_json::from_slice(&proof)
            .map(Some)
            .map_err(|e| StoreError::Corrupt(format!("the proof of {receipt_id}: {e}")))
    }

    /// Stops taking receipts once those queued are stored.
    pub async fn close(&self) {
        let (done, closed) = oneshot::channel();
        if self.inner.queue.send(Message::Close(done)).is_ok() {
            let _ = closed.await;
        }
    }

    /// Stores what calls queue, in batches, until told to close. Consumes its handle, so the
    /// store is let go of when it returns the close's answer.
    async fn run(
        self,
        mut messages: mpsc::UnboundedReceiver<Message>,
    ) -> Option<oneshot::Sender<()>> {
        loop {
            let mut group = match messages.recv().await? {
                Message::Store(job) => vec![job],
                Message::Close(done) => return Some(done),
            };
            let mut closing = None;
            while group.len() < MAX_GROUP && closing.is_none() {
                match messages.try_recv() {
                    Ok(Message::Store(job)) => group.push(job),
                    Ok(Message::Close(done)) => closing = Some(done),
                    Err(_) => break,
                }
            }
            self.store_group(group).await;
            if closing.is_some() {
                return closing;
            }
        }
    }

    /// Stores a group's receipts and proofs in one batch and answers each call. A receipt whose
    /// id exists already is refused alone; the others are proven without it.
    async fn store_group(&self, mut group: Vec<Job>) {
        while !group.is_empty() {
            let proven = match self.prove(&group) {
                Ok(proven) => proven,
                Err(e) => {
                    let text = e.to_string();
                    for job in group {
                        let _ = job.reply.send(Err(StoreError::Engine(text.clone())));
                    }
                    return;
                }
            };
            match self.inner.store.apply(proven.batch).await {
                Ok(()) => {
                    self.inner.batches.fetch_add(1, Ordering::Relaxed);
                    (self.inner.receipts).fetch_add(group.len() as u64, Ordering::Relaxed);
                    for (job, inclusion) in group.into_iter().zip(proven.inclusions) {
                        let _ = job.reply.send(Ok(inclusion));
                    }
                    return;
                }
                // Each receipt's one condition, in order: that one's id is taken.
                Err(StoreError::ConditionFailed(at)) if at < group.len() => {
                    let refused = group.remove(at);
                    let _ = refused.reply.send(Err(StoreError::ConditionFailed(0)));
                }
                Err(e) => {
                    for job in group {
                        let _ = job.reply.send(Err(e.clone()));
                    }
                    return;
                }
            }
        }
    }

    /// The batch storing `group` (each receipt conditional on its id being new, and its
    /// proof), and the proofs: their tree's inclusion proofs and its signed note.
    fn prove(&self, group: &[Job]) -> Result<Proven, LogError> {
        let tree = Subtrees::new(group.iter().map(|job| hash::leaf(&job.entry)).collect());
        let note = signed_head(&self.inner.signer, tree.size(), tree.root())?;
        // Each receipt's write brings one condition (its id is new), in the group's order.
        let mut batch = Batch::new();
        let mut inclusions = Vec::with_capacity(group.len());
        for (index, job) in (0..).zip(group) {
            let inclusion = Inclusion {
                leaf_index: index,
                tree_size: tree.size(),
                inclusion_proof: (tree.inclusion_proof(index).unwrap_or_default().iter())
                    .map(|h| BASE64.encode(h))
                    .collect(),
                checkpoint: note.clone(),
            };
            let proof =
                serde_json::to_vec(&inclusion).map_err(|e| LogError::Corrupt(e.to_string()))?;
            batch = (batch.extend(job.writes.clone())).put_receipt_proof(&job.receipt_id, proof);
            inclusions.push(inclusion);
        }
        Ok(Proven { batch, inclusions })
    }
}

/// A group's batch and its receipts' proofs, in the group's order.
struct Proven {
    batch: Batch,
    inclusions: Vec<Inclusion>,
}

#[cfg(test)]
mod tests {
    use toolhost_tlog::{verify, Checkpoint};

    use super::*;
    use crate::receipts::canonical_json;
    use crate::store::SledStore;

    async fn batches() -> (ReceiptBatches, Arc<dyn Store>) {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let key = ReceiptSigner::from_hex(&ReceiptSigner::generate_hex()).unwrap();
        let batches = ReceiptBatches::start(store.clone(), &key, "h.example/ai/receipts/log");
        (batches.unwrap(), store)
    }

    fn receipt(n: usize) -> Receipt {
        Receipt {
            receipt_id: format!("rcpt_{n:04}"),
            ..Receipt::example()
        }
    }

    /// Checks `inclusion` proves `receipt` under the batches' key; the note's size.
    fn proves(verifier: &Verifier, receipt: &Receipt, inclusion: &Inclusion) -> u64 {
        let head = Checkpoint::parse(verifier.open(&inclusion.checkpoint).unwrap()).unwrap();
        assert_eq!(head.origin, "h.example/ai/receipts/batch");
        assert_eq!(head.size, inclusion.tree_size);
        let value = serde_json::to_value(receipt).unwrap();
        let leaf = hash::leaf(canonical_json(&value).as_bytes());
        let proof: Vec<_> = (inclusion.inclusion_proof.iter())
            .map(|h| BASE64.decode(h).unwrap().try_into().unwrap())
            .collect();
        verify::inclusion(&leaf, inclusion.leaf_index, head.size, &proof, &head.root).unwrap();
        head.size
    }

    #[tokio::test]
    async fn receipts_stored_at_once_share_one_signed_batch_and_each_is_proven() {
        let (batches, store) = batches().await;
        let receipts: Vec<Receipt> = (0..40).map(receipt).collect();
        let proofs = futures::future::join_all(receipts.iter().map(|r| batches.commit(r))).await;
        let verifier = batches.verifier();
        for (receipt, proof) in receipts.iter().zip(&proofs) {
            let proof = proof.as_ref().unwrap();
            proves(&verifier, receipt, proof);
            let stored = crate::receipts::read(store.as_ref(), &receipt.receipt_id)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(&stored, receipt);
            assert_eq!(
                batches
                    .proof_of(&receipt.receipt_id)
                    .await
                    .unwrap()
                    .as_ref(),
                Some(proof)
            );
        }
        let (signed, proved) = batches.totals();
        assert_eq!(proved, 40);
        assert!(
            (1..40).contains(&signed),
            "{signed} batches for 40 receipts at once"
        );
        // A proof is of its own receipt only, and only under the batches' key.
        let other = proofs[1].as_ref().unwrap();
        let leaf =
            hash::leaf(canonical_json(&serde_json::to_value(&receipts[0]).unwrap()).as_bytes());
        let head = Checkpoint::parse(verifier.open(&other.checkpoint).unwrap()).unwrap();
        let path: Vec<_> = (other.inclusion_proof.iter())
            .map(|h| BASE64.decode(h).unwrap().try_into().unwrap())
            .collect();
        assert!(verify::inclusion(&leaf, other.leaf_index, head.size, &path, &head.root).is_err());
        let log_key = ReceiptSigner::from_hex(&ReceiptSigner::generate_hex()).unwrap();
        let log = log_key
            .note_signer("h.example/ai/receipts/log")
            .unwrap()
            .verifier();
        assert!(log.open(&other.checkpoint).is_err());
        batches.close().await;
    }

    #[tokio::test]
    async fn a_receipt_whose_id_is_taken_is_refused_alone_and_nothing_of_it_is_written() {
        let (batches, store) = batches().await;
        let first = receipt(1);
        batches.commit(&first).await.unwrap();
        let mut again = receipt(1);
        again.amount = "2".into();
        let others: Vec<Receipt> = (2..6).map(receipt).collect();
        let (refused, rest) = tokio::join!(
            batches.commit(&again),
            futures::future::join_all(others.iter().map(|r| batches.commit(r)))
        );
        assert!(
            matches!(refused, Err(StoreError::ConditionFailed(0))),
            "{refused:?}"
        );
        let verifier = batches.verifier();
        for (receipt, proof) in others.iter().zip(rest) {
            proves(&verifier, receipt, &proof.unwrap());
        }
        let stored = crate::receipts::read(store.as_ref(), "rcpt_0001")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored, first, "the first receipt is as it was");
        proves(
            &verifier,
            &first,
            &batches.proof_of("rcpt_0001").await.unwrap().unwrap(),
        );
        // Swept once old, a free receipt takes its proof with it.
        let swept = store.sweep_free_receipts(i64::MAX, 100).await.unwrap();
        assert_eq!(swept, 5);
        assert!(batches.proof_of("rcpt_0002").await.unwrap().is_none());
        assert!(store.receipt("rcpt_0002").await.unwrap().is_none());
        batches.close().await;
    }
}
