//! The journal's private certificate authority, for the LAN route: made with rcgen on first use
//! (ECDSA P-256, 10 years), name-constrained to the private address ranges the route serves and
//! excluding every DNS name and email address, so that a client refuses anything a stolen CA key
//! signs for a public address or any host name. It issues the route's leaf certificates (IP
//! addresses only, 825 days).
//!
//! The CA lives in `<journal>/.tls/`: `ca.pem` (the certificate the owner installs on other
//! devices) and `ca-key.pem` (0600, in a 0700 folder; never served, never logged). This module
//! makes and loads them and issues leaves; it does not listen or serve.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use base64::Engine;
use rcgen::{
    BasicConstraints, CertificateParams, CidrSubnet, DistinguishedName, DnType, ExtendedKeyUsagePurpose,
    GeneralSubtree, IsCa, Issuer, KeyPair, KeyUsagePurpose, NameConstraints, SerialNumber,
};
use sha2::{Digest, Sha256};

use super::private_range::{self, V4_RANGES, V6_RANGE};
use crate::fsio;

/// How long the CA is valid.
pub const CA_DAYS: i64 = 3650;
/// How long a leaf is valid (the longest that Apple's platforms accept for a TLS server).
pub const LEAF_DAYS: i64 = 825;
/// A leaf is issued again when fewer days than this remain.
pub const RENEW_DAYS: i64 = 7;
/// Certificates start an hour early, so a device whose clock runs a little behind accepts them.
const CLOCK_SKEW_SECONDS: i64 = 3600;
const DAY: i64 = 86_400;

/// The folder of the journal's TLS state.
pub fn folder(journal_root: &Path) -> PathBuf {
    journal_root.join(".tls")
}

/// Why the CA could not be made, read or used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("the certificate could not be made: {0}")]
    Certificate(#[from] rcgen::Error),
    #[error("{0}")]
    Refused(String),
}

/// The loaded CA: its certificate and the key that signs leaves.
pub struct PrivateCa {
    cert_pem: String,
    cert_der: Vec<u8>,
    key: KeyPair,
    /// When the CA itself ends (unix seconds): no leaf outlives it.
    not_after: i64,
}

impl std::fmt::Debug for PrivateCa {
    /// Never prints the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrivateCa")
            .field("fingerprint", &self.fingerprint())
            .finish_non_exhaustive()
    }
}

/// A leaf certificate for the LAN route and its key, in PEM.
pub struct Leaf {
    pub cert_pem: String,
    pub cert_der: Vec<u8>,
    pub key_pem: String,
    /// The key as PKCS#8 DER, for rustls.
    pub key_der: Vec<u8>,
    pub ips: Vec<IpAddr>,
    /// Unix seconds.
    pub not_after: i64,
}

