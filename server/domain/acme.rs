//! ACME for the own-domain route, with instant-acme: the journal's account (made once per ACME
//! directory, kept in `<journal>/.tls/acme-account-<digest of the directory>.json`, 0600: it holds
//! the account's private key, which the server needs unattended; one file per directory, so trying
//! another CA never loses the account a CAA record names), the CA's CAA identity from the directory's `meta`, and one
//! order for the hostname, validated by TLS-ALPN-01 on the route's own listener.
//!
//! HTTP goes through hyper-rustls with the ring provider and the web's usual roots (webpki-roots),
//! plus one extra root when the owner names one (a private ACME CA, or a test server's).

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use instant_acme::{
    Account, AccountCredentials, AuthorizationStatus, BodyWrapper, BytesResponse, ChallengeType, Identifier,
    NewAccount, NewOrder, OrderStatus, RetryPolicy,
};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serde::{Deserialize, Serialize};

use crate::fsio;
use crate::tls::ca;
use crate::tls::serving::CertSlot;

/// Let's Encrypt's production directory, the default.
pub const LETS_ENCRYPT: &str = "https://acme-v02.api.letsencrypt.org/directory";
/// How long one ACME request may take.
const REQUEST_DEADLINE: Duration = Duration::from_secs(30);

/// Why an ACME step failed.
#[derive(Debug, thiserror::Error)]
pub enum AcmeError {
    #[error("{0}")]
    Acme(#[from] instant_acme::Error),
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("{0}")]
    Refused(String),
}

/// The account as the journal keeps it.
#[derive(Serialize, Deserialize)]
struct StoredAccount {
    directory: String,
    /// The account's URL: what the CAA record names.
    url: String,
    /// The CA's CAA identity, read from the directory when the account was made.
    caa_identity: String,
    credentials: AccountCredentials,
}

/// The account in use.
pub struct AcmeAccount {
    pub account: Account,
    pub url: String,
    pub caa_identity: String,
}

/// An HTTPS client for instant-acme: ring, webpki roots and an optional extra root.
pub struct AcmeHttp {
    client: HttpClient<hyper_rustls::HttpsConnector<HttpConnector>, BodyWrapper<Bytes>>,
    directory_client: HttpClient<hyper_rustls::HttpsConnector<HttpConnector>, Empty<Bytes>>,
}

impl AcmeHttp {
    /// `extra_root`: a PEM file of a CA to trust beside the web's (the ACME server's own).
    pub fn new(extra_root: Option<&Path>) -> Result<AcmeHttp, AcmeError> {
        let mut roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        if let Some(path) = extra_root {
            let refused = |message: String| AcmeError::File {
                path: path.to_path_buf(),
                message,
            };
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                .map_err(|e| refused(format!("cannot be read as PEM certificates: {e}")))?
                .collect::<Result<_, _>>()
                .map_err(|e| refused(format!("cannot be read as PEM certificates: {e}")))?;
            if certs.is_empty() {
                return Err(refused("holds no certificate".into()));
            }
            for cert in certs {
                roots
                    .add(cert)
                    .map_err(|e| refused(format!("is not a CA certificate rustls accepts: {e}")))?;
            }
        }
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| AcmeError::Refused(format!("the TLS settings were refused: {e}")))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let connector = || {
            let mut http = HttpConnector::new();
            http.enforce_http(false);
            http.set_connect_timeout(Some(REQUEST_DEADLINE));
            hyper_rustls::HttpsConnectorBuilder::new()
                .with_tls_config(tls.clone())
                .https_only()
                .enable_http1()
                .wrap_connector(http)
        };
        Ok(AcmeHttp {
            client: HttpClient::builder(TokioExecutor::new()).build(connector()),
            directory_client: HttpClient::builder(TokioExecutor::new()).build(connector()),
        })
    }

    /// The CA's CAA identity from the directory's `meta.caaIdentities` (RFC 8555 section 7.1.1),
    /// if it names one (Let's Encrypt's does; a test server's may not).
    pub async fn caa_identity(&self, directory: &str) -> Result<Option<String>, AcmeError> {
        let uri: hyper::Uri = directory
            .parse()
            .map_err(|_| AcmeError::Refused(format!("\"{directory}\" is not a URL")))?;
        let fetch = async {
            let response = self.directory_client.get(uri).await.map_err(|e| {
                AcmeError::Refused(format!(
                    "could not reach the ACME directory {directory}: {}",
                    causes(&e)
                ))
            })?;
            let status = response.status();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| AcmeError::Refused(format!("the ACME directory {directory} broke off: {e}")))?
                .to_bytes();
            if !status.is_success() {
                return Err(AcmeError::Refused(format!(
                    "the ACME directory {directory} answered {status}"
                )));
            }
            let document: serde_json::Value = serde_json::from_slice(&body)
                .map_err(|_| AcmeError::Refused(format!("{directory} is not an ACME directory")))?;
            Ok(document["meta"]["caaIdentities"][0].as_str().map(str::to_string))
        };
        tokio::time::timeout(REQUEST_DEADLINE, fetch)
            .await
            .map_err(|_| AcmeError::Refused(format!("the ACME directory {directory} did not answer in time")))?
    }
}

