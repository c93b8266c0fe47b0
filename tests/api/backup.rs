//! Backup and restore of the embedded store (`toolhost backup`, `toolhost restore`): a backup
//! taken while paid and free calls go on is one moment of the store (every receipt with its
//! sale or its proof, nothing in part) with the data dir's keys, and a server started on its
//! restore serves everything as it was: receipts under the same key, a handler's kv, a secret.
//! A damaged backup restores nothing; a restore never writes into a data dir in use.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolhost_values::backup::{self as format, Record};

use crate::util::{assert_error, As, TestServer, ADMIN_TOKEN};

/// A free JS endpoint that keeps a number in its kv and says whether its secret is set.
fn keeper() -> Value {
    json!({
        "slug": "keeper",
        "title": "Keeper",
        "description": "Keeps a number.",
        "priceUsd": 0,
        "handlerType": "js_request_response",
        "source": "export default async function (req, ctx) { if (req.input.op === 'write') await ctx.kv.set('n', req.input.n); return { n: await ctx.kv.get('n'), secret: ctx.env.API_KEY === 's3cret' }; }",
        "inputSchema": {"type": "object"},
        "capabilities": {"kv": true},
        "safetyAttestation": {"accepted": true},
    })
}

/// Runs the binary with `args` against `server`; its exit code and all it printed.
async fn toolhost(server: &TestServer, home: &Path, args: &[&str]) -> (i32, String) {
    let (code, stdout, stderr) = crate::receipt_log::cli(server, home, args).await;
    (code, format!("{stdout}{stderr}"))
}

