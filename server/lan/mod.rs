//! Serving the LAN route: a TLS listener on each private address of this computer (or the one the
//! owner named), a leaf certificate from the journal's private CA for exactly those addresses, and
//! a watch every 30 seconds (or at once on SIGHUP) that follows the addresses as they come and go (Wi-Fi joined, VPN up)
//! and renews the leaf before it runs out. Listeners of addresses that stay are never touched, so a
//! change elsewhere drops no connection; new handshakes see a new leaf at once (`CertSlot`).
//!
//! Nothing here is fatal after start: a missing address or a port in use is recorded (`route_status`,
//! `journal route list`), logged, and tried again at the next watch, while the local route serves
//! on. Only a CA that cannot be read stops the server from starting.

pub mod addresses;
pub mod limits;

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::app::AppState;
use crate::clock::unix_now;
use crate::config::LanPlan;
use crate::context::LAN;
use crate::listener::{ConnectionLimits, Gate, accept_loop};
use crate::routes::lan;
use crate::routes::status::{self, Certificate, LanView};
use crate::tls::ca::{self, PrivateCa, TlsError};
use crate::tls::serving::{CertSlot, server_config};
use limits::ConnectionLimiter;

/// How often the route looks at this computer's addresses and its leaf's expiry.
pub const WATCH_INTERVAL: Duration = Duration::from_secs(30);

/// Starts the LAN route: loads (or makes) the CA, serves what it can now, and watches until `stop`.
/// The returned task ends once every LAN listener has drained.
pub async fn start(
    state: AppState,
    plan: LanPlan,
    limits: ConnectionLimits,
    stop: watch::Receiver<bool>,
) -> Result<JoinHandle<()>, TlsError> {
    let root = state.journal.root().to_path_buf();
    let ca = tokio::task::spawn_blocking(move || PrivateCa::load_or_create(&root, unix_now()))
        .await
        .map_err(|e| TlsError::Refused(format!("loading the CA stopped: {e}")))??;
    let slot = Arc::new(CertSlot::default());
    let acceptor = tokio_rustls::TlsAcceptor::from(server_config(slot.clone())?);
    let mut route = LanRoute {
        state,
        plan,
        limits,
        ca,
        slot,
        gate: Gate::Tls {
            acceptor,
            limiter: ConnectionLimiter::default(),
            private_peers_only: true,
        },
        leaf: None,
        listeners: BTreeMap::new(),
        recorder: status::Recorder::new(LAN),
    };
    route.reconcile().await;
    Ok(tokio::spawn(route.run(stop)))
}

/// The leaf in use: its addresses and when it runs out.
struct LeafInUse {
    ips: Vec<IpAddr>,
    not_after: i64,
    certificate: Certificate,
}

