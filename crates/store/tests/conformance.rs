//! The behaviour every [`Store`] engine must have, as one suite of cases run against each
//! engine: sled in process and PostgreSQL on a throwaway cluster ([`PgCluster`]). Domains are
//! written against the trait, so an engine that disagrees with sled (the reference) on any of
//! these would change what the service does depending on how it is deployed.
//!
//! Each case is an `async fn(Arc<dyn Store>)`; `engine_suite!` turns the list of cases into one
//! `#[tokio::test]` per case and engine (`sled::*`, `postgres::*`). The PostgreSQL-only tests at the end cover what sled has
//! no counterpart for: several nodes, outages, migrations and the change table.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::time::timeout;

use toolhost_store::{
    Batch, Change, PgOptions, PgStore, SledStore, Store, StoreError, StoreResult, Tree,
};
use toolhost_testkit::PgCluster;

type Shared = Arc<dyn Store>;

/// An engine under test.
struct Engine {
    store: Shared,
}

impl Engine {
    async fn finish(self) {
        self.store.close().await.expect("close");
    }
}

async fn sled() -> Engine {
    Engine {
        store: Arc::new(SledStore::temporary().expect("temporary sled store")),
    }
}

/// A `PgStore` on an empty schema of its own in this process's shared cluster.
async fn postgres() -> Engine {
    let url = fresh_url().await;
    let store = PgStore::connect(&url).await.expect("connect");
    Engine {
        store: Arc::new(store),
    }
}

/// A URL to an empty store in the shared cluster; fails the test (never skips it) when
/// PostgreSQL is not installed.
async fn fresh_url() -> String {
    let cluster = tokio::task::spawn_blocking(PgCluster::shared)
        .await
        .expect("cluster start panicked")
        .unwrap_or_else(|e| panic!("cannot run the PostgreSQL store tests: {e}"));
    cluster.fresh_url().await.expect("a fresh schema")
}

/// A cluster of the test's own, for tests that stop it.
async fn own_cluster() -> PgCluster {
    tokio::task::spawn_blocking(PgCluster::create)
        .await
        .expect("cluster start panicked")
        .unwrap_or_else(|e| panic!("cannot run the PostgreSQL store tests: {e}"))
}

macro_rules! engine_suite {
    ($engine:ident: $($case:ident),+ $(,)?) => {
        mod $engine {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let engine = super::$engine().await;
                    super::$case(Arc::clone(&engine.store)).await;
                    engine.finish().await;
                }
            )+
            use std::sync::Arc;
        }
    };
}

macro_rules! every_engine {
    ($($engine:ident),+) => {$(
        engine_suite!($engine:
            get_put_delete,
            batch_is_all_or_nothing,
            staged_batches_are_visible_at_once_and_all_or_nothing,
            conditions_report_the_first_failing_index,
            later_writes_to_a_key_win_within_a_batch,
            scans_page_in_both_directions,
            scans_handle_0x00_and_0xff_bytes,
            empty_prefix_scans_the_whole_tree,
            scan_bounds_beyond_the_prefix,
            concurrent_claims_have_exactly_one_winner,
            concurrent_compare_and_swap_loses_no_update,
            single_key_batches_keep_their_conditions,
            large_values_round_trip,
            watched_writes_are_published_once,
        );
    )+};
}

every_engine!(sled, postgres);

async fn get(s: &Shared, tree: Tree, key: &[u8]) -> Option<Vec<u8>> {
    s.get(tree, key).await.expect("get")
}

fn keys(entries: Vec<(Vec<u8>, Vec<u8>)>) -> Vec<Vec<u8>> {
    entries.into_iter().map(|(k, _)| k).collect()
}

fn strings(entries: Vec<(Vec<u8>, Vec<u8>)>) -> Vec<String> {
    keys(entries)
        .into_iter()
        .map(|k| String::from_utf8(k).expect("utf-8 key"))
        .collect()
}

async fn get_put_delete(s: Shared) {
    assert_eq!(get(&s, Tree::Meta, b"k").await, None);
    s.put(Tree::Meta, b"k", b"v1").await.unwrap();
    assert_eq!(get(&s, Tree::Meta, b"k").await.as_deref(), Some(&b"v1"[..]));
    s.put(Tree::Meta, b"k", b"v2").await.unwrap();
    assert_eq!(get(&s, Tree::Meta, b"k").await.as_deref(), Some(&b"v2"[..]));
    // Trees are separate key spaces.
    assert_eq!(get(&s, Tree::Logs, b"k").await, None);
    assert!(!s.delete(Tree::Logs, b"k").await.unwrap());
    assert!(s.delete(Tree::Meta, b"k").await.unwrap());
    assert!(!s.delete(Tree::Meta, b"k").await.unwrap());
    assert_eq!(get(&s, Tree::Meta, b"k").await, None);
    // Empty keys and values, and every byte value, are ordinary data.
    s.put(Tree::Meta, b"", b"").await.unwrap();
    assert_eq!(get(&s, Tree::Meta, b"").await, Some(Vec::new()));
    let all_bytes: Vec<u8> = (0..=255).collect();
    s.put(Tree::Meta, &all_bytes, &all_bytes).await.unwrap();
    assert_eq!(
        get(&s, Tree::Meta, &all_bytes).await,
        Some(all_bytes.clone())
    );
    // Watched trees behave the same.
    s.put(Tree::Endpoints, b"e", b"1").await.unwrap();
    assert_eq!(
        get(&s, Tree::Endpoints, b"e").await.as_deref(),
        Some(&b"1"[..])
    );
    assert!(s.delete(Tree::Endpoints, b"e").await.unwrap());
    assert!(!s.delete(Tree::Endpoints, b"e").await.unwrap());
}