/// Every entry of a backup, by tree name and key.
fn entries(file: &Path) -> BTreeSet<(String, Vec<u8>)> {
    let mut entries = BTreeSet::new();
    format::read(std::fs::File::open(file).unwrap(), |record| {
        if let Record::Entry { tree, key, .. } = record {
            entries.insert((tree, key));
        }
        Ok::<(), format::BackupError>(())
    })
    .unwrap();
    entries
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_taken_under_load_restores_a_server_that_serves_everything_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let data = home.join("data");
    let server = TestServer::start_in(&data).await;
    if crate::util::on_postgres() {
        // PostgreSQL is backed up with pg_dump.
        let (status, body) = server
            .call("POST", "/ai/admin/backup", As::Admin, None)
            .await;
        assert_error(status, &body, 409, "backup_unsupported");
        server.stop().await;
        return;
    }
    let (status, body) = server
        .call("POST", "/ai/admin/backup", As::Nobody, None)
        .await;
    assert_error(status, &body, 401, "unauthorized");
    let (key, _) = server.builder_with("Keeper", &keeper()).await;
    server.grant("keeper", json!({"kv": true})).await;
    let (status, body) = server
        .call(
            "POST",
            "/ai/endpoints/keeper/secrets",
            As::Builder(&key),
            Some(&json!({"set": {"API_KEY": "s3cret"}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, kept) = server
        .post("/tools/keeper", &json!({"op": "write", "n": 7}))
        .await;
    assert_eq!(
        (status.as_u16(), &kept),
        (200, &json!({"n": 7, "secret": true}))
    );
    let (status, credit) = server
        .call(
            "POST",
            "/ai/admin/credits",
            As::Admin,
            Some(&json!({"amountUsd": 5})),
        )
        .await;
    assert_eq!(status, 200, "{credit}");
    let token = credit["credit"]["token"].as_str().unwrap().to_owned();

    // Paid (credit) and free calls go on the whole time the backup is taken.
    let stop = Arc::new(AtomicBool::new(false));
    let answered: Arc<Mutex<Vec<String>>> = Arc::default();
    let load: Vec<_> = (0..4)
        .map(|n| {
            let (stop, answered, token) = (stop.clone(), answered.clone(), token.clone());
            let (client, base) = (server.client.clone(), server.base.clone());
            tokio::spawn(async move {
                let path = if n % 2 == 0 {
                    "receipt-echo-paid"
                } else {
                    "receipt-echo"
                };
                while !stop.load(Ordering::SeqCst) {
                    let response = client
                        .post(format!("{base}/tools/{path}"))
                        .header("x-developer-credit", &token)
                        .json(&json!({"n": n}))
                        .send()
                        .await
                        .unwrap();
                    let (status, body) = crate::util::read(response).await;
                    assert_eq!(status, 200, "{body}");
                    let id = body["receipt"]["receiptId"].as_str().unwrap().to_owned();
                    answered.lock().unwrap().push(id);
                }
            })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let before: Vec<String> = answered.lock().unwrap().clone();
    let file = home.join("server.backup");
    let file_arg = file.display().to_string();
    let (code, text) = toolhost(
        &server,
        home,
        &["backup", "--out", &file_arg, "--admin-token", ADMIN_TOKEN],
    )
    .await;
    assert_eq!(code, 0, "{text}");
    assert!(text.starts_with("saved "), "{text}");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    stop.store(true, Ordering::SeqCst);
    for task in load {
        task.await.unwrap();
    }
    let after = answered.lock().unwrap().len();
    assert!(
        after > before.len(),
        "no call was answered while the backup was taken"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "a backup holds keys");
    }
    // Never over an existing file.
    let (code, text) = toolhost(
        &server,
        home,
        &["backup", "--out", &file_arg, "--admin-token", ADMIN_TOKEN],
    )
    .await;
    assert_eq!(code, 2, "{text}");

    // One moment of the store: each paid receipt with its sale and each free one with its
    // proof, or neither; and every call answered before the backup began is in it.
    let held = entries(&file);
    let has = |tree: &str, key: &[u8]| held.contains(&(tree.to_owned(), key.to_vec()));
    let receipts: Vec<&Vec<u8>> = (held.iter())
        .filter(|(tree, key)| tree == "receipts" && key.starts_with(b"rcpt_"))
        .map(|(_, key)| key)
        .collect();
    let mut paid = 0;
    for id in &receipts {
        let sale = [b"sale/".as_slice(), id].concat();
        let (with_sale, with_proof) = (has("ledger", &sale), has("receipt_proofs", id));
        assert!(
            with_sale != with_proof,
            "{}: sale {with_sale}, proof {with_proof}",
            String::from_utf8_lossy(id)
        );
        paid += usize::from(with_sale);
    }
    let sales = (held.iter())
        .filter(|(tree, key)| tree == "ledger" && key.starts_with(b"sale/"))
        .count();
    assert_eq!(sales, paid, "a sale without its receipt");
    for id in &before {
        assert!(
            has("receipts", id.as_bytes()),
            "{id} answered before the backup"
        );
    }
    eprintln!(
        "backup: {} entries, {} receipts ({paid} paid); {} calls answered before it, {after} by the end",
        held.len(),
        receipts.len(),
        before.len()
    );

    // A damaged copy restores nothing.
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    let damaged = home.join("damaged.backup");
    std::fs::write(&damaged, &bytes).unwrap();
    let target = home.join("restored");
    let target_arg = target.display().to_string();
    let (code, text) = toolhost(
        &server,
        home,
        &[
            "restore",
            "--from",
            &damaged.display().to_string(),
            "--data",
            &target_arg,
        ],
    )
    .await;
    assert_ne!(code, 0, "{text}");
    assert!(text.contains("nothing was restored"), "{text}");
    assert!(!target.exists());
    // Nor into a data dir in use.
    let (code, text) = toolhost(
        &server,
        home,
        &[
            "restore",
            "--from",
            &file_arg,
            "--data",
            &data.display().to_string(),
        ],
    )
    .await;
    assert_ne!(code, 0, "{text}");
    assert!(text.contains("is not empty"), "{text}");

    let (code, text) = toolhost(
        &server,
        home,
        &["restore", "--from", &file_arg, "--data", &target_arg],
    )
    .await;
    assert_eq!(code, 0, "{text}");
    let (_, manifest) = server.get("/ai/manifest").await;
    server.stop().await;

    // The restored data dir serves what the backup held, under the same keys.
    let restored = TestServer::start_in(&target).await;
    let (_, again) = restored.get("/ai/manifest").await;
    assert_eq!(
        again["receipts"]["publicKey"],
        manifest["receipts"]["publicKey"]
    );
    assert_eq!(
        again["receipts"]["log"]["verifierKey"],
        manifest["receipts"]["log"]["verifierKey"]
    );
    let (status, kept) = restored.post("/tools/keeper", &json!({})).await;
    assert_eq!(
        (status.as_u16(), &kept),
        (200, &json!({"n": 7, "secret": true}))
    );
    for id in &before {
        let (status, receipt) = restored.get(&format!("/ai/receipts/{id}")).await;
        assert_eq!(status, 200, "{id}: {receipt}");
        let (status, proof) = restored.get(&format!("/ai/receipts/{id}/inclusion")).await;
        assert_eq!(status, 200, "{id}: {proof}");
    }
    let (status, body) = restored
        .call("GET", "/ai/endpoints/keeper", As::Builder(&key), None)
        .await;
    assert_eq!(
        status, 200,
        "the builder's key still opens its endpoint: {body}"
    );
    restored.stop().await;
}
