//! The `toolhost` binary: help, first-start admin token, graceful shutdown.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_toolhost");

#[test]
fn help_documents_every_option() {
    let out = Command::new(BIN)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for option in [
        "--addr",
        "--data",
        "--base-url",
        "--admin-token",
        "TOOLHOST_ADDR",
        "TOOLHOST_DATA",
        "TOOLHOST_BASE_URL",
        "TOOLHOST_ADMIN_TOKEN",
        "--dev-allow-loopback",
        "--long-running-after-secs",
        "TOOLHOST_LONG_RUNNING_AFTER_SECS",
    ] {
        assert!(
            help.contains(option),
            "serve --help lacks {option}:\n{help}"
        );
    }
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(String::from_utf8(out.stdout).unwrap().contains("serve"));
}

/// Starts `toolhost serve` on port 0 and returns the child, its base URL and its stdout lines so far.
// The child is returned to the caller, which waits on it in `terminate`.
#[allow(clippy::zombie_processes)]
fn start(data: &std::path::Path) -> (Child, String, Vec<String>) {
    let mut child = Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--data"])
        .arg(data)
        .env_remove("TOOLHOST_ADMIN_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    match read_listening_line(&mut child) {
        Ok((url, lines)) => (child, url, lines),
        Err(lines) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("server did not start: {lines:?}");
        }
    }
}

/// Reads stdout until the "listening" line; `Err` with what was read when it never comes.
fn read_listening_line(child: &mut Child) -> Result<(String, Vec<String>), Vec<String>> {
    let Some(stdout) = child.stdout.take() else {
        return Err(Vec::new());
    };
    let mut lines = Vec::new();
    let mut reader = BufReader::new(stdout);
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        lines.push(line.trim().to_string());
        if let Some(url) = line.trim().strip_prefix("toolhost listening on ") {
            return Ok((url.to_string(), lines));
        }
    }
    Err(lines)
}

fn terminate(mut child: Child) -> std::process::ExitStatus {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    child.wait().unwrap()
}

#[test]
fn first_start_generates_admin_token_once_and_sigterm_shuts_down_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");

    let (child, base, lines) = start(&data);
    let printed: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("Generated admin token"))
        .collect();
    assert_eq!(printed.len(), 1, "{lines:?}");
    let token_path = data.join("admin_token");
    let token = std::fs::read_to_string(&token_path).unwrap();
    assert!(
        printed[0].ends_with(token.trim()),
        "the printed token is the stored one"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&token_path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let body = reqwest::blocking::get(format!("{base}/healthz"))
        .unwrap()
        .text()
        .unwrap();
    assert!(body.contains("\"ok\":true"), "{body}");
    assert!(terminate(child).success(), "SIGTERM ends with exit code 0");

    // Second start: the token is kept and not printed again; the store reopened cleanly.
    let (child, base, lines) = start(&data);
    assert!(
        !lines.iter().any(|l| l.contains("admin token")),
        "{lines:?}"
    );
    assert_eq!(std::fs::read_to_string(&token_path).unwrap(), token);
    let catalog = reqwest::blocking::get(format!("{base}/ai/endpoints"))
        .unwrap()
        .text()
        .unwrap();
    assert!(catalog.contains("receipt-echo-paid"));
    assert!(terminate(child).success());
}

/// A SIGTERM sent the moment "listening" is printed, before any request, is already the
/// server's: a clean shutdown with exit code 0, not death by the signal's default action.
#[test]
fn sigterm_right_after_listening_is_a_clean_shutdown() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let (child, _, _) = start(&dir.path().join("data"));
        let status = terminate(child);
        assert!(status.success(), "round {round}: {status:?}");
    }
}

