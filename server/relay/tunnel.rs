//! The journal's side of a relay: its tunnel. The journal dials the relay's own name, proves its
//! key in the TLS handshake (`identity`), asks for its tunnel (`POST /v1/tunnel`, with the
//! enrolment credential the first time), and on the upgraded connection serves HTTP/2: each stream
//! the relay opens (a CONNECT) is one agent's connection, handed over as a byte stream with the
//! agent's address, still encrypted for the journal's own certificate.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::upgrade::Upgraded;
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use rustls::pki_types::{CertificateDer, ServerName};

use super::identity::Identity;
use super::serve::{NAME_HEADER, PEER_HEADER, TUNNEL_PATH, TUNNEL_PROTOCOL};

/// How long dialling the relay (TCP, TLS and the tunnel request) may take.
pub const DIAL_DEADLINE: Duration = Duration::from_secs(15);

/// The relay a journal connects to, and as whom.
#[derive(Debug, Clone)]
pub struct RelayTarget {
    /// The relay's own name (its certificate's).
    pub host: String,
    pub port: u16,
    /// Where to reach it instead of asking DNS for `host` (a relay at a fixed address; tests).
    pub address: Option<SocketAddr>,
    /// The journal's name on the relay.
    pub name: String,
    /// A CA to trust for the relay's certificate beside the web's usual ones.
    pub extra_roots: Vec<CertificateDer<'static>>,
}

/// Why a tunnel could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum TunnelError {
    #[error("could not reach the relay {0}: {1}")]
    Connect(String, std::io::Error),
    #[error("no TLS with the relay {0}: {1}")]
    Tls(String, std::io::Error),
    #[error("the relay {0} did not answer in time")]
    Timeout(String),
    #[error("the relay refused the tunnel ({status}): {message}")]
    Refused { status: StatusCode, message: String },
    #[error("the relay {0} spoke no tunnel protocol: {1}")]
    Protocol(String, String),
}

impl TunnelError {
    /// Whether dialling again later may help (a relay down or restarting), or the owner must act.
    pub fn is_refusal(&self) -> bool {
        matches!(self, TunnelError::Refused { status, .. } if status.is_client_error())
    }
}

fn client_config(target: &RelayTarget, identity: &Identity) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for root in &target.extra_roots {
        roots.add(root.clone()).map_err(|e| e.to_string())?;
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_client_auth_cert(vec![identity.cert.clone()], identity.key.clone_key())
        .map_err(|e| e.to_string())?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Dials the relay and opens the tunnel; `credential` binds the key at the first connection.
pub async fn open(
    target: &RelayTarget,
    identity: &Identity,
    credential: Option<&str>,
) -> Result<Upgraded, TunnelError> {
    let relay = format!("{}:{}", target.host, target.port);
    match tokio::time::timeout(DIAL_DEADLINE, dial(target, identity, credential)).await {
        Ok(opened) => opened,
        Err(_) => Err(TunnelError::Timeout(relay)),
    }
}

async fn dial(target: &RelayTarget, identity: &Identity, credential: Option<&str>) -> Result<Upgraded, TunnelError> {
    let relay = format!("{}:{}", target.host, target.port);
    let tcp = match target.address {
        Some(address) => tokio::net::TcpStream::connect(address).await,
        None => tokio::net::TcpStream::connect((target.host.as_str(), target.port)).await,
    }
    .map_err(|e| TunnelError::Connect(relay.clone(), e))?;
    let _ = tcp.set_nodelay(true);
    let config =
        client_config(target, identity).map_err(|e| TunnelError::Tls(relay.clone(), std::io::Error::other(e)))?;
    let server_name = ServerName::try_from(target.host.clone())
        .map_err(|e| TunnelError::Tls(relay.clone(), std::io::Error::other(e)))?;
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(server_name, tcp)
        .await
        .map_err(|e| TunnelError::Tls(relay.clone(), e))?;
    let protocol = |e: hyper::Error| TunnelError::Protocol(relay.clone(), e.to_string());
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(protocol)?;
    tokio::spawn(connection.with_upgrades());
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(TUNNEL_PATH)
        .header(header::HOST, &target.host)
        .header(header::CONNECTION, "upgrade")
        .header(header::UPGRADE, TUNNEL_PROTOCOL)
        .header(NAME_HEADER, &target.name);
    if let Some(credential) = credential {
        request = request.header(header::AUTHORIZATION, format!("Bearer {credential}"));
    }
    let request = request
        .body(Empty::<Bytes>::new())
        .map_err(|e| TunnelError::Protocol(relay.clone(), e.to_string()))?;
    let response = sender.send_request(request).await.map_err(protocol)?;
    if response.status() != StatusCode::SWITCHING_PROTOCOLS {
        let status = response.status();
        let body = Limited::new(response.into_body(), 4096).collect().await;
        let message = body
            .ok()
            .and_then(|body| serde_json::from_slice::<serde_json::Value>(&body.to_bytes()).ok())
            .and_then(|json| json["error"].as_str().map(str::to_string))
            .unwrap_or_else(|| "no reason given".into());
        return Err(TunnelError::Refused { status, message });
    }
    hyper::upgrade::on(response).await.map_err(protocol)
}

/// Serves the tunnel until the relay or the network ends it: each stream the relay opens is handed
/// to `accept` with the address the agent connected from (unspecified if the relay named none).
pub async fn serve<F>(tunnel: Upgraded, accept: F) -> Result<(), hyper::Error>
where
    F: Fn(TokioIo<Upgraded>, SocketAddr) + Clone + Send + Sync + 'static,
{
    let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
        let accept = accept.clone();
        async move {
            if request.method() != Method::CONNECT {
                let mut refused = Response::new(Empty::<Bytes>::new());
                *refused.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
                return Ok::<_, std::convert::Infallible>(refused);
            }
            let peer = request
                .headers()
                .get(PEER_HEADER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok())
                .unwrap_or(SocketAddr::from(([0, 0, 0, 0], 0)));
            let upgrade = hyper::upgrade::on(&mut request);
            tokio::spawn(async move {
                if let Ok(upgraded) = upgrade.await {
                    accept(TokioIo::new(upgraded), peer);
                }
            });
            Ok(Response::new(Empty::new()))
        }
    });
    hyper::server::conn::http2::Builder::new(TokioExecutor::new())
        .timer(TokioTimer::new())
        .keep_alive_interval(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(20))
        .serve_connection(tunnel, service)
        .await
}
