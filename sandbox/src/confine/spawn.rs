//! The spawning side: [`prepare_command`] makes the worker die with the server and puts it in
//! namespaces of its own; [`namespace_report`] is how the worker learns which it got.

use std::fmt;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Set by [`prepare_command`] on the child: the server's namespaces, as `net:[4026531840]
/// mnt:[…] ipc:[…] uts:[…] user:[…]`, for the worker to compare with its own.
pub const PARENT_NAMESPACES_ENV: &str = "TOOLHOST_CONFINE_PARENT_NS";

/// Read by the `v8x` QuickJS backend: no bytecode cache on disk.
const NO_BYTECODE_CACHE_ENV: &str = "V82JSC_NO_BC_CACHE";

/// The namespaces [`prepare_command`] asks for, with the name of their `/proc/self/ns` link.
const NAMESPACES: [(&str, libc::c_int); 4] = [
    ("net", libc::CLONE_NEWNET),
    ("mnt", libc::CLONE_NEWNS),
    ("ipc", libc::CLONE_NEWIPC),
    ("uts", libc::CLONE_NEWUTS),
];

/// The namespace links compared: those above, and the user namespace a non-root server's
/// worker may get.
const REPORTED: [&str; 5] = ["net", "mnt", "ipc", "uts", "user"];

/// Prepares the command that starts a worker, in the child between `fork` and `exec`:
///
/// - `PR_SET_PDEATHSIG(SIGKILL)`: the worker is killed when the server dies, however it dies.
///   The kernel ties this to the *thread* that spawned the child, not the process: spawn
///   workers from a thread that lives as long as the server (the main thread, a runtime
///   worker), never from `spawn_blocking`, whose threads end when idle. A server already gone
///   when the child starts makes the spawn fail (`ESRCH`) rather than leave an orphan.
/// - `PR_SET_NO_NEW_PRIVS`: nothing the worker execs can gain privileges.
/// - New network, mount, IPC and UTS namespaces (`unshare`): no network interface but a down
///   loopback, no abstract Unix sockets, System V IPC or host name shared with the server.
///   Creating them takes `CAP_SYS_ADMIN`. Without it (not root), the hook asks again with a
///   new user namespace as well, which unprivileged users may create on most kernels: the
///   worker then runs as the overflow user (`nobody`, no uid map is written) inside it, with
///   no capability once it execs, which it needs none of. Where that is refused too
///   (`kernel.unprivileged_userns_clone=0`, `user.max_user_namespaces=0`, some AppArmor
///   profiles) the worker keeps the server's namespaces, and
///   [`crate::confine::Confinement::namespaces`] says so; the seccomp filter still refuses
///   every socket and mount. The Unix socket pair the worker inherits works across
///   namespaces.
///
/// It also sets two environment variables, so call it after `env_clear()`:
/// [`PARENT_NAMESPACES_ENV`], and `V82JSC_NO_BC_CACHE`, which turns off the QuickJS backend's
/// on-disk bytecode cache (by default under `$XDG_CACHE_HOME`, `$HOME/.cache` or, with the
/// environment cleared, `/tmp/v8x/quickjs-bytecode`): a worker must not load compiled code
/// from a directory others can write, nor try to write it there.
pub fn prepare_command(command: &mut Command) {
    command.env(PARENT_NAMESPACES_ENV, own_namespaces());
    command.env(NO_BYTECODE_CACHE_ENV, "1");
    let parent = std::process::id() as libc::pid_t;
    let flags = NAMESPACES.iter().fold(0, |flags, (_, flag)| flags | flag);
    // SAFETY: the closure runs in the forked child, which has one thread: it makes raw system
    // calls only (async-signal-safe), allocates nothing and takes no lock.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            // The server may have died before the line above: then no signal will come.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Best effort: without privilege (EPERM), retried inside a user namespace of its
            // own; failing that, or on a kernel lacking one of them (EINVAL), the worker keeps
            // the server's namespaces, and reports it.
            if libc::unshare(flags) != 0 {
                libc::unshare(flags | libc::CLONE_NEWUSER);
            }
            Ok(())
        });
    }
}

/// Starts the command's process at CPU priority `nice` (every thread it starts inherits it):
/// for a worker whose builders should yield the cores to everyone else's, from the work of
/// its own start on. Best effort: a nice value that cannot be set leaves the server's.
pub fn lower_priority(command: &mut Command, nice: i32) {
    // SAFETY: as in `prepare_command`: one raw system call in the forked child.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            libc::setpriority(libc::PRIO_PROCESS, 0, nice);
            Ok(())
        });
    }
}

/// Whether the worker is in a namespace of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamespaceState {
    /// Different from the server's.
    New,
    /// The server's (`unshare` was refused, typically not root).
    Shared,
    /// Not known: the worker was not started through [`prepare_command`], or `/proc` could
    /// not be read.
    Unknown,
}

/// The worker's namespaces compared with the server's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamespaceReport {
    /// Network namespace.
    pub net: NamespaceState,
    /// Mount namespace.
    pub mount: NamespaceState,
    /// System V IPC and POSIX message queue namespace.
    pub ipc: NamespaceState,
    /// Host and domain name namespace.
    pub uts: NamespaceState,
    /// User namespace: `New` when the others could only be made inside one (not root).
    pub user: NamespaceState,
}

impl fmt::Display for NamespaceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let states = [
            ("net", self.net),
            ("mnt", self.mount),
            ("ipc", self.ipc),
            ("uts", self.uts),
            ("user", self.user),
        ];
        for (i, (name, state)) in states.iter().enumerate() {
            let state = match state {
                NamespaceState::New => "new",
                NamespaceState::Shared => "shared",
                NamespaceState::Unknown => "unknown",
            };
            write!(f, "{}{name} {state}", if i == 0 { "" } else { ", " })?;
        }
        Ok(())
    }
}

/// `net:[…] mnt:[…] ipc:[…] uts:[…] user:[…]` of the calling process (empty for links it cannot read).
fn own_namespaces() -> String {
    REPORTED
        .iter()
        .filter_map(|name| std::fs::read_link(format!("/proc/self/ns/{name}")).ok())
        .filter_map(|link| link.to_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Compares the worker's namespaces with those [`prepare_command`] recorded. Reads `/proc`, so
/// it runs before the file system is closed.
pub(super) fn namespace_report() -> NamespaceReport {
    let parent = std::env::var(PARENT_NAMESPACES_ENV).unwrap_or_default();
    let parent: Vec<&str> = parent.split_whitespace().collect();
    let own = own_namespaces();
    let own: Vec<&str> = own.split_whitespace().collect();
    let state = |name: &str| {
        let prefix = format!("{name}:");
        let parent = parent.iter().find(|link| link.starts_with(&prefix));
        let own = own.iter().find(|link| link.starts_with(&prefix));
        match (parent, own) {
            (Some(parent), Some(own)) if parent == own => NamespaceState::Shared,
            (Some(_), Some(_)) => NamespaceState::New,
            _ => NamespaceState::Unknown,
        }
    };
    NamespaceReport {
        net: state("net"),
        mount: state("mnt"),
        ipc: state("ipc"),
        uts: state("uts"),
        user: state("user"),
    }
}