/// On-chain settlement flags: documented, checked before anything starts, and the key never
/// echoed.
#[test]
fn settlement_flags_are_checked_at_start() {
    serve_help_lists(&[
        "--network",
        "TOOLHOST_NETWORKS",
        "--evm-rpc-url",
        "TOOLHOST_EVM_RPC_URL",
        "--settler-key-file",
        "TOOLHOST_SETTLER_KEY_FILE",
        "--settlement-timeout-secs",
        "--settle-margin-secs",
        "TOOLHOST_SETTLE_MARGIN_SECS",
        "--header-read-timeout-secs",
        "TOOLHOST_HEADER_READ_TIMEOUT_SECS",
        "--max-connections",
        "TOOLHOST_MAX_CONNECTIONS",
        "--anonymous-writes-per-minute",
        "TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE",
        "--free-receipt-retention-days",
        "TOOLHOST_FREE_RECEIPT_RETENTION_DAYS",
        "--event-retention-days",
        "TOOLHOST_EVENT_RETENTION_DAYS",
        "--js-memory-budget-mb",
        "--js-isolates-per-builder",
        "--js-heap-per-builder-mb",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let key = "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
    let refused = |args: &[&str], env: &[(&str, &str)]| refused_serve(dir.path(), args, env, key);
    let stderr = refused(&["--evm-rpc-url", "http://127.0.0.1:9"], &[]);
    assert!(stderr.contains("needs a settler key"), "{stderr}");
    let stderr = refused(&[], &[("TOOLHOST_SETTLER_KEY", key)]);
    assert!(stderr.contains("needs --evm-rpc-url"), "{stderr}");
    // A mainnet with nothing to settle through: payments would only be recorded.
    let stderr = refused(
        &[
            "--network",
            "base",
            "--pay-to",
            "0x000000000000000000000000000000000000dEaD",
        ],
        &[],
    );
    assert!(stderr.contains("moves real money"), "{stderr}");
    assert!(stderr.contains("--evm-rpc-url"), "{stderr}");
    let stderr = refused(&["--settle-margin-secs", "300"], &[]);
    assert!(stderr.contains("--settle-margin-secs"), "{stderr}");
    let stderr = refused(&["--network", "local,eip155:x,0x1,USDC,2"], &[]);
    assert!(stderr.contains("eip155:<chainId>"), "{stderr}");
    // Nothing listens on port 9: start-up says so, without the URL or the key.
    let stderr = refused(
        &[
            "--network",
            "local,eip155:31337,0x5FbDB2315678afecb367f032d93F642f64180aa3,USDC,2",
            "--evm-rpc-url",
            "http://127.0.0.1:9/secret-api-key",
        ],
        &[("TOOLHOST_SETTLER_KEY", key)],
    );
    assert!(stderr.contains("could not be reached"), "{stderr}");
    assert!(!stderr.contains("secret-api-key"), "{stderr}");
}

/// A hosted facilitator's credential flags: documented, checked before anything is sent, and
/// no secret ever echoed (the facilitator itself is tested in `facilitator_auth`).
#[test]
fn facilitator_credential_flags_are_checked_at_start() {
    serve_help_lists(&[
        "--facilitator-bearer-file",
        "TOOLHOST_FACILITATOR_BEARER",
        "--facilitator-cdp-key-id",
        "--facilitator-cdp-key-file",
        "TOOLHOST_FACILITATOR_CDP_KEY_SECRET",
        "--facilitator-header",
        "TOOLHOST_FACILITATOR_HEADERS",
        "--facilitator-supported-refresh-secs",
    ]);
    let dir = tempfile::tempdir().unwrap();
    const SECRET: &str = "sekrit-9c41d7e2";
    let open_file = dir.path().join("bearer");
    std::fs::write(&open_file, SECRET).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&open_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let open_file = open_file.display().to_string();
    let data = dir.path().join("data");
    let refused = |args: &[&str], env: &[(&str, &str)]| refused_serve(&data, args, env, SECRET);
    let url = ["--facilitator-url", "http://127.0.0.1:9"];
    let bearer = ("TOOLHOST_FACILITATOR_BEARER", SECRET);
    let cdp = ("TOOLHOST_FACILITATOR_CDP_KEY_SECRET", SECRET);
    let literal_header = format!("X-Key={SECRET}");
    // (arguments, environment, what the refusal says)
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a str);
    let cases: [Case; 6] = [
        (vec![], vec![bearer], "need --facilitator-url"),
        (
            [&url[..], &["--facilitator-cdp-key-id", "k"]].concat(),
            vec![],
            "needs the key's secret",
        ),
        (
            url.to_vec(),
            vec![bearer, cdp],
            "one of a bearer token and a CDP key",
        ),
        (
            [&url[..], &["--facilitator-header", &literal_header]].concat(),
            vec![],
            "X-Key: expected Name=file:PATH or Name=env:VARIABLE",
        ),
        (
            [&url[..], &["--facilitator-bearer-file", &open_file]].concat(),
            vec![bearer],
            "give the facilitator's bearer token once",
        ),
        (
            [&url[..], &["--facilitator-bearer-file", &open_file]].concat(),
            vec![],
            "bearer token",
        ),
    ];
    for (args, env, expected) in cases {
        let stderr = refused(&args, &env);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    // The group-readable file is refused as such, by its path.
    let stderr = refused(
        &[&url[..], &["--facilitator-bearer-file", &open_file]].concat(),
        &[],
    );
    assert!(stderr.contains(&open_file), "{stderr}");
}

/// `serve --help` names every one of `options`.
fn serve_help_lists(options: &[&str]) {
    let out = Command::new(BIN)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for option in options {
        assert!(
            help.contains(option),
            "serve --help lacks {option}:\n{help}"
        );
    }
}

/// `serve` on `data` with `args` and `env` is refused at start, without echoing `secret`:
/// what it printed on stderr.
fn refused_serve(
    data: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
    secret: &str,
) -> String {
    let out = Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--data"])
        .arg(data)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(!out.status.success(), "{args:?} should be refused");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains(secret), "the secret was echoed: {stderr}");
    stderr
}
