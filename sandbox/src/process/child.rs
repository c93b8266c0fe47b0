//! The worker process: an isolate [`Pool`] whose [`Host`] is the server, over the pipes.
//!
//! It starts with nothing: no arguments but its mode, an empty environment, no files, no
//! sockets; its configuration arrives in the first frame. It confines itself before it runs
//! any handler, then serves calls until its stdin closes.

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::io::BufReader;
use tokio::net::unix::pipe;
use tokio::sync::{oneshot, Semaphore};

use super::wire::{self, FromWorker, ToWorker};
use crate::invocation::RawReport;
use crate::pool::{AnswerSink, Answered};
use crate::{
    EndpointCode, Host, HostAnswer, HostError, HostFuture, HostOp, Pool, PoolConfig, SandboxError,
};

/// Endpoint code kept for calls to come; past it the cache is emptied and the server sends
/// code again as calls need it ([`FromWorker::NeedCode`]).
const MAX_CACHED_CODE: usize = 1024;
/// `ctx` operations of one call in flight at once: sent to the server, or answered and not yet
/// taken by the handler. More wait their turn, oldest first. So the answers decoded here that
/// a busy handler has not taken yet (a `kv.list` page is up to 256 KiB) stay bounded however
/// many operations it starts at once, and do not crowd the worker its neighbours run in.
const MAX_OPS_IN_FLIGHT_PER_CALL: usize = 16;

/// How often the worker drops the code, and with it the env and decrypted secrets, of the
/// endpoints it holds no isolate of any more (evicted, retired): what a compromised engine
/// could read is then the env of the endpoints it serves, not of every one it ever served.
const PRUNE_EVERY: Duration = Duration::from_secs(1);

/// Runs the worker until the server closes its stdin. The entry point of `toolhost
/// sandbox-worker` (and of the sandbox crate's `sandbox-worker` binary used by its tests).
pub fn run_worker() -> std::process::ExitCode {
    if let Err(e) = super::confine::before_start() {
        eprintln!("sandbox worker: cannot confine itself: {e}");
        return std::process::ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("sandbox worker: cannot start its runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    // Confinement builds and drops a runtime of its own, which cannot happen inside one: it
    // runs between the start (pipes, configuration, pool) and the serving.
    let served = runtime.block_on(start()).and_then(|started| {
        let confinement = super::confine::before_serving(&started.config)
            .map_err(|e| io::Error::other(format!("cannot confine itself: {e}")))?;
        runtime.block_on(started.serve(confinement))
    });
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sandbox worker: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// A worker with its pipes, configuration and pool, not yet confined.
struct Started {
    input: BufReader<pipe::Receiver>,
    buffer: Vec<u8>,
    frames: Arc<Frames>,
    config: PoolConfig,
    host: Arc<RemoteHost>,
    pool: Pool,
}

async fn start() -> io::Result<Started> {
    let mut input = wire::buffered(pipe::Receiver::from_owned_fd(
        io::stdin().as_fd().try_clone_to_owned()?,
    )?);
    let frames = Arc::new(Frames::new(io::stdout().as_fd().try_clone_to_owned()?)?);

    let mut buffer = Vec::new();
    let Some(ToWorker::Hello { config, log_filter }) = wire::read(&mut input, &mut buffer).await?
    else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the first frame must be Hello",
        ));
    };
    init_logging(&log_filter);
    let host = Arc::new(RemoteHost {
        frames: frames.clone(),
        pending: Arc::default(),
        windows: Arc::default(),
        next: AtomicU64::new(1),
    });
    let pool = Pool::new(config.clone(), host.clone());
    Ok(Started {
        input,
        buffer,
        frames,
        config,
        host,
        pool,
    })
}

