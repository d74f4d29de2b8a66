//! `journal relay serve`: the relay itself. One listener (443 on a server) takes every connection
//! and reads its TLS hello (`hello`):
//!
//! - for the relay's own name, it terminates TLS (the relay's certificate; the journal's key in a
//!   mutual-TLS handshake, `identity`) and answers one request, `POST /v1/tunnel`, which a
//!   journal sends to get its tunnel: checked against the enrolments, then upgraded to HTTP/2 with
//!   the relay as the client;
//! - for `NAME.<relay host>`, it opens a CONNECT stream on NAME's tunnel, writes the hello into it
//!   and passes bytes both ways until either side closes or both fall idle. It never decrypts them;
//! - for any other name, or none, it closes the connection at once.
//!
//! What one relay holds is bounded: connections in all and per source (an IPv6 source by its /64),
//! journals connected, streams per journal, the time to send a hello, and idle streams. The relay
//! keeps no state but the enrolments file: a restart loses open streams, and every journal dials
//! back in by itself.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use http_body_util::{Empty, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

use super::enrolments::{self, Refusal};
use super::hello::{Rewind, read_hello};
use super::identity::{AnyKeyItHolds, key_digest};
use crate::lan::limits::ConnectionLimiter;

/// The path a journal asks for its tunnel at.
pub const TUNNEL_PATH: &str = "/v1/tunnel";
/// The protocol a tunnel request upgrades to: HTTP/2 with the relay as the client.
pub const TUNNEL_PROTOCOL: &str = "journal-relay/1";
/// The header that names the journal a tunnel is for.
pub const NAME_HEADER: &str = "journal-name";
/// The header of each stream that tells the journal where the agent connected from.
pub const PEER_HEADER: &str = "journal-relay-peer";

/// What a relay may hold at once, and how long it waits.
#[derive(Debug, Clone, Copy)]
pub struct RelayLimits {
    /// Connections in all (agents' and journals').
    pub connections: usize,
    /// Connections from one source address (an IPv6 source by its /64).
    pub per_source: usize,
    /// Journals connected at once.
    pub journals: usize,
    /// Streams open to one journal at once.
    pub per_journal: usize,
    /// How long a client may take to send its TLS hello, and a journal to answer a new stream.
    pub hello_deadline: Duration,
    /// A stream with no byte either way for this long is closed.
    pub idle: Duration,
}

impl Default for RelayLimits {
    fn default() -> RelayLimits {
        RelayLimits {
            connections: 8192,
            per_source: 64,
            journals: 1000,
            per_journal: 256,
            hello_deadline: Duration::from_secs(10),
            idle: Duration::from_secs(300),
        }
    }
}

/// A relay's settings, checked.
pub struct RelayPlan {
    /// The relay's own name; journals are reached at `NAME.<hostname>`.
    pub hostname: String,
    pub listen: SocketAddr,
    /// Where the enrolments are kept.
    pub dir: PathBuf,
    /// The relay's own certificate chain and key, for its own name.
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
    pub limits: RelayLimits,
}

/// One journal's tunnel: where its streams are opened, and how many may be.
struct Tunnel {
    id: u64,
    key: [u8; 32],
    sender: hyper::client::conn::http2::SendRequest<Empty<Bytes>>,
    streams: Arc<Semaphore>,
    /// Ends the tunnel's connection (a newer tunnel of the same journal, or a revoked enrolment).
    connection: tokio::task::AbortHandle,
}

/// A running relay's shared state.
pub struct Relay {
    hostname: String,
    dir: PathBuf,
    limits: RelayLimits,
    tunnels: Mutex<HashMap<String, Tunnel>>,
    next_id: AtomicU64,
    /// Enrolment checks write the file: one at a time.
    admitting: tokio::sync::Mutex<()>,
}

/// A relay that serves until `stop`; its address (the port given, or the one the system chose).
pub struct RunningRelay {
    pub addr: SocketAddr,
    pub relay: Arc<Relay>,
    pub task: tokio::task::JoinHandle<()>,
}

/// Why a relay did not start.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error("could not listen on {addr}: {source}")]
    Listen { addr: SocketAddr, source: std::io::Error },
    #[error("the relay's certificate cannot be served: {0}")]
    Certificate(rustls::Error),
}

/// Starts the relay of `plan`.
pub async fn start(plan: RelayPlan, stop: watch::Receiver<bool>) -> Result<RunningRelay, RelayError> {
    let listen_error = |source| RelayError::Listen {
        addr: plan.listen,
        source,
    };
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(RelayError::Certificate)?
        .with_client_cert_verifier(Arc::new(AnyKeyItHolds::default()))
        .with_single_cert(plan.chain, plan.key)
        .map_err(RelayError::Certificate)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind(plan.listen).await.map_err(listen_error)?;
    let addr = listener.local_addr().map_err(listen_error)?;
    let relay = Arc::new(Relay {
        hostname: plan.hostname.to_ascii_lowercase(),
        dir: plan.dir,
        limits: plan.limits,
        tunnels: Mutex::default(),
        next_id: AtomicU64::new(1),
        admitting: tokio::sync::Mutex::new(()),
    });
    let task = tokio::spawn(accept_loop(listener, relay.clone(), acceptor, stop));
    Ok(RunningRelay { addr, relay, task })
}

