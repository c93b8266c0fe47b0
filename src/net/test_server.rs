//! Test helper: serves a router on an ephemeral loopback port.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::serve::ListenerExt;
use axum::Router;

use crate::config::OutboundPolicy;
use crate::net::OutboundClient;

/// Serves `router` on `127.0.0.1:0` and returns its base URL, e.g. `http://127.0.0.1:41234`.
pub(crate) async fn serve(router: Router) -> String {
    serve_counting(router).await.0
}

/// As [`serve`], and counts the TCP connections the server accepts (how many the client opened).
pub(crate) async fn serve_counting(router: Router) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    let listener = listener.tap_io(move |_| {
        counter.fetch_add(1, Ordering::Relaxed);
    });
    tokio::spawn(async move {
        axum::serve(listener, router).await.expect("test server");
    });
    (format!("http://{addr}"), accepted)
}

/// A client with the default limits; `allow_loopback` as given.
pub(crate) fn client(allow_loopback: bool) -> OutboundClient {
    OutboundClient::new(&OutboundPolicy {
        allow_loopback,
        allow_private: false,
        timeout: Duration::from_secs(5),
        max_response_bytes: 64 * 1024,
        max_redirects: 3,
    })
}
