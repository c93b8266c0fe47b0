//! The log the JavaScript verifier (`docs/tlog-verify.mjs`, tested by
//! `tests/js/tlog.test.mjs`) is checked against: made here by this crate, committed as
//! `fixtures/tlog/log.json`, and required to be exactly what this crate makes today, so the two
//! implementations cannot drift apart unseen. `TOOLHOST_WRITE_FIXTURES=1` writes it anew.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::json;
use toolhost_tlog::{hash, tree, Checkpoint, Signer};

const ORIGIN: &str = "toolhost.test/receipts";

fn hashes(list: &[hash::Hash]) -> Vec<String> {
    list.iter().map(|h| BASE64.encode(h)).collect()
}

fn fixture() -> String {
    let entries: Vec<Vec<u8>> = (0..300)
        .map(|i| format!("{{\"receiptId\":\"rcpt_{i:04}\"}}").into_bytes())
        .collect();
    let leaves: Vec<_> = entries.iter().map(|e| hash::leaf(e)).collect();
    let signer = Signer::new(ORIGIN, &[7; 32]).unwrap();
    let head = |size: usize| {
        let checkpoint = Checkpoint {
            origin: ORIGIN.into(),
            size: size as u64,
            root: tree::root(&leaves[..size]),
            extensions: Vec::new(),
        };
        signer.sign(&checkpoint.text()).unwrap()
    };
    let inclusions: Vec<_> = [0usize, 1, 2, 255, 256, 299]
        .iter()
        .map(|&index| {
            let proof = tree::inclusion_proof(index as u64, &leaves).unwrap();
            json!({
                "index": index,
                "entry": BASE64.encode(&entries[index]),
                "proof": hashes(&proof),
            })
        })
        .collect();
    let consistency = tree::consistency_proof(200, &leaves).unwrap();
    let fixture = json!({
        "verifierKey": signer.verifier().key_text(),
        "checkpoint": head(300),
        "oldCheckpoint": head(200),
        "inclusions": inclusions,
        "consistency": hashes(&consistency),
    });
    serde_json::to_string_pretty(&fixture).unwrap() + "\n"
}

#[test]
fn the_javascript_verifiers_fixture_is_what_this_crate_makes() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/tlog/log.json");
    let made = fixture();
    if std::env::var_os("TOOLHOST_WRITE_FIXTURES").is_some() {
        std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
        std::fs::write(path, &made).unwrap();
    }
    let committed = std::fs::read_to_string(path).expect("fixtures/tlog/log.json");
    // Compared as JSON values: the order of an object's keys depends on serde_json's features,
    // which the rest of the workspace decides.
    let parse = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
    assert!(
        parse(&committed) == parse(&made),
        "fixtures/tlog/log.json is not what toolhost-tlog makes now: rerun with \
         TOOLHOST_WRITE_FIXTURES=1 and commit it"
    );
}
