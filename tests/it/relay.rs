//! The relay and a journal's tunnel to it, on loopback: a journal enrols with its one-time
//! credential and then connects by its key alone; an agent's TLS connection to `NAME.<relay host>`
//! reaches the journal through the tunnel still encrypted for the journal's own certificate (the
//! relay holds no key of it); every refusal (unknown name, no or wrong credential, another key,
//! a server name the relay does not serve) and a relay restart, after which the journal dials in
//! again with nothing re-enrolled. (Across network namespaces with a real ACME server and the
//! Python SDK: tests/python/test_relay.py.)

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::watch;

use journal::relay::enrolments;
use journal::relay::identity;
use journal::relay::serve::{self, RelayLimits, RelayPlan};
use journal::relay::tunnel::{self, RelayTarget, TunnelError};

/// A test CA, and leaves it signs.
struct Ca {
    key: rcgen::KeyPair,
    params: rcgen::CertificateParams,
    cert: rcgen::Certificate,
}

impl Ca {
    fn new() -> Ca {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        Ca { key, params, cert }
    }

    fn der(&self) -> CertificateDer<'static> {
        self.cert.der().clone()
    }

    fn leaf(&self, name: &str) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec![name.to_string()]).unwrap();
        let issuer = rcgen::Issuer::new(self.params.clone(), &self.key);
        let cert = params.signed_by(&key, &issuer).unwrap();
        (
            vec![cert.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
    }
}

async fn relay(ca: &Ca, dir: &std::path::Path) -> (serve::RunningRelay, watch::Sender<bool>) {
    let (chain, key) = ca.leaf("relay.test");
    let plan = RelayPlan {
        hostname: "relay.test".into(),
        listen: "127.0.0.1:0".parse().unwrap(),
        dir: dir.to_path_buf(),
        chain,
        key,
        limits: RelayLimits {
            hello_deadline: Duration::from_secs(3),
            ..RelayLimits::default()
        },
    };
    let (stop, stopped) = watch::channel(false);
    (serve::start(plan, stopped).await.unwrap(), stop)
}

fn target(ca: &Ca, addr: SocketAddr, name: &str) -> RelayTarget {
    RelayTarget {
        host: "relay.test".into(),
        port: addr.port(),
        address: Some(addr),
        name: name.into(),
        extra_roots: vec![ca.der()],
    }
}

/// The journal's end: TLS with its own certificate for `alice.relay.test`, then one line back per
/// line, upper-cased, with the agent's address the relay reported.
fn journal_tls(chain: Vec<CertificateDer<'static>>, key: PrivateKeyDer<'static>) -> tokio_rustls::TlsAcceptor {
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

fn serve_tunnel(
    upgraded: hyper::upgrade::Upgraded,
    acceptor: tokio_rustls::TlsAcceptor,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let _ = tunnel::serve(upgraded, move |stream, peer| {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(stream).await else { return };
                let (read, mut write) = tokio::io::split(tls);
                let mut lines = BufReader::new(read).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let answer = format!("{} from {}\n", line.to_uppercase(), peer.ip());
                    if write.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        })
        .await;
    })
}

