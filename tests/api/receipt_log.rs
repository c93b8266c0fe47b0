//! The receipt log end to end (docs/receipt-log.md): each call's answer carries its receipt's
//! place in the log, which verifies offline with the log's published key, in Rust and with the
//! dependency-free JavaScript verifier in `docs/`; the tiles served make the signed root; the
//! proofs by id and between sizes verify; a restarted server goes on with the same log.

use std::path::Path;

use alloy_signer_local::PrivateKeySigner;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::{json, Value};
use toolhost_tlog::{hash, tile, tree, verify, Checkpoint, Hash, Tile, Verifier};

use crate::payments::{ask, pay};
use crate::util::node::Node;
use crate::util::{assert_error, post_paid, TestServer};

const FREE: &str = "/tools/receipt-echo";
const PAID: &str = "/tools/receipt-echo-paid";

pub(crate) fn hashes(list: &Value) -> Vec<Hash> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|h| Hash::try_from(BASE64.decode(h.as_str().unwrap()).unwrap()).unwrap())
        .collect()
}

fn salt_of(salt: &Value) -> Vec<u8> {
    let salt = hex::decode(salt.as_str().expect("a receiptSalt")).unwrap();
    assert_eq!(salt.len(), 16);
    salt
}

/// SHA-256 of the salt and the canonical JSON of `value`, in hex: a receipt's digest.
fn salted(salt: &[u8], value: &Value) -> String {
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    hasher.update(salt);
    hasher.update(toolhost::receipts::canonical_json(value).as_bytes());
    hex::encode(hasher.finalize())
}

/// A `/tools/{slug}` answer's digests are of `input` and of the handler's result (the answer
/// without the members the server added), salted with its `receiptSalt`.
fn check_digests(answer: &Value, input: &Value) {
    let salt = salt_of(&answer["receiptSalt"]);
    assert_eq!(answer["receipt"]["schema"], "toolhost.receipt.v3");
    assert_eq!(answer["receipt"]["requestSha256"], salted(&salt, input));
    let mut result = answer.clone();
    for added in ["receipt", "receiptLog", "receiptSalt"] {
        result.as_object_mut().unwrap().remove(added);
    }
    assert_eq!(answer["receipt"]["resultSha256"], salted(&salt, &result));
}

