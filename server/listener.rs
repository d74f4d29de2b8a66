//! Serving one listener's connections: accept, the gate in front of HTTP, hyper, graceful drain.
//!
//! Connections are served by hyper directly rather than `axum::serve` because the limits an outsider
//! must not exceed live at this level: how large the request head may be and how long a client may
//! take to send it. A slow or oversized client costs one task, never the listener. On a TLS route
//! (`Gate::Tls`) the peer's address and the connection limits are checked before anything else,
//! and the handshake runs in the connection's own task under the same deadline as a request head.
//! Every route's listener (`server`, `lan`, `domain`) uses it; it knows no route.

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::ConnectInfo;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::lan::limits::ConnectionLimiter;
use crate::tls::private_range;
use crate::tls::serving::ACME_TLS_ALPN;

/// Limits on what one connection may send.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// The whole request head (request line and headers); larger heads get 431.
    pub max_head_bytes: usize,
    /// How long a client may take to send a request head, including the wait for the next request
    /// on a kept-alive connection (hyper times both with one timer). Longer than clients keep an idle
    /// connection themselves (httpx 5 s, Node 4 s): a client must drop an idle connection before the
    /// server does, or a request it sends as the server closes is lost without an answer.
    pub head_deadline: Duration,
    /// How long a TLS route's handshake may take.
    pub handshake_deadline: Duration,
    /// How long graceful shutdown waits for requests in flight.
    pub drain: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            max_head_bytes: 40 * 1024,
            head_deadline: Duration::from_secs(15),
            handshake_deadline: Duration::from_secs(5),
            drain: Duration::from_secs(10),
        }
    }
}

/// What stands between an accepted socket and HTTP.
#[derive(Clone)]
pub(crate) enum Gate {
    /// Loopback: plain HTTP (the Host guard of the local route does the rest).
    Plain,
    /// A TLS route: connection limits (and, on the LAN route, private peers only), then the
    /// handshake. A handshake for ACME's TLS-ALPN-01 challenge ends the connection.
    Tls {
        acceptor: tokio_rustls::TlsAcceptor,
        limiter: ConnectionLimiter,
        private_peers_only: bool,
    },
}

fn http(limits: ConnectionLimits) -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.head_deadline)
        .max_buf_size(limits.max_head_bytes)
        .keep_alive(true);
    builder
}

pub(crate) async fn accept_loop(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
    gate: Gate,
) {
    let graceful = GracefulShutdown::new();
    let http = http(limits);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|s| *s) => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Usually out of file descriptors: back off instead of spinning.
                tracing::warn!(%error, "could not accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        match &gate {
            Gate::Plain => {
                let service = with_peer(router.clone(), peer);
                let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
                tokio::spawn(async move {
                    // Errors here are a client's doing (a reset, a timeout, a malformed head) and are
                    // already answered or closed by hyper; they are not the server's to report.
                    let _ = connection.await;
                });
            }
            Gate::Tls {
                acceptor,
                limiter,
                private_peers_only,
            } => {
                // Refused before the handshake: on the LAN route a peer that is not on a private
                // network, and one more connection than the limits allow. Dropping the socket closes it.
                if *private_peers_only && !private_range::peer_allowed(peer.ip()) {
                    tracing::debug!(%peer, "refused a connection from outside the private ranges");
                    continue;
                }
                let Ok(admission) = limiter.admit(peer.ip()) else {
                    tracing::debug!(%peer, "refused a connection over the connection limits");
                    continue;
                };
                let (acceptor, watcher) = (acceptor.clone(), graceful.watcher());
                let router = router.clone();
                tokio::spawn(async move {
                    let _admission = admission;
                    serve_tls(stream, peer, &acceptor, router, limits, Some(watcher)).await;
                });
            }
        }
    }
    drop(listener);
    if tokio::time::timeout(limits.drain, graceful.shutdown()).await.is_err() {
        tracing::warn!("some requests were still running when the drain time ran out");
    }
}

/// Serves one TLS connection over `io` (an accepted socket, or a stream a relay handed over): the
/// handshake under the deadline, then HTTP/1.1 from `peer`. A handshake for ACME's TLS-ALPN-01
/// challenge ends the connection (the CA's validator needs nothing more, RFC 8737). With a
/// `watcher`, graceful shutdown waits for it.
pub(crate) async fn serve_tls<IO>(
    io: IO,
    peer: SocketAddr,
    acceptor: &tokio_rustls::TlsAcceptor,
    router: axum::Router,
    limits: ConnectionLimits,
    watcher: Option<hyper_util::server::graceful::Watcher>,
) where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let Ok(Ok(stream)) = tokio::time::timeout(limits.handshake_deadline, acceptor.accept(io)).await else {
        return;
    };
    if stream.get_ref().1.alpn_protocol() == Some(ACME_TLS_ALPN) {
        return;
    }
    let connection = http(limits).serve_connection(TokioIo::new(stream), with_peer(router, peer));
    let _ = match watcher {
        Some(watcher) => watcher.watch(connection).await,
        None => connection.await,
    };
}

/// The router as a hyper service that tells each request where it came from (per-source quotas).
fn with_peer(
    router: axum::Router,
    peer: SocketAddr,
) -> impl hyper::service::Service<
    hyper::Request<hyper::body::Incoming>,
    Response = axum::response::Response,
    Error = std::convert::Infallible,
    Future = impl Future<Output = Result<axum::response::Response, std::convert::Infallible>> + Send,
> + Clone {
    hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
        request.extensions_mut().insert(ConnectInfo(peer));
        let mut router = router.clone();
        tower_service::Service::call(&mut router, request.map(axum::body::Body::new))
    })
}
