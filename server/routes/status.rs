//! What the routes beyond loopback are doing, in two places: `Board`, in memory, for the owner app
//! of the running server (where the LAN route serves, its CA to download), and the `route_status`
//! table, for `journal route list` in another process (serving or not, addresses, certificate, last
//! error). The server writes both as a route starts, changes address, renews or fails.

use std::net::SocketAddr;
use std::sync::RwLock;

use crate::db::Pool;

/// A route's certificate as the owner sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Certificate {
    pub issuer: String,
    /// Unix seconds.
    pub not_after: i64,
    /// SHA-256, colon-separated hex.
    pub fingerprint: String,
}

/// One route's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteStatus {
    pub route: String,
    pub serving: bool,
    pub addresses: Vec<String>,
    pub certificate: Option<Certificate>,
    /// The last error and when it happened; kept after the route recovers.
    pub error: Option<(String, i64)>,
    pub updated_at: i64,
}

/// Records that a route serves at these addresses with this certificate.
pub async fn record_serving(
    pool: &Pool,
    route: &str,
    addresses: &[SocketAddr],
    certificate: Option<&Certificate>,
    now: i64,
) -> Result<(), sqlx::Error> {
    let addresses: Vec<String> = addresses.iter().map(ToString::to_string).collect();
    sqlx::query(
        "INSERT INTO route_status (route, serving, addresses, cert_issuer, cert_not_after, cert_fingerprint, updated_at)
         VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (route) DO UPDATE SET serving = 1, addresses = ?2, cert_issuer = ?3, cert_not_after = ?4,
             cert_fingerprint = ?5, updated_at = ?6",
    )
    .bind(route)
    .bind(addresses.join(" "))
    .bind(certificate.map(|c| &c.issuer))
    .bind(certificate.map(|c| c.not_after))
    .bind(certificate.map(|c| &c.fingerprint))
    .bind(now)
    .execute(pool)
    .await?;
    Ok(())
}

/// Records what went wrong. `serving` says whether the route still serves (on its other addresses,
/// or with its old certificate) or has stopped.
pub async fn record_error(pool: &Pool, route: &str, error: &str, serving: bool, now: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO route_status (route, serving, addresses, error, error_at, updated_at) VALUES (?1, ?2, '', ?3, ?4, ?4)
         ON CONFLICT (route) DO UPDATE SET serving = ?2, addresses = CASE WHEN ?2 THEN addresses ELSE '' END,
             error = ?3, error_at = ?4, updated_at = ?4",
    )
    .bind(route)
    .bind(serving)
    .bind(error)
    .bind(now)
    .execute(pool)
    .await?;
    Ok(())
}

/// Records that the server stopped serving the route (it was shut down).
pub async fn record_stopped(pool: &Pool, route: &str, now: i64) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE route_status SET serving = 0, addresses = '', updated_at = ? WHERE route = ?")
        .bind(now)
        .bind(route)
        .execute(pool)
        .await?;
    Ok(())
}

/// A route's record as its watcher keeps it after every check: the row written the same way for
/// every route, and a problem logged once when it appears and once when it goes, not at every check.
#[derive(Debug)]
pub struct Recorder {
    route: &'static str,
    last_problem: Option<String>,
}

impl Recorder {
    pub fn new(route: &'static str) -> Recorder {
        Recorder {
            route,
            last_problem: None,
        }
    }

    /// `serving`: where and with which certificate the route serves now, if it does.
    pub async fn record(
        &mut self,
        pool: &Pool,
        serving: Option<(&[SocketAddr], &Certificate)>,
        problem: Option<String>,
        now: i64,
    ) {
        let route = self.route;
        if problem != self.last_problem {
            match &problem {
                Some(problem) => tracing::warn!("{route} route: {problem}"),
                None => tracing::info!("the {route} route's earlier problem is gone"),
            }
        }
        let mut recorded = Ok(());
        if let Some((addresses, certificate)) = serving {
            recorded = record_serving(pool, route, addresses, Some(certificate), now).await;
        }
        if let Some(problem) = &problem {
            recorded = recorded.and(record_error(pool, route, problem, serving.is_some(), now).await);
        } else if serving.is_none() {
            recorded = recorded.and(record_stopped(pool, route, now).await);
        }
        if let Err(error) = recorded {
            tracing::warn!(%error, "could not record the {route} route's state");
        }
        self.last_problem = problem;
    }
}

/// A route's row, if a server ever wrote one.
pub async fn read(pool: &Pool, route: &str) -> Result<Option<RouteStatus>, sqlx::Error> {
    type Row = (
        String,
        bool,
        String,
        Option<String>,
        Option<i64>,
        Option<String>,
        Option<String>,
        Option<i64>,
        i64,
    );
    let row: Option<Row> = sqlx::query_as(
        "SELECT route, serving, addresses, cert_issuer, cert_not_after, cert_fingerprint, error, error_at, updated_at
         FROM route_status WHERE route = ?",
    )
    .bind(route)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(
        |(route, serving, addresses, issuer, not_after, fingerprint, error, error_at, updated_at)| RouteStatus {
            route,
            serving,
            addresses: addresses.split_whitespace().map(str::to_string).collect(),
            certificate: match (issuer, not_after, fingerprint) {
                (Some(issuer), Some(not_after), Some(fingerprint)) => Some(Certificate {
                    issuer,
                    not_after,
                    fingerprint,
                }),
                _ => None,
            },
            error: error.zip(error_at),
            updated_at,
        },
    ))
}

