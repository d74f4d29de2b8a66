//! The journal's relay route: `https://NAME.<relay host>/mcp`, for a journal with no public address
//! or open port. The route keeps one tunnel to the relay (`tunnel`), dialling again with backoff
//! (1 s after a drop, doubling to a minute; five minutes after a refusal the owner must fix), and
//! serves every stream the relay hands over as a TLS connection of its own: the journal's ACME
//! certificate for `NAME.<relay host>`, ordered by TLS-ALPN-01 through the relay (the CA's
//! validator is one more connection the relay passes by its server name). The relay never holds
//! the key. Keys and sign-ins both work here, behind the same Host rule as the own-domain route.
//!
//! Every minute (or at once on SIGHUP, or when the tunnel comes up) the route renews its
//! certificate when fewer than 30 days remain, and records what it does for `journal route list`
//! and the owner app.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::identity::{self, Identity};
use super::tunnel::{self, RelayTarget, TunnelError};
use crate::app::AppState;
use crate::clock::unix_now;
use crate::config::RelayRoutePlan;
use crate::context::{RELAY, Route};
use crate::domain::acme::AcmeHttp;
use crate::domain::keeper::Keeper;
use crate::lan::limits::ConnectionLimiter;
use crate::listener::{ConnectionLimits, serve_tls};
use crate::routes;
use crate::routes::status::{self, DomainView};
use crate::tls::ca;
use crate::tls::serving::acme_server_config;

/// How often the route checks its certificate.
const CHECK_INTERVAL: Duration = Duration::from_secs(60);
/// The longest wait between dials while the relay cannot be reached.
const MAX_DIAL_WAIT: Duration = Duration::from_secs(60);
/// The wait after the relay refused the tunnel (the owner has something to fix).
const REFUSED_WAIT: Duration = Duration::from_secs(300);

/// Why the route could not start.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RelayRouteError(String);

/// The state of a tunnel, or of all of them, as the route's checks see it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tunnel {
    Dialling,
    Connected,
    /// Some relays connected, not all: the route serves, and says what is wrong with the others.
    Partly(String),
    Down(String),
}

impl Tunnel {
    fn serving(&self) -> bool {
        matches!(self, Tunnel::Connected | Tunnel::Partly(_))
    }
}

/// The tunnels to each relay behind the relay's name, and their summary, which the checks watch.
struct Tunnels {
    each: std::sync::Mutex<std::collections::BTreeMap<SocketAddr, Tunnel>>,
    summary: watch::Sender<Tunnel>,
}

impl Tunnels {
    fn set(&self, relay: SocketAddr, state: Option<Tunnel>) {
        let mut each = self.each.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match state {
            Some(state) => each.insert(relay, state),
            None => each.remove(&relay),
        };
        self.summary.send_replace(summary(&each));
    }
}

/// One state for all the tunnels: connected when all are, partly when some are.
fn summary(each: &std::collections::BTreeMap<SocketAddr, Tunnel>) -> Tunnel {
    let connected = each.values().filter(|t| **t == Tunnel::Connected).count();
    let trouble = each.iter().find_map(|(relay, t)| match t {
        Tunnel::Down(problem) => Some(format!("{problem} ({relay})")),
        _ => None,
    });
    match (connected, trouble) {
        (0, Some(trouble)) => Tunnel::Down(trouble),
        (0, None) => Tunnel::Dialling,
        (n, Some(trouble)) => Tunnel::Partly(format!("{n} of {} relays connected; {trouble}", each.len())),
        // The others are being dialled for the first time: nothing is wrong yet.
        (_, None) => Tunnel::Connected,
    }
}