impl Started {
    /// Serves calls until the server says to stop (or closes the pipe).
    async fn serve(self, confinement: String) -> io::Result<()> {
        let Started {
            mut input,
            mut buffer,
            frames,
            host,
            pool,
            ..
        } = self;
        send(&frames, &FromWorker::Ready { confinement });
        let mut codes: HashMap<String, Arc<EndpointCode>> = HashMap::new();
        let mut pruned = Instant::now();
        while let Some(message) = wire::read::<ToWorker>(&mut input, &mut buffer).await? {
            match message {
                ToWorker::Hello { .. } => {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, "a second Hello"))
                }
                ToWorker::Invoke {
                    id,
                    slug,
                    version,
                    code,
                    invocation,
                    apart,
                } => {
                    if pruned.elapsed() >= PRUNE_EVERY {
                        let live: HashSet<String> =
                            pool.stats().endpoints.into_iter().map(|e| e.slug).collect();
                        codes.retain(|slug, _| live.contains(slug));
                        pruned = Instant::now();
                    }
                    if let Some(code) = code {
                        keep(&mut codes, Arc::new(*code));
                    }
                    let Some(code) = codes.get(&slug).filter(|c| c.version == version).cloned()
                    else {
                        send(&frames, &FromWorker::NeedCode { id });
                        continue;
                    };
                    if apart {
                        pool.heavy_elsewhere(code.builder());
                    }
                    pool.invoke_direct(code, invocation, id, frames.clone());
                }
                ToWorker::Warm {
                    id,
                    endpoints,
                    heavy,
                } => {
                    for builder in &heavy {
                        pool.heavy_elsewhere(builder);
                    }
                    // Started here, in frame order, so a `Retire` behind this frame finds
                    // the isolates it must drop.
                    let mut loading = Vec::with_capacity(endpoints.len());
                    for wire::Warm { code, instances } in endpoints {
                        loading.push(pool.warm(&code, instances));
                        keep(&mut codes, Arc::new(code));
                    }
                    let frames = frames.clone();
                    tokio::spawn(async move {
                        for loaded in loading {
                            loaded.await;
                        }
                        send(&frames, &FromWorker::Warmed { id });
                    });
                }
                ToWorker::HostReply { id, result } => host.answered(id, result),
                ToWorker::Retire { slug } => {
                    codes.remove(&slug);
                    pool.retire(&slug);
                }
                ToWorker::SetApart { builder } => pool.retire_owner(&builder),
                ToWorker::Shutdown => break,
                ToWorker::Stats { id } => send(
                    &frames,
                    &FromWorker::Stats {
                        id,
                        stats: pool.stats(),
                    },
                ),
                #[cfg(feature = "wall-probe")]
                ToWorker::Probe { id, probe } => {
                    let frames = frames.clone();
                    let host = host.clone();
                    tokio::spawn(async move {
                        let outcome = super::probe::run(probe, host.as_ref()).await;
                        send(&frames, &FromWorker::Probed { id, outcome });
                    });
                }
            }
        }
        // The server asked (or closed the pipe): finish what is queued, then leave.
        drop(codes);
        tokio::time::timeout(Duration::from_secs(10), pool.shutdown())
            .await
            .ok();
        drop(frames);
        drop(host);
        Ok(())
    }
}

/// Keeps an endpoint's code for the calls to come, within [`MAX_CACHED_CODE`].
fn keep(codes: &mut HashMap<String, Arc<EndpointCode>>, code: Arc<EndpointCode>) {
    if codes.len() >= MAX_CACHED_CODE {
        codes.clear();
    }
    codes.insert(code.slug.clone(), code);
}

/// The pipe to the server, written by whichever thread has a frame: the main thread, isolate
/// threads answering their calls (`pool::direct`) and sending their operations. A frame is
/// written whole under a lock, blocking: a server slow to read holds the writers back, so
/// what a worker has in flight towards it is bounded by the pipe.
pub(crate) struct Frames {
    /// `None` once a write failed: the server is gone and the worker is ending.
    out: Mutex<Option<std::fs::File>>,
}

impl Frames {
    /// Writes to `fd` (stdout), in blocking mode whatever it was given in.
    fn new(fd: std::os::fd::OwnedFd) -> io::Result<Frames> {
        let flags = rustix::fs::fcntl_getfl(&fd)?;
        rustix::fs::fcntl_setfl(&fd, flags - rustix::fs::OFlags::NONBLOCK)?;
        Ok(Frames {
            out: Mutex::new(Some(std::fs::File::from(fd))),
        })
    }

    /// Writes one encoded frame; `false` when the server is gone.
    fn write(&self, frame: &[u8]) -> bool {
        let mut out = lock(&self.out);
        let Some(file) = out.as_mut() else {
            return false;
        };
        if file.write_all(frame).is_err() {
            *out = None;
            return false;
        }
        true
    }
}

/// Sends a message of the worker's own, each far below a frame's limit.
fn send(frames: &Frames, message: &FromWorker) {
    match wire::encode(message) {
        // A failed write means the server is gone and the worker is ending.
        Ok(frame) => drop(frames.write(&frame)),
        Err(too_large) => tracing::error!("a worker message is {too_large}"),
    }
}

/// Sends a call's report; one too large for a frame (its logs and answer together) fails
/// that call with `resource_limit`, and the worker goes on.
impl AnswerSink for Frames {
    fn answer(&self, answered: Answered<'_>, report: RawReport) {
        let Answered {
            pool,
            call,
            code,
            received,
        } = answered;
        let done = |report| FromWorker::Done {
            id: call,
            report,
            wear: pool.wear(),
            lost_isolate: pool.lost_isolate_since(code.builder(), received),
            ran_heavy: pool.ran_heavy_since(code.builder(), received),
        };
        let duration = report.duration;
        let frame = wire::encode(&done(report)).or_else(|too_large| {
            wire::encode(&done(RawReport {
                result: Err(SandboxError::ResourceLimit(format!(
                    "the call's answer and logs are {too_large}"
                ))),
                logs: Vec::new(),
                duration,
                trace: None,
            }))
        });
        if let Ok(frame) = frame {
            self.write(&frame);
        }
    }
}

