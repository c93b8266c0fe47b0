//! Binding, start-up and graceful shutdown, shared by `main` and the integration tests.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::app::{App, AppState, StartupError, StartupNotes};
use crate::config::Config;
use crate::http::build_router;

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
        let (app, notes) = App::open(config, bound).await?;
        app.payments
            .facilitator
            .check()
            .await
            .map_err(StartupError::Chain)?;
        let app = Arc::new(app);
        app.follow_changes();
        app.start_recovery().await;
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
        axum::serve(self.listener, router)
            .with_graceful_shutdown(shutdown)
            .await?;
        // Isolate threads hold the store through their host; join them, and store what the
        // recorder holds, before flushing so nothing writes after the flush.
        self.app.runtime.pool().shutdown().await;
        self.app.recorder.close().await;
        if let Err(e) = self.app.store.close().await {
            tracing::error!(error = %e, "closing the store on shutdown failed");
        }
        tracing::info!("store closed; bye");
        Ok(())
    }
}