/// Checks an answer's `receiptLog` against its `receipt` and the log's key; the checkpoint.
pub(crate) fn check(verifier: &Verifier, receipt: &Value, log: &Value) -> Checkpoint {
    let head =
        Checkpoint::parse(verifier.open(log["checkpoint"].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(head.size, log["treeSize"].as_u64().unwrap());
    assert!(head.extensions[0].starts_with("timestamp "), "{head:?}");
    let entry = toolhost::receipts::canonical_json(receipt);
    verify::inclusion(
        &hash::leaf(entry.as_bytes()),
        log["leafIndex"].as_u64().unwrap(),
        head.size,
        &hashes(&log["inclusionProof"]),
        &head.root,
    )
    .unwrap();
    head
}

/// After a crash: each answered receipt (its id, and the proof its answer carried, or null) is
/// served by `node` and in its receipt log at the leaf its answer named, and the log's head
/// extends every head those answers handed out (one root per size).
pub(crate) async fn answered_receipts_hold(node: &Node, answered: &[(String, Value)]) {
    let (_, manifest) = node.get("/ai/manifest").await;
    let key = manifest["receipts"]["log"]["verifierKey"].as_str().unwrap();
    let verifier = Verifier::parse(key).unwrap();
    let mut heads = std::collections::BTreeMap::new();
    for (receipt_id, proof) in answered {
        let (status, receipt) = node.get(&format!("/ai/receipts/{receipt_id}")).await;
        assert_eq!(
            status, 200,
            "answered receipt {receipt_id} is lost: {receipt}"
        );
        let (status, inclusion) = node
            .get(&format!("/ai/receipts/{receipt_id}/inclusion"))
            .await;
        assert_eq!(
            status, 200,
            "answered receipt {receipt_id} is not in the log: {inclusion}"
        );
        check(&verifier, &receipt, &inclusion);
        if proof.is_object() {
            assert_eq!(inclusion["leafIndex"], proof["leafIndex"], "{receipt_id}");
            let head = check(&verifier, &receipt, proof);
            let root = *heads.entry(head.size).or_insert(head.root);
            assert_eq!(
                root, head.root,
                "two heads of size {} handed out",
                head.size
            );
        }
    }
    assert!(!heads.is_empty(), "no answer carried its place in the log");
    let note = reqwest::get(node.url("/ai/receipts/log/checkpoint"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let latest = Checkpoint::parse(verifier.open(&note).unwrap()).unwrap();
    for (size, root) in &heads {
        let path = format!(
            "/ai/receipts/log/consistency?from={size}&to={}",
            latest.size
        );
        let (status, proof) = node.get(&path).await;
        assert_eq!(status, 200, "{proof}");
        verify::consistency(
            *size,
            latest.size,
            root,
            &latest.root,
            &hashes(&proof["proof"]),
        )
        .unwrap_or_else(|e| panic!("the head of {size} handed out is not in today's: {e}"));
    }
    eprintln!(
        "{} heads handed out, all consistent with the head of {} now",
        heads.len(),
        latest.size
    );
}

async fn bytes(server: &TestServer, path: &str) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let response = server.client.get(server.url(path)).send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.bytes().await.unwrap().to_vec())
}

/// The log's checkpoint as served, opened; and every entry of its tree, read from its tiles,
/// whose hash tiles are checked against the entries.
async fn read_log(server: &TestServer, verifier: &Verifier) -> (Checkpoint, Vec<Vec<u8>>) {
    let (status, headers, note) = bytes(server, "/ai/receipts/log/checkpoint").await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "text/plain; charset=utf-8");
    let head =
        Checkpoint::parse(verifier.open(std::str::from_utf8(&note).unwrap()).unwrap()).unwrap();
    let tiles = Tile::all_of(head.size);
    let mut entries = Vec::new();
    for bundle in tiles.iter().filter(|t| t.level.is_none()) {
        let (status, headers, body) =
            bytes(server, &format!("/ai/receipts/log/{}", bundle.path())).await;
        assert_eq!(status, 200, "{}", bundle.path());
        let cache = if bundle.is_full() {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        };
        assert_eq!(headers["cache-control"], cache);
        entries.extend(
            tile::decode_entries(&body)
                .unwrap()
                .into_iter()
                .map(<[u8]>::to_vec),
        );
    }
    assert_eq!(entries.len() as u64, head.size);
    let leaves: Vec<Hash> = entries.iter().map(|e| hash::leaf(e)).collect();
    assert_eq!(tree::root(&leaves), head.root);
    for hash_tile in tiles.iter().filter(|t| t.level.is_some()) {
        let (status, _, body) =
            bytes(server, &format!("/ai/receipts/log/{}", hash_tile.path())).await;
        assert_eq!(status, 200);
        assert_eq!(body, hash_tile.hashes(&leaves).unwrap().concat());
    }
    (head, entries)
}

/// `docs/tlog-verify.mjs` on each `[receipt, receiptLog, salt, input]`: "ok" (and the salted
/// input is the receipt's `requestSha256`), "ok, not this input", or "refused <code>" each.
async fn javascript_verdicts(cases: &[Value], vkey: &str) -> Option<Vec<String>> {
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(std::env::var_os("CI").is_none(), "node is missing");
        eprintln!("skipped the JavaScript verifier: no node");
        return None;
    }
    let verifier = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tlog-verify.mjs");
    let script = format!(
        r#"import {{ saltedDigest, verifyReceiptInclusion }} from {:?};
const cases = JSON.parse(process.env.CASES);
for (const [receipt, receiptLog, salt, input] of cases) {{
  try {{
    await verifyReceiptInclusion(receipt, receiptLog, process.env.VKEY);
    const proved = (await saltedDigest(salt, input)) === receipt.requestSha256;
    console.log(proved ? "ok" : "ok, not this input");
  }}
  catch (e) {{ console.log(`refused ${{e.code}}`); }}
}}"#,
        format!("file://{}", verifier.display())
    );
    let output = tokio::process::Command::new("node")
        .args(["--input-type=module", "-e", &script])
        .env("CASES", serde_json::to_string(cases).unwrap())
        .env("VKEY", vkey)
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect(),
    )
}

