//! The first bytes of a TLS connection, read without answering them: the ClientHello, whose server
//! name (SNI) tells the relay where the connection goes. The relay never terminates a journal's TLS,
//! so the bytes read are kept and replayed, first to the journal through its tunnel, or to the
//! relay's own TLS when the name is the relay's ([`Rewind`]). rustls parses the hello
//! (`rustls::server::Acceptor`): no hand-written TLS parsing.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

/// The most bytes read while looking for a complete ClientHello (a hello with many extensions and
/// a post-quantum key share is 2 to 3 KB; no client sends more than a few records of it).
pub const MAX_HELLO_BYTES: usize = 16 * 1024;

/// A ClientHello as read: its bytes and what the relay needs of it.
#[derive(Debug)]
pub struct Hello {
    pub bytes: Vec<u8>,
    /// The server name, lower-cased; None when the client sent none (an IP address).
    pub server_name: Option<String>,
}

/// Why no ClientHello was read.
#[derive(Debug, thiserror::Error)]
pub enum HelloError {
    #[error("the connection closed before its TLS hello")]
    Closed,
    #[error("not a TLS hello: {0}")]
    NotTls(String),
    #[error("the TLS hello is longer than {MAX_HELLO_BYTES} bytes")]
    TooLong,
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Reads from `stream` until a whole ClientHello has arrived.
pub async fn read_hello<S: AsyncRead + Unpin>(stream: &mut S) -> Result<Hello, HelloError> {
    let mut acceptor = rustls::server::Acceptor::default();
    let mut bytes = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Err(HelloError::Closed);
        }
        if bytes.len() + read > MAX_HELLO_BYTES {
            return Err(HelloError::TooLong);
        }
        bytes.extend_from_slice(&chunk[..read]);
        let mut fresh = &chunk[..read];
        while !fresh.is_empty() {
            acceptor
                .read_tls(&mut fresh)
                .map_err(|error| HelloError::NotTls(error.to_string()))?;
        }
        match acceptor.accept() {
            Ok(None) => continue,
            Ok(Some(accepted)) => {
                let server_name = accepted
                    .client_hello()
                    .server_name()
                    .map(|name| name.trim_end_matches('.').to_ascii_lowercase());
                return Ok(Hello { bytes, server_name });
            }
            Err((error, _)) => return Err(HelloError::NotTls(error.to_string())),
        }
    }
}

/// A stream whose first bytes are `prefix` (read from it before), then the rest of it.
#[derive(Debug)]
pub struct Rewind<S> {
    prefix: Vec<u8>,
    at: usize,
    inner: S,
}

impl<S> Rewind<S> {
    pub fn new(prefix: Vec<u8>, inner: S) -> Rewind<S> {
        Rewind { prefix, at: 0, inner }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Rewind<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if self.at < self.prefix.len() {
            let n = buf.remaining().min(self.prefix.len() - self.at);
            let at = self.at;
            buf.put_slice(&self.prefix[at..at + n]);
            self.at += n;
            if self.at == self.prefix.len() {
                self.prefix = Vec::new();
                self.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Rewind<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// A real client's hello, as rustls writes it for `name`.
    fn client_hello(name: &str) -> Vec<u8> {
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        let server_name = rustls::pki_types::ServerName::try_from(name.to_string()).unwrap();
        let mut client = rustls::ClientConnection::new(std::sync::Arc::new(config), server_name).unwrap();
        let mut bytes = Vec::new();
        client.write_tls(&mut bytes).unwrap();
        bytes
    }

    #[tokio::test]
    async fn the_server_name_is_read_across_small_pieces_and_every_byte_is_kept() {
        let hello = client_hello("Alice.Relay.example.org");
        let (mut write, mut read) = tokio::io::duplex(64);
        let sent = hello.clone();
        tokio::spawn(async move {
            // In pieces of 7 bytes, as a slow network would deliver it, then more bytes after.
            for piece in sent.chunks(7) {
                write.write_all(piece).await.unwrap();
            }
            write.write_all(b"after").await.unwrap();
        });
        let read_hello = read_hello(&mut read).await.unwrap();
        assert_eq!(read_hello.server_name.as_deref(), Some("alice.relay.example.org"));
        assert!(read_hello.bytes.starts_with(&hello));
        // What was read is replayed before the rest of the stream.
        let mut rewound = Rewind::new(read_hello.bytes, read);
        let mut all = Vec::new();
        rewound.read_to_end(&mut all).await.unwrap();
        assert_eq!(all, [hello.as_slice(), b"after"].concat());
    }

    #[tokio::test]
    async fn what_is_not_a_tls_hello_is_refused() {
        let mut http = &b"GET / HTTP/1.1\r\nHost: relay.example.org\r\n\r\n"[..];
        assert!(matches!(read_hello(&mut http).await, Err(HelloError::NotTls(_))));
        let hello = client_hello("alice.relay.example.org");
        let mut cut = &hello[..hello.len() / 2];
        assert!(matches!(read_hello(&mut cut).await, Err(HelloError::Closed)));
        // A record header that promises more than the limit: refused once the limit is passed.
        let mut endless = tokio::io::repeat(0x16);
        assert!(matches!(
            read_hello(&mut endless).await,
            Err(HelloError::TooLong | HelloError::NotTls(_))
        ));
    }
}