impl Relay {
    fn tunnels(&self) -> std::sync::MutexGuard<'_, HashMap<String, Tunnel>> {
        self.tunnels.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The journals connected now.
    pub fn connected(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tunnels().keys().cloned().collect();
        names.sort();
        names
    }

    /// The journal a server name is for: `NAME.<relay host>`, NAME a single label.
    fn journal_of<'a>(&self, server_name: &'a str) -> Option<&'a str> {
        let name = server_name.strip_suffix(self.hostname.as_str())?.strip_suffix('.')?;
        enrolments::name_of(name).ok().filter(|n| n == name).map(|_| name)
    }

    /// Cuts the tunnels whose enrolment is gone or names another key now.
    pub fn drop_revoked(&self) {
        let Ok(enrolled) = enrolments::list(&self.dir) else {
            return;
        };
        self.tunnels().retain(|name, tunnel| {
            let hex = enrolments::hex(&tunnel.key);
            let keep = enrolled
                .iter()
                .any(|e| &e.name == name && e.key.as_deref() == Some(hex.as_str()));
            if !keep {
                tracing::info!("journal {name}: its enrolment was revoked or renewed; its tunnel is closed");
                tunnel.connection.abort();
            }
            keep
        });
    }
}

async fn accept_loop(
    listener: TcpListener,
    relay: Arc<Relay>,
    acceptor: tokio_rustls::TlsAcceptor,
    mut stop: watch::Receiver<bool>,
) {
    let limiter = ConnectionLimiter::new_public(relay.limits.connections, relay.limits.per_source);
    let mut revocations = tokio::time::interval(Duration::from_secs(30));
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = revocations.tick() => {
                relay.drop_revoked();
                continue;
            }
            () = crate::routes::status::stopping(&mut stop) => break,
        };
        let Ok(admission) = limiter.admit(peer.ip()) else {
            tracing::debug!(%peer, "refused a connection over the connection limits");
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (relay, acceptor) = (relay.clone(), acceptor.clone());
        tokio::spawn(async move {
            let _admission = admission;
            connection(relay, acceptor, stream, peer).await;
        });
    }
    for (_, tunnel) in relay.tunnels().drain() {
        tunnel.connection.abort();
    }
}

/// One connection: its hello says where it goes.
async fn connection(relay: Arc<Relay>, acceptor: tokio_rustls::TlsAcceptor, mut stream: TcpStream, peer: SocketAddr) {
    let deadline = relay.limits.hello_deadline;
    let hello = match tokio::time::timeout(deadline, read_hello(&mut stream)).await {
        Ok(Ok(hello)) => hello,
        Ok(Err(error)) => {
            tracing::debug!(%peer, %error, "closed a connection without a TLS hello");
            return;
        }
        Err(_) => {
            tracing::debug!(%peer, "closed a connection that sent no TLS hello in time");
            return;
        }
    };
    let Some(server_name) = hello.server_name.clone() else {
        tracing::debug!(%peer, "closed a connection that named no server");
        return;
    };
    if server_name == relay.hostname {
        let stream = Rewind::new(hello.bytes, stream);
        let Ok(Ok(tls)) = tokio::time::timeout(deadline, acceptor.accept(stream)).await else {
            return;
        };
        let key = tls
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|certs| certs.first())
            .and_then(key_digest);
        let service = hyper::service::service_fn(move |request| {
            let relay = relay.clone();
            async move { Ok::<_, std::convert::Infallible>(tunnel_request(relay, key, peer, request).await) }
        });
        let _ = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(deadline)
            .serve_connection(TokioIo::new(tls), service)
            .with_upgrades()
            .await;
        return;
    }
    let Some(name) = relay.journal_of(&server_name) else {
        tracing::debug!(%peer, "closed a connection for {server_name}, which this relay does not serve");
        return;
    };
    forward(&relay, name, hello.bytes, stream, peer).await;
}

