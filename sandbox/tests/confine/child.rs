//! The parent's side of the confinement tests: spawning this test binary as a child in a role,
//! and reading back the `CONFINE <key> <value>` lines it reports.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sandbox::confine;

/// What the child is to do; absent in the parent.
pub(crate) const ROLE_ENV: &str = "TOOLHOST_CONFINE_TEST_ROLE";
/// A directory the parent made, standing for the server's data directory.
pub(crate) const DATA_DIR_ENV: &str = "TOOLHOST_CONFINE_TEST_DATA";
pub(crate) const PREFIX: &str = "CONFINE ";

pub(crate) fn role() -> Option<String> {
    std::env::var(ROLE_ENV).ok()
}

pub(crate) fn report(key: &str, value: impl std::fmt::Display) {
    println!("{PREFIX}{key} {value}");
}
/// This binary, running `test` alone as `role`, spawned the way the server spawns a worker.
pub(crate) fn spawn_child(test: &str, role: &str, data_dir: Option<&Path>) -> Child {
    // A descriptor the server inherited without close-on-exec, leaking to its worker.
    let leak = leaked_fd();
    let mut command = Command::new(std::env::current_exe().expect("test binary"));
    command
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin");
    confine::prepare_command(&mut command);
    command
        .env(ROLE_ENV, role)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = data_dir {
        command.env(DATA_DIR_ENV, dir);
    }
    let child = command.spawn().expect("spawn the child");
    unsafe { libc::close(leak) };
    child
}

/// A pipe end without close-on-exec, as a server might have inherited from its own parent.
fn leaked_fd() -> libc::c_int {
    let mut fds = [-1; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    unsafe { libc::close(fds[1]) };
    fds[0]
}

/// Waits for the child (at most `limit`) and returns its `CONFINE` lines as key -> value.
pub(crate) fn outcome(mut child: Child, limit: Duration) -> BTreeMap<String, String> {
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).map(|_| text)
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).map(|_| text)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the child did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = out.join().unwrap().unwrap_or_default();
    let err = err.join().unwrap().unwrap_or_default();
    assert!(
        status.success(),
        "child failed ({status}):\n--- stdout\n{out}\n--- stderr\n{err}"
    );
    let lines: BTreeMap<String, String> = out
        .lines()
        // libtest writes `test <name> ... ` without a newline before the test's own output.
        .filter_map(|line| Some(&line[line.find(PREFIX)? + PREFIX.len()..]))
        .filter_map(|line| line.split_once(' '))
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect();
    assert_eq!(
        lines.get("done").map(String::as_str),
        Some("yes"),
        "the child did not finish its checks:\n--- stdout\n{out}\n--- stderr\n{err}"
    );
    lines
}

pub(crate) fn data_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("confine-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("data dir");
    dir
}

pub(crate) fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

pub(crate) fn expect(lines: &BTreeMap<String, String>, key: &str, wanted: &[&str]) {
    let got = lines
        .get(key)
        .unwrap_or_else(|| panic!("no outcome for {key}; got {lines:#?}"));
    assert!(
        wanted.contains(&got.as_str()),
        "{key}: got `{got}`, wanted one of {wanted:?}"
    );
}
