//! Serving the own-domain route: at start and every 60 seconds (or at once on SIGHUP) the route
//! checks that its hostname resolves (A/AAAA, not an alias) and that the relevant CAA set allows
//! only this journal's ACME account and TLS-ALPN-01 at the CA; then it listens, and orders a
//! certificate when it has none or fewer than 30 days remain. The new certificate goes into the
//! listener's slot, so open connections keep going and new handshakes get it.
//!
//! When the DNS answers say the hostname or its CAA set drifted, the route stops serving (its
//! listener closes) until they are right again; a DNS server that does not answer is not drift, and
//! the route serves on. A failed order is retried with backoff (1 minute, doubling, at most 6 hours)
//! while the current certificate, if any, keeps serving (`keeper`). Every outcome is recorded for
//! `journal route list` and the owner app.

use std::path::PathBuf;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::acme::{self, AcmeHttp};
use super::caa::{self, Wanted};
use super::dns::{DnsError, Resolver};
use super::keeper::Keeper;
use crate::app::AppState;
use crate::clock::unix_now;
use crate::config::DomainPlan;
use crate::context::{DOMAIN, Route};
use crate::lan::limits::ConnectionLimiter;
use crate::listener::{ConnectionLimits, Gate, accept_loop};
use crate::routes;
use crate::routes::status::{self, DomainView};
use crate::tls::serving::acme_server_config;

/// How often the route checks DNS, CAA and its certificate.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(60);
/// The validation method the route answers, as CAA records name it.
pub const METHOD: &str = "tls-alpn-01";

/// Why the route could not start at all.
#[derive(Debug, thiserror::Error)]
pub enum DomainError {
    #[error("{0}")]
    Setup(String),
}

/// Starts the route: checks and serves what it can now, then keeps checking until `stop`.
pub async fn start(
    state: AppState,
    plan: DomainPlan,
    limits: ConnectionLimits,
    stop: watch::Receiver<bool>,
) -> Result<JoinHandle<()>, DomainError> {
    // Checked now for a clear error at start; the system's is read again at every check, since a
    // laptop's DNS server changes with its network.
    if plan.resolver.is_none() {
        Resolver::system().map_err(DomainError::Setup)?;
    }
    // The extra root is read now: a wrong path is a setting to fix, not something to retry.
    AcmeHttp::new(plan.acme_root.as_deref()).map_err(|e| DomainError::Setup(e.to_string()))?;
    let root = state.journal.root().to_path_buf();
    let keeper = Keeper::new(DOMAIN, &plan.hostname, root.clone(), plan.acme());
    let acceptor = tokio_rustls::TlsAcceptor::from(
        acme_server_config(keeper.slot.clone()).map_err(|e| DomainError::Setup(e.to_string()))?,
    );
    let route = DomainRoute {
        root,
        state,
        plan,
        limits,
        keeper,
        gate: Gate::Tls {
            acceptor,
            limiter: ConnectionLimiter::public(),
            private_peers_only: false,
        },
        identity: None,
        listener: None,
        recorder: status::Recorder::new(DOMAIN),
    };
    // The first check (which may order a certificate, for a minute or two) runs in the route's
    // own task: the server is up and answers signals meanwhile.
    Ok(tokio::spawn(route.run(stop)))
}

