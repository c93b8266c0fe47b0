//! A data dir written by an earlier release starts and serves on this one, from real fixtures
//! (`fixtures/upgrade/`, made by `make.sh` with that release's binary).
//!
//! `sled-fd63664`: the last release that kept handler data under slugs. Its builder's tool has
//! kv, an uploaded file, a file it wrote, logs and a secret, and there is a receipt; this
//! release moves the data under the endpoint's id at its first start (`handler_data::rekey`) and
//! must find all of it.
//!
//! `pg-7e73f01`: a database (a `pg_dump`) written by the last release that kept everything in
//! PostgreSQL's one key-value table. Its endpoint logs and builder events move to tables of
//! their own at the first start (the engine's migrations 2 and 3); the rest is found where it
//! was.
//!
//! `sled-cf3508f`, `pg-cf3508f`: a data dir and a database of the last release whose ledger
//! kept each sale only under its receipt id, with one sale of the builder's (a priced tool paid
//! by a developer credit), and a quote of that tool. At the first start the sales are copied
//! under their sellers (`SalesLedger::upgrade_sales`), and the builder's revenue counts the old
//! sale with new ones; on PostgreSQL the quote (made to last past the test) moves to its own
//! table (migration 4) and is honoured.
//!
//! `pg-e2feedf`: a database of the last release that kept sales in the key-value table (each
//! under its receipt id and again under its seller), quotes already in their own table. At the
//! first start its sales move to their own table (migration 5), their copies go, and the
//! builder's revenue counts the old sale with new ones. Its receipts move to their own table
//! (migration 6), a free call's told from paid ones, and its payout packet to its own (migration
//! 7), still listed for its builder and marked paid by its id.
//!
//! `pg-8610d92`, `sled-8610d92`: the last release that kept nonces in the key-value table,
//! with a call paid by x402. On PostgreSQL its nonces move to their table (migration 8) and its
//! receipt log's leaves and pending entries to theirs (migration 9).
//!
//! `pg-ce447eb`: the last release that kept payment identifiers in the key-value table, with a
//! call paid by x402 under one (by the reference JS client), and a refund. Its identifier moves
//! to its table (migration 11) and still answers a replay of that payment; its refund moves to
//! its table (migration 12) and still counts in the builder's revenue; its payout's mark on the
//! sale it paid moves to its table (migration 13) and keeps the sale out of the next payout.
//! Written into it as a release with a chain would have, a settlement not yet mined moves to
//! its table (migration 14) and keeps its sale pending. Its developer credit moves to the
//! credits' tables (migration 15), with a hold a dead call left, written into it as the
//! release wrote holds, which the start-up sweep gives back. A debt for a refund after payout,
//! written into it as the release wrote debts, and its packet's payout version move to theirs
//! (migration 16); an on-chain refund in flight, its claim written as a release with a chain
//! wrote them, to its own (migration 17), still holding its receipt. Its endpoints' revisions
//! move to their table (migration 18), listed and deployed on as before, and its builder's
//! payout settings to theirs (migration 19), and its endpoints' records to theirs (migration
//! 20), and its builder and its key to theirs (migration 21), still authenticating and
//! rotated on.
//!
//! `pg-7e73f01` also moves its tool's kv entries and files to their tables (migration 22),
//! where the tool goes on counting and reading them, their usage records and the builder's
//! totals to theirs (migration 23), and its secret to the secrets' table (migration 24), still
//! opened for the tool; a rollout's tally written into it as a release with rollouts wrote them
//! moves to its table (migration 25), and its free receipt's proof to the proofs' (migration
//! 26), its inclusion still served.

use std::path::Path;

use serde_json::{json, Value};

use toolhost_testkit::PgCluster;

use crate::util::node::Node;
use crate::util::{js_endpoint, read};

/// Unpacks fixture `name` into a new temporary dir; its data dir is `<dir>/data`.
fn unpack(name: &str) -> (tempfile::TempDir, Value) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/upgrade");
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(fixtures.join(format!("{name}.tar.gz")))
        .arg("-C")
        .arg(dir.path())
        .status()
        .expect("tar");
    assert!(status.success(), "unpacking {name}");
    let expected = std::fs::read_to_string(fixtures.join(format!("{name}.json"))).unwrap();
    (dir, serde_json::from_str(&expected).unwrap())
}

