//! Landlock: the worker gives up the whole file system (every access right the kernel knows,
//! with no rule granting any back), TCP `bind` and `connect`, and, from ABI 6, signals to and
//! abstract Unix sockets of processes outside its domain. Best effort: an older kernel enforces
//! what it knows, a kernel without Landlock nothing, and [`LandlockReport`] says which.
//!
//! Up to ABI 7 Landlock restricts the calling thread and the threads it starts afterwards, not
//! the threads already running; ABI 8 adds `all_threads`, requested here and used where the
//! kernel has it.

use std::fmt;
use std::sync::Mutex;

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, RestrictSelfAttr, Ruleset, RulesetAttr,
    RulesetStatus, Scope, ABI,
};

use super::ConfineError;

/// The ABI whose rights this module asks for, as tested (the crate's advice: name a version,
/// not "everything"). Newer kernels enforce these; older ones the part they know.
const TESTED_ABI: ABI = ABI::V6;

/// How much of the requested Landlock ruleset the kernel enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LandlockEnforcement {
    /// Everything requested.
    Full,
    /// The part an older kernel knows (say, the file system but not TCP or scopes).
    Partial,
    /// Nothing: the kernel has no Landlock, or it is not enabled (`lsm=` boot parameter).
    NotSupported,
}

/// Which threads the Landlock domain covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LandlockThreads {
    /// Every thread: enforced while the process had one thread, or with ABI 8's
    /// `all_threads`.
    All,
    /// The thread that enforced it and the threads it starts afterwards; threads already
    /// running are covered by the seccomp filter only.
    CallingThread,
}

/// What Landlock did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LandlockReport {
    /// How much the kernel enforces.
    pub enforcement: LandlockEnforcement,
    /// The kernel's Landlock ABI version, if it has Landlock.
    pub abi: Option<u32>,
    /// Which threads it covers (meaningless when nothing is enforced).
    pub threads: LandlockThreads,
}

impl fmt::Display for LandlockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.enforcement, self.threads) {
            (LandlockEnforcement::NotSupported, _) => f.write_str("not supported by the kernel"),
            (enforcement, threads) => write!(
                f,
                "{} (ABI {}) on {}",
                match enforcement {
                    LandlockEnforcement::Full => "enforced",
                    _ => "partially enforced",
                },
                self.abi.unwrap_or(0),
                match threads {
                    LandlockThreads::All => "all threads",
                    _ => "the confining thread",
                }
            ),
        }
    }
}

/// What the first call did: later calls (from [`super::confine_current_process`] after the
/// worker's `main` called this) do not stack a second, identical domain.
static APPLIED: Mutex<Option<LandlockReport>> = Mutex::new(None);

/// Enforces the Landlock ruleset on the calling thread (all threads from ABI 8), once per
/// process. Call it first thing in the worker's `main`, while the process has a single thread,
/// to cover every thread on any kernel; [`super::confine_current_process`] calls it too. From
/// then on no file can be opened, not even the worker's own executable: read whatever the
/// worker needs from disk before. Sets `PR_SET_NO_NEW_PRIVS`.
pub fn restrict_file_system() -> Result<LandlockReport, ConfineError> {
    let mut applied = APPLIED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(report) = *applied {
        return Ok(report);
    }
    let single_threaded = thread_count() == Some(1);
    let abi = kernel_abi();
    // Asked for only where the kernel has it: best effort would count it as a part missing and
    // report the whole ruleset partially enforced.
    let all_threads = abi.is_some_and(|abi| abi >= 8);
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(TESTED_ABI))?
        .handle_access(AccessNet::from_all(TESTED_ABI))?
        .scope(Scope::from_all(TESTED_ABI))?
        .create()?
        .all_threads(all_threads)?
        .restrict_self()?;
    let report = LandlockReport {
        enforcement: match status.ruleset {
            RulesetStatus::FullyEnforced => LandlockEnforcement::Full,
            RulesetStatus::PartiallyEnforced => LandlockEnforcement::Partial,
            RulesetStatus::NotEnforced => LandlockEnforcement::NotSupported,
        },
        abi,
        threads: if status.all_threads || single_threaded {
            LandlockThreads::All
        } else {
            LandlockThreads::CallingThread
        },
    };
    *applied = Some(report);
    Ok(report)
}

/// The kernel's Landlock ABI version (`None`: no Landlock, or not enabled).
#[allow(unsafe_code)]
fn kernel_abi() -> Option<u32> {
    // SAFETY: with a null attribute and the VERSION flag the call reads no memory.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0,
            1, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    u32::try_from(version).ok().filter(|&version| version > 0)
}

/// Threads of this process (`/proc/self/status`), if it can be read.
fn thread_count() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))?
        .trim()
        .parse()
        .ok()
}