struct Listener {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

struct DomainRoute {
    state: AppState,
    plan: DomainPlan,
    root: PathBuf,
    limits: ConnectionLimits,
    /// The certificate, its account and its renewal.
    keeper: Keeper,
    gate: Gate,
    /// The account's URL and the CA's CAA identity, once known.
    identity: Option<(String, String)>,
    listener: Option<Listener>,
    recorder: status::Recorder,
}

/// What a check found wrong.
#[derive(Debug, PartialEq, Eq)]
pub enum Finding {
    /// The hostname or its CAA set is not as the route needs: stop serving.
    Drift(String),
    /// Something that may pass by itself (a DNS server that did not answer, a CA that failed):
    /// serve on with what the route has.
    Trouble(String),
}

impl DomainRoute {
    async fn run(mut self, mut stop: watch::Receiver<bool>) {
        let mut rechecks = self.state.routes.rechecks();
        let mut tick = tokio::time::interval(CHECK_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The first tick is at once: the first check runs as the route starts.
        while status::next_turn(&mut tick, &mut rechecks, &mut stop).await {
            // A check in progress (an order waiting on the CA) must not hold up shutdown.
            tokio::select! {
                _ = self.check() => {}
                () = status::stopping(&mut stop) => break,
            }
        }
        self.close().await;
        self.state.routes.set_domain(None);
        if let Err(error) = status::record_stopped(&self.state.journal.db, DOMAIN, unix_now()).await {
            tracing::warn!(%error, "could not record that the domain route stopped");
        }
    }

    /// One check: DNS and CAA, the listener, the certificate; then the outcome is published.
    async fn check(&mut self) {
        let now = unix_now();
        let finding = match self.dns_and_caa().await {
            Err(Finding::Drift(problem)) => {
                self.close().await;
                Some(Finding::Drift(problem))
            }
            other => {
                let trouble = other.err();
                match self.open().await {
                    Err(problem) => Some(Finding::Trouble(problem)),
                    Ok(()) => match self.keeper.renew_if_due(now).await {
                        Err(problem) => Some(Finding::Trouble(problem)),
                        Ok(()) => trouble,
                    },
                }
            }
        };
        let problem = finding.map(|finding| match finding {
            Finding::Drift(problem) | Finding::Trouble(problem) => problem,
        });
        self.publish(problem, now).await;
    }

    /// The hostname must resolve, not be an alias, and its CAA set must allow only this account.
    async fn dns_and_caa(&mut self) -> Result<(), Finding> {
        let resolver = match self.plan.resolver {
            Some(server) => Resolver { server },
            None => Resolver::system().map_err(Finding::Trouble)?,
        };
        let (url, identity) = self.identity().await.map_err(Finding::Trouble)?;
        check_names(&resolver, &self.plan.hostname, &url, &identity).await
    }

    /// The account's URL and the CA's CAA identity: from the stored account (no network), or by
    /// loading or making it.
    async fn identity(&mut self) -> Result<(String, String), String> {
        // The account of a directory never changes while the server runs: read once.
        if let Some(identity) = &self.identity {
            return Ok(identity.clone());
        }
        let (root, directory) = (self.root.clone(), self.plan.directory.clone());
        let stored = match tokio::task::spawn_blocking(move || acme::stored(&root, &directory)).await {
            Ok(Ok(stored)) => stored,
            Ok(Err(error)) => return Err(error.to_string()),
            Err(error) => return Err(format!("reading the ACME account stopped: {error}")),
        };
        let identity = match stored {
            Some((url, identity)) => (url, self.plan.caa_identity.clone().unwrap_or(identity)),
            None => {
                let account = self.keeper.account().await?;
                (account.url.clone(), account.caa_identity.clone())
            }
        };
        self.identity = Some(identity.clone());
        Ok(identity)
    }

    /// Listens, if not already.
    async fn open(&mut self) -> Result<(), String> {
        if self.listener.is_some() {
            return Ok(());
        }
        let listen = self.plan.listen;
        let listener = TcpListener::bind(listen)
            .await
            .map_err(|e| format!("could not listen on {listen}: {e}"))?;
        let (stop, signal) = watch::channel(false);
        let router = routes::domain::router(self.state.clone(), self.route());
        let task = tokio::spawn(accept_loop(listener, router, self.limits, signal, self.gate.clone()));
        tracing::info!("the domain route listens on {listen} for {}", self.route().mcp_url());
        self.listener = Some(Listener { stop, task });
        Ok(())
    }

    /// Stops listening; requests in flight finish (up to the drain limit).
    async fn close(&mut self) {
        if let Some(listener) = self.listener.take() {
            let _ = listener.stop.send(true);
            let _ = listener.task.await;
            tracing::info!("the domain route stopped serving");
        }
    }

    fn route(&self) -> Route {
        Route::domain(&self.plan.hostname, self.plan.public_port, self.plan.listen)
    }

    /// Tells the owner app and `journal route list` what the route does and what went wrong.
    async fn publish(&mut self, problem: Option<String>, now: i64) {
        let serving = self.listener.is_some() && self.keeper.has_certificate();
        self.state.routes.set_domain(Some(DomainView {
            mcp_url: self.route().mcp_url(),
            serving,
            problem: problem.clone(),
        }));
        let certificate = self.keeper.certificate().filter(|_| serving);
        let listen = [self.plan.listen];
        let serving = certificate.as_ref().map(|certificate| (listen.as_slice(), certificate));
        self.recorder
            .record(&self.state.journal.db, serving, problem, now)
            .await;
    }
}

/// The route's DNS rule: `hostname` resolves (A or AAAA), is not an alias, and its relevant CAA
/// set allows only `caa_identity`, for the account at `account_url`, by TLS-ALPN-01.
pub async fn check_names(
    resolver: &Resolver,
    hostname: &str,
    account_url: &str,
    caa_identity: &str,
) -> Result<(), Finding> {
    let dns_trouble = |error: DnsError| Finding::Trouble(format!("could not check {hostname}: {error}"));
    let addresses = resolver.addresses(hostname).await.map_err(dns_trouble)?;
    if let Some(target) = addresses.alias_of {
        return Err(Finding::Drift(format!(
            "{hostname} is an alias (CNAME) of {target}: give it its own A or AAAA record pointing at this computer"
        )));
    }
    if addresses.ips.is_empty() {
        return Err(Finding::Drift(format!(
            "{hostname} does not resolve: give it an A or AAAA record pointing at this computer"
        )));
    }
    let (_, records) = resolver.caa_set(hostname).await.map_err(dns_trouble)?;
    let wanted = Wanted {
        issuer: caa_identity,
        account: account_url,
        method: METHOD,
    };
    match caa::problem(&records, &wanted) {
        None => Ok(()),
        Some(problem) => Err(Finding::Drift(format!(
            "{hostname}: {problem}; set the record {}",
            wanted.record(hostname)
        ))),
    }
}

impl Finding {
    pub fn text(&self) -> &str {
        match self {
            Finding::Drift(text) | Finding::Trouble(text) => text,
        }
    }
}