/// Waits for a route's next turn to check: its interval's tick or a SIGHUP. False when the server
/// is stopping instead.
pub async fn next_turn(
    tick: &mut tokio::time::Interval,
    rechecks: &mut tokio::sync::watch::Receiver<u64>,
    stop: &mut tokio::sync::watch::Receiver<bool>,
) -> bool {
    tokio::select! {
        _ = tick.tick() => true,
        _ = rechecks.changed() => true,
        () = stopping(stop) => false,
    }
}

/// Resolves when the server stops (for a `select!` against work that must give way to it).
pub async fn stopping(stop: &mut tokio::sync::watch::Receiver<bool>) {
    // The guard `wait_for` answers must not be held across other awaits: it is dropped here.
    let _ = stop.wait_for(|s| *s).await;
}

/// The LAN route as the running server's owner app shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LanView {
    /// Where it serves now (empty while no private address is up).
    pub addresses: Vec<SocketAddr>,
    /// The CA certificate, in PEM, for the owner to download and install.
    pub ca_pem: String,
    pub ca_fingerprint: String,
}

/// The own-domain route (or the relay route) as the running server's owner app shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainView {
    pub mcp_url: String,
    /// Whether it serves now (its checks pass and it has a certificate).
    pub serving: bool,
    /// What keeps it from serving, or went wrong last.
    pub problem: Option<String>,
}

/// The routes of this server beyond loopback, for its owner app; and a way to ask them to look
/// at their addresses, DNS and certificates now rather than at their next regular check (SIGHUP).
#[derive(Debug)]
pub struct Board {
    lan: RwLock<Option<LanView>>,
    domain: RwLock<Option<DomainView>>,
    /// The proxy route's MCP URL (the tunnel's), when this server serves it.
    proxy: RwLock<Option<String>>,
    /// The relay route, when it is on: connected and certified, or why not.
    relay: RwLock<Option<DomainView>>,
    /// Counts requests to check now; a watch, so a request made while a route is busy checking
    /// is seen when it is done (a `Notify` would drop it).
    recheck: tokio::sync::watch::Sender<u64>,
}

impl Default for Board {
    fn default() -> Board {
        Board {
            lan: RwLock::default(),
            domain: RwLock::default(),
            proxy: RwLock::default(),
            relay: RwLock::default(),
            recheck: tokio::sync::watch::channel(0).0,
        }
    }
}

impl Board {
    /// Asks every route to check its addresses, DNS and certificate now (SIGHUP).
    pub fn recheck_now(&self) {
        self.recheck.send_modify(|count| *count = count.wrapping_add(1));
    }

    /// Where a route hears `recheck_now`.
    pub fn rechecks(&self) -> tokio::sync::watch::Receiver<u64> {
        self.recheck.subscribe()
    }

    /// The LAN route, when this server serves it.
    pub fn lan(&self) -> Option<LanView> {
        self.lan.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    pub fn set_lan(&self, view: Option<LanView>) {
        *self.lan.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = view;
    }

    /// The own-domain route, when this server serves it.
    pub fn domain(&self) -> Option<DomainView> {
        self.domain
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    pub fn set_domain(&self, view: Option<DomainView>) {
        *self.domain.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = view;
    }

    /// The proxy route's MCP URL, when this server serves it.
    pub fn proxy(&self) -> Option<String> {
        self.proxy
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    pub fn set_proxy(&self, mcp_url: Option<String>) {
        *self.proxy.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = mcp_url;
    }

    /// The relay route, when this server runs it.
    pub fn relay(&self) -> Option<DomainView> {
        self.relay
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    pub fn set_relay(&self, view: Option<DomainView>) {
        *self.relay.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = view;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_last_error_after_recovery() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("journal.db")).await.unwrap();
        assert_eq!(read(&pool, "lan").await.unwrap(), None);
        record_error(&pool, "lan", "no private address", false, 100)
            .await
            .unwrap();
        let failed = read(&pool, "lan").await.unwrap().unwrap();
        assert!(!failed.serving && failed.addresses.is_empty() && failed.certificate.is_none());
        assert_eq!(failed.error, Some(("no private address".into(), 100)));
        let certificate = Certificate {
            issuer: "journal CA".into(),
            not_after: 9_000,
            fingerprint: "AB:CD".into(),
        };
        let addresses: Vec<SocketAddr> = vec!["10.0.0.2:7660".parse().unwrap(), "[fd00::2]:7660".parse().unwrap()];
        record_serving(&pool, "lan", &addresses, Some(&certificate), 200)
            .await
            .unwrap();
        let serving = read(&pool, "lan").await.unwrap().unwrap();
        assert!(serving.serving);
        assert_eq!(serving.addresses, ["10.0.0.2:7660", "[fd00::2]:7660"]);
        assert_eq!(serving.certificate, Some(certificate));
        assert_eq!(
            serving.error,
            Some(("no private address".into(), 100)),
            "the last error stays"
        );
        record_error(&pool, "lan", "could not renew", true, 300).await.unwrap();
        let still = read(&pool, "lan").await.unwrap().unwrap();
        assert!(
            still.serving && still.addresses.len() == 2,
            "a route that still serves keeps its addresses"
        );
        record_stopped(&pool, "lan", 400).await.unwrap();
        let stopped = read(&pool, "lan").await.unwrap().unwrap();
        assert!(!stopped.serving && stopped.addresses.is_empty() && stopped.updated_at == 400);
    }
}
