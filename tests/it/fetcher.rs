//! The real client ID metadata document fetcher (`client_metadata::HttpsFetcher`) against a real
//! https server on 127.0.0.1: redirects are not followed, a document of exactly the size limit is
//! taken and one byte more is not, a body trickled slower than the deadline is cut off at the
//! deadline, and a host name that resolves to loopback is refused before anything is dialled.
//!
//! The fetcher is built with `HttpsFetcher::with_roots` so that it trusts a certificate authority
//! made here; every guard is the production one. The documents are served at `127.0.0.1` written
//! as an address: the connector dials an address in the URL without asking the resolver, which is
//! the only guard of the fetcher itself against private addresses; in the server, `check_url`
//! refuses such a URL before the fetcher is called (the tests assert that too). A host *name*
//! goes through the resolver, and `localhost` is refused there.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use journal::oauth::client_metadata::{
    FETCH_DEADLINE, Fetched, Fetcher, HttpsFetcher, MAX_DOCUMENT_BYTES, check_document, check_url,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use url::Url;

/// How long a test server lives at most, whatever happens to the test.
const SERVER_LIFETIME: Duration = Duration::from_secs(30);
/// How long a test server waits on one read or write of a connection.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// A certificate authority of the test's own and a leaf it signed for `localhost` and 127.0.0.1.
struct Pki {
    roots: rustls::RootCertStore,
    server: Arc<rustls::ServerConfig>,
}

fn pki() -> Pki {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    let ca_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.distinguished_name.push(DnType::CommonName, "fetcher test CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
    let leaf_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut leaf_params = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    leaf_params.distinguished_name.push(DnType::CommonName, "localhost");
    let leaf = leaf_params.signed_by(&leaf_key, &*ca).unwrap();

    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.as_ref().der().clone()).unwrap();
    let chain: Vec<CertificateDer<'static>> = vec![leaf.der().clone()];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let server = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    Pki {
        roots,
        server: Arc::new(server),
    }
}

/// What the server answers to a path.
enum Reply {
    /// A whole response: status line, extra headers and body, sent with Content-Length.
    Full {
        status: &'static str,
        headers: Vec<String>,
        body: Vec<u8>,
    },
    /// Headers promising `length` bytes, then only `body` and the end of the connection.
    Truncated { length: usize, body: Vec<u8> },
    /// A body without a length, in these chunks (`Transfer-Encoding: chunked`).
    Chunked(Vec<Vec<u8>>),
    /// Headers promising `length` bytes, then one byte every `every` until the client leaves, the
    /// server stops or `length` bytes are sent.
    Trickle { length: usize, every: Duration },
}

type Answer = dyn Fn(&str) -> Reply + Send + Sync;

/// A one-thread https server on an ephemeral port of 127.0.0.1. It serves one connection at a
/// time and stops by itself when dropped or after `SERVER_LIFETIME`.
struct Server {
    addr: SocketAddr,
    /// The paths asked for, in order.
    requests: Arc<Mutex<Vec<String>>>,
    /// Connections accepted (TLS or not).
    connections: Arc<AtomicUsize>,
    /// Body bytes of `Reply::Trickle` that were written.
    trickled: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    fn start(tls: Arc<rustls::ServerConfig>, answer: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let trickled = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let answer: Arc<Answer> = Arc::new(answer);
        let thread = std::thread::spawn({
            let (requests, connections, trickled, stop) =
                (requests.clone(), connections.clone(), trickled.clone(), stop.clone());
            move || {
                let end = Instant::now() + SERVER_LIFETIME;
                let over = || stop.load(Ordering::SeqCst) || Instant::now() >= end;
                while !over() {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            connections.fetch_add(1, Ordering::SeqCst);
                            // A failed connection (the client gave up) is the client's business.
                            let _ = serve(stream, &tls, &*answer, &requests, &trickled, &over);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(10))
                        }
                        Err(e) => panic!("accept: {e}"),
                    }
                }
            }
        });
        Server {
            addr,
            requests,
            connections,
            trickled,
            stop,
            thread: Some(thread),
        }
    }

    /// `https://127.0.0.1:<port><path>`.
    fn url(&self, path: &str) -> Url {
        Url::parse(&format!("https://{}{path}", self.addr)).unwrap()
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let joined = thread.join();
            if !std::thread::panicking() {
                joined.unwrap();
            }
        }
    }
}

