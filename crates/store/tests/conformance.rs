//! The store conformance suite (`toolhost_testkit::conformance`: the behaviour every [`Store`]
//! engine must have) run against each engine: sled in process and PostgreSQL on a throwaway
//! cluster ([`PgCluster`]). `engine_suite!` turns the list of cases into one `#[tokio::test]`
//! per case and engine (`sled::*`, `postgres::*`). The PostgreSQL-only tests at the end cover
//! what sled has no counterpart for: several nodes, outages, migrations and the change table.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::time::timeout;

use toolhost_store::{Batch, PgOptions, PgStore, SledStore, Store, StoreError, Tree};
use toolhost_testkit::PgCluster;

use toolhost_testkit::conformance::{assert_quiet, endpoint_change, keys, receive, Shared};

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
                    toolhost_testkit::conformance::$case(Arc::clone(&engine.store)).await;
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
            many_keys_are_read_at_once_in_their_order,
            batch_is_all_or_nothing,
            staged_batches_are_visible_at_once_and_all_or_nothing,
            conditions_report_the_first_failing_index,
            conditions_leave_the_keys_they_name_as_they_were,
            later_writes_to_a_key_win_within_a_batch,
            scans_page_in_both_directions,
            scans_handle_0x00_and_0xff_bytes,
            empty_prefix_scans_the_whole_tree,
            scan_bounds_beyond_the_prefix,
            concurrent_claims_have_exactly_one_winner,
            wide_batches_keep_each_key_apart,
            overlapping_multi_key_claims_stay_all_or_nothing,
            logs_keep_the_newest_and_page_newest_first,
            logs_appended_at_once_keep_the_newest,
            logs_stored_late_are_pruned_in_time,
            events_page_by_time_and_endpoint_and_are_swept,
            quotes_are_kept_until_swept,
            sales_are_recorded_once_and_found_by_seller,
            sales_and_keys_commit_together,
            receipts_are_issued_once_read_and_swept,
            packets_are_found_by_id_and_by_builder,
            nonces_are_claimed_once_and_open_ones_found,
            payment_ids_are_reserved_once_and_taken_over_as_read,
            refunds_are_recorded_once_and_read_together,
            paid_out_marks_are_claimed_once_and_read_together,
            pending_settlements_are_concluded_once_and_paged,
            credits_are_issued_once_spent_as_read_and_listed,
            debts_are_found_by_builder_and_versions_move_once,
            refund_claims_are_made_once_and_concluded_as_read,
            revisions_are_kept_by_endpoint_newest_first_and_deleted_whole,
            payout_settings_are_each_builders_and_replaced_whole,
            endpoints_are_claimed_once_changed_as_read_and_published,
            deleted_slugs_are_reserved_as_read_and_owed_wipes_listed,
            builders_keys_are_issued_once_and_rotated_as_read,
            handler_entries_are_each_endpoints_and_spaces_and_listed_as_bytes,
            handler_usage_records_are_claimed_once_and_changed_as_read,
            secrets_are_each_endpoints_moved_as_read_and_deleted_whole,
            rollout_tallies_are_each_nodes_replaced_whole_and_deleted_by_endpoint,
            receipt_log_entries_are_appended_once_and_read_by_index_and_name,
            unsynced_batches_keep_their_conditions,
            concurrent_compare_and_swap_loses_no_update,
            single_key_batches_keep_their_conditions,
            large_values_round_trip,
            watched_writes_are_published_once,
        );
    )+};
}

every_engine!(sled, postgres);

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