/// Worker logs go to stderr, which the server passes through to its own.
fn init_logging(filter: &str) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(filter)
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Answers awaited from the server, by operation id.
type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<HostAnswer, HostError>>>>>;

/// Calls' windows of operations in flight, by call number and endpoint slug.
type Windows = Arc<Mutex<HashMap<(u64, String), Arc<Semaphore>>>>;

/// The [`Host`] of a worker: every op is a frame to the server and an answer back.
pub(crate) struct RemoteHost {
    frames: Arc<Frames>,
    pending: Pending,
    /// Each call's window of operations in flight ([`MAX_OPS_IN_FLIGHT_PER_CALL`]), by its
    /// number and its endpoint's slug (module loads share [`crate::NO_CALL`]), while any of
    /// its operations is in flight or waiting.
    windows: Windows,
    next: AtomicU64,
}

/// A forwarder: the server checks and runs every op against the code it sent for the version.
impl Host for RemoteHost {
    /// Sends `op` of `endpoint`'s isolate once the call's window has room, and waits for the
    /// server's answer. [`HostOp::FetchCancel`] only gives back and is never answered: it
    /// leaves at once, outside the window, as it must when its future is dropped unpolled.
    fn call(&self, endpoint: &EndpointCode, call: u64, op: HostOp) -> HostFuture<HostAnswer> {
        if let HostOp::FetchCancel { .. } = op {
            send(&self.frames, &self.message(endpoint, call, op).1);
            return Box::pin(std::future::ready(Ok(HostAnswer::Done)));
        }
        let key = (call, endpoint.slug.clone());
        let seat = Seat {
            window: lock(&self.windows)
                .entry(key.clone())
                .or_insert_with(|| Arc::new(Semaphore::new(MAX_OPS_IN_FLIGHT_PER_CALL)))
                .clone(),
            key,
            windows: self.windows.clone(),
        };
        let (id, message) = self.message(endpoint, call, op);
        let (frames, pending) = (self.frames.clone(), self.pending.clone());
        Box::pin(async move {
            let _in_flight = seat.window.acquire().await.map_err(|_| server_gone())?;
            let answer = send_op(&frames, &pending, id, &message)?;
            answer.await.unwrap_or_else(|_| Err(server_gone()))
        })
    }
}

/// An operation's place in its call's window, from its call until its answer is taken (or it
/// is dropped): the last of a call's operations takes the window with it.
struct Seat {
    window: Arc<Semaphore>,
    key: (u64, String),
    windows: Windows,
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut windows = lock(&self.windows);
        // Only the map and this seat hold it, and no permit is out: nothing of the call waits.
        if Arc::strong_count(&self.window) == 2
            && self.window.available_permits() == MAX_OPS_IN_FLIGHT_PER_CALL
        {
            windows.remove(&self.key);
        }
    }
}

/// Sends one operation's frame: the answer to wait for, or the refusal of a frame too large
/// for the wire (`resource_limit`) or of a server gone.
fn send_op(
    frames: &Frames,
    pending: &Pending,
    id: u64,
    message: &FromWorker,
) -> Result<oneshot::Receiver<Result<HostAnswer, HostError>>, HostError> {
    let frame = wire::encode(message).map_err(|too_large| {
        HostError::new("resource_limit", format!("this operation is {too_large}"))
    })?;
    let (reply, answer) = oneshot::channel();
    lock(pending).insert(id, reply);
    if !frames.write(&frame) {
        lock(pending).remove(&id);
        return Err(server_gone());
    }
    Ok(answer)
}

fn server_gone() -> HostError {
    HostError::new("sandbox_internal", "the server is gone")
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl RemoteHost {
    /// Test builds only: a frame as it is, valid or not.
    #[cfg(feature = "wall-probe")]
    pub(crate) fn send_raw(&self, frame: Vec<u8>) {
        self.frames.write(&frame);
    }

    /// Test builds only: an operation sent at once, outside its call's window, as a
    /// compromised engine writing its own frames would: the server's walls must hold alone.
    #[cfg(feature = "wall-probe")]
    pub(crate) fn call_unwindowed(
        &self,
        endpoint: &EndpointCode,
        call: u64,
        op: HostOp,
    ) -> HostFuture<HostAnswer> {
        let (id, message) = self.message(endpoint, call, op);
        let answer = send_op(&self.frames, &self.pending, id, &message);
        Box::pin(async move { answer?.await.unwrap_or_else(|_| Err(server_gone())) })
    }

    /// `op` of `endpoint`'s isolate during `call`, as the frame names it, with its new id.
    fn message(&self, endpoint: &EndpointCode, call: u64, op: HostOp) -> (u64, FromWorker) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let message = FromWorker::HostCall {
            id,
            call,
            slug: endpoint.slug.clone(),
            version: endpoint.version.clone(),
            op,
        };
        (id, message)
    }

    fn answered(&self, id: u64, result: Result<HostAnswer, HostError>) {
        if let Some(reply) = lock(&self.pending).remove(&id) {
            let _ = reply.send(result);
        }
    }
}
