//! A route's ACME certificate, kept: the one stored (installed at start), a new one ordered when
//! there is none or fewer than 30 days remain, retried with backoff after a failure (1 minute,
//! doubling, at most 6 hours) while the current one keeps serving. The own-domain route and the relay
//! route each hold one; what differs between them (DNS and CAA checks, a tunnel) stays with them.

use std::path::PathBuf;
use std::sync::Arc;

use super::acme::{self, AcmeAccount, AcmeHttp};
use super::certificate::{self, Stored};
use crate::routes::status::Certificate;
use crate::tls::serving::CertSlot;

/// The first retry after a failed order, doubled after each further failure up to `MAX_BACKOFF`.
const FIRST_BACKOFF: i64 = 60;
const MAX_BACKOFF: i64 = 6 * 3600;

/// Where a route's certificates come from.
#[derive(Debug, Clone)]
pub struct AcmeSettings {
    pub directory: String,
    pub email: Option<String>,
    pub acme_root: Option<PathBuf>,
    pub caa_identity: Option<String>,
}

/// One route's certificate and the account that orders it.
pub struct Keeper {
    /// The route's name, which names its file (`<route>.pem`) and its log lines.
    route: &'static str,
    hostname: String,
    root: PathBuf,
    settings: AcmeSettings,
    /// Where the certificate is served from (and TLS-ALPN-01 challenges answered).
    pub slot: Arc<CertSlot>,
    cert: Option<Stored>,
    /// Loaded when first needed (loading asks the CA).
    account: Option<AcmeAccount>,
    /// No order before this time (unix seconds), after failures.
    retry_at: i64,
    failures: u32,
}

impl Keeper {
    /// The route's stored certificate for `hostname`, installed, if there is a usable one.
    pub fn new(route: &'static str, hostname: &str, root: PathBuf, settings: AcmeSettings) -> Keeper {
        let slot = Arc::new(CertSlot::default());
        let mut cert = certificate::load(&root, route, hostname);
        if let Some(stored) = &cert
            && let Err(error) = slot.install_pem(&stored.chain_pem, &stored.key_pem)
        {
            tracing::warn!(%error, "the stored certificate of the {route} route cannot be served");
            cert = None;
        }
        Keeper {
            route,
            hostname: hostname.to_string(),
            root,
            settings,
            slot,
            cert,
            account: None,
            retry_at: 0,
            failures: 0,
        }
    }

    /// Whether there is a certificate to serve.
    pub fn has_certificate(&self) -> bool {
        self.cert.is_some()
    }

    /// The certificate as the owner sees it.
    pub fn certificate(&self) -> Option<Certificate> {
        self.cert.as_ref().map(|cert| Certificate {
            issuer: cert.issuer.clone(),
            not_after: cert.not_after,
            fingerprint: cert.fingerprint.clone(),
        })
    }

    /// The ACME account: the stored one, else a new one.
    pub async fn account(&mut self) -> Result<&AcmeAccount, String> {
        if self.account.is_none() {
            let http = AcmeHttp::new(self.settings.acme_root.as_deref()).map_err(|e| e.to_string())?;
            let account = acme::account(
                &self.root,
                &self.settings.directory,
                self.settings.email.as_deref(),
                self.settings.caa_identity.as_deref(),
                http,
            )
            .await
            .map_err(|e| format!("the ACME account at {} is not usable: {e}", self.settings.directory))?;
            self.account = Some(account);
        }
        Ok(self.account.as_ref().expect("set just above"))
    }

    /// Orders a certificate when there is none or fewer than 30 days remain, unless backing off.
    pub async fn renew_if_due(&mut self, now: i64) -> Result<(), String> {
        let due = self.cert.as_ref().is_none_or(|cert| cert.needs_renewal(now));
        if !due || now < self.retry_at {
            return Ok(());
        }
        match self.order().await {
            Ok(stored) => {
                self.failures = 0;
                self.retry_at = 0;
                tracing::info!(
                    not_after = stored.not_after,
                    "the {} route has a new certificate from {}",
                    self.route,
                    stored.issuer
                );
                self.cert = Some(stored);
                Ok(())
            }
            Err(problem) => {
                self.failures += 1;
                let wait = backoff(self.failures);
                self.retry_at = now + wait;
                Err(format!(
                    "{problem} (tried {} times; next in {} minutes)",
                    self.failures,
                    wait / 60
                ))
            }
        }
    }

    async fn order(&mut self) -> Result<Stored, String> {
        let (hostname, slot, route) = (self.hostname.clone(), self.slot.clone(), self.route);
        let account = self.account().await?;
        let issued = acme::order(&account.account, &hostname, &slot)
            .await
            .map_err(|e| format!("the CA did not issue a certificate for {hostname}: {e}"))?;
        let stored = Stored::from_pem(issued.chain_pem, issued.key_pem, &hostname)
            .map_err(|e| format!("the CA's certificate for {hostname} is not usable: {e}"))?;
        slot.install_pem(&stored.chain_pem, &stored.key_pem)
            .map_err(|e| format!("the CA's certificate for {hostname} is not usable: {e}"))?;
        let (root, keep) = (self.root.clone(), stored.clone());
        let saved = tokio::task::spawn_blocking(move || certificate::save(&root, route, &keep)).await;
        if let Ok(Err(error)) = saved {
            // It serves from memory; the next start orders again.
            tracing::warn!(%error, "could not keep the {route} route's certificate on disk");
        }
        Ok(stored)
    }
}

/// Seconds to wait after the `failures`-th failed order in a row.
fn backoff(failures: u32) -> i64 {
    let doublings = failures.saturating_sub(1).min(20);
    (FIRST_BACKOFF << doublings).min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_six_hours() {
        assert_eq!(backoff(1), 60);
        assert_eq!(backoff(2), 120);
        assert_eq!(backoff(3), 240);
        assert_eq!(backoff(9), 60 << 8);
        assert_eq!(backoff(10), 6 * 3600);
        assert_eq!(backoff(u32::MAX), 6 * 3600);
    }
}