/// An agent's connection to `name` through the relay: one line there and back, and the
/// certificate it was served.
async fn agent(ca: &Ca, addr: SocketAddr, name: &str, line: &str) -> Result<(String, CertificateDer<'static>), String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der()).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let server_name = ServerName::try_from(name.to_string()).unwrap();
    let tls = tokio::time::timeout(
        Duration::from_secs(10),
        tokio_rustls::TlsConnector::from(Arc::new(config)).connect(server_name, tcp),
    )
    .await
    .map_err(|_| "no handshake in time".to_string())?
    .map_err(|e| e.to_string())?;
    let served = tls.get_ref().1.peer_certificates().unwrap()[0].clone();
    let (read, mut write) = tokio::io::split(tls);
    write
        .write_all(format!("{line}\n").as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    BufReader::new(read)
        .read_line(&mut answer)
        .await
        .map_err(|e| e.to_string())?;
    Ok((answer, served))
}

async fn connected(relay: &serve::RunningRelay, name: &str) -> bool {
    for _ in 0..200 {
        if relay.relay.connected().iter().any(|n| n == name) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test]
async fn a_journal_enrols_once_and_agents_reach_it_through_the_relay_still_encrypted() {
    let ca = Ca::new();
    let relay_dir = tempfile::tempdir().unwrap();
    let journal_dir = tempfile::tempdir().unwrap();
    let credential = enrolments::enrol(relay_dir.path(), "alice", false, 0).unwrap();
    let (running, stop) = relay(&ca, relay_dir.path()).await;
    let me = identity::load_or_create(journal_dir.path()).unwrap();
    let alice = target(&ca, running.addr, "alice");

    // Refused, each with what to do: no credential yet, a wrong one, a name never enrolled.
    let refused = |result: Result<hyper::upgrade::Upgraded, TunnelError>| match result {
        Err(TunnelError::Refused { status, message }) => (status.as_u16(), message),
        Err(other) => panic!("not a refusal: {other}"),
        Ok(_) => panic!("not refused"),
    };
    let (status, message) = refused(tunnel::open(&alice, &me, None).await);
    assert_eq!(status, 401);
    assert!(message.contains("no enrolment credential was given"), "{message}");
    let (status, _) = refused(tunnel::open(&alice, &me, Some("jre_guess")).await);
    assert_eq!(status, 403);
    let (status, message) = refused(tunnel::open(&target(&ca, running.addr, "bob"), &me, Some(&credential)).await);
    assert_eq!(status, 404);
    assert!(message.contains("journal relay enrol bob"), "{message}");
    assert!(running.relay.connected().is_empty());

    // Enrolled: the credential binds this journal's key.
    let (journal_chain, journal_key) = ca.leaf("alice.relay.test");
    let upgraded = tunnel::open(&alice, &me, Some(&credential)).await.unwrap();
    let serving = serve_tunnel(upgraded, journal_tls(journal_chain.clone(), journal_key.clone_key()));
    assert!(connected(&running, "alice").await);
    let (answer, served) = agent(&ca, running.addr, "alice.relay.test", "hello").await.unwrap();
    assert_eq!(answer, "HELLO from 127.0.0.1\n");
    assert_eq!(
        served, journal_chain[0],
        "the journal's own certificate, through the relay"
    );
    // Several agents at once, each its own stream.
    let many = futures_util::future::join_all((0..8).map(|n| {
        let ca = &ca;
        async move { agent(ca, running.addr, "alice.relay.test", &format!("agent {n}")).await }
    }))
    .await;
    for (n, result) in many.into_iter().enumerate() {
        assert_eq!(result.unwrap().0, format!("AGENT {n} from 127.0.0.1\n"));
    }

    // The credential is spent: another key cannot take the name with it.
    let stranger_dir = tempfile::tempdir().unwrap();
    let stranger = identity::load_or_create(stranger_dir.path()).unwrap();
    let (status, message) = refused(tunnel::open(&alice, &stranger, Some(&credential)).await);
    assert_eq!(status, 403);
    assert!(message.contains("enrolled with another key"), "{message}");

    // A name the relay does not serve, or a journal not connected: closed without a handshake.
    for name in ["bob.relay.test", "relay.test.evil.example", "deep.alice.relay.test"] {
        assert!(agent(&ca, running.addr, name, "hi").await.is_err(), "{name}");
    }

    // The relay restarts: the journal's tunnel ends, and it dials in again by its key alone.
    let _ = stop.send(true);
    running.task.await.unwrap();
    tokio::time::timeout(Duration::from_secs(60), serving)
        .await
        .expect("the tunnel ends with the relay")
        .unwrap();
    let (running, _stop) = relay(&ca, relay_dir.path()).await;
    let alice = target(&ca, running.addr, "alice");
    let upgraded = tunnel::open(&alice, &me, None).await.unwrap();
    let _serving = serve_tunnel(upgraded, journal_tls(journal_chain.clone(), journal_key));
    assert!(connected(&running, "alice").await);
    let (answer, _) = agent(&ca, running.addr, "alice.relay.test", "again").await.unwrap();
    assert_eq!(answer, "AGAIN from 127.0.0.1\n");

    // Revoked: its tunnel is cut, and it cannot dial in again.
    enrolments::revoke(relay_dir.path(), "alice").unwrap();
    running.relay.drop_revoked();
    assert!(running.relay.connected().is_empty());
    assert!(agent(&ca, running.addr, "alice.relay.test", "hi").await.is_err());
    let (status, _) = refused(tunnel::open(&alice, &me, None).await);
    assert_eq!(status, 404);
}

#[test]
fn the_relay_commands_enrol_list_and_revoke_and_refuse_what_cannot_work() {
    use crate::cli::{fails, ok};

    let journal = tempfile::tempdir().unwrap();
    let relay = tempfile::tempdir().unwrap();
    let data = relay.path().to_str().unwrap();
    let enrolled = ok(journal.path(), &["relay", "enrol", "Alice", "--data", data]);
    let credential = enrolled.lines().nth(1).unwrap();
    assert!(credential.starts_with("jre_"), "{enrolled}");
    let file = std::fs::read_to_string(relay.path().join("enrolments.json")).unwrap();
    assert!(
        file.contains("\"alice\"") && !file.contains(credential),
        "only a digest is kept"
    );
    assert!(fails(journal.path(), &["relay", "enrol", "alice", "--data", data]).contains("--again"));
    assert!(fails(journal.path(), &["relay", "enrol", "a.b", "--data", data]).contains("letters, digits"));
    let listed = ok(journal.path(), &["relay", "list", "--data", data]);
    assert!(
        listed.starts_with("alice  enrolled ") && listed.contains("waiting for its first connection"),
        "{listed}"
    );
    let again = ok(journal.path(), &["relay", "enrol", "alice", "--again", "--data", data]);
    assert_ne!(again.lines().nth(1).unwrap(), credential);

    for (args, says) in [
        (
            vec![
                "--hostname",
                "relay.example.org",
                "--cert",
                "/nonexistent.pem",
                "--key",
                "/k.pem",
            ],
            "--cert",
        ),
        (
            vec!["--hostname", "10.0.0.1", "--cert", "/c.pem", "--key", "/k.pem"],
            "IP address",
        ),
        (
            vec![
                "--hostname",
                "relay.example.org",
                "--listen",
                "443",
                "--cert",
                "/c",
                "--key",
                "/k",
            ],
            "not IP:PORT",
        ),
    ] {
        let error = fails(
            journal.path(),
            &[&["relay", "serve", "--data", data], args.as_slice()].concat(),
        );
        assert!(error.contains(says), "{args:?}: {error}");
    }

    ok(journal.path(), &["relay", "revoke", "alice", "--data", data]);
    assert!(
        fails(journal.path(), &["relay", "revoke", "alice", "--data", data])
            .contains("no journal is enrolled as alice")
    );
    assert!(ok(journal.path(), &["relay", "list", "--data", data]).contains("no journal is enrolled"));
}
