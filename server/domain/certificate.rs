//! The own-domain route's certificate on disk, `<journal>/.tls/domain.pem` (0600): the chain the CA
//! issued and its key in one file, replaced atomically, so a crash can never leave a new key beside
//! an old chain. A restart serves the certificate it has instead of asking the CA again (CAs limit
//! how often they issue). Also what the route needs to know of it: whom it was issued to and by,
//! and when it ends. Renewal starts when fewer than 30 days remain.

use std::path::{Path, PathBuf};

use der::Decode;
use x509_cert::Certificate;

use crate::fsio;
use crate::tls::ca::{self, TlsError};
use crate::tls::serving;

/// Renewal starts when fewer days than this remain.
pub const RENEW_DAYS: i64 = 30;
const DAY: i64 = 86_400;

/// A certificate of the route, as read from disk or just issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub chain_pem: String,
    pub key_pem: String,
    pub hostname: String,
    pub issuer: String,
    /// Unix seconds.
    pub not_after: i64,
    /// SHA-256 of the leaf.
    pub fingerprint: String,
}

impl Stored {
    /// Reads a chain and key; the leaf must name `hostname` and the key must be the leaf's.
    pub fn from_pem(chain_pem: String, key_pem: String, hostname: &str) -> Result<Stored, TlsError> {
        let (certs, _key) = serving::parse_pem(&chain_pem, &key_pem)?;
        let leaf = Certificate::from_der(certs[0].as_ref())
            .map_err(|e| TlsError::Refused(format!("the certificate cannot be read: {e}")))?;
        let tbs = leaf.tbs_certificate();
        let not_after = i64::try_from(tbs.validity().not_after.to_unix_duration().as_secs())
            .map_err(|_| TlsError::Refused("the certificate's end is out of range".into()))?;
        let names = subject_dns_names(&leaf);
        if !names.iter().any(|name| name.eq_ignore_ascii_case(hostname)) {
            return Err(TlsError::Refused(format!(
                "the certificate is for {}, not {hostname}",
                names.join(", ")
            )));
        }
        // Proves the key belongs to the leaf (rustls checks the pair).
        serving::CertSlot::default().install_pem(&chain_pem, &key_pem)?;
        Ok(Stored {
            issuer: tbs.issuer().to_string(),
            fingerprint: ca::fingerprint(certs[0].as_ref()),
            chain_pem,
            key_pem,
            hostname: hostname.to_string(),
            not_after,
        })
    }

    /// Whether it is time to renew: fewer than 30 days remain.
    pub fn needs_renewal(&self, now: i64) -> bool {
        self.not_after - now < RENEW_DAYS * DAY
    }
}

/// Where a route keeps its certificate: `domain.pem`, `relay.pem` in the journal's `.tls/`.
fn path(journal_root: &Path, route: &str) -> PathBuf {
    ca::folder(journal_root).join(format!("{route}.pem"))
}

/// The stored certificate for `hostname`; None when there is none, or it is for another hostname
/// (the owner changed it), or it cannot be read (a new one is ordered).
pub fn load(journal_root: &Path, route: &str, hostname: &str) -> Option<Stored> {
    let path = path(journal_root, route);
    let text = std::fs::read_to_string(&path).ok()?;
    if let Err(error) = ca::tighten(&path, 0o600) {
        tracing::warn!(%error, "could not make the {route} route's key private again");
    }
    // The key's block goes last; everything before it is the chain.
    let start = text.find("-----BEGIN PRIVATE KEY-----")?;
    let (chain, key) = text.split_at(start);
    match Stored::from_pem(chain.to_string(), key.to_string(), hostname) {
        Ok(stored) => Some(stored),
        Err(error) => {
            tracing::warn!(%error, "the stored certificate of the {route} route is not used");
            None
        }
    }
}

/// Keeps a certificate: chain and key in one private file, replaced atomically (blocking I/O).
pub fn save(journal_root: &Path, route: &str, stored: &Stored) -> Result<(), TlsError> {
    let path = path(journal_root, route);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| TlsError::Io { path, source }
    };
    fsio::create_dir_all_durable(&ca::folder(journal_root)).map_err(io(&ca::folder(journal_root)))?;
    // rcgen writes PKCS#8 (`BEGIN PRIVATE KEY`), which is what `load` looks for.
    let mut text = stored.chain_pem.trim_end().to_string();
    text.push('\n');
    text.push_str(&stored.key_pem);
    fsio::write_atomic(&path, text.as_bytes()).map_err(io(&path))
}

/// The DNS names of a certificate's subjectAltName extension.
fn subject_dns_names(cert: &Certificate) -> Vec<String> {
    use x509_cert::ext::pkix::SubjectAltName;
    use x509_cert::ext::pkix::name::GeneralName;
    let Ok(Some(san)) = cert.tbs_certificate().get_extension::<SubjectAltName>() else {
        return Vec::new();
    };
    san.1
        .0
        .iter()
        .filter_map(|name| match name {
            GeneralName::DnsName(dns) => Some(dns.to_string()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issued(hostname: &str, days: i64) -> (String, String, i64) {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut params = rcgen::CertificateParams::new(vec![hostname.to_string()]).unwrap();
        let now = crate::clock::unix_now();
        let not_after = now + days * DAY;
        params.not_after = time::OffsetDateTime::from_unix_timestamp(not_after).unwrap();
        let cert = params.self_signed(&key).unwrap();
        (cert.pem(), key.serialize_pem(), not_after)
    }

    #[test]
    fn reads_the_end_and_the_name_and_keeps_it_private() {
        let dir = tempfile::tempdir().unwrap();
        let (chain, key, not_after) = issued("journal.example.org", 90);
        let stored = Stored::from_pem(chain.clone(), key.clone(), "journal.example.org").unwrap();
        assert_eq!(stored.not_after, not_after);
        assert!(stored.issuer.contains("rcgen"), "{}", stored.issuer);
        let now = crate::clock::unix_now();
        assert!(!stored.needs_renewal(now));
        assert!(stored.needs_renewal(not_after - 29 * DAY));
        assert!(!stored.needs_renewal(not_after - 31 * DAY));

        save(dir.path(), "domain", &stored).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(ca::folder(dir.path()).join("domain.pem"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let loaded = load(dir.path(), "domain", "journal.example.org").unwrap();
        assert_eq!(
            (loaded.not_after, &loaded.fingerprint),
            (stored.not_after, &stored.fingerprint)
        );
        assert_eq!(
            load(dir.path(), "domain", "other.example.org"),
            None,
            "another hostname orders anew"
        );
        assert_eq!(
            load(dir.path(), "relay", "journal.example.org"),
            None,
            "each route has its own"
        );
    }

    #[test]
    fn refuses_a_certificate_for_another_name_or_key() {
        let (chain, key, _) = issued("journal.example.org", 90);
        let error = Stored::from_pem(chain.clone(), key, "other.example.org").unwrap_err();
        assert!(error.to_string().contains("not other.example.org"), "{error}");
        let (_, other_key, _) = issued("journal.example.org", 90);
        assert!(Stored::from_pem(chain, other_key, "journal.example.org").is_err());
    }
}
