//! Process-wide flags (`prctl`) and resource limits.
//!
//! `RLIMIT_NPROC` is left alone: it counts every process and thread of the real user, the
//! server's included, so a bound low enough to matter would stop the worker from starting
//! isolate threads whenever the server is busy; and root ignores it. The seccomp filter is
//! what stops the worker from starting processes.

use super::ConfineError;

fn check(what: &'static str, result: libc::c_int) -> Result<(), ConfineError> {
    if result == -1 {
        return Err(ConfineError::Process {
            what,
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

// SAFETY (every `unsafe` below): `prctl` and `setrlimit` with integer arguments, or a pointer to
// a local `rlimit`, touch no memory of ours beyond it.

#[allow(unsafe_code)]
pub(super) fn set_no_new_privs() -> Result<(), ConfineError> {
    check("prctl(PR_SET_NO_NEW_PRIVS)", unsafe {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    })
}

#[allow(unsafe_code)]
pub(super) fn set_not_dumpable() -> Result<(), ConfineError> {
    check("prctl(PR_SET_DUMPABLE)", unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0)
    })
}

#[allow(unsafe_code)]
pub(super) fn no_new_privs() -> bool {
    unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 }
}

#[allow(unsafe_code)]
pub(super) fn dumpable() -> bool {
    unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) != 0 }
}

#[allow(unsafe_code)]
fn set_limit(
    what: &'static str,
    resource: libc::__rlimit_resource_t,
    value: u64,
) -> Result<u64, ConfineError> {
    let limit = libc::rlimit {
        rlim_cur: value as libc::rlim_t,
        rlim_max: value as libc::rlim_t,
    };
    check(what, unsafe { libc::setrlimit(resource, &limit) })?;
    Ok(value)
}

/// No core dumps: a worker's memory holds other endpoints' requests and env.
pub(super) fn limit_core_dumps() -> Result<u64, ConfineError> {
    set_limit("setrlimit(RLIMIT_CORE)", libc::RLIMIT_CORE, 0)
}

/// The highest file descriptor open now (`/proc/self/fd`; 2 if it cannot be read).
pub(super) fn highest_open_fd() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u64>().ok())
        .max()
        .unwrap_or(2)
}

/// `RLIMIT_NOFILE` bounds the *number* a new descriptor gets, so it is set above the highest
/// one open (`highest`), with room for `extra` more; never above the hard limit in force, which
/// only a privileged process could raise.
#[allow(unsafe_code)]
pub(super) fn limit_open_files(highest: u64, extra: u64) -> Result<u64, ConfineError> {
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    check("getrlimit(RLIMIT_NOFILE)", unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut current)
    })?;
    let wanted = (highest + 1).saturating_add(extra);
    set_limit(
        "setrlimit(RLIMIT_NOFILE)",
        libc::RLIMIT_NOFILE,
        wanted.min(current.rlim_max),
    )
}

/// Closes every descriptor above stderr but those in `keep`, and returns how many it closed.
/// For the worker's `main`, before it makes anything of its own: the server opens everything
/// close-on-exec, but whatever the server itself inherited without that flag (a pipe from its
/// own parent, a descriptor a library leaked) would reach the worker, and the seccomp filter
/// allows I/O on every open descriptor.
#[allow(unsafe_code)]
pub fn close_inherited_fds(keep: &[std::os::fd::RawFd]) -> std::io::Result<usize> {
    let open: Vec<std::os::fd::RawFd> = std::fs::read_dir("/proc/self/fd")?
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    let mut closed = 0;
    for fd in open {
        // The directory's own descriptor, read above, is closed already and fails with EBADF.
        if fd > 2 && !keep.contains(&fd) {
            // SAFETY: closing a descriptor number; nothing in this process owns one it did not
            // inherit, which is the point.
            if unsafe { libc::close(fd) } == 0 {
                closed += 1;
            }
        }
    }
    Ok(closed)
}