/// Passes an agent's connection to journal `name` through its tunnel.
async fn forward(relay: &Relay, name: &str, hello: Vec<u8>, mut agent: TcpStream, peer: SocketAddr) {
    let tunnel = relay
        .tunnels()
        .get(name)
        .map(|tunnel| (tunnel.sender.clone(), tunnel.streams.clone()));
    let Some((mut sender, streams)) = tunnel else {
        tracing::debug!(%peer, "no journal is connected as {name}");
        return;
    };
    let Ok(_stream) = streams.try_acquire_owned() else {
        tracing::info!(%peer, "journal {name} has {} streams open: refused another", relay.limits.per_journal);
        return;
    };
    let request = Request::builder()
        .method(Method::CONNECT)
        .uri(format!("{name}.{}:443", relay.hostname))
        .header(PEER_HEADER, peer.to_string())
        .body(Empty::new());
    let Ok(request) = request else { return };
    let opened = tokio::time::timeout(relay.limits.hello_deadline, async {
        sender.ready().await?;
        sender.send_request(request).await
    })
    .await;
    let response = match opened {
        Ok(Ok(response)) if response.status() == StatusCode::OK => response,
        Ok(Ok(response)) => {
            tracing::info!(%peer, "journal {name} refused a stream: {}", response.status());
            return;
        }
        Ok(Err(error)) => {
            tracing::info!(%peer, %error, "could not open a stream to journal {name}");
            return;
        }
        Err(_) => {
            tracing::info!(%peer, "journal {name} did not answer a new stream in time");
            return;
        }
    };
    let Ok(upgraded) = hyper::upgrade::on(response).await else {
        return;
    };
    let mut journal = TokioIo::new(upgraded);
    if journal.write_all(&hello).await.is_err() {
        return;
    }
    pipe(&mut agent, &mut journal, relay.limits.idle).await;
}

/// Copies bytes both ways until both sides have closed, or neither sent a byte for `idle`. Both
/// directions run at once (`copy_bidirectional`): a side that waits to write while the other is not
/// read would hold both up.
pub async fn pipe<A, B>(a: &mut A, b: &mut B, idle: Duration)
where
    A: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    let started = Instant::now();
    let last = Arc::new(AtomicU64::new(0));
    let mut a = Watched {
        inner: a,
        started,
        last: last.clone(),
    };
    let mut b = Watched {
        inner: b,
        started,
        last: last.clone(),
    };
    let copying = tokio::io::copy_bidirectional(&mut a, &mut b);
    tokio::pin!(copying);
    let check = idle.min(Duration::from_secs(5));
    loop {
        tokio::select! {
            _ = &mut copying => return,
            () = tokio::time::sleep(check) => {
                let quiet = started.elapsed().saturating_sub(Duration::from_millis(last.load(Ordering::Relaxed)));
                if quiet >= idle {
                    return;
                }
            }
        }
    }
}

/// A stream that notes when it last moved a byte (milliseconds after `started`).
struct Watched<'a, S> {
    inner: &'a mut S,
    started: Instant,
    last: Arc<AtomicU64>,
}

impl<S> Watched<'_, S> {
    fn moved(&self, bytes: usize) {
        if bytes > 0 {
            self.last
                .store(self.started.elapsed().as_millis() as u64, Ordering::Relaxed);
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<'_, S> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut *self.inner).poll_read(cx, buf);
        self.moved(buf.filled().len() - before);
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<'_, S> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let polled = std::pin::Pin::new(&mut *self.inner).poll_write(cx, buf);
        if let std::task::Poll::Ready(Ok(n)) = &polled {
            self.moved(*n);
        }
        polled
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut *self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut *self.inner).poll_shutdown(cx)
    }
}

/// A refusal of a tunnel request: the status and a line that says what to do.
fn refusal(status: StatusCode, message: &str) -> Response<Full<Bytes>> {
    let body = serde_json::json!({ "error": message }).to_string();
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_default()
}