/// Serves one request on one connection, then closes it.
fn serve(
    stream: TcpStream,
    tls: &Arc<rustls::ServerConfig>,
    answer: &Answer,
    requests: &Mutex<Vec<String>>,
    trickled: &AtomicUsize,
    over: &dyn Fn() -> bool,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let connection = rustls::ServerConnection::new(tls.clone()).map_err(std::io::Error::other)?;
    let mut stream = rustls::StreamOwned::new(connection, stream);
    // The request head, at most 8 KiB.
    let mut head = Vec::new();
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = stream.read(&mut buffer)?;
        if read == 0 || head.len() > 8 * 1024 {
            return Ok(());
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1).unwrap_or_default().to_string();
    requests.lock().unwrap().push(path.clone());
    match answer(&path) {
        Reply::Full { status, headers, body } => {
            let mut response = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for header in headers {
                response.push_str(&header);
                response.push_str("\r\n");
            }
            response.push_str("\r\n");
            stream.write_all(response.as_bytes())?;
            stream.write_all(&body)?;
        }
        Reply::Truncated { length, body } => {
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
            );
            stream.write_all(response.as_bytes())?;
            stream.write_all(&body)?;
        }
        Reply::Chunked(chunks) => {
            stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
            )?;
            for chunk in chunks {
                stream.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())?;
                stream.write_all(&chunk)?;
                stream.write_all(b"\r\n")?;
                stream.flush()?;
            }
            stream.write_all(b"0\r\n\r\n")?;
        }
        Reply::Trickle { length, every } => {
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
            );
            stream.write_all(response.as_bytes())?;
            stream.flush()?;
            // Bounded: at most `length` bytes, and never past the server's end.
            for _ in 0..length {
                if over() {
                    return Ok(());
                }
                std::thread::sleep(every);
                stream.write_all(b" ")?;
                stream.flush()?;
                trickled.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    stream.flush()?;
    stream.conn.send_close_notify();
    stream.flush()
}

/// A valid metadata document for `client_id`, padded with spaces to exactly `size` bytes.
fn document(client_id: &Url, name: &str, size: usize) -> Vec<u8> {
    let mut body = serde_json::json!({
        "client_id": client_id.as_str(),
        "client_name": name,
        "redirect_uris": ["http://127.0.0.1/callback"],
        "token_endpoint_auth_method": "none",
    })
    .to_string()
    .into_bytes();
    assert!(body.len() <= size, "the document is already {} bytes", body.len());
    body.resize(size, b' ');
    body
}

fn json(body: Vec<u8>) -> Reply {
    Reply::Full {
        status: "200 OK",
        headers: vec![
            "Content-Type: application/json".into(),
            "Cache-Control: max-age=600".into(),
        ],
        body,
    }
}

fn not_found() -> Reply {
    Reply::Full {
        status: "404 Not Found",
        headers: Vec::new(),
        body: Vec::new(),
    }
}

/// Fetches `url` with the real fetcher, bounded well past its own deadline so that a fetcher that
/// ignores its deadline fails the test instead of hanging it.
async fn fetch(fetcher: &HttpsFetcher, url: &Url) -> Result<Fetched, String> {
    tokio::time::timeout(FETCH_DEADLINE + Duration::from_secs(5), fetcher.fetch(url))
        .await
        .unwrap_or_else(|_| panic!("the fetch of {url} outlived its deadline of {FETCH_DEADLINE:?}"))
}

/// The server refuses the address URLs these tests fetch before any fetcher sees them.
fn assert_check_url_refuses(url: &Url) {
    assert_eq!(
        check_url(url.as_str()).unwrap_err(),
        "the client_id URL names a private address",
        "{url}"
    );
}

