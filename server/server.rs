//! Running the service: the local listener and the routes the config asks for, background upkeep
//! and graceful shutdown. Each listener's connections are served by `listener::accept_loop`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::app::AppState;
use crate::config::{DomainPlan, LanPlan, ProxyPlan, RelayRoutePlan};
use crate::journal::Journal;
use crate::journal::catalog::Depth;
pub use crate::listener::ConnectionLimits;
use crate::listener::{Gate, accept_loop};
use crate::mcp::catalog;
use crate::mcp::session::{Limits, Sessions};
use crate::mcp::state::McpState;
use crate::oauth::client_metadata::{Fetcher, HttpsFetcher};
use crate::routes;

/// How often the catalog looks for files added or edited by hand.
pub const SYNC_INTERVAL: Duration = Duration::from_secs(2);
/// Every how many syncs one checks every file (15 × 2 s: half a minute).
pub const FULL_SYNC_EVERY: u64 = 15;
/// A full sync waits at least this many times as long as the last one took, so that checking every
/// file costs at most about 5% of a core however large the journal (a million files take seconds).
const FULL_SYNC_SPACING: u32 = 20;

/// A running server, for the CLI and for tests.
pub struct Running {
    pub local_addr: SocketAddr,
    /// The state its routes share (the LAN route's addresses are on `state.routes`).
    pub state: AppState,
    shutdown: watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// Stops accepting, lets requests in flight finish (up to the drain limit), and waits.
    pub async fn stop(self) -> std::io::Result<()> {
        // Open streams end first, with their last message, so they do not hold the drain.
        self.state.mcp.close_streams();
        let _ = self.shutdown.send(true);
        for task in self.tasks {
            task.await.map_err(std::io::Error::other)?;
        }
        Ok(())
    }
}

/// What a server is started with beyond its journal and address.
#[derive(Clone)]
pub struct Options {
    pub limits: ConnectionLimits,
    /// Fetches client metadata documents; tests put a fixture here, the guard is the real one's.
    pub fetcher: Arc<dyn Fetcher>,
    /// Every how many periodic syncs one checks every file, for edits made in place.
    pub full_sync_every: u64,
    /// Where the LAN route listens, when it is on.
    pub lan: Option<LanPlan>,
    /// The own-domain route, when it is on.
    pub domain: Option<DomainPlan>,
    /// The route behind the owner's tunnel, when it is on.
    pub proxy: Option<ProxyPlan>,
    /// The route through the owner's relay, when it is on.
    pub relay: Option<RelayRoutePlan>,
    /// Bounds on MCP sessions (tests lower the server's cap to reach it).
    pub sessions: Limits,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            limits: ConnectionLimits::default(),
            fetcher: Arc::new(HttpsFetcher::new()),
            full_sync_every: FULL_SYNC_EVERY,
            lan: None,
            domain: None,
            proxy: None,
            relay: None,
            sessions: Limits::default(),
        }
    }
}

/// Binds the local route and serves it until `stop`.
pub async fn start(journal: Arc<Journal>, local_addr: SocketAddr) -> Result<Running, StartError> {
    start_with(journal, local_addr, Options::default()).await
}

