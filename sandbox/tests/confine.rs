//! Worker confinement (`sandbox::confine`) with the real engine. Confinement is for good, so
//! each test re-runs this test binary as a child (`<exe> <test name> --exact --nocapture`, with
//! [`ROLE_ENV`] saying what to do), spawned through `prepare_command` like the server spawns its
//! workers. The child reports each outcome as a `CONFINE <key> <value>` line on stdout; the
//! parent parses and asserts on them, so the harness itself is never confined.

#![allow(unsafe_code)] // the child plays a compromised engine: raw system calls

mod util;

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sandbox::confine::{self, ConfineOptions, LandlockEnforcement, LandlockThreads};
use sandbox::{EndpointCode, Limits, PoolConfig, SandboxError};
use serde_json::json;
use util::*;

/// What the child is to do; absent in the parent.
const ROLE_ENV: &str = "TOOLHOST_CONFINE_TEST_ROLE";
/// A directory the parent made, standing for the server's data directory.
const DATA_DIR_ENV: &str = "TOOLHOST_CONFINE_TEST_DATA";
const PREFIX: &str = "CONFINE ";

/// The parent's pid, the target of the probes that reach for another process.
static PARENT: std::sync::OnceLock<libc::pid_t> = std::sync::OnceLock::new();

fn role() -> Option<String> {
    std::env::var(ROLE_ENV).ok()
}

fn report(key: &str, value: impl std::fmt::Display) {
    println!("{PREFIX}{key} {value}");
}

// ---------------------------------------------------------------------------------------------
// Parent side.

