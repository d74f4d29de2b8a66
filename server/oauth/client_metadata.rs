//! Client ID Metadata Documents: a client whose `client_id` is an https URL is described by the JSON
//! document at that URL, which the journal fetches instead of asking it to register.
//!
//! Fetching a URL that a stranger chose is a server-side request forgery risk, so the fetcher is
//! guarded: https only, no credentials in the URL, every address the name resolves to must be a
//! public unicast address (no loopback, private, link-local, shared, documentation or multicast
//! ranges), the connection goes to the vetted addresses themselves (no second lookup to rebind), no
//! redirects, at most 5 KB, 10 seconds in all. Fetching happens only while a pairing code is open.
//! Documents are cached in `oauth_clients` for their HTTP cache lifetime (1 minute to 1 day).

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use url::{Host, Url};

use super::{OAuthError, known_clients, store};
use crate::db::Pool;

/// The largest document accepted.
pub const MAX_DOCUMENT_BYTES: usize = 5 * 1024;
/// How long one fetch may take in all.
pub const FETCH_DEADLINE: Duration = Duration::from_secs(10);
const MIN_CACHE_SECONDS: i64 = 60;
const DEFAULT_CACHE_SECONDS: i64 = 60 * 60;
const MAX_CACHE_SECONDS: i64 = 24 * 60 * 60;

/// A fetched document and how long it may be cached.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub body: Vec<u8>,
    /// From Cache-Control: Some(0) for no-store / no-cache, None when not said.
    pub max_age: Option<i64>,
}

/// Fetches metadata documents. The server uses `HttpsFetcher`; tests substitute a fixture.
pub trait Fetcher: Send + Sync {
    fn fetch<'a>(&'a self, url: &'a Url) -> Pin<Box<dyn Future<Output = Result<Fetched, String>> + Send + 'a>>;
}

/// Whether an address may be fetched from: public unicast only.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT, VPNs)
                || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
                || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast
                || (a == 198 && (b == 18 || b == 19)) // benchmarking
                || a >= 240) // reserved
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            // Global unicast (2000::/3) only, so everything outside it (loopback, IPv4-compatible
            // `::a.b.c.d`, the discard prefix 100::/64, NAT64, unique local, link- and site-local,
            // multicast) is out by construction; then the special ranges inside it.
            let bits = u128::from(v6);
            let within = |prefix: u128, length: u32| bits >> (128 - length) == prefix >> (128 - length);
            within(0x2000 << 112, 3)
                && !(within(0x2001 << 112, 23) // IETF protocol assignments: Teredo, benchmarking, ORCHID
                    || within((0x2001 << 112) | (0x0db8 << 96), 32) // documentation
                    || within(0x2002 << 112, 16) // 6to4 (wraps IPv4 of any kind)
                    || within(0x3fff << 112, 20)) // documentation (RFC 9637)
        }
    }
}

/// Checks that a client id is a URL this server may fetch: https, a host, a path, no credentials,
/// no fragment, and, when the host is an address, a public one.
pub fn check_url(client_id: &str) -> Result<Url, String> {
    if client_id.len() > 2048 {
        return Err("the client_id URL is longer than 2048 bytes".into());
    }
    let url = Url::parse(client_id).map_err(|_| "the client_id is not a URL".to_string())?;
    if url.scheme() != "https" {
        return Err("a metadata document must be served over https".into());
    }
    if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
        return Err("the client_id URL must not hold credentials or a fragment".into());
    }
    if url.path() == "/" || url.path().is_empty() {
        return Err("the client_id URL must have a path".into());
    }
    match url.host() {
        Some(Host::Ipv4(ip)) if !is_public(IpAddr::V4(ip)) => Err("the client_id URL names a private address".into()),
        Some(Host::Ipv6(ip)) if !is_public(IpAddr::V6(ip)) => Err("the client_id URL names a private address".into()),
        // Trailing dots name the same host, fully qualified: `localhost.` is this computer too.
        Some(Host::Domain(name))
            if {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                name == "localhost" || name.ends_with(".localhost")
            } =>
        {
            Err("the client_id URL names this computer".into())
        }
        Some(_) => Ok(url),
        None => Err("the client_id URL has no host".into()),
    }
}

/// The host that vouches for a client's name: for a metadata-document client (its id an https
/// URL), that URL's host (`claude.ai`); None for a client registered here, which only named itself.
/// The consent page and the owner's connections page both show it.
pub fn document_host(client_id: &str) -> Option<String> {
    client_id
        .starts_with("https://")
        .then(|| super::redirect::host(client_id))
}

/// Reads the `max-age` of a Cache-Control header.
pub fn cache_seconds(cache_control: Option<&str>) -> Option<i64> {
    let value = cache_control?.to_ascii_lowercase();
    if value.split(',').any(|d| matches!(d.trim(), "no-store" | "no-cache")) {
        return Some(0);
    }
    value
        .split(',')
        .find_map(|d| d.trim().strip_prefix("max-age=").and_then(|n| n.parse().ok()))
}