async fn batch_is_all_or_nothing(s: Shared) {
    s.put(Tree::Nonces, b"n1", b"used").await.unwrap();
    let err = s
        .apply(
            Batch::new()
                .put(Tree::Receipts, b"r1".to_vec(), b"x".to_vec())
                .put(Tree::Endpoints, b"e1".to_vec(), b"x".to_vec())
                .require_absent(Tree::Nonces, b"n1".to_vec()),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::ConditionFailed(0)), "{err:?}");
    assert_eq!(get(&s, Tree::Receipts, b"r1").await, None);
    assert_eq!(get(&s, Tree::Endpoints, b"e1").await, None);

    s.apply(
        Batch::new()
            .require_absent(Tree::Nonces, b"n2".to_vec())
            .put(Tree::Nonces, b"n2".to_vec(), b"used".to_vec())
            .put(Tree::Receipts, b"r2".to_vec(), b"y".to_vec())
            .put(Tree::Endpoints, b"e2".to_vec(), b"z".to_vec())
            .delete(Tree::Nonces, b"n1".to_vec()),
    )
    .await
    .unwrap();
    assert_eq!(
        get(&s, Tree::Nonces, b"n2").await.as_deref(),
        Some(&b"used"[..])
    );
    assert_eq!(
        get(&s, Tree::Receipts, b"r2").await.as_deref(),
        Some(&b"y"[..])
    );
    assert_eq!(
        get(&s, Tree::Endpoints, b"e2").await.as_deref(),
        Some(&b"z"[..])
    );
    assert_eq!(get(&s, Tree::Nonces, b"n1").await, None);

    // Empty batches and condition-only batches write nothing.
    s.apply(Batch::new()).await.unwrap();
    s.apply(Batch::new().require_absent(Tree::Nonces, b"n3".to_vec()))
        .await
        .unwrap();
    assert_eq!(get(&s, Tree::Nonces, b"n3").await, None);
}

/// `apply_staged` is `apply` in two steps: the batch is visible when the first step returns,
/// and a failed condition still writes nothing.
async fn staged_batches_are_visible_at_once_and_all_or_nothing(s: Shared) {
    let batch = Batch::new()
        .require_absent(Tree::Meta, b"s1".to_vec())
        .put(Tree::Meta, b"s1".to_vec(), b"one".to_vec())
        .put(Tree::Endpoints, b"s2".to_vec(), b"two".to_vec());
    let mut changes = s.changes();
    let durable = s.apply_staged(batch).await.expect("applied");
    assert_eq!(
        get(&s, Tree::Meta, b"s1").await.as_deref(),
        Some(&b"one"[..])
    );
    assert_eq!(
        get(&s, Tree::Endpoints, b"s2").await.as_deref(),
        Some(&b"two"[..])
    );
    durable.await.expect("durable");
    // The watched write is published once it is durable.
    assert_eq!(receive(&mut changes, 1).await, [endpoint_change("s2")]);
    let refused = Batch::new().require_absent(Tree::Meta, b"s1".to_vec()).put(
        Tree::Meta,
        b"s3".to_vec(),
        b"three".to_vec(),
    );
    let err = s.apply_staged(refused).await.err().expect("refused");
    assert!(matches!(err, StoreError::ConditionFailed(0)), "{err:?}");
    assert_eq!(get(&s, Tree::Meta, b"s3").await, None);
    // Nothing to apply: durable at once.
    s.apply_staged(Batch::new())
        .await
        .expect("empty")
        .await
        .unwrap();
}

async fn conditions_report_the_first_failing_index(s: Shared) {
    s.put(Tree::Credits, b"a", b"1").await.unwrap();
    let err = s
        .apply(
            Batch::new()
                .require_absent(Tree::Credits, b"x".to_vec())
                .require_equals(Tree::Credits, b"a".to_vec(), Some(b"1".to_vec()))
                .require_equals(Tree::Credits, b"y".to_vec(), None)
                .require_equals(Tree::Credits, b"a".to_vec(), Some(b"2".to_vec()))
                .require_absent(Tree::Credits, b"a".to_vec())
                .put(Tree::Credits, b"a".to_vec(), b"3".to_vec()),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::ConditionFailed(3)), "{err:?}");
    assert_eq!(
        get(&s, Tree::Credits, b"a").await.as_deref(),
        Some(&b"1"[..])
    );

    // `Equals(None)` means "absent"; it fails on a present key.
    let err = s
        .apply(Batch::new().require_equals(Tree::Credits, b"a".to_vec(), None))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::ConditionFailed(0)), "{err:?}");
    // A condition on one tree is not satisfied by the same key in another.
    let err = s
        .apply(
            Batch::new()
                .require_absent(Tree::Ledger, b"a".to_vec())
                .require_equals(Tree::Ledger, b"a".to_vec(), Some(b"1".to_vec())),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::ConditionFailed(1)), "{err:?}");
    // An empty value is a value, not absence.
    s.put(Tree::Credits, b"empty", b"").await.unwrap();
    let err = s
        .apply(Batch::new().require_absent(Tree::Credits, b"empty".to_vec()))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::ConditionFailed(0)), "{err:?}");
    s.apply(Batch::new().require_equals(Tree::Credits, b"empty".to_vec(), Some(Vec::new())))
        .await
        .unwrap();
    // Compare-and-swap on a deleted key.
    s.delete(Tree::Credits, b"a").await.unwrap();
    let err = s
        .apply(
            Batch::new()
                .require_equals(Tree::Credits, b"a".to_vec(), Some(b"1".to_vec()))
                .put(Tree::Credits, b"a".to_vec(), b"2".to_vec()),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::ConditionFailed(0)), "{err:?}");
    assert_eq!(get(&s, Tree::Credits, b"a").await, None);
}