/// The addresses to hold a tunnel to: those the owner gave, else every address the relay's name
/// resolves to (several relays behind one name each need the journal's tunnel, since an agent may
/// reach any of them).
pub async fn relay_addresses(plan: &RelayRoutePlan) -> Result<Vec<SocketAddr>, String> {
    if !plan.addresses.is_empty() {
        return Ok(plan.addresses.clone());
    }
    let found = tokio::net::lookup_host((plan.relay_host.as_str(), plan.relay_port))
        .await
        .map_err(|e| format!("could not resolve the relay {}: {e}", plan.relay_host))?;
    let mut addresses: Vec<SocketAddr> = found.collect();
    addresses.sort();
    addresses.dedup();
    if addresses.is_empty() {
        return Err(format!("the relay {} resolves to no address", plan.relay_host));
    }
    Ok(addresses)
}

/// The relay the plan names, as a tunnel dials it at `address`.
pub fn target(plan: &RelayRoutePlan, address: SocketAddr) -> Result<RelayTarget, RelayRouteError> {
    let extra_roots = match &plan.relay_root {
        Some(path) => identity::certificates(path).map_err(|e| RelayRouteError(e.to_string()))?,
        None => Vec::new(),
    };
    Ok(RelayTarget {
        host: plan.relay_host.clone(),
        port: plan.relay_port,
        address: Some(address),
        name: plan.name.clone(),
        extra_roots,
    })
}

/// The journal's key for its relay, in the journal's `.tls/` folder.
pub fn journal_identity(journal_root: &std::path::Path) -> Result<Identity, RelayRouteError> {
    identity::load_or_create(&ca::folder(journal_root)).map_err(|e| RelayRouteError(e.to_string()))
}

/// The route's `Route`.
pub fn route(plan: &RelayRoutePlan) -> Route {
    Route::relay(&plan.hostname(), plan.relay_port)
}

/// Starts the route: its tunnel, and its checks until `stop`.
pub async fn start(
    state: AppState,
    plan: RelayRoutePlan,
    limits: ConnectionLimits,
    stop: watch::Receiver<bool>,
) -> Result<JoinHandle<()>, RelayRouteError> {
    let root = state.journal.root().to_path_buf();
    let identity = Arc::new(journal_identity(&root)?);
    // The relay's CA is read now, for a clear error at start.
    target(&plan, SocketAddr::from(([0, 0, 0, 0], 0)))?;
    // The extra root is read now: a wrong path is a setting to fix, not something to retry.
    AcmeHttp::new(plan.acme_root.as_deref()).map_err(|e| RelayRouteError(e.to_string()))?;
    let keeper = Keeper::new(RELAY, &plan.hostname(), root, plan.acme());
    let acceptor = tokio_rustls::TlsAcceptor::from(
        acme_server_config(keeper.slot.clone()).map_err(|e| RelayRouteError(e.to_string()))?,
    );
    let router = routes::domain::router(state.clone(), route(&plan));
    let (summary, tunnel_seen) = watch::channel(Tunnel::Dialling);
    let tunnels = Arc::new(Tunnels {
        each: Default::default(),
        summary,
    });
    let serving = Serving {
        identity,
        acceptor,
        router,
        limits,
    };
    let dialling = tokio::spawn(keep_tunnels(plan.clone(), serving, tunnels, stop.clone()));
    let checks = RelayRoute {
        state,
        plan,
        keeper,
        recorder: status::Recorder::new(RELAY),
    };
    Ok(tokio::spawn(async move {
        checks.run(tunnel_seen, stop).await;
        let _ = dialling.await;
    }))
}

/// What every tunnel serves its streams with.
#[derive(Clone)]
struct Serving {
    identity: Arc<Identity>,
    acceptor: tokio_rustls::TlsAcceptor,
    router: axum::Router,
    limits: ConnectionLimits,
}

