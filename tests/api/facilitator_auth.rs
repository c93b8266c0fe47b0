//! Hosted facilitators that want credentials: `toolhost serve` with a CDP API key (a JWT per
//! request, Ed25519 and EC P-256), a bearer token and custom headers, against a facilitator
//! process (`tests/js/x402/facilitator.mjs`) that checks each request the way hosted ones
//! document it (its JWTs verified by `jose`). Also: credentials never logged nor sent after a
//! redirect, start-up stopped by refused credentials, and the networks offered following the
//! facilitator's `/supported`, read again on a timer.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use alloy_signer_local::PrivateKeySigner;
use serde_json::{json, Value};

use crate::js_client::js_dir;
use crate::payments::pay;
use crate::util::node::Node;
use crate::util::read;

const PAID: &str = "/tools/receipt-echo-paid";
const BASE_SEPOLIA: &str = "eip155:84532";
/// A second test network (the local chain's id) beside Base Sepolia.
const LOCAL_NETWORK: &str = "local,eip155:31337,0x5FbDB2315678afecb367f032d93F642f64180aa3,USDC,2";

/// The facilitator process, killed when dropped.
struct Facilitator {
    child: Child,
    url: String,
    /// Where it wrote the CDP keys it made (`key.json`, `key.txt`, `key-id.txt`, `other.json`).
    dir: tempfile::TempDir,
}

impl Facilitator {
    fn start(js: &Path, config: Value) -> Facilitator {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config;
        config["dir"] = json!(dir.path());
        let mut child = Command::new("node")
            .arg("facilitator.mjs")
            .arg(config.to_string())
            .current_dir(js)
            .stdout(Stdio::piped())
            .spawn()
            .expect("node runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("listening ")
            .expect("listening line");
        Facilitator {
            child,
            url: format!("http://127.0.0.1:{port}"),
            dir,
        }
    }

    fn file(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap()
    }

    /// What came in so far: `{requests: [{method, path, refused}], redirectedArrivals}`.
    async fn requests(&self) -> Value {
        let response = reqwest::get(format!("{}/_requests", self.url))
            .await
            .unwrap();
        read(response).await.1
    }

    async fn set_kinds(&self, kinds: Value) {
        let response = reqwest::Client::new()
            .post(format!("{}/_kinds", self.url))
            .json(&kinds)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success());
    }
}

impl Drop for Facilitator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn kinds(networks: &[&str]) -> Value {
    json!(networks
        .iter()
        .map(|n| json!({"x402Version": 2, "scheme": "exact", "network": n}))
        .collect::<Vec<_>>())
}

