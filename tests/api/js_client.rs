//! The official x402 JS packages against this server end to end: the client (`@x402/fetch` +
//! `@x402/evm` + viem) pays, and the reference extensions package (`@x402/extensions`) checks
//! the `bazaar` and `payment-identifier` extensions. `scripts/setup.sh` installs
//! `tests/js/x402/node_modules`; without it (or without node) the tests are skipped locally and
//! fail under CI.

use std::path::{Path, PathBuf};

use crate::util::TestServer;

/// `tests/js/x402`, or `None` (skipped) when node or its packages are missing outside CI.
pub(crate) fn js_dir() -> Option<PathBuf> {
    let js = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js/x402");
    let node = std::process::Command::new("node").arg("--version").output();
    if js.join("node_modules/@x402/extensions").exists() && node.is_ok() {
        return Some(js);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "node or tests/js/x402/node_modules is missing: run scripts/setup.sh"
    );
    eprintln!(
        "skipped: node or tests/js/x402/node_modules is missing (scripts/setup.sh installs them)"
    );
    None
}

/// Runs `node --test file` against a fresh server and expects `passes` passing tests.
async fn run(file: &str, passes: usize) {
    run_on(TestServer::start().await, file, passes, &[]).await;
}

/// Runs `node --test file` against `server` with `env` besides `TOOLHOST_URL`, and expects
/// `passes` passing tests.
async fn run_on(server: TestServer, file: &str, passes: usize, env: &[(&str, &str)]) {
    let Some(js) = js_dir() else { return };
    let output = tokio::process::Command::new("node")
        .args(["--test", file])
        .current_dir(&js)
        .env("TOOLHOST_URL", &server.base)
        .envs(env.iter().copied())
        .output()
        .await
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains(&format!("# pass {passes}\n")),
        "node --test {file} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    server.stop().await;
}

#[tokio::test]
async fn official_x402_client_pays() {
    run("pay.mjs", 1).await;
}

/// The official `upto` client (`@x402/evm/upto/client`) pays a metered endpoint, which
/// charges what its handler reported (tests/api/metered.rs has the rest of metering).
#[tokio::test]
async fn official_x402_client_pays_a_metered_endpoint() {
    let server = TestServer::start().await;
    server
        .create(
            crate::util::As::Admin,
            &serde_json::json!({
                "slug": "metered-pages",
                "title": "Pages",
                "priceUsd": 0.005,
                "metering": {"unit": "page"},
                "source": "export default (req, ctx) => { ctx.charge(0.001 * req.input.pages, { units: req.input.pages }); return { ok: true }; }",
            }),
        )
        .await;
    run_on(server, "upto.mjs", 1, &[("METERED_SLUG", "metered-pages")]).await;
}

/// On a network whose asset is paid by Permit2 (`--network …,permit2`), the official exact
/// client signs a Permit2 permit to x402's exact proxy, which toolhost verifies.
#[tokio::test]
async fn official_x402_client_pays_exact_by_permit2() {
    use std::str::FromStr;
    let network = toolhost::x402::config::NetworkConfig::from_str(
        "base-sepolia-permit2,eip155:84532,0x036CbD53842c5426634e7929541eC2318f3dCF7e,USDC,2,permit2",
    )
    .unwrap();
    let server = TestServer::start_with(|c| c.payment.networks = vec![network]).await;
    run_on(server, "permit2.mjs", 1, &[]).await;
}

/// The reference extensions package validates every declaration toolhost makes, a metered
/// endpoint's (with its `info.pricing`) among them.
#[tokio::test]
async fn reference_x402_extensions() {
    let server = TestServer::start().await;
    server
        .create(
            crate::util::As::Admin,
            &serde_json::json!({
                "slug": "metered-pages", "title": "Pages", "priceUsd": 0.005,
                "metering": {"unit": "page"},
                "source": "export default (req, ctx) => ({ ok: true });",
            }),
        )
        .await;
    run_on(
        server,
        "extensions.mjs",
        6,
        &[("METERED_SLUG", "metered-pages")],
    )
    .await;
}
