//! Confinement of a sandbox worker process: what a process running builders' JavaScript applies
//! to itself, so that a bug in the engine (QuickJS, deno_core, our ops) that lets handler code
//! run native code still cannot open files, reach the network, start programs, or touch the
//! server. The isolate's own checks (capabilities in every op, no imports, no `Deno`) are the
//! first wall; this is the second, enforced by the kernel.
//!
//! Two halves, one for each side of the spawn:
//!
//! - [`prepare_command`], on the server, before it spawns `toolhost sandbox-worker`: the child
//!   dies with the server (`PR_SET_PDEATHSIG`, even on `kill -9`), and gets new network,
//!   mount, IPC and UTS namespaces where the kernel allows (root, or `CAP_SYS_ADMIN`).
//! - [`confine_current_process`], in the worker, once its runtimes, its IPC socket and its
//!   pool exist and before it runs any handler: `PR_SET_NO_NEW_PRIVS`, not dumpable (no
//!   ptrace, no core, `/proc/<pid>/mem` closed to the same user), `RLIMIT_CORE` 0,
//!   `RLIMIT_NOFILE` a little above what is open, Landlock (no file system, no TCP, no signals
//!   or abstract sockets outside the worker), then a seccomp-BPF allow-list on every thread.
//!   [`restrict_file_system`] is the Landlock step alone, for the worker's `main` to call first,
//!   while it has one thread (see below), and [`close_inherited_fds`] drops whatever
//!   descriptors the worker inherited besides stdio and its socket.
//!
//! The seccomp allow-list is the wall that holds everywhere: it applies to all threads at once
//! (TSYNC) and refuses, with `EPERM`, every system call that names a path, makes a socket,
//! starts a process or reaches another one. Landlock is defence in depth for the file system
//! and the rest of the process's reach; up to Landlock ABI 7 (Linux 6.18, this project's
//! machines) it restricts only the thread that enforces it and the threads that thread starts
//! later, so [`Confinement::landlock`] says which threads it covers. A worker that wants it on
//! every thread calls [`restrict_file_system`] first thing in `main`; from ABI 8 on it covers
//! all threads wherever it is called.
//!
//! # Use
//!
//! ```no_run
//! # fn server() -> std::io::Result<()> {
//! // The server, on a thread that lives as long as it does (see `prepare_command`):
//! let mut command = std::process::Command::new(std::env::current_exe()?);
//! command.arg("sandbox-worker").env_clear();
//! sandbox::confine::prepare_command(&mut command); // after env_clear: it sets two variables
//! let worker = command.spawn()?;
//! # Ok(()) }
//! # fn worker(ipc_fd: std::os::fd::RawFd, config: sandbox::PoolConfig) -> Result<(), Box<dyn std::error::Error>> {
//! // The worker's `main`, first thing, while it has one thread:
//! sandbox::confine::close_inherited_fds(&[ipc_fd])?;
//! sandbox::confine::restrict_file_system()?; // Landlock on every thread that will exist
//! // ... runtimes, the socket, the pool; then, before the first handler:
//! let confinement = sandbox::confine::confine_current_process_with(
//!     &sandbox::confine::ConfineOptions::for_pool(&config),
//! )?;
//! tracing::info!(%confinement, "sandbox worker confined");
//! # Ok(()) }
//! ```
//!
//! After confinement the worker opens no file, not even `/proc`, and starts no process: read
//! configuration from the socket, and read anything from disk before. What glibc and the
//! engine look up in `/proc` and `/sys` by themselves (CPU count, overcommit policy, cgroup
//! quota) is refused with `EPERM` and they fall back to defaults, as `strace` shows. The
//! QuickJS backend's on-disk bytecode cache is turned off by [`prepare_command`].
//!
//! # Layout
//!
//! - `spawn`: [`prepare_command`] (death signal, namespaces) and the namespace report.
//! - `process`: `prctl` flags and resource limits.
//! - `fs`: Landlock.
//! - `seccomp`: the allow-list and how it is installed.

mod fs;
mod process;
mod seccomp;
mod spawn;

use std::fmt;

pub use fs::{restrict_file_system, LandlockEnforcement, LandlockReport, LandlockThreads};
pub use process::close_inherited_fds;
pub use seccomp::SeccompReport;
pub use spawn::{
    lower_priority, prepare_command, NamespaceReport, NamespaceState, PARENT_NAMESPACES_ENV,
};

/// File descriptors one isolate thread opens for itself: its current-thread tokio runtime's
/// epoll instance, the eventfd that wakes it, and the duplicate of tokio's signal pipe.
pub const FDS_PER_ISOLATE_THREAD: u64 = 3;

/// What [`confine_current_process_with`] needs to know about the worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfineOptions {
    /// File descriptors the worker may still open after confinement, counted above the highest
    /// one open when it is confined: `RLIMIT_NOFILE` is that highest number plus one plus this.
    /// Each isolate thread started later opens [`FDS_PER_ISOLATE_THREAD`]; nothing else does.
    pub extra_fds: u64,
}