/// This binary, running `test` alone as `role`, spawned the way the server spawns a worker.
fn spawn_child(test: &str, role: &str, data_dir: Option<&Path>) -> Child {
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
fn outcome(mut child: Child, limit: Duration) -> BTreeMap<String, String> {
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

fn data_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("confine-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("data dir");
    dir
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

fn expect(lines: &BTreeMap<String, String>, key: &str, wanted: &[&str]) {
    let got = lines
        .get(key)
        .unwrap_or_else(|| panic!("no outcome for {key}; got {lines:#?}"));
    assert!(
        wanted.contains(&got.as_str()),
        "{key}: got `{got}`, wanted one of {wanted:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// The native escapes a compromised engine would try, as raw system calls.

/// `ok` or the errno's name.
fn errno_of(result: libc::c_long) -> String {
    if result >= 0 {
        return "ok".to_owned();
    }
    let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    match errno {
        libc::EPERM => "EPERM".to_owned(),
        libc::EACCES => "EACCES".to_owned(),
        libc::ENOSYS => "ENOSYS".to_owned(),
        libc::EINVAL => "EINVAL".to_owned(),
        libc::ENOENT => "ENOENT".to_owned(),
        libc::EBADF => "EBADF".to_owned(),
        libc::ESRCH => "ESRCH".to_owned(),
        other => format!("errno{other}"),
    }
}

fn c(text: &str) -> CString {
    CString::new(text).unwrap()
}

/// Closes `fd` if a probe got one (it should not).
fn closing(result: libc::c_long) -> libc::c_long {
    if result >= 0 {
        unsafe { libc::close(result as libc::c_int) };
    }
    result
}

/// A child process that a probe managed to start must not run the rest of the test.
fn exit_if_child(result: libc::c_long) -> libc::c_long {
    if result == 0 {
        unsafe { libc::_exit(0) };
    }
    if result > 0 {
        unsafe { libc::waitpid(result as libc::pid_t, std::ptr::null_mut(), 0) };
    }
    result
}

/// One escape attempt: the system call's result (-1 with `errno` set when refused).
type Probe<'a> = Box<dyn Fn() -> libc::c_long + 'a>;

/// Runs every probe and reports `probe.<where>.<name> <outcome>`. `ipc_fd` is the worker's
/// open socket, for `connect`.
fn probe_escapes(place: &str, data: &Path, ipc_fd: libc::c_int) {
    // Read before confinement: `getppid` is not on the allow-list.
    let ppid = *PARENT.get().expect("parent pid");
    assert!(ppid > 1, "a real parent, not -1 or init");
    let pid = unsafe { libc::getpid() };
    let passwd = c("/etc/passwd");
    let parent_mem = c(&format!("/proc/{ppid}/mem"));
    let new_file = c(data.join(format!("{place}.txt")).to_str().unwrap());
    let new_dir = c(data.join(format!("{place}.d")).to_str().unwrap());
    let true_bin = c("/bin/true");
    let argv = [true_bin.as_ptr(), std::ptr::null()];
    let envp = [std::ptr::null::<libc::c_char>()];
    let mut byte = [0u8; 1];
    let local = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let remote = libc::iovec {
        iov_base: 0x1000 as *mut libc::c_void,
        iov_len: 1,
    };
    let unix_addr = {
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (dst, src) in addr.sun_path.iter_mut().zip(b"/tmp/confine-test.sock") {
            *dst = *src as libc::c_char;
        }
        addr
    };
    let mut clone_args = [0u64; 11]; // struct clone_args, flags 0: a fork
    clone_args[4] = libc::SIGCHLD as u64; // exit_signal

    let probes: Vec<(&str, Probe)> = vec![
        (
            "open_etc_passwd",
            Box::new(|| closing(unsafe { libc::open(passwd.as_ptr(), libc::O_RDONLY) }.into())),
        ),
        (
            "openat2_etc_passwd",
            Box::new(|| {
                let how = [libc::O_RDONLY as u64, 0, 0]; // struct open_how
                closing(unsafe {
                    libc::syscall(
                        libc::SYS_openat2,
                        libc::AT_FDCWD,
                        passwd.as_ptr(),
                        how.as_ptr(),
                        std::mem::size_of_val(&how),
                    )
                })
            }),
        ),
        (
            "open_parent_mem",
            Box::new(|| closing(unsafe { libc::open(parent_mem.as_ptr(), libc::O_RDWR) }.into())),
        ),
        (
            "create_data_file",
            Box::new(|| {
                closing(
                    unsafe {
                        libc::open(
                            new_file.as_ptr(),
                            libc::O_CREAT | libc::O_WRONLY | libc::O_EXCL,
                            0o600,
                        )
                    }
                    .into(),
                )
            }),
        ),
        (
            "mkdir_data_dir",
            Box::new(|| unsafe { libc::mkdir(new_dir.as_ptr(), 0o700) }.into()),
        ),
        (
            "socket_inet",
            Box::new(|| {
                closing(unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) }.into())
            }),
        ),
        (
            "socket_unix",
            Box::new(|| {
                closing(unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) }.into())
            }),
        ),
        (
            "socketpair",
            Box::new(|| {
                let mut fds = [-1; 2];
                let result = unsafe {
                    libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr())
                };
                if result == 0 {
                    unsafe { libc::close(fds[0]) };
                    unsafe { libc::close(fds[1]) };
                }
                result.into()
            }),
        ),
        (
            "connect",
            Box::new(|| {
                unsafe {
                    libc::connect(
                        ipc_fd,
                        (&unix_addr as *const libc::sockaddr_un).cast(),
                        std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
                    )
                }
                .into()
            }),
        ),
        (
            "execve_bin_true",
            Box::new(|| {
                unsafe { libc::execve(true_bin.as_ptr(), argv.as_ptr(), envp.as_ptr()) }.into()
            }),
        ),
        (
            "fork",
            Box::new(|| exit_if_child(unsafe { libc::fork() }.into())),
        ),
        (
            "clone_process",
            Box::new(|| {
                exit_if_child(unsafe { libc::syscall(libc::SYS_clone, libc::SIGCHLD, 0, 0, 0, 0) })
            }),
        ),
        (
            "clone3",
            Box::new(|| {
                exit_if_child(unsafe {
                    libc::syscall(
                        libc::SYS_clone3,
                        clone_args.as_ptr(),
                        std::mem::size_of_val(&clone_args),
                    )
                })
            }),
        ),
        (
            "ptrace_attach_parent",
            Box::new(|| unsafe { libc::ptrace(libc::PTRACE_ATTACH, ppid, 0, 0) }),
        ),
        (
            "process_vm_readv_parent",
            Box::new(
                || unsafe { libc::process_vm_readv(ppid, &local, 1, &remote, 1, 0) }
                    as libc::c_long,
            ),
        ),
        (
            "process_vm_writev_parent",
            Box::new(|| {
                (unsafe { libc::process_vm_writev(ppid, &local, 1, &remote, 1, 0) }) as libc::c_long
            }),
        ),
        #[cfg(target_arch = "x86_64")]
        (
            "raw_fork",
            Box::new(|| exit_if_child(unsafe { libc::syscall(libc::SYS_fork) })),
        ),
        #[cfg(target_arch = "x86_64")]
        (
            "raw_vfork",
            Box::new(|| exit_if_child(unsafe { libc::syscall(libc::SYS_vfork) })),
        ),
        (
            "kill_parent",
            Box::new(|| unsafe { libc::kill(ppid, 0) }.into()),
        ),
        (
            "tgkill_parent",
            Box::new(|| unsafe { libc::syscall(libc::SYS_tgkill, ppid, ppid, 0) }),
        ),
        (
            "tgkill_self",
            Box::new(|| unsafe { libc::syscall(libc::SYS_tgkill, pid, libc::gettid(), 0) }),
        ),
        (
            "unshare_net",
            Box::new(|| unsafe { libc::unshare(libc::CLONE_NEWNET) }.into()),
        ),
        (
            "mount_tmpfs",
            Box::new(|| {
                let (tmpfs, target) = (c("tmpfs"), c("/tmp"));
                unsafe {
                    libc::mount(
                        tmpfs.as_ptr(),
                        target.as_ptr(),
                        tmpfs.as_ptr(),
                        0,
                        std::ptr::null(),
                    )
                }
                .into()
            }),
        ),
        (
            "bpf",
            Box::new(|| unsafe { libc::syscall(libc::SYS_bpf, 0, 0, 0) }),
        ),
        (
            "io_uring_setup",
            Box::new(|| closing(unsafe { libc::syscall(libc::SYS_io_uring_setup, 1, 0) })),
        ),
        (
            "userfaultfd",
            Box::new(|| closing(unsafe { libc::syscall(libc::SYS_userfaultfd, 0) })),
        ),
        (
            "perf_event_open",
            Box::new(|| {
                closing(unsafe { libc::syscall(libc::SYS_perf_event_open, 0, 0, -1, -1, 0) })
            }),
        ),
        (
            "keyctl",
            Box::new(|| unsafe { libc::syscall(libc::SYS_keyctl, 0, 0, 0, 0, 0) }),
        ),
        (
            "memfd_create",
            Box::new(|| {
                let name = c("x");
                closing(unsafe { libc::syscall(libc::SYS_memfd_create, name.as_ptr(), 0) })
            }),
        ),
        (
            "raise_nofile",
            Box::new(|| {
                let limit = libc::rlimit {
                    rlim_cur: 1 << 20,
                    rlim_max: 1 << 20,
                };
                unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }.into()
            }),
        ),
        (
            "mmap_exec",
            Box::new(|| {
                let mapped = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        4096,
                        libc::PROT_READ | libc::PROT_EXEC,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                        -1,
                        0,
                    )
                };
                if mapped == libc::MAP_FAILED {
                    return -1;
                }
                unsafe { libc::munmap(mapped, 4096) };
                0
            }),
        ),
        (
            "mprotect_exec",
            Box::new(|| {
                let mapped = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        4096,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                        -1,
                        0,
                    )
                };
                assert_ne!(mapped, libc::MAP_FAILED, "plain memory stays available");
                let result =
                    unsafe { libc::mprotect(mapped, 4096, libc::PROT_READ | libc::PROT_EXEC) };
                let errno = std::io::Error::last_os_error();
                unsafe { libc::munmap(mapped, 4096) };
                if result != 0 {
                    // munmap may have reset errno.
                    unsafe { *libc::__errno_location() = errno.raw_os_error().unwrap_or(0) };
                }
                result.into()
            }),
        ),
        (
            "set_dumpable",
            Box::new(|| unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) }.into()),
        ),
    ];
    for (name, probe) in probes {
        report(&format!("probe.{place}.{name}"), errno_of(probe()));
    }
    // What std itself does when asked for a program.
    let spawned = Command::new("/bin/true").spawn();
    report(
        &format!("probe.{place}.std_command"),
        match spawned {
            Ok(mut child) => {
                let _ = child.wait();
                "ok".to_owned()
            }
            Err(err) => format!("err:{}", err.raw_os_error().unwrap_or(0)),
        },
    );
}