async fn later_writes_to_a_key_win_within_a_batch(s: Shared) {
    s.put(Tree::Meta, b"j", b"old").await.unwrap();
    s.apply(
        Batch::new()
            // Conditions see the state before the batch, not its own writes.
            .require_absent(Tree::Meta, b"k".to_vec())
            .require_equals(Tree::Meta, b"j".to_vec(), Some(b"old".to_vec()))
            .put(Tree::Meta, b"k".to_vec(), b"1".to_vec())
            .delete(Tree::Meta, b"k".to_vec())
            .delete(Tree::Meta, b"j".to_vec())
            .put(Tree::Meta, b"j".to_vec(), b"new".to_vec())
            .put(Tree::Meta, b"m".to_vec(), b"1".to_vec())
            .put(Tree::Meta, b"m".to_vec(), b"2".to_vec())
            .put(Tree::Endpoints, b"e".to_vec(), b"1".to_vec())
            .delete(Tree::Endpoints, b"e".to_vec()),
    )
    .await
    .unwrap();
    assert_eq!(get(&s, Tree::Meta, b"k").await, None);
    assert_eq!(
        get(&s, Tree::Meta, b"j").await.as_deref(),
        Some(&b"new"[..])
    );
    assert_eq!(get(&s, Tree::Meta, b"m").await.as_deref(), Some(&b"2"[..]));
    assert_eq!(get(&s, Tree::Endpoints, b"e").await, None);
}

async fn scans_page_in_both_directions(s: Shared) {
    for k in ["a/1", "a/2", "a/3", "a/4", "a/5", "b/1", "a"] {
        s.put(Tree::Logs, k.as_bytes(), k.as_bytes()).await.unwrap();
    }
    s.put(Tree::Events, b"a/0", b"other tree").await.unwrap();
    let page = s.scan_prefix(Tree::Logs, b"a/", None, 2).await.unwrap();
    assert_eq!(page[0], (b"a/1".to_vec(), b"a/1".to_vec()));
    assert_eq!(strings(page), ["a/1", "a/2"]);
    assert_eq!(
        strings(
            s.scan_prefix(Tree::Logs, b"a/", Some(b"a/2"), 2)
                .await
                .unwrap()
        ),
        ["a/3", "a/4"]
    );
    assert_eq!(
        strings(
            s.scan_prefix(Tree::Logs, b"a/", Some(b"a/4"), 10)
                .await
                .unwrap()
        ),
        ["a/5"]
    );
    assert!(s
        .scan_prefix(Tree::Logs, b"a/", Some(b"a/5"), 10)
        .await
        .unwrap()
        .is_empty());
    assert!(s
        .scan_prefix(Tree::Logs, b"a/", None, 0)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        strings(s.scan_prefix_rev(Tree::Logs, b"a/", None, 2).await.unwrap()),
        ["a/5", "a/4"]
    );
    assert_eq!(
        strings(
            s.scan_prefix_rev(Tree::Logs, b"a/", Some(b"a/4"), 2)
                .await
                .unwrap()
        ),
        ["a/3", "a/2"]
    );
    assert_eq!(
        strings(
            s.scan_prefix_rev(Tree::Logs, b"a/", Some(b"a/2"), 10)
                .await
                .unwrap()
        ),
        ["a/1"]
    );
    assert!(s
        .scan_prefix_rev(Tree::Logs, b"a/", Some(b"a/1"), 10)
        .await
        .unwrap()
        .is_empty());
    assert!(s
        .scan_prefix_rev(Tree::Logs, b"a/", None, 0)
        .await
        .unwrap()
        .is_empty());
    // The prefix "a" covers "a" itself and everything under "a/".
    assert_eq!(
        strings(s.scan_prefix(Tree::Logs, b"a", None, 100).await.unwrap()),
        ["a", "a/1", "a/2", "a/3", "a/4", "a/5"]
    );
    // Paging forward and backward with a page size of 1 visits every key once.
    let mut forward = Vec::new();
    let mut after: Option<Vec<u8>> = None;
    while let Some((k, _)) = s
        .scan_prefix(Tree::Logs, b"", after.as_deref(), 1)
        .await
        .unwrap()
        .pop()
    {
        forward.push(k.clone());
        after = Some(k);
    }
    let mut backward = Vec::new();
    let mut before: Option<Vec<u8>> = None;
    while let Some((k, _)) = s
        .scan_prefix_rev(Tree::Logs, b"", before.as_deref(), 1)
        .await
        .unwrap()
        .pop()
    {
        backward.push(k.clone());
        before = Some(k);
    }
    backward.reverse();
    assert_eq!(forward.len(), 7);
    assert_eq!(forward, backward);
}