/// `toolhost serve` on a data dir of its own against `facilitator`, with `args` and `env`.
fn serve(
    data: &tempfile::TempDir,
    facilitator: &Facilitator,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<Node, String> {
    let data = data.path().display().to_string();
    let mut all = vec!["--data", &data, "--facilitator-url", &facilitator.url];
    all.extend_from_slice(args);
    Node::try_start_with(&all, env)
}

/// One paid call through `node`, paid with a real x402 signature: its answer's body.
async fn paid_call(node: &Node) -> Value {
    let required = crate::util::payment_required(&node.client, &node.url(PAID), &json!({})).await;
    let (name, value) = pay(&PrivateKeySigner::random(), &required, 2, |_| {});
    let response = node
        .client
        .post(node.url(PAID))
        .header(name, value)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let (status, body) = read(response).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// Every request the facilitator saw carried good credentials, and these paths were among them.
fn all_accepted(requests: &Value, paths: &[&str]) {
    let seen = requests["requests"].as_array().unwrap();
    for request in seen {
        assert!(request["refused"].is_null(), "refused: {request}");
    }
    for path in paths {
        assert!(
            seen.iter().any(|r| r["path"] == *path),
            "no {path}: {requests}"
        );
    }
}

fn count(requests: &Value, path: &str) -> usize {
    (requests["requests"].as_array().unwrap().iter())
        .filter(|r| r["path"] == path)
        .count()
}

#[tokio::test]
async fn a_cdp_key_signs_every_request_and_is_never_logged() {
    let Some(js) = js_dir() else { return };
    // Ed25519 from CDP's JSON key file (which names the key); EC P-256 from the PEM alone,
    // with the key id given.
    for mode in ["cdp-ed25519", "cdp-es256"] {
        let facilitator =
            Facilitator::start(&js, json!({"mode": mode, "kinds": kinds(&[BASE_SEPOLIA])}));
        let data = tempfile::tempdir().unwrap();
        let key_file = match mode {
            "cdp-ed25519" => facilitator.file("key.json"),
            _ => facilitator.file("key.txt"),
        };
        let key_id = facilitator.read("key-id.txt");
        let mut args = vec!["--facilitator-cdp-key-file", key_file.as_str()];
        if mode == "cdp-es256" {
            args.extend(["--facilitator-cdp-key-id", key_id.as_str()]);
        }
        let node = serve(&data, &facilitator, &args, &[]).unwrap_or_else(|e| panic!("{mode}: {e}"));
        let body = paid_call(&node).await;
        assert_eq!(
            body["receipt"]["settlement"]["facilitator"], "remote",
            "{mode}"
        );
        assert_eq!(
            body["receipt"]["settlement"]["transaction"],
            format!("0x{}", "cd".repeat(32))
        );
        // `/x402/supported` answers from what start-up read: callers cannot make toolhost
        // spend its credentials once per request.
        for _ in 0..3 {
            let (status, supported) = node.get("/x402/supported").await;
            assert_eq!(
                (status.as_u16(), &supported["kinds"]),
                (200, &kinds(&[BASE_SEPOLIA]))
            );
        }
        let requests = facilitator.requests().await;
        all_accepted(&requests, &["/supported", "/verify", "/settle"]);
        assert_eq!(count(&requests, "/supported"), 1, "{requests}");
        let secret = facilitator.read("key.txt");
        let secret_line = secret
            .lines()
            .find(|l| l.len() > 20 && !l.starts_with("-----"))
            .unwrap();
        assert!(
            !node.log().contains(secret_line),
            "{mode}: the key was logged"
        );
        drop(node);

        // A key the facilitator does not know: start-up stops, saying why, not what the key is.
        let other = facilitator.file("other.json");
        let refused = serve(
            &tempfile::tempdir().unwrap(),
            &facilitator,
            &["--facilitator-cdp-key-file", &other],
            &[],
        )
        .err()
        .expect("start-up refused");
        assert!(
            refused.contains("refused toolhost's credentials"),
            "{mode}: {refused}"
        );
        let other_secret: Value = serde_json::from_str(&facilitator.read("other.json")).unwrap();
        let other_line = other_secret["privateKey"]
            .as_str()
            .unwrap()
            .lines()
            .find(|l| l.len() > 20 && !l.starts_with("-----"))
            .unwrap()
            .to_string();
        assert!(!refused.contains(&other_line), "{mode}: the key was echoed");
    }
}

#[tokio::test]
async fn a_bearer_token_and_headers_from_the_environment() {
    let Some(js) = js_dir() else { return };
    let facilitator = Facilitator::start(
        &js,
        json!({"mode": "bearer", "bearer": "tok-3f9a0c", "headers": {"X-Api-Key": "api-7d2e41"},
            "kinds": kinds(&[BASE_SEPOLIA])}),
    );
    let data = tempfile::tempdir().unwrap();
    let node = serve(
        &data,
        &facilitator,
        &["--facilitator-header", "X-Api-Key=env:PAYAI_KEY_FOR_TEST"],
        &[
            ("TOOLHOST_FACILITATOR_BEARER", "tok-3f9a0c"),
            ("PAYAI_KEY_FOR_TEST", "api-7d2e41"),
        ],
    )
    .unwrap();
    paid_call(&node).await;
    all_accepted(
        &facilitator.requests().await,
        &["/supported", "/verify", "/settle"],
    );
    let log = node.log();
    assert!(
        !log.contains("tok-3f9a0c") && !log.contains("api-7d2e41"),
        "{log}"
    );
    drop(node);
    // Without the header: the facilitator refuses, and start-up says so.
    let refused = serve(
        &tempfile::tempdir().unwrap(),
        &facilitator,
        &[],
        &[("TOOLHOST_FACILITATOR_BEARER", "tok-3f9a0c")],
    )
    .err()
    .expect("start-up refused");
    assert!(
        refused.contains("refused toolhost's credentials (401"),
        "{refused}"
    );
}

#[tokio::test]
async fn credentials_never_follow_a_redirect() {
    let Some(js) = js_dir() else { return };
    let facilitator = Facilitator::start(
        &js,
        json!({"mode": "redirect", "kinds": kinds(&[BASE_SEPOLIA])}),
    );
    let refused = serve(
        &tempfile::tempdir().unwrap(),
        &facilitator,
        &[],
        &[("TOOLHOST_FACILITATOR_BEARER", "tok-51bb0e")],
    )
    .err()
    .expect("start-up refused");
    assert!(refused.contains("redirect"), "{refused}");
    assert!(!refused.contains("tok-51bb0e"), "{refused}");
    let requests = facilitator.requests().await;
    assert_eq!(count(&requests, "/supported"), 1, "{requests}");
    assert_eq!(requests["redirectedArrivals"], 0, "{requests}");
}

#[tokio::test]
async fn the_networks_offered_follow_the_facilitators_supported_kinds() {
    let Some(js) = js_dir() else { return };
    let facilitator = Facilitator::start(
        &js,
        json!({"mode": "bearer", "bearer": "tok-0a1b2c", "kinds": kinds(&[BASE_SEPOLIA])}),
    );
    let bearer = [("TOOLHOST_FACILITATOR_BEARER", "tok-0a1b2c")];
    let networks = ["--network", "base-sepolia", "--network", LOCAL_NETWORK];
    let mut args = networks.to_vec();
    args.extend(["--facilitator-supported-refresh-secs", "1"]);
    let node = serve(&tempfile::tempdir().unwrap(), &facilitator, &args, &bearer).unwrap();
    // Configured on two networks; the facilitator settles one: only that one is offered.
    let required = crate::util::payment_required(&node.client, &node.url(PAID), &json!({})).await;
    let offered: Vec<&Value> = required["accepts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["network"])
        .collect();
    assert_eq!(offered, [&json!(BASE_SEPOLIA)], "{required}");
    assert!(
        node.log().contains("eip155:31337"),
        "the left-out network is not named"
    );
    let (_, manifest) = node.get("/ai/manifest").await;
    assert_eq!(manifest["payment"]["networks"], json!([BASE_SEPOLIA]));
    // Read again on the timer: toolhost's `/x402/supported` follows the facilitator's.
    let both = kinds(&[BASE_SEPOLIA, "eip155:31337"]);
    facilitator.set_kinds(both.clone()).await;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (_, supported) = node.get("/x402/supported").await;
        if supported["kinds"] == both {
            break;
        }
        assert!(Instant::now() < deadline, "not read again: {supported}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(node);
    // A facilitator that settles none of the accepted networks: nothing could be collected.
    facilitator.set_kinds(kinds(&["eip155:1"])).await;
    let refused = serve(
        &tempfile::tempdir().unwrap(),
        &facilitator,
        &networks,
        &bearer,
    )
    .err()
    .expect("start-up refused");
    assert!(
        refused.contains("none of the accepted networks"),
        "{refused}"
    );
    assert!(refused.contains("eip155:84532"), "{refused}");
}

/// A facilitator whose `/supported` lists `upto` (with its address) gets metered endpoints
/// offered with `upto` and that address, and is asked to settle what the call cost: the
/// requirement's `amount` replaced by the bill (x402's settlement override).
#[tokio::test]
async fn upto_is_offered_through_a_facilitator_that_settles_it_and_settled_for_the_bill() {
    let Some(js) = js_dir() else { return };
    let settler = PrivateKeySigner::random().address().to_checksum(None);
    let mut offered = kinds(&[BASE_SEPOLIA]);
    offered.as_array_mut().unwrap().push(json!({
        "x402Version": 2, "scheme": "upto", "network": BASE_SEPOLIA,
        "extra": {"facilitatorAddress": settler},
    }));
    let facilitator = Facilitator::start(
        &js,
        json!({"mode": "bearer", "bearer": "tok-upto", "kinds": offered}),
    );
    let bearer = [("TOOLHOST_FACILITATOR_BEARER", "tok-upto")];
    let node = serve(&tempfile::tempdir().unwrap(), &facilitator, &[], &bearer).unwrap();
    let endpoint = json!({
        "slug": "metered-words", "title": "Words", "priceUsd": 0.004,
        "metering": {"unit": "word"},
        "source": "export default (req, ctx) => { ctx.charge(0.0015, { units: 3 }); return { ok: true }; }",
    });
    let (status, created) = node
        .admin("POST", "/ai/endpoints/create", Some(&endpoint))
        .await;
    assert_eq!(status, 200, "{created}");
    let path = "/tools/metered-words";
    let required = crate::util::payment_required(&node.client, &node.url(path), &json!({})).await;
    assert_eq!(required["accepts"][0]["scheme"], "upto", "{required}");
    assert_eq!(
        required["accepts"][0]["extra"]["facilitatorAddress"],
        settler
    );
    let requirement = serde_json::from_value(required["accepts"][0].clone()).unwrap();
    let payload = toolhost::x402::schemes::upto_evm::signing::sign(
        &PrivateKeySigner::random(),
        &toolhost::x402::config::NetworkConfig::base_sepolia(),
        &requirement,
        |_| {},
    )
    .unwrap();
    let wire = json!({"x402Version": 2, "resource": required["resource"], "accepted": requirement, "payload": payload});
    let response = node
        .client
        .post(node.url(path))
        .header("PAYMENT-SIGNATURE", toolhost::x402::header::encode(&wire))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let (status, body) = read(response).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["receipt"]["amount"], "1500");
    assert_eq!(body["receipt"]["settlement"]["facilitator"], "remote");
    let requests = facilitator.requests().await;
    all_accepted(&requests, &["/verify", "/settle"]);
    let asked = |path: &str| {
        requests["requests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["path"] == path)
            .map(|r| (r["scheme"].clone(), r["amount"].clone()))
            .unwrap()
    };
    // Verified for the maximum the payer signed, settled for what the call cost.
    assert_eq!(asked("/verify"), (json!("upto"), json!("4000")));
    assert_eq!(asked("/settle"), (json!("upto"), json!("1500")));
}

/// What a metered endpoint is offered follows the facilitator's `/supported` as it is read
/// again: no `upto` while it lists none (credit still pays), `upto` once it does.
#[tokio::test]
async fn a_metered_endpoints_offer_follows_the_facilitators_supported_kinds() {
    let Some(js) = js_dir() else { return };
    let facilitator = Facilitator::start(
        &js,
        json!({"mode": "bearer", "bearer": "tok-later", "kinds": kinds(&[BASE_SEPOLIA])}),
    );
    let bearer = [("TOOLHOST_FACILITATOR_BEARER", "tok-later")];
    let args = ["--facilitator-supported-refresh-secs", "1"];
    let node = serve(&tempfile::tempdir().unwrap(), &facilitator, &args, &bearer).unwrap();
    let endpoint = json!({
        "slug": "metered-later", "title": "Later", "priceUsd": 0.004,
        "metering": {"unit": "word"},
        "source": "export default () => ({ ok: true });",
    });
    let (status, created) = node
        .admin("POST", "/ai/endpoints/create", Some(&endpoint))
        .await;
    assert_eq!(status, 200, "{created}");
    let url = node.url("/tools/metered-later");
    let required = crate::util::payment_required(&node.client, &url, &json!({})).await;
    assert_eq!(required["accepts"], json!([]), "{required}");
    let settler = PrivateKeySigner::random().address().to_checksum(None);
    let mut offered = kinds(&[BASE_SEPOLIA]);
    offered.as_array_mut().unwrap().push(json!({
        "x402Version": 2, "scheme": "upto", "network": BASE_SEPOLIA,
        "extra": {"facilitatorAddress": settler},
    }));
    facilitator.set_kinds(offered).await;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let required = crate::util::payment_required(&node.client, &url, &json!({})).await;
        if required["accepts"][0]["scheme"] == "upto" {
            assert_eq!(
                required["accepts"][0]["extra"]["facilitatorAddress"],
                settler
            );
            break;
        }
        assert!(Instant::now() < deadline, "never offered upto: {required}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