/// Every probe of `probe_escapes`, with what a confined worker must answer.
const REFUSED_BY_SECCOMP: &[&str] = &[
    "open_etc_passwd",
    "openat2_etc_passwd",
    "open_parent_mem",
    "create_data_file",
    "mkdir_data_dir",
    "socket_inet",
    "socket_unix",
    "socketpair",
    "connect",
    "execve_bin_true",
    "fork",
    "clone_process",
    "ptrace_attach_parent",
    "process_vm_readv_parent",
    "process_vm_writev_parent",
    #[cfg(target_arch = "x86_64")]
    "raw_fork",
    #[cfg(target_arch = "x86_64")]
    "raw_vfork",
    "kill_parent",
    "tgkill_parent",
    "unshare_net",
    "mount_tmpfs",
    "bpf",
    "io_uring_setup",
    "userfaultfd",
    "perf_event_open",
    "keyctl",
    "memfd_create",
    "raise_nofile",
    "set_dumpable",
    // W^X, QuickJS builds only (V8's JIT needs executable memory).
    #[cfg(not(feature = "v8"))]
    "mmap_exec",
    #[cfg(not(feature = "v8"))]
    "mprotect_exec",
];

// ---------------------------------------------------------------------------------------------
// The tests.

/// A child confined like a worker: it still runs handlers (cold starts on threads started
/// after the filter, a timeout, the heap limit and the isolate recycling they cause) and moves
/// bytes over its socket pair, and every escape is refused, on the thread that confined the
/// process, on a runtime thread that existed before, and on a thread started after.
#[test]
fn a_confined_worker_runs_handlers_and_nothing_else() {
    const NAME: &str = "a_confined_worker_runs_handlers_and_nothing_else";
    if role().as_deref() == Some("worker") {
        return confined_worker();
    }
    let data = data_dir("worker");
    let lines = outcome(
        spawn_child(NAME, "worker", Some(&data)),
        Duration::from_secs(120),
    );
    let left: Vec<_> = std::fs::read_dir(&data).unwrap().collect();
    let _ = std::fs::remove_dir_all(&data);

    // The engine under confinement.
    expect(&lines, "invoke.cold_start", &["ok"]);
    expect(&lines, "invoke.warm", &["ok"]);
    expect(&lines, "invoke.second_endpoint", &["ok"]);
    expect(&lines, "invoke.timeout", &["timeout"]);
    expect(&lines, "invoke.after_timeout", &["ok"]);
    // A loaded machine may stop the bomb at its time limit before the heap limit.
    expect(&lines, "invoke.heap_bomb", &["heap_limit", "timeout"]);
    expect(&lines, "invoke.after_heap_bomb", &["ok"]);
    expect(&lines, "invoke.stuck", &["timeout/abandoned:1"]);
    expect(&lines, "invoke.after_stuck", &["ok"]);
    expect(&lines, "invoke.stuck_thread_ended", &["true"]);
    expect(&lines, "ipc.round_trip", &["ok"]);
    expect(&lines, "ipc.from_new_thread", &["ok"]);
    assert_ne!(
        lines["fds.inherited_closed"], "0",
        "the leaked pipe reached the child"
    );
    expect(&lines, "fds.left_after_stdio", &["0"]);

    // The process's state.
    expect(&lines, "state.no_new_privs", &["1"]);
    expect(&lines, "state.dumpable", &["0"]);
    expect(&lines, "state.seccomp_mode", &["2"]);
    expect(&lines, "state.core_limit", &["0"]);
    let report = &lines["confinement"];
    eprintln!("the child's confinement: {report}");
    assert!(report.contains("seccomp: allow-list of"), "{report}");
    // Root gets the namespaces outright; another user inside a user namespace of its own
    // where the kernel lets unprivileged users make one, and else none.
    if is_root() {
        assert!(
            report.contains("namespaces: net new, mnt new, ipc new, uts new, user shared"),
            "{report}"
        );
    } else {
        assert!(
            report.contains("namespaces: net new, mnt new, ipc new, uts new, user new")
                || report.contains("namespaces: net shared, mnt shared, ipc shared, uts shared"),
            "{report}"
        );
    }

    // Every escape, everywhere.
    for place in ["main", "runtime_worker", "new_thread"] {
        for probe in REFUSED_BY_SECCOMP {
            expect(&lines, &format!("probe.{place}.{probe}"), &["EPERM"]);
        }
        // clone3 cannot be filtered on its flags: it answers ENOSYS, so glibc falls back to
        // clone, where CLONE_THREAD is checked.
        expect(&lines, &format!("probe.{place}.clone3"), &["ENOSYS"]);
        // Signalling its own threads stays allowed (abort uses it).
        expect(&lines, &format!("probe.{place}.tgkill_self"), &["ok"]);
        let std_command = &lines[&format!("probe.{place}.std_command")];
        assert!(std_command.starts_with("err:"), "{place}: {std_command}");
    }
    assert!(left.is_empty(), "the worker created {left:?}");
}