impl ConfineOptions {
    /// Room for every isolate thread the pool may run at once (live isolates, spares,
    /// abandoned threads still stuck), plus a margin for the runtimes' own use.
    pub fn for_pool(config: &crate::PoolConfig) -> ConfineOptions {
        let threads = config.max_isolates + config.spare_isolates + config.max_abandoned_isolates;
        ConfineOptions {
            extra_fds: threads as u64 * FDS_PER_ISOLATE_THREAD + 64,
        }
    }
}

impl Default for ConfineOptions {
    /// Room for the default [`crate::PoolConfig`].
    fn default() -> Self {
        ConfineOptions::for_pool(&crate::PoolConfig::default())
    }
}

/// What was applied, for the worker to log (and the server to show) at start-up. Its
/// `Display` is one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confinement {
    /// `PR_SET_NO_NEW_PRIVS`: no exec can gain privileges (it is also what lets an unprivileged
    /// process install seccomp and Landlock).
    pub no_new_privs: bool,
    /// `PR_SET_DUMPABLE` is 0: no core dump, no ptrace attach and `/proc/<pid>/mem` closed to
    /// processes of the same user that lack `CAP_SYS_PTRACE`.
    pub dumpable: bool,
    /// `RLIMIT_CORE` (soft and hard).
    pub core_limit: u64,
    /// `RLIMIT_NOFILE` (soft and hard): the highest file descriptor number plus one.
    pub open_files_limit: u64,
    /// Landlock: whether the kernel enforced it, and on which threads.
    pub landlock: LandlockReport,
    /// The seccomp allow-list (always on every thread when `confine_current_process` succeeds).
    pub seccomp: SeccompReport,
    /// Namespaces compared with the server's (set up by [`prepare_command`]).
    pub namespaces: NamespaceReport,
}

impl fmt::Display for Confinement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seccomp: {}; landlock: {}; namespaces: {}; no_new_privs: {}, dumpable: {}, \
             RLIMIT_CORE {}, RLIMIT_NOFILE {}",
            self.seccomp,
            self.landlock,
            self.namespaces,
            self.no_new_privs,
            self.dumpable,
            self.core_limit,
            self.open_files_limit,
        )
    }
}

/// Why the worker could not be confined. The worker must not run handlers then: it should
/// exit, and the server refuse to use it.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// Confinement is written for x86_64 and aarch64 Linux only.
    #[error("process confinement is not supported on {0}")]
    Unsupported(&'static str),
    /// A `prctl` or `setrlimit` call failed.
    #[error("{what} failed: {source}")]
    Process {
        /// The call that failed.
        what: &'static str,
        /// The `errno` it returned.
        source: std::io::Error,
    },
    /// Landlock was available but could not be enforced.
    #[error("landlock: {0}")]
    Landlock(#[from] landlock::RulesetError),
    /// The seccomp filter could not be built.
    #[error("seccomp filter: {0}")]
    Filter(#[from] seccompiler::BackendError),
    /// The seccomp filter could not be installed on every thread.
    #[error("seccomp: {0}")]
    Seccomp(#[from] seccompiler::Error),
}

/// [`confine_current_process_with`] with [`ConfineOptions::default`] (room in `RLIMIT_NOFILE`
/// for a pool with the default [`crate::PoolConfig`]).
pub fn confine_current_process() -> Result<Confinement, ConfineError> {
    confine_current_process_with(&ConfineOptions::default())
}

/// Confines the calling process for good: see the module header. Call it once, after the
/// worker's runtimes, its IPC socket and its [`crate::Pool`] exist (they are not affected:
/// threads, memory and I/O on open descriptors stay allowed) and before it runs any handler.
/// On error, parts may already be applied; the worker must exit.
pub fn confine_current_process_with(options: &ConfineOptions) -> Result<Confinement, ConfineError> {
    if !seccomp::SUPPORTED {
        return Err(ConfineError::Unsupported(std::env::consts::ARCH));
    }
    // Read while the file system is still reachable.
    let namespaces = spawn::namespace_report();
    // Anything a later isolate thread needs only once per process is made now.
    seccomp::warm_up();
    let filters = seccomp::build(std::process::id())?;

    let highest_fd = process::highest_open_fd();

    process::set_no_new_privs()?;
    process::set_not_dumpable()?;
    let core_limit = process::limit_core_dumps()?;
    let open_files_limit = process::limit_open_files(highest_fd, options.extra_fds)?;
    let landlock = fs::restrict_file_system()?;
    let seccomp = seccomp::install(&filters)?;

    Ok(Confinement {
        no_new_privs: process::no_new_privs(),
        dumpable: process::dumpable(),
        core_limit,
        open_files_limit,
        landlock,
        seccomp,
        namespaces,
    })
}