async fn scans_handle_0x00_and_0xff_bytes(s: Shared) {
    let stored: [&[u8]; 14] = [
        &[],
        &[0x00],
        &[0x00, 0x00],
        &[0x01],
        &[0x01, 0xfe, 0xff],
        &[0x01, 0xff],
        &[0x01, 0xff, 0x00],
        &[0x01, 0xff, 0xff],
        &[0x01, 0xff, 0xff, 0xff],
        &[0x02],
        &[0x02, 0x00],
        &[0xff],
        &[0xff, 0x00],
        &[0xff, 0xff],
    ];
    for k in stored {
        s.put(Tree::HandlerKv, k, b"v").await.unwrap();
    }
    s.put(Tree::HandlerKv, &[0xff, 0xff, 0x01], b"v")
        .await
        .unwrap();
    let scan = |prefix: &'static [u8]| {
        let s = Arc::clone(&s);
        async move {
            let fwd = keys(
                s.scan_prefix(Tree::HandlerKv, prefix, None, 100)
                    .await
                    .unwrap(),
            );
            let mut rev = keys(
                s.scan_prefix_rev(Tree::HandlerKv, prefix, None, 100)
                    .await
                    .unwrap(),
            );
            rev.reverse();
            assert_eq!(fwd, rev, "reverse scan of {prefix:x?} disagrees");
            fwd
        }
    };
    assert_eq!(
        scan(&[0x01, 0xff]).await,
        [
            vec![0x01, 0xff],
            vec![0x01, 0xff, 0x00],
            vec![0x01, 0xff, 0xff],
            vec![0x01, 0xff, 0xff, 0xff]
        ]
    );
    assert_eq!(
        scan(&[0xff]).await,
        [
            vec![0xff],
            vec![0xff, 0x00],
            vec![0xff, 0xff],
            vec![0xff, 0xff, 0x01]
        ]
    );
    assert_eq!(
        scan(&[0xff, 0xff]).await,
        [vec![0xff, 0xff], vec![0xff, 0xff, 0x01]]
    );
    assert_eq!(scan(&[0x00]).await, [vec![0x00], vec![0x00, 0x00]]);
    assert_eq!(scan(&[0x00, 0x00]).await, [vec![0x00, 0x00]]);
    assert_eq!(scan(&[0x02]).await, [vec![0x02], vec![0x02, 0x00]]);
    assert!(scan(&[0x03]).await.is_empty());
    // Bounds containing the extreme bytes.
    assert_eq!(
        keys(
            s.scan_prefix(
                Tree::HandlerKv,
                &[0x01, 0xff],
                Some(&[0x01, 0xff, 0x00]),
                10
            )
            .await
            .unwrap()
        ),
        [vec![0x01, 0xff, 0xff], vec![0x01, 0xff, 0xff, 0xff]]
    );
    assert_eq!(
        keys(
            s.scan_prefix_rev(Tree::HandlerKv, &[0xff], Some(&[0xff, 0xff]), 10)
                .await
                .unwrap()
        ),
        [vec![0xff, 0x00], vec![0xff]]
    );
    assert_eq!(
        keys(
            s.scan_prefix(Tree::HandlerKv, &[0xff, 0xff], Some(&[0xff, 0xff]), 10)
                .await
                .unwrap()
        ),
        [vec![0xff, 0xff, 0x01]]
    );
}

async fn empty_prefix_scans_the_whole_tree(s: Shared) {
    let stored: [&[u8]; 5] = [&[], &[0x00], b"a", b"b/1", &[0xff, 0xff]];
    for k in stored {
        s.put(Tree::Secrets, k, b"v").await.unwrap();
    }
    s.put(Tree::Quotes, b"elsewhere", b"v").await.unwrap();
    let all: Vec<Vec<u8>> = stored.iter().map(|k| k.to_vec()).collect();
    assert_eq!(
        keys(s.scan_prefix(Tree::Secrets, b"", None, 100).await.unwrap()),
        all
    );
    let mut reversed = all.clone();
    reversed.reverse();
    assert_eq!(
        keys(
            s.scan_prefix_rev(Tree::Secrets, b"", None, 100)
                .await
                .unwrap()
        ),
        reversed
    );
    assert_eq!(
        keys(
            s.scan_prefix(Tree::Secrets, b"", Some(b"a"), 100)
                .await
                .unwrap()
        ),
        [b"b/1".to_vec(), vec![0xff, 0xff]]
    );
    assert_eq!(
        keys(
            s.scan_prefix(Tree::Secrets, b"", Some(b""), 2)
                .await
                .unwrap()
        ),
        [vec![0x00], b"a".to_vec()]
    );
    assert_eq!(
        keys(
            s.scan_prefix_rev(Tree::Secrets, b"", Some(b"a"), 100)
                .await
                .unwrap()
        ),
        [vec![0x00], vec![]]
    );
    assert!(s
        .scan_prefix_rev(Tree::Secrets, b"", Some(b""), 100)
        .await
        .unwrap()
        .is_empty());
}

