//! The server side of TLS for a route: its `ServerConfig` (rustls with the ring provider, TLS 1.3
//! only, HTTP/1.1) and `CertSlot`, the certificate resolver through which a route's certificate is
//! replaced without a restart: handshakes that start after `install` present the new certificate,
//! connections already open keep theirs.
//!
//! The own-domain route's slot also answers ACME's TLS-ALPN-01 challenge (RFC 8737): a handshake
//! that offers `acme-tls/1` and nothing else gets the challenge certificate for its server name,
//! and the listener closes such a connection after the handshake (`ACME_TLS_ALPN`).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use super::ca::{Leaf, TlsError};

/// The ALPN protocol of the TLS-ALPN-01 challenge.
pub const ACME_TLS_ALPN: &[u8] = b"acme-tls/1";

/// The certificate a route presents, replaceable while it serves.
#[derive(Debug, Default)]
pub struct CertSlot {
    current: RwLock<Option<Arc<CertifiedKey>>>,
    /// TLS-ALPN-01 challenge certificates by server name, while an order is being validated.
    challenges: RwLock<HashMap<String, Arc<CertifiedKey>>>,
}

impl CertSlot {
    /// Puts a leaf (and the chain above it, without the root) in place for the next handshakes.
    pub fn install(&self, leaf: &Leaf, chain: &[Vec<u8>]) -> Result<(), TlsError> {
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf.key_der.clone()));
        let mut certs = vec![CertificateDer::from(leaf.cert_der.clone())];
        certs.extend(chain.iter().map(|der| CertificateDer::from(der.clone())));
        let certified = Arc::new(certified(certs, &key)?);
        *self.current.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(certified);
        Ok(())
    }

    /// Puts a PEM chain (leaf first) and its PEM key in place for the next handshakes.
    pub fn install_pem(&self, chain_pem: &str, key_pem: &str) -> Result<(), TlsError> {
        let (certs, key) = parse_pem(chain_pem, key_pem)?;
        let certified = Arc::new(certified(certs, &key)?);
        *self.current.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(certified);
        Ok(())
    }

    /// Answers TLS-ALPN-01 handshakes for `server_name` with this certificate (DER) and key (PKCS#8).
    pub fn set_challenge(&self, server_name: &str, cert_der: Vec<u8>, key_der: Vec<u8>) -> Result<(), TlsError> {
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_der));
        let signer = rustls::crypto::ring::sign::any_supported_type(&key)
            .map_err(|e| TlsError::Refused(format!("the challenge key cannot sign: {e}")))?;
        // Not `keys_match`: it parses the certificate as a server's, and the critical acmeIdentifier
        // extension that makes this a challenge certificate is one no server certificate has.
        let certified = Arc::new(CertifiedKey::new(vec![CertificateDer::from(cert_der)], signer));
        self.challenges
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(server_name.to_ascii_lowercase(), certified);
        Ok(())
    }

    /// Stops answering the challenge for `server_name`.
    pub fn clear_challenge(&self, server_name: &str) {
        self.challenges
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(&server_name.to_ascii_lowercase());
    }

    /// Whether a certificate is in place (without one, every handshake is refused).
    pub fn is_ready(&self) -> bool {
        self.read().is_some()
    }

    fn read(&self) -> Option<Arc<CertifiedKey>> {
        self.current
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

impl ResolvesServerCert for CertSlot {
    fn resolve(&self, client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        // A validator offers `acme-tls/1` alone (RFC 8737 section 3). A client offering it beside
        // other protocols is not one: rustls would pick http/1.1 by the server's preference, and
        // HTTP must never run over a challenge certificate.
        let offered: Option<Vec<&[u8]>> = client_hello.alpn().map(Iterator::collect);
        let wants_challenge = offered.is_some_and(|offered| offered == [ACME_TLS_ALPN]);
        if wants_challenge {
            // Only a challenge certificate answers: never the route's own to a validator.
            let name = client_hello.server_name()?.to_ascii_lowercase();
            return self
                .challenges
                .read()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .get(&name)
                .cloned();
        }
        self.read()
    }
}

fn certified(certs: Vec<CertificateDer<'static>>, key: &PrivateKeyDer<'_>) -> Result<CertifiedKey, TlsError> {
    let signer = rustls::crypto::ring::sign::any_supported_type(key)
        .map_err(|e| TlsError::Refused(format!("the certificate's key cannot sign: {e}")))?;
    let certified = CertifiedKey::new(certs, signer);
    // A certificate paired with another key is refused here, not at the first handshake.
    certified
        .keys_match()
        .map_err(|e| TlsError::Refused(format!("the certificate does not match its key: {e}")))?;
    Ok(certified)
}

/// A PEM chain (leaf first) and a PEM private key, as DER.
pub fn parse_pem(
    chain_pem: &str,
    key_pem: &str,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), TlsError> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(chain_pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| TlsError::Refused(format!("the certificate chain cannot be read: {e}")))?;
    if certs.is_empty() {
        return Err(TlsError::Refused("the certificate chain is empty".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|e| TlsError::Refused(format!("the private key cannot be read: {e}")))?;
    Ok((certs, key))
}

/// A route's TLS configuration: TLS 1.3 only, with ring, HTTP/1.1, certificates from `slot`.
pub fn server_config(slot: Arc<CertSlot>) -> Result<Arc<ServerConfig>, TlsError> {
    config_with_alpn(slot, vec![b"http/1.1".to_vec()])
}

/// The own-domain route's configuration: as `server_config`, also answering TLS-ALPN-01.
pub fn acme_server_config(slot: Arc<CertSlot>) -> Result<Arc<ServerConfig>, TlsError> {
    config_with_alpn(slot, vec![b"http/1.1".to_vec(), ACME_TLS_ALPN.to_vec()])
}

fn config_with_alpn(slot: Arc<CertSlot>, alpn: Vec<Vec<u8>>) -> Result<Arc<ServerConfig>, TlsError> {
    let mut config = ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| TlsError::Refused(format!("the TLS settings were refused: {e}")))?
        .with_no_client_auth()
        .with_cert_resolver(slot);
    config.alpn_protocols = alpn;
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use rustls::pki_types::ServerName;
    use rustls::{ClientConfig, ClientConnection, ServerConnection};

    use super::*;
    use crate::tls::ca::PrivateCa;

    const NOW: i64 = 1_796_000_000;

    fn client(ca: &PrivateCa, versions: &[&'static rustls::SupportedProtocolVersion]) -> Arc<ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(CertificateDer::from(ca.der().to_vec())).unwrap();
        Arc::new(
            ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_protocol_versions(versions)
                .unwrap()
                .with_root_certificates(roots)
                .with_no_client_auth(),
        )
    }

    /// Moves bytes between the two ends until neither is handshaking.
    fn pump(client: &mut ClientConnection, server: &mut ServerConnection) -> Result<(), rustls::Error> {
        for _ in 0..20 {
            if !client.is_handshaking() && !server.is_handshaking() {
                break;
            }
            let mut wire = Vec::new();
            while client.wants_write() {
                client.write_tls(&mut wire).unwrap();
            }
            server.read_tls(&mut wire.as_slice()).unwrap();
            server.process_new_packets()?;
            let mut wire = Vec::new();
            while server.wants_write() {
                server.write_tls(&mut wire).unwrap();
            }
            client.read_tls(&mut wire.as_slice()).unwrap();
            client.process_new_packets()?;
        }
        Ok(())
    }

    /// A whole handshake over memory; answers the certificate the server presented.
    fn handshake(
        server: Arc<ServerConfig>,
        client: Arc<ClientConfig>,
        address: &str,
    ) -> Result<Vec<u8>, rustls::Error> {
        let ip: IpAddr = address.parse().unwrap();
        let mut client = ClientConnection::new(client, ServerName::IpAddress(ip.into())).unwrap();
        let mut server = ServerConnection::new(server).unwrap();
        pump(&mut client, &mut server)?;
        assert_eq!(server.protocol_version(), Some(rustls::ProtocolVersion::TLSv1_3));
        Ok(client.peer_certificates().unwrap()[0].to_vec())
    }

    #[test]
    fn a_route_serves_tls_1_3_and_swaps_its_certificate_for_new_handshakes() {
        let dir = tempfile::tempdir().unwrap();
        let ca = PrivateCa::load_or_create(dir.path(), NOW).unwrap();
        let slot = Arc::new(CertSlot::default());
        let config = server_config(slot.clone()).unwrap();
        let tls13 = client(&ca, &[&rustls::version::TLS13]);
        assert!(!slot.is_ready());
        assert!(
            handshake(config.clone(), tls13.clone(), "192.168.1.5").is_err(),
            "no certificate yet"
        );

        let now = crate::clock::unix_now();
        let first = ca.issue_leaf(&["192.168.1.5".parse().unwrap()], now).unwrap();
        slot.install(&first, &[]).unwrap();
        assert_eq!(
            handshake(config.clone(), tls13.clone(), "192.168.1.5").unwrap(),
            first.cert_der
        );

        let second = ca
            .issue_leaf(&["192.168.1.5".parse().unwrap(), "10.0.0.9".parse().unwrap()], now)
            .unwrap();
        slot.install(&second, &[]).unwrap();
        assert_eq!(
            handshake(config.clone(), tls13.clone(), "10.0.0.9").unwrap(),
            second.cert_der
        );

        let mismatched = Leaf {
            key_der: first.key_der.clone(),
            ..ca.issue_leaf(&["10.0.0.9".parse().unwrap()], now).unwrap()
        };
        assert!(
            slot.install(&mismatched, &[])
                .unwrap_err()
                .to_string()
                .contains("does not match its key")
        );
        assert_eq!(
            handshake(config.clone(), tls13.clone(), "10.0.0.9").unwrap(),
            second.cert_der,
            "the slot kept its certificate"
        );

        let tls12 = client(&ca, &[&rustls::version::TLS12]);
        assert!(handshake(config, tls12, "192.168.1.5").is_err(), "TLS 1.2 is refused");
    }

    /// Accepts any certificate: the challenge test looks at which one the server presents.
    #[derive(Debug)]
    struct AnyCertificate;

    impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
        fn verify_server_cert(
            &self,
            _: &CertificateDer<'_>,
            _: &[CertificateDer<'_>],
            _: &ServerName<'_>,
            _: &[u8],
            _: rustls::pki_types::UnixTime,
        ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
            Ok(rustls::client::danger::ServerCertVerified::assertion())
        }
        fn verify_tls12_signature(
            &self,
            _: &[u8],
            _: &CertificateDer<'_>,
            _: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
        }
        fn verify_tls13_signature(
            &self,
            _: &[u8],
            _: &CertificateDer<'_>,
            _: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
        }
        fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
            rustls::crypto::ring::default_provider()
                .signature_verification_algorithms
                .supported_schemes()
        }
    }

    /// A handshake to `journal.test` offering `alpn`; answers the certificate presented.
    fn presented(server: Arc<ServerConfig>, alpn: &[&[u8]]) -> Result<Vec<u8>, rustls::Error> {
        let mut config = ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate))
            .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let name = ServerName::try_from("journal.test").unwrap();
        let mut client = ClientConnection::new(Arc::new(config), name).unwrap();
        let mut server = ServerConnection::new(server).unwrap();
        pump(&mut client, &mut server)?;
        Ok(client.peer_certificates().unwrap()[0].to_vec())
    }

    #[test]
    fn the_challenge_certificate_answers_only_a_handshake_that_offers_acme_tls_alone() {
        let own_key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let own = rcgen::CertificateParams::new(vec!["journal.test".into()])
            .unwrap()
            .self_signed(&own_key)
            .unwrap();
        let slot = Arc::new(CertSlot::default());
        slot.install_pem(&own.pem(), &own_key.serialize_pem()).unwrap();
        let (challenge, challenge_key) =
            crate::domain::acme::challenge_certificate("journal.test", &[7u8; 32]).unwrap();
        let config = acme_server_config(slot.clone()).unwrap();
        assert!(
            presented(config.clone(), &[ACME_TLS_ALPN]).is_err(),
            "no challenge open: a validator gets nothing"
        );
        slot.set_challenge("Journal.Test", challenge.clone(), challenge_key)
            .unwrap();
        assert_eq!(presented(config.clone(), &[ACME_TLS_ALPN]).unwrap(), challenge);
        let own_der = own.der().to_vec();
        assert_eq!(
            presented(config.clone(), &[b"http/1.1", ACME_TLS_ALPN]).unwrap(),
            own_der
        );
        assert_eq!(presented(config.clone(), &[b"http/1.1"]).unwrap(), own_der);
        assert_eq!(presented(config.clone(), &[]).unwrap(), own_der);
        slot.clear_challenge("journal.test");
        assert!(presented(config, &[ACME_TLS_ALPN]).is_err());
    }
}
