//! A request-scoped note that a call's payment has begun settling, and the receipt it is to get.
//!
//! The whole-request deadline (the router's middleware) runs each request inside [`scope`];
//! the gate calls [`begins`] once the handler has succeeded and the settlement starts. From then
//! the deadline no longer cuts the answer (the payer is owed the result and the receipt) and the
//! settlement's own timeouts bound it instead. Outside such a scope (a streamed call's task)
//! [`begins`] does nothing.

use std::future::Future;
use std::sync::{Arc, Mutex};

/// What the deadline learns of a request whose payment is settling.
#[derive(Default)]
pub struct Settling {
    /// The receipt id and its URL.
    receipt: Mutex<Option<(String, String)>>,
}

impl Settling {
    /// The receipt the settlement is writing, once it has begun.
    pub fn receipt(&self) -> Option<(String, String)> {
        self.receipt.lock().ok().and_then(|r| r.clone())
    }
}

tokio::task_local! {
    static SETTLING: Arc<Settling>;
}

/// Runs `request` with `settling` as the note [`begins`] writes to.
pub fn scope<F: Future>(settling: Arc<Settling>, request: F) -> impl Future<Output = F::Output> {
    SETTLING.scope(settling, request)
}

/// The call's handler succeeded and its payment starts settling (its receipt is written).
pub fn begins(receipt_id: &str, receipt_url: &str) {
    let _ = SETTLING.try_with(|settling| {
        if let Ok(mut receipt) = settling.receipt.lock() {
            *receipt = Some((receipt_id.to_string(), receipt_url.to_string()));
        }
    });
}