async fn scan_bounds_beyond_the_prefix(s: Shared) {
    for k in ["a1", "a2", "b1", "b2", "c1"] {
        s.put(Tree::Events, k.as_bytes(), b"v").await.unwrap();
    }
    let fwd = |after: &'static str| {
        let s = Arc::clone(&s);
        async move {
            strings(
                s.scan_prefix(Tree::Events, b"b", Some(after.as_bytes()), 10)
                    .await
                    .unwrap(),
            )
        }
    };
    let rev = |before: &'static str| {
        let s = Arc::clone(&s);
        async move {
            strings(
                s.scan_prefix_rev(Tree::Events, b"b", Some(before.as_bytes()), 10)
                    .await
                    .unwrap(),
            )
        }
    };
    // `after` below the prefix's range starts at its beginning; above it, finds nothing.
    assert_eq!(fwd("a9").await, ["b1", "b2"]);
    assert_eq!(fwd("").await, ["b1", "b2"]);
    assert_eq!(fwd("b").await, ["b1", "b2"]);
    assert_eq!(fwd("b1").await, ["b2"]);
    assert!(fwd("b2").await.is_empty());
    assert!(fwd("c").await.is_empty());
    // `before` above the range ends at its end; below it, finds nothing.
    assert_eq!(rev("z").await, ["b2", "b1"]);
    assert_eq!(rev("c").await, ["b2", "b1"]);
    assert_eq!(rev("b2").await, ["b1"]);
    assert!(rev("b1").await.is_empty());
    assert!(rev("b").await.is_empty());
    assert!(rev("a").await.is_empty());
    assert!(rev("").await.is_empty());
}

/// The one claimant whose batch applied; every other must have lost on its first condition.
async fn only_winner(tasks: Vec<tokio::task::JoinHandle<(usize, StoreResult<()>)>>) -> usize {
    let mut winners = Vec::new();
    for task in tasks {
        let (i, result) = task.await.unwrap();
        match result {
            Ok(()) => winners.push(i),
            Err(StoreError::ConditionFailed(0)) => {}
            Err(e) => panic!("claimant {i}: {e}"),
        }
    }
    assert_eq!(winners.len(), 1, "winners: {winners:?}");
    winners[0]
}

async fn concurrent_claims_have_exactly_one_winner(s: Shared) {
    const CLAIMANTS: usize = 32;
    let tasks: Vec<_> = (0..CLAIMANTS)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let receipt = format!("r-{i}");
                let result = s
                    .apply(
                        Batch::new()
                            .require_absent(Tree::Nonces, b"nonce".to_vec())
                            .put(
                                Tree::Nonces,
                                b"nonce".to_vec(),
                                receipt.clone().into_bytes(),
                            )
                            .put(Tree::Receipts, receipt.into_bytes(), b"paid".to_vec()),
                    )
                    .await;
                (i, result)
            })
        })
        .collect();
    let winner = only_winner(tasks).await;
    let winner = format!("r-{winner}");
    assert_eq!(
        get(&s, Tree::Nonces, b"nonce").await,
        Some(winner.clone().into_bytes())
    );
    let receipts = s
        .scan_prefix(Tree::Receipts, b"r-", None, 100)
        .await
        .unwrap();
    assert_eq!(strings(receipts), [winner]);
}

async fn concurrent_compare_and_swap_loses_no_update(s: Shared) {
    const TASKS: u64 = 16;
    const INCREMENTS: u64 = 20;
    s.put(Tree::Credits, b"counter", b"0").await.unwrap();
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let mut lost_races = 0u64;
                for _ in 0..INCREMENTS {
                    loop {
                        let current = s.get(Tree::Credits, b"counter").await.unwrap().unwrap();
                        let n: u64 = String::from_utf8(current.clone()).unwrap().parse().unwrap();
                        let next = (n + 1).to_string().into_bytes();
                        let cas = Batch::new()
                            .require_equals(Tree::Credits, b"counter".to_vec(), Some(current))
                            .put(Tree::Credits, b"counter".to_vec(), next);
                        match s.apply(cas).await {
                            Ok(()) => break,
                            Err(StoreError::ConditionFailed(0)) => lost_races += 1,
                            Err(e) => panic!("compare-and-swap: {e}"),
                        }
                    }
                }
                lost_races
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let total = get(&s, Tree::Credits, b"counter").await.unwrap();
    assert_eq!(
        String::from_utf8(total).unwrap(),
        (TASKS * INCREMENTS).to_string()
    );
}

