//! `journal-bench relay`: what one relay holds. It starts `journal relay serve` as a process of its
//! own (so that its CPU time and memory are its alone) with a certificate made here, enrols and
//! connects many journals (tunnels in this process, each answering TLS with a certificate of its
//! own and echoing what it gets), then opens many agent connections through the relay at once and
//! passes bytes both ways. Every phase is bounded by its counts and a time limit.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::stats::{Samples, cpu_seconds, rss_mb};
use crate::relay::{enrolments, identity, tunnel};

/// What to load the relay with.
#[derive(Debug, Clone)]
pub struct RelayLoad {
    /// The `journal` binary to run the relay with.
    pub journal_bin: PathBuf,
    /// Journals to enrol and connect.
    pub journals: usize,
    /// Agent connections open at once, spread over the journals.
    pub connections: usize,
    /// Bytes each connection sends (and gets back).
    pub bytes: usize,
    /// Give up after this long.
    pub limit: Duration,
}

/// What the run found.
#[derive(Debug)]
pub struct RelayReport {
    pub journals_connected: usize,
    pub connect_all: Duration,
    /// The relay's resident memory before any journal connected, and with all of them (MB).
    pub rss_idle_mb: f64,
    pub rss_connected_mb: f64,
    /// Its peak resident memory, and its CPU time while the agents' bytes went through (s).
    pub peak_rss_mb: f64,
    pub transfer_cpu: f64,
    pub handshakes: Samples,
    pub transfer: Duration,
    pub bytes_through: u64,
    pub failed_connections: usize,
}

struct Ca {
    key: rcgen::KeyPair,
    params: rcgen::CertificateParams,
    der: CertificateDer<'static>,
}

impl Ca {
    fn new() -> Result<Ca, String> {
        let key = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(|e| e.to_string())?;
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let der = params.self_signed(&key).map_err(|e| e.to_string())?.der().clone();
        Ok(Ca { key, params, der })
    }

    fn leaf(&self, names: Vec<String>) -> Result<(rcgen::Certificate, rcgen::KeyPair), String> {
        let key = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
        let params = rcgen::CertificateParams::new(names).map_err(|e| e.to_string())?;
        let issuer = rcgen::Issuer::new(self.params.clone(), &self.key);
        let cert = params.signed_by(&key, &issuer).map_err(|e| e.to_string())?;
        Ok((cert, key))
    }
}