/// Why the server did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("could not listen on {addr}: {source}")]
    Listen { addr: SocketAddr, source: std::io::Error },
    #[error("the LAN route could not start: {0}")]
    Lan(#[from] crate::tls::ca::TlsError),
    #[error("the domain route could not start: {0}")]
    Domain(#[from] crate::domain::serving::DomainError),
    #[error("the proxy route could not listen on {addr}: {source}")]
    Proxy { addr: SocketAddr, source: std::io::Error },
    #[error("the relay route could not start: {0}")]
    Relay(#[from] crate::relay::route::RelayRouteError),
}

/// `start` with explicit options (tests use short deadlines and a fixture fetcher).
pub async fn start_with(
    journal: Arc<Journal>,
    local_addr: SocketAddr,
    options: Options,
) -> Result<Running, StartError> {
    let limits = options.limits;
    let listen_error = |source| StartError::Listen {
        addr: local_addr,
        source,
    };
    let listener = TcpListener::bind(local_addr).await.map_err(listen_error)?;
    let local_addr = listener.local_addr().map_err(listen_error)?;
    let state = AppState::new(
        catalog::state(journal, Sessions::new(options.sessions)),
        options.fetcher,
    );
    let router = routes::local::router(state.clone(), local_addr);
    let (shutdown, signal) = watch::channel(false);
    // The local route serves first: the other routes' first checks (a CA to load, an ACME order)
    // must not keep the owner's own tools waiting.
    let mut running = Running {
        local_addr,
        state: state.clone(),
        tasks: vec![tokio::spawn(accept_loop(listener, router, limits, signal, Gate::Plain))],
        shutdown,
    };
    spawn_upkeep(
        state.mcp.clone(),
        running.shutdown.subscribe(),
        options.full_sync_every.max(1),
    );
    let routes = Routes {
        lan: options.lan,
        domain: options.domain,
        proxy: options.proxy,
        relay: options.relay,
    };
    match start_routes(&state, routes, limits, &running.shutdown).await {
        Ok(tasks) => {
            running.tasks.extend(tasks);
            Ok(running)
        }
        Err(error) => {
            let _ = running.stop().await;
            Err(error)
        }
    }
}

/// The routes beyond loopback that are on.
struct Routes {
    lan: Option<LanPlan>,
    domain: Option<DomainPlan>,
    proxy: Option<ProxyPlan>,
    relay: Option<RelayRoutePlan>,
}

/// Starts the LAN, own-domain, proxy and relay routes that are on; if one cannot start, stops the others.
async fn start_routes(
    state: &AppState,
    routes: Routes,
    limits: ConnectionLimits,
    shutdown: &watch::Sender<bool>,
) -> Result<Vec<tokio::task::JoinHandle<()>>, StartError> {
    let mut tasks = Vec::new();
    let started = async {
        if let Some(plan) = routes.lan {
            tasks.push(crate::lan::start(state.clone(), plan, limits, shutdown.subscribe()).await?);
        }
        if let Some(plan) = routes.domain {
            tasks.push(crate::domain::serving::start(state.clone(), plan, limits, shutdown.subscribe()).await?);
        }
        if let Some(plan) = routes.proxy {
            let addr = plan.listen;
            let task = crate::proxy::start(state.clone(), plan, limits, shutdown.subscribe())
                .await
                .map_err(|source| StartError::Proxy { addr, source })?;
            tasks.push(task);
        }
        if let Some(plan) = routes.relay {
            tasks.push(crate::relay::route::start(state.clone(), plan, limits, shutdown.subscribe()).await?);
        }
        Ok::<(), StartError>(())
    }
    .await;
    match started {
        Ok(()) => Ok(tasks),
        Err(error) => {
            let _ = shutdown.send(true);
            for task in tasks {
                let _ = task.await;
            }
            Err(error)
        }
    }
}

/// Periodic catalog sync (hand edits), the durable access epoch and session expiry, until shutdown.
pub(crate) fn spawn_upkeep(state: McpState, mut stop: watch::Receiver<bool>, full_sync_every: u64) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(SYNC_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut ticks: u64 = 0;
        let mut next_full = tokio::time::Instant::now();
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stop.wait_for(|s| *s) => return,
            }
            ticks += 1;
            // Quick syncs see files created, renamed or deleted; a full one every 15th pass (30 s) also
            // catches files edited in place (which leave their folder's time alone).
            let depth = if ticks.is_multiple_of(full_sync_every) && tokio::time::Instant::now() >= next_full {
                Depth::Full
            } else {
                Depth::Quick
            };
            let started = tokio::time::Instant::now();
            let refreshed = state.journal.refresh(depth).await;
            if depth == Depth::Full {
                next_full = tokio::time::Instant::now() + started.elapsed() * FULL_SYNC_SPACING;
            }
            // A full sync (the first pass is one) builds maps of every file and frees them again.
            if depth == Depth::Full || ticks == 1 {
                crate::alloc::give_back();
            }
            match refreshed {
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
            if let Err(error) = state.credentials.upkeep(&state.journal.db).await {
                tracing::warn!(%error, "could not read the durable access epoch; it will be retried");
            }
            if ticks.is_multiple_of(30) {
                state.sessions.purge_expired();
            }
        }
    });
}