/// One write conditioned on its own key (a receipt, a nonce claim, a balance): engines may
/// apply it without a transaction (sled does), with the same all-or-nothing result, also when
/// such batches race multi-key batches on the same key.
async fn single_key_batches_keep_their_conditions(s: Shared) {
    let key = || b"k".to_vec();
    let put = |v: &str| Batch::new().put(Tree::Credits, key(), v.as_bytes().to_vec());
    s.apply(put("1").require_absent(Tree::Credits, key()))
        .await
        .unwrap();
    let refused = s.apply(put("2").require_absent(Tree::Credits, key())).await;
    assert!(
        matches!(refused, Err(StoreError::ConditionFailed(0))),
        "{refused:?}"
    );
    let refused = s
        .apply(put("2").require_equals(Tree::Credits, key(), None))
        .await;
    assert!(
        matches!(refused, Err(StoreError::ConditionFailed(0))),
        "{refused:?}"
    );
    let stale = Batch::new()
        .require_equals(Tree::Credits, key(), Some(b"0".to_vec()))
        .delete(Tree::Credits, key());
    assert!(matches!(
        s.apply(stale).await,
        Err(StoreError::ConditionFailed(0))
    ));
    assert_eq!(get(&s, Tree::Credits, b"k").await, Some(b"1".to_vec()));
    s.apply(
        Batch::new()
            .require_equals(Tree::Credits, key(), Some(b"1".to_vec()))
            .delete(Tree::Credits, key()),
    )
    .await
    .unwrap();
    assert_eq!(get(&s, Tree::Credits, b"k").await, None);
    s.apply(put("3").require_equals(Tree::Credits, key(), None))
        .await
        .unwrap();
    s.apply(put("4")).await.unwrap();
    assert_eq!(get(&s, Tree::Credits, b"k").await, Some(b"4".to_vec()));
    s.apply(Batch::new().delete(Tree::Credits, key()))
        .await
        .unwrap();
    assert_eq!(get(&s, Tree::Credits, b"k").await, None);

    // Single-key claims against claims that also write a second key: one winner in all.
    const CLAIMANTS: usize = 24;
    let tasks: Vec<_> = (0..CLAIMANTS)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let mut claim = Batch::new()
                    .require_absent(Tree::Nonces, b"race".to_vec())
                    .put(Tree::Nonces, b"race".to_vec(), i.to_string().into_bytes());
                if i % 2 == 1 {
                    claim = claim.put(Tree::Receipts, format!("race-{i}"), b"paid".to_vec());
                }
                (i, s.apply(claim).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await;
    assert_eq!(
        get(&s, Tree::Nonces, b"race").await,
        Some(winner.to_string().into_bytes())
    );
    let receipts = s
        .scan_prefix(Tree::Receipts, b"race-", None, 100)
        .await
        .unwrap();
    let expected: Vec<String> = (winner % 2 == 1)
        .then(|| format!("race-{winner}"))
        .into_iter()
        .collect();
    assert_eq!(strings(receipts), expected);
}

async fn large_values_round_trip(s: Shared) {
    let big: Vec<u8> = (0..1024 * 1024)
        .map(|i: u32| (i.wrapping_mul(31) >> 3) as u8)
        .collect();
    s.put(Tree::HandlerFiles, b"big", &big).await.unwrap();
    assert_eq!(
        get(&s, Tree::HandlerFiles, b"big").await.as_ref(),
        Some(&big)
    );
    let mut other = big.clone();
    other.reverse();
    s.apply(
        Batch::new()
            .require_equals(Tree::HandlerFiles, b"big".to_vec(), Some(big.clone()))
            .put(Tree::HandlerFiles, b"big".to_vec(), other.clone())
            .put(Tree::HandlerFiles, b"big2".to_vec(), big.clone()),
    )
    .await
    .unwrap();
    let scanned = s
        .scan_prefix(Tree::HandlerFiles, b"big", None, 10)
        .await
        .unwrap();
    assert_eq!(scanned, [(b"big".to_vec(), other), (b"big2".to_vec(), big)]);
}

/// Every committed write to a watched tree reaches the writer's own `changes()` exactly once
/// (once per key for a batch that writes a key twice); writes elsewhere and failed batches
/// publish nothing.
async fn watched_writes_are_published_once(s: Shared) {
    let mut changes = s.changes();
    s.put(Tree::Endpoints, b"e1", b"v").await.unwrap();
    s.put(Tree::Logs, b"not watched", b"v").await.unwrap();
    s.delete(Tree::Endpoints, b"e2").await.unwrap();
    let _ = s
        .apply(
            Batch::new()
                .require_absent(Tree::Endpoints, b"e1".to_vec())
                .put(Tree::Endpoints, b"failed".to_vec(), b"v".to_vec()),
        )
        .await
        .unwrap_err();
    s.apply(
        Batch::new()
            .put(Tree::Endpoints, b"e3".to_vec(), b"v".to_vec())
            .put(Tree::Receipts, b"not watched".to_vec(), b"v".to_vec())
            .delete(Tree::Endpoints, b"e4".to_vec())
            .put(Tree::Endpoints, b"e3".to_vec(), b"v2".to_vec()),
    )
    .await
    .unwrap();
    let expected: Vec<Change> = ["e1", "e2", "e3", "e4"]
        .into_iter()
        .map(endpoint_change)
        .collect();
    assert_eq!(receive(&mut changes, expected.len()).await, expected);
    // Nothing else: no echo of the writer's own writes (the PostgreSQL poller reads them back),
    // nothing from the unwatched trees or the failed batch.
    assert_quiet(&mut changes, Duration::from_millis(700)).await;
}

fn endpoint_change(key: &str) -> Change {
    Change {
        tree: Tree::Endpoints,
        key: key.as_bytes().to_vec(),
    }
}

/// The next `n` changes, each within a second of the previous one.
async fn receive(changes: &mut tokio::sync::broadcast::Receiver<Change>, n: usize) -> Vec<Change> {
    let mut got = Vec::new();
    while got.len() < n {
        match timeout(Duration::from_secs(1), changes.recv()).await {
            Ok(Ok(change)) => got.push(change),
            Ok(Err(e)) => panic!("change feed: {e}; got {got:?}"),
            Err(_) => panic!("no change within 1 s; got {got:?}, expected {n}"),
        }
    }
    got
}

async fn assert_quiet(changes: &mut tokio::sync::broadcast::Receiver<Change>, wait: Duration) {
    if let Ok(extra) = timeout(wait, changes.recv()).await {
        panic!("unexpected change: {extra:?}");
    }
}

// --- PostgreSQL only ---------------------------------------------------------------------------

async fn sql(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("direct connection");
    tokio::spawn(connection);
    client
}

async fn count(client: &tokio_postgres::Client, query: &str) -> i64 {
    client.query_one(query, &[]).await.unwrap().get(0)
}

/// A node's own writes are published once each even when its poller reads them back before
/// the writer has published them (a poller that polls all the time makes that likely).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_own_writes_are_published_once_against_an_eager_poller() {
    let url = fresh_url().await;
    let options = PgOptions {
        poll_interval: Duration::from_millis(1),
        ..PgOptions::default()
    };
    let store = Arc::new(PgStore::connect_with(&url, options).await.unwrap());
    let mut changes = store.changes();
    const WRITERS: usize = 4;
    const EACH: usize = 40;
    let tasks: Vec<_> = (0..WRITERS)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in 0..EACH {
                    let key = format!("w{w}-{i}");
                    store
                        .put(Tree::Endpoints, key.as_bytes(), b"v")
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let mut seen = receive(&mut changes, WRITERS * EACH).await;
    assert_quiet(&mut changes, Duration::from_millis(300)).await;
    seen.sort_by(|a, b| a.key.cmp(&b.key));
    seen.dedup();
    assert_eq!(seen.len(), WRITERS * EACH, "every key once");
}

/// Another node sees a write to a watched tree within a second, in order; unwatched trees and
/// failed batches produce nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_changes_reach_other_nodes() {
    let url = fresh_url().await;
    let a = PgStore::connect(&url).await.unwrap();
    let b = PgStore::connect(&url).await.unwrap();
    let mut seen_by_b = b.changes();

    let written = Instant::now();
    a.put(Tree::Endpoints, b"e1", b"v").await.unwrap();
    assert_eq!(receive(&mut seen_by_b, 1).await, [endpoint_change("e1")]);
    assert!(written.elapsed() < Duration::from_secs(1));

    a.put(Tree::Logs, b"l", b"v").await.unwrap();
    a.apply(
        Batch::new()
            .put(Tree::Endpoints, b"e2".to_vec(), b"v".to_vec())
            .put(Tree::Meta, b"m".to_vec(), b"v".to_vec())
            .delete(Tree::Endpoints, b"e3".to_vec())
            .put(Tree::Endpoints, b"e4".to_vec(), b"v".to_vec()),
    )
    .await
    .unwrap();
    a.apply(
        Batch::new()
            .require_absent(Tree::Endpoints, b"e2".to_vec())
            .put(Tree::Endpoints, b"never".to_vec(), b"v".to_vec()),
    )
    .await
    .unwrap_err();
    assert_eq!(
        receive(&mut seen_by_b, 3).await,
        ["e2", "e3", "e4"].map(endpoint_change)
    );
    // And the other way round.
    let mut seen_by_a = a.changes();
    b.delete(Tree::Endpoints, b"e1").await.unwrap();
    assert_eq!(receive(&mut seen_by_b, 1).await, [endpoint_change("e1")]);
    assert_eq!(receive(&mut seen_by_a, 1).await, [endpoint_change("e1")]);
    assert_quiet(&mut seen_by_a, Duration::from_millis(100)).await;
    assert_quiet(&mut seen_by_b, Duration::from_millis(700)).await;
    a.close().await.unwrap();
    b.close().await.unwrap();
}

