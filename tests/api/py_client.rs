//! The official Python x402 client (`x402` on PyPI, httpx transport, eth_account signer) pays this
//! server end to end over x402 v2. `scripts/setup.sh` installs it into
//! `tests/python/x402/.venv`; without it the test is skipped locally and fails under CI.

use std::path::Path;

use crate::util::TestServer;

#[tokio::test]
async fn official_python_x402_client_pays() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/x402");
    let python = dir.join(".venv/bin/python");
    if !python.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "tests/python/x402/.venv is missing: run scripts/setup.sh"
        );
        eprintln!("skipped: tests/python/x402/.venv is missing (scripts/setup.sh installs it)");
        return;
    }
    let server = TestServer::start().await;
    let output = tokio::process::Command::new(&python)
        .arg("pay.py")
        .current_dir(&dir)
        .env("TOOLHOST_URL", &server.base)
        .output()
        .await
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("2 passed, 0 failed"),
        "pay.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    server.stop().await;
}