/// A 3xx answer is an error, whatever its kind, and its Location is not asked for; the document
/// the redirects point at is served to a direct fetch.
#[tokio::test]
async fn redirects_are_not_followed() {
    let pki = pki();
    let target = Arc::new(Mutex::new(None::<Url>));
    let server = Server::start(pki.server.clone(), {
        let target = target.clone();
        move |path| {
            let target = target.lock().unwrap().clone().unwrap();
            match path {
                "/client.json" => json(document(&target, "Redirect Target", 300)),
                "/301" | "/302" | "/303" | "/307" | "/308" => Reply::Full {
                    status: match path {
                        "/301" => "301 Moved Permanently",
                        "/302" => "302 Found",
                        "/303" => "303 See Other",
                        "/307" => "307 Temporary Redirect",
                        _ => "308 Permanent Redirect",
                    },
                    headers: vec![format!("Location: {target}")],
                    body: Vec::new(),
                },
                _ => not_found(),
            }
        }
    });
    let client_json = server.url("/client.json");
    *target.lock().unwrap() = Some(client_json.clone());
    let fetcher = HttpsFetcher::with_roots(pki.roots.clone());

    for status in ["/301", "/302", "/303", "/307", "/308"] {
        let url = server.url(status);
        assert_check_url_refuses(&url);
        let error = fetch(&fetcher, &url).await.unwrap_err();
        assert_eq!(error, "it answered with a redirect, which is not followed", "{status}");
    }
    assert_eq!(
        server.requests(),
        ["/301", "/302", "/303", "/307", "/308"],
        "no Location was followed"
    );

    // The target itself is fetched and is a good document: the refusals were the redirects'.
    let fetched = fetch(&fetcher, &client_json).await.unwrap();
    let (name, _) = check_document(client_json.as_str(), &fetched.body).unwrap();
    assert_eq!(name, "Redirect Target");
}

/// A body of exactly `MAX_DOCUMENT_BYTES` is taken and checks as a document; one byte more is
/// refused, whether the body has a Content-Length or comes in chunks that cross the limit. A body
/// that ends early is refused as such.
#[tokio::test]
async fn a_document_of_exactly_the_limit_is_taken_and_one_byte_more_is_not() {
    assert_eq!(MAX_DOCUMENT_BYTES, 5 * 1024, "the limit these tests are about");
    let pki = pki();
    let base = Arc::new(Mutex::new(None::<Url>));
    let server = Server::start(pki.server.clone(), {
        let base = base.clone();
        move |path| {
            let url = base.lock().unwrap().clone().unwrap().join(path).unwrap();
            match path {
                "/exact.json" => json(document(&url, "Exact Fit", MAX_DOCUMENT_BYTES)),
                "/over.json" => json(document(&url, "One Over", MAX_DOCUMENT_BYTES + 1)),
                "/exact-chunked.json" => {
                    let body = document(&url, "Exact Chunks", MAX_DOCUMENT_BYTES);
                    Reply::Chunked(body.chunks(1000).map(<[u8]>::to_vec).collect())
                }
                "/over-chunked.json" => {
                    let body = document(&url, "Chunks Over", MAX_DOCUMENT_BYTES + 1);
                    Reply::Chunked(body.chunks(1000).map(<[u8]>::to_vec).collect())
                }
                "/truncated.json" => Reply::Truncated {
                    length: 300,
                    body: document(&url, "Cut Short", 300)[..100].to_vec(),
                },
                _ => not_found(),
            }
        }
    });
    *base.lock().unwrap() = Some(server.url("/"));
    let fetcher = HttpsFetcher::with_roots(pki.roots.clone());

    for (path, name) in [("/exact.json", "Exact Fit"), ("/exact-chunked.json", "Exact Chunks")] {
        let url = server.url(path);
        assert_check_url_refuses(&url);
        let fetched = fetch(&fetcher, &url).await.unwrap();
        assert_eq!(fetched.body.len(), MAX_DOCUMENT_BYTES, "{path}");
        let (parsed, redirect_uris) = check_document(url.as_str(), &fetched.body).unwrap();
        assert_eq!(parsed, name, "{path}");
        assert_eq!(redirect_uris, ["http://127.0.0.1/callback"], "{path}");
        if path == "/exact.json" {
            assert_eq!(fetched.max_age, Some(600), "Cache-Control is read");
        }
    }
    for path in ["/over.json", "/over-chunked.json"] {
        let error = fetch(&fetcher, &server.url(path)).await.unwrap_err();
        assert_eq!(error, format!("it is larger than {MAX_DOCUMENT_BYTES} bytes"), "{path}");
    }
    // A body cut short, well under the limit, is an error of its own, not "larger than".
    let error = fetch(&fetcher, &server.url("/truncated.json")).await.unwrap_err();
    assert!(
        error.starts_with("its body could not be read: ") && !error.contains("larger"),
        "{error}"
    );
    assert_eq!(
        server.requests(),
        [
            "/exact.json",
            "/exact-chunked.json",
            "/over.json",
            "/over-chunked.json",
            "/truncated.json"
        ]
    );
}