fn confined_worker() {
    let data = PathBuf::from(std::env::var(DATA_DIR_ENV).expect("data dir"));
    // Like the worker's `main`: nothing inherited but stdio (the parent leaves a pipe open).
    let closed = confine::close_inherited_fds(&[]).expect("close inherited fds");
    report("fds.inherited_closed", closed);
    report(
        "fds.left_after_stdio",
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|&fd| fd > 2)
            .count()
            - 1, // read_dir's own
    );
    // Like the worker: a multi-thread runtime for the IPC, the socket, the pool (no spares,
    // so the first call starts an isolate thread after confinement).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let config = PoolConfig {
        spare_isolates: 0,
        ..test_config()
    };
    let (pool, _host) = runtime.block_on(async { pool_with(config.clone()) });
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("socket pair");
    let ipc_fd = std::os::fd::AsRawFd::as_raw_fd(&ours);
    PARENT.set(unsafe { libc::getppid() }).unwrap();

    let confinement = confine::confine_current_process_with(&ConfineOptions::for_pool(&config))
        .expect("confinement");
    report("confinement", &confinement);
    report("state.no_new_privs", unsafe {
        libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
    });
    report("state.dumpable", unsafe {
        libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0)
    });
    report("state.seccomp_mode", unsafe {
        libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0)
    });
    report("state.core_limit", confinement.core_limit);

    runtime.block_on(async {
        let echo = endpoint("echo", ECHO);
        let classify = |result: Result<sandbox::HandlerResponse, SandboxError>| match result {
            Ok(response) if response.body.get("echo").is_some() => "ok".to_owned(),
            Ok(response) if response.body == json!("fine") => "ok".to_owned(),
            Ok(response) => format!("unexpected:{}", response.body),
            Err(SandboxError::Timeout) => "timeout".to_owned(),
            Err(SandboxError::ResourceLimit(what)) if what.contains("heap") => {
                "heap_limit".to_owned()
            }
            Err(err) => format!("error:{err:?}").replace(' ', "_"),
        };
        let result = invoke(&pool, &echo, json!(1)).await.result;
        report("invoke.cold_start", classify(result));
        let result = invoke(&pool, &echo, json!(2)).await.result;
        report("invoke.warm", classify(result));
        let other = endpoint("other", ECHO);
        let result = invoke(&pool, &other, json!(3)).await.result;
        report("invoke.second_endpoint", classify(result));

        let spin = EndpointCode {
            limits: Some(Limits {
                heap_bytes: 32 * 1024 * 1024,
                timeout: Duration::from_millis(300),
            }),
            ..endpoint("spin", "export default () => { for (;;) {} };")
        };
        let result = invoke(&pool, &spin, json!(null)).await.result;
        report("invoke.timeout", classify(result));
        let spin_fine = EndpointCode {
            version: "v2".to_owned(),
            source: "export default () => 'fine';".to_owned(),
            ..spin
        };
        let result = invoke(&pool, &spin_fine, json!(null)).await.result;
        report("invoke.after_timeout", classify(result));

        let bomb = endpoint(
            "bomb",
            r#"export default () => {
                const chunk = "x".repeat(1 << 20);
                const hoard = [];
                for (;;) hoard.push(chunk + hoard.length);
            };"#,
        );
        let result = invoke(&pool, &bomb, json!(null)).await.result;
        report("invoke.heap_bomb", classify(result));
        // Same version: the endpoint's recycled isolate, rebuilt on its thread.
        let result = invoke(&pool, &echo, json!(4)).await.result;
        let bomb_then = EndpointCode {
            version: "v2".to_owned(),
            source: "export default () => 'fine';".to_owned(),
            ..bomb
        };
        let after = invoke(&pool, &bomb_then, json!(null)).await.result;
        report(
            "invoke.after_heap_bomb",
            if classify(result) == "ok" {
                classify(after)
            } else {
                "echo failed".to_owned()
            },
        );

        // A thread stuck in native code past its hard deadline is abandoned; the endpoint's
        // next call starts a fresh isolate thread (spawned under the filter), and the stuck
        // one ends when it comes back.
        let stuck = EndpointCode {
            limits: Some(Limits {
                heap_bytes: 32 * 1024 * 1024,
                timeout: Duration::from_millis(300),
            }),
            ..granted(
                "stuck",
                r#"let calls = 0;
                export default async (req, ctx) => {
                    calls++;
                    if (req.input && req.input.block) await ctx.kv.get("block-ms:" + req.input.block);
                    return { echo: calls };
                };"#,
            )
        };
        let result = invoke(&pool, &stuck, json!({ "block": 1500 })).await.result;
        let abandoned = pool.stats().abandoned;
        report(
            "invoke.stuck",
            format!("{}/abandoned:{abandoned}", classify(result)),
        );
        let result = invoke(&pool, &stuck, json!(null)).await.result;
        report("invoke.after_stuck", classify(result));
        let until = Instant::now() + Duration::from_secs(10);
        while pool.stats().abandoned_isolates > 0 && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        report("invoke.stuck_thread_ended", pool.stats().abandoned_isolates == 0);

        // IPC over the socket pair, through tokio.
        let ours = tokio::net::UnixStream::from_std({
            ours.set_nonblocking(true).unwrap();
            ours.try_clone().unwrap()
        });
        let theirs_async = tokio::net::UnixStream::from_std({
            theirs.set_nonblocking(true).unwrap();
            theirs.try_clone().unwrap()
        });
        let round_trip = async {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut a, mut b) = (ours.ok()?, theirs_async.ok()?);
            a.write_all(b"ping over the socket").await.ok()?;
            let mut buf = [0u8; 20];
            b.read_exact(&mut buf).await.ok()?;
            b.write_all(&buf).await.ok()?;
            let mut back = [0u8; 20];
            a.read_exact(&mut back).await.ok()?;
            (&back == b"ping over the socket").then_some(())
        };
        report(
            "ipc.round_trip",
            if round_trip.await.is_some() {
                "ok"
            } else {
                "failed"
            },
        );

        // A thread that existed before confinement (a runtime worker).
        let data_for_worker = data.clone();
        tokio::task::spawn(
            async move { probe_escapes("runtime_worker", &data_for_worker, ipc_fd) },
        )
        .await
        .unwrap();
    });

    // The thread that confined the process.
    probe_escapes("main", &data, ipc_fd);
    // A thread started after confinement, writing to the socket too.
    let data_for_thread = data.clone();
    let theirs_blocking = theirs.try_clone().unwrap();
    std::thread::spawn(move || {
        probe_escapes("new_thread", &data_for_thread, ipc_fd);
        use std::io::Write;
        theirs_blocking.set_nonblocking(false).unwrap();
        (&theirs_blocking).write_all(b"from a new thread").unwrap();
    })
    .join()
    .unwrap();
    let mut got = [0u8; 17];
    ours.set_nonblocking(false).unwrap();
    let moved = (&ours).read_exact(&mut got).is_ok() && &got == b"from a new thread";
    report("ipc.from_new_thread", if moved { "ok" } else { "failed" });

    runtime.block_on(pool.shutdown());
    drop(runtime);
    report("done", "yes");
}

