//! The behaviour every [`Store`] engine must have, as one list of cases, each an
//! `async fn(Shared)`: the store crate's `tests/conformance.rs` runs every case against every
//! engine (sled in process, PostgreSQL on a throwaway cluster), and a new engine runs the same
//! list. Domains are written against the trait, so an engine that disagrees with sled (the
//! reference) on any of these would change what the service does depending on how it is
//! deployed. The helpers at the end are for engine-specific tests of change feeds.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::timeout;
use toolhost_store::events::first_id_at;
use toolhost_store::logs::FULL_PRUNE_EVERY;
use toolhost_store::{
    Batch, BuilderKeyRow, BuilderRow, BuilderUsageRow, Change, CreditHoldRow, CreditRow, DebtRow,
    EndpointRow, EventQuery, EventRow, HandlerEntryRow, HandlerSpace, HandlerUsageRow, LeafRow,
    LogRow, LogState, NonceRow, NonceState, PacketRow, PaidOutRow, PaymentIdRow, PayoutSettingsRow,
    QuoteRow, ReceiptRow, RefundRow, RevisionRow, RolloutTallyRow, SaleRow, SecretRow, Store,
    StoreError, StoreResult, Tree,
};

/// The store under test.
pub type Shared = Arc<dyn Store>;

pub async fn get(s: &Shared, tree: Tree, key: &[u8]) -> Option<Vec<u8>> {
    s.get(tree, key).await.expect("get")
}

pub fn keys(entries: Vec<(Vec<u8>, Vec<u8>)>) -> Vec<Vec<u8>> {
    entries.into_iter().map(|(k, _)| k).collect()
}

pub fn strings(entries: Vec<(Vec<u8>, Vec<u8>)>) -> Vec<String> {
    keys(entries)
        .into_iter()
        .map(|k| String::from_utf8(k).expect("utf-8 key"))
        .collect()
}