fn write(path: PathBuf, pem: String) -> Result<PathBuf, String> {
    std::fs::write(&path, pem).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

fn free_port() -> Result<u16, String> {
    let socket = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(socket.local_addr().map_err(|e| e.to_string())?.port())
}

/// A folder of this run's own, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the load; the relay process is stopped before this returns.
pub async fn run(load: &RelayLoad) -> Result<RelayReport, String> {
    let folder = Scratch(std::env::temp_dir().join(format!("journal-bench-relay-{}", std::process::id())));
    std::fs::create_dir_all(&folder.0).map_err(|e| format!("{}: {e}", folder.0.display()))?;
    let folder = &folder;
    let ca = Ca::new()?;
    let (relay_cert, relay_key) = ca.leaf(vec!["relay.test".into()])?;
    let cert = write(folder.0.join("relay.pem"), relay_cert.pem())?;
    let key = write(folder.0.join("relay-key.pem"), relay_key.serialize_pem())?;
    let data = folder.0.as_path().join("relay");
    let port = free_port()?;
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let mut relay = std::process::Command::new(&load.journal_bin)
        .args([
            "relay",
            "serve",
            "--hostname",
            "relay.test",
            "--listen",
            &addr.to_string(),
        ])
        .arg("--cert")
        .arg(&cert)
        .arg("--key")
        .arg(&key)
        .arg("--data")
        .arg(&data)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", load.journal_bin.display()))?;
    let relay_pid = relay.id();
    let deadline = Instant::now() + load.limit;
    let mut listening = false;
    while !listening && Instant::now() < deadline {
        listening = tokio::net::TcpStream::connect(addr).await.is_ok();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let result = match listening {
        true => tokio::time::timeout(load.limit, drive(load, &ca, folder.0.as_path(), &data, addr, relay_pid)).await,
        false => Ok(Err("the relay did not start listening".to_string())),
    };
    let _ = relay.kill();
    let _ = relay.wait();
    result.map_err(|_| format!("the run took longer than {} s", load.limit.as_secs()))?
}

async fn drive(
    load: &RelayLoad,
    ca: &Ca,
    folder: &Path,
    data: &Path,
    addr: SocketAddr,
    relay_pid: u32,
) -> Result<RelayReport, String> {
    // The journals: each with its key, enrolled, its tunnel up and echoing over TLS of its own.
    let rss_idle_mb = rss_mb(relay_pid, "VmRSS")?;
    let started = Instant::now();
    let mut tunnels = Vec::new();
    for n in 0..load.journals {
        let name = format!("j{n}");
        let credential = enrolments::enrol(data, &name, false, 0).map_err(|e| e.to_string())?;
        let me = identity::load_or_create(&folder.join(&name)).map_err(|e| e.to_string())?;
        let target = tunnel::RelayTarget {
            host: "relay.test".into(),
            port: addr.port(),
            address: Some(addr),
            name: name.clone(),
            extra_roots: vec![ca.der.clone()],
        };
        let upgraded = tunnel::open(&target, &me, Some(&credential))
            .await
            .map_err(|e| e.to_string())?;
        let (cert, key) = ca.leaf(vec![format!("{name}.relay.test")])?;
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .map_err(|e| e.to_string())?;
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        tunnels.push(tokio::spawn(tunnel::serve(upgraded, move |stream, _peer| {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(stream).await else { return };
                let (mut read, mut write) = tokio::io::split(tls);
                let _ = tokio::io::copy(&mut read, &mut write).await;
            });
        })));
    }
    let connect_all = started.elapsed();
    // The relay has taken every tunnel once it answers the last journal's first stream.
    let rss_connected_mb = rss_mb(relay_pid, "VmRSS")?;

    // The agents: all at once, each to one journal, its bytes there and back.
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der.clone()).map_err(|e| e.to_string())?;
    let client = Arc::new(
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth(),
    );
    let cpu_before = cpu_seconds(relay_pid)?;
    let transfer = Instant::now();
    let agents: Vec<_> = (0..load.connections)
        .map(|n| {
            let (client, bytes) = (client.clone(), load.bytes);
            let name = format!("j{}.relay.test", n % load.journals.max(1));
            // Agents come from many places: 32 from each loopback address, within the relay's
            // limit per source.
            let source = std::net::IpAddr::from([127, 0, 1 + (n / 32 / 250) as u8, 1 + (n / 32 % 250) as u8]);
            tokio::spawn(async move { agent(client, source, addr, name, bytes).await })
        })
        .collect();
    let mut handshakes = Samples::default();
    let (mut bytes_through, mut failed_connections) = (0u64, 0usize);
    for agent in agents {
        match agent.await {
            Ok(Ok((handshake, moved))) => {
                handshakes.record(handshake.as_micros(), 0);
                bytes_through += moved;
            }
            _ => failed_connections += 1,
        }
    }
    let transfer = transfer.elapsed();
    let transfer_cpu = cpu_seconds(relay_pid)? - cpu_before;
    let peak_rss_mb = rss_mb(relay_pid, "VmHWM")?;
    for tunnel in tunnels {
        tunnel.abort();
    }
    Ok(RelayReport {
        journals_connected: load.journals,
        connect_all,
        rss_idle_mb,
        rss_connected_mb,
        peak_rss_mb,
        transfer_cpu,
        handshakes,
        transfer,
        bytes_through,
        failed_connections,
    })
}

/// One agent connection from `source`: the TLS handshake through the relay (timed), then `bytes`
/// sent and read back. Answers the handshake's time and the bytes that crossed the relay both ways.
async fn agent(
    client: Arc<rustls::ClientConfig>,
    source: std::net::IpAddr,
    addr: SocketAddr,
    name: String,
    bytes: usize,
) -> Result<(Duration, u64), String> {
    let began = Instant::now();
    let socket = tokio::net::TcpSocket::new_v4().map_err(|e| e.to_string())?;
    socket.bind(SocketAddr::new(source, 0)).map_err(|e| e.to_string())?;
    let tcp = socket.connect(addr).await.map_err(|e| e.to_string())?;
    let server_name = ServerName::try_from(name).map_err(|e| e.to_string())?;
    let tls = tokio_rustls::TlsConnector::from(client)
        .connect(server_name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let handshake = began.elapsed();
    let (mut read, mut write) = tokio::io::split(tls);
    let sending = tokio::spawn(async move {
        let chunk = vec![7u8; 16 * 1024];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len());
            write.write_all(&chunk[..n]).await?;
            left -= n;
        }
        write.flush().await?;
        Ok::<_, std::io::Error>(write)
    });
    let mut received = 0usize;
    let mut buffer = vec![0u8; 64 * 1024];
    while received < bytes {
        let n = read.read(&mut buffer).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("closed early".into());
        }
        received += n;
    }
    let _ = sending.await;
    Ok((handshake, 2 * bytes as u64))
}