/// Landlock alone (no seccomp), so its own refusals show: the file system is closed to the
/// thread that enforced it and to threads it starts.
#[test]
fn landlock_alone_closes_the_file_system() {
    const NAME: &str = "landlock_alone_closes_the_file_system";
    if role().as_deref() == Some("landlock") {
        return landlocked();
    }
    let data = data_dir("landlock");
    let lines = outcome(
        spawn_child(NAME, "landlock", Some(&data)),
        Duration::from_secs(60),
    );
    let left: Vec<_> = std::fs::read_dir(&data).unwrap().collect();
    let _ = std::fs::remove_dir_all(&data);
    let enforced = lines["landlock.enforcement"].as_str();
    if enforced == "NotSupported" {
        eprintln!("this kernel has no Landlock: nothing to check");
        return;
    }
    // What this module asks for is ABI 6; a kernel that has it enforces all of it.
    let abi: u32 = lines["landlock.abi"].parse().unwrap();
    if abi >= 6 {
        assert_eq!(enforced, "Full");
    }
    // The report is honest about threads that were already running.
    match lines["landlock.threads"].as_str() {
        "CallingThread" => {
            assert!(abi < 8);
            expect(&lines, "landlock.older_thread.open_etc_passwd", &["ok"]);
        }
        _ => expect(&lines, "landlock.older_thread.open_etc_passwd", &["EACCES"]),
    }
    for place in ["calling", "new_thread"] {
        for probe in ["open_etc_passwd", "create_data_file", "mkdir_data_dir"] {
            expect(&lines, &format!("landlock.{place}.{probe}"), &["EACCES"]);
        }
        // Landlock has no say over what seccomp refuses elsewhere.
        expect(&lines, &format!("landlock.{place}.getpid"), &["ok"]);
    }
    assert!(left.is_empty(), "the child created {left:?}");
}

