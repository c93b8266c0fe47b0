//! Stores for tests that run on both engines (tests only): one sled store, or two PostgreSQL
//! stores on one fresh database, as two nodes sharing it are; and [`on_both_engines`], which
//! runs a test case on each.

use std::sync::Arc;

use toolhost_store::{PgStore, SledStore, Store};

use crate::PgCluster;

/// One temporary sled store.
pub async fn sled() -> Vec<Arc<dyn Store>> {
    vec![Arc::new(SledStore::temporary().unwrap())]
}

/// Two stores on one fresh database of the shared test cluster: two nodes.
pub async fn postgres() -> Vec<Arc<dyn Store>> {
    let cluster = tokio::task::spawn_blocking(PgCluster::shared)
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("cannot run the PostgreSQL store tests: {e}"));
    let url = cluster.fresh_url().await.unwrap();
    let mut nodes: Vec<Arc<dyn Store>> = Vec::new();
    for _ in 0..2 {
        nodes.push(Arc::new(PgStore::connect(&url).await.unwrap()));
    }
    nodes
}

/// For each `case` (an `async fn(Vec<Arc<dyn Store>>)` of the calling module), a test on sled
/// (`sled::case`) and one on PostgreSQL (`postgres::case`).
#[macro_export]
macro_rules! on_both_engines {
    ($($case:ident),+ $(,)?) => {
        mod sled {$(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() { super::$case($crate::test_stores::sled().await).await; }
        )+}
        mod postgres {$(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                super::$case($crate::test_stores::postgres().await).await;
            }
        )+}
    };
}