impl PrivateCa {
    /// Loads the CA from the journal's `.tls/` folder, making it on first use. A key without its
    /// certificate (a crash between the two writes) gets its certificate made again.
    pub fn load_or_create(journal_root: &Path, now: i64) -> Result<PrivateCa, TlsError> {
        let dir = folder(journal_root);
        let (key_path, cert_path) = (dir.join("ca-key.pem"), dir.join("ca.pem"));
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| TlsError::Io { path, source }
        };
        fsio::create_dir_all_durable(&dir).map_err(io(&dir))?;
        tighten(&dir, 0o700).map_err(io(&dir))?;
        let key = match std::fs::read_to_string(&key_path) {
            Ok(pem) => KeyPair::from_pem(&pem)
                .map_err(|e| TlsError::Refused(format!("{}: not a key this journal made: {e}", key_path.display())))?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
                match fsio::create_new_atomic(&key_path, key.serialize_pem().as_bytes()) {
                    Ok(()) => key,
                    // Another process made it first: use that one.
                    Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                        return PrivateCa::load_or_create(journal_root, now);
                    }
                    Err(error) => return Err(io(&key_path)(error)),
                }
            }
            Err(error) => return Err(io(&key_path)(error)),
        };
        let cert_pem = match std::fs::read_to_string(&cert_path) {
            Ok(pem) => pem,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let pem = ca_params(&key, now)?.self_signed(&key)?.pem();
                match fsio::create_new_atomic(&cert_path, pem.as_bytes()) {
                    Ok(()) => pem,
                    // Another process made it first: every process shows that one.
                    Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                        std::fs::read_to_string(&cert_path).map_err(io(&cert_path))?
                    }
                    Err(error) => return Err(io(&cert_path)(error)),
                }
            }
            Err(error) => return Err(io(&cert_path)(error)),
        };
        tighten(&key_path, 0o600).map_err(io(&key_path))?;
        // The file must be a certificate, and this key's: it is what `journal route ca` prints and
        // what devices install.
        use rcgen::PublicKeyData;
        let spki = key.subject_public_key_info();
        let cert_der = pem_body(&cert_pem)
            .filter(|_| cert_pem.trim_start().starts_with("-----BEGIN CERTIFICATE-----"))
            .filter(|der| der.windows(spki.len()).any(|window| window == spki.as_slice()))
            .ok_or_else(|| {
                TlsError::Refused(format!(
                    "{}: not the certificate of the key beside it; remove it and it is made again from the key",
                    cert_path.display()
                ))
            })?;
        let not_after = certificate_end(&cert_der).ok_or_else(|| {
            TlsError::Refused(format!(
                "{}: its validity cannot be read; remove it and it is made again from the key",
                cert_path.display()
            ))
        })?;
        Ok(PrivateCa {
            cert_pem,
            cert_der,
            key,
            not_after,
        })
    }

    /// The CA certificate in PEM, for the owner to install on other devices.
    pub fn pem(&self) -> &str {
        &self.cert_pem
    }

    pub fn der(&self) -> &[u8] {
        &self.cert_der
    }

    /// The CA's name, as devices list it among their trusted authorities.
    pub fn name(&self) -> String {
        ca_name(&self.key)
    }

    /// The SHA-256 fingerprint of the CA certificate, as devices show it (`AB:CD:...`).
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.cert_der)
    }

    /// Issues a leaf for the LAN route's addresses, which must all be private.
    pub fn issue_leaf(&self, ips: &[IpAddr], now: i64) -> Result<Leaf, TlsError> {
        // An IPv4 address written as IPv6 goes into the certificate as the IPv4 address clients dial.
        let ips: Vec<IpAddr> = ips.iter().map(|ip| private_range::canonical(*ip)).collect();
        let ips = ips.as_slice();
        if ips.is_empty() {
            return Err(TlsError::Refused("a LAN certificate needs at least one address".into()));
        }
        if let Some(reason) = ips.iter().find_map(|ip| private_range::refusal(*ip)) {
            return Err(TlsError::Refused(reason));
        }
        self.sign_leaf(ips, now)
    }

    /// Signs a leaf for any addresses; `issue_leaf` checks them first. (Tests use this to show
    /// that the CA's name constraints refuse a public address even when a leaf names one.)
    fn sign_leaf(&self, ips: &[IpAddr], now: i64) -> Result<Leaf, TlsError> {
        let sans = ips.iter().map(|ip| rcgen::SanType::IpAddress(*ip)).collect();
        self.sign_leaf_for(sans, ips, now)
    }

    fn sign_leaf_for(&self, sans: Vec<rcgen::SanType>, ips: &[IpAddr], now: i64) -> Result<Leaf, TlsError> {
        let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
        let mut params = CertificateParams::default();
        params.serial_number = Some(random_serial()?);
        params.distinguished_name = DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, "journal LAN route");
        params.subject_alt_names = sans;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        // 825 days from the (early) start: the whole validity counts toward Apple's limit.
        let not_before = now - CLOCK_SKEW_SECONDS;
        // Never past the CA's own end: a leaf it can no longer vouch for would fail anyway.
        let not_after = (not_before + LEAF_DAYS * DAY).min(self.not_after);
        params.not_before = datetime(not_before)?;
        params.not_after = datetime(not_after)?;
        let issuer = Issuer::new(ca_params(&self.key, now)?, &self.key);
        let cert = params.signed_by(&key, &issuer)?;
        Ok(Leaf {
            cert_pem: cert.pem(),
            cert_der: cert.der().to_vec(),
            key_pem: key.serialize_pem(),
            key_der: key.serialize_der(),
            ips: ips.to_vec(),
            not_after,
        })
    }
}

