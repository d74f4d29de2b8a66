//! Running the service: listeners, background upkeep and graceful shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::app::AppState;
use crate::journal::Journal;
use crate::mcp::session::{Limits, Sessions};
use crate::routes;

/// How often the catalog looks for files added or edited by hand.
pub const SYNC_INTERVAL: Duration = Duration::from_secs(2);

/// A running server, for the CLI and for tests.
pub struct Running {
    pub local_addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// Stops accepting, lets requests in flight finish, and waits.
    pub async fn stop(self) -> std::io::Result<()> {
        let _ = self.shutdown.send(true);
        self.task.await.map_err(std::io::Error::other)?
    }
}

/// Binds the local route and serves it until `stop` (or the returned handle is dropped with the runtime).
pub async fn start(journal: Arc<Journal>, local_addr: SocketAddr) -> std::io::Result<Running> {
    let listener = TcpListener::bind(local_addr).await?;
    let local_addr = listener.local_addr()?;
    let state = AppState::new(journal, Sessions::new(Limits::default()));
    let router = routes::local::router(state.clone(), local_addr.port());
    let (shutdown, mut signal) = watch::channel(false);
    spawn_upkeep(state, shutdown.subscribe());
    let task = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                let _ = signal.wait_for(|stop| *stop).await;
            })
            .await
    });
    Ok(Running {
        local_addr,
        shutdown,
        task,
    })
}

/// Periodic catalog sync (hand edits) and session expiry, until shutdown.
fn spawn_upkeep(state: AppState, mut stop: watch::Receiver<bool>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(SYNC_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut ticks: u64 = 0;
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stop.wait_for(|s| *s) => return,
            }
            ticks += 1;
            match state.journal.sync().await {
                Ok(report) if report.indexed + report.removed > 0 => {
                    tracing::info!(
                        indexed = report.indexed,
                        removed = report.removed,
                        "picked up changed journal files"
                    );
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "the catalog sync failed; it will be retried"),
            }
            if ticks.is_multiple_of(30) {
                state.sessions.purge_expired();
            }
        }
    });
}
