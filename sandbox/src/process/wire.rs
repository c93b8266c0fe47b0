//! The protocol between the server and a worker process: length-prefixed JSON frames over the
//! worker's stdin (server to worker) and stdout (worker to server).
//!
//! JSON because requests, results and kv values are arbitrary JSON already (`serde_json::Value`
//! needs a self-describing format); file contents travel as base64 inside it. A call's request,
//! its handler's answer body and the kv values it reads are JSON text written into the frame as
//! they are (raw values): the worker never parses them into values (the isolate parses the
//! request and the kv values, the server the body). A frame is a
//! little-endian `u32` length and that many bytes. The writer batches: whatever frames are
//! queued when it wakes go out in one `write`, so a busy worker pays one system call for many
//! messages. The readers are buffered ([`buffered`]) for the same reason: a frame's length
//! and body, and the frames written with it, come in with one `read`, not two per frame.

use std::io;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::invocation::RawReport;
use crate::{EndpointCode, HostAnswer, HostError, HostOp, Invocation, PoolConfig, PoolStats, Wear};

/// Largest frame either side accepts; a longer one breaks the protocol. Bodies, results and
/// files are bounded far below it by their own limits.
pub(crate) const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// A batch is written once it reaches this size, even if more frames are queued.
pub(super) const MAX_BATCH_BYTES: usize = 1024 * 1024;

/// What a reader takes from its pipe at once ([`buffered`]): a batch of small frames in one
/// system call. A frame larger than this is read into its own buffer, past this one.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// What the server sends.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum ToWorker {
    /// The first frame: the worker's share of the pool configuration and its log filter.
    Hello {
        config: PoolConfig,
        log_filter: String,
    },
    /// Runs one call. `code` is sent the first time the worker sees this endpoint version (and
    /// again when the worker answers [`FromWorker::NeedCode`]).
    /// `apart`: the server serves the call's builder apart (in the heavy worker for its long
    /// bursts of CPU, or in the quarantine worker for a crash or lost isolates): it counts as
    /// heavy here from its first call.
    Invoke {
        id: u64,
        slug: String,
        version: String,
        code: Option<Box<EndpointCode>>,
        invocation: Invocation,
        apart: bool,
    },
    /// The answer to a [`FromWorker::HostCall`].
    HostReply {
        id: u64,
        result: Result<HostAnswer, HostError>,
    },
    /// Starts and loads isolates of these endpoints, as many of each as asked, before any call:
    /// what the worker it replaces served (see `WorkerPool::recycle`).
    /// `heavy`: builders heavy in the worker this one replaces, who stay heavy here.
    Warm {
        id: u64,
        endpoints: Vec<Warm>,
        heavy: Vec<String>,
    },
    /// Drops an endpoint's isolates and code.
    Retire { slug: String },
    /// Drops the isolates of every endpoint of `builder`, which the server now serves from
    /// another worker (the heavy or the quarantine worker; its calls in progress finish); its
    /// code stays.
    SetApart { builder: String },
    /// Asks for the worker's [`PoolStats`] (also the server's liveness ping).
    Stats { id: u64 },
    /// Finish the calls in progress and exit.
    Shutdown,
    /// Test builds only: run the wall probe (native code standing for a compromised engine).
    #[cfg(feature = "wall-probe")]
    Probe { id: u64, probe: super::probe::Probe },
}

/// One endpoint of a [`ToWorker::Warm`]: its code (which the worker keeps, as if a call had
/// brought it) and how many isolates it had where it was served before.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Warm {
    pub(crate) code: EndpointCode,
    pub(crate) instances: usize,
}

/// [`ToWorker::Invoke`] as the server writes it: borrowed, so a call copies neither its
/// request nor its endpoint's code before encoding them. Encodes exactly as the owned variant.
#[derive(Serialize)]
pub(crate) enum InvokeFrame<'a> {
    Invoke {
        id: u64,
        slug: &'a str,
        version: &'a str,
        code: Option<&'a EndpointCode>,
        invocation: &'a Invocation,
        apart: bool,
    },
}

/// [`ToWorker::Warm`] as the server writes it: borrowed, as [`InvokeFrame`].
#[derive(Serialize)]
pub(crate) enum WarmFrame<'a> {
    Warm {
        id: u64,
        endpoints: &'a [WarmRef<'a>],
        heavy: &'a [String],
    },
}