/// Takes away what others may do with the CA's folder or key, should a copy or a restore from a
/// backup have widened its mode: the key signs for every device that trusts the CA.
pub(crate) fn tighten(path: &Path, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let current = std::fs::metadata(path)?.permissions().mode() & 0o777;
        if current & !mode != 0 {
            tracing::warn!(path = %path.display(), "others could read a private TLS file; made it private again");
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
        }
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

/// A DER certificate's end, in unix seconds.
fn certificate_end(der: &[u8]) -> Option<i64> {
    use der::Decode;
    let cert = x509_cert::Certificate::from_der(der).ok()?;
    i64::try_from(cert.tbs_certificate().validity().not_after.to_unix_duration().as_secs()).ok()
}

/// Whether the route needs a new leaf: its addresses changed, or fewer than 7 days remain.
pub fn needs_reissue(leaf_ips: &[IpAddr], current_ips: &[IpAddr], not_after: i64, now: i64) -> bool {
    let canonical = |ips: &[IpAddr]| -> Vec<IpAddr> { ips.iter().map(|ip| private_range::canonical(*ip)).collect() };
    let mut had = canonical(leaf_ips);
    let mut has = canonical(current_ips);
    had.sort();
    had.dedup();
    has.sort();
    has.dedup();
    had != has || not_after - now < RENEW_DAYS * DAY
}

/// SHA-256 of a DER certificate as colon-separated upper-case hex.
pub fn fingerprint(der: &[u8]) -> String {
    Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The CA's common name: `journal private CA` and the first bytes of a digest of its public key.
fn ca_name(key: &KeyPair) -> String {
    use rcgen::PublicKeyData;
    let id: String = Sha256::digest(key.subject_public_key_info())
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("journal private CA {id}")
}

/// The CA's parameters. Its name carries a digest of its public key, so two journals' CAs are
/// told apart in a device's list of trusted authorities; everything but the dates is derived from
/// the key, so the same parameters name the issuer of every leaf.
fn ca_params(key: &KeyPair, now: i64) -> Result<CertificateParams, TlsError> {
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params.distinguished_name.push(DnType::OrganizationName, "journal");
    params.distinguished_name.push(DnType::CommonName, ca_name(key));
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let mut permitted: Vec<GeneralSubtree> = V4_RANGES
        .iter()
        .map(|(net, prefix)| GeneralSubtree::IpAddress(CidrSubnet::from_v4_prefix(*net, *prefix)))
        .collect();
    permitted.push(GeneralSubtree::IpAddress(CidrSubnet::from_v6_prefix(
        V6_RANGE.0, V6_RANGE.1,
    )));
    // A name type without a subtree is not constrained at all (RFC 5280): the empty DNS and email
    // constraints match every name of their type, so excluding them leaves the CA IP addresses only.
    params.name_constraints = Some(NameConstraints {
        permitted_subtrees: permitted,
        excluded_subtrees: vec![
            GeneralSubtree::DnsName(String::new()),
            GeneralSubtree::Rfc822Name(String::new()),
        ],
    });
    params.serial_number = Some(random_serial()?);
    params.not_before = datetime(now - CLOCK_SKEW_SECONDS)?;
    params.not_after = datetime(now + CA_DAYS * DAY)?;
    Ok(params)
}

/// A random 16-byte serial number: a CA certificate made again from the kept key must not repeat
/// the issuer and serial of the one it replaces (browsers refuse that).
fn random_serial() -> Result<SerialNumber, TlsError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| TlsError::Refused(format!("no secure random source: {e}")))?;
    // Positive, as DER integers for serials must be.
    bytes[0] &= 0x7f;
    Ok(SerialNumber::from_slice(&bytes))
}

fn datetime(unix: i64) -> Result<time::OffsetDateTime, TlsError> {
    time::OffsetDateTime::from_unix_timestamp(unix)
        .map_err(|e| TlsError::Refused(format!("a certificate date out of range: {e}")))
}

