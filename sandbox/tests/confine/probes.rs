//! The native escapes a compromised engine would try, as raw system calls, each reported as
//! `probe.<where>.<name> <outcome>`.

use std::ffi::CString;
use std::path::Path;
use std::process::Command;

use super::child::report;

/// The parent's pid, the target of the probes that reach for another process (read before
/// confinement: `getppid` is not on the allow-list).
pub(crate) static PARENT: std::sync::OnceLock<libc::pid_t> = std::sync::OnceLock::new();

/// `ok` or the errno's name.
pub(crate) fn errno_of(result: libc::c_long) -> String {
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

pub(crate) fn c(text: &str) -> CString {
    CString::new(text).unwrap()
}

/// Closes `fd` if a probe got one (it should not).
pub(crate) fn closing(result: libc::c_long) -> libc::c_long {
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
pub(crate) fn probe_escapes(place: &str, data: &Path, ipc_fd: libc::c_int) {
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
pub(crate) const REFUSED_BY_SECCOMP: &[&str] = &[
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
