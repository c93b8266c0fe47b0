//! `scripts/setup.sh` installs what its mode needs and nothing more: `serve` (what
//! `scripts/serve.sh` runs on a fresh machine) only the build toolchain's packages, the default
//! mode everything the tests use too. The script runs for real with fake `dpkg-query` (nothing is
//! installed), `apt-get` and `sudo` (which record what they were asked) and a `PATH` of only
//! those and the few real tools the script needs before its installs (no `node`, `npm` or
//! `python3`), so the default mode cannot install the test clients after its `apt-get install`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

const BUILD_PACKAGES: &[&str] = &["build-essential", "cmake", "libsimde-dev", "pkg-config"];
const TEST_PACKAGES: &[&str] = &["chromium", "postgresql"];

fn fake(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// Puts the machine's own `tool` into `dir` (a PATH of only chosen commands).
fn link_real(dir: &Path, tool: &str) {
    let real = Command::new("/bin/bash")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .unwrap();
    let real = String::from_utf8(real.stdout).unwrap();
    std::os::unix::fs::symlink(real.trim(), dir.join(tool)).unwrap();
}

/// Runs `bash scripts/setup.sh ARGS` against the fakes; returns its output and the apt log.
fn run_setup(args: &[&str]) -> (Output, String) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("apt.log");
    let record = format!("echo \"$0 $*\" >> {}", log.display());
    fake(dir.path(), "dpkg-query", "exit 1");
    fake(dir.path(), "apt-get", &record);
    fake(dir.path(), "sudo", "exec \"$@\"");
    for tool in ["grep", "id", "dirname", "cmp", "cargo"] {
        link_real(dir.path(), tool);
    }
    let path = dir.path().display().to_string();
    let output = Command::new("/bin/bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/setup.sh"))
        .args(args)
        .env("PATH", path)
        .output()
        .unwrap();
    (output, fs::read_to_string(&log).unwrap_or_default())
}

/// The packages of the `apt-get install` line in the log.
fn installed(apt_log: &str) -> Vec<String> {
    apt_log
        .lines()
        .filter(|line| line.contains(" install "))
        .flat_map(|line| line.split_whitespace().skip(1))
        .filter(|word| !word.starts_with('-') && *word != "install")
        .map(str::to_owned)
        .collect()
}

#[test]
fn serve_mode_installs_only_the_build_toolchain() {
    let (output, apt_log) = run_setup(&["serve"]);
    assert!(
        output.status.success(),
        "setup.sh serve failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(installed(&apt_log), BUILD_PACKAGES, "apt log: {apt_log}");
}

#[test]
fn default_mode_also_installs_what_the_tests_use() {
    // After the system packages it goes on to the test clients: where their installs are
    // already up to date it skips them and succeeds, otherwise it stops at its first npm or
    // venv (neither is on the PATH here). Either way the apt request is what is checked.
    let (_, apt_log) = run_setup(&[]);
    let packages = installed(&apt_log);
    for package in BUILD_PACKAGES.iter().chain(TEST_PACKAGES) {
        assert!(
            packages.iter().any(|p| p == package),
            "{package} not installed: {apt_log}"
        );
    }
    for tool in ["nodejs", "npm", "python3-venv"] {
        assert!(
            packages.iter().any(|p| p == tool),
            "{tool} not installed: {apt_log}"
        );
    }
}

#[test]
fn an_unknown_mode_is_a_usage_error() {
    let (output, apt_log) = run_setup(&["everything"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(apt_log.is_empty(), "nothing installed: {apt_log}");
}

/// The bench scripts install their load generator when it is missing instead of stopping
/// (`bench/lib/install.sh`, used by `bench/run.sh`, `payments.sh`, `store.sh`, `soak.sh`).
#[test]
fn bench_installs_wrk_when_missing() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("apt.log");
    fake(
        dir.path(),
        "apt-get",
        &format!("echo \"$0 $*\" >> {}", log.display()),
    );
    fake(dir.path(), "sudo", "exec \"$@\"");
    link_real(dir.path(), "id");
    let script = format!(
        "log() {{ :; }}; die() {{ echo \"$*\" >&2; exit 1; }}; source {}; apt_install_missing wrk:wrk id:coreutils",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("bench/lib/install.sh")
            .display()
    );
    let status = Command::new("/bin/bash")
        .args(["-c", &script])
        .env("PATH", dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let apt_log = fs::read_to_string(&log).unwrap();
    // wrk is not on that PATH, id is: only wrk is asked for.
    assert_eq!(installed(&apt_log), ["wrk"], "apt log: {apt_log}");
}
