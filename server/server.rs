//! Running the service: listeners, connection limits, background upkeep and graceful shutdown.
//!
//! Connections are served by hyper directly rather than `axum::serve` because the limits an outsider
//! must not exceed live at this level: how large the request head may be and how long a client may
//! take to send it. A slow or oversized client costs one task, never the listener. On a TLS route
//! (`Gate::Tls`) the peer's address and the connection limits are checked before anything else,
//! and the handshake runs in the connection's own task under the same deadline as a request head.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::app::AppState;
use crate::config::{DomainPlan, LanPlan};
use crate::journal::Journal;
use crate::journal::catalog::Depth;
use crate::lan::limits::ConnectionLimiter;
use crate::mcp::session::{Limits, Sessions};
use crate::mcp::state::McpState;
use crate::oauth::client_metadata::{Fetcher, HttpsFetcher};
use crate::routes;
use crate::tls::private_range;
use crate::tls::serving::ACME_TLS_ALPN;

/// How often the catalog looks for files added or edited by hand.
pub const SYNC_INTERVAL: Duration = Duration::from_secs(2);
/// Every how many syncs one checks every file (15 × 2 s: half a minute).
pub const FULL_SYNC_EVERY: u64 = 15;
/// A full sync waits at least this many times as long as the last one took, so that checking every
/// file costs at most about 5% of a core however large the journal (a million files take seconds).
const FULL_SYNC_SPACING: u32 = 20;

/// Limits on what one connection may send.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// The whole request head (request line and headers); larger heads get 431.
    pub max_head_bytes: usize,
    /// How long a client may take to send a request head, including the wait for the next request
    /// on a kept-alive connection (hyper times both with one timer). Longer than clients keep an idle
    /// connection themselves (httpx 5 s, Node 4 s): a client must drop an idle connection before the
    /// server does, or a request it sends as the server closes is lost without an answer.
    pub head_deadline: Duration,
    /// How long a TLS route's handshake may take.
    pub handshake_deadline: Duration,
    /// How long graceful shutdown waits for requests in flight.
    pub drain: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            max_head_bytes: 40 * 1024,
            head_deadline: Duration::from_secs(15),
            handshake_deadline: Duration::from_secs(5),
            drain: Duration::from_secs(10),
        }
    }
}

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
    let state = AppState::new(McpState::new(journal, Sessions::new(options.sessions)), options.fetcher);
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
    match start_routes(&state, options.lan, options.domain, limits, &running.shutdown).await {
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

/// Starts the LAN and own-domain routes that are on.
async fn start_routes(
    state: &AppState,
    lan: Option<LanPlan>,
    domain: Option<DomainPlan>,
    limits: ConnectionLimits,
    shutdown: &watch::Sender<bool>,
) -> Result<Vec<tokio::task::JoinHandle<()>>, StartError> {
    let mut tasks = Vec::new();
    if let Some(plan) = lan {
        tasks.push(crate::lan::start(state.clone(), plan, limits, shutdown.subscribe()).await?);
    }
    if let Some(plan) = domain {
        match crate::domain::serving::start(state.clone(), plan, limits, shutdown.subscribe()).await {
            Ok(task) => tasks.push(task),
            Err(error) => {
                let _ = shutdown.send(true);
                for task in tasks {
                    let _ = task.await;
                }
                return Err(error.into());
            }
        }
    }
    Ok(tasks)
}

/// What stands between an accepted socket and HTTP.
#[derive(Clone)]
pub(crate) enum Gate {
    /// Loopback: plain HTTP (the Host guard of the local route does the rest).
    Plain,
    /// A TLS route: connection limits (and, on the LAN route, private peers only), then the
    /// handshake. A handshake for ACME's TLS-ALPN-01 challenge ends the connection.
    Tls {
        acceptor: tokio_rustls::TlsAcceptor,
        limiter: ConnectionLimiter,
        private_peers_only: bool,
    },
}

fn http(limits: ConnectionLimits) -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.head_deadline)
        .max_buf_size(limits.max_head_bytes)
        .keep_alive(true);
    builder
}

pub(crate) async fn accept_loop(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
    gate: Gate,
) {
    let graceful = GracefulShutdown::new();
    let http = http(limits);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|s| *s) => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Usually out of file descriptors: back off instead of spinning.
                tracing::warn!(%error, "could not accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = with_peer(router.clone(), peer);
        match &gate {
            Gate::Plain => {
                let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
                tokio::spawn(async move {
                    // Errors here are a client's doing (a reset, a timeout, a malformed head) and are
                    // already answered or closed by hyper; they are not the server's to report.
                    let _ = connection.await;
                });
            }
            Gate::Tls {
                acceptor,
                limiter,
                private_peers_only,
            } => {
                // Refused before the handshake: on the LAN route a peer that is not on a private
                // network, and one more connection than the limits allow. Dropping the socket closes it.
                if *private_peers_only && !private_range::peer_allowed(peer.ip()) {
                    tracing::debug!(%peer, "refused a connection from outside the private ranges");
                    continue;
                }
                let Ok(admission) = limiter.admit(peer.ip()) else {
                    tracing::debug!(%peer, "refused a connection over the connection limits");
                    continue;
                };
                let (acceptor, watcher, http) = (acceptor.clone(), graceful.watcher(), http.clone());
                tokio::spawn(async move {
                    let _admission = admission;
                    let Ok(Ok(stream)) = tokio::time::timeout(limits.handshake_deadline, acceptor.accept(stream)).await
                    else {
                        return;
                    };
                    // The CA's validator only needed the handshake (RFC 8737): no HTTP follows.
                    if stream.get_ref().1.alpn_protocol() == Some(ACME_TLS_ALPN) {
                        return;
                    }
                    let _ = watcher
                        .watch(http.serve_connection(TokioIo::new(stream), service))
                        .await;
                });
            }
        }
    }
    drop(listener);
    if tokio::time::timeout(limits.drain, graceful.shutdown()).await.is_err() {
        tracing::warn!("some requests were still running when the drain time ran out");
    }
}

/// The router as a hyper service that tells each request where it came from (per-source quotas).
fn with_peer(
    router: axum::Router,
    peer: SocketAddr,
) -> impl hyper::service::Service<
    hyper::Request<hyper::body::Incoming>,
    Response = axum::response::Response,
    Error = std::convert::Infallible,
    Future = impl Future<Output = Result<axum::response::Response, std::convert::Infallible>> + Send,
> + Clone {
    hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
        request.extensions_mut().insert(ConnectInfo(peer));
        let mut router = router.clone();
        tower_service::Service::call(&mut router, request.map(axum::body::Body::new))
    })
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