/// A paid call through `/tools/{slug}` (a new payer each), its answer.
async fn paid_call(server: &TestServer, input: Value) -> Value {
    let required = ask(server, PAID).await;
    let header = pay(&PrivateKeySigner::random(), &required, 2, |_| {});
    let (status, _, answer) = post_paid(server, PAID, &header, input).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

#[tokio::test]
async fn paid_receipts_are_in_the_log_free_ones_in_signed_batches_and_answers_prove_both() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start_in(data.path()).await;
    let (_, manifest) = server.get("/ai/manifest").await;
    let info = manifest["receipts"]["log"].clone();
    let (status, well_known) = server.get("/.well-known/receipt-log").await;
    assert_eq!((status.as_u16(), &well_known), (200, &info));
    let vkey = info["verifierKey"].as_str().unwrap().to_owned();
    let verifier = Verifier::parse(&vkey).unwrap();
    assert_eq!(verifier.name(), info["origin"]);
    assert!(info["origin"]
        .as_str()
        .unwrap()
        .ends_with("/ai/receipts/log"));
    // Free receipts' batches: their own name and key (the receipt key's), not the log's.
    let batch_key = info["batches"]["verifierKey"].as_str().unwrap().to_owned();
    let batches = Verifier::parse(&batch_key).unwrap();
    assert_eq!(batches.name(), info["batches"]["origin"]);
    assert!(batches.name().ends_with("/ai/receipts/batch"));
    assert_eq!(batches.public_key(), verifier.public_key());
    assert_ne!(batch_key, vkey);

    // Free receipt-echo calls and paid calls, all at once.
    let inputs: Vec<Value> = (0..24).map(|n| json!({"n": n})).collect();
    let free_calls = futures::future::join_all(inputs.iter().map(|input| server.post(FREE, input)));
    let paid_calls =
        futures::future::join_all((0..12).map(|n| paid_call(&server, json!({"paid": n}))));
    let (free, paid) = tokio::join!(free_calls, paid_calls);
    let free: Vec<Value> = free
        .into_iter()
        .map(|(status, body)| {
            assert_eq!(status, 200, "{body}");
            body
        })
        .collect();
    // A free call's receipt has no signature of its own: its batch's signed note proves it,
    // one signature for the free calls stored at once; it is not in the log.
    let mut batch_sizes = std::collections::BTreeSet::new();
    for answer in &free {
        assert!(answer["receipt"].get("signature").is_none(), "{answer}");
        let head = check(&batches, &answer["receipt"], &answer["receiptLog"]);
        batch_sizes.insert(head.size);
        assert!(verifier
            .open(answer["receiptLog"]["checkpoint"].as_str().unwrap())
            .is_err());
    }
    // A paid call's is signed by itself, and is a leaf of the log.
    let receipt_key = manifest["receipts"]["publicKey"].as_str().unwrap();
    let mut indexes = Vec::new();
    for answer in &paid {
        let receipt: toolhost::receipts::Receipt =
            serde_json::from_value(answer["receipt"].clone()).unwrap();
        assert!(toolhost::receipts::verify_receipt(&receipt, receipt_key));
        check(&verifier, &answer["receipt"], &answer["receiptLog"]);
        indexes.push(answer["receiptLog"]["leafIndex"].as_u64().unwrap());
    }
    indexes.sort_unstable();
    assert_eq!(
        indexes,
        (0..12).collect::<Vec<u64>>(),
        "each paid receipt once"
    );
    // One signature covers a group: `/metrics` counts every kind.
    let (_, _, metrics) = bytes(&server, "/metrics").await;
    let metrics = String::from_utf8(metrics).unwrap();
    let total = |name: &str| -> u64 {
        let line = metrics
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} in {metrics}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert_eq!(total("toolhost_receipt_log_entries_total"), 12);
    let checkpoints = total("toolhost_receipt_log_checkpoints_total");
    assert!((1..=12).contains(&checkpoints), "{checkpoints}");
    assert_eq!(total("toolhost_receipts_batched_total"), 24);
    let signed_batches = total("toolhost_receipt_batches_total");
    assert!((1..=24).contains(&signed_batches), "{signed_batches}");
    assert_eq!(total("toolhost_receipt_signatures_total"), 12);
    eprintln!(
        "24 free receipts at once: {signed_batches} batches ({batch_sizes:?} receipts each); 12 paid: {checkpoints} checkpoints"
    );

    // The digests are salted: the caller, holding the salt, can prove its input and result;
    // nobody else can confirm a guess of them. Two calls with the same input differ.
    for (n, answer) in free.iter().enumerate() {
        check_digests(answer, &json!({"n": n}));
    }
    let (_, again) = server.post(FREE, &json!({"n": 0})).await;
    assert_ne!(
        again["receipt"]["requestSha256"],
        free[0]["receipt"]["requestSha256"]
    );
    assert_ne!(again["receiptSalt"], free[0]["receiptSalt"]);
    let id = free[0]["receipt"]["receiptId"].as_str().unwrap();
    let (_, stored) = server.get(&format!("/ai/receipts/{id}")).await;
    assert_eq!(stored, free[0]["receipt"]);
    let salt = free[0]["receiptSalt"].as_str().unwrap();
    assert!(!stored.to_string().contains(salt));
    // Its proof by id is the one its answer carried.
    let (status, proof) = server.get(&format!("/ai/receipts/{id}/inclusion")).await;
    assert_eq!(status, 200, "{proof}");
    assert_eq!(proof, free[0]["receiptLog"]);
    let size = proof["treeSize"].as_u64().unwrap();
    let (status, proof) = server
        .get(&format!("/ai/receipts/{id}/inclusion?treeSize={size}"))
        .await;
    assert_eq!(status, 200, "{proof}");
    let (status, body) = server
        .get(&format!(
            "/ai/receipts/{id}/inclusion?treeSize={}",
            size + 1
        ))
        .await;
    assert_error(status, &body, 404, "not_in_log");

    // The same through `/ai/invoke`.
    let (status, invoked) = server
        .post(
            "/ai/invoke",
            &json!({"slug": "receipt-echo", "input": {"via": "invoke"}}),
        )
        .await;
    assert_eq!(status, 200, "{invoked}");
    check(&batches, &invoked["receipt"], &invoked["receiptLog"]);
    let salt = salt_of(&invoked["receiptSalt"]);
    assert_eq!(
        invoked["receipt"]["requestSha256"],
        salted(&salt, &json!({"via": "invoke"}))
    );

    // The JavaScript verifier agrees, each proof under its own key, and refuses a changed
    // receipt, another log's key, and a batch's note taken for the log's checkpoint.
    let mut changed = free[0]["receipt"].clone();
    changed["amount"] = json!("1");
    let other_key = toolhost_tlog::Signer::new(verifier.name(), &[3; 32])
        .unwrap()
        .verifier()
        .key_text();
    let case = |answer: &Value, input: Value| {
        json!([
            answer["receipt"],
            answer["receiptLog"],
            answer["receiptSalt"],
            input
        ])
    };
    let free_cases = [
        case(&free[0], json!({"n": 0})),
        case(&free[1], json!({"n": 2})),
        json!([changed, free[0]["receiptLog"], free[0]["receiptSalt"], {"n": 0}]),
    ];
    let paid_case = [case(&paid[0], json!({"paid": 0}))];
    if let Some(verdicts) = javascript_verdicts(&free_cases, &batch_key).await {
        assert_eq!(verdicts, ["ok", "ok, not this input", "refused mismatch"]);
        let verdicts = javascript_verdicts(&paid_case, &vkey).await.unwrap();
        assert_eq!(verdicts, ["ok"]);
        let verdicts = javascript_verdicts(&paid_case, &other_key).await.unwrap();
        assert_eq!(verdicts, ["refused unverified"]);
        let verdicts = javascript_verdicts(&free_cases[..1], &vkey).await.unwrap();
        assert_eq!(verdicts.len(), 1);
        assert!(verdicts[0].starts_with("refused "), "{verdicts:?}");
    }
    let answers = paid;

    // The tiles hold every paid receipt, as its canonical JSON, and make the signed root.
    let (head, entries) = read_log(&server, &verifier).await;
    assert_eq!(head.size, 12);
    for answer in &answers {
        let entry = toolhost::receipts::canonical_json(&answer["receipt"]);
        let index = answer["receiptLog"]["leafIndex"].as_u64().unwrap() as usize;
        assert_eq!(entries[index], entry.as_bytes());
    }

    // Proofs by id and between sizes, for clients that do not read tiles.
    let first = &answers[0];
    let id = first["receipt"]["receiptId"].as_str().unwrap();
    let (status, latest) = server.get(&format!("/ai/receipts/{id}/inclusion")).await;
    assert_eq!(status, 200, "{latest}");
    assert_eq!(latest["leafIndex"], first["receiptLog"]["leafIndex"]);
    assert_eq!(check(&verifier, &first["receipt"], &latest), head);
    let old = check(&verifier, &first["receipt"], &first["receiptLog"]);
    let (status, proof) = server
        .get(&format!(
            "/ai/receipts/log/consistency?from={}&to={}",
            old.size, head.size
        ))
        .await;
    assert_eq!(status, 200, "{proof}");
    verify::consistency(
        old.size,
        head.size,
        &old.root,
        &head.root,
        &hashes(&proof["proof"]),
    )
    .unwrap();

    // What is not there.
    let (status, body) = server.get("/ai/receipts/rcpt_nope/inclusion").await;
    assert_error(status, &body, 404, "not_in_log");
    let (status, body) = server
        .get(&format!("/ai/receipts/{id}/inclusion?treeSize=13"))
        .await;
    assert_error(status, &body, 404, "not_in_log");
    for query in [
        "from=0&to=2",
        "from=3&to=2",
        "from=1&to=13",
        "from=x&to=2",
        "to=2",
    ] {
        let (status, body) = server
            .get(&format!("/ai/receipts/log/consistency?{query}"))
            .await;
        assert_error(status, &body, 400, "invalid_query");
    }
    for path in [
        "tile/0/000",
        "tile/0/000.p/13",
        "tile/1/000.p/1",
        "tile/0/0",
        "tile/entries/x001/000",
    ] {
        let (status, body) = server.get(&format!("/ai/receipts/log/{path}")).await;
        assert_error(status, &body, 404, "tile_not_found");
    }

    // A restarted server goes on with the same log: the old tree is a prefix of the new.
    server.stop().await;
    let server = TestServer::start_in(data.path()).await;
    let (_, manifest) = server.get("/ai/manifest").await;
    assert_eq!(manifest["receipts"]["log"]["verifierKey"], vkey.as_str());
    assert_eq!(
        manifest["receipts"]["log"]["batches"]["verifierKey"],
        batch_key.as_str()
    );
    let after = paid_call(&server, json!({"after": "restart"})).await;
    let new = check(&verifier, &after["receipt"], &after["receiptLog"]);
    assert_eq!(after["receiptLog"]["leafIndex"], 12);
    let (status, proof) = server
        .get(&format!(
            "/ai/receipts/log/consistency?from={}&to={}",
            head.size, new.size
        ))
        .await;
    assert_eq!(status, 200, "{proof}");
    verify::consistency(
        head.size,
        new.size,
        &head.root,
        &new.root,
        &hashes(&proof["proof"]),
    )
    .unwrap();
    read_log(&server, &verifier).await;
    server.stop().await;
}