/// A checked document: the client's name and the redirect URIs the allow list keeps.
pub fn check_document(client_id: &str, body: &[u8]) -> Result<(String, Vec<String>), String> {
    let document: Value = serde_json::from_slice(body).map_err(|_| "the metadata document is not JSON".to_string())?;
    if document.get("client_id").and_then(Value::as_str) != Some(client_id) {
        return Err("the metadata document's client_id differs from its URL".into());
    }
    if let Some(method) = document.get("token_endpoint_auth_method")
        && method != "none"
    {
        return Err("the metadata document asks for client authentication; only public clients are supported".into());
    }
    let registration = serde_json::json!({
        "client_name": document.get("client_name").cloned().unwrap_or(Value::Null),
        "redirect_uris": document.get("redirect_uris").cloned().unwrap_or(Value::Null),
    });
    let checked = super::registration::check(&registration).map_err(|e| e.description)?;
    Ok((checked.client_name, checked.redirect_uris))
}

/// Why a metadata document client could not be resolved.
#[derive(Debug)]
pub enum MetadataError {
    /// The URL or the document is not acceptable; the reason, for the page.
    Refused(String),
    /// The document could not be fetched (no network, DNS, TLS, a timeout, an HTTP error).
    Unreachable(String),
    /// The client table holds all it may (per source or in all).
    Full,
    /// The store failed.
    Store(OAuthError),
}

impl From<OAuthError> for MetadataError {
    fn from(error: OAuthError) -> MetadataError {
        MetadataError::Store(error)
    }
}

/// The client behind `client_id` when it is a metadata document URL: a client of the built-in
/// catalog without fetching; any other from the cache while fresh, else fetched, checked and cached
/// again. A client new to the table counts against the quota of `source`, the address that asked.
pub async fn resolve(
    pool: &Pool,
    fetcher: &dyn Fetcher,
    client_id: &str,
    source: &str,
    now: i64,
) -> Result<store::Client, MetadataError> {
    let url = check_url(client_id).map_err(MetadataError::Refused)?;
    if let Some(known) = known_clients::lookup(client_id) {
        return store::save_metadata_client(
            pool,
            client_id,
            known.name,
            &known.examples(),
            source,
            now,
            now + MAX_CACHE_SECONDS,
        )
        .await?
        .ok_or(MetadataError::Full);
    }
    if let Some(client) = store::cached_metadata_client(pool, client_id, now).await? {
        return Ok(client);
    }
    let fetched = fetcher.fetch(&url).await.map_err(MetadataError::Unreachable)?;
    let (name, redirect_uris) = check_document(client_id, &fetched.body).map_err(MetadataError::Refused)?;
    let seconds = fetched
        .max_age
        .unwrap_or(DEFAULT_CACHE_SECONDS)
        .clamp(MIN_CACHE_SECONDS, MAX_CACHE_SECONDS);
    store::save_metadata_client(pool, client_id, &name, &redirect_uris, source, now, now + seconds)
        .await?
        .ok_or(MetadataError::Full)
}

/// The real fetcher: https with the guards above.
pub struct HttpsFetcher {
    client: HttpClient<hyper_rustls::HttpsConnector<HttpConnector<PublicResolver>>, Empty<Bytes>>,
}

impl HttpsFetcher {
    /// The fetcher the server uses: it trusts the public web's certificate authorities.
    pub fn new() -> HttpsFetcher {
        HttpsFetcher::with_roots(rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        })
    }

    /// The same fetcher, with every guard, trusting only `roots`. For tests, which serve documents
    /// from a local https server under a certificate authority of their own (tests/it/fetcher.rs).
    pub fn with_roots(roots: rustls::RootCertStore) -> HttpsFetcher {
        let mut http = HttpConnector::new_with_resolver(PublicResolver);
        http.enforce_http(false);
        http.set_connect_timeout(Some(FETCH_DEADLINE));
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("the ring provider supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_only()
            .enable_http1()
            .wrap_connector(http);
        HttpsFetcher {
            client: HttpClient::builder(TokioExecutor::new()).build(https),
        }
    }
}

impl Default for HttpsFetcher {
    fn default() -> HttpsFetcher {
        HttpsFetcher::new()
    }
}

