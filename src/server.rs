//! Binding, start-up and graceful shutdown, shared by `main` and the integration tests.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::ConnectInfo;
use axum::http::StatusCode;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;

use crate::app::{App, AppState, StartupError, StartupNotes};
use crate::config::Config;
use crate::error::{ApiError, ErrorCode};
use crate::http::admission::{Held, Tally};
use crate::rate_limit::{client_key, Buckets};
use crate::router::build_router;

pub struct Server {
    listener: TcpListener,
    pub app: AppState,
    pub notes: StartupNotes,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    Startup(#[from] StartupError),
    #[error("server failed: {0}")]
    Io(#[from] std::io::Error),
}

impl Server {
    /// Binds first, so the base URL can name the real port when the configured one is 0.
    pub async fn bind(config: Config) -> Result<Self, ServeError> {
        let addr = config.addr;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        let bound = listener.local_addr()?;
        let (mut app, notes) = App::open(config, bound).await?;
        app.payments
            .facilitator
            .check()
            .await
            .map_err(StartupError::Facilitator)?;
        let left_out = crate::payments::keep_settled_networks(
            &mut app.config.payment,
            app.payments.facilitator.as_ref(),
        )
        .map_err(StartupError::Facilitator)?;
        for network in left_out {
            tracing::warn!(
                network,
                "not offered: the x402 facilitator does not settle `exact` payments on it"
            );
        }
        crate::x402::facilitator::follow(&app.payments.facilitator);
        app.runtime
            .pool()
            .start()
            .await
            .map_err(StartupError::Sandbox)?;
        let app = Arc::new(app);
        app.follow_changes();
        app.start_recovery().await;
        crate::maintenance::start(&app);
        Ok(Self {
            listener,
            app,
            notes,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        // A bound listener always has an address.
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    /// Serves until `shutdown` resolves, lets in-flight requests finish, then flushes the store.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let router = build_router(self.app.clone());
        let limits = &self.app.config.limits;
        let connections = ConnectionLimits {
            max: limits
                .max_connections
                .unwrap_or_else(default_max_connections),
            header_read_timeout: limits.header_read_timeout,
            per_client: limits.admission.max_connections_per_client,
            new_per_client_per_sec: limits.admission.new_connections_per_client_per_sec,
            // hyper refuses (panics on) less than its 8 KiB initial buffer.
            max_head_bytes: limits.admission.max_head_bytes.max(8192),
        };
        tracing::info!(
            max_connections = connections.max,
            max_connections_per_client = connections.per_client,
            header_read_timeout_ms = connections.header_read_timeout.as_millis() as u64,
            "accepting connections"
        );
        serve(self.listener, router, connections, shutdown).await;
        // Isolate threads hold the store through their host; join them, and store what the
        // recorder holds, before flushing so nothing writes after the flush.
        self.app.runtime.pool().shutdown().await;
        self.app.recorder.close().await;
        self.app.receipt_log.close().await;
        self.app.receipt_batches.close().await;
        if let Err(e) = self.app.store.close().await {
            tracing::error!(error = %e, "closing the store on shutdown failed");
        }
        tracing::info!("store closed; bye");
        Ok(())
    }
}

/// Raises the soft open-file limit to the hard one, so the connection cap derived from it is
/// as high as the operator allows; returns the soft limit now in force.
pub fn raise_file_limit() -> std::io::Result<u64> {
    rlimit::increase_nofile_limit(u64::MAX)
}

/// File descriptors kept out of the connection cap: the store, isolate threads, outbound
/// requests, the log, and the sockets refused with an overload answer.
const RESERVED_FILES: u64 = 256;

/// The default cap on open connections: 80% of the soft open-file limit less a reserve, so a
/// flood of connections meets our overload answer before `accept` fails with EMFILE, which
/// would refuse everyone without a word.
fn default_max_connections() -> usize {
    let soft = rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _)| soft);
    let cap = (soft / 10 * 8).saturating_sub(RESERVED_FILES).max(16);
    usize::try_from(cap).unwrap_or(usize::MAX)
}

struct ConnectionLimits {
    max: usize,
    header_read_timeout: std::time::Duration,
    /// Open connections one client (address, IPv6 by /64) may hold.
    per_client: usize,
    /// New connections one client may open per second (burst: twice as many); 0: any.
    new_per_client_per_sec: u32,
    /// Bytes a connection buffers for a request head.
    max_head_bytes: usize,
}

/// Over-cap connections answered at once; more are closed without an answer, so refusing
/// cannot itself pile up open sockets.
const OVERLOAD_ANSWERS: usize = 64;
/// How long an over-cap connection may take to receive its answer.
const OVERLOAD_ANSWER_TIME: std::time::Duration = std::time::Duration::from_secs(1);

/// The accept loop. Each connection is HTTP/1 with a header-read timeout (a client that does
/// not send a whole request head in time, including between keep-alive requests, is
/// disconnected) and takes one of `limits.max` permits and one of its client's
/// `limits.per_client`; a connection beyond either cap gets a 503 `overloaded` and is closed.
/// A client opening connections faster than `limits.new_per_client_per_sec` has each served
/// in its turn (up to two seconds later). On `shutdown`, stops accepting and waits for
/// in-flight requests.
async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let permits = Arc::new(Semaphore::new(limits.max));
    let per_client = Tally::new(usize::MAX, limits.per_client);
    let rate = f64::from(limits.new_per_client_per_sec);
    let pace = (rate > 0.0).then(|| Buckets::new(rate, 2.0 * rate));
    let answers = Arc::new(Semaphore::new(OVERLOAD_ANSWERS));
    let overloaded: Arc<[u8]> = overload_answer().into();
    let graceful = GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(limits.max_head_bytes);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors or a connection reset before accept: pause briefly
                    // instead of spinning on the same error.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let held = per_client.take(remote.ip(), 1);
        let (Ok(permit), Ok(held)) = (permits.clone().try_acquire_owned(), held) else {
            if let Ok(answering) = answers.clone().try_acquire_owned() {
                tokio::spawn(refuse(stream, overloaded.clone(), answering));
            }
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service =
            router
                .clone()
                .map_request(move |mut request: axum::http::Request<Incoming>| {
                    request.extensions_mut().insert(ConnectInfo(remote));
                    request
                });
        let connection =
            builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        // A client reconnecting faster than its pace waits its turn, holding one of its
        // connections meanwhile (so its cap bounds how many wait).
        let turn = pace.as_ref().map_or(std::time::Duration::ZERO, |pace| {
            pace.charge(client_key(remote.ip()), std::time::Instant::now(), 1.0)
        });
        tokio::spawn(async move {
            if !turn.is_zero() {
                tokio::time::sleep(turn).await;
            }
            serve_connection(connection, (permit, held)).await;
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

async fn serve_connection(
    connection: impl Future<Output = Result<(), hyper::Error>>,
    permit: (OwnedSemaphorePermit, Held),
) {
    if let Err(e) = connection.await {
        // Timeouts, resets and malformed requests are the client's business.
        tracing::debug!(error = %e, "connection ended with an error");
    }
    drop(permit);
}

/// The raw HTTP/1.1 answer to a connection over the cap: the one error shape, code
/// `overloaded`, with `Retry-After`.
fn overload_answer() -> Vec<u8> {
    let error = ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::Overloaded,
        "too many open connections; retry later",
    );
    // Made once at start-up; each refusal is logged when it is sent (`refuse`).
    let body = serde_json::to_string(&error.body()).unwrap_or_default();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Answers an over-cap connection and closes it. The request head is read first (briefly): an
/// HTTP client takes an answer that arrives before it has sent its request for a protocol
/// error, not for the 503. What follows is drained after the answer, so closing with unread
/// data does not reset the connection before the client has read it.
async fn refuse(mut stream: TcpStream, answer: Arc<[u8]>, _answering: OwnedSemaphorePermit) {
    tracing::warn!(
        peer = ?stream.peer_addr().ok(),
        status = 503,
        code = "overloaded",
        "connection refused: too many open connections"
    );
    let mut head = Vec::new();
    let _ = tokio::time::timeout(OVERLOAD_ANSWER_TIME / 2, async {
        let mut buf = [0u8; 2048];
        while head.len() < 16 * 1024 && !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    let _ = tokio::time::timeout(OVERLOAD_ANSWER_TIME, async {
        stream.write_all(&answer).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<_, std::io::Error>(())
    })
    .await;
}

/// The future that resolves on SIGTERM or Ctrl-C. The handlers are installed here, when it is
/// called, not when the future is first polled: the server's accept loop may poll it only after
/// the first connections, and a SIGTERM sent once "listening" is printed must already be ours
/// (unhandled, it ends the process with the signal instead of a clean shutdown).
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let (interrupt, terminate) = {
        use tokio::signal::unix::{signal, SignalKind};
        (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        )
    };
    async move {
        #[cfg(unix)]
        {
            let received = async |stream: std::io::Result<tokio::signal::unix::Signal>| match stream
            {
                Ok(mut stream) => {
                    stream.recv().await;
                }
                // Without a handler the signal keeps its default action, which still ends us.
                Err(_) => std::future::pending::<()>().await,
            };
            tokio::select! { () = received(interrupt) => {}, () = received(terminate) => {} }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutdown signal received; finishing in-flight requests");
    }
}