/// The DER inside the first PEM block of `pem`.
fn pem_body(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem
        .lines()
        .skip_while(|line| !line.starts_with("-----BEGIN "))
        .skip(1)
        .take_while(|line| !line.starts_with("-----END "))
        .collect();
    base64::engine::general_purpose::STANDARD.decode(body).ok()
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::sync::Arc;

    use rustls::client::danger::ServerCertVerifier;
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};

    use super::*;

    const NOW: i64 = 1_796_000_000;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    /// Verifies a leaf for `name` (an IP address or a host name) as a client that trusts only this
    /// CA would.
    fn verify(ca: &PrivateCa, leaf: &Leaf, name: &str, at: i64) -> Result<(), rustls::Error> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(CertificateDer::from(ca.der().to_vec())).unwrap();
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()
        .unwrap();
        let server = match name.parse::<IpAddr>() {
            Ok(ip) => ServerName::IpAddress(ip.into()),
            Err(_) => ServerName::try_from(name.to_string()).unwrap(),
        };
        let when = UnixTime::since_unix_epoch(std::time::Duration::from_secs(at as u64));
        verifier
            .verify_server_cert(&CertificateDer::from(leaf.cert_der.clone()), &[], &server, &[], when)
            .map(|_| ())
    }

    #[test]
    fn the_ca_is_made_once_kept_private_and_loaded_again() {
        let dir = tempfile::tempdir().unwrap();
        let ca = PrivateCa::load_or_create(dir.path(), NOW).unwrap();
        assert!(ca.pem().starts_with("-----BEGIN CERTIFICATE-----"));
        assert_eq!(ca.fingerprint().len(), 32 * 3 - 1);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&folder(dir.path()).join("ca-key.pem")), 0o600);
        assert_eq!(mode(&folder(dir.path())), 0o700);
        let again = PrivateCa::load_or_create(dir.path(), NOW + DAY).unwrap();
        assert_eq!(again.fingerprint(), ca.fingerprint(), "the same CA, not a new one");
        assert!(!format!("{again:?}").contains("PRIVATE KEY"));

        // Modes widened by a copy or a restore are narrowed again on load.
        let key_path = folder(dir.path()).join("ca-key.pem");
        std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(folder(dir.path()), std::fs::Permissions::from_mode(0o755)).unwrap();
        PrivateCa::load_or_create(dir.path(), NOW).unwrap();
        assert_eq!(mode(&key_path), 0o600);
        assert_eq!(mode(&folder(dir.path())), 0o700);

        // A lost certificate is made again from the kept key, and still signs verifiable leaves.
        std::fs::remove_file(folder(dir.path()).join("ca.pem")).unwrap();
        let remade = PrivateCa::load_or_create(dir.path(), NOW).unwrap();
        let leaf = ca.issue_leaf(&[ip("192.168.1.5")], NOW).unwrap();
        verify(&remade, &leaf, "192.168.1.5", NOW + 60).unwrap();

        let other = PrivateCa::load_or_create(tempfile::tempdir().unwrap().path(), NOW).unwrap();
        std::fs::write(folder(dir.path()).join("ca.pem"), other.pem()).unwrap();
        let swapped = PrivateCa::load_or_create(dir.path(), NOW).unwrap_err();
        assert!(
            swapped.to_string().contains("not the certificate of the key"),
            "{swapped}"
        );
        let key_pem = std::fs::read_to_string(folder(dir.path()).join("ca-key.pem")).unwrap();
        std::fs::write(folder(dir.path()).join("ca.pem"), &key_pem).unwrap();
        assert!(
            PrivateCa::load_or_create(dir.path(), NOW).is_err(),
            "a key is never taken for the certificate"
        );
        std::fs::write(folder(dir.path()).join("ca.pem"), remade.pem()).unwrap();

        std::fs::write(folder(dir.path()).join("ca-key.pem"), "not a key").unwrap();
        let broken = PrivateCa::load_or_create(dir.path(), NOW).unwrap_err();
        assert!(broken.to_string().contains("not a key this journal made"), "{broken}");
    }

    #[test]
    fn leaves_verify_for_their_addresses_only_and_only_in_time() {
        let dir = tempfile::tempdir().unwrap();
        let ca = PrivateCa::load_or_create(dir.path(), NOW).unwrap();
        let leaf = ca.issue_leaf(&[ip("192.168.1.5"), ip("fd00::5")], NOW).unwrap();
        assert_eq!(leaf.not_after, NOW - CLOCK_SKEW_SECONDS + LEAF_DAYS * DAY);
        // In the CA's last 825 days, a leaf ends with the CA.
        let late = NOW + (CA_DAYS - 100) * DAY;
        let last = ca.issue_leaf(&[ip("192.168.1.5")], late).unwrap();
        assert_eq!(last.not_after, NOW + CA_DAYS * DAY);
        verify(&ca, &last, "192.168.1.5", late + 60).unwrap();
        verify(&ca, &leaf, "192.168.1.5", NOW + 60).unwrap();
        verify(&ca, &leaf, "fd00::5", NOW + 60).unwrap();
        assert!(verify(&ca, &leaf, "192.168.1.6", NOW + 60).is_err(), "not its address");
        assert!(
            verify(&ca, &leaf, "192.168.1.5", leaf.not_after + 60).is_err(),
            "expired"
        );
        let other = PrivateCa::load_or_create(tempfile::tempdir().unwrap().path(), NOW).unwrap();
        assert!(
            verify(&other, &leaf, "192.168.1.5", NOW + 60).is_err(),
            "another journal's CA"
        );
    }

    #[test]
    fn the_name_constraints_refuse_a_public_address_even_in_a_signed_leaf() {
        let dir = tempfile::tempdir().unwrap();
        let ca = PrivateCa::load_or_create(dir.path(), NOW).unwrap();
        let refused = ca.issue_leaf(&[ip("8.8.8.8")], NOW).err().unwrap();
        assert!(refused.to_string().contains("not a private address"), "{refused}");
        assert!(ca.issue_leaf(&[ip("127.0.0.1")], NOW).is_err());
        assert!(ca.issue_leaf(&[], NOW).is_err());
        // Signed anyway (as a thief with the key could): clients still refuse it.
        let forged = ca.sign_leaf(&[ip("8.8.8.8")], NOW).unwrap();
        assert!(verify(&ca, &forged, "8.8.8.8", NOW + 60).is_err());
        let private = ca.sign_leaf(&[ip("10.1.2.3")], NOW).unwrap();
        verify(&ca, &private, "10.1.2.3", NOW + 60).unwrap();
        // Nor can it vouch for a host name, public or not.
        let named = ca
            .sign_leaf_for(
                vec![rcgen::SanType::DnsName("bank.example".try_into().unwrap())],
                &[],
                NOW,
            )
            .unwrap();
        assert!(
            verify(&ca, &named, "bank.example", NOW + 60).is_err(),
            "a DNS name is outside the CA's constraints"
        );
    }

    #[test]
    fn an_ipv4_address_written_as_ipv6_is_certified_as_ipv4() {
        let dir = tempfile::tempdir().unwrap();
        let ca = PrivateCa::load_or_create(dir.path(), NOW).unwrap();
        let leaf = ca.issue_leaf(&[ip("::ffff:192.168.1.5")], NOW).unwrap();
        assert_eq!(leaf.ips, [ip("192.168.1.5")]);
        verify(&ca, &leaf, "192.168.1.5", NOW + 60).unwrap();
        assert!(!needs_reissue(
            &leaf.ips,
            &[ip("::ffff:192.168.1.5")],
            leaf.not_after,
            NOW
        ));
        assert_eq!(
            leaf.not_after - (NOW - CLOCK_SKEW_SECONDS),
            LEAF_DAYS * DAY,
            "825 days in all"
        );
    }

    #[test]
    fn a_leaf_is_reissued_when_its_addresses_change_or_its_days_run_low() {
        let (a, b) = (ip("192.168.1.5"), ip("10.0.0.7"));
        let far = NOW + 100 * DAY;
        assert!(!needs_reissue(&[a, b], &[b, a], far, NOW), "order does not matter");
        assert!(!needs_reissue(&[a], &[a, a], far, NOW), "nor repeats");
        assert!(needs_reissue(&[a], &[a, b], far, NOW), "an address was added");
        assert!(needs_reissue(&[a, b], &[a], far, NOW), "an address went away");
        assert!(!needs_reissue(&[a], &[a], NOW + RENEW_DAYS * DAY, NOW));
        assert!(
            needs_reissue(&[a], &[a], NOW + RENEW_DAYS * DAY - 1, NOW),
            "fewer than 7 days left"
        );
    }
}