/// While the database is down every operation fails promptly with `Unavailable`; when it comes
/// back the same `PgStore` works again (the pool reconnects), committed writes survived the
/// crash, and the change feed resumes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_outage_is_unavailable_then_recovers() {
    let cluster = own_cluster().await;
    let options = PgOptions {
        wait_timeout: Duration::from_secs(2),
        ..PgOptions::default()
    };
    let store = PgStore::connect_with(&cluster.url(), options)
        .await
        .unwrap();
    let mut changes = store.changes();
    store
        .put(Tree::Receipts, b"before", b"committed")
        .await
        .unwrap();
    store.put(Tree::Endpoints, b"e0", b"v").await.unwrap();
    receive(&mut changes, 1).await;

    cluster.stop().unwrap();
    let down = Instant::now();
    // Reads first: a read on a connection that died under it is unavailable as well.
    let unavailable = |r: Result<(), StoreError>, what: &str| match r {
        Err(StoreError::Unavailable(_)) => {}
        other => panic!("{what} while the database is down: {other:?}"),
    };
    unavailable(
        store.get(Tree::Receipts, b"before").await.map(|_| ()),
        "get",
    );
    unavailable(
        store
            .scan_prefix(Tree::Receipts, b"", None, 10)
            .await
            .map(|_| ()),
        "scan",
    );
    unavailable(store.put(Tree::Receipts, b"during", b"x").await, "put");
    unavailable(
        store.delete(Tree::Receipts, b"before").await.map(|_| ()),
        "delete",
    );
    unavailable(
        store
            .apply(
                Batch::new()
                    .require_absent(Tree::Nonces, b"n".to_vec())
                    .put(Tree::Nonces, b"n".to_vec(), b"x".to_vec()),
            )
            .await,
        "apply",
    );
    unavailable(store.put(Tree::Endpoints, b"e1", b"x").await, "watched put");
    assert!(
        down.elapsed() < Duration::from_secs(4),
        "failing took {:?}: callers should get a prompt 503",
        down.elapsed()
    );

    cluster.start().unwrap();
    // The same store, no reconnect call: the pool replaces its dead connections.
    let back = Instant::now();
    loop {
        match store.get(Tree::Receipts, b"before").await {
            Ok(value) => {
                assert_eq!(
                    value.as_deref(),
                    Some(&b"committed"[..]),
                    "lost in the crash"
                );
                break;
            }
            Err(StoreError::Unavailable(_)) if back.elapsed() < Duration::from_secs(10) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("after restart: {e}"),
        }
    }
    assert_eq!(store.get(Tree::Receipts, b"during").await.unwrap(), None);
    store.put(Tree::Receipts, b"after", b"x").await.unwrap();
    store
        .apply(
            Batch::new()
                .require_absent(Tree::Nonces, b"n".to_vec())
                .put(Tree::Nonces, b"n".to_vec(), b"x".to_vec()),
        )
        .await
        .unwrap();
    // The poller is back too: another node's write arrives.
    let other = PgStore::connect(&cluster.url()).await.unwrap();
    other.put(Tree::Endpoints, b"e2", b"v").await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match timeout(left, changes.recv()).await {
            Ok(Ok(change)) if change == endpoint_change("e2") => break,
            Ok(Ok(_)) => {}
            Ok(Err(e)) => panic!("change feed: {e}"),
            Err(_) => panic!("the change feed did not resume after the outage"),
        }
    }
    other.close().await.unwrap();
    store.close().await.unwrap();
    // After close, operations fail rather than hang.
    unavailable(
        store.put(Tree::Meta, b"closed", b"x").await,
        "put after close",
    );
}