/// Where the engine notifies, another node hears of a change as it commits: with both nodes'
/// polling set to an hour, every change still arrives (and in about a round trip: printed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_notified_changes_arrive_without_polling() {
    let url = fresh_url().await;
    let options = PgOptions {
        poll_interval: Duration::from_secs(3600),
        listening_poll_interval: Duration::from_secs(3600),
        ..PgOptions::default()
    };
    let a = PgStore::connect_with(&url, options.clone()).await.unwrap();
    let b = PgStore::connect_with(&url, options).await.unwrap();
    let listening = Instant::now() + Duration::from_secs(10);
    while !(a.notified() && b.notified()) {
        assert!(Instant::now() < listening, "the listeners did not start");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut seen_by_b = b.changes();
    let mut delays = Vec::new();
    for i in 0..20 {
        let key = format!("e{i}");
        let written = Instant::now();
        a.put(Tree::Endpoints, key.as_bytes(), b"v").await.unwrap();
        assert_eq!(receive(&mut seen_by_b, 1).await, [endpoint_change(&key)]);
        delays.push(written.elapsed());
    }
    // An unwatched tree notifies nobody.
    a.put(Tree::Logs, b"l", b"v").await.unwrap();
    assert_quiet(&mut seen_by_b, Duration::from_millis(300)).await;
    delays.sort();
    eprintln!(
        "a change reached the other node in {:?} (median of 20; min {:?}, max {:?})",
        delays[10], delays[0], delays[19]
    );
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
    // The poller is back too: another node's write arrives. Its listener reconnects a second
    // after the outage at the earliest, and a machine busy with other tests may take some
    // seconds more: the bound, as the reads' above, is for a feed that never resumes.
    let other = PgStore::connect(&cluster.url()).await.unwrap();
    other.put(Tree::Endpoints, b"e2", b"v").await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
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
    // Versions 1 to the last, each recorded once.
    let applied = "SELECT count(*) FROM toolhost_migrations";
    let last = "SELECT max(version)::BIGINT FROM toolhost_migrations";
    assert!(count(&client, last).await >= 3);
    assert_eq!(count(&client, applied).await, count(&client, last).await);
    assert_eq!(
        count(&client, "SELECT count(*) FROM toolhost_generations").await,
        Tree::ALL.iter().filter(|t| t.is_watched()).count() as i64
    );
    // A later start finds everything applied.
    stores.push(PgStore::connect(&url).await.unwrap());
    assert_eq!(count(&client, applied).await, count(&client, last).await);
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

/// A store whose pool has one connection: what one transaction leaves on it, the next meets.
async fn one_connection(url: &str) -> PgStore {
    let options = PgOptions {
        pool_size: 1,
        ..PgOptions::default()
    };
    PgStore::connect_with(url, options).await.unwrap()
}

/// A transaction's writes and its `COMMIT` are sent together (pipelined): a write the database
/// refuses mid-way (here a trigger on one key) aborts the transaction, and the `COMMIT` behind
/// it rolls everything back: no key of the batch lands, with or without conditions, on a fresh
/// connection (statements not yet prepared) or a used one, in a watched tree too. The
/// connection keeps serving afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_refused_write_rolls_the_whole_pipelined_batch_back() {
    let url = fresh_url().await;
    let store = one_connection(&url).await;
    sql(&url)
        .await
        .batch_execute(
            "CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN
               IF NEW.key = 'boom'::bytea THEN RAISE EXCEPTION 'refused'; END IF;
               RETURN NEW;
             END $$;
             CREATE TRIGGER refuse_boom BEFORE INSERT OR UPDATE ON toolhost_kv
               FOR EACH ROW EXECUTE FUNCTION refuse_boom();",
        )
        .await
        .unwrap();
    let batches = [
        // Without conditions: BEGIN, the writes and COMMIT in one round trip.
        Batch::new()
            .put(Tree::Ledger, b"a".to_vec(), b"1".to_vec())
            .put(Tree::Receipts, b"boom".to_vec(), b"x".to_vec())
            .put(Tree::Endpoints, b"e".to_vec(), b"v".to_vec()),
        // With conditions held first, the refused write after them.
        Batch::new()
            .require_absent(Tree::Nonces, b"n".to_vec())
            .put(Tree::Nonces, b"n".to_vec(), b"spent".to_vec())
            .put(Tree::Ledger, b"a".to_vec(), b"1".to_vec())
            .put(Tree::Receipts, b"boom".to_vec(), b"x".to_vec()),
        // The refusal in a claim itself.
        Batch::new()
            .require_absent(Tree::Receipts, b"boom".to_vec())
            .put(Tree::Receipts, b"boom".to_vec(), b"x".to_vec())
            .put(Tree::Ledger, b"a".to_vec(), b"1".to_vec()),
    ];
    for batch in batches {
        let refused = store.apply(batch).await;
        assert!(
            matches!(refused, Err(StoreError::Engine(ref why)) if why.contains("refused")),
            "{refused:?}"
        );
        for (tree, key) in [
            (Tree::Ledger, &b"a"[..]),
            (Tree::Receipts, b"boom"),
            (Tree::Endpoints, b"e"),
            (Tree::Nonces, b"n"),
        ] {
            assert_eq!(store.get(tree, key).await.unwrap(), None, "{tree:?}");
        }
        // The pool's one connection still serves, outside any transaction.
        store.put(Tree::Meta, b"after", b"ok").await.unwrap();
        assert_eq!(
            store.get(Tree::Meta, b"after").await.unwrap(),
            Some(b"ok".to_vec())
        );
    }
    let client = sql(&url).await;
    assert_eq!(
        count(&client, "SELECT count(*) FROM toolhost_changes").await,
        0
    );
    store.close().await.unwrap();
}