/// [`Warm`], borrowed.
#[derive(Serialize)]
pub(crate) struct WarmRef<'a> {
    pub(crate) code: &'a EndpointCode,
    pub(crate) instances: usize,
}

/// What a worker sends.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum FromWorker {
    /// Sent once, after the worker confined itself; `confinement` says what was applied.
    Ready { confinement: String },
    /// A call's report, and the worker's [`Wear`]: isolate threads stuck in it make the server
    /// replace the whole process; isolates dropped (and the heap they held) past its share
    /// make the server recycle it. `lost_isolate`: a call of the builder lost its isolate
    /// while this one ran (timed out, over its heap limit, or did not stop), which sets the
    /// builder apart in the quarantine worker; `ran_heavy`: a call of the builder used a heavy
    /// call's CPU while this one ran (`limits::cpu`), which moves it to the heavy worker.
    Done {
        id: u64,
        report: RawReport,
        wear: Wear,
        lost_isolate: bool,
        ran_heavy: bool,
    },
    /// The worker does not hold the code of this call's endpoint version: send it again.
    NeedCode { id: u64 },
    /// A `ctx` operation of a handler whose isolate was given the code of `slug` at `version`,
    /// made during the call `call` (the id of its [`ToWorker::Invoke`], or [`crate::NO_CALL`]
    /// while the module loads), for the server to check against that call and code and run.
    HostCall {
        id: u64,
        call: u64,
        slug: String,
        version: String,
        op: HostOp,
    },
    /// The answer to [`ToWorker::Stats`].
    Stats { id: u64, stats: PoolStats },
    /// The answer to [`ToWorker::Warm`]: every isolate asked for is loaded, or failed to.
    Warmed { id: u64 },
    /// Test builds only: the probe's outcome, one line per attempt.
    #[cfg(feature = "wall-probe")]
    Probed { id: u64, outcome: Vec<String> },
}

/// A message that does not fit in a frame ([`MAX_FRAME_BYTES`]). The sender finds out before
/// anything is sent, and fails what the message was for (one call, one op): a frame over the
/// limit would make the reader end the whole process, with every call it runs.
#[derive(Debug, PartialEq)]
pub(crate) struct FrameTooLarge;

impl std::fmt::Display for FrameTooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "more than the {} MiB a message between the server and a sandbox worker may carry",
            MAX_FRAME_BYTES >> 20
        )
    }
}

/// One frame, ready to queue for the writer, or [`FrameTooLarge`] once the encoding passes
/// the limit (it stops there: a message too large costs at most one frame's bytes).
pub(crate) fn encode<T: Serialize>(message: &T) -> Result<Vec<u8>, FrameTooLarge> {
    // Room for a typical call's frame (a few hundred bytes) from the start, not grown from 4.
    let mut frame = Bounded(Vec::with_capacity(512));
    frame.0.extend_from_slice(&[0; 4]);
    // The only error a protocol message can meet is the writer's refusal.
    serde_json::to_writer(&mut frame, message).map_err(|_| FrameTooLarge)?;
    let mut frame = frame.0;
    let len = u32::try_from(frame.len() - 4).expect("frames are far below 4 GiB");
    frame[..4].copy_from_slice(&len.to_le_bytes());
    Ok(frame)
}

/// A frame being encoded: refuses to grow past the length prefix and [`MAX_FRAME_BYTES`].
struct Bounded(Vec<u8>);

impl io::Write for Bounded {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.0.len() + bytes.len() > 4 + MAX_FRAME_BYTES {
            return Err(io::Error::other(FrameTooLarge.to_string()));
        }
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `reader` read [`READ_BUFFER_BYTES`] at a time, for [`read`].
pub(crate) fn buffered<R: AsyncRead>(reader: R) -> BufReader<R> {
    BufReader::with_capacity(READ_BUFFER_BYTES, reader)
}

/// Reads the next message; `Ok(None)` at a clean end of stream between frames. Give it a
/// [`buffered`] reader: unbuffered, every frame costs two system calls.
pub(crate) async fn read<T: DeserializeOwned>(
    reader: &mut (impl AsyncRead + Unpin),
    buffer: &mut Vec<u8>,
) -> io::Result<Option<T>> {
    let mut len = [0u8; 4];
    match reader.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a frame of {len} bytes is over the limit"),
        ));
    }
    buffer.resize(len, 0);
    reader.read_exact(buffer).await?;
    serde_json::from_slice(buffer)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Where a writer takes its frames from, a batch at a time.
