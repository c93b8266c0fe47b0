//! A data dir written by an earlier release starts and serves on this one, from real fixtures
//! (`fixtures/upgrade/`, made by `make.sh` with that release's binary).
//!
//! `sled-fd63664`: the last release that kept handler data under slugs. Its builder's tool has
//! kv, an uploaded file, a file it wrote, logs and a secret, and there is a receipt; this
//! release moves the data under the endpoint's id at its first start (`handler_data::rekey`) and
//! must find all of it.

use std::path::Path;

use serde_json::{json, Value};

use crate::util::node::Node;
use crate::util::read;

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

        let logs = as_builder(&node, key, "/ai/endpoints/keeper/logs").await;
        assert_eq!(
            logs["entries"].as_array().map(Vec::len),
            Some(n as usize),
            "the old release's log entries and this one's: {logs}"
        );
        let view = as_builder(&node, key, "/ai/endpoints/keeper").await;
        let files: Vec<&str> = view["manage"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        assert_eq!(files, ["notes/last.txt", "readme.txt"], "{view}");

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
