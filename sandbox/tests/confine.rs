//! Worker confinement (`sandbox::confine`) with the real engine. Confinement is for good, so
//! each test re-runs this test binary as a child (`<exe> <test name> --exact --nocapture`,
//! with `child::ROLE_ENV` saying what to do), spawned through `prepare_command` like the server
//! spawns its workers. The child reports each outcome as a `CONFINE <key> <value>` line on
//! stdout; the parent parses and asserts on them, so the harness itself is never confined.
//!
//! `confine/child.rs` is the parent's side (spawning, reading the lines back);
//! `confine/probes.rs` the escapes a compromised engine would try.

#![allow(unsafe_code)] // the child plays a compromised engine: raw system calls

#[path = "confine/child.rs"]
mod child;
#[path = "confine/probes.rs"]
mod probes;
mod util;

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use child::*;
use probes::*;
use sandbox::confine::{self, ConfineOptions, LandlockEnforcement, LandlockThreads};
use sandbox::{EndpointCode, Limits, PoolConfig, SandboxError};
use serde_json::json;
use util::*;

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