pub(crate) trait FrameSource<F> {
    /// Waits for frames and moves the next ones into `batch` (at least one, about
    /// [`MAX_BATCH_BYTES`] at most); `false` once no more will come.
    async fn next_batch(&mut self, batch: &mut Vec<F>) -> bool;
}

/// Frames in the order they were sent.
impl<F: AsRef<[u8]>> FrameSource<F> for mpsc::UnboundedReceiver<F> {
    async fn next_batch(&mut self, batch: &mut Vec<F>) -> bool {
        let Some(frame) = self.recv().await else {
            return false;
        };
        let mut bytes = frame.as_ref().len();
        batch.push(frame);
        while bytes < MAX_BATCH_BYTES {
            let Ok(frame) = self.try_recv() else { break };
            bytes += frame.as_ref().len();
            batch.push(frame);
        }
        true
    }
}

/// Writes frames until their source ends, a batch per system call.
/// The frames of a batch are kept until it is written: what a frame holds (the server's
/// accounting of a reply's bytes, see `supervisor::Frame`) is given back once the bytes have
/// left, not when they were copied into the batch.
pub(crate) async fn write_all<F: AsRef<[u8]>>(
    mut writer: impl AsyncWrite + Unpin,
    mut frames: impl FrameSource<F>,
) -> io::Result<()> {
    let (mut batch, mut bytes) = (Vec::new(), Vec::new());
    while frames.next_batch(&mut batch).await {
        for frame in &batch {
            bytes.extend_from_slice(frame.as_ref());
        }
        writer.write_all(&bytes).await?;
        writer.flush().await?;
        bytes.clear();
        batch.clear();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_borrowed_invoke_frame_encodes_as_the_owned_one() {
        let invocation = Invocation {
            request: serde_json::value::to_raw_value(&serde_json::json!({ "input": 1 })).unwrap(),
            request_id: "r".into(),
            load_only: false,
        };
        let borrowed = encode(&InvokeFrame::Invoke {
            id: 3,
            slug: "s",
            version: "v",
            code: None,
            invocation: &invocation,
            apart: true,
        })
        .unwrap();
        let owned = encode(&ToWorker::Invoke {
            id: 3,
            slug: "s".into(),
            version: "v".into(),
            code: None,
            invocation,
            apart: true,
        })
        .unwrap();
        assert_eq!(borrowed, owned);
    }

    #[tokio::test]
    async fn frames_round_trip_and_oversized_ones_are_refused() {
        let message = ToWorker::Retire { slug: "a".into() };
        let mut bytes = encode(&message).unwrap();
        bytes.extend(encode(&ToWorker::Stats { id: 7 }).unwrap());
        let mut reader = bytes.as_slice();
        let mut buffer = Vec::new();
        let first: ToWorker = read(&mut reader, &mut buffer).await.unwrap().unwrap();
        assert!(matches!(first, ToWorker::Retire { slug } if slug == "a"));
        let second: ToWorker = read(&mut reader, &mut buffer).await.unwrap().unwrap();
        assert!(matches!(second, ToWorker::Stats { id: 7 }));
        assert!(read::<ToWorker>(&mut reader, &mut buffer)
            .await
            .unwrap()
            .is_none());

        let huge = ((MAX_FRAME_BYTES + 1) as u32).to_le_bytes();
        let err = read::<ToWorker>(&mut huge.as_slice(), &mut buffer)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let garbage = [&3u32.to_le_bytes()[..], b"{x}"].concat();
        assert!(read::<ToWorker>(&mut garbage.as_slice(), &mut buffer)
            .await
            .is_err());
    }

    #[test]
    fn a_message_over_the_limit_is_refused_before_it_is_sent() {
        let at_limit = |extra: usize| ToWorker::Retire {
            // `{"Retire":{"slug":"…"}}` is 22 bytes around the slug.
            slug: "a".repeat(MAX_FRAME_BYTES - 22 + extra),
        };
        let frame = encode(&at_limit(0)).unwrap();
        assert_eq!(frame.len(), 4 + MAX_FRAME_BYTES);
        assert_eq!(encode(&at_limit(1)), Err(FrameTooLarge));
    }
}