const BIN: &str = env!("CARGO_BIN_EXE_toolhost");

/// Runs the CLI against `server` (its URL in the environment, a HOME of its own).
pub(crate) async fn cli(server: &TestServer, home: &Path, args: &[&str]) -> (i32, String, String) {
    let output = tokio::process::Command::new(BIN)
        .args(args)
        .current_dir(home)
        .env("TOOLHOST_URL", &server.base)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "warn")
        .output()
        .await
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn the_command_line_verifies_answers_and_its_monitor_catches_a_fork() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let data = tempfile::tempdir().unwrap();
    let (dir_a, dir_b) = (data.path().join("a"), data.path().join("b"));
    let server = TestServer::start_in(&dir_a).await;
    let (_, manifest) = server.get("/ai/manifest").await;
    let vkey = manifest["receipts"]["log"]["verifierKey"]
        .as_str()
        .unwrap()
        .to_owned();
    let answer = paid_call(&server, json!({"n": 0})).await;
    let (status, free) = server.post(FREE, &json!({"free": true})).await;
    assert_eq!(status, 200, "{free}");
    let batch_key = manifest["receipts"]["log"]["batches"]["verifierKey"]
        .as_str()
        .unwrap()
        .to_owned();
    let write = |name: &str, value: &Value| {
        let path = home.join(name);
        std::fs::write(&path, value.to_string()).unwrap();
        path.display().to_string()
    };

    // An answer verifies offline against the key; `--json` says where it is.
    let good = write("answer.json", &answer);
    let (code, stdout, stderr) =
        cli(&server, home, &["receipt", "verify", &good, "--key", &vkey]).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.starts_with("verified: receipt rcpt_"), "{stdout}");
    let (code, stdout, _) = cli(
        &server,
        home,
        &["receipt", "verify", &good, "--key", &vkey, "--json"],
    )
    .await;
    assert_eq!(code, 0);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["leafIndex"], answer["receiptLog"]["leafIndex"]);
    // Without a key, against what the server publishes, and saying so.
    let (code, stdout, _) = cli(&server, home, &["receipt", "verify", &good]).await;
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("fetched from"), "{stdout}");
    // As an MCP result keeps it.
    let mcp = json!({"_meta": {"toolhost/receipt": answer["receipt"], "toolhost/receiptLog": answer["receiptLog"]}});
    let (code, _, stderr) = cli(
        &server,
        home,
        &[
            "receipt",
            "verify",
            &write("mcp.json", &mcp),
            "--key",
            &vkey,
        ],
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    // A free call's answer: proven by its batch, under the batches' key (fetched as such), and
    // not under the log's.
    let free = write("free.json", &free);
    let (code, stdout, stderr) = cli(
        &server,
        home,
        &["receipt", "verify", &free, "--key", &batch_key],
    )
    .await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("/ai/receipts/batch"), "{stdout}");
    let (code, stdout, stderr) = cli(&server, home, &["receipt", "verify", &free]).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, _, stderr) = cli(&server, home, &["receipt", "verify", &free, "--key", &vkey]).await;
    assert_eq!(code, 5, "{stderr}");

    // A changed receipt, another log's key, and what is not an answer.
    let mut changed = answer.clone();
    changed["receipt"]["amount"] = json!("1");
    let (code, _, stderr) = cli(
        &server,
        home,
        &[
            "receipt",
            "verify",
            &write("changed.json", &changed),
            "--key",
            &vkey,
        ],
    )
    .await;
    assert_eq!(code, 5, "{stderr}");
    assert!(stderr.contains("it was changed"), "{stderr}");
    let other = toolhost_tlog::Signer::new(
        manifest["receipts"]["log"]["origin"].as_str().unwrap(),
        &[3; 32],
    )
    .unwrap()
    .verifier()
    .key_text();
    let (code, _, stderr) = cli(
        &server,
        home,
        &["receipt", "verify", &good, "--key", &other],
    )
    .await;
    assert_eq!(code, 5, "{stderr}");
    assert!(stderr.contains("not signed by the log's key"), "{stderr}");
    let (code, _, _) = cli(
        &server,
        home,
        &[
            "receipt",
            "verify",
            &write("other.json", &json!({"ok": true})),
            "--key",
            &vkey,
        ],
    )
    .await;
    assert_eq!(code, 2);

    // The monitor: a first checkpoint, then one that extends it.
    let monitor = ["log", "monitor", "--state", "seen.json", "--once"];
    let (code, stdout, stderr) = cli(&server, home, &monitor).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("first checkpoint"), "{stdout}");
    paid_call(&server, json!({"n": 1})).await;
    paid_call(&server, json!({"n": 2})).await;
    let (code, stdout, _) = cli(&server, home, &monitor).await;
    assert_eq!(code, 0);
    assert!(
        stdout.contains("2 new since the last check, consistent"),
        "{stdout}"
    );
    if crate::util::on_postgres() {
        // A copied data dir is a fresh database there: no fork to stage.
        server.stop().await;
        return;
    }

    // A fork: a copy of the data goes its own way; the original goes on.
    server.stop().await;
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(&dir_a)
        .arg(&dir_b)
        .status()
        .unwrap();
    assert!(copied.success());
    let server = TestServer::start_in(&dir_a).await;
    paid_call(&server, json!({"n": 3})).await;
    paid_call(&server, json!({"n": 4})).await;
    let (code, stdout, _) = cli(&server, home, &monitor).await;
    assert_eq!(code, 0, "{stdout}");
    let seen = std::fs::read_to_string(home.join("seen.json")).unwrap();
    let fork = TestServer::start_in(&dir_b).await;
    // Served as it was before the original went on: a log that shrank.
    let (code, _, stderr) = cli(&fork, home, &monitor).await;
    assert_eq!(code, 5, "{stderr}");
    assert!(stderr.contains("shrank from 5 to 3"), "{stderr}");
    // Gone its own way: longer, but not an extension of what was seen.
    for n in 5..8 {
        paid_call(&fork, json!({"n": n})).await;
    }
    let (code, stdout, stderr) = cli(&fork, home, &monitor).await;
    assert_eq!(code, 5, "{stdout}{stderr}");
    assert!(stderr.contains("rewritten or forked"), "{stderr}");
    assert!(
        stderr.contains("the checkpoint seen before")
            && stderr.contains("the checkpoint served now"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(home.join("seen.json")).unwrap(),
        seen,
        "a failed check moves nothing"
    );
    fork.stop().await;
    server.stop().await;
}