fn landlocked() {
    let data = PathBuf::from(std::env::var(DATA_DIR_ENV).expect("data dir"));
    // A thread running before Landlock is enforced: covered only where the kernel has ABI 8's
    // `all_threads`.
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let older = std::thread::spawn(move || {
        wait.recv().unwrap();
        let passwd = c("/etc/passwd");
        let open = closing(unsafe { libc::open(passwd.as_ptr(), libc::O_RDONLY) }.into());
        report("landlock.older_thread.open_etc_passwd", errno_of(open));
    });
    let report_ = confine::restrict_file_system().expect("landlock");
    go.send(()).unwrap();
    older.join().unwrap();
    report("landlock.enforcement", format!("{:?}", report_.enforcement));
    report("landlock.threads", format!("{:?}", report_.threads));
    report("landlock.abi", report_.abi.unwrap_or(0));
    // A second call does not stack another domain: it answers what the first did.
    assert_eq!(confine::restrict_file_system().unwrap(), report_);
    if report_.enforcement != LandlockEnforcement::NotSupported {
        // libtest runs this test on a thread of its own: the main thread is not covered.
        assert!(
            report_.threads == LandlockThreads::CallingThread
                || report_.threads == LandlockThreads::All
        );
    }
    let probe = move |place: &str| {
        let passwd = c("/etc/passwd");
        let file = c(data.join(format!("{place}.txt")).to_str().unwrap());
        let dir = c(data.join(format!("{place}.d")).to_str().unwrap());
        let open = closing(unsafe { libc::open(passwd.as_ptr(), libc::O_RDONLY) }.into());
        report(&format!("landlock.{place}.open_etc_passwd"), errno_of(open));
        let create = closing(
            unsafe { libc::open(file.as_ptr(), libc::O_CREAT | libc::O_WRONLY, 0o600) }.into(),
        );
        report(
            &format!("landlock.{place}.create_data_file"),
            errno_of(create),
        );
        let mkdir = unsafe { libc::mkdir(dir.as_ptr(), 0o700) };
        report(
            &format!("landlock.{place}.mkdir_data_dir"),
            errno_of(mkdir.into()),
        );
        let pid = unsafe { libc::getpid() };
        report(&format!("landlock.{place}.getpid"), errno_of(pid.into()));
    };
    probe("calling");
    std::thread::scope(|scope| scope.spawn(|| probe("new_thread")).join().unwrap());
    report("done", "yes");
}