/// A caller that goes away while its transaction waits (here for a row another session holds)
/// leaves no transaction open on a pooled connection: the next write on the pool's one
/// connection is committed and seen by others, and the abandoned batch wrote nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_an_abandoned_transaction_never_reaches_the_next_caller() {
    let url = fresh_url().await;
    let store = one_connection(&url).await;
    store.put(Tree::Credits, b"balance", b"5").await.unwrap();
    let holder = sql(&url).await;
    holder
        .batch_execute(
            "BEGIN; SELECT 1 FROM toolhost_kv WHERE tree = 'credits' AND key = 'balance' \
             FOR UPDATE",
        )
        .await
        .unwrap();
    let waiting = store.apply(
        Batch::new()
            .require_equals(Tree::Credits, b"balance".to_vec(), Some(b"5".to_vec()))
            .put(Tree::Credits, b"balance".to_vec(), b"4".to_vec())
            .put(Tree::Ledger, b"spent".to_vec(), b"1".to_vec()),
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(300), waiting)
            .await
            .is_err(),
        "the batch should wait for the held row"
    );
    holder.batch_execute("ROLLBACK").await.unwrap();

    store.put(Tree::Meta, b"after", b"ok").await.unwrap();
    let seen = sql(&url).await;
    assert_eq!(
        count(
            &seen,
            "SELECT count(*) FROM toolhost_kv WHERE tree = 'meta' AND key = 'after'"
        )
        .await,
        1
    );
    assert_eq!(
        store.get(Tree::Credits, b"balance").await.unwrap(),
        Some(b"5".to_vec())
    );
    assert_eq!(store.get(Tree::Ledger, b"spent").await.unwrap(), None);
    store.close().await.unwrap();
}