/// The receipt's inclusion in the log, once it is there (within 10 s).
async fn in_the_log(node: &Node, receipt_id: &str) -> Value {
    for _ in 0..200 {
        let (status, inclusion) = node
            .get(&format!("/ai/receipts/{receipt_id}/inclusion"))
            .await;
        if status == 200 {
            return inclusion;
        }
        assert_eq!(inclusion["error"]["code"], "not_in_log", "{inclusion}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!(
        "{receipt_id} never reached the receipt log:\n{}",
        node.log()
    );
}

async fn as_builder(node: &Node, key: &str, path: &str) -> Value {
    let response = node
        .client
        .get(node.url(path))
        .header("x-builder-key", key)
        .send()
        .await
        .unwrap();
    let (status, body) = read(response).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

/// The fixture's tool answers its `n`th call with the old release's count, files and secret;
/// its log holds the old release's entries and this one's; its receipt is served. Returns the
/// tool as its owner sees it.
async fn serves_the_keeper(node: &Node, expected: &Value, n: u64) -> Value {
    let key = expected["builderKey"].as_str().unwrap();
    let (status, answer) = node.post("/tools/keeper", &json!({})).await;
    assert_eq!(status, 200, "{answer}\n{}", node.log());
    assert_eq!(
        answer,
        json!({"n": n, "last": "call 2", "uploaded": "uploaded at create", "secret": true}),
        "the count, both files and the secret are the old release's"
    );
    let receipt_id = expected["receiptId"].as_str().unwrap();
    let (status, receipt) = node.get(&format!("/ai/receipts/{receipt_id}")).await;
    assert_eq!(status, 200, "{receipt}");
    assert_eq!(receipt["receiptId"], receipt_id);

    let logs = as_builder(node, key, "/ai/endpoints/keeper/logs").await;
    let calls: Vec<&str> = logs["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["lines"][0]["message"].as_str().unwrap_or_default())
        .collect();
    let counted: Vec<String> = (1..=n).rev().map(|i| format!("call {i}")).collect();
    assert_eq!(
        calls, counted,
        "the old release's log entries and this one's, newest first: {logs}"
    );
    let view = as_builder(node, key, "/ai/endpoints/keeper").await;
    let files: Vec<&str> = view["manage"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["notes/last.txt", "readme.txt"], "{view}");
    view
}

#[tokio::test]
async fn a_data_dir_of_the_slug_keyed_release_starts_and_serves_everything() {
    let (dir, expected) = unpack("sled-fd63664");
    let data = dir.path().join("data");
    let key = expected["builderKey"].as_str().unwrap();
    assert_eq!(
        expected["lastAnswer"]["n"], 2,
        "the fixture's tool counted to 2"
    );

    for n in [3, 4] {
        // Twice: the first start moves the data, the second finds it moved.
        let node = Node::start_in(&data, &[]);
        let view = serves_the_keeper(&node, &expected, n).await;

        let receipt_id = expected["receiptId"].as_str().unwrap();
        // The receipt log did not exist: the receipts stored before it are appended to it
        // (within seconds of the first start), once.
        let inclusion = in_the_log(&node, receipt_id).await;
        assert_eq!(
            (
                inclusion["leafIndex"].as_u64(),
                inclusion["treeSize"].as_u64()
            ),
            (Some(0), Some(1)),
            "{inclusion}"
        );

        // Stored before revisions were kept, the tool is recorded as its serving revision,
        // numbered as its old counter was; once, not again at the second start.
        let list = as_builder(&node, key, "/ai/endpoints/keeper/revisions").await;
        let serving = view["manage"]["revision"].as_u64().unwrap();
        assert!(serving >= 1, "{view}");
        assert_eq!(list["serving"], serving, "{list}");
        assert_eq!(
            list["revisions"].as_array().map(Vec::len),
            Some(1),
            "{list}"
        );
        assert_eq!(list["revisions"][0]["state"], "serving");
        assert_eq!(list["revisions"][0]["author"], "system");
        // Stored before owners were named, it names its builder now.
        assert!(view["endpoint"]["owner"]["name"].is_string(), "{view}");
        let first = as_builder(
            &node,
            key,
            &format!("/ai/endpoints/keeper/revisions/{serving}"),
        )
        .await;
        assert_eq!(
            first["content"]["source"], view["manage"]["source"],
            "{first}"
        );
        drop(node);
    }
}

/// Loads fixture `name` (a `pg_dump`) into a new database of the shared cluster; returns its
/// URL and what the fixture says the test should find.
/// How many keys of the key-value table's `ledger` tree start with `prefix`: what a migration
/// left behind.
async fn ledger_keys(db: &tokio_postgres::Client, prefix: &str) -> i64 {
    let sql = "SELECT count(*) FROM toolhost_kv WHERE tree = 'ledger' \
               AND substring(key FROM 1 FOR length($1::BYTEA)) = $1::BYTEA";
    let row = db.query_one(sql, &[&prefix.as_bytes()]).await.unwrap();
    row.get(0)
}

async fn load_database(name: &str) -> (String, Value) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/upgrade");
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join(format!("{name}.json"))).unwrap(),
    )
    .unwrap();
    let cluster = tokio::task::spawn_blocking(PgCluster::shared)
        .await
        .unwrap()
        .expect("a PostgreSQL cluster for the upgrade test");
    // A fixture may be loaded by more than one test of a run: a database each.
    static LOADED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = LOADED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let database = format!(
        "upgrade_{}_{}_{n}",
        name.replace('-', "_"),
        std::process::id()
    );
    let url = cluster.create_database(&database).unwrap();
    let dump = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(fixtures.join(format!("{name}.sql.gz")))
        .output()
        .unwrap()
        .stdout;
    let sql = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(sql.path(), dump).unwrap();
    let loaded = cluster
        .client_tool("psql")
        .args(["-q", "-v", "ON_ERROR_STOP=1", "-d", &url, "-f"])
        .arg(sql.path())
        .output()
        .unwrap();
    assert!(
        loaded.status.success(),
        "{}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    (url, expected)
}

#[tokio::test]
async fn a_database_of_the_key_value_release_starts_and_serves_everything() {
    let (url, expected) = load_database("pg-7e73f01").await;
    let (db, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    // A rollout's tallies shared the old logs tree, as a release with rollouts wrote them: the
    // logs move to their table (migration 2), the tally to its own (migration 25).
    db.execute(
        "INSERT INTO toolhost_kv VALUES ('logs', 'rollout/ep_x/node-1', '{\"rollout\":\"r1\"}')",
        &[],
    )
    .await
    .unwrap();
    let count = |sql: &'static str| {
        let db = &db;
        async move { db.query_one(sql, &[]).await.unwrap().get::<_, i64>(0) }
    };
    assert_eq!(
        count("SELECT count(*) FROM toolhost_kv WHERE tree = 'logs'").await,
        4,
        "the fixture's three entries and the tally"
    );
    let old_events = count("SELECT count(*) FROM toolhost_kv WHERE tree = 'events'").await;
    assert!(
        old_events >= 5,
        "the fixture's builder events: {old_events}"
    );
    let old_kv = count("SELECT count(*) FROM toolhost_kv WHERE tree = 'handler_kv'").await;
    assert!(old_kv >= 1, "the keeper's count");
    assert_eq!(
        count("SELECT count(*) FROM toolhost_kv WHERE tree = 'handler_files'").await,
        4,
        "the keeper's uploaded file and the one it wrote, and two seed tools' assets"
    );
    let usage = "SELECT count(*) FROM toolhost_kv WHERE tree = 'meta' \
                 AND key >= 'usage/'::BYTEA AND key < 'usage0'::BYTEA";
    let old_usage = count(usage).await;
    assert!(
        old_usage >= 2,
        "the keeper's kv and files usage: {old_usage}"
    );
    let totals = "SELECT count(*) FROM toolhost_kv WHERE tree = 'meta' \
                  AND key >= 'builder-usage/'::BYTEA AND key < 'builder-usage0'::BYTEA";
    assert!(count(totals).await >= 2, "the keeper's builder's totals");
    let old_secrets = count("SELECT count(*) FROM toolhost_kv WHERE tree = 'secrets'").await;
    assert!(old_secrets >= 1, "the keeper's secret");
    let proofs = "SELECT count(*) FROM toolhost_kv WHERE tree = 'receipt_proofs'";
    assert_eq!(count(proofs).await, 1, "the free receipt's proof");
    // A deleted endpoint's slug reservation and its owed wipe, as a release with them wrote
    // them (the fixture deleted none), and a kv entry the wipe is owed for: migration 28 moves
    // the two records, the reservation still refuses the slug to others, and the first
    // maintenance pass finishes the wipe.
    for (tree, key, value) in [
        (
            "meta",
            "slug-reserved/gone",
            r#"{"owner":{"kind":"builder","id":"bld_former"},"until":"2099-01-01T00:00:00Z"}"#,
        ),
        ("meta", "wipe-owed/ep_gone", "1"),
        ("handler_kv", "ep_gone/left", r#""behind""#),
    ] {
        db.execute(
            "INSERT INTO toolhost_kv VALUES ($1, convert_to($2, 'UTF8'), convert_to($3, 'UTF8'))",
            &[&tree, &key, &value],
        )
        .await
        .unwrap();
    }

    for n in [3, 4] {
        // Twice: the first start migrates, the second finds it done.
        let node = Node::start(&["--store", &url]);
        serves_the_keeper(&node, &expected, n).await;
        let key = expected["builderKey"].as_str().unwrap();
        let refused = (node.client.post(node.url("/ai/endpoints/create")))
            .header("x-builder-key", key)
            .json(&js_endpoint("gone"))
            .send()
            .await
            .unwrap();
        let (status, refused) = read(refused).await;
        assert_eq!(
            (status.as_u16(), &refused["error"]["code"]),
            (409, &json!("slug_reserved")),
            "{refused}"
        );
        // The node's first maintenance pass, at its start, finishes the wipe.
        let owed = "SELECT count(*) FROM toolhost_owed_wipes";
        for _ in 0..200 {
            if count(owed).await == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let receipt_id = expected["receiptId"].as_str().unwrap();
        let (status, proof) = node
            .get(&format!("/ai/receipts/{receipt_id}/inclusion"))
            .await;
        assert_eq!(status, 200, "{proof}");
        // The builder's feed: the old release's events (the tool's creation among them) and
        // this one's, for the tool alone too.
        let feed = as_builder(&node, key, "/ai/builders/events?since=3650d&limit=200").await;
        let kinds: Vec<&str> = (feed["events"].as_array().unwrap().iter())
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        assert!(kinds.contains(&"endpoint_created"), "{feed}");
        assert_eq!(
            kinds
                .iter()
                .filter(|k| **k == "invocation_succeeded")
                .count() as u64,
            n,
            "{feed}"
        );
        let of_keeper = as_builder(
            &node,
            key,
            "/ai/builders/events?since=3650d&limit=200&endpointSlug=keeper",
        )
        .await;
        assert_eq!(
            of_keeper["events"], feed["events"],
            "every event is the keeper's"
        );
        drop(node);
    }
    assert_eq!(
        count("SELECT count(*) FROM toolhost_kv WHERE tree = 'logs'").await,
        0,
        "the entries and the tally left the key-value table"
    );
    assert_eq!(
        count(
            "SELECT count(*) FROM toolhost_rollout_tallies \
             WHERE endpoint_id = 'ep_x' AND node_id = 'node-1' AND rollout = 'r1'"
        )
        .await,
        1
    );
    assert_eq!(
        count("SELECT count(*) FROM toolhost_kv WHERE tree = 'meta' AND key >= 'log_count/' AND key < 'log_count0'").await,
        0
    );
    assert!(count("SELECT count(*) FROM toolhost_logs").await >= 5);
    assert_eq!(
        count("SELECT count(*) FROM toolhost_kv WHERE tree = 'events'").await,
        0
    );
    assert!(count("SELECT count(*) FROM toolhost_events").await >= old_events + 2);
    // Handlers' entries and files moved to their tables (migration 22), each with its
    // endpoint's id, and were served from there above.
    assert_eq!(
        count("SELECT count(*) FROM toolhost_kv WHERE tree IN ('handler_kv', 'handler_files')")
            .await,
        0
    );
    assert!(count("SELECT count(*) FROM toolhost_handler_kv").await >= old_kv);
    assert_eq!(
        count("SELECT count(*) FROM toolhost_handler_files WHERE endpoint_id LIKE 'ep_%'").await,
        4
    );
    // And their usage records and the builder's totals to theirs (migration 23), the counts
    // as columns: the keeper's kv counts its one key.
    assert_eq!(count(usage).await + count(totals).await, 0);
    assert!(count("SELECT count(*) FROM toolhost_handler_usage").await >= old_usage);
    assert_eq!(
        count(
            "SELECT count(*) FROM toolhost_handler_usage u JOIN toolhost_endpoints e \
             ON e.endpoint_id = u.endpoint_id \
             WHERE e.slug = 'keeper' AND u.space = 'kv' AND u.entries = 1 AND u.builder IS NOT NULL"
        )
        .await,
        1
    );
    assert!(count("SELECT count(*) FROM toolhost_builder_usage WHERE entries > 0").await >= 2);
    // And the secrets to theirs (migration 24), still sealed under their keys: the keeper
    // answered with its secret above.
    assert_eq!(
        count("SELECT count(*) FROM toolhost_kv WHERE tree = 'secrets'").await,
        0
    );
    assert_eq!(
        count("SELECT count(*) FROM toolhost_secrets WHERE endpoint_id LIKE 'ep_%'").await,
        old_secrets
    );
    // And the free receipt's proof to its table (migration 26): its inclusion was served
    // from there above.
    assert_eq!(count(proofs).await, 0);
    let receipt_id = expected["receiptId"].as_str().unwrap();
    let moved = db
        .query_one(
            "SELECT count(*) FROM toolhost_receipt_proofs WHERE receipt_id = $1",
            &[&receipt_id],
        )
        .await
        .unwrap();
    assert_eq!(moved.get::<_, i64>(0), 1);
    // The reservation and the wipe moved (migration 28); the wipe was done.
    assert_eq!(
        count("SELECT count(*) FROM toolhost_slug_reservations WHERE slug = 'gone'").await,
        1
    );
    assert_eq!(count("SELECT count(*) FROM toolhost_owed_wipes").await, 0);
    assert_eq!(
        count("SELECT count(*) FROM toolhost_handler_kv WHERE endpoint_id = 'ep_gone'").await,
        0,
        "the owed wipe was done"
    );
    // And the receipt log's state to its table (migration 27): the key-value table keeps
    // nothing but the `meta` tree's service records.
    assert_eq!(
        count("SELECT count(*) FROM toolhost_kv WHERE tree <> 'meta'").await,
        0
    );
    assert_eq!(
        count("SELECT max(version)::BIGINT FROM toolhost_migrations").await,
        28
    );
}

/// Sells one more call of the fixture's priced tool (paid by a new developer credit) and
/// answers the builder's revenue report.
async fn sell_and_report(node: &Node, key: &str) -> Value {
    let (status, credit) = node
        .admin("POST", "/ai/admin/credits", Some(&json!({"amountUsd": 1})))
        .await;
    assert_eq!(status, 200, "{credit}");
    let response = node
        .client
        .post(node.url("/tools/priced"))
        .header(
            "x-developer-credit",
            credit["credit"]["token"].as_str().unwrap(),
        )
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let (status, body) = read(response).await;
    assert_eq!(status, 200, "{body}");
    as_builder(node, key, "/ai/builders/revenue?since=3650d").await
}

/// The builder's revenue on a ledger of the release before sales were copied under their
/// sellers: the old sale counts, with each new one, at the first start and the next; the old
/// quote, when `expected` names one, is honoured.
async fn old_sales_and_quote_are_found(start: impl Fn() -> Node, expected: &Value) {
    let key = expected["builderKey"].as_str().unwrap();
    assert!(expected["soldReceiptId"].is_string(), "{expected}");
    for (start_number, sold) in [(1, 2), (2, 3)] {
        let node = start();
        let report = sell_and_report(&node, key).await;
        assert_eq!(
            report["revenue"]["count"], sold,
            "start {start_number}: {report}"
        );
        assert_eq!(
            report["revenue"]["grossUnits"],
            (sold * 10_000).to_string(),
            "{report}"
        );
        if let Some(quote_id) = expected["quoteId"].as_str() {
            // Unpaid: the quote is honoured, and the call passes to the payment it lacks.
            // Unknown, it would be 404.
            let (status, body) = node
                .post(
                    "/ai/invoke",
                    &json!({"slug": "priced", "input": {}, "quoteId": quote_id}),
                )
                .await;
            assert_eq!(status, 402, "{body}");
        }
        drop(node);
    }
}

#[tokio::test]
async fn a_data_dir_of_the_release_before_sales_by_seller_keeps_its_sales() {
    let (dir, mut expected) = unpack("sled-cf3508f");
    let data = dir.path().join("data");
    // The fixture's quote expired long ago, and the first start's sweep removes it: sled keeps
    // quotes where every release did, so there is nothing of them to check here.
    expected["quoteId"] = Value::Null;
    old_sales_and_quote_are_found(|| Node::start_in(&data, &[]), &expected).await;
}

#[tokio::test]
async fn a_database_of_the_release_before_sales_by_seller_keeps_its_sales_and_quotes() {
    let (url, expected) = load_database("pg-cf3508f").await;
    // The fixture's quote expired long ago and the first start's sweep would remove it: it is
    // made to last a day longer, so the test can see migration 4 move it.
    let (db, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let tomorrow = time::OffsetDateTime::now_utc() + time::Duration::days(1);
    let tomorrow = tomorrow
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let moved = db
        .execute(
            "UPDATE toolhost_kv SET value = convert_to(jsonb_set(convert_from(value, 'UTF8')::JSONB, \
             '{expiresAt}', to_jsonb($1::TEXT))::TEXT, 'UTF8') WHERE tree = 'quotes'",
            &[&tomorrow],
        )
        .await
        .unwrap();
    assert_eq!(moved, 1, "the fixture's quote");
    old_sales_and_quote_are_found(|| Node::start(&["--store", &url]), &expected).await;
    sales_are_in_their_table(&db, &expected).await;
    let quotes = |sql: &'static str| {
        let db = &db;
        async move { db.query_one(sql, &[]).await.unwrap().get::<_, i64>(0) }
    };
    assert_eq!(quotes("SELECT count(*) FROM toolhost_quotes").await, 1);
    assert_eq!(
        quotes("SELECT count(*) FROM toolhost_kv WHERE tree = 'quotes'").await,
        0
    );
}

/// After [`old_sales_and_quote_are_found`]: the old sale and the two sold since are rows of
/// the sales table, with their columns, and nothing of them is left in the key-value table.
async fn sales_are_in_their_table(db: &tokio_postgres::Client, expected: &Value) {
    let rows = db
        .query(
            "SELECT receipt_id, seller, endpoint, amount, collection, entry FROM toolhost_sales \
             ORDER BY receipt_id",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 3);
    let old: &str = rows[0].get(0);
    assert_eq!(old, expected["soldReceiptId"].as_str().unwrap());
    for row in &rows {
        let entry: Value = serde_json::from_slice(row.get::<_, &[u8]>(5)).unwrap();
        assert_eq!(entry["receiptId"].as_str(), Some(row.get::<_, &str>(0)));
        assert_eq!(entry["seller"].as_str(), row.get::<_, Option<&str>>(1));
        assert!(entry["seller"].is_string(), "{entry}");
        assert_eq!(row.get::<_, Option<&str>>(2), Some("priced"));
        assert_eq!(row.get::<_, i64>(3), 10_000, "a cent in atomic units");
        assert_eq!(row.get::<_, Option<&str>>(4), Some("collected"));
    }
    let left: i64 = db
        .query_one(
            "SELECT count(*) FROM toolhost_kv WHERE tree = 'ledger' \
             AND (substring(key FROM 1 FOR 5) = 'sale/'::BYTEA \
                  OR substring(key FROM 1 FOR 10) = 'by_seller/'::BYTEA)",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(left, 0);
}

#[tokio::test]
async fn a_database_of_the_release_with_sales_in_the_key_value_table_keeps_them() {
    let (url, expected) = load_database("pg-e2feedf").await;
    let (db, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let count = |sql: &'static str| {
        let db = &db;
        async move { db.query_one(sql, &[]).await.unwrap().get::<_, i64>(0) }
    };
    // The old release's sale and its copy under its seller.
    assert_eq!(ledger_keys(&db, "sale/").await, 1);
    assert_eq!(ledger_keys(&db, "by_seller/").await, 1);
    // The fixture's quote expired long ago: it is made to last a day longer, to be honoured.
    let tomorrow = time::OffsetDateTime::now_utc() + time::Duration::days(1);
    let tomorrow_ms = (tomorrow.unix_timestamp_nanos() / 1_000_000) as i64;
    let tomorrow = tomorrow
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let moved = db
        .execute(
            "UPDATE toolhost_quotes SET expires_at_ms = $2, entry = convert_to(jsonb_set( \
             convert_from(entry, 'UTF8')::JSONB, '{expiresAt}', to_jsonb($1::TEXT))::TEXT, 'UTF8')",
            &[&tomorrow, &tomorrow_ms],
        )
        .await
        .unwrap();
    assert_eq!(moved, 1, "the fixture's quote");
    let old_receipts = count("SELECT count(*) FROM toolhost_kv WHERE tree = 'receipts'").await;
    assert_eq!(old_receipts, 2, "the free one and the sale's");
    old_sales_and_quote_are_found(|| Node::start(&["--store", &url]), &expected).await;
    sales_are_in_their_table(&db, &expected).await;
    // Receipts moved to their table (migration 6), each with its columns; two were made since.
    assert_eq!(
        count("SELECT count(*) FROM toolhost_kv WHERE tree = 'receipts'").await,
        0
    );
    assert_eq!(
        count("SELECT count(*) FROM toolhost_receipts").await,
        old_receipts + 2
    );
    let free = db
        .query_one(
            "SELECT free, endpoint, convert_from(entry, 'UTF8')::JSONB ->> 'issuedAt', \
             issued_at_ms FROM toolhost_receipts WHERE receipt_id = $1",
            &[&expected["receiptId"].as_str().unwrap()],
        )
        .await
        .unwrap();
    assert!(
        free.get::<_, bool>(0),
        "the receipt echo's is a free call's"
    );
    assert_eq!(free.get::<_, Option<&str>>(1), Some("receipt-echo"));
    let issued = time::OffsetDateTime::parse(
        free.get::<_, &str>(2),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert_eq!(
        free.get::<_, i64>(3),
        (issued.unix_timestamp_nanos() / 1_000_000) as i64
    );
    let sold = db
        .query_one(
            "SELECT free, endpoint FROM toolhost_receipts WHERE receipt_id = $1",
            &[&expected["soldReceiptId"].as_str().unwrap()],
        )
        .await
        .unwrap();
    assert!(
        !sold.get::<_, bool>(0),
        "a sale's receipt is not a free call's"
    );
    assert_eq!(sold.get::<_, Option<&str>>(1), Some("priced"));

    // The builder's payout packet moved to its table (migration 7): listed, and marked paid by
    // its id alone.
    assert_eq!(ledger_keys(&db, "packet/").await, 0);
    let packet_id = expected["packetId"].as_str().unwrap();
    let node = Node::start(&["--store", &url]);
    let key = expected["builderKey"].as_str().unwrap();
    let payouts = as_builder(&node, key, "/ai/builders/payouts").await;
    let listed: Vec<&str> = (payouts["packets"].as_array().unwrap().iter())
        .map(|p| p["packetId"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [packet_id], "{payouts}");
    let transaction = format!("0x{}", "ab".repeat(32));
    let (status, paid) = node
        .admin(
            "POST",
            &format!("/ai/admin/payouts/{packet_id}/paid"),
            Some(&json!({"transaction": transaction})),
        )
        .await;
    assert_eq!(status, 200, "{paid}");
    assert_eq!(paid["packet"]["status"], "paid");
    drop(node);
    let row = db
        .query_one(
            "SELECT builder, status FROM toolhost_packets WHERE packet_id = $1",
            &[&packet_id],
        )
        .await
        .unwrap();
    let builder = payouts["packets"][0]["builderId"].as_str();
    assert_eq!(row.get::<_, Option<&str>>(0), builder);
    assert_eq!(row.get::<_, Option<&str>>(1), Some("paid"));
}

/// Nonces as calls that died leave them, one of each form the release before wrote (a claim
/// record claimed long ago, one settling, a legacy claim, a burned nonce), with their keys.
fn open_forms() -> [(&'static str, Vec<u8>); 4] {
    use toolhost::payments::nonces::ClaimState;
    [
        ("84532/0xa/0xb/0x01", old_claim(ClaimState::Claimed)),
        ("84532/0xa/0xb/0x02", old_claim(ClaimState::Settling)),
        ("84532/0xa/0xb/0x03", b"pending/c0ffee".to_vec()),
        ("84532/0xa/0xb/0x04", b"failed/rcpt_x".to_vec()),
    ]
}

/// The fixture wallet's payment (`make.sh` pays with that key), signed again with the nonce of
/// `spent_key`, which the release before saw spent: refused as a used nonce.
async fn replaying_the_spent_payment_is_refused(node: &Node, spent_key: &str) {
    use alloy_primitives::B256;
    use toolhost::x402::schemes::exact_evm::signing::sign;
    use toolhost::x402::{config::NetworkConfig, PaymentRequirements};

    let wallet: alloy_signer_local::PrivateKeySigner =
        "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
            .parse()
            .unwrap();
    let nonce = spent_key
        .rsplit('/')
        .next()
        .unwrap()
        .parse::<B256>()
        .unwrap();
    let required =
        crate::util::payment_required(&node.client, &node.url("/tools/priced"), &json!({})).await;
    let requirement: PaymentRequirements =
        serde_json::from_value(required["accepts"][0].clone()).unwrap();
    let payload = sign(
        &wallet,
        &NetworkConfig::base_sepolia(),
        &requirement,
        |auth| auth.nonce = nonce.to_string(),
    )
    .unwrap();
    let wire = json!({"x402Version": 2, "resource": required["resource"],
        "accepted": requirement, "payload": payload});
    let replay = node
        .client
        .post(node.url("/tools/priced"))
        .header("payment-signature", toolhost::x402::header::encode(&wire))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let (status, body) = read(replay).await;
    crate::util::assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
}

/// A stored nonce entry as the release before wrote it: a claim record of a call that died long
/// ago, claimed or settling.
fn old_claim(state: toolhost::payments::nonces::ClaimState) -> Vec<u8> {
    use toolhost::payments::nonces::{ClaimRecord, SaleDraft, SettlingNote};
    let settling =
        (state == toolhost::payments::nonces::ClaimState::Settling).then(|| SettlingNote {
            transaction: None,
            receipt_id: "rcpt_01a2226173b8779eb64f0ad1483fa300".into(),
            request_sha256: String::new(),
            result_sha256: String::new(),
            x402_version: 2,
            marked_at_ms: 2,
            amount_units: None,
        });
    let record = ClaimRecord {
        claim_id: "c0ffee".into(),
        claimed_at_ms: 1,
        node: "node_old".into(),
        state,
        sale: SaleDraft {
            purpose: "invocation".into(),
            endpoint_slug: Some("priced".into()),
            seller: None,
            amount_units: 10_000,
            payer: "0x0000000000000000000000000000000000000001".into(),
            network: "eip155:84532".into(),
            chain_id: 84532,
            asset: "0x036cbd53842c5426634e7929541ec2318f3dcf7e".into(),
            pay_to: "0x0000000000000000000000000000000000000002".into(),
            nonce: format!("0x{}", "01".repeat(32)),
            permit2: false,
        },
        settling,
    };
    record.to_bytes().unwrap()
}

/// The release before nonces had a table of their own (pg-8610d92, with one call paid by x402):
/// its spent nonce moves with its state, so the payment it spent is refused by the new release
/// as it was by the old; nonces left open by calls that died (written here as that release
/// wrote them, one of each form) move as open ones, where recovery finds and resolves them.
#[tokio::test]
async fn a_database_of_the_release_with_nonces_in_the_key_value_table_keeps_them() {
    let (url, expected) = load_database("pg-8610d92").await;
    let (db, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let paid = expected["paidReceiptId"].as_str().unwrap();
    let spent = db
        .query(
            "SELECT convert_from(key, 'UTF8'), convert_from(value, 'UTF8') FROM toolhost_kv \
             WHERE tree = 'nonces'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(spent.len(), 1, "the x402 call's nonce");
    let spent_key: String = spent[0].get(0);
    assert_eq!(spent[0].get::<_, &str>(1), paid);
    let open = open_forms();
    for (key, value) in &open {
        db.execute(
            "INSERT INTO toolhost_kv (tree, key, value) VALUES ('nonces', convert_to($1, 'UTF8'), $2)",
            &[key, value],
        )
        .await
        .unwrap();
    }

    // A stored interior node of the log's tree, as a log of 256 leaves and more keeps them
    // (`hash/<level><index>`; the fixture's log is smaller): migration 27 moves it.
    db.execute(
        "INSERT INTO toolhost_kv (tree, key, value) \
         VALUES ('receipt_log', '\\x686173682f010000000000000000'::BYTEA, $1)",
        &[&[7u8; 32].as_slice()],
    )
    .await
    .unwrap();

    // Started on the new release: migration 8 moves them, and the start-up recovery pass finds
    // the open ones in their table (no chain to ask: the stale claim is released, the settling
    // one kept, the legacy one first seen now, so live).
    let node = Node::start(&["--store", &url]);
    let (status, receipt) = node.get(&format!("/ai/receipts/{paid}")).await;
    assert_eq!(status, 200, "{receipt}");
    let states = db
        .query(
            "SELECT nonce_key, state, entry FROM toolhost_nonces ORDER BY nonce_key",
            &[],
        )
        .await
        .unwrap();
    let states: Vec<(String, String, Vec<u8>)> = (states.iter())
        .map(|row| (row.get(0), row.get(1), row.get(2)))
        .collect();
    let mut want = vec![
        (
            "84532/0xa/0xb/0x02".to_owned(),
            "settling".to_owned(),
            open[1].1.clone(),
        ),
        (
            "84532/0xa/0xb/0x03".to_owned(),
            "legacy".to_owned(),
            open[2].1.clone(),
        ),
        (
            "84532/0xa/0xb/0x04".to_owned(),
            "failed".to_owned(),
            open[3].1.clone(),
        ),
        (
            spent_key.clone(),
            "spent".to_owned(),
            paid.as_bytes().to_vec(),
        ),
    ];
    want.sort();
    assert_eq!(
        states, want,
        "the stale claim released by recovery, the rest as they were"
    );
    let left = db
        .query_one(
            "SELECT count(*) FROM toolhost_kv WHERE tree = 'nonces'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(left.get::<_, i64>(0), 0);
    the_receipt_log_is_in_its_tables(&node, &db, &expected).await;
    sales_have_their_methods(&db, &expected).await;

    replaying_the_spent_payment_is_refused(&node, &spent_key).await;
    drop(node);
}

/// Migration 10 gave each sale its payment method as a column, read from its JSON: the
/// fixture's credit sale and its x402 one. The builder's revenue, summed by the database from
/// that column, counts both by method.
async fn sales_have_their_methods(db: &tokio_postgres::Client, expected: &Value) {
    let methods = db
        .query(
            "SELECT receipt_id, method FROM toolhost_sales ORDER BY receipt_id",
            &[],
        )
        .await
        .unwrap();
    let methods: Vec<(String, Option<String>)> =
        methods.iter().map(|row| (row.get(0), row.get(1))).collect();
    for (name, method) in [
        ("soldReceiptId", "developer_credit"),
        ("paidReceiptId", "x402"),
    ] {
        let receipt_id = expected[name].as_str().unwrap().to_owned();
        assert!(
            methods.contains(&(receipt_id, Some(method.to_owned()))),
            "{name}: {methods:?}"
        );
    }
    assert!(
        methods.iter().all(|(_, method)| method.is_some()),
        "{methods:?}"
    );
}

/// The release before the receipt log had tables of its own (pg-8610d92): migration 9 moved
/// its leaves (their entries, hashes and names) and pending entries out of the key-value
/// table, migration 27 its state (its origin and checkpoint) and interior nodes; the log opened
/// on them (its stored hashes make its signed root), and the paid receipts' places in it are
/// found by name and prove against its checkpoint.
async fn the_receipt_log_is_in_its_tables(
    node: &Node,
    db: &tokio_postgres::Client,
    expected: &Value,
) {
    let (_, manifest) = node.get("/ai/manifest").await;
    let key = manifest["receipts"]["log"]["verifierKey"].as_str().unwrap();
    let verifier = toolhost_tlog::Verifier::parse(key).unwrap();
    let leaves: i64 = (db
        .query_one("SELECT count(*) FROM toolhost_log_leaves", &[])
        .await)
        .unwrap()
        .get(0);
    let mut found = Vec::new();
    for name in ["soldReceiptId", "paidReceiptId"] {
        let receipt_id = expected[name].as_str().unwrap();
        let (status, receipt) = node.get(&format!("/ai/receipts/{receipt_id}")).await;
        assert_eq!(status, 200, "{receipt}");
        let inclusion = in_the_log(node, receipt_id).await;
        crate::receipt_log::check(&verifier, &receipt, &inclusion);
        let row = db
            .query_one(
                "SELECT leaf FROM toolhost_log_leaves WHERE name = $1",
                &[&receipt_id],
            )
            .await
            .unwrap();
        assert_eq!(
            row.get::<_, i64>(0) as u64,
            inclusion["leafIndex"].as_u64().unwrap()
        );
        found.push(inclusion["leafIndex"].as_u64().unwrap());
    }
    assert!(
        found.iter().all(|leaf| (*leaf as i64) < leaves),
        "the fixture's leaves {found:?}, of {leaves} moved"
    );
    let left: i64 = db
        .query_one(
            "SELECT count(*) FROM toolhost_kv WHERE tree = 'receipt_log'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "the log's records left the key-value table");
    let state = db
        .query(
            "SELECT name FROM toolhost_log_state WHERE name IN ('origin', 'checkpoint') \
             ORDER BY name",
            &[],
        )
        .await
        .unwrap();
    let state: Vec<&str> = state.iter().map(|row| row.get(0)).collect();
    assert_eq!(state, ["checkpoint", "origin"]);
    let node = db
        .query_one(
            "SELECT level, node_index, entry FROM toolhost_log_nodes \
             WHERE node = '\\x686173682f010000000000000000'::BYTEA",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (node.get::<_, i64>(0), node.get::<_, i64>(1)),
        (1, 0),
        "the node's level and index, read from its key"
    );
    assert_eq!(node.get::<_, Vec<u8>>(2), vec![7u8; 32]);
}

/// The release before sled indexed its open nonces (sled-8610d92, with one call paid by x402):
/// the first start indexes the open ones it left, so the start-up recovery pass finds them
/// (on the embedded store every claim is resolved at start, whatever its age: without a chain
/// to ask, the claimed one and the legacy one are released, the settling one kept), and the
/// spent nonce still refuses its payment.
#[tokio::test]
async fn a_data_dir_of_the_release_before_the_open_nonce_index_keeps_its_nonces() {
    use toolhost::store::{NonceClaims, SledStore, Store, Tree};

    let (dir, expected) = unpack("sled-8610d92");
    let data = dir.path().join("data");
    let paid = expected["paidReceiptId"].as_str().unwrap();
    let spent_key = {
        let store = SledStore::open(&data.join("store")).unwrap();
        let nonces = store
            .scan_prefix(Tree::Nonces, b"", None, 10)
            .await
            .unwrap();
        assert_eq!(nonces.len(), 1, "the x402 call's nonce");
        assert_eq!(nonces[0].1, paid.as_bytes());
        for (key, value) in open_forms() {
            store
                .put(Tree::Nonces, key.as_bytes(), &value)
                .await
                .unwrap();
        }
        store.close().await.unwrap();
        String::from_utf8(nonces[0].0.clone()).unwrap()
    };

    let node = Node::start_in(&data, &[]);
    let (status, receipt) = node.get(&format!("/ai/receipts/{paid}")).await;
    assert_eq!(status, 200, "{receipt}");
    replaying_the_spent_payment_is_refused(&node, &spent_key).await;
    drop(node);

    let store = SledStore::open(&data.join("store")).unwrap();
    let open: Vec<String> = (store.open_nonces(None, 10).await.unwrap().into_iter())
        .map(|(key, _)| key)
        .collect();
    assert_eq!(open, ["84532/0xa/0xb/0x02"], "the settling claim, kept");
    for (key, left) in [
        ("84532/0xa/0xb/0x01", None),
        ("84532/0xa/0xb/0x03", None),
        ("84532/0xa/0xb/0x04", Some(b"failed/rcpt_x".to_vec())),
        (spent_key.as_str(), Some(paid.as_bytes().to_vec())),
    ] {
        assert_eq!(store.nonce(key).await.unwrap(), left, "{key}");
    }
    store.close().await.unwrap();
}

/// The release before payment identifiers had a table of their own (pg-ce447eb, with a call
/// paid by x402 under an identifier by the reference JS client): migration 11 moves the record,
/// its payer, its answer and when it was reserved as columns. The very payment sent again gets
/// the first answer from the moved record (nothing charged again), and another payment of that
/// payer under the id is refused as the id's conflict.
#[tokio::test]
async fn a_database_of_the_release_with_payment_ids_in_the_key_value_table_keeps_them() {
    let (url, expected) = load_database("pg-ce447eb").await;
    let (db, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let with_id = &expected["paidWithId"];
    let id = with_id["id"].as_str().unwrap();
    let count = |sql: &'static str| {
        let db = &db;
        async move { db.query_one(sql, &[]).await.unwrap().get::<_, i64>(0) }
    };
    assert_eq!(
        count("SELECT count(*) FROM toolhost_kv WHERE tree = 'payment_ids'").await,
        1,
        "the fixture's identifier, where the release kept it"
    );

    let credit = a_stale_hold_left_on_the_credit(&db).await;
    let revisions = count("SELECT count(*) FROM toolhost_kv WHERE tree = 'revisions'").await;
    assert!(
        revisions >= 2,
        "the keeper's and the priced tool's: {revisions}"
    );
    assert_eq!(
        ledger_keys(&db, "settings/").await,
        1,
        "the builder's payout settings"
    );
    let endpoints = count("SELECT count(*) FROM toolhost_kv WHERE tree = 'endpoints'").await;
    assert_eq!(endpoints, revisions, "a revision of each endpoint");

    let node = Node::start(&["--store", &url]);
    serves_the_keeper(&node, &expected, 3).await;
    the_revisions_are_in_their_table(&node, &db, &expected, revisions).await;
    the_payout_settings_are_in_their_table(&node, &db, &expected).await;
    the_endpoints_are_in_their_table(&node, &db, endpoints).await;
    let rows = db
        .query(
            "SELECT payment_key, payer, answered, created_at_ms, entry FROM toolhost_payment_ids",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let wallet: alloy_signer_local::PrivateKeySigner =
        "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
            .parse()
            .unwrap();
    let payer = wallet.address().to_string().to_ascii_lowercase();
    assert_eq!(rows[0].get::<_, &str>(0), format!("{payer}/{id}"));
    assert_eq!(rows[0].get::<_, &str>(1), payer);
    assert!(rows[0].get::<_, bool>(2), "answered");
    let reserved = rows[0].get::<_, i64>(3);
    let entry: Value = serde_json::from_slice(rows[0].get::<_, &[u8]>(4)).unwrap();
    assert_eq!(entry["createdAtMs"], json!(reserved));
    assert!(reserved > 1_700_000_000_000, "{reserved}");
    assert_eq!(
        entry["answer"]["receipt"]["receiptId"],
        with_id["receiptId"]
    );
    assert_eq!(
        count("SELECT count(*) FROM toolhost_kv WHERE tree = 'payment_ids'").await,
        0
    );

    // The very payment again: the first answer, from the moved record.
    let sales = count("SELECT count(*) FROM toolhost_sales").await;
    let again = node
        .client
        .post(node.url("/tools/priced"))
        .header(
            "payment-signature",
            with_id["paymentSignature"].as_str().unwrap(),
        )
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let receipt_id = again.headers().get("x-receipt-id").cloned();
    let (status, body) = read(again).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        receipt_id.as_ref().and_then(|id| id.to_str().ok()),
        with_id["receiptId"].as_str(),
        "{body}"
    );
    assert_eq!(
        count("SELECT count(*) FROM toolhost_sales").await,
        sales,
        "a replay sells nothing"
    );

    // Another payment of the payer's under the id: the id's conflict.
    let required =
        crate::util::payment_required(&node.client, &node.url("/tools/priced"), &json!({})).await;
    let (header, value) = crate::payment_ids::pay_with_id(&wallet, &required, id);
    let other = node
        .client
        .post(node.url("/tools/priced"))
        .header(header, value)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let (status, body) = read(other).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        body["error"]["code"], "payment_identifier_conflict",
        "{body}"
    );

    the_refund_is_in_its_table(&node, &db, &expected).await;
    the_paid_out_mark_is_in_its_table(&node, &db, &expected).await;
    the_credit_is_in_its_tables(&node, &db, &credit).await;
    // Last: it rotates the fixture's builder key.
    the_builder_and_its_key_are_in_their_tables(&node, &db, &expected).await;
    drop(node);
}

/// Migration 21 moved pg-ce447eb's builder and its key's entry to their tables (the key's
/// builder and whether it is revoked as columns), none left in the key-value table; the key
/// authenticated every call above. Rotated, the old key is refused as revoked, the new one
/// serves, and the table holds both, the old one marked revoked.
async fn the_builder_and_its_key_are_in_their_tables(
    node: &Node,
    db: &tokio_postgres::Client,
    expected: &Value,
) {
    let count =
        |sql: &'static str| async move { db.query_one(sql, &[]).await.unwrap().get::<_, i64>(0) };
    assert_eq!(
        count("SELECT count(*) FROM toolhost_kv WHERE tree = 'builders'").await,
        0
    );
    let builders = db
        .query("SELECT builder_id, entry FROM toolhost_builders", &[])
        .await
        .unwrap();
    assert_eq!(builders.len(), 1);
    let builder_id = builders[0].get::<_, &str>(0);
    let record: Value = serde_json::from_slice(builders[0].get::<_, &[u8]>(1)).unwrap();
    assert_eq!(record["id"], builder_id);
    let keys_of = "SELECT key_sha256, builder_id, revoked FROM toolhost_builder_keys \
                   ORDER BY revoked";
    let keys = db.query(keys_of, &[]).await.unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].get::<_, &str>(0), record["keyHash"]);
    assert_eq!(keys[0].get::<_, &str>(1), builder_id);
    assert!(!keys[0].get::<_, bool>(2));

    let old_key = expected["builderKey"].as_str().unwrap();
    let rotate = |key: &str| {
        node.client
            .post(node.url("/ai/builders/keys/rotate"))
            .header("x-builder-key", key)
            .send()
    };
    let (status, issued) = read(rotate(old_key).await.unwrap()).await;
    assert_eq!(status, 200, "{issued}");
    let new_key = issued["builderKey"].as_str().unwrap();
    let (status, refused) = read(rotate(old_key).await.unwrap()).await;
    assert_eq!(status, 401, "{refused}");
    assert_eq!(refused["error"]["code"], "builder_key_revoked", "{refused}");
    let view = as_builder(node, new_key, "/ai/endpoints/keeper").await;
    assert_eq!(view["endpoint"]["slug"], "keeper", "{view}");
    let keys = db.query(keys_of, &[]).await.unwrap();
    let revoked: Vec<(bool, &str)> = (keys.iter()).map(|row| (row.get(2), row.get(1))).collect();
    assert_eq!(revoked, [(false, builder_id), (true, builder_id)]);
}

/// Migration 18 moved every revision of pg-ce447eb (one of each endpoint) to its table, its
/// endpoint and number columns of their own, none left in the key-value table: the keeper's
/// owner lists its first revision with its source, and a deploy makes the second beside it.
async fn the_revisions_are_in_their_table(
    node: &Node,
    db: &tokio_postgres::Client,
    expected: &Value,
    revisions: i64,
) {
    let kv = "SELECT count(*) FROM toolhost_kv WHERE tree = 'revisions'";
    assert_eq!(db.query_one(kv, &[]).await.unwrap().get::<_, i64>(0), 0);
    let rows = db
        .query(
            "SELECT revision_key, endpoint_id, number FROM toolhost_revisions",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len() as i64, revisions);
    for row in &rows {
        let (key, endpoint, number) = (
            row.get::<_, &str>(0),
            row.get::<_, &str>(1),
            row.get::<_, i64>(2),
        );
        assert_eq!(key, format!("{endpoint}/{number:020}"));
        assert!(endpoint.starts_with("ep_") && number == 1, "{key}");
    }
    let key = expected["builderKey"].as_str().unwrap();
    let view = as_builder(node, key, "/ai/endpoints/keeper").await;
    let list = as_builder(node, key, "/ai/endpoints/keeper/revisions").await;
    assert_eq!(list["revisions"][0]["revision"], 1, "{list}");
    assert_eq!(list["revisions"][0]["author"], "owner", "{list}");
    let first = as_builder(node, key, "/ai/endpoints/keeper/revisions/1").await;
    assert_eq!(first["content"]["source"], view["manage"]["source"]);
    let deployed = node
        .client
        .patch(node.url("/ai/endpoints/keeper"))
        .header("x-builder-key", key)
        .json(&json!({"description": "Keeps a count, deployed again."}))
        .send()
        .await
        .unwrap();
    let (status, body) = read(deployed).await;
    assert_eq!(status, 200, "{body}");
    let list = as_builder(node, key, "/ai/endpoints/keeper/revisions").await;
    let numbers: Vec<u64> = (list["revisions"].as_array().unwrap().iter())
        .map(|r| r["revision"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [2, 1], "{list}");
}

/// Migration 20 moved every endpoint's record to its table, under its slug with its id and
/// owning builder as columns (the seeded catalog's owned by nobody), none left in the
/// key-value table; the catalog lists them all.
async fn the_endpoints_are_in_their_table(
    node: &Node,
    db: &tokio_postgres::Client,
    endpoints: i64,
) {
    let kv = "SELECT count(*) FROM toolhost_kv WHERE tree = 'endpoints'";
    assert_eq!(db.query_one(kv, &[]).await.unwrap().get::<_, i64>(0), 0);
    let rows = db
        .query(
            "SELECT slug, endpoint_id, builder, entry FROM toolhost_endpoints ORDER BY slug",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len() as i64, endpoints);
    for row in &rows {
        let entry: Value = serde_json::from_slice(row.get::<_, &[u8]>(3)).unwrap();
        assert_eq!(entry["slug"], row.get::<_, &str>(0));
        assert_eq!(entry["id"], row.get::<_, &str>(1));
        let owner = (entry["owner"]["kind"] == "builder").then(|| entry["owner"]["id"].clone());
        assert_eq!(owner, row.get::<_, Option<&str>>(2).map(Value::from));
    }
    let owned: Vec<&str> = (rows.iter())
        .filter(|row| row.get::<_, Option<&str>>(2).is_some())
        .map(|row| row.get::<_, &str>(0))
        .collect();
    assert_eq!(owned, ["keeper", "priced"]);
    let (status, catalog) = node.get("/ai/endpoints?limit=100").await;
    assert_eq!(status, 200, "{catalog}");
    let listed = catalog["endpoints"].as_array().map_or(0, Vec::len);
    assert_eq!(listed as i64, endpoints, "{catalog}");
}

/// Migration 19 moved the builder's payout settings (saved before its packet) to their table,
/// the address and network as columns; the builder reads them as saved, and saves new ones.
async fn the_payout_settings_are_in_their_table(
    node: &Node,
    db: &tokio_postgres::Client,
    expected: &Value,
) {
    assert_eq!(ledger_keys(db, "settings/").await, 0);
    let rows = db
        .query(
            "SELECT builder, pay_to, network, entry FROM toolhost_payout_settings",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let entry: Value = serde_json::from_slice(rows[0].get::<_, &[u8]>(3)).unwrap();
    assert!(rows[0].get::<_, &str>(0).starts_with("bld_"));
    assert_eq!(entry["payTo"], rows[0].get::<_, &str>(1));
    assert_eq!(entry["network"], rows[0].get::<_, &str>(2));
    let key = expected["builderKey"].as_str().unwrap();
    let saved = as_builder(node, key, "/ai/builders/payout-settings").await;
    assert_eq!(saved["payoutSettings"], entry, "{saved}");
    let mut changed = entry.clone();
    changed["minimumUsd"] = json!(2);
    let answer = node
        .client
        .post(node.url("/ai/builders/payout-settings"))
        .header("x-builder-key", key)
        .json(&changed)
        .send()
        .await
        .unwrap();
    let (status, body) = read(answer).await;
    assert_eq!(status, 200, "{body}");
    let saved = as_builder(node, key, "/ai/builders/payout-settings").await;
    assert_eq!(saved["payoutSettings"]["minimumUsd"], 2, "{saved}");
}

/// pg-ce447eb's developer credit as that release kept it (granted 1 USD, less the credit sale
/// and plus its refund: 994,000 units left), with a hold of 1,000 units that a call which died
/// between reserve and settle left on it, written here as the release wrote holds (the hold's
/// JSON under `hold/{holdId}`, taken from the balance). Returns the credit's id and its
/// token's digest.
async fn a_stale_hold_left_on_the_credit(db: &tokio_postgres::Client) -> (String, String) {
    let rows = db
        .query(
            "SELECT key, value FROM toolhost_kv WHERE tree = 'credits' ORDER BY key",
            &[],
        )
        .await
        .unwrap();
    let rows: Vec<(String, String)> = (rows.iter())
        .map(|row| {
            let text = |i| String::from_utf8(row.get::<_, Vec<u8>>(i)).unwrap();
            (text(0), text(1))
        })
        .collect();
    let [(balance, units), (grant, _), (token, named)] = &rows[..] else {
        panic!("the fixture's one credit: {rows:?}")
    };
    let id = grant.strip_prefix("grant/").unwrap().to_owned();
    assert_eq!(
        (balance.as_str(), units.as_str()),
        (&*format!("balance/{id}"), "994000")
    );
    assert_eq!(named, &id);
    let hold = json!({"creditId": id, "units": 1000, "heldAt": "2026-11-29T08:00:00Z"});
    let holds = "INSERT INTO toolhost_kv (tree, key, value) VALUES ('credits', $1, $2)";
    let (key, value) = (b"hold/hold_died".to_vec(), hold.to_string().into_bytes());
    db.execute(holds, &[&key, &value]).await.unwrap();
    let taken = "UPDATE toolhost_kv SET value = '993000'::BYTEA \
                 WHERE tree = 'credits' AND key = $1";
    db.execute(taken, &[&balance.as_bytes()]).await.unwrap();
    (id, token.strip_prefix("token/").unwrap().to_owned())
}

/// Migration 15 moved the credit to its tables: the grant with its token's digest, the
/// balance with its units, the hold with its credit; none of it is left in the key-value
/// table. The start-up sweep found the hold stale and gave it back: the admin's listing shows
/// the credit whole again.
async fn the_credit_is_in_its_tables(
    node: &Node,
    db: &tokio_postgres::Client,
    credit: &(String, String),
) {
    let (id, digest) = credit;
    let grants = db
        .query("SELECT credit_id, token_sha256 FROM toolhost_credits", &[])
        .await
        .unwrap();
    let grants: Vec<(String, String)> = grants.iter().map(|row| (row.get(0), row.get(1))).collect();
    assert_eq!(grants, [(id.clone(), digest.clone())]);
    let left = db
        .query_one(
            "SELECT count(*) FROM toolhost_kv WHERE tree = 'credits'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(left.get::<_, i64>(0), 0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (status, listed) = node.admin("GET", "/ai/admin/credits", None).await;
        assert_eq!(status, 200, "{listed}");
        let credit = (listed["credits"].as_array().unwrap().iter())
            .find(|credit| credit["creditId"] == id.as_str())
            .cloned()
            .unwrap_or_else(|| panic!("the fixture's credit is listed: {listed}"));
        let holds = db
            .query_one("SELECT count(*) FROM toolhost_credit_holds", &[])
            .await
            .unwrap()
            .get::<_, i64>(0);
        if credit["balanceUnits"] == "994000" && holds == 0 {
            let balance = db
                .query_one(
                    "SELECT units FROM toolhost_credit_balances WHERE credit_id = $1",
                    &[id],
                )
                .await
                .unwrap();
            assert_eq!(balance.get::<_, i64>(0), 994_000);
            break;
        }
        assert_eq!(
            credit["balanceUnits"], "993000",
            "held until swept: {credit}"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "the stale hold was given back: {credit}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// A settlement broadcast but not yet mined, as a release with a chain wrote it (pg-ce447eb's
/// ran without one, so it is written here into the loaded database, as that release would
/// have: the sale `pending`, and its entry under `pending/{receiptId}` in the ledger):
/// migration 14 moves the entry to its table, and the sale stays pending, reported as such and
/// held out of payouts, until the reconciler concludes it.
#[tokio::test]
async fn a_database_of_the_release_with_pending_settlements_in_the_key_value_table_keeps_them() {
    use toolhost::payments::recovery::PendingSettlement;

    let (url, expected) = load_database("pg-ce447eb").await;
    let (db, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let receipt_id = expected["paidWithId"]["receiptId"].as_str().unwrap();
    let pending = PendingSettlement {
        receipt_id: receipt_id.to_owned(),
        transaction: format!("0x{}", "ab".repeat(32)),
        asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e".into(),
        payer: "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23".into(),
        pay_to: "0xB91aE389Fc638A3f5C8F93968Aa13382EA69447C".into(),
        amount_units: 10_000,
        nonce: format!("0x{}", "01".repeat(32)),
        since_ms: 1_795_000_000_000,
        permit2: false,
    };
    let entry = serde_json::to_vec(&pending).unwrap();
    let made_pending = db
        .execute(
            "UPDATE toolhost_sales SET collection = 'pending', \
                 entry = convert_to(jsonb_set(convert_from(entry, 'UTF8')::JSONB, \
                     '{collection}', '\"pending\"')::TEXT, 'UTF8') \
             WHERE receipt_id = $1",
            &[&receipt_id],
        )
        .await
        .unwrap();
    assert_eq!(made_pending, 1);
    let key = [b"pending/".as_slice(), receipt_id.as_bytes()].concat();
    db.execute(
        "INSERT INTO toolhost_kv (tree, key, value) VALUES ('ledger', $1, $2)",
        &[&key, &entry],
    )
    .await
    .unwrap();
    let builder = a_debt_for_a_refund_after_payout(&db, &expected).await;
    let in_flight = a_refund_transfer_in_flight(&db, &expected).await;

    let node = Node::start(&["--store", &url]);
    serves_the_keeper(&node, &expected, 3).await;
    the_debt_and_the_payout_version_are_in_their_tables(&node, &db, &expected, &builder).await;
    the_refund_claim_is_in_its_table(&node, &db, &expected, &in_flight).await;
    let rows = db
        .query(
            "SELECT receipt_id, entry FROM toolhost_pending_settlements",
            &[],
        )
        .await
        .unwrap();
    let rows: Vec<(String, Vec<u8>)> = rows.iter().map(|row| (row.get(0), row.get(1))).collect();
    assert_eq!(rows, [(receipt_id.to_owned(), entry)]);
    assert_eq!(ledger_keys(&db, "pending/").await, 0);

    // Summed by the database with the table joined: one x402 sale pending on-chain, the
    // other recorded only; neither collected, so neither is payable.
    let key = expected["builderKey"].as_str().unwrap();
    let revenue = as_builder(&node, key, "/ai/builders/revenue?since=3650d").await;
    let revenue = &revenue["revenue"];
    let part = |part: &Value| (part["grossUnits"].clone(), part["count"].clone());
    assert_eq!(
        part(&revenue["uncollectedByState"]["pending"]),
        (json!("10000"), json!(1)),
        "{revenue}"
    );
    assert_eq!(
        part(&revenue["byPaymentMethod"]["x402OnChain"]),
        (json!("10000"), json!(1)),
        "{revenue}"
    );
    assert_eq!(
        part(&revenue["byPaymentMethod"]["x402Recorded"]),
        (json!("10000"), json!(1)),
        "{revenue}"
    );
    let view = as_builder(&node, key, "/ai/builders/payouts").await;
    assert_eq!(
        (&view["unpaidReceipts"], &view["uncollectedReceipts"]),
        (&json!(0), &json!(2)),
        "{view}"
    );
    drop(node);
}

/// A refund of the other x402 sale (`paidReceiptId`) whose transfer back was broadcast and not
/// yet mined, as a release with a chain wrote its claim (`refunding/{receiptId}` in the
/// ledger). Returns the claim.
async fn a_refund_transfer_in_flight(db: &tokio_postgres::Client, expected: &Value) -> Vec<u8> {
    use toolhost::payments::refunds::on_chain::RefundClaim;
    use toolhost::receipts::PaymentMethod;
    use toolhost::revenue::{refunds::Refund, Signature};

    let receipt_id = expected["paidReceiptId"].as_str().unwrap();
    let claim = RefundClaim {
        refund: Refund {
            refund_id: "rfd_in_flight".into(),
            receipt_id: receipt_id.to_owned(),
            endpoint_slug: Some("priced".into()),
            seller: None,
            charged: "10000".into(),
            amount: "10000".into(),
            reason: "the answer was wrong".into(),
            refunded_by: "owner".into(),
            payment_method: PaymentMethod::X402,
            returned_to: "on_chain".into(),
            transaction: None,
            after_payout: false,
            refunded_at: "2026-11-29T08:00:00Z".into(),
            signature: Signature::unsigned(),
        },
        asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e".into(),
        payer: "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23".into(),
        wallet: "0xB91aE389Fc638A3f5C8F93968Aa13382EA69447C".into(),
        transaction: Some(format!("0x{}", "cd".repeat(32))),
        claimed_at_ms: 1_795_000_000_000,
    };
    let value = serde_json::to_string(&claim).unwrap();
    let key = format!("refunding/{receipt_id}");
    db.execute(
        "INSERT INTO toolhost_kv (tree, key, value) VALUES ('ledger', $1, $2)",
        &[&key.as_bytes(), &value.as_bytes()],
    )
    .await
    .unwrap();
    value.into_bytes()
}

/// Migration 17 moved the claim to its table, none left in the key-value table; the refund
/// in flight still holds the receipt: refunding it again is 409 `refund_in_progress`, naming
/// the claim's transaction.
async fn the_refund_claim_is_in_its_table(
    node: &Node,
    db: &tokio_postgres::Client,
    expected: &Value,
    claim: &[u8],
) {
    let receipt_id = expected["paidReceiptId"].as_str().unwrap();
    let rows = db
        .query("SELECT receipt_id, entry FROM toolhost_refund_claims", &[])
        .await
        .unwrap();
    let rows: Vec<(String, Vec<u8>)> = rows.iter().map(|row| (row.get(0), row.get(1))).collect();
    assert_eq!(rows, [(receipt_id.to_owned(), claim.to_vec())]);
    assert_eq!(ledger_keys(db, "refunding/").await, 0);
    let again = node
        .client
        .post(node.url(&format!("/ai/receipts/{receipt_id}/refund")))
        .header("x-builder-key", expected["builderKey"].as_str().unwrap())
        .json(&json!({"reason": "asked twice"}))
        .send()
        .await
        .unwrap();
    let (status, body) = read(again).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "refund_in_progress", "{body}");
    let transaction = format!("0x{}", "cd".repeat(32));
    assert_eq!(
        body["error"]["details"]["transaction"],
        transaction.as_str(),
        "{body}"
    );
}

/// A debt of 1,800 units for a refund of the builder's paid-out sale, written into the loaded
/// database as the release wrote debts (`debt/{builderId}/{receiptId}`, units as decimal
/// text), beside the payout version its packet left (`balance/{builderId}`: 1). Returns the
/// builder's id.
async fn a_debt_for_a_refund_after_payout(db: &tokio_postgres::Client, expected: &Value) -> String {
    let builder: String = db
        .query_one("SELECT builder FROM toolhost_packets", &[])
        .await
        .unwrap()
        .get(0);
    let sold = expected["soldReceiptId"].as_str().unwrap();
    let version = db
        .query_one(
            "SELECT value FROM toolhost_kv WHERE tree = 'ledger' AND key = $1",
            &[&format!("balance/{builder}").into_bytes()],
        )
        .await
        .unwrap();
    assert_eq!(version.get::<_, Vec<u8>>(0), b"1", "its packet's version");
    let debt = format!("debt/{builder}/{sold}").into_bytes();
    db.execute(
        "INSERT INTO toolhost_kv (tree, key, value) VALUES ('ledger', $1, '1800'::BYTEA)",
        &[&debt],
    )
    .await
    .unwrap();
    builder
}

/// Migration 16 moved the debt (its builder and units as columns) and the payout version to
/// their tables, none of them left in the key-value table; the builder's payout view owes the
/// debt, read from its table.
async fn the_debt_and_the_payout_version_are_in_their_tables(
    node: &Node,
    db: &tokio_postgres::Client,
    expected: &Value,
    builder: &str,
) {
    let debts = db
        .query("SELECT debt_key, builder, units FROM toolhost_debts", &[])
        .await
        .unwrap();
    let debts: Vec<(String, String, i64)> = (debts.iter())
        .map(|row| (row.get(0), row.get(1), row.get(2)))
        .collect();
    let sold = expected["soldReceiptId"].as_str().unwrap();
    let key = format!("{builder}/{sold}");
    assert_eq!(debts, [(key, builder.to_owned(), 1800)]);
    let versions = db
        .query("SELECT builder, version FROM toolhost_payout_versions", &[])
        .await
        .unwrap();
    let versions: Vec<(String, i64)> = versions
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    assert_eq!(versions, [(builder.to_owned(), 1)]);
    assert_eq!(
        (
            ledger_keys(db, "debt/").await,
            ledger_keys(db, "balance/").await
        ),
        (0, 0)
    );
    let key = expected["builderKey"].as_str().unwrap();
    let view = as_builder(node, key, "/ai/builders/payouts").await;
    assert_eq!(view["owedNetUnits"], "1800", "{view}");
}

/// pg-ce447eb's packet paid the builder's one collected sale (the credit sale, less its
/// refund): migration 13 moved its mark to its table, the packet's id as a column. The payout
/// view, summed by the database with the marks looked up, has nothing collected left unpaid
/// and the two x402 sales (recorded only) uncollected.
async fn the_paid_out_mark_is_in_its_table(
    node: &Node,
    db: &tokio_postgres::Client,
    expected: &Value,
) {
    let rows = db
        .query("SELECT receipt_id, packet_id FROM toolhost_paid_out", &[])
        .await
        .unwrap();
    let rows: Vec<(String, String)> = rows.iter().map(|row| (row.get(0), row.get(1))).collect();
    let sold = expected["soldReceiptId"].as_str().unwrap().to_owned();
    let packet = expected["packetId"].as_str().unwrap().to_owned();
    assert_eq!(rows, [(sold, packet)]);
    assert_eq!(ledger_keys(db, "paid/").await, 0);
    let key = expected["builderKey"].as_str().unwrap();
    let view = as_builder(node, key, "/ai/builders/payouts").await;
    assert_eq!(
        (&view["unpaidReceipts"], &view["uncollectedReceipts"]),
        (&json!(0), &json!(2)),
        "{view}"
    );
}

/// pg-ce447eb's builder refunded 0.004 of its credit sale (0.01) before it was paid out:
/// migration 12 moved the refund to its table, its seller and amount as columns. It is served
/// as the release served it, and the builder's revenue, summed by the database with the
/// refunds joined, counts the sale for what it kept.
async fn the_refund_is_in_its_table(node: &Node, db: &tokio_postgres::Client, expected: &Value) {
    let refunded = expected["refundedReceiptId"].as_str().unwrap();
    let rows = db
        .query(
            "SELECT receipt_id, seller, amount FROM toolhost_refunds",
            &[],
        )
        .await
        .unwrap();
    let rows: Vec<(String, Option<String>, i64)> = (rows.iter())
        .map(|row| (row.get(0), row.get(1), row.get(2)))
        .collect();
    let (_, view) = node.get(&format!("/ai/receipts/{refunded}/refund")).await;
    assert_eq!(view["refund"]["amount"], "4000", "{view}");
    let seller = view["refund"]["seller"].as_str().unwrap().to_owned();
    assert_eq!(rows, [(refunded.to_owned(), Some(seller), 4000)]);
    assert_eq!(ledger_keys(db, "refund/").await, 0);

    let key = expected["builderKey"].as_str().unwrap();
    let revenue = as_builder(node, key, "/ai/builders/revenue?since=3650d").await;
    let by_method = &revenue["revenue"]["byPaymentMethod"];
    assert_eq!(
        (
            &by_method["developerCredit"]["grossUnits"],
            &by_method["developerCredit"]["count"]
        ),
        (&json!("6000"), &json!(1)),
        "the credit sale less its refund: {revenue}"
    );
    assert_eq!(
        by_method["x402Recorded"]["grossUnits"], "20000",
        "the two x402 sales: {revenue}"
    );
}