/// Headers at once, then a body of one byte every 200 ms (never idle for long, so only a deadline
/// on the whole fetch stops it): refused at the deadline, not before and not much after.
#[tokio::test]
async fn a_body_trickled_slower_than_the_deadline_is_cut_off_at_the_deadline() {
    let pki = pki();
    let every = Duration::from_millis(200);
    // Enough bytes to take three deadlines; the server stops sooner when the fetcher leaves.
    let length = (3 * FETCH_DEADLINE.as_millis() / every.as_millis()) as usize;
    let server = Server::start(pki.server.clone(), move |path| match path {
        "/slow.json" => Reply::Trickle { length, every },
        _ => not_found(),
    });
    let fetcher = HttpsFetcher::with_roots(pki.roots.clone());
    let url = server.url("/slow.json");
    assert_check_url_refuses(&url);

    let started = Instant::now();
    let error = fetch(&fetcher, &url).await.unwrap_err();
    let took = started.elapsed();
    assert_eq!(error, "it took longer than 10 seconds");
    assert!(took >= FETCH_DEADLINE, "refused after {took:?}, before the deadline");
    assert!(
        took < FETCH_DEADLINE + Duration::from_secs(2),
        "refused after {took:?}, well past the deadline"
    );
    let trickled = server.trickled.load(Ordering::SeqCst);
    assert!(
        trickled >= 10 && trickled < length,
        "the body was arriving when the fetcher gave up ({trickled} of {length} bytes)"
    );
    assert_eq!(server.requests(), ["/slow.json"]);
}

/// A host name that resolves to loopback is refused by the fetcher's resolver: nothing connects to
/// the server behind it, although that server has a certificate for the name and is reachable by
/// its address.
#[tokio::test]
async fn a_name_that_resolves_to_loopback_is_refused_before_connecting() {
    let pki = pki();
    let base = Arc::new(Mutex::new(None::<Url>));
    let server = Server::start(pki.server.clone(), {
        let base = base.clone();
        move |path| {
            let url = base.lock().unwrap().clone().unwrap().join(path).unwrap();
            match path {
                "/client.json" => json(document(&url, "Behind Localhost", 300)),
                _ => not_found(),
            }
        }
    });
    let port = server.addr.port();
    let fetcher = HttpsFetcher::with_roots(pki.roots.clone());

    // `localhost` is 127.0.0.1 in /etc/hosts; the name goes to the resolver, which refuses it.
    let url = Url::parse(&format!("https://localhost:{port}/client.json")).unwrap();
    *base.lock().unwrap() = Some(url.join("/").unwrap());
    let error = fetch(&fetcher, &url).await.unwrap_err();
    assert!(
        error.contains("localhost resolves to an address that is not public"),
        "{url}: {error}"
    );
    assert_eq!(server.connections.load(Ordering::SeqCst), 0, "{url} was dialled");
    // And the server's own check refuses the name before the fetcher is asked.
    assert_eq!(
        check_url(url.as_str()).unwrap_err(),
        "the client_id URL names this computer"
    );

    // The same server, certificate and fetcher, by address: it serves, so the refusal above was the
    // resolver's.
    let by_address = server.url("/client.json");
    *base.lock().unwrap() = Some(server.url("/"));
    let fetched = fetch(&fetcher, &by_address).await.unwrap();
    let (name, _) = check_document(by_address.as_str(), &fetched.body).unwrap();
    assert_eq!(name, "Behind Localhost");
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
}