/// Batches queued while the node's writer is busy are committed together, in one transaction
/// (their rows share the inserting transaction id, `xmin`), and each stays all or nothing on
/// its own: a member whose condition fails writes nothing, not even the keys it claimed
/// before its failing condition, while the others commit; a batch that touches a key of an
/// earlier one sees its write, as it would have alone; a delete reports what it found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_batches_queued_together_commit_together_each_all_or_nothing() {
    let url = fresh_url().await;
    let options = PgOptions {
        writers: 1,
        ..PgOptions::default()
    };
    let store = Arc::new(PgStore::connect_with(&url, options).await.unwrap());
    store.put(Tree::Credits, b"balance", b"5").await.unwrap();
    store.put(Tree::Nonces, b"taken", b"theirs").await.unwrap();
    store.put(Tree::Endpoints, b"gone", b"v").await.unwrap();
    // The one writer is held up by a batch waiting for a row another session holds, so the
    // batches after it queue.
    let holder = sql(&url).await;
    holder
        .batch_execute(
            "BEGIN; SELECT 1 FROM toolhost_kv WHERE tree = 'credits' AND key = 'balance' \
             FOR UPDATE",
        )
        .await
        .unwrap();
    let apply = |batch: Batch| {
        let store = Arc::clone(&store);
        tokio::spawn(async move { store.apply(batch).await })
    };
    let first = apply(
        Batch::new()
            .require_equals(Tree::Credits, b"balance".to_vec(), Some(b"5".to_vec()))
            .put(Tree::Credits, b"balance".to_vec(), b"4".to_vec()),
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    let claims: Vec<_> = (0..10)
        .map(|i| {
            let key = format!("n{i}").into_bytes();
            apply(Batch::new().require_absent(Tree::Nonces, key.clone()).put(
                Tree::Nonces,
                key,
                b"spent".to_vec(),
            ))
        })
        .collect();
    // Fails on its only condition: writes nothing.
    let lost = apply(
        Batch::new()
            .require_absent(Tree::Nonces, b"taken".to_vec())
            .put(Tree::Nonces, b"taken".to_vec(), b"mine".to_vec())
            .put(Tree::Ledger, b"lost".to_vec(), b"1".to_vec()),
    );
    // Claims a key, then fails on its second condition: the claim is undone.
    let half = apply(
        Batch::new()
            .require_absent(Tree::Nonces, b"a-first".to_vec())
            .require_absent(Tree::Nonces, b"taken".to_vec())
            .put(Tree::Nonces, b"a-first".to_vec(), b"mine".to_vec())
            .put(Tree::Ledger, b"half".to_vec(), b"1".to_vec()),
    );
    // Wants a key an earlier queued batch claims (queued after it): waits for it, then loses.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let later = apply(
        Batch::new()
            .require_absent(Tree::Nonces, b"n3".to_vec())
            .put(Tree::Nonces, b"n3".to_vec(), b"later".to_vec()),
    );
    let deleted = {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            let there = store.delete(Tree::Endpoints, b"gone").await;
            let absent = store.delete(Tree::Endpoints, b"never").await;
            (there, absent)
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    holder.batch_execute("ROLLBACK").await.unwrap();

    first.await.unwrap().unwrap();
    for claim in claims {
        claim.await.unwrap().unwrap();
    }
    assert!(matches!(
        lost.await.unwrap(),
        Err(StoreError::ConditionFailed(0))
    ));
    assert!(matches!(
        half.await.unwrap(),
        Err(StoreError::ConditionFailed(1))
    ));
    assert!(matches!(
        later.await.unwrap(),
        Err(StoreError::ConditionFailed(0))
    ));
    let (there, absent) = deleted.await.unwrap();
    assert!(there.unwrap());
    assert!(!absent.unwrap());

    let get = |tree, key: &'static [u8]| {
        let store = Arc::clone(&store);
        async move { store.get(tree, key).await.unwrap() }
    };
    assert_eq!(get(Tree::Credits, b"balance").await, Some(b"4".to_vec()));
    assert_eq!(get(Tree::Nonces, b"taken").await, Some(b"theirs".to_vec()));
    assert_eq!(get(Tree::Nonces, b"n3").await, Some(b"spent".to_vec()));
    for (tree, key) in [
        (Tree::Nonces, &b"a-first"[..]),
        (Tree::Ledger, b"lost"),
        (Tree::Ledger, b"half"),
        (Tree::Endpoints, b"gone"),
    ] {
        assert_eq!(get(tree, key).await, None, "{tree:?} {key:?}");
    }
    let client = sql(&url).await;
    assert_eq!(
        count(
            &client,
            "SELECT count(*) FROM toolhost_kv WHERE tree = 'nonces' AND substring(key FROM 1 FOR 1) = 'n'::BYTEA"
        )
        .await,
        10
    );
    // The ten claims queued together were one transaction.
    assert_eq!(
        count(
            &client,
            "SELECT count(DISTINCT xmin::TEXT) FROM toolhost_kv \
             WHERE tree = 'nonces' AND substring(key FROM 1 FOR 1) = 'n'::BYTEA"
        )
        .await,
        1
    );
    store.close().await.unwrap();
}

