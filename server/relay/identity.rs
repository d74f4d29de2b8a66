//! Who a journal is to its relay: an Ed25519 key the journal makes once and keeps private, presented
//! as a self-signed client certificate in the TLS handshake of its tunnel (mutual TLS). The handshake's
//! signature proves the journal holds the key; the relay knows the journal by the SHA-256 of its public
//! key (`enrolments`), never by anything the certificate claims. No CA is involved.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use der::{Decode, Encode};
use rcgen::KeyPair;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};
use sha2::{Digest, Sha256};

use crate::fsio;

/// The journal's key and the certificate that presents it.
pub struct Identity {
    pub cert: CertificateDer<'static>,
    pub key: PrivateKeyDer<'static>,
    /// SHA-256 of the public key, as the relay records it.
    pub digest: [u8; 32],
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Identity")
            .field("digest", &self.digest)
            .finish_non_exhaustive()
    }
}

/// Why the identity could not be read or made.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct IdentityError {
    pub path: PathBuf,
    pub message: String,
}

/// The journal's identity in `dir` (`relay-key.pem`, private), made on first use.
pub fn load_or_create(dir: &Path) -> Result<Identity, IdentityError> {
    let path = dir.join("relay-key.pem");
    let error = |message: String| IdentityError {
        path: path.clone(),
        message,
    };
    let key = match std::fs::read_to_string(&path) {
        Ok(pem) => KeyPair::from_pem(&pem).map_err(|e| error(format!("not a key this journal made: {e}")))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = KeyPair::generate_for(&rcgen::PKCS_ED25519).map_err(|e| error(e.to_string()))?;
            fsio::create_dir_all_durable(dir).map_err(|e| error(e.to_string()))?;
            fsio::write_atomic(&path, key.serialize_pem().as_bytes()).map_err(|e| error(e.to_string()))?;
            fsio::make_private(&path).map_err(|e| error(e.to_string()))?;
            key
        }
        Err(e) => return Err(error(e.to_string())),
    };
    identity(&key).map_err(error)
}

fn identity(key: &KeyPair) -> Result<Identity, String> {
    let params = rcgen::CertificateParams::new(vec!["journal".to_string()]).map_err(|e| e.to_string())?;
    let cert = params.self_signed(key).map_err(|e| e.to_string())?;
    let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let cert = cert.der().clone();
    let digest = key_digest(&cert).ok_or("the certificate made for the key does not parse")?;
    Ok(Identity {
        digest,
        cert,
        key: private,
    })
}

/// SHA-256 of the public key a certificate holds (its SubjectPublicKeyInfo, DER), or None for bytes
/// that are not a certificate.
pub fn key_digest(cert: &CertificateDer<'_>) -> Option<[u8; 32]> {
    let parsed = x509_cert::Certificate::from_der(cert.as_ref()).ok()?;
    let spki = parsed.tbs_certificate().subject_public_key_info().to_der().ok()?;
    Some(Sha256::digest(spki).into())
}

/// The relay's check of a journal's client certificate: any certificate, as long as the handshake
/// is signed with its key (Ed25519, TLS 1.3). Which key may connect as which journal is decided
/// after the handshake, from `key_digest` and the enrolments.
#[derive(Debug)]
pub struct AnyKeyItHolds {
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl Default for AnyKeyItHolds {
    fn default() -> AnyKeyItHolds {
        AnyKeyItHolds {
            provider: Arc::new(rustls::crypto::ring::default_provider()),
        }
    }
}

impl ClientCertVerifier for AnyKeyItHolds {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Err(rustls::Error::General("the relay speaks TLS 1.3 only".into()))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        vec![SignatureScheme::ED25519]
    }
}

/// A PEM file of certificates (the relay's chain, or a CA to trust for it).
pub fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, IdentityError> {
    let error = |message: String| IdentityError {
        path: path.to_path_buf(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| error(e.to_string()))?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| error(format!("not PEM certificates: {e}")))?;
    if certs.is_empty() {
        return Err(error("holds no certificate".into()));
    }
    Ok(certs)
}

/// A PEM file of a private key.
pub fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, IdentityError> {
    let bytes = std::fs::read(path).map_err(|e| IdentityError {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    PrivateKeyDer::from_pem_slice(&bytes).map_err(|e| IdentityError {
        path: path.to_path_buf(),
        message: format!("not a PEM private key: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_made_once_kept_private_and_named_by_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let made = load_or_create(dir.path()).unwrap();
        let again = load_or_create(dir.path()).unwrap();
        assert_eq!(made.digest, again.digest, "the same key at the next start");
        assert_eq!(
            key_digest(&made.cert),
            Some(made.digest),
            "the relay sees the same digest"
        );
        let other = tempfile::tempdir().unwrap();
        assert_ne!(load_or_create(other.path()).unwrap().digest, made.digest);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("relay-key.pem"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "private: {mode:o}");
        assert_eq!(key_digest(&CertificateDer::from(vec![1, 2, 3])), None);
        std::fs::write(dir.path().join("relay-key.pem"), "junk").unwrap();
        assert!(
            load_or_create(dir.path())
                .unwrap_err()
                .to_string()
                .contains("not a key this journal made")
        );
    }
}