/// `PR_SET_PDEATHSIG`: a worker is killed when its server is, even by `SIGKILL`.
#[test]
fn a_worker_dies_with_its_server() {
    const NAME: &str = "a_worker_dies_with_its_server";
    match role().as_deref() {
        Some("server") => {
            // Starts a worker the way the server does, says its pid, and waits to be killed.
            let mut worker = spawn_child(NAME, "worker", None);
            report("worker_pid", worker.id());
            std::thread::sleep(Duration::from_secs(60));
            let _ = worker.kill();
            let _ = worker.wait();
            return;
        }
        Some("worker") => {
            // Prints nothing: its output pipe may be gone with the server.
            std::thread::sleep(Duration::from_secs(60));
            return;
        }
        _ => {}
    }
    let mut server = spawn_child(NAME, "server", None);
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let worker: libc::pid_t = loop {
        let line = lines
            .next()
            .expect("the server ended before starting its worker")
            .unwrap();
        if let Some((_, pid)) = line.split_once(&format!("{PREFIX}worker_pid ")) {
            break pid.trim().parse().unwrap();
        }
    };
    assert!(alive(worker), "the worker should run while its server does");
    server.kill().unwrap(); // SIGKILL
    server.wait().unwrap();
    let started = Instant::now();
    while alive(worker) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the worker {worker} outlived its server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Running, and not a zombie waiting to be reaped.
fn alive(pid: libc::pid_t) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}
