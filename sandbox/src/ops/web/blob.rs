//! Blob bytes under a budget. deno_web keeps a Blob's bytes in Rust (its blob store), outside
//! the isolate's heap and so outside the heap limit: without a budget a handler could keep
//! making blobs from a small buffer it reuses and grow the process without bound. Each isolate
//! gets its own [`BudgetedBlobStore`]; the op that turns JS bytes into a blob part is replaced
//! by [`op_web_blob_create_part`], which refuses once the isolate's blob bytes would pass the
//! budget. Bytes count until the last part or slice holding them is gone (a slice shares its
//! parent's bytes), so dropping the original while keeping a slice frees nothing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use deno_core::url::Url;
use deno_core::{op2, JsBuffer, OpState};
use deno_web::{Blob, BlobPart, BlobStore, BlobStoreTrait};
use uuid::Uuid;

use crate::ops::OpError;

/// Blob bytes in use in one isolate, and how many it may hold.
#[derive(Debug)]
struct Budget {
    used: AtomicUsize,
    limit: usize,
}

impl Budget {
    /// Takes `bytes` from the budget, or refuses without taking anything.
    fn take(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|total| *total <= self.limit)
            })
            .is_ok()
    }
}

/// A part's bytes, given back to the budget when the last holder (the part or a slice of it)
/// drops them.
#[derive(Debug)]
struct CountedPart {
    bytes: Vec<u8>,
    budget: Arc<Budget>,
}

impl Drop for CountedPart {
    fn drop(&mut self) {
        self.budget
            .used
            .fetch_sub(self.bytes.len(), Ordering::AcqRel);
    }
}

#[async_trait]
impl BlobPart for CountedPart {
    async fn read<'a>(&'a self) -> &'a [u8] {
        &self.bytes
    }

    fn size(&self) -> usize {
        self.bytes.len()
    }
}

/// deno_web's in-memory store, plus the budget its parts count against.
#[derive(Debug)]
pub(crate) struct BudgetedBlobStore {
    store: BlobStore,
    budget: Arc<Budget>,
}

impl BudgetedBlobStore {
    pub(crate) fn new(limit: usize) -> BudgetedBlobStore {
        BudgetedBlobStore {
            store: BlobStore::default(),
            budget: Arc::new(Budget {
                used: AtomicUsize::new(0),
                limit,
            }),
        }
    }

    /// Stores `bytes` as a new part, or refuses when the budget is spent.
    fn insert_bytes(&self, bytes: &[u8]) -> Result<Uuid, OpError> {
        if !self.budget.take(bytes.len()) {
            return Err(OpError::TooLarge(format!(
                "blobs in this isolate would pass {} bytes",
                self.budget.limit
            )));
        }
        Ok(self.store.insert_part(Arc::new(CountedPart {
            bytes: bytes.to_vec(),
            budget: self.budget.clone(),
        })))
    }
}

impl BlobStoreTrait for BudgetedBlobStore {
    fn insert_part(&self, part: Arc<dyn BlobPart + Send + Sync>) -> Uuid {
        self.store.insert_part(part)
    }

    fn get_part(&self, id: &Uuid) -> Option<Arc<dyn BlobPart + Send + Sync>> {
        self.store.get_part(id)
    }

    fn remove_part(&self, id: &Uuid) -> Option<Arc<dyn BlobPart + Send + Sync>> {
        self.store.remove_part(id)
    }

    fn get_object_url(&self, url: Url) -> Option<Arc<Blob>> {
        self.store.get_object_url(url)
    }

    fn insert_object_url(&self, blob: Blob, maybe_location: Option<Url>) -> Url {
        self.store.insert_object_url(blob, maybe_location)
    }

    fn remove_object_url(&self, url: &Url) {
        self.store.remove_object_url(url)
    }

    fn clear(&self) {
        self.store.clear()
    }
}

/// Takes the place of deno_web's `op_blob_create_part` (see `web::replace_ops`): the same
/// arguments and result, under the isolate's blob budget.
#[op2]
pub(crate) fn op_web_blob_create_part(
    state: &mut OpState,
    #[buffer] data: JsBuffer,
) -> Result<Uuid, OpError> {
    let store = state
        .try_borrow::<Arc<BudgetedBlobStore>>()
        .ok_or_else(|| OpError::Internal("isolate has no blob store".to_owned()))?;
    store.insert_bytes(&data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bytes_count_until_the_last_holder_drops_them() {
        let store = BudgetedBlobStore::new(10);
        let first = store.insert_bytes(&[1; 6]).unwrap();
        assert!(matches!(
            store.insert_bytes(&[2; 5]),
            Err(OpError::TooLarge(_))
        ));
        let held = store.remove_part(&first).expect("stored");
        assert_eq!(held.read().await, &[1; 6]);
        // Still held (as a slice would hold it): still counted.
        assert!(store.insert_bytes(&[2; 5]).is_err());
        drop(held);
        store.insert_bytes(&[2; 10]).unwrap();
        assert!(store.insert_bytes(&[3; 1]).is_err());
    }
}