/// A group the database refuses for one member's write (a trigger on one key) is run again one
/// batch at a time: the refused batch gets the refusal and writes nothing, the batches queued
/// with it commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_refused_member_fails_alone() {
    let url = fresh_url().await;
    let options = PgOptions {
        writers: 1,
        ..PgOptions::default()
    };
    let store = Arc::new(PgStore::connect_with(&url, options).await.unwrap());
    store.put(Tree::Credits, b"balance", b"5").await.unwrap();
    let holder = sql(&url).await;
    holder
        .batch_execute(
            "CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN
               IF NEW.key = 'boom'::bytea THEN RAISE EXCEPTION 'refused'; END IF;
               RETURN NEW;
             END $$;
             CREATE TRIGGER refuse_boom BEFORE INSERT OR UPDATE ON toolhost_kv
               FOR EACH ROW EXECUTE FUNCTION refuse_boom();",
        )
        .await
        .unwrap();
    holder
        .batch_execute(
            "BEGIN; SELECT 1 FROM toolhost_kv WHERE tree = 'credits' AND key = 'balance' \
             FOR UPDATE",
        )
        .await
        .unwrap();
    let apply = |batch: Batch| {
        let store = Arc::clone(&store);
        tokio::spawn(async move { store.apply(batch).await })
    };
    let first = apply(
        Batch::new()
            .require_equals(Tree::Credits, b"balance".to_vec(), Some(b"5".to_vec()))
            .put(Tree::Credits, b"balance".to_vec(), b"4".to_vec()),
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    let good = apply(
        Batch::new()
            .require_absent(Tree::Nonces, b"good".to_vec())
            .put(Tree::Nonces, b"good".to_vec(), b"spent".to_vec())
            .put(Tree::Endpoints, b"e".to_vec(), b"v".to_vec()),
    );
    let refused = apply(
        Batch::new()
            .require_absent(Tree::Nonces, b"bad".to_vec())
            .put(Tree::Nonces, b"bad".to_vec(), b"spent".to_vec())
            .put(Tree::Receipts, b"boom".to_vec(), b"x".to_vec()),
    );
    let also_good = apply(Batch::new().put(Tree::Ledger, b"a".to_vec(), b"1".to_vec()));
    tokio::time::sleep(Duration::from_millis(300)).await;
    holder.batch_execute("ROLLBACK").await.unwrap();

    first.await.unwrap().unwrap();
    good.await.unwrap().unwrap();
    also_good.await.unwrap().unwrap();
    let refused = refused.await.unwrap();
    assert!(
        matches!(refused, Err(StoreError::Engine(ref why)) if why.contains("refused")),
        "{refused:?}"
    );
    assert_eq!(
        store.get(Tree::Nonces, b"good").await.unwrap(),
        Some(b"spent".to_vec())
    );
    assert_eq!(
        store.get(Tree::Endpoints, b"e").await.unwrap(),
        Some(b"v".to_vec())
    );
    assert_eq!(
        store.get(Tree::Ledger, b"a").await.unwrap(),
        Some(b"1".to_vec())
    );
    assert_eq!(store.get(Tree::Nonces, b"bad").await.unwrap(), None);
    assert_eq!(store.get(Tree::Receipts, b"boom").await.unwrap(), None);
    store.close().await.unwrap();
}
