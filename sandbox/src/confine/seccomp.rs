//! The seccomp-BPF allow-list: only what the engine, tokio, std threads and the IPC on the
//! already-open socket need. Everything else fails with `EPERM` (not a kill: a refused call is
//! an error the engine reports, and the test can observe). Installed on every thread at once
//! (`SECCOMP_FILTER_FLAG_TSYNC`), and inherited by every thread started later.
//!
//! Two filters, because one `seccompiler` filter has a single action for its matches:
//!
//! 1. `clone3` answers `ENOSYS`. Its flags are in memory, out of the filter's reach, so it
//!    cannot be told apart from a `fork`; glibc's `pthread_create` then falls back to `clone`.
//! 2. The allow-list, where `clone` must carry `CLONE_THREAD` (threads, not processes).
//!
//! The kernel runs both and keeps the most restrictive answer, so (1) is installed first and
//! (2) needs not allow `seccomp` itself.

use std::collections::BTreeMap;
use std::fmt;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use super::ConfineError;

/// Whether this architecture has an allow-list.
pub(super) const SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// What the seccomp step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeccompReport {
    /// System calls on the allow-list (some only with given arguments).
    pub allowed_syscalls: usize,
    /// Installed on every thread of the process (TSYNC).
    pub all_threads: bool,
}

impl fmt::Display for SeccompReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "allow-list of {} system calls on {}",
            self.allowed_syscalls,
            if self.all_threads {
                "all threads"
            } else {
                "the confining thread"
            }
        )
    }
}

/// An argument condition: `arg` (its low 32 bits, `Dword`, or all 64) compared with `value`.
fn arg(index: u8, len: SeccompCmpArgLen, op: SeccompCmpOp, value: u64) -> SeccompCondition {
    SeccompCondition::new(index, len, op, value).expect("argument index below 6")
}

/// A rule allowing the call when `arg0`..`argN` match all of `conditions`.
fn when(conditions: Vec<SeccompCondition>) -> SeccompRule {
    SeccompRule::new(conditions).expect("a rule with conditions")
}

/// One of `values` in argument `index` (low 32 bits).
fn one_of(index: u8, values: &[u64]) -> Vec<SeccompRule> {
    values
        .iter()
        .map(|&value| {
            when(vec![arg(
                index,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                value,
            )])
        })
        .collect()
}

