//! The official x402 JS client (`@x402/fetch` + `@x402/evm` + viem) pays this server end to end.
//! `scripts/setup.sh` installs `tests/js/x402/node_modules`; without it (or without node) the test is
//! skipped locally and fails under CI.

use std::path::Path;

use crate::util::TestServer;

#[tokio::test]
async fn official_x402_client_pays() {
    let js = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js/x402");
    let node = std::process::Command::new("node").arg("--version").output();
    if !js.join("node_modules/@x402/fetch").exists() || node.is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "node or tests/js/x402/node_modules is missing: run scripts/setup.sh"
        );
        eprintln!(
            "skipped: node or tests/js/x402/node_modules is missing (scripts/setup.sh installs them)"
        );
        return;
    }
    let server = TestServer::start().await;
    let output = tokio::process::Command::new("node")
        .args(["--test", "pay.mjs"])
        .current_dir(&js)
        .env("TOOLHOST_URL", &server.base)
        .output()
        .await
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("# pass 1"),
        "node --test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    server.stop().await;
}