/// Keeps a tunnel to each relay behind the relay's name until `stop`: the addresses are looked up
/// again every minute, a tunnel started for a new one and ended for one that went.
async fn keep_tunnels(plan: RelayRoutePlan, serving: Serving, tunnels: Arc<Tunnels>, mut stop: watch::Receiver<bool>) {
    let mut running: std::collections::HashMap<SocketAddr, JoinHandle<()>> = Default::default();
    let mut tick = tokio::time::interval(CHECK_INTERVAL);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = status::stopping(&mut stop) => break,
        }
        let addresses = match relay_addresses(&plan).await {
            Ok(addresses) => addresses,
            Err(problem) => {
                // The tunnels up keep going; with none, the problem is the route's.
                if running.is_empty() {
                    tunnels.summary.send_replace(Tunnel::Down(problem));
                }
                continue;
            }
        };
        running.retain(|relay, task| {
            let keep = addresses.contains(relay);
            if !keep {
                tracing::info!("the relay route's relay at {relay} is no longer named: its tunnel is closed");
                task.abort();
                tunnels.set(*relay, None);
            }
            keep
        });
        for relay in addresses {
            if running.contains_key(&relay) {
                continue;
            }
            let Ok(target) = target(&plan, relay) else { continue };
            tunnels.set(relay, Some(Tunnel::Dialling));
            let task = tokio::spawn(keep_tunnel(target, serving.clone(), tunnels.clone(), stop.clone()));
            running.insert(relay, task);
        }
    }
    for (_, task) in running {
        let _ = task.await;
    }
}

/// Keeps the tunnel to one relay up until `stop`, handing each stream to the route's TLS.
async fn keep_tunnel(target: RelayTarget, serving: Serving, tunnels: Arc<Tunnels>, mut stop: watch::Receiver<bool>) {
    let Serving {
        identity,
        acceptor,
        router,
        limits,
    } = serving;
    let at = target.address.unwrap_or(SocketAddr::from(([0, 0, 0, 0], 0)));
    let state = |tunnel: Tunnel| tunnels.set(at, Some(tunnel));
    let relay = format!("{}:{} at {at}", target.host, target.port);
    let limiter = ConnectionLimiter::public();
    let mut failures: u32 = 0;
    loop {
        let opened = tokio::select! {
            opened = tunnel::open(&target, &identity, None) => opened,
            () = status::stopping(&mut stop) => return,
        };
        let wait = match opened {
            Ok(upgraded) => {
                failures = 0;
                state(Tunnel::Connected);
                tracing::info!("the relay route is connected to {relay}");
                let (acceptor, router, limiter) = (acceptor.clone(), router.clone(), limiter.clone());
                let accept = move |stream, peer: std::net::SocketAddr| {
                    let Ok(admission) = limiter.admit(peer.ip()) else {
                        tracing::debug!(%peer, "refused a relayed connection over the connection limits");
                        return;
                    };
                    let (acceptor, router) = (acceptor.clone(), router.clone());
                    tokio::spawn(async move {
                        let _admission = admission;
                        serve_tls(stream, peer, &acceptor, router, limits, None).await;
                    });
                };
                tokio::select! {
                    _ = tunnel::serve(upgraded, accept) => {}
                    () = status::stopping(&mut stop) => return,
                }
                tracing::info!("the relay route lost its tunnel to {relay}; dialling again");
                state(Tunnel::Down(format!(
                    "the tunnel to {}:{} closed",
                    target.host, target.port
                )));
                Duration::from_secs(1)
            }
            Err(error) => {
                failures = failures.saturating_add(1);
                let wait = dial_wait(&error, failures);
                tracing::warn!(
                    "the relay route could not connect: {error} (next try in {} s)",
                    wait.as_secs()
                );
                state(Tunnel::Down(error.to_string()));
                wait
            }
        };
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = status::stopping(&mut stop) => return,
        }
    }
}

/// How long to wait after the `failures`-th failed dial in a row.
fn dial_wait(error: &TunnelError, failures: u32) -> Duration {
    if error.is_refusal() {
        return REFUSED_WAIT;
    }
    let doublings = failures.saturating_sub(1).min(6);
    (Duration::from_secs(1) * (1 << doublings)).min(MAX_DIAL_WAIT)
}

struct RelayRoute {
    state: AppState,
    plan: RelayRoutePlan,
    /// The certificate, its account and its renewal.
    keeper: Keeper,
    recorder: status::Recorder,
}