/// The allow-list: each system call, with the rules its arguments must match (none: any).
/// `pid` is the worker's: `tgkill` may signal its own threads only.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(super) fn allowed_syscalls(pid: u32) -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut allowed: Vec<(i64, Vec<SeccompRule>)> = Vec::new();
    let any = |allowed: &mut Vec<_>, calls: &[libc::c_long]| {
        allowed.extend(calls.iter().map(|&call| (call, Vec::new())));
    };

    // Memory: the engine's heaps (malloc: brk, mmap, mremap), thread stacks and their guard
    // pages (mprotect), giving memory back (madvise, munmap).
    any(
        &mut allowed,
        &[
            libc::SYS_brk,
            libc::SYS_munmap,
            libc::SYS_mremap,
            libc::SYS_madvise,
        ],
    );
    // `mmap` and `mprotect` without PROT_EXEC: QuickJS interprets and nothing maps code after
    // start-up (strace shows none), so code that took over a thread cannot make a buffer
    // executable to run injected machine code. V8's JIT writes code at run time: not there.
    let protection = if cfg!(feature = "v8") {
        Vec::new()
    } else {
        vec![when(vec![arg(
            2,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(libc::PROT_EXEC as u64),
            0,
        )])]
    };
    allowed.push((libc::SYS_mmap, protection.clone()));
    allowed.push((libc::SYS_mprotect, protection));
    // Locks, condition variables, parking, thread exit (futex), and the CPU.
    any(
        &mut allowed,
        &[
            libc::SYS_futex,
            libc::SYS_sched_yield,
            libc::SYS_sched_getaffinity,
        ],
    );
    // An isolate thread lowering its own CPU priority (`limits::cpu`): setpriority(PRIO_PROCESS,
    // 0 (the calling thread), DEMOTED_NICE), nothing else: no other thread's or process's, and
    // never a higher priority.
    allowed.push((
        libc::SYS_setpriority,
        vec![when(vec![
            arg(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                libc::PRIO_PROCESS as u64,
            ),
            arg(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, 0),
            arg(
                2,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                crate::limits::cpu::DEMOTED_NICE as u64,
            ),
        ])],
    ));
    // I/O on descriptors that are already open (the IPC socket, stderr for logs, the
    // runtimes' epoll and eventfd), and closing them. None of these can name a file or an
    // address: `sendto`/`sendmsg` on a connected stream socket ignore one.
    any(
        &mut allowed,
        &[
            libc::SYS_read,
            libc::SYS_write,
            libc::SYS_readv,
            libc::SYS_writev,
            libc::SYS_recvfrom,
            libc::SYS_sendto,
            libc::SYS_recvmsg,
            libc::SYS_sendmsg,
            libc::SYS_shutdown,
            libc::SYS_close,
        ],
    );
    // Event loops: each isolate thread's current-thread runtime makes an epoll instance and
    // an eventfd to wake it (the two new descriptors a worker may still create). mio waits
    // with `epoll_wait` where the architecture has it, `epoll_pwait` on aarch64.
    any(
        &mut allowed,
        &[
            libc::SYS_epoll_create1,
            libc::SYS_epoll_ctl,
            libc::SYS_eventfd2,
        ],
    );
    #[cfg(target_arch = "x86_64")]
    any(&mut allowed, &[libc::SYS_epoll_wait]);
    #[cfg(target_arch = "aarch64")]
    any(&mut allowed, &[libc::SYS_epoll_pwait]);
    // Time: the vDSO answers clock reads without a system call unless the clock source has no
    // vDSO support (some virtual machines), then `clock_gettime` is the fallback; glibc's
    // `nanosleep` (std's `sleep`) is `clock_nanosleep`.
    any(
        &mut allowed,
        &[libc::SYS_clock_gettime, libc::SYS_clock_nanosleep],
    );
    // Hash map keys and the engine's randomness.
    any(&mut allowed, &[libc::SYS_getrandom]);
    // Identity of the process and thread (glibc, tokio, tracing).
    any(&mut allowed, &[libc::SYS_getpid, libc::SYS_gettid]);
    // Signals: masks and handlers (std's stack-overflow handler on an alternate stack, glibc
    // blocking signals around thread creation), returning from a handler.
    any(
        &mut allowed,
        &[
            libc::SYS_rt_sigaction,
            libc::SYS_rt_sigprocmask,
            libc::SYS_rt_sigreturn,
            libc::SYS_sigaltstack,
        ],
    );
    // A new thread's set-up in glibc, and its end.
    any(
        &mut allowed,
        &[
            libc::SYS_set_robust_list,
            libc::SYS_rseq,
            libc::SYS_exit,
            libc::SYS_exit_group,
        ],
    );

    // `clone3`: allowed here, answered `ENOSYS` by the first filter (see the module header).
    allowed.push((libc::SYS_clone3, Vec::new()));
    // `clone` only for a thread: CLONE_THREAD among its flags (argument 0 on x86_64 and
    // aarch64), which the kernel accepts only with CLONE_VM: a fork, vfork or posix_spawn
    // lacks it. And in the worker's namespaces: no CLONE_NEW* flag.
    let new_namespaces = libc::CLONE_NEWNS
        | libc::CLONE_NEWCGROUP
        | libc::CLONE_NEWUTS
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUSER
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWNET;
    allowed.push((
        libc::SYS_clone,
        vec![when(vec![
            arg(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(libc::CLONE_THREAD as u64),
                libc::CLONE_THREAD as u64,
            ),
            arg(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(new_namespaces as u64),
                0,
            ),
        ])],
    ));
    // Signals to the worker's own threads only (`abort`, `raise`): tgkill(pid, ..).
    allowed.push((
        libc::SYS_tgkill,
        vec![when(vec![arg(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            u64::from(pid),
        )])],
    ));
    // Naming a new thread (std names its threads from inside them), and reading the flags
    // this confinement set, so the worker can check and report them.
    allowed.push((
        libc::SYS_prctl,
        one_of(
            0,
            &[
                libc::PR_SET_NAME as u64,
                libc::PR_GET_NAME as u64,
                libc::PR_GET_DUMPABLE as u64,
                libc::PR_GET_NO_NEW_PRIVS as u64,
                libc::PR_GET_SECCOMP as u64,
            ],
        ),
    ));
    // Descriptor flags: std's `set_cloexec` and `set_nonblocking`, tokio duplicating its signal
    // pipe for each runtime (F_DUPFD_CLOEXEC on a descriptor already open).
    allowed.push((
        libc::SYS_fcntl,
        one_of(
            1,
            &[
                libc::F_GETFD as u64,
                libc::F_SETFD as u64,
                libc::F_GETFL as u64,
                libc::F_SETFL as u64,
                libc::F_DUPFD_CLOEXEC as u64,
            ],
        ),
    ));
    allowed.push((libc::SYS_ioctl, one_of(1, &[libc::FIONBIO, libc::FIOCLEX])));

    allowed.into_iter().collect()
}