pub async fn get_put_delete(s: Shared) {
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

pub async fn many_keys_are_read_at_once_in_their_order(s: Shared) {
    assert_eq!(
        s.get_many(Tree::Ledger, &[]).await.unwrap(),
        Vec::<Option<Vec<u8>>>::new()
    );
    let all_bytes: Vec<u8> = (0..=255).collect();
    s.put(Tree::Ledger, b"a", b"1").await.unwrap();
    s.put(Tree::Ledger, b"c", b"").await.unwrap();
    s.put(Tree::Ledger, &all_bytes, &all_bytes).await.unwrap();
    // The same key in another tree is not this tree's.
    s.put(Tree::Meta, b"b", b"other tree").await.unwrap();
    let asked: Vec<Vec<u8>> = vec![
        b"c".to_vec(),
        b"b".to_vec(),
        all_bytes.clone(),
        b"a".to_vec(),
        b"c".to_vec(),
        Vec::new(),
    ];
    assert_eq!(
        s.get_many(Tree::Ledger, &asked).await.unwrap(),
        vec![
            Some(Vec::new()),
            None,
            Some(all_bytes.clone()),
            Some(b"1".to_vec()),
            Some(Vec::new()),
            None,
        ]
    );
    // A page's worth of keys, most of them absent.
    let many: Vec<Vec<u8>> = (0..toolhost_store::GET_MANY_KEYS)
        .map(|i| format!("k{i:04}").into_bytes())
        .collect();
    let mut batch = Batch::new();
    for key in many.iter().step_by(7) {
        batch = batch.put(Tree::Ledger, key.clone(), key.clone());
    }
    s.apply(batch).await.unwrap();
    let values = s.get_many(Tree::Ledger, &many).await.unwrap();
    for (i, (key, value)) in many.iter().zip(values).enumerate() {
        assert_eq!(value, (i % 7 == 0).then(|| key.clone()), "{i}");
    }
}

pub async fn batch_is_all_or_nothing(s: Shared) {
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
pub async fn staged_batches_are_visible_at_once_and_all_or_nothing(s: Shared) {
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

pub async fn conditions_report_the_first_failing_index(s: Shared) {
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

/// Conditions on keys the batch does not put: the keys are as the conditions found them after
/// the batch, whether it succeeded or failed (an engine that holds an absent key by inserting
/// it must take that back), and a delete of a key that had to be absent deleted nothing.
pub async fn conditions_leave_the_keys_they_name_as_they_were(s: Shared) {
    s.put(Tree::Credits, b"present", b"1").await.unwrap();
    s.apply(
        Batch::new()
            .require_absent(Tree::Credits, b"a".to_vec())
            .require_equals(Tree::Credits, b"b".to_vec(), None)
            .require_absent(Tree::Credits, b"a".to_vec())
            .require_equals(Tree::Credits, b"present".to_vec(), Some(b"1".to_vec()))
            .put(Tree::Credits, b"other".to_vec(), b"2".to_vec()),
    )
    .await
    .unwrap();
    let err = s
        .apply(
            Batch::new()
                .require_absent(Tree::Credits, b"c".to_vec())
                .require_absent(Tree::Credits, b"present".to_vec())
                .put(Tree::Credits, b"d".to_vec(), b"3".to_vec()),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::ConditionFailed(1)), "{err:?}");
    s.apply(
        Batch::new()
            .require_absent(Tree::Credits, b"e".to_vec())
            .delete(Tree::Credits, b"e".to_vec()),
    )
    .await
    .unwrap();
    let all = s.scan_prefix(Tree::Credits, b"", None, 100).await.unwrap();
    assert_eq!(strings(all), ["other", "present"]);
    assert!(!s.delete(Tree::Credits, b"a").await.unwrap());
}

/// An unsynced batch is a batch: its conditions hold or nothing is written, and it is
/// visible when it returns.
pub async fn unsynced_batches_keep_their_conditions(s: Shared) {
    let claim = |value: &[u8]| {
        Batch::new()
            .require_absent(Tree::Nonces, b"nonce".to_vec())
            .put(Tree::Nonces, b"nonce".to_vec(), value.to_vec())
            .put(Tree::PaymentIds, value.to_vec(), b"reserved".to_vec())
    };
    s.apply_unsynced(claim(b"first")).await.unwrap();
    assert_eq!(
        get(&s, Tree::Nonces, b"nonce").await.as_deref(),
        Some(&b"first"[..])
    );
    let err = s.apply_unsynced(claim(b"second")).await.unwrap_err();
    assert!(matches!(err, StoreError::ConditionFailed(0)), "{err:?}");
    assert_eq!(get(&s, Tree::PaymentIds, b"second").await, None);
    // Settled by a durable write that replaces it.
    s.apply(
        Batch::new()
            .require_equals(Tree::Nonces, b"nonce".to_vec(), Some(b"first".to_vec()))
            .put(Tree::Nonces, b"nonce".to_vec(), b"rcpt_1".to_vec()),
    )
    .await
    .unwrap();
    assert_eq!(
        get(&s, Tree::Nonces, b"nonce").await.as_deref(),
        Some(&b"rcpt_1"[..])
    );
}

pub async fn later_writes_to_a_key_win_within_a_batch(s: Shared) {
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

pub async fn scans_page_in_both_directions(s: Shared) {
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

pub async fn scans_handle_0x00_and_0xff_bytes(s: Shared) {
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

pub async fn empty_prefix_scans_the_whole_tree(s: Shared) {
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

pub async fn scan_bounds_beyond_the_prefix(s: Shared) {
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
pub async fn only_winner(tasks: Vec<tokio::task::JoinHandle<(usize, StoreResult<()>)>>) -> usize {
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

pub async fn concurrent_claims_have_exactly_one_winner(s: Shared) {
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

/// A batch of many keys over several trees, its conditions of both kinds interleaved (engines
/// may send each run of them as one statement): every key gets its own outcome, deletes report
/// what they found, and keys only required absent stay absent.
pub async fn wide_batches_keep_each_key_apart(s: Shared) {
    for i in 0..10 {
        s.put(Tree::Receipts, format!("old-{i}").as_bytes(), b"kept")
            .await
            .unwrap();
    }
    s.put(Tree::Credits, b"balance", b"5").await.unwrap();
    let mut batch = Batch::new()
        .require_absent(Tree::Receipts, b"new-a".to_vec())
        .require_equals(Tree::Credits, b"balance".to_vec(), Some(b"5".to_vec()))
        .require_absent(Tree::Nonces, b"n-1".to_vec())
        .require_absent(Tree::Logs, b"only-required".to_vec())
        .require_absent(Tree::Receipts, b"new-b".to_vec())
        .put(Tree::Receipts, b"new-a".to_vec(), b"a".to_vec())
        .put(Tree::Receipts, b"new-b".to_vec(), b"b".to_vec())
        .put(Tree::Nonces, b"n-1".to_vec(), b"spent".to_vec())
        .put(Tree::Credits, b"balance".to_vec(), b"4".to_vec());
    for i in 0..40 {
        batch = batch.put(
            Tree::Ledger,
            format!("l-{i:02}").into_bytes(),
            vec![i as u8; 3],
        );
    }
    for i in (0..10).step_by(2) {
        batch = batch.delete(Tree::Receipts, format!("old-{i}").into_bytes());
    }
    batch = batch.delete(Tree::Receipts, b"never-there".to_vec());
    s.apply(batch).await.unwrap();

    assert_eq!(get(&s, Tree::Receipts, b"new-a").await, Some(b"a".to_vec()));
    assert_eq!(get(&s, Tree::Receipts, b"new-b").await, Some(b"b".to_vec()));
    assert_eq!(get(&s, Tree::Nonces, b"n-1").await, Some(b"spent".to_vec()));
    assert_eq!(
        get(&s, Tree::Credits, b"balance").await,
        Some(b"4".to_vec())
    );
    assert_eq!(get(&s, Tree::Logs, b"only-required").await, None);
    let ledger = s.scan_prefix(Tree::Ledger, b"l-", None, 100).await.unwrap();
    assert_eq!(ledger.len(), 40);
    assert!(ledger
        .iter()
        .enumerate()
        .all(|(i, (_, v))| *v == vec![i as u8; 3]));
    let old = s
        .scan_prefix(Tree::Receipts, b"old-", None, 100)
        .await
        .unwrap();
    assert_eq!(strings(old), ["old-1", "old-3", "old-5", "old-7", "old-9"]);

    // The same shape again: the claimed keys are present now, so the third condition (the
    // first claim of a present key, after a read that holds) is the one that fails, and
    // nothing of the batch lands.
    let again = Batch::new()
        .require_equals(Tree::Credits, b"balance".to_vec(), Some(b"4".to_vec()))
        .require_absent(Tree::Logs, b"only-required".to_vec())
        .require_absent(Tree::Receipts, b"new-a".to_vec())
        .put(Tree::Credits, b"balance".to_vec(), b"3".to_vec())
        .delete(Tree::Receipts, b"old-1".to_vec());
    assert!(matches!(
        s.apply(again).await,
        Err(StoreError::ConditionFailed(2))
    ));
    assert_eq!(
        get(&s, Tree::Credits, b"balance").await,
        Some(b"4".to_vec())
    );
    assert_eq!(
        get(&s, Tree::Receipts, b"old-1").await,
        Some(b"kept".to_vec())
    );
    assert_eq!(get(&s, Tree::Logs, b"only-required").await, None);
    // A delete reports whether its key was there.
    assert!(s.delete(Tree::Receipts, b"old-3").await.unwrap());
    assert!(!s.delete(Tree::Receipts, b"old-3").await.unwrap());
}

/// Batches claiming overlapping sets of keys in two trees, each listing its keys in its own
/// order, race: every key ends claimed by exactly one batch, a batch's claims land all or none,
/// and no batch fails other than on a condition.
pub async fn overlapping_multi_key_claims_stay_all_or_nothing(s: Shared) {
    const CLAIMANTS: usize = 24;
    const KEYS: usize = 6;
    let tasks: Vec<_> = (0..CLAIMANTS)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                // Three keys each, as (tree, key), listed forwards or backwards.
                let mut mine: Vec<(Tree, Vec<u8>)> = (0..3)
                    .map(|j| {
                        let k = (i + j * 2) % KEYS;
                        let tree = if k.is_multiple_of(2) {
                            Tree::Nonces
                        } else {
                            Tree::PaymentIds
                        };
                        (tree, format!("k-{k}").into_bytes())
                    })
                    .collect();
                if i % 2 == 1 {
                    mine.reverse();
                }
                let mut batch = Batch::new();
                for (tree, key) in &mine {
                    batch = batch.require_absent(*tree, key.clone());
                }
                for (tree, key) in &mine {
                    batch = batch.put(*tree, key.clone(), i.to_string().into_bytes());
                }
                match s.apply(batch).await {
                    Ok(()) => Some(mine),
                    Err(StoreError::ConditionFailed(_)) => None,
                    Err(e) => panic!("claimant {i}: {e}"),
                }
            })
        })
        .collect();
    let mut claimed = std::collections::HashMap::new();
    for (i, task) in tasks.into_iter().enumerate() {
        if let Some(keys) = task.await.unwrap() {
            for key in keys {
                assert!(claimed.insert(key, i).is_none(), "a key claimed twice");
            }
        }
    }
    assert!(!claimed.is_empty());
    for ((tree, key), owner) in &claimed {
        assert_eq!(
            get(&s, *tree, key).await,
            Some(owner.to_string().into_bytes())
        );
    }
    // Keys no winner claimed are absent: no loser left anything behind.
    for k in 0..KEYS {
        let tree = if k.is_multiple_of(2) {
            Tree::Nonces
        } else {
            Tree::PaymentIds
        };
        let key = format!("k-{k}").into_bytes();
        if !claimed.contains_key(&(tree, key.clone())) {
            assert_eq!(get(&s, tree, &key).await, None);
        }
    }
}

/// A log entry numbered `i`: ids sort as the numbers do.
fn log_row(i: usize) -> LogRow {
    LogRow {
        id: format!("{i:032x}"),
        entry: format!("{{\"n\":{i}}}").into_bytes(),
    }
}

/// The numbers of log entries, in the order given.
fn log_numbers(rows: Vec<LogRow>) -> Vec<usize> {
    rows.iter()
        .map(|row| usize::from_str_radix(&row.id, 16).unwrap())
        .collect()
}

/// Endpoint logs: each endpoint's newest `keep` are kept whatever the size of its appends,
/// read newest first in pages before a cursor, and deleted with a count; other endpoints'
/// stay as they were.
pub async fn logs_keep_the_newest_and_page_newest_first(s: Shared) {
    for i in 0..7 {
        s.append_logs("ep_a", &[log_row(i)], 5).await.unwrap();
    }
    s.append_logs("ep_b", &[log_row(100)], 5).await.unwrap();
    let newest = |before: Option<usize>, limit| {
        let s = Arc::clone(&s);
        async move {
            let before = before.map(|i| log_row(i).id);
            log_numbers(
                s.logs_before("ep_a", before.as_deref(), limit)
                    .await
                    .unwrap(),
            )
        }
    };
    assert_eq!(newest(None, 10).await, [6, 5, 4, 3, 2]);
    assert_eq!(newest(None, 2).await, [6, 5]);
    assert_eq!(newest(Some(5), 2).await, [4, 3]);
    assert_eq!(newest(Some(3), 10).await, [2]);
    assert_eq!(newest(Some(2), 10).await, Vec::<usize>::new());
    let entry = s
        .logs_before("ep_a", None, 1)
        .await
        .unwrap()
        .remove(0)
        .entry;
    assert_eq!(entry, br#"{"n":6}"#);

    // More at once than are kept: the newest of them.
    let many: Vec<LogRow> = (7..15).map(log_row).collect();
    s.append_logs("ep_a", &many, 5).await.unwrap();
    assert_eq!(newest(None, 10).await, [14, 13, 12, 11, 10]);
    s.append_logs("ep_a", &[log_row(15), log_row(16)], 5)
        .await
        .unwrap();
    assert_eq!(newest(None, 10).await, [16, 15, 14, 13, 12]);
    // An entry appended again replaces itself and prunes nothing.
    s.append_logs("ep_a", &[log_row(16), log_row(17)], 5)
        .await
        .unwrap();
    assert_eq!(newest(None, 10).await, [17, 16, 15, 14, 13]);

    assert_eq!(s.delete_logs("ep_a").await.unwrap(), 5);
    assert_eq!(newest(None, 10).await, Vec::<usize>::new());
    assert_eq!(s.delete_logs("ep_a").await.unwrap(), 0);
    let b = s.logs_before("ep_b", None, 10).await.unwrap();
    assert_eq!(log_numbers(b), [100]);
    // Logs start again after a delete.
    s.append_logs("ep_a", &[log_row(20)], 5).await.unwrap();
    assert_eq!(newest(None, 10).await, [20]);
}

/// Appends to one endpoint's log from several writers at once lose no entry among the newest
/// and keep at least what is kept; appends alone then leave exactly the newest `keep` within
/// [`FULL_PRUNE_EVERY`] of them (an entry a prune could not see, stored by a writer at
/// once, may wait for a prune from the start).
pub async fn logs_appended_at_once_keep_the_newest(s: Shared) {
    const KEEP: usize = 20;
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (s, next) = (Arc::clone(&s), Arc::clone(&next));
            tokio::spawn(async move {
                for _ in 0..10 {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    s.append_logs("ep", &[log_row(i)], KEEP as u64)
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let kept = log_numbers(s.logs_before("ep", None, 1000).await.unwrap());
    assert!(kept.len() >= KEEP, "{kept:?}");
    let last = 80 + FULL_PRUNE_EVERY - 1;
    for i in 80..=last {
        s.append_logs("ep", &[log_row(i)], KEEP as u64)
            .await
            .unwrap();
    }
    let kept = log_numbers(s.logs_before("ep", None, 1000).await.unwrap());
    assert_eq!(kept, (last + 1 - KEEP..=last).rev().collect::<Vec<_>>());
}

/// An entry stored after newer ones were pruned (a node whose clock is behind) is pruned too,
/// within [`FULL_PRUNE_EVERY`] appends, and the newest `keep` stay throughout.
pub async fn logs_stored_late_are_pruned_in_time(s: Shared) {
    const KEEP: u64 = 5;
    for i in 10..20 {
        s.append_logs("ep", &[log_row(i)], KEEP).await.unwrap();
    }
    // Older than everything pruned so far.
    s.append_logs("ep", &[log_row(3)], KEEP).await.unwrap();
    let mut last = 20;
    for _ in 0..FULL_PRUNE_EVERY {
        s.append_logs("ep", &[log_row(last)], KEEP).await.unwrap();
        let kept = log_numbers(s.logs_before("ep", None, 100).await.unwrap());
        let newest: Vec<usize> = (last + 1 - KEEP as usize..=last).rev().collect();
        assert_eq!(kept[..KEEP as usize], newest[..], "{kept:?}");
        last += 1;
    }
    let kept = log_numbers(s.logs_before("ep", None, 100).await.unwrap());
    assert_eq!(kept, (last - KEEP as usize..last).rev().collect::<Vec<_>>());
}

/// An event of millisecond `ms` (a uuid v7's time), the `n`th of it, for `endpoint`.
fn event_row(ms: u64, n: u64, endpoint: Option<&str>) -> EventRow {
    let id = format!("{ms:012x}7{n:019x}");
    EventRow {
        entry: event_row_entry(&id, endpoint),
        endpoint: endpoint.map(str::to_string),
        id,
    }
}

/// Every event of a builder's feed a query finds, following each page's `next`, newest first.
async fn every_event(s: &Shared, builder: &str, query: EventQuery<'_>) -> Vec<String> {
    let mut ids = Vec::new();
    let mut before = query.before.map(str::to_string);
    loop {
        let query = EventQuery {
            before: before.as_deref(),
            ..query
        };
        let page = s.events_page(builder, &query).await.unwrap();
        assert!(page.rows.len() <= query.limit);
        for row in &page.rows {
            assert_eq!(row.entry, event_row_entry(&row.id, row.endpoint.as_deref()));
        }
        ids.extend(page.rows.into_iter().map(|row| row.id));
        match page.next {
            Some(next) => before = Some(next),
            None => return ids,
        }
    }
}

fn event_row_entry(id: &str, endpoint: Option<&str>) -> Vec<u8> {
    let slug = match endpoint {
        Some(slug) => format!("\"{slug}\""),
        None => "null".into(),
    };
    format!(r#"{{"id":"{id}","endpointSlug":{slug}}}"#).into_bytes()
}

/// Builder events: a feed pages newest first from a moment on, for one endpoint or all; other
/// builders' events never show; a sweep deletes every builder's older events and counts them.
pub async fn events_page_by_time_and_endpoint_and_are_swept(s: Shared) {
    let endpoint = |i: u64| match i % 3 {
        0 => Some("a"),
        1 => Some("b"),
        _ => None,
    };
    let mine: Vec<(&str, EventRow)> = (0..10)
        .map(|i| ("bld_1", event_row(1_000 + i, i, endpoint(i))))
        .collect();
    s.record_events(&mine).await.unwrap();
    s.record_events(&[("bld_2", event_row(1_005, 99, Some("a")))])
        .await
        .unwrap();
    let id = |i: u64| event_row(1_000 + i, i, None).id;
    let ids = |range: &[u64]| range.iter().map(|&i| id(i)).collect::<Vec<_>>();
    let from_start = first_id_at(0);
    let all = EventQuery {
        before: None,
        from: &from_start,
        endpoint: None,
        limit: 3,
    };
    assert_eq!(
        every_event(&s, "bld_1", all).await,
        ids(&[9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
    );
    let first = s.events_page("bld_1", &all).await.unwrap();
    assert_eq!(first.rows.len(), 3);
    assert_eq!(first.next, Some(id(7)));
    assert_eq!(first.rows[0].endpoint.as_deref(), Some("a"));
    assert_eq!(first.rows[1].endpoint, None);

    let from_1005 = first_id_at(1_005);
    let since = EventQuery {
        from: &from_1005,
        ..all
    };
    assert_eq!(every_event(&s, "bld_1", since).await, ids(&[9, 8, 7, 6, 5]));
    let of_a = EventQuery {
        endpoint: Some("a"),
        ..all
    };
    assert_eq!(every_event(&s, "bld_1", of_a).await, ids(&[9, 6, 3, 0]));
    let before_6 = id(6);
    let older_of_a = EventQuery {
        before: Some(&before_6),
        ..of_a
    };
    assert_eq!(every_event(&s, "bld_1", older_of_a).await, ids(&[3, 0]));
    let of_nobody = EventQuery {
        endpoint: Some("zzz"),
        ..all
    };
    assert!(every_event(&s, "bld_1", of_nobody).await.is_empty());
    assert_eq!(every_event(&s, "bld_2", all).await.len(), 1);
    assert!(every_event(&s, "bld_3", all).await.is_empty());

    // Older than 1003 ms: bld_1's first three; bld_2's event (1005) stays.
    assert_eq!(s.sweep_events(&first_id_at(1_003)).await.unwrap(), 3);
    assert_eq!(
        every_event(&s, "bld_1", all).await,
        ids(&[9, 8, 7, 6, 5, 4, 3])
    );
    assert_eq!(s.sweep_events(&first_id_at(1_003)).await.unwrap(), 0);
    assert_eq!(s.sweep_events(&first_id_at(2_000)).await.unwrap(), 8);
    assert!(every_event(&s, "bld_1", all).await.is_empty());
    assert!(every_event(&s, "bld_2", all).await.is_empty());
}

/// Hosted-service quotes: a quote is read back as stored; a sweep removes those expired before
/// the cutoff, in issue order up to the first still valid, within its limit, and counts them.
pub async fn quotes_are_kept_until_swept(s: Shared) {
    let quote = |id: &str, expires_at_ms: u64| {
        let at =
            time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(expires_at_ms) * 1_000_000)
                .unwrap()
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap();
        QuoteRow {
            id: id.to_owned(),
            expires_at_ms,
            entry: format!(r#"{{"quoteId":"{id}","expiresAt":"{at}"}}"#).into_bytes(),
        }
    };
    // Issued in id order, expiring a second apart.
    let base = 1_800_000_000_000;
    let quotes: Vec<QuoteRow> = (0..5)
        .map(|i| quote(&format!("qt_{i}"), base + i * 1_000))
        .collect();
    for q in &quotes {
        s.save_quote(q).await.unwrap();
    }
    assert_eq!(
        s.quote("qt_2").await.unwrap(),
        Some(quotes[2].entry.clone())
    );
    assert_eq!(s.quote("qt_missing").await.unwrap(), None);

    assert_eq!(
        s.sweep_quotes(base, 100).await.unwrap(),
        0,
        "none expired before the first"
    );
    // Three expired before the cutoff; a limit of two takes two, the next sweep the third.
    assert_eq!(s.sweep_quotes(base + 2_500, 2).await.unwrap(), 2);
    assert_eq!(s.sweep_quotes(base + 2_500, 2).await.unwrap(), 1);
    assert_eq!(s.sweep_quotes(base + 2_500, 2).await.unwrap(), 0);
    for (i, q) in quotes.iter().enumerate() {
        let kept = s.quote(&q.id).await.unwrap();
        assert_eq!(kept.is_some(), i >= 3, "{}", q.id);
    }
    assert_eq!(
        s.sweep_quotes(u64::from(u32::MAX) * 1_000, 100)
            .await
            .unwrap(),
        2
    );
    assert_eq!(s.quote("qt_4").await.unwrap(), None);
}

/// Payout packets are found by id (with their builder) and by builder in id order, and
/// changed only as read.
pub async fn packets_are_found_by_id_and_by_builder(s: Shared) {
    let packet = |id: &str, builder: &str, status: &str| PacketRow {
        packet_id: id.to_owned(),
        builder: builder.to_owned(),
        status: status.to_owned(),
        entry: serde_json::json!({"packetId": id, "builderId": builder, "status": status})
            .to_string()
            .into_bytes(),
    };
    let packets = [
        packet("pay_01", "bld_a", "pending"),
        packet("pay_02", "bld_b", "pending"),
        packet("pay_03", "bld_a", "pending"),
        packet("pay_04", "bld_ab", "pending"),
    ];
    for p in &packets {
        s.apply(Batch::new().put_packet(p.clone())).await.unwrap();
    }
    assert_eq!(
        s.packet("pay_03").await.unwrap(),
        Some(("bld_a".to_owned(), packets[2].entry.clone()))
    );
    assert_eq!(s.packet("pay_09").await.unwrap(), None);
    let of = |builder: &'static str, after: Option<&'static str>| {
        let s = Arc::clone(&s);
        async move { ids(s.packets_of(builder, after, 10).await.unwrap()) }
    };
    assert_eq!(of("bld_a", None).await, ["pay_01", "pay_03"]);
    assert_eq!(of("bld_a", Some("pay_01")).await, ["pay_03"]);
    assert_eq!(of("bld_ab", None).await, ["pay_04"]);
    assert_eq!(of("bld_c", None).await, Vec::<String>::new());

    // Marked paid only as read.
    let paid = packet("pay_03", "bld_a", "paid");
    let stale = Batch::new()
        .require_packet("bld_a", "pay_03", Some(paid.entry.clone()))
        .put_packet(paid.clone());
    let stale = s.apply(stale).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    let mark = Batch::new()
        .require_packet("bld_a", "pay_03", Some(packets[2].entry.clone()))
        .put_packet(paid.clone());
    s.apply(mark).await.unwrap();
    let (builder, entry) = s.packet("pay_03").await.unwrap().unwrap();
    assert_eq!((builder.as_str(), entry), ("bld_a", paid.entry));
    assert_eq!(of("bld_a", None).await, ["pay_01", "pay_03"]);
}

/// A receipt issued at `issued_at_ms`, a free call's or a paid one's, as the service writes it.
fn receipt_row(id: &str, free: bool, issued_at_ms: i64) -> ReceiptRow {
    let issued_at =
        time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(issued_at_ms) * 1_000_000)
            .unwrap()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
    let method = if free { "free" } else { "x402" };
    ReceiptRow {
        receipt_id: id.to_owned(),
        endpoint: Some("tool".to_owned()),
        payer: (!free).then(|| "0xpayer".to_owned()),
        free,
        issued_at_ms,
        entry: serde_json::json!({
            "receiptId": id, "issuedAt": issued_at, "charged": !free, "paymentMethod": method,
        })
        .to_string()
        .into_bytes(),
    }
}

/// Receipts are issued once, read by id and in id order a page at a time, re-signed only as
/// read, and a sweep takes old free calls' receipts with their proofs, never a paid one or a
/// young one.
pub async fn receipts_are_issued_once_read_and_swept(s: Shared) {
    let issue = |row: ReceiptRow| {
        let proof = row.free.then(|| row.receipt_id.clone());
        let batch = Batch::new()
            .require_receipt(&row.receipt_id, None)
            .put_receipt(row);
        match proof {
            Some(id) => batch.put_receipt_proof(&id, b"proof".to_vec()),
            None => batch,
        }
    };
    let base = 1_800_000_000_000;
    let receipts = [
        receipt_row("rcpt_01", true, base),
        receipt_row("rcpt_02", false, base + 1_000),
        receipt_row("rcpt_03", true, base + 2_000),
        receipt_row("rcpt_04", true, base + 3_000),
        receipt_row("rcpt_05", false, base + 4_000),
    ];
    for receipt in &receipts {
        s.apply(issue(receipt.clone())).await.unwrap();
    }
    let again = s.apply(issue(receipt_row("rcpt_02", false, base))).await;
    assert!(
        matches!(again, Err(StoreError::ConditionFailed(0))),
        "{again:?}"
    );
    assert_eq!(
        s.receipt("rcpt_02").await.unwrap(),
        Some(receipts[1].entry.clone())
    );
    assert_eq!(s.receipt("rcpt_09").await.unwrap(), None);
    let after = |after: Option<&'static str>, limit: usize| {
        let s = Arc::clone(&s);
        async move { ids(s.receipts_after(after, limit).await.unwrap()) }
    };
    assert_eq!(
        after(None, 10).await,
        ["rcpt_01", "rcpt_02", "rcpt_03", "rcpt_04", "rcpt_05"]
    );
    assert_eq!(after(Some("rcpt_02"), 2).await, ["rcpt_03", "rcpt_04"]);

    // Re-signed only as read.
    let settled = receipt_row("rcpt_05", false, base + 4_000);
    let settled = ReceiptRow {
        entry: [
            &settled.entry[..settled.entry.len() - 1],
            br#","settled":true}"#,
        ]
        .concat(),
        ..settled
    };
    let stale = Batch::new()
        .require_receipt("rcpt_05", Some(b"{}".to_vec()))
        .put_receipt(settled.clone());
    let stale = s.apply(stale).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    let replace = Batch::new()
        .require_receipt("rcpt_05", Some(receipts[4].entry.clone()))
        .put_receipt(settled.clone());
    s.apply(replace).await.unwrap();
    assert_eq!(
        s.receipt("rcpt_05").await.unwrap().as_deref(),
        Some(settled.entry.as_slice())
    );

    // Old free receipts go with their proofs; the paid one and the young one stay.
    assert_eq!(s.sweep_free_receipts(base + 2_500, 1_000).await.unwrap(), 2);
    assert_eq!(s.sweep_free_receipts(base + 2_500, 1_000).await.unwrap(), 0);
    assert_eq!(after(None, 10).await, ["rcpt_02", "rcpt_04", "rcpt_05"]);
    for (id, proof) in [("rcpt_01", false), ("rcpt_03", false), ("rcpt_04", true)] {
        let kept = s.receipt_proof(id).await.unwrap();
        assert_eq!(kept.is_some(), proof, "{id}'s proof");
    }
    // Deleted as a typed record, a receipt is gone.
    s.apply(Batch::new().delete_receipt("rcpt_04"))
        .await
        .unwrap();
    assert_eq!(s.receipt("rcpt_04").await.unwrap(), None);
}

/// A sale of `seller` (`None`: the platform's), as the ledger would write it.
fn sale_row(id: &str, seller: Option<&str>, amount: i64) -> SaleRow {
    SaleRow {
        receipt_id: id.to_owned(),
        seller: seller.map(str::to_owned),
        endpoint: Some("tool".to_owned()),
        at_ms: 1_800_000_000_000,
        amount,
        collection: Some("collected".to_owned()),
        method: "x402".to_owned(),
        entry: serde_json::json!({"receiptId": id, "seller": seller, "amount": amount})
            .to_string()
            .into_bytes(),
    }
}

fn ids(sales: Vec<(String, Vec<u8>)>) -> Vec<String> {
    sales.into_iter().map(|(id, _)| id).collect()
}

/// Sales are recorded once per receipt, read back by id, by seller and everyone's in id order
/// a page at a time, and changed or removed only as they were read.
pub async fn sales_are_recorded_once_and_found_by_seller(s: Shared) {
    let record = |row: SaleRow| {
        Batch::new()
            .require_sale(&row.receipt_id, None)
            .put_sale(row)
    };
    let sales = [
        sale_row("rcpt_01", Some("a"), 10),
        sale_row("rcpt_02", Some("b"), 20),
        sale_row("rcpt_03", None, 30),
        sale_row("rcpt_04", Some("a"), 40),
        sale_row("rcpt_05", Some("ab"), 50),
    ];
    assert_eq!(
        s.upgrade_sales().await.unwrap(),
        0,
        "a new store has nothing to upgrade"
    );
    // Recorded out of order: reads come back in id order.
    for i in [3, 0, 2, 1, 4] {
        s.apply(record(sales[i].clone())).await.unwrap();
    }
    let again = s.apply(record(sale_row("rcpt_01", Some("a"), 99))).await;
    assert!(
        matches!(again, Err(StoreError::ConditionFailed(0))),
        "{again:?}"
    );
    assert_eq!(
        s.sale("rcpt_01").await.unwrap(),
        Some(sales[0].entry.clone())
    );
    assert_eq!(s.sale("rcpt_09").await.unwrap(), None);

    let after = |seller: Option<&'static str>, after: &'static str, limit: usize| {
        let s = Arc::clone(&s);
        async move { ids(s.sales_after(seller, after, limit).await.unwrap()) }
    };
    assert_eq!(after(Some("a"), "", 10).await, ["rcpt_01", "rcpt_04"]);
    assert_eq!(after(Some("a"), "rcpt_01", 10).await, ["rcpt_04"]);
    assert_eq!(after(Some("b"), "", 10).await, ["rcpt_02"]);
    assert_eq!(after(Some("nobody"), "", 10).await, Vec::<String>::new());
    assert_eq!(
        after(None, "", 10).await,
        ["rcpt_01", "rcpt_02", "rcpt_03", "rcpt_04", "rcpt_05"]
    );
    assert_eq!(after(None, "rcpt_02", 2).await, ["rcpt_03", "rcpt_04"]);
    let entries = s.sales_after(Some("b"), "", 10).await.unwrap();
    assert_eq!(entries, [("rcpt_02".to_owned(), sales[1].entry.clone())]);

    // Changed only as read: a stale entry is refused, the one read replaced.
    let stale = s
        .apply(
            Batch::new()
                .require_sale("rcpt_04", Some(b"{}".to_vec()))
                .delete_sale("rcpt_04", Some("a")),
        )
        .await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    let changed = sale_row("rcpt_04", Some("a"), 41);
    s.apply(
        Batch::new()
            .require_sale("rcpt_04", Some(sales[3].entry.clone()))
            .put_sale(changed.clone()),
    )
    .await
    .unwrap();
    assert_eq!(
        s.sale("rcpt_04").await.unwrap(),
        Some(changed.entry.clone())
    );
    let entries = s.sales_after(Some("a"), "rcpt_01", 10).await.unwrap();
    assert_eq!(entries, [("rcpt_04".to_owned(), changed.entry.clone())]);
    s.apply(
        Batch::new()
            .require_sale("rcpt_04", Some(changed.entry))
            .delete_sale("rcpt_04", Some("a")),
    )
    .await
    .unwrap();
    assert_eq!(s.sale("rcpt_04").await.unwrap(), None);
    assert_eq!(after(Some("a"), "", 10).await, ["rcpt_01"]);
    // Run again (as every start does), an upgrade changes nothing that is read.
    s.upgrade_sales().await.unwrap();
    assert_eq!(after(Some("a"), "", 10).await, ["rcpt_01"]);
    assert_eq!(after(None, "", 10).await.len(), 4);
}

/// A paid call's settlement: its nonce spent, its receipt and its sale claimed, its payment
/// identifier's answer kept, its pending settlement's key gone (records of four tables and a
/// key, in one batch). Conditions of every kind are numbered together, and a batch whose
/// condition fails leaves nothing.
pub async fn sales_and_keys_commit_together(s: Shared) {
    let settle = |id: &str, nonce: &str| {
        Batch::new()
            .require_nonce(nonce, None)
            .require_sale(id, None)
            .require_receipt(id, None)
            .put_nonce(nonce_row(nonce, NonceState::Spent, id))
            .put_receipt(receipt_row(id, false, 1_800_000_000_000))
            .put_sale(sale_row(id, Some("a"), 10))
            .put_payment_id(payment_id_row(&format!("0xpayer/{id}"), true, "answer"))
            .put(
                Tree::Ledger,
                format!("settled/{id}").into_bytes(),
                b"1".to_vec(),
            )
    };
    s.apply(settle("rcpt_10", "n1")).await.unwrap();
    assert_eq!(s.nonce("n1").await.unwrap(), Some(b"rcpt_10".to_vec()));
    assert_eq!(
        s.payment_id("0xpayer/rcpt_10").await.unwrap(),
        Some(b"answer".to_vec())
    );
    assert_eq!(
        get(&s, Tree::Ledger, b"settled/rcpt_10").await,
        Some(b"1".to_vec())
    );
    // The nonce is spent: nothing of the second lands, its sale included.
    let spent = s.apply(settle("rcpt_11", "n1")).await;
    assert!(
        matches!(spent, Err(StoreError::ConditionFailed(0))),
        "{spent:?}"
    );
    assert_eq!(s.sale("rcpt_11").await.unwrap(), None);
    assert_eq!(s.receipt("rcpt_11").await.unwrap(), None);
    assert_eq!(s.payment_id("0xpayer/rcpt_11").await.unwrap(), None);
    assert_eq!(get(&s, Tree::Ledger, b"settled/rcpt_11").await, None);
    // The sale exists: nothing of the third lands, its nonce included.
    let sold = s.apply(settle("rcpt_10", "n2")).await;
    assert!(
        matches!(sold, Err(StoreError::ConditionFailed(1))),
        "{sold:?}"
    );
    assert_eq!(s.nonce("n2").await.unwrap(), None);

    // Racing for one receipt's sale: exactly one wins, and only its nonce is spent.
    const CLAIMANTS: usize = 16;
    let tasks: Vec<_> = (0..CLAIMANTS)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let nonce = format!("race-{i}");
                let claim = Batch::new()
                    .require_sale("rcpt_12", None)
                    .require_receipt("rcpt_12", None)
                    .require_nonce(&nonce, None)
                    .put_nonce(nonce_row(&nonce, NonceState::Spent, "rcpt_12"))
                    .put_receipt(receipt_row("rcpt_12", false, 1_800_000_000_000))
                    .put_sale(sale_row("rcpt_12", Some("a"), 10));
                (i, s.apply(claim).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await;
    for i in 0..CLAIMANTS {
        let spent = s.nonce(&format!("race-{i}")).await.unwrap();
        assert_eq!(spent.is_some(), i == winner, "race-{i}");
    }
    assert_eq!(
        ids(s.sales_after(Some("a"), "", 10).await.unwrap()),
        ["rcpt_10", "rcpt_12"]
    );
}

fn payment_id_row(key: &str, answered: bool, entry: &str) -> PaymentIdRow {
    PaymentIdRow {
        key: key.to_owned(),
        answered,
        created_at_ms: 1_800_000_000_000,
        entry: entry.as_bytes().to_vec(),
    }
}

/// A payment identifier is reserved by one call of the many that send it at once (each with
/// the nonce claim of its own payment, as a paid call does), read by its key, taken over from
/// a call that died only as it was read, and answered; another payer's id of the same name is
/// its own.
pub async fn payment_ids_are_reserved_once_and_taken_over_as_read(s: Shared) {
    const KEY: &str = "0xabc/order-0001-retry";
    const CLAIMANTS: usize = 16;
    let tasks: Vec<_> = (0..CLAIMANTS)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let nonce = format!("8453/usdc/0xabc/{i}");
                let batch = Batch::new()
                    .require_payment_id(KEY, None)
                    .require_nonce(&nonce, None)
                    .put_nonce(nonce_row(&nonce, NonceState::Claimed, "{}"))
                    .put_payment_id(payment_id_row(KEY, false, &format!("running {i}")));
                (i, s.apply_unsynced(batch).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await;
    let running = format!("running {winner}").into_bytes();
    assert_eq!(s.payment_id(KEY).await.unwrap(), Some(running.clone()));
    for i in 0..CLAIMANTS {
        let claimed = s.nonce(&format!("8453/usdc/0xabc/{i}")).await.unwrap();
        assert_eq!(claimed.is_some(), i == winner, "claimant {i}'s nonce");
    }
    assert_eq!(s.payment_id("0xdef/order-0001-retry").await.unwrap(), None);
    assert_eq!(s.payment_id("0xabc/order-0001").await.unwrap(), None);

    // Taken over (its call died) only as it was read: a stale read loses and changes nothing.
    let take_over = |seen: &[u8], by: &str| {
        Batch::new()
            .require_payment_id(KEY, Some(seen.to_vec()))
            .put_payment_id(payment_id_row(KEY, false, by))
    };
    let stale = s.apply(take_over(b"running 99", "taken")).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    assert_eq!(s.payment_id(KEY).await.unwrap(), Some(running.clone()));
    s.apply(take_over(&running, "taken")).await.unwrap();
    assert_eq!(s.payment_id(KEY).await.unwrap(), Some(b"taken".to_vec()));

    // Answered, and another payer's id of the same name beside it.
    s.apply(Batch::new().put_payment_id(payment_id_row(KEY, true, "answered")))
        .await
        .unwrap();
    let other = "0xdef/order-0001-retry";
    s.apply(
        Batch::new()
            .require_payment_id(other, None)
            .put_payment_id(payment_id_row(other, false, "theirs")),
    )
    .await
    .unwrap();
    assert_eq!(s.payment_id(KEY).await.unwrap(), Some(b"answered".to_vec()));
    assert_eq!(s.payment_id(other).await.unwrap(), Some(b"theirs".to_vec()));
}

/// Of two packets racing to pay one sale, one marks it; marks are read many at once, in the
/// order asked; a refund that read a sale unpaid loses once a packet paid it, and one that read
/// the mark wins.
pub async fn paid_out_marks_are_claimed_once_and_read_together(s: Shared) {
    const PACKETS: usize = 16;
    let tasks: Vec<_> = (0..PACKETS)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let mark = |receipt_id: &str| PaidOutRow {
                    receipt_id: receipt_id.to_owned(),
                    packet_id: format!("pay_{i:02}"),
                };
                // Each packet pays its own sale and the one they all want.
                let batch = Batch::new()
                    .require_paid_out("rcpt_shared", None)
                    .require_paid_out(&format!("rcpt_own_{i:02}"), None)
                    .put_paid_out(mark("rcpt_shared"))
                    .put_paid_out(mark(&format!("rcpt_own_{i:02}")));
                (i, s.apply(batch).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await;
    let own: Vec<String> = (0..PACKETS).map(|i| format!("rcpt_own_{i:02}")).collect();
    let mut asked: Vec<&str> = own.iter().map(String::as_str).collect();
    asked.extend(["rcpt_shared", "rcpt_none", "rcpt_shared"]);
    let by = Some(format!("pay_{winner:02}").into_bytes());
    let mut want: Vec<Option<Vec<u8>>> = (0..PACKETS)
        .map(|i| (i == winner).then(|| by.clone().unwrap()))
        .collect();
    want.extend([by.clone(), None, by.clone()]);
    assert_eq!(s.paid_out(&asked).await.unwrap(), want);
    assert_eq!(
        s.paid_out(&[]).await.unwrap(),
        Vec::<Option<Vec<u8>>>::new()
    );

    // A refund conditioned on the payout as it read it.
    let refund = |read: Option<Vec<u8>>| {
        Batch::new()
            .require_paid_out("rcpt_shared", read)
            .require_refund("rcpt_shared", None)
            .put_refund(refund_row("rcpt_shared", 3, "after payout"))
    };
    let stale = s.apply(refund(None)).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    assert_eq!(s.refunds(&["rcpt_shared"]).await.unwrap(), [None]);
    s.apply(refund(by.clone())).await.unwrap();
    assert_eq!(
        s.refunds(&["rcpt_shared"]).await.unwrap(),
        [Some(b"after payout".to_vec())]
    );
}

/// Pending settlements are written once, paged in id order and read many at once; of many
/// reconcilers concluding one, one wins, and only as it read it; a payout that requires a sale
/// not pending loses while it is.
pub async fn pending_settlements_are_concluded_once_and_paged(s: Shared) {
    let ids = ["rcpt_a", "rcpt_b", "rcpt_c", "rcpt_d", "rcpt_e"];
    let entry = |id: &str| format!("{{\"receiptId\":\"{id}\"}}").into_bytes();
    let write = |ids: &[&str]| {
        (ids.iter()).fold(Batch::new(), |batch, id| {
            batch
                .require_pending_settlement(id, None)
                .put_pending_settlement(id, entry(id))
        })
    };
    s.apply(write(&ids[1..])).await.unwrap();
    // Written once: a second writer of an id loses, and writes none of its batch.
    let again = s.apply(write(&["rcpt_a", "rcpt_c"])).await;
    assert!(
        matches!(again, Err(StoreError::ConditionFailed(1))),
        "{again:?}"
    );
    s.apply(write(&ids[..1])).await.unwrap();

    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = (s.pending_settlements(after.as_deref(), 2).await).unwrap();
        assert!(page.len() <= 2);
        let Some((last, _)) = page.last() else { break };
        after = Some(last.clone());
        paged.extend(page);
    }
    let want: Vec<(String, Vec<u8>)> = ids.iter().map(|id| (id.to_string(), entry(id))).collect();
    assert_eq!(paged, want);
    assert_eq!(
        (s.pending_settlements_of(&["rcpt_c", "rcpt_none", "rcpt_a"])
            .await)
            .unwrap(),
        [Some(entry("rcpt_c")), None, Some(entry("rcpt_a"))]
    );
    assert!((s.pending_settlements_of(&[]).await).unwrap().is_empty());

    // A payout of a sale still pending loses.
    let payout = Batch::new()
        .require_pending_settlement("rcpt_c", None)
        .put_paid_out(PaidOutRow {
            receipt_id: "rcpt_c".into(),
            packet_id: "pay_1".into(),
        });
    let early = s.apply(payout.clone()).await;
    assert!(
        matches!(early, Err(StoreError::ConditionFailed(0))),
        "{early:?}"
    );
    // Concluded as read: stale bytes lose; of many reconcilers, one wins.
    let stale = Batch::new()
        .require_pending_settlement("rcpt_c", Some(b"{}".to_vec()))
        .delete_pending_settlement("rcpt_c");
    let stale = s.apply(stale).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let concluded = Batch::new()
                    .require_pending_settlement("rcpt_c", Some(entry("rcpt_c")))
                    .delete_pending_settlement("rcpt_c");
                (i, s.apply(concluded).await)
            })
        })
        .collect();
    only_winner(tasks).await;
    let left = (s.pending_settlements(None, 10).await).unwrap();
    let left: Vec<&str> = left.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(left, ["rcpt_a", "rcpt_b", "rcpt_d", "rcpt_e"]);
    s.apply(payout).await.unwrap();
    assert_eq!(
        s.paid_out(&["rcpt_c"]).await.unwrap(),
        [Some(b"pay_1".to_vec())]
    );
}

/// Credits are issued once and found by their token's digest; a balance changes only as read
/// (of many spenders of one read, one wins); holds are written with the balance they come out
/// of, paged, and deleted only as read; grants are listed in id order with their balances.
pub async fn credits_are_issued_once_spent_as_read_and_listed(s: Shared) {
    let grant = |id: &str| CreditRow {
        credit_id: id.to_owned(),
        token_sha256: format!("{id}-digest"),
        entry: format!("{{\"creditId\":\"{id}\"}}").into_bytes(),
    };
    let issue = |id: &str, units: i64| {
        Batch::new()
            .require_credit(id, None)
            .put_credit(grant(id))
            .put_credit_balance(id, units)
    };
    s.apply(issue("cred_b", 10)).await.unwrap();
    s.apply(issue("cred_a", 7)).await.unwrap();
    let again = s.apply(issue("cred_b", 99)).await;
    assert!(
        matches!(again, Err(StoreError::ConditionFailed(0))),
        "{again:?}"
    );
    // A grant issued without a balance (none is) lists with none.
    let bare = Batch::new()
        .require_credit("cred_c", None)
        .put_credit(grant("cred_c"));
    s.apply(bare).await.unwrap();
    assert_eq!(
        s.credit_by_token("cred_b-digest").await.unwrap(),
        Some(("cred_b".to_owned(), grant("cred_b").entry))
    );
    assert_eq!(s.credit_by_token("unknown").await.unwrap(), None);
    assert_eq!(
        s.credit_balance("cred_b").await.unwrap(),
        Some(b"10".to_vec())
    );
    assert_eq!(s.credit_balance("cred_none").await.unwrap(), None);

    // Of spenders who all read 10, one takes its 1 and holds it.
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let hold = format!("hold_{i:02}");
                let spend = Batch::new()
                    .require_credit_balance("cred_b", Some(b"10".to_vec()))
                    .put_credit_balance("cred_b", 9)
                    .require_credit_hold(&hold, None)
                    .put_credit_hold(CreditHoldRow {
                        hold_id: hold.clone(),
                        credit_id: "cred_b".to_owned(),
                        entry: hold.into_bytes(),
                    });
                (i, s.apply(spend).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await;
    let held = format!("hold_{winner:02}");
    assert_eq!(
        s.credit_balance("cred_b").await.unwrap(),
        Some(b"9".to_vec())
    );
    let put_hold = |id: &str| {
        Batch::new().put_credit_hold(CreditHoldRow {
            hold_id: id.to_owned(),
            credit_id: "cred_a".to_owned(),
            entry: id.as_bytes().to_vec(),
        })
    };
    for id in ["hold_zz", "hold_aa"] {
        s.apply(put_hold(id)).await.unwrap();
    }
    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = s.credit_holds(after.as_deref(), 2).await.unwrap();
        let Some((last, _)) = page.last() else { break };
        after = Some(last.clone());
        paged.extend(page.into_iter().map(|(id, _)| id));
    }
    let mut want = vec!["hold_aa".to_owned(), held.clone(), "hold_zz".to_owned()];
    want.sort();
    assert_eq!(paged, want);

    // Settled once: a stale read loses, the read one wins, with the balance it gives back.
    let settle = |entry: &str| {
        Batch::new()
            .require_credit_hold(&held, Some(entry.as_bytes().to_vec()))
            .delete_credit_hold(&held)
            .require_credit_balance("cred_b", Some(b"9".to_vec()))
            .put_credit_balance("cred_b", 10)
    };
    let stale = s.apply(settle("another")).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    s.apply(settle(&held)).await.unwrap();
    let again = s.apply(settle(&held)).await;
    assert!(
        matches!(again, Err(StoreError::ConditionFailed(0))),
        "{again:?}"
    );
    let left = s.credit_holds(None, 10).await.unwrap();
    let left: Vec<&str> = left.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(left, ["hold_aa", "hold_zz"]);

    let listed = s.credits(None, 2).await.unwrap();
    assert_eq!(
        listed,
        [
            (
                "cred_a".to_owned(),
                grant("cred_a").entry,
                Some(b"7".to_vec())
            ),
            (
                "cred_b".to_owned(),
                grant("cred_b").entry,
                Some(b"10".to_vec())
            ),
        ]
    );
    let rest = s.credits(Some("cred_b"), 2).await.unwrap();
    assert_eq!(rest, [("cred_c".to_owned(), grant("cred_c").entry, None)]);
}

/// Debts are found by their builder only (not a builder whose id starts with its), in receipt
/// id order, and deducted once as read; of many writers who read one payout version, one moves
/// it on.
pub async fn debts_are_found_by_builder_and_versions_move_once(s: Shared) {
    let owe = |builder: &str, receipt_id: &str, units: i64| {
        Batch::new()
            .require_debt(builder, receipt_id, None)
            .put_debt(DebtRow::new(builder, receipt_id, units))
    };
    for (builder, receipt_id, units) in [
        ("bld_a", "rcpt_3", 30),
        ("bld_a", "rcpt_1", 10),
        ("bld_ab", "rcpt_0", 5),
        ("bld_a", "rcpt_2", 20),
    ] {
        s.apply(owe(builder, receipt_id, units)).await.unwrap();
    }
    let again = s.apply(owe("bld_a", "rcpt_1", 99)).await;
    assert!(
        matches!(again, Err(StoreError::ConditionFailed(0))),
        "{again:?}"
    );
    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = s.debts("bld_a", after.as_deref(), 2).await.unwrap();
        let Some((last, _)) = page.last() else { break };
        after = Some(last.clone());
        paged.extend(page);
    }
    let text = |units: &str| units.as_bytes().to_vec();
    assert_eq!(
        paged,
        [
            ("rcpt_1".to_owned(), text("10")),
            ("rcpt_2".to_owned(), text("20")),
            ("rcpt_3".to_owned(), text("30")),
        ]
    );
    assert_eq!(
        s.debts("bld_ab", None, 10).await.unwrap(),
        [("rcpt_0".to_owned(), text("5"))]
    );
    assert!(s.debts("bld_none", None, 10).await.unwrap().is_empty());

    // Of packets that all read no version, one moves it to 1 and deducts a debt as read.
    assert_eq!(s.payout_version("bld_a").await.unwrap(), None);
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let packet = Batch::new()
                    .require_payout_version("bld_a", None)
                    .put_payout_version("bld_a", 1)
                    .require_debt("bld_a", "rcpt_2", Some(b"20".to_vec()))
                    .delete_debt("bld_a", "rcpt_2");
                (i, s.apply(packet).await)
            })
        })
        .collect();
    only_winner(tasks).await;
    assert_eq!(s.payout_version("bld_a").await.unwrap(), Some(text("1")));
    assert_eq!(s.payout_version("bld_ab").await.unwrap(), None);
    let left = s.debts("bld_a", None, 10).await.unwrap();
    let left: Vec<&str> = left.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(left, ["rcpt_1", "rcpt_3"]);
    let stale = Batch::new()
        .require_payout_version("bld_a", Some(text("1")))
        .put_payout_version("bld_a", 2)
        .require_debt("bld_a", "rcpt_1", Some(text("11")))
        .delete_debt("bld_a", "rcpt_1");
    let stale = s.apply(stale).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(1))),
        "{stale:?}"
    );
    assert_eq!(s.payout_version("bld_a").await.unwrap(), Some(text("1")));
}

/// Of many refunds of one receipt, one claims its transfer; a claim is read by receipt id and
/// paged in id order, noted and concluded only as read.
pub async fn refund_claims_are_made_once_and_concluded_as_read(s: Shared) {
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let claim = Batch::new()
                    .require_refund_claim("rcpt_b", None)
                    .put_refund_claim("rcpt_b", format!("claim {i}").into_bytes());
                (i, s.apply(claim).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await;
    let claimed = format!("claim {winner}").into_bytes();
    for id in ["rcpt_c", "rcpt_a"] {
        let claim = Batch::new().put_refund_claim(id, id.as_bytes().to_vec());
        s.apply(claim).await.unwrap();
    }
    assert_eq!(
        s.refund_claim("rcpt_b").await.unwrap(),
        Some(claimed.clone())
    );
    assert_eq!(s.refund_claim("rcpt_none").await.unwrap(), None);
    let first = s.refund_claims(None, 2).await.unwrap();
    let rest = s.refund_claims(Some("rcpt_b"), 2).await.unwrap();
    assert_eq!(
        [first, rest].concat(),
        [
            ("rcpt_a".to_owned(), b"rcpt_a".to_vec()),
            ("rcpt_b".to_owned(), claimed.clone()),
            ("rcpt_c".to_owned(), b"rcpt_c".to_vec()),
        ]
    );
    // Noted with its transaction as read; a conclusion that read it before loses.
    let noted = Batch::new()
        .require_refund_claim("rcpt_b", Some(claimed.clone()))
        .put_refund_claim("rcpt_b", b"noted".to_vec());
    s.apply(noted).await.unwrap();
    let conclude = |read: &[u8]| {
        Batch::new()
            .require_refund_claim("rcpt_b", Some(read.to_vec()))
            .delete_refund_claim("rcpt_b")
    };
    let stale = s.apply(conclude(&claimed)).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    s.apply(conclude(b"noted")).await.unwrap();
    assert_eq!(s.refund_claim("rcpt_b").await.unwrap(), None);
}

/// A builder's key is issued once (of 16 registrations presenting one digest, one wins), and
/// found with its builder in one read; a rotation lands only on the record as read, and the
/// revoked key stays, marked, beside the new one. A key naming no stored builder is found
/// without one.
pub async fn builders_keys_are_issued_once_and_rotated_as_read(s: Shared) {
    let key = |digest: &str, builder: &str, revoked: bool| BuilderKeyRow {
        key_sha256: digest.to_owned(),
        builder_id: builder.to_owned(),
        revoked,
        entry: format!(r#"{{"builderId":"{builder}","revoked":{revoked}}}"#).into_bytes(),
    };
    let builder = |id: &str, entry: &str| BuilderRow {
        builder_id: id.to_owned(),
        entry: entry.as_bytes().to_vec(),
    };
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let id = format!("bld_{i}");
                let register = Batch::new()
                    .require_builder_key("aa", None)
                    .put_builder_key(key("aa", &id, false))
                    .put_builder(builder(&id, &format!("{id} v1")));
                (i, s.apply(register).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await;
    let id = format!("bld_{winner}");
    let v1 = format!("{id} v1").into_bytes();
    for loser in (0..16).filter(|i| *i != winner) {
        let lost = s.builder(&format!("bld_{loser}")).await.unwrap();
        assert_eq!(lost, None, "a losing registration wrote nothing");
    }
    let issued = key("aa", &id, false).entry;
    assert_eq!(s.builder_key("aa").await.unwrap(), Some(issued.clone()));
    assert_eq!(
        s.builder_by_key("aa").await.unwrap(),
        Some((issued.clone(), Some(v1.clone())))
    );
    assert_eq!(s.builder_by_key("bb").await.unwrap(), None);
    assert_eq!(s.builder_key("bb").await.unwrap(), None);

    // A rotation: the record as read, a new digest never issued, the old one revoked.
    let rotate = |read: &[u8], new_digest: &str| {
        Batch::new()
            .require_builder(&id, Some(read.to_vec()))
            .require_builder_key(new_digest, None)
            .put_builder_key(key(new_digest, &id, false))
            .put_builder_key(key("aa", &id, true))
            .put_builder(builder(&id, &format!("{id} {new_digest}")))
    };
    s.apply(rotate(&v1, "bb")).await.unwrap();
    let stale = s.apply(rotate(&v1, "cc")).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    assert_eq!(s.builder_key("cc").await.unwrap(), None);
    let rotated = format!("{id} bb").into_bytes();
    assert_eq!(
        s.builder_by_key("bb").await.unwrap(),
        Some((key("bb", &id, false).entry, Some(rotated.clone())))
    );
    assert_eq!(
        s.builder_by_key("aa").await.unwrap(),
        Some((key("aa", &id, true).entry, Some(rotated)))
    );
    // A digest already issued is not issued again, to anyone.
    let again = Batch::new()
        .require_builder_key("bb", None)
        .put_builder_key(key("bb", "bld_other", false));
    assert!(s.apply(again).await.is_err());
    // A key whose builder is not stored is found, without a builder.
    let orphan = Batch::new().put_builder_key(key("dd", "bld_gone", false));
    s.apply(orphan).await.unwrap();
    assert_eq!(
        s.builder_by_key("dd").await.unwrap(),
        Some((key("dd", "bld_gone", false).entry, None))
    );
}

/// A deleted endpoint's slug reservation and owed wipe, written with its delete: of 16 creates
/// checking the slug is free of reservations one wins, a reservation is removed only as read,
/// reservations page in slug order, and the wipes owed are listed until each is done.
pub async fn deleted_slugs_are_reserved_as_read_and_owed_wipes_listed(s: Shared) {
    let delete = |slug: &str, endpoint_id: &str| {
        Batch::new()
            .put_slug_reservation(slug, format!("{{\"slug\":\"{slug}\"}}").into_bytes())
            .put_owed_wipe(endpoint_id)
    };
    for (slug, endpoint_id) in [("gamma", "ep_3"), ("alpha", "ep_1"), ("beta", "ep_2")] {
        s.apply(delete(slug, endpoint_id)).await.unwrap();
    }
    let alpha = br#"{"slug":"alpha"}"#.to_vec();
    assert_eq!(
        s.slug_reservation("alpha").await.unwrap(),
        Some(alpha.clone())
    );
    assert_eq!(s.slug_reservation("delta").await.unwrap(), None);
    assert_eq!(
        ids(s.slug_reservations(None, 10).await.unwrap()),
        ["alpha", "beta", "gamma"]
    );
    assert_eq!(
        ids(s.slug_reservations(Some("alpha"), 1).await.unwrap()),
        ["beta"]
    );
    assert_eq!(s.owed_wipes(10).await.unwrap(), ["ep_1", "ep_2", "ep_3"]);
    assert_eq!(s.owed_wipes(2).await.unwrap(), ["ep_1", "ep_2"]);

    // A free slug claimed once: sixteen creates that found no reservation, one lands.
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let claim = Batch::new()
                    .require_slug_reservation("delta", None)
                    .put_slug_reservation("delta", format!("{i}").into_bytes());
                (i, s.apply(claim).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await;
    let stored = s.slug_reservation("delta").await.unwrap();
    assert_eq!(stored, Some(winner.to_string().into_bytes()));
    // Removed only as read: a stale read loses, the one there goes.
    let stale = Batch::new()
        .require_slug_reservation("alpha", Some(b"{}".to_vec()))
        .delete_slug_reservation("alpha");
    let stale = s.apply(stale).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    let claimed = Batch::new()
        .require_slug_reservation("alpha", Some(alpha))
        .delete_slug_reservation("alpha");
    s.apply(claimed).await.unwrap();
    assert_eq!(s.slug_reservation("alpha").await.unwrap(), None);
    // A wipe done is no longer owed.
    s.apply(Batch::new().delete_owed_wipe("ep_2"))
        .await
        .unwrap();
    assert_eq!(s.owed_wipes(10).await.unwrap(), ["ep_1", "ep_3"]);
}

/// An endpoint's record under its slug: of 16 writers claiming a free slug one wins, a change
/// or a delete lands only as read, records page in slug order, and every write that lands is
/// published on the change feed as the `endpoints` tree's slug (as a key-value write there is).
pub async fn endpoints_are_claimed_once_changed_as_read_and_published(s: Shared) {
    let row = |slug: &str, entry: &str| EndpointRow {
        slug: slug.to_owned(),
        endpoint_id: format!("ep_{slug}"),
        builder: (slug != "beta").then(|| "bld_a".to_owned()),
        entry: entry.as_bytes().to_vec(),
    };
    let mut changes = s.changes();
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let claim = Batch::new()
                    .require_endpoint("tool", None)
                    .put_endpoint(row("tool", &format!("tool {i}")));
                (i, s.apply(claim).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await;
    let claimed = format!("tool {winner}").into_bytes();
    assert_eq!(receive(&mut changes, 1).await, [endpoint_change("tool")]);
    for slug in ["beta", "alpha"] {
        let batch = Batch::new()
            .require_endpoint(slug, None)
            .put_endpoint(row(slug, slug));
        s.apply(batch).await.unwrap();
    }
    assert_eq!(s.endpoint("tool").await.unwrap(), Some(claimed.clone()));
    assert_eq!(s.endpoint("none").await.unwrap(), None);
    let first = s.endpoints(None, 2).await.unwrap();
    let rest = s.endpoints(Some("beta"), 2).await.unwrap();
    assert_eq!(
        [first, rest].concat(),
        [
            ("alpha".to_owned(), b"alpha".to_vec()),
            ("beta".to_owned(), b"beta".to_vec()),
            ("tool".to_owned(), claimed.clone()),
        ]
    );
    // Changed as read; a change that read it before loses, and so does a delete.
    let change = |read: &[u8], entry: &str| {
        Batch::new()
            .require_endpoint("tool", Some(read.to_vec()))
            .put_endpoint(row("tool", entry))
    };
    s.apply(change(&claimed, "tool v2")).await.unwrap();
    let stale = s.apply(change(&claimed, "tool lost")).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    let stale_delete = Batch::new()
        .require_endpoint("tool", Some(claimed.clone()))
        .delete_endpoint("tool");
    assert!(s.apply(stale_delete).await.is_err());
    assert_eq!(s.endpoint("tool").await.unwrap(), Some(b"tool v2".to_vec()));
    let delete = Batch::new()
        .require_endpoint("tool", Some(b"tool v2".to_vec()))
        .delete_endpoint("tool");
    s.apply(delete).await.unwrap();
    assert_eq!(s.endpoint("tool").await.unwrap(), None);
    // A freed slug is claimed again.
    let again = Batch::new()
        .require_endpoint("tool", None)
        .put_endpoint(row("tool", "tool again"));
    s.apply(again).await.unwrap();
    let published: Vec<Change> = ["beta", "alpha", "tool", "tool", "tool"]
        .into_iter()
        .map(endpoint_change)
        .collect();
    assert_eq!(receive(&mut changes, published.len()).await, published);
    assert_quiet(&mut changes, Duration::from_millis(700)).await;
}

/// A builder's payout settings are its own (`bld_a`'s never `bld_ab`'s), replaced whole when
/// saved again, and written only with the batch they belong to.
pub async fn handler_entries_are_each_endpoints_and_spaces_and_listed_as_bytes(s: Shared) {
    use HandlerSpace::{Files, Kv};
    let row = |space, endpoint: &str, key: &str, entry: &str| {
        HandlerEntryRow::new(space, endpoint, key, entry.as_bytes().to_vec())
    };
    // Claimed once.
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let claim = Batch::new()
                    .require_handler_entry(Kv, "ep_a", "count", None)
                    .put_handler_entry(row(Kv, "ep_a", "count", &i.to_string()));
                (i, s.apply(claim).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await.to_string().into_bytes();
    // A key required absent and not written stays absent.
    let checked = Batch::new()
        .require_handler_entry(Kv, "ep_a", "missing", None)
        .put_handler_entry(row(Kv, "ep_a", "other", "o"));
    s.apply(checked).await.unwrap();
    // Spaces and endpoints keep apart, an endpoint's id prefixing another's included.
    let keys = ["b", "a/b", "Z", "\u{e9}", "a"];
    let mut batch = Batch::new().put_handler_entry(row(Files, "ep_a", "count", "file"));
    for key in keys {
        batch = batch.put_handler_entry(row(Kv, "ep_ab", key, key));
    }
    s.apply(batch).await.unwrap();
    assert_eq!(
        s.handler_entries(Kv, "ep_a", &["count", "missing", "other"])
            .await
            .unwrap(),
        [Some(winner.clone()), None, Some(b"o".to_vec())]
    );
    assert_eq!(
        s.handler_entries(Files, "ep_a", &["count", "other"])
            .await
            .unwrap(),
        [Some(b"file".to_vec()), None]
    );
    let listed = |endpoint: &'static str, prefix: &'static str, after, limit| {
        let s = Arc::clone(&s);
        async move {
            let page = s
                .handler_entries_under(Kv, endpoint, prefix, after, limit)
                .await;
            (page.unwrap().into_iter())
                .map(|(k, _)| k)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(listed("ep_a", "", None, 10).await, ["count", "other"]);
    // In byte order (`Z` before `a`, `\u{e9}` last), a page at a time, under a prefix.
    let first = listed("ep_ab", "", None, 2).await;
    assert_eq!(first, ["Z", "a"]);
    assert_eq!(
        listed("ep_ab", "", Some("a"), 10).await,
        ["a/b", "b", "\u{e9}"]
    );
    assert_eq!(listed("ep_ab", "a", None, 10).await, ["a", "a/b"]);
    assert_eq!(
        listed("ep_ab", "a", Some("a/b"), 10).await,
        Vec::<String>::new()
    );
    assert_eq!(listed("ep_ab", "", Some("Y"), 1).await, ["Z"]);
    assert!(listed("ep_ab", "a", None, 0).await.is_empty());
    // Changed and removed only as read.
    let stale = Batch::new()
        .require_handler_entry(Kv, "ep_a", "count", Some(b"stale".to_vec()))
        .delete_handler_entry(Kv, "ep_a", "count");
    let stale = s.apply(stale).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    let delete = Batch::new()
        .require_handler_entry(Kv, "ep_a", "count", Some(winner))
        .delete_handler_entry(Kv, "ep_a", "count");
    s.apply(delete).await.unwrap();
    assert_eq!(listed("ep_a", "", None, 10).await, ["other"]);
    let files = s
        .handler_entries_under(Files, "ep_a", "", None, 10)
        .await
        .unwrap();
    assert_eq!(files, [("count".to_owned(), b"file".to_vec())]);
}

pub async fn handler_usage_records_are_claimed_once_and_changed_as_read(s: Shared) {
    use HandlerSpace::{Files, Kv};
    let usage =
        |n: u64| HandlerUsageRow::new(Kv, "ep_a", Some("bld_a"), (n, n), n.to_string().into());
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let claim = Batch::new()
                    .require_handler_usage(Kv, "ep_a", None)
                    .require_builder_usage(Kv, "bld_a", None)
                    .put_handler_usage(usage(i as u64))
                    .put_builder_usage(BuilderUsageRow::new(Kv, "bld_a", (1, 1), b"t".to_vec()));
                (i, s.apply(claim).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await.to_string().into_bytes();
    assert_eq!(
        s.handler_usage(Kv, "ep_a").await.unwrap(),
        Some(winner.clone())
    );
    assert_eq!(s.handler_usage(Files, "ep_a").await.unwrap(), None);
    assert_eq!(s.handler_usage(Kv, "bld_a").await.unwrap(), None);
    assert_eq!(
        s.builder_usage(Kv, "bld_a").await.unwrap(),
        Some(b"t".to_vec())
    );
    assert_eq!(s.builder_usage(Files, "bld_a").await.unwrap(), None);
    // Changed only as read; removed as read.
    let stale = Batch::new()
        .require_handler_usage(Kv, "ep_a", Some(b"stale".to_vec()))
        .put_handler_usage(usage(99));
    let stale = s.apply(stale).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    let gone = Batch::new()
        .require_handler_usage(Kv, "ep_a", Some(winner))
        .require_builder_usage(Kv, "bld_a", Some(b"t".to_vec()))
        .delete_handler_usage(Kv, "ep_a")
        .delete_builder_usage(Kv, "bld_a");
    s.apply(gone).await.unwrap();
    assert_eq!(s.handler_usage(Kv, "ep_a").await.unwrap(), None);
    assert_eq!(s.builder_usage(Kv, "bld_a").await.unwrap(), None);
}

pub async fn secrets_are_each_endpoints_moved_as_read_and_deleted_whole(s: Shared) {
    let mut batch = Batch::new();
    for (owner, name) in [("ep_a", "B"), ("ep_a", "A"), ("ep_ab", "A"), ("tool", "A")] {
        let entry = format!("{owner}:{name}").into_bytes();
        batch = batch.put_secret(SecretRow::new(owner, name, entry));
    }
    s.apply(batch).await.unwrap();
    let names = |page: Vec<(String, Vec<u8>)>| page.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
    assert_eq!(names(s.secrets("ep_a", 10).await.unwrap()), ["A", "B"]);
    assert_eq!(
        s.secrets("ep_a", 1).await.unwrap(),
        [("A".to_owned(), b"ep_a:A".to_vec())]
    );
    assert!(s.secrets("ep", 10).await.unwrap().is_empty());
    let first = names(s.all_secrets(None, 2).await.unwrap());
    assert_eq!(first, ["ep_a/A", "ep_a/B"]);
    assert_eq!(
        names(s.all_secrets(Some("ep_a/B"), 10).await.unwrap()),
        ["ep_ab/A", "tool/A"]
    );
    // Moved only as read (a slug's secret re-sealed under an id, as the rekey does).
    let moved = |read: &[u8]| {
        Batch::new()
            .require_secret("tool", "A", Some(read.to_vec()))
            .put_secret(SecretRow::new("ep_t", "A", b"resealed".to_vec()))
            .delete_secret("tool", "A")
    };
    let stale = s.apply(moved(b"stale")).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    s.apply(moved(b"tool:A")).await.unwrap();
    assert!(s.secrets("tool", 10).await.unwrap().is_empty());
    assert_eq!(names(s.secrets("ep_t", 10).await.unwrap()), ["A"]);
    // A deleted endpoint's go whole, and no one else's.
    s.delete_secrets("ep_a").await.unwrap();
    assert!(s.secrets("ep_a", 10).await.unwrap().is_empty());
    assert_eq!(
        names(s.all_secrets(None, 10).await.unwrap()),
        ["ep_ab/A", "ep_t/A"]
    );
}

pub async fn rollout_tallies_are_each_nodes_replaced_whole_and_deleted_by_endpoint(s: Shared) {
    let tally = |endpoint: &str, node: &str, rollout: &str, n: u8| {
        RolloutTallyRow::new(endpoint, node, rollout, vec![n])
    };
    let counts = [
        tally("ep_1", "node_b", "r1", 1),
        tally("ep_1", "node_a", "r1", 1),
        tally("ep_1", "node_c", "r0", 1),
        tally("ep_10", "node_a", "r1", 1),
        tally("ep_2", "node_a", "r1", 1),
    ];
    let batch = (counts.into_iter()).fold(Batch::new(), |b, t| b.put_rollout_tally(t));
    s.apply(batch).await.unwrap();
    // Replaced whole each round.
    let again = Batch::new().put_rollout_tally(tally("ep_1", "node_a", "r1", 2));
    s.apply(again).await.unwrap();
    // An engine may leave out another rollout's counts; it never gives another endpoint's.
    let read = s.rollout_tallies("ep_1", "r1", 100).await.unwrap();
    let (nodes, entries): (Vec<_>, Vec<_>) = read.into_iter().unzip();
    assert!(
        nodes == ["node_a", "node_b"] || nodes == ["node_a", "node_b", "node_c"],
        "{nodes:?}"
    );
    assert_eq!(entries[..2], [vec![2], vec![1]]);
    assert_eq!(s.rollout_tallies("ep_1", "r1", 1).await.unwrap().len(), 1);
    s.delete_rollout_tallies("ep_1").await.unwrap();
    assert!(s
        .rollout_tallies("ep_1", "r1", 100)
        .await
        .unwrap()
        .is_empty());
    assert!(s
        .rollout_tallies("ep_1", "r0", 100)
        .await
        .unwrap()
        .is_empty());
    for other in ["ep_10", "ep_2"] {
        let kept = s.rollout_tallies(other, "r1", 100).await.unwrap();
        assert_eq!(kept, [("node_a".to_owned(), vec![1])], "{other}");
    }
}

pub async fn payout_settings_are_each_builders_and_replaced_whole(s: Shared) {
    let settings = |builder: &str, pay_to: &str| PayoutSettingsRow {
        builder: builder.to_owned(),
        pay_to: pay_to.to_owned(),
        network: "eip155:84532".to_owned(),
        entry: format!("{builder} pays {pay_to}").into_bytes(),
    };
    assert_eq!(s.payout_settings("bld_a").await.unwrap(), None);
    for builder in ["bld_a", "bld_ab"] {
        let saved = Batch::new().put_payout_settings(settings(builder, "0x1"));
        s.apply(saved).await.unwrap();
    }
    let again = Batch::new().put_payout_settings(settings("bld_a", "0x2"));
    s.apply(again).await.unwrap();
    assert_eq!(
        s.payout_settings("bld_a").await.unwrap(),
        Some(b"bld_a pays 0x2".to_vec())
    );
    assert_eq!(
        s.payout_settings("bld_ab").await.unwrap(),
        Some(b"bld_ab pays 0x1".to_vec())
    );
    // A batch whose condition fails writes no settings.
    let refused = Batch::new()
        .require_absent(Tree::Meta, b"settings-taken".to_vec())
        .put_payout_settings(settings("bld_b", "0x3"));
    s.put(Tree::Meta, b"settings-taken", b"1").await.unwrap();
    assert!(matches!(
        s.apply(refused).await,
        Err(StoreError::ConditionFailed(0))
    ));
    assert_eq!(s.payout_settings("bld_b").await.unwrap(), None);
}

/// Revisions are found by endpoint and number, newest first (10 after 9: numbers, not text),
/// pushed out and replaced in batches, and a deleted endpoint's go at once; an endpoint whose
/// id starts with another's (`ep_a`, `ep_ab`) shares none of them.
pub async fn revisions_are_kept_by_endpoint_newest_first_and_deleted_whole(s: Shared) {
    let entry = |endpoint: &str, n: u64| format!("{endpoint} r{n}").into_bytes();
    for endpoint in ["ep_a", "ep_ab", "ep_b"] {
        let batch = (1..=12).fold(Batch::new(), |b, n| {
            b.put_revision(RevisionRow::new(endpoint, n, entry(endpoint, n)))
        });
        s.apply(batch).await.unwrap();
    }
    assert_eq!(s.revision("ep_a", 3).await.unwrap(), Some(entry("ep_a", 3)));
    assert_eq!(s.revision("ep_a", 13).await.unwrap(), None);
    assert_eq!(s.revision("ep_c", 1).await.unwrap(), None);
    let numbers = |rows: Vec<(u64, Vec<u8>)>| rows.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
    let newest = s.newest_revisions("ep_a", 4).await.unwrap();
    assert_eq!(newest[0], (12, entry("ep_a", 12)));
    assert_eq!(numbers(newest), [12, 11, 10, 9]);
    // A deploy writes the next and pushes the oldest out, in one batch.
    let deploy = Batch::new()
        .put_revision(RevisionRow::new("ep_a", 13, entry("ep_a", 13)))
        .delete_revision("ep_a", 1);
    s.apply(deploy).await.unwrap();
    assert_eq!(s.revision("ep_a", 1).await.unwrap(), None);
    let all = s.newest_revisions("ep_a", 100).await.unwrap();
    assert_eq!(numbers(all), (2..=13).rev().collect::<Vec<_>>());
    // Written again under its number, a revision is replaced, not doubled.
    let again = Batch::new().put_revision(RevisionRow::new("ep_a", 13, b"again".to_vec()));
    s.apply(again).await.unwrap();
    assert_eq!(
        s.newest_revisions("ep_a", 1).await.unwrap(),
        [(13, b"again".to_vec())]
    );
    s.delete_revisions("ep_a").await.unwrap();
    assert_eq!(s.newest_revisions("ep_a", 100).await.unwrap(), []);
    assert_eq!(s.revision("ep_a", 2).await.unwrap(), None);
    for endpoint in ["ep_ab", "ep_b"] {
        let kept = s.newest_revisions(endpoint, 100).await.unwrap();
        assert_eq!(
            numbers(kept),
            (1..=12).rev().collect::<Vec<_>>(),
            "{endpoint}"
        );
    }
    // Nothing to delete is no error.
    s.delete_revisions("ep_a").await.unwrap();
}

fn refund_row(receipt_id: &str, amount: i64, entry: &str) -> RefundRow {
    RefundRow {
        receipt_id: receipt_id.to_owned(),
        seller: Some("bld_a".to_owned()),
        amount,
        entry: entry.as_bytes().to_vec(),
    }
}

/// A receipt is refunded by one of the refunds racing for it, with what returns the money in
/// the same batch; refunds are read many at once, in the order asked, and a payout that read
/// a sale's refund pays it only while the refund is as read.
pub async fn refunds_are_recorded_once_and_read_together(s: Shared) {
    const CLAIMANTS: usize = 16;
    let tasks: Vec<_> = (0..CLAIMANTS)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let batch = Batch::new()
                    .require_refund("rcpt_1", None)
                    .put_refund(refund_row("rcpt_1", 10, &format!("refund {i}")))
                    .put(
                        Tree::Credits,
                        format!("returned/{i}").into_bytes(),
                        b"10".to_vec(),
                    );
                (i, s.apply(batch).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await;
    for i in 0..CLAIMANTS {
        let returned = get(&s, Tree::Credits, format!("returned/{i}").as_bytes()).await;
        assert_eq!(returned.is_some(), i == winner, "refund {i}'s money");
    }
    let first = format!("refund {winner}");
    s.apply(
        Batch::new()
            .require_refund("rcpt_3", None)
            .put_refund(refund_row("rcpt_3", 4, "refund of 3")),
    )
    .await
    .unwrap();
    assert_eq!(
        s.refunds(&["rcpt_1", "rcpt_2", "rcpt_3", "rcpt_1"])
            .await
            .unwrap(),
        [
            Some(first.clone().into_bytes()),
            None,
            Some(b"refund of 3".to_vec()),
            Some(first.clone().into_bytes()),
        ]
    );
    assert_eq!(s.refunds(&[]).await.unwrap(), Vec::<Option<Vec<u8>>>::new());

    // Paid out as read: a payout that saw no refund of rcpt_3 loses, one that saw it wins.
    let pay_out = |refund: Option<&str>| {
        Batch::new()
            .require_refund("rcpt_3", refund.map(|r| r.as_bytes().to_vec()))
            .put_paid_out(PaidOutRow {
                receipt_id: "rcpt_3".into(),
                packet_id: "pay_1".into(),
            })
    };
    let stale = s.apply(pay_out(None)).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    assert_eq!(s.paid_out(&["rcpt_3"]).await.unwrap(), [None]);
    s.apply(pay_out(Some("refund of 3"))).await.unwrap();
    assert_eq!(
        s.paid_out(&["rcpt_3"]).await.unwrap(),
        [Some(b"pay_1".to_vec())]
    );
}

fn nonce_row(key: &str, state: NonceState, entry: &str) -> NonceRow {
    NonceRow {
        key: key.to_owned(),
        state,
        entry: entry.as_bytes().to_vec(),
    }
}

/// Nonces are claimed once, move on only as read, and the open ones (claimed, settling,
/// legacy) are found in key order without the spent and burned ones, a page at a time.
pub async fn nonces_are_claimed_once_and_open_ones_found(s: Shared) {
    let claim = r#"{"claimId":"c","state":"claimed"}"#;
    let settling = r#"{"claimId":"c","state":"settling"}"#;
    // Sixteen calls carrying one authorization: one claims it.
    const CLAIMANTS: usize = 16;
    let tasks: Vec<_> = (0..CLAIMANTS)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let entry = format!(r#"{{"claimId":"{i}","state":"claimed"}}"#);
                let batch = Batch::new()
                    .require_nonce("8453/usdc/payer/0x01", None)
                    .put_nonce(nonce_row(
                        "8453/usdc/payer/0x01",
                        NonceState::Claimed,
                        &entry,
                    ));
                (i, s.apply_unsynced(batch).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await;
    let held = format!(r#"{{"claimId":"{winner}","state":"claimed"}}"#);
    assert_eq!(
        s.nonce("8453/usdc/payer/0x01").await.unwrap(),
        Some(held.clone().into_bytes())
    );
    // Moved on only as read: a stale holder cannot settle it; the holder can.
    let stale = Batch::new()
        .require_nonce("8453/usdc/payer/0x01", Some(claim.as_bytes().to_vec()))
        .put_nonce(nonce_row(
            "8453/usdc/payer/0x01",
            NonceState::Settling,
            settling,
        ));
    let stale = s.apply(stale).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    let spend = Batch::new()
        .require_nonce("8453/usdc/payer/0x01", Some(held.into_bytes()))
        .put_nonce(nonce_row(
            "8453/usdc/payer/0x01",
            NonceState::Spent,
            "rcpt_1",
        ));
    s.apply(spend).await.unwrap();

    // Many spent nonces around a few open ones: only the open ones are found, in key order.
    let mut batch = Batch::new();
    for i in 0..600 {
        batch = batch.put_nonce(nonce_row(&format!("n/{i:04}"), NonceState::Spent, "rcpt_x"));
    }
    let open = [
        ("n/0003", NonceState::Claimed, claim),
        ("n/0300", NonceState::Settling, settling),
        ("n/0301", NonceState::Legacy, "pending/c"),
        ("n/0599", NonceState::Claimed, claim),
    ];
    for (key, state, entry) in open {
        batch = batch.put_nonce(nonce_row(key, state, entry));
    }
    batch = batch.put_nonce(nonce_row("n/0302", NonceState::Failed, "failed/rcpt_2"));
    s.apply(batch).await.unwrap();
    let mut found = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = s.open_nonces(after.as_deref(), 2).await.unwrap();
        assert!(page.len() <= 2);
        let Some((last, _)) = page.last() else { break };
        after = Some(last.clone());
        found.extend(page);
    }
    let expected: Vec<(String, Vec<u8>)> = (open.iter())
        .map(|(key, _, entry)| ((*key).to_owned(), entry.as_bytes().to_vec()))
        .collect();
    assert_eq!(found, expected);
    assert_eq!(
        ids(s.open_nonces(Some("n/0300"), 10).await.unwrap()),
        ["n/0301", "n/0599"]
    );

    // Given back: gone, and claimable again; the spent one stays spent.
    let release = Batch::new()
        .require_nonce("n/0003", Some(claim.as_bytes().to_vec()))
        .delete_nonce("n/0003");
    s.apply(release).await.unwrap();
    assert_eq!(s.nonce("n/0003").await.unwrap(), None);
    let again = Batch::new()
        .require_nonce("n/0003", None)
        .put_nonce(nonce_row("n/0003", NonceState::Claimed, claim));
    s.apply(again).await.unwrap();
    let reuse = Batch::new()
        .require_nonce("n/0000", None)
        .put_nonce(nonce_row("n/0000", NonceState::Claimed, claim));
    let reuse = s.apply(reuse).await;
    assert!(
        matches!(reuse, Err(StoreError::ConditionFailed(0))),
        "{reuse:?}"
    );
    assert_eq!(s.nonce("n/0000").await.unwrap(), Some(b"rcpt_x".to_vec()));
}

pub async fn concurrent_compare_and_swap_loses_no_update(s: Shared) {
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
pub async fn single_key_batches_keep_their_conditions(s: Shared) {
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

pub async fn large_values_round_trip(s: Shared) {
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
pub async fn watched_writes_are_published_once(s: Shared) {
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

pub fn endpoint_change(key: &str) -> Change {
    Change {
        tree: Tree::Endpoints,
        key: key.as_bytes().to_vec(),
    }
}

/// The next `n` changes, each within a second of the previous one.
pub async fn receive(
    changes: &mut tokio::sync::broadcast::Receiver<Change>,
    n: usize,
) -> Vec<Change> {
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

pub async fn assert_quiet(changes: &mut tokio::sync::broadcast::Receiver<Change>, wait: Duration) {
    if let Ok(extra) = timeout(wait, changes.recv()).await {
        panic!("unexpected change: {extra:?}");
    }
}

/// A leaf of the receipt log as the conformance case appends it.
fn leaf_row(leaf: u64, name: &str) -> LeafRow {
    LeafRow {
        leaf,
        name: name.to_owned(),
        hash: [leaf as u8; 32],
        entry: format!(r#"{{"leaf":{leaf}}}"#).into_bytes(),
    }
}

/// The receipt log's records: pending entries appended once, leaves read by index and by name,
/// interior nodes by level, and the log's state swapped only from what was read.
pub async fn receipt_log_entries_are_appended_once_and_read_by_index_and_name(s: Shared) {
    // Pending with their calls' records; each appended once: sixteen appends of one entry,
    // one wins.
    let stored = Batch::new()
        .put_log_pending("rcpt_1", b"one".to_vec())
        .put_log_pending("rcpt_1/refund", b"refund".to_vec())
        .put_log_pending("rcpt_2", b"two".to_vec());
    s.apply(stored).await.unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let append = Batch::new()
                    .require_log_pending("rcpt_1", Some(b"one".to_vec()))
                    .delete_log_pending("rcpt_1")
                    .put_log_leaf(leaf_row(i as u64, "rcpt_1"));
                (i, s.apply(append).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await as u64;
    assert_eq!(s.log_pending_entry("rcpt_1").await.unwrap(), None);
    assert_eq!(s.log_leaves(&["rcpt_1"]).await.unwrap()[0], Some(winner));
    assert_eq!(
        s.log_pending(None, 10).await.unwrap(),
        [
            ("rcpt_1/refund".to_owned(), b"refund".to_vec()),
            ("rcpt_2".to_owned(), b"two".to_vec())
        ]
    );
    assert_eq!(
        s.log_pending(Some("rcpt_1/refund"), 10).await.unwrap(),
        [("rcpt_2".to_owned(), b"two".to_vec())]
    );
    // An entry changed since it was read is not appended.
    let stale = Batch::new()
        .require_log_pending("rcpt_2", Some(b"other".to_vec()))
        .delete_log_pending("rcpt_2")
        .put_log_leaf(leaf_row(100, "rcpt_2"));
    let stale = s.apply(stale).await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed(0))),
        "{stale:?}"
    );
    assert_eq!(s.log_leaves(&["rcpt_2"]).await.unwrap()[0], None);

    // Leaves 0..600 in one batch beside the winner's: read by index, a range at a time, with
    // their hashes; a later version under one name is the one found; interior nodes by key.
    let mut batch = Batch::new();
    for leaf in (0..600).filter(|leaf| *leaf != winner) {
        batch = batch.put_log_leaf(leaf_row(leaf, &format!("rcpt_{}", 1000 + leaf)));
    }
    batch = batch.put_log_leaf(leaf_row(600, "rcpt_1"));
    batch = batch.put_log_node(1, 1, [7; 32]);
    s.apply(batch).await.unwrap();
    assert_eq!(s.log_leaves(&["rcpt_1"]).await.unwrap()[0], Some(600));
    // Any leaf of the batch (the winner's index holds rcpt_1's first version).
    let other = if winner == 5 { 6 } else { 5 };
    let name = format!("rcpt_{}", 1000 + other);
    assert_eq!(s.log_leaves(&[&name]).await.unwrap()[0], Some(other));
    assert_eq!(s.log_leaves(&["rcpt_1/refund"]).await.unwrap()[0], None);
    // A page of names in one read, each answered in its place.
    assert_eq!(
        (s.log_leaves(&[&name, "rcpt_1/refund", "rcpt_1", &name]))
            .await
            .unwrap(),
        [Some(other), None, Some(600), Some(other)]
    );
    assert_eq!(s.log_leaves(&[]).await.unwrap(), []);
    let entries = s.log_entries(250, 256).await.unwrap();
    assert_eq!(entries.len(), 256);
    for (at, (leaf, entry)) in (250..).zip(&entries) {
        assert_eq!((*leaf, entry), (at, &leaf_row(at, "").entry));
    }
    let hashes = s.log_nodes(0, 590, 256).await.unwrap();
    let found: Vec<u64> = hashes.iter().map(|(leaf, _)| *leaf).collect();
    assert_eq!(
        found,
        (590..=600).collect::<Vec<u64>>(),
        "those that are there"
    );
    assert_eq!(hashes[3].1, vec![593u64 as u8; 32]);
    assert_eq!(s.log_entries(601, 10).await.unwrap(), []);
    assert_eq!(
        s.log_nodes(1, 0, 256).await.unwrap(),
        [(1, vec![7; 32])],
        "an interior node"
    );
    assert_eq!(s.log_nodes(2, 0, 256).await.unwrap(), []);
    assert_eq!(
        s.log_nodes(1, 2, 256).await.unwrap(),
        [],
        "from an index on"
    );

    // The log's state: created once, then swapped only from what was read; sixteen appends
    // from one checkpoint, one wins.
    assert_eq!(s.log_state(LogState::Checkpoint).await.unwrap(), None);
    let start = |note: &[u8]| {
        Batch::new()
            .require_log_state(LogState::Checkpoint, None)
            .put_log_state(LogState::Checkpoint, note.to_vec())
            .put_log_state(LogState::Backfill, Vec::new())
    };
    s.apply(start(b"size 0")).await.unwrap();
    let again = s.apply(start(b"other")).await;
    assert!(
        matches!(again, Err(StoreError::ConditionFailed(0))),
        "{again:?}"
    );
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let append = Batch::new()
                    .require_log_state(LogState::Checkpoint, Some(b"size 0".to_vec()))
                    .require_log_state(LogState::Waiting, None)
                    .put_log_node(2, i as u64, [i as u8; 32])
                    .put_log_state(LogState::Checkpoint, format!("size {}", i + 1).into_bytes());
                (i, s.apply(append).await)
            })
        })
        .collect();
    let winner = only_winner(tasks).await;
    assert_eq!(
        s.log_state(LogState::Checkpoint).await.unwrap(),
        Some(format!("size {}", winner + 1).into_bytes())
    );
    assert_eq!(
        s.log_nodes(2, 0, 256).await.unwrap(),
        [(winner as u64, vec![winner as u8; 32])],
        "only the winner's node"
    );
    assert_eq!(
        s.log_state(LogState::Backfill).await.unwrap(),
        Some(Vec::new())
    );
    let done = Batch::new()
        .require_log_state(LogState::Backfill, Some(Vec::new()))
        .delete_log_state(LogState::Backfill);
    s.apply(done).await.unwrap();
    assert_eq!(s.log_state(LogState::Backfill).await.unwrap(), None);
    // Each record apart: the origin is none of the others.
    assert_eq!(s.log_state(LogState::Origin).await.unwrap(), None);
}