impl instant_acme::HttpClient for AcmeHttp {
    fn request(
        &self,
        request: hyper::Request<BodyWrapper<Bytes>>,
    ) -> Pin<Box<dyn Future<Output = Result<BytesResponse, instant_acme::Error>> + Send>> {
        let response = self.client.request(request);
        Box::pin(async move {
            match tokio::time::timeout(REQUEST_DEADLINE, response).await {
                Ok(Ok(response)) => Ok(BytesResponse::from(response)),
                Ok(Err(error)) => Err(instant_acme::Error::Other(causes(&error).into())),
                Err(_) => Err(instant_acme::Error::Str("the ACME server did not answer in time")),
            }
        })
    }
}

/// An error with its causes, as one line (hyper's own message is only "client error (Connect)").
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

fn account_path(journal_root: &Path, directory: &str) -> PathBuf {
    use sha2::Digest;
    let id: String = sha2::Sha256::digest(directory.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    ca::folder(journal_root).join(format!("acme-account-{id}.json"))
}

/// The account's URL and the CA's CAA identity as stored, without asking the ACME server (the
/// route's CAA check runs every minute and must not depend on the CA answering). None until an
/// account is made for this directory.
pub fn stored(journal_root: &Path, directory: &str) -> Result<Option<(String, String)>, AcmeError> {
    Ok(read(journal_root, directory)?.map(|stored| (stored.url, stored.caa_identity)))
}

fn read(journal_root: &Path, directory: &str) -> Result<Option<StoredAccount>, AcmeError> {
    let path = account_path(journal_root, directory);
    match std::fs::read(&path) {
        Ok(bytes) => {
            // A copy or a restore may have widened its mode: it holds the account's key.
            ca::tighten(&path, 0o600).map_err(|e| AcmeError::File {
                path: path.clone(),
                message: e.to_string(),
            })?;
            serde_json::from_slice::<StoredAccount>(&bytes)
                .map_err(|e| AcmeError::File {
                    path: path.clone(),
                    message: format!("not an ACME account this journal wrote: {e}"),
                })
                .map(|stored| Some(stored).filter(|stored| stored.directory == directory))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(AcmeError::File {
            path,
            message: e.to_string(),
        }),
    }
}

/// The journal's account at `directory`: the stored one, else a new one (agreeing to the CA's
/// terms, with `email` as its contact), stored before it is used. `caa_identity` is the owner's
/// word for the CA's CAA identity, for a directory that does not name its own.
pub async fn account(
    journal_root: &Path,
    directory: &str,
    email: Option<&str>,
    caa_identity: Option<&str>,
    http: AcmeHttp,
) -> Result<AcmeAccount, AcmeError> {
    if let Some(stored) = read(journal_root, directory)? {
        let account = Account::builder_with_http(Box::new(http))
            .from_credentials(stored.credentials)
            .await?;
        return Ok(AcmeAccount {
            account,
            url: stored.url,
            caa_identity: caa_identity.map_or(stored.caa_identity, str::to_string),
        });
    }
    let caa_identity = match (caa_identity, http.caa_identity(directory).await?) {
        (Some(given), _) => given.to_string(),
        (None, Some(named)) => named,
        (None, None) => {
            return Err(AcmeError::Refused(format!(
                "the ACME directory {directory} does not name its CAA identity: pass --caa-identity (the domain its CAA records use)"
            )));
        }
    };
    let contact = email.map(|email| format!("mailto:{email}"));
    let contacts: Vec<&str> = contact.iter().map(String::as_str).collect();
    let (account, credentials) = Account::builder_with_http(Box::new(http))
        .create(
            &NewAccount {
                contact: &contacts,
                terms_of_service_agreed: true,
                only_return_existing: false,
            },
            directory.to_string(),
            None,
        )
        .await?;
    let url = account.id().to_string();
    let stored = StoredAccount {
        directory: directory.to_string(),
        url: url.clone(),
        caa_identity: caa_identity.clone(),
        credentials,
    };
    let path = account_path(journal_root, directory);
    let file_error = |message: String| AcmeError::File {
        path: path.clone(),
        message,
    };
    let json = serde_json::to_vec_pretty(&stored).map_err(|e| file_error(e.to_string()))?;
    fsio::create_dir_all_durable(&ca::folder(journal_root)).map_err(|e| file_error(e.to_string()))?;
    // The file holds the account's key: written private from the start.
    fsio::write_atomic(&path, &json).map_err(|e| file_error(e.to_string()))?;
    fsio::make_private(&path).map_err(|e| file_error(e.to_string()))?;
    Ok(AcmeAccount {
        account,
        url,
        caa_identity,
    })
}

/// A certificate the CA issued: the chain (leaf first) and its key, in PEM.
pub struct Issued {
    pub chain_pem: String,
    pub key_pem: String,
}

/// Orders a certificate for `hostname`, answering TLS-ALPN-01 through `slot` on the route's
/// listener (which must be serving).
pub async fn order(account: &Account, hostname: &str, slot: &CertSlot) -> Result<Issued, AcmeError> {
    let identifiers = [Identifier::Dns(hostname.to_string())];
    let mut order = account.new_order(&NewOrder::new(&identifiers)).await?;
    // The challenge certificate goes when the order ends, however it ends (an error, or the server
    // stopping in the middle and dropping this future).
    let _clear = ClearChallenge { slot, hostname };
    validate_and_finalize(&mut order, hostname, slot).await
}

struct ClearChallenge<'a> {
    slot: &'a CertSlot,
    hostname: &'a str,
}

impl Drop for ClearChallenge<'_> {
    fn drop(&mut self) {
        self.slot.clear_challenge(self.hostname);
    }
}