impl Fetcher for HttpsFetcher {
    fn fetch<'a>(&'a self, url: &'a Url) -> Pin<Box<dyn Future<Output = Result<Fetched, String>> + Send + 'a>> {
        Box::pin(async move {
            let request = hyper::Request::get(url.as_str())
                .header(hyper::header::ACCEPT, "application/json")
                .header(
                    hyper::header::USER_AGENT,
                    concat!("journal/", env!("CARGO_PKG_VERSION")),
                )
                .body(Empty::<Bytes>::new())
                .map_err(|e| e.to_string())?;
            let work = async {
                let response = self.client.request(request).await.map_err(|e| causes(&e))?;
                let status = response.status();
                if status.is_redirection() {
                    return Err("it answered with a redirect, which is not followed".to_string());
                }
                if !status.is_success() {
                    return Err(format!("it answered {status}"));
                }
                let cache = response
                    .headers()
                    .get(hyper::header::CACHE_CONTROL)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                let body = Limited::new(response.into_body(), MAX_DOCUMENT_BYTES)
                    .collect()
                    .await
                    .map_err(|e| {
                        if e.is::<http_body_util::LengthLimitError>() {
                            format!("it is larger than {MAX_DOCUMENT_BYTES} bytes")
                        } else {
                            format!("its body could not be read: {}", causes(&*e))
                        }
                    })?
                    .to_bytes();
                Ok(Fetched {
                    body: body.to_vec(),
                    max_age: cache_seconds(cache.as_deref()),
                })
            };
            tokio::time::timeout(FETCH_DEADLINE, work)
                .await
                .map_err(|_| "it took longer than 10 seconds".to_string())?
        })
    }
}

/// An error with its causes, so "client error (Connect)" says what failed underneath.
fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A resolver that answers only public addresses: a name with any other address is refused, so a
/// public name cannot be pointed at the journal's own network.
#[derive(Clone, Copy, Debug, Default)]
pub struct PublicResolver;

impl tower_service::Service<Name> for PublicResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        Box::pin(async move {
            let addresses: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            if addresses.is_empty() || addresses.iter().any(|a| !is_public(a.ip())) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!("{name} resolves to an address that is not public"),
                ));
            }
            Ok(addresses.into_iter())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.2.1",
            "198.51.100.1",
            "203.0.113.1",
            "198.18.0.1",
            "240.0.0.1",
            "192.0.0.8",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "::127.0.0.1",
            "::10.0.0.1",
            "2001::1",
            "2001:0:4136:e378::1",
            "2001:2::1",
            "2001:10::1",
            "2001:1ff::1",
            "fec0::1",
            "100::1",
            "3fff::1",
            "4000::1",
            "192.88.99.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in [
            "1.1.1.1",
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.1",
            "172.32.0.1",
            "2606:4700::1111",
            "2001:200::1",
            "2a00:1450:4001::200e",
            "3ffe::1",
            "::ffff:1.1.1.1",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn client_id_urls() {
        assert!(check_url("https://claude.ai/oauth/claude-code-client-metadata").is_ok());
        for bad in [
            "http://claude.ai/oauth/x",
            "https://claude.ai",
            "https://claude.ai/",
            "https://user@claude.ai/x",
            "https://claude.ai/x#f",
            "https://127.0.0.1/x",
            "https://[::1]/x",
            "https://10.0.0.1/x",
            "https://169.254.169.254/latest/meta-data",
            "https://localhost/x",
            "https://a.localhost/x",
            "https://localhost./x",
            "https://A.LocalHost./x",
            "https://localhost../x",
            "https://localhost.%2e/x",
            &format!("https://app.example/{}", "a".repeat(2048)),
            "not a url",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn documents_and_cache_headers() {
        let id = "https://app.example/client.json";
        let good = serde_json::json!({"client_id": id, "client_name": "App", "redirect_uris": ["http://localhost/cb", "https://evil.example/cb"]});
        let (name, uris) = check_document(id, good.to_string().as_bytes()).unwrap();
        assert_eq!((name.as_str(), uris), ("App", vec!["http://localhost/cb".to_string()]));
        let other =
            serde_json::json!({"client_id": "https://other.example/c", "redirect_uris": ["http://localhost/cb"]});
        assert!(
            check_document(id, other.to_string().as_bytes())
                .unwrap_err()
                .contains("differs")
        );
        let secret = serde_json::json!({"client_id": id, "redirect_uris": ["http://localhost/cb"], "token_endpoint_auth_method": "private_key_jwt"});
        assert!(check_document(id, secret.to_string().as_bytes()).is_err());
        assert!(check_document(id, b"<html>").is_err());
        assert_eq!(cache_seconds(Some("public, max-age=600")), Some(600));
        assert_eq!(cache_seconds(Some("no-store")), Some(0));
        assert_eq!(cache_seconds(None), None);
    }

    #[tokio::test]
    async fn the_real_fetcher_refuses_this_computer_before_connecting() {
        let fetcher = HttpsFetcher::new();
        for url in ["https://localhost:1/client.json", "https://127.0.0.1.nip.invalid/x"] {
            let url = Url::parse(url).unwrap();
            assert!(fetcher.fetch(&url).await.is_err(), "{url}");
        }
        let error = fetcher
            .fetch(&Url::parse("https://localhost:1/client.json").unwrap())
            .await
            .unwrap_err();
        assert!(error.contains("not public"), "{error}");
    }
}