/// `POST /v1/tunnel` from a journal: its key (from the handshake), its name and, the first time,
/// its enrolment credential; answered with 101 and the upgrade to HTTP/2, or a refusal.
async fn tunnel_request(
    relay: Arc<Relay>,
    key: Option<[u8; 32]>,
    peer: SocketAddr,
    mut request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    if request.uri().path() != TUNNEL_PATH || request.method() != Method::POST {
        return refusal(StatusCode::NOT_FOUND, "this relay answers journals' tunnels only");
    }
    let upgrade = request.headers().get(header::UPGRADE).and_then(|v| v.to_str().ok());
    if upgrade != Some(TUNNEL_PROTOCOL) {
        return refusal(StatusCode::UPGRADE_REQUIRED, "a tunnel upgrades to journal-relay/1");
    }
    let Some(key) = key else {
        return refusal(
            StatusCode::UNAUTHORIZED,
            "no client certificate: a journal proves its key in the handshake",
        );
    };
    let name = request
        .headers()
        .get(NAME_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let Ok(name) = enrolments::name_of(name) else {
        return refusal(StatusCode::BAD_REQUEST, "the journal-name header is not a journal name");
    };
    let credential = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let replacing = relay.tunnels().contains_key(&name);
    if !replacing && relay.tunnels().len() >= relay.limits.journals {
        tracing::warn!(
            "refused journal {name}: {} journals are connected, the most this relay holds",
            relay.limits.journals
        );
        return refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "this relay holds as many journals as it may; try later",
        );
    }
    let admitted = {
        let _one_at_a_time = relay.admitting.lock().await;
        let (dir, name) = (relay.dir.clone(), name.clone());
        tokio::task::spawn_blocking(move || enrolments::admit(&dir, &name, &key, credential.as_deref())).await
    };
    match admitted {
        Ok(Ok(Ok(()))) => {}
        Ok(Ok(Err(refused))) => {
            tracing::info!(%peer, "refused a tunnel: {refused}");
            let status = match refused {
                Refusal::Unknown(_) => StatusCode::NOT_FOUND,
                Refusal::NoCredential(_) => StatusCode::UNAUTHORIZED,
                Refusal::OtherKey(_) | Refusal::WrongCredential(_) => StatusCode::FORBIDDEN,
            };
            return refusal(status, &refused.to_string());
        }
        Ok(Err(error)) => {
            tracing::warn!(%error, "could not read the enrolments");
            return refusal(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the relay could not read its enrolments",
            );
        }
        Err(_) => {
            return refusal(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the relay could not read its enrolments",
            );
        }
    }
    let upgrade = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        let Ok(upgraded) = upgrade.await else { return };
        let handshake = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
            .timer(TokioTimer::new())
            .keep_alive_interval(Duration::from_secs(30))
            .keep_alive_timeout(Duration::from_secs(20))
            .keep_alive_while_idle(true)
            .handshake(upgraded)
            .await;
        let Ok((sender, connection)) = handshake else {
            tracing::info!(%peer, "journal {name}: its tunnel ended before it began");
            return;
        };
        let id = relay.next_id.fetch_add(1, Ordering::Relaxed);
        let (relay_after, name_after) = (relay.clone(), name.clone());
        let task = tokio::spawn(async move {
            let _ = connection.await;
            let mut tunnels = relay_after.tunnels();
            if tunnels.get(&name_after).is_some_and(|t| t.id == id) {
                tunnels.remove(&name_after);
                tracing::info!("journal {name_after} disconnected");
            }
        });
        let tunnel = Tunnel {
            id,
            key,
            sender,
            streams: Arc::new(Semaphore::new(relay.limits.per_journal)),
            connection: task.abort_handle(),
        };
        if let Some(old) = relay.tunnels().insert(name.clone(), tunnel) {
            // The journal dialled again (a network change, a restart): the newer tunnel wins.
            old.connection.abort();
        }
        tracing::info!(%peer, "journal {name} connected");
    });
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::CONNECTION, "upgrade")
        .header(header::UPGRADE, TUNNEL_PROTOCOL)
        .body(Full::new(Bytes::new()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn both_ways_at_once_through_small_buffers_neither_side_holds_the_other() {
        // agent <-> relay's a | relay's b <-> journal, which echoes: the case where a relay that
        // waits to write one way while not reading the other would hang.
        let (mut agent, mut a) = tokio::io::duplex(1024);
        let (mut b, journal) = tokio::io::duplex(1024);
        tokio::spawn(async move {
            let (mut read, mut write) = tokio::io::split(journal);
            let _ = tokio::io::copy(&mut read, &mut write).await;
        });
        let relay = tokio::spawn(async move { pipe(&mut a, &mut b, Duration::from_secs(60)).await });
        let sent: Vec<u8> = (0..1_000_000u32).map(|n| (n % 251) as u8).collect();
        let (mut read, mut write) = tokio::io::split(&mut agent);
        let expected = sent.clone();
        let echoed = tokio::time::timeout(Duration::from_secs(60), async move {
            let writing = async {
                write.write_all(&sent).await.unwrap();
                write.shutdown().await.unwrap();
            };
            let mut back = Vec::new();
            let reading = read.read_to_end(&mut back);
            let (_, read) = tokio::join!(writing, reading);
            read.unwrap();
            back
        })
        .await
        .expect("a hang: the bytes did not come back");
        assert_eq!(echoed, expected);
        drop(agent);
        tokio::time::timeout(Duration::from_secs(10), relay)
            .await
            .unwrap()
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_with_no_byte_either_way_is_closed_when_idle() {
        let (_agent, mut a) = tokio::io::duplex(1024);
        let (mut b, _journal) = tokio::io::duplex(1024);
        let began = tokio::time::Instant::now();
        pipe(&mut a, &mut b, Duration::from_secs(300)).await;
        let waited = began.elapsed();
        assert!(
            waited >= Duration::from_secs(300) && waited < Duration::from_secs(310),
            "{waited:?}"
        );
    }
}