async fn validate_and_finalize(
    order: &mut instant_acme::Order,
    hostname: &str,
    slot: &CertSlot,
) -> Result<Issued, AcmeError> {
    let mut authorizations = order.authorizations();
    while let Some(authorization) = authorizations.next().await {
        let mut authorization = authorization?;
        match authorization.status {
            AuthorizationStatus::Pending => {}
            AuthorizationStatus::Valid => continue,
            other => {
                return Err(AcmeError::Refused(format!(
                    "the CA's authorization for {hostname} is {other:?}"
                )));
            }
        }
        let mut challenge = authorization.challenge(ChallengeType::TlsAlpn01).ok_or_else(|| {
            AcmeError::Refused("the CA offers no TLS-ALPN-01 challenge, the only one this route answers".into())
        })?;
        let digest = challenge.key_authorization().digest();
        let (cert_der, key_der) = challenge_certificate(hostname, digest.as_ref())?;
        slot.set_challenge(hostname, cert_der, key_der)
            .map_err(|e| AcmeError::Refused(e.to_string()))?;
        challenge.set_ready().await?;
    }
    let polling = RetryPolicy::new().timeout(Duration::from_secs(90));
    let status = order.poll_ready(&polling).await?;
    if status != OrderStatus::Ready {
        return Err(AcmeError::Refused(format!(
            "the CA did not validate {hostname} (the order is {status:?}): can it reach this computer at {hostname}, port 443?"
        )));
    }
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
        .map_err(|e| AcmeError::Refused(format!("no key for {hostname}: {e}")))?;
    let params = rcgen::CertificateParams::new(vec![hostname.to_string()])
        .map_err(|e| AcmeError::Refused(format!("no certificate request for {hostname}: {e}")))?;
    let csr = params
        .serialize_request(&key)
        .map_err(|e| AcmeError::Refused(format!("no certificate request for {hostname}: {e}")))?;
    order.finalize_csr(csr.der()).await?;
    let chain_pem = order.poll_certificate(&polling).await?;
    Ok(Issued {
        chain_pem,
        key_pem: key.serialize_pem(),
    })
}

/// The TLS-ALPN-01 certificate (RFC 8737): self-signed, for the hostname, with the critical
/// acmeIdentifier extension holding the SHA-256 of the key authorization. DER and PKCS#8 key.
pub fn challenge_certificate(hostname: &str, digest: &[u8]) -> Result<(Vec<u8>, Vec<u8>), AcmeError> {
    let fail = |e: rcgen::Error| AcmeError::Refused(format!("no challenge certificate for {hostname}: {e}"));
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).map_err(fail)?;
    let mut params = rcgen::CertificateParams::new(vec![hostname.to_string()]).map_err(fail)?;
    params.custom_extensions = vec![rcgen::CustomExtension::new_acme_identifier(digest)];
    let cert = params.self_signed(&key).map_err(fail)?;
    Ok((cert.der().to_vec(), key.serialize_der()))
}