struct Listener {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

/// Why no address list came out of a watch.
enum Unwanted {
    /// This computer has no private address now.
    NoAddress(String),
    /// Its addresses could not be read.
    Unreadable(String),
}

struct LanRoute {
    state: AppState,
    plan: LanPlan,
    limits: ConnectionLimits,
    ca: PrivateCa,
    slot: Arc<CertSlot>,
    gate: Gate,
    leaf: Option<LeafInUse>,
    listeners: BTreeMap<SocketAddr, Listener>,
    recorder: status::Recorder,
}

impl LanRoute {
    async fn run(mut self, mut stop: watch::Receiver<bool>) {
        let mut rechecks = self.state.routes.rechecks();
        let mut tick = tokio::time::interval(WATCH_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The first pass ran in `start`.
        tick.tick().await;
        while status::next_turn(&mut tick, &mut rechecks, &mut stop).await {
            self.reconcile().await;
        }
        let addresses: Vec<SocketAddr> = self.listeners.keys().copied().collect();
        self.close(&addresses).await;
        self.state.routes.set_lan(None);
        if let Err(error) = status::record_stopped(&self.state.journal.db, LAN, unix_now()).await {
            tracing::warn!(%error, "could not record that the LAN route stopped");
        }
    }

    /// Brings listeners and leaf in line with the addresses wanted now, and records the outcome.
    async fn reconcile(&mut self) {
        let now = unix_now();
        let mut problems: Vec<String> = Vec::new();
        let wanted = match self.wanted() {
            Ok(wanted) => wanted,
            Err(Unwanted::NoAddress(problem)) => {
                problems.push(problem);
                Vec::new()
            }
            // Not knowing the addresses is no reason to stop serving the ones in use.
            Err(Unwanted::Unreadable(problem)) => {
                problems.push(problem);
                self.listeners.keys().copied().collect()
            }
        };
        // Bind what is new before anything else changes: a failure leaves the rest as it was.
        let mut opened = Vec::new();
        for addr in wanted.iter().filter(|addr| !self.listeners.contains_key(addr)) {
            match TcpListener::bind(addr).await {
                Ok(listener) => opened.push((*addr, listener)),
                Err(error) => problems.push(format!("could not listen on {addr}: {error}")),
            }
        }
        let gone: Vec<SocketAddr> = self
            .listeners
            .keys()
            .filter(|addr| !wanted.contains(addr))
            .copied()
            .collect();
        let serving: Vec<SocketAddr> = self
            .listeners
            .keys()
            .filter(|addr| !gone.contains(addr))
            .copied()
            .chain(opened.iter().map(|(addr, _)| *addr))
            .collect();
        if !serving.is_empty()
            && let Err(problem) = self.renew_if_needed(&serving, now)
        {
            problems.push(problem);
        }
        if self.leaf.is_some() {
            for (addr, listener) in opened {
                self.open(addr, listener);
            }
        }
        self.close(&gone).await;
        self.publish(&problems, now).await;
    }

    /// The addresses to serve now.
    fn wanted(&self) -> Result<Vec<SocketAddr>, Unwanted> {
        match self.plan {
            LanPlan::One(addr) => Ok(vec![addr]),
            LanPlan::Every { port } => {
                let found = addresses::current()
                    .map_err(|e| Unwanted::Unreadable(format!("could not read this computer's addresses: {e}")))?;
                let chosen = addresses::choose(&found);
                if chosen.is_empty() {
                    return Err(Unwanted::NoAddress("this computer has no private address (no Wi-Fi, Ethernet or VPN on a private network); the route serves as soon as it has one".into()));
                }
                Ok(chosen.into_iter().map(|ip| SocketAddr::new(ip, port)).collect())
            }
        }
    }

    /// Issues and installs a leaf when the addresses changed or the current one nears its end.
    fn renew_if_needed(&mut self, serving: &[SocketAddr], now: i64) -> Result<(), String> {
        let ips: Vec<IpAddr> = serving.iter().map(SocketAddr::ip).collect();
        if let Some(leaf) = &self.leaf
            && !ca::needs_reissue(&leaf.ips, &ips, leaf.not_after, now)
        {
            return Ok(());
        }
        let issued = self
            .ca
            .issue_leaf(&ips, now)
            .and_then(|leaf| self.slot.install(&leaf, &[]).map(|()| leaf))
            .map_err(|e| format!("could not issue the route's certificate: {e}"))?;
        tracing::info!(addresses = ?issued.ips, "the LAN route has a new certificate");
        self.leaf = Some(LeafInUse {
            certificate: Certificate {
                issuer: self.ca.name(),
                not_after: issued.not_after,
                fingerprint: ca::fingerprint(&issued.cert_der),
            },
            ips: issued.ips,
            not_after: issued.not_after,
        });
        Ok(())
    }

    fn open(&mut self, addr: SocketAddr, listener: TcpListener) {
        let (stop, signal) = watch::channel(false);
        let router = lan::router(self.state.clone(), addr);
        let task = tokio::spawn(accept_loop(listener, router, self.limits, signal, self.gate.clone()));
        tracing::info!("the LAN route serves https://{addr}/mcp");
        self.listeners.insert(addr, Listener { stop, task });
    }

    /// Stops these listeners and waits for their requests in flight (up to the drain limit).
    async fn close(&mut self, addresses: &[SocketAddr]) {
        let mut closing = Vec::new();
        for addr in addresses {
            if let Some(listener) = self.listeners.remove(addr) {
                let _ = listener.stop.send(true);
                closing.push(listener.task);
                tracing::info!("the LAN route no longer serves {addr}");
            }
        }
        for task in closing {
            let _ = task.await;
        }
    }

    /// Tells the owner app and `journal route list` where the route serves and what went wrong.
    async fn publish(&mut self, problems: &[String], now: i64) {
        let addresses: Vec<SocketAddr> = self.listeners.keys().copied().collect();
        self.state.routes.set_lan(Some(LanView {
            addresses: addresses.clone(),
            ca_pem: self.ca.pem().to_string(),
            ca_fingerprint: self.ca.fingerprint(),
        }));
        let serving = self
            .leaf
            .as_ref()
            .filter(|_| !addresses.is_empty())
            .map(|leaf| (addresses.as_slice(), &leaf.certificate));
        let problem = (!problems.is_empty()).then(|| problems.join("; "));
        self.recorder
            .record(&self.state.journal.db, serving, problem, now)
            .await;
    }
}