impl RelayRoute {
    async fn run(mut self, mut tunnel: watch::Receiver<Tunnel>, mut stop: watch::Receiver<bool>) {
        let mut rechecks = self.state.routes.rechecks();
        let mut tick = tokio::time::interval(CHECK_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let current = tunnel.borrow_and_update().clone();
            tokio::select! {
                _ = self.check(&current) => {}
                () = status::stopping(&mut stop) => break,
            }
            tokio::select! {
                _ = tick.tick() => {}
                _ = rechecks.changed() => {}
                _ = tunnel.changed() => {}
                () = status::stopping(&mut stop) => break,
            }
        }
        self.state.routes.set_relay(None);
        if let Err(error) = status::record_stopped(&self.state.journal.db, RELAY, unix_now()).await {
            tracing::warn!(%error, "could not record that the relay route stopped");
        }
    }

    async fn check(&mut self, tunnel: &Tunnel) {
        let now = unix_now();
        let problem = match tunnel {
            // Not serving yet, and nothing wrong yet either.
            Tunnel::Dialling => None,
            Tunnel::Down(problem) => Some(problem.clone()),
            // The CA reaches the journal through a tunnel: only then can it validate an order.
            Tunnel::Connected => self.keeper.renew_if_due(now).await.err(),
            Tunnel::Partly(problem) => Some(match self.keeper.renew_if_due(now).await {
                Ok(()) => problem.clone(),
                Err(renewal) => format!("{renewal}; {problem}"),
            }),
        };
        let serving = tunnel.serving() && self.keeper.has_certificate();
        self.state.routes.set_relay(Some(DomainView {
            mcp_url: route(&self.plan).mcp_url(),
            serving,
            problem: problem.clone(),
        }));
        let certificate = self.keeper.certificate().filter(|_| serving);
        let serving = certificate.as_ref().map(|certificate| (&[][..], certificate));
        self.recorder
            .record(&self.state.journal.db, serving, problem, now)
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tunnels_to_several_relays_sum_up_to_one_state() {
        let (a, b): (SocketAddr, SocketAddr) = ("192.0.2.1:443".parse().unwrap(), "192.0.2.2:443".parse().unwrap());
        let of = |states: &[(SocketAddr, Tunnel)]| summary(&states.iter().cloned().collect());
        assert_eq!(of(&[]), Tunnel::Dialling);
        assert_eq!(of(&[(a, Tunnel::Dialling), (b, Tunnel::Dialling)]), Tunnel::Dialling);
        assert_eq!(of(&[(a, Tunnel::Connected), (b, Tunnel::Dialling)]), Tunnel::Connected);
        assert_eq!(of(&[(a, Tunnel::Connected), (b, Tunnel::Connected)]), Tunnel::Connected);
        assert_eq!(
            of(&[(a, Tunnel::Connected), (b, Tunnel::Down("refused".into()))]),
            Tunnel::Partly("1 of 2 relays connected; refused (192.0.2.2:443)".into())
        );
        assert_eq!(
            of(&[(a, Tunnel::Down("refused".into())), (b, Tunnel::Dialling)]),
            Tunnel::Down("refused (192.0.2.1:443)".into())
        );
        assert!(Tunnel::Partly(String::new()).serving() && !Tunnel::Down(String::new()).serving());
    }

    #[test]
    fn dialling_backs_off_to_a_minute_and_waits_longer_after_a_refusal() {
        let down = TunnelError::Timeout("relay.test:443".into());
        let waits: Vec<u64> = (1..=9).map(|n| dial_wait(&down, n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        let refused = TunnelError::Refused {
            status: hyper::StatusCode::FORBIDDEN,
            message: "enrolled with another key".into(),
        };
        assert_eq!(dial_wait(&refused, 1), REFUSED_WAIT);
        let unavailable = TunnelError::Refused {
            status: hyper::StatusCode::SERVICE_UNAVAILABLE,
            message: "full".into(),
        };
        assert_eq!(
            dial_wait(&unavailable, 1).as_secs(),
            1,
            "a full relay is tried again soon"
        );
    }
}