fn target() -> Result<seccompiler::TargetArch, ConfineError> {
    std::env::consts::ARCH
        .try_into()
        .map_err(|_| ConfineError::Unsupported(std::env::consts::ARCH))
}

/// Elsewhere the allow-list was never checked: confinement refuses to start (see `build`).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(super) fn allowed_syscalls(_pid: u32) -> BTreeMap<i64, Vec<SeccompRule>> {
    BTreeMap::new()
}

/// The two filters, compiled (see the module header), in the order they are installed.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(super) fn build(_pid: u32) -> Result<(BpfProgram, BpfProgram), ConfineError> {
    Err(ConfineError::Unsupported(std::env::consts::ARCH))
}

/// The two filters, compiled (see the module header), in the order they are installed.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(super) fn build(pid: u32) -> Result<(BpfProgram, BpfProgram), ConfineError> {
    let arch = target()?;
    let no_clone3 = SeccompFilter::new(
        [(libc::SYS_clone3, Vec::new())].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )?;
    let allow_list = SeccompFilter::new(
        allowed_syscalls(pid),
        SeccompAction::Errno(libc::EPERM as u32),
        SeccompAction::Allow,
        arch,
    )?;
    Ok((no_clone3.try_into()?, allow_list.try_into()?))
}

/// Installs both filters on every thread.
pub(super) fn install(filters: &(BpfProgram, BpfProgram)) -> Result<SeccompReport, ConfineError> {
    seccompiler::apply_filter_all_threads(&filters.0)?;
    seccompiler::apply_filter_all_threads(&filters.1)?;
    Ok(SeccompReport {
        allowed_syscalls: allowed_syscalls(0).len(),
        all_threads: true,
    })
}

/// Does now, while everything is allowed, what later threads need done once per process and
/// could not do under the filter:
///
/// - tokio makes its signal pipe (a `socketpair`) the first time a runtime with signal
///   handling is built, which each isolate thread's runtime is;
/// - glibc loads the time zone (`/etc/localtime`, or `TZ`) the first time local time is asked
///   for, which QuickJS's `Date` does: loaded now, handlers see the server's zone; loaded
///   under the filter, they would silently get UTC.
#[allow(unsafe_code)]
pub(super) fn warm_up() {
    extern "C" {
        fn tzset();
    }
    // SAFETY: `tzset` takes no argument; it reads the environment and the zone file once.
    unsafe { tzset() };
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => drop(runtime),
        Err(err) => tracing::warn!(%err, "cannot build a runtime before confinement"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_compile_for_this_architecture() {
        let (no_clone3, allow_list) = build(std::process::id()).expect("filters");
        assert!(!no_clone3.is_empty());
        // Well under BPF's 4096 instructions.
        assert!(allow_list.len() < 1024, "{} instructions", allow_list.len());
    }

    #[test]
    fn nothing_that_reaches_outside_is_allowed() {
        let allowed = allowed_syscalls(1);
        #[allow(unused_mut)]
        let mut refused = vec![
            libc::SYS_openat,
            libc::SYS_openat2,
            libc::SYS_socket,
            libc::SYS_socketpair,
            libc::SYS_connect,
            libc::SYS_bind,
            libc::SYS_accept4,
            libc::SYS_execve,
            libc::SYS_execveat,
            libc::SYS_ptrace,
            libc::SYS_process_vm_readv,
            libc::SYS_process_vm_writev,
            libc::SYS_kill,
            libc::SYS_mount,
            libc::SYS_unshare,
            libc::SYS_setns,
            libc::SYS_bpf,
            libc::SYS_io_uring_setup,
            libc::SYS_userfaultfd,
            libc::SYS_perf_event_open,
            libc::SYS_keyctl,
            libc::SYS_seccomp,
            libc::SYS_prlimit64,
            libc::SYS_setrlimit,
            libc::SYS_pidfd_open,
            libc::SYS_memfd_create,
        ];
        #[cfg(target_arch = "x86_64")]
        refused.extend([libc::SYS_open, libc::SYS_fork, libc::SYS_vfork]);
        for call in refused {
            assert!(!allowed.contains_key(&call), "syscall {call} is allowed");
        }
    }
}