/// Nodes starting together against an empty database all succeed, and each migration is
/// applied once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_concurrent_start_up_migrates_once() {
    let url = fresh_url().await;
    let starts: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { PgStore::connect(&url).await })
        })
        .collect();
    let mut stores = Vec::new();
    for start in starts {
        stores.push(start.await.unwrap().expect("concurrent start-up"));
    }
    let client = sql(&url).await;
    assert_eq!(
        count(&client, "SELECT count(*) FROM toolhost_migrations").await,
        1
    );
    assert_eq!(
        count(&client, "SELECT count(*) FROM toolhost_generations").await,
        Tree::ALL.iter().filter(|t| t.is_watched()).count() as i64
    );
    // A later start finds everything applied.
    stores.push(PgStore::connect(&url).await.unwrap());
    assert_eq!(
        count(&client, "SELECT count(*) FROM toolhost_migrations").await,
        1
    );
    for store in &stores {
        store.close().await.unwrap();
    }
}

/// Change rows past the retention window are deleted by a node's poller; a node starting later
/// begins at the current generation, not at what is left in the table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_old_changes_are_pruned() {
    let url = fresh_url().await;
    let writer = PgStore::connect(&url).await.unwrap();
    for key in ["e1", "e2", "e3"] {
        writer
            .put(Tree::Endpoints, key.as_bytes(), b"v")
            .await
            .unwrap();
    }
    writer.put(Tree::Logs, b"l", b"v").await.unwrap();
    let client = sql(&url).await;
    assert_eq!(
        count(&client, "SELECT count(*) FROM toolhost_changes").await,
        3
    );
    assert_eq!(
        count(
            &client,
            "SELECT gen FROM toolhost_generations WHERE tree = 'endpoints'"
        )
        .await,
        3
    );

    let pruner = PgStore::connect_with(
        &url,
        PgOptions {
            change_retention: Duration::ZERO,
            ..PgOptions::default()
        },
    )
    .await
    .unwrap();
    let mut seen = pruner.changes();
    let deadline = Instant::now() + Duration::from_secs(2);
    while count(&client, "SELECT count(*) FROM toolhost_changes").await > 0 {
        assert!(Instant::now() < deadline, "change rows were not pruned");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The pruner started after those writes, so it reports none of them; new ones it does.
    writer.put(Tree::Endpoints, b"e4", b"v").await.unwrap();
    assert_eq!(receive(&mut seen, 1).await, [endpoint_change("e4")]);
    writer.close().await.unwrap();
    pruner.close().await.unwrap();
}

/// Keys are stored as `bytea`, whose order must be sled's (unsigned bytewise, shorter first):
/// checked against the server directly, independent of the scan code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_orders_keys_bytewise() {
    let url = fresh_url().await;
    let store = PgStore::connect(&url).await.unwrap();
    let mut stored: Vec<Vec<u8>> = vec![
        vec![],
        vec![0x00],
        vec![0x7f],
        vec![0x80],
        vec![0xff],
        vec![0xff, 0x00],
        b"A".to_vec(),
        b"a".to_vec(),
        b"a\x00".to_vec(),
        b"ab".to_vec(),
        "é".as_bytes().to_vec(),
    ];
    for key in &stored {
        store.put(Tree::HandlerKv, key, b"v").await.unwrap();
    }
    stored.sort();
    let client = sql(&url).await;
    let rows = client
        .query(
            "SELECT key FROM toolhost_kv WHERE tree = 'handler_kv' ORDER BY key",
            &[],
        )
        .await
        .unwrap();
    let ordered: Vec<Vec<u8>> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(ordered, stored);
    assert_eq!(
        keys(
            store
                .scan_prefix(Tree::HandlerKv, b"", None, 100)
                .await
                .unwrap()
        ),
        stored
    );
    store.close().await.unwrap();
}
