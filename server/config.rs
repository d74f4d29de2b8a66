//! Settings: the journal folder and the optional `journal.toml` inside it, resolved once into
//! checked values. Flags win over the environment, which wins over the file, which wins over defaults.
//!
//! `journal route enable|disable` change the file through `edit`, which keeps the owner's comments
//! and layout (toml_edit) and writes nothing that would not be read back.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::fsio;
use crate::tls::private_range;

/// The default address of the local route.
pub const DEFAULT_LOCAL_ADDR: &str = "127.0.0.1:7659";
/// The LAN route's port unless the owner names another.
pub const DEFAULT_LAN_PORT: u16 = 7660;

/// `journal.toml`, as far as this version reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSettings {
    #[serde(default)]
    pub local: LocalSettings,
    #[serde(default)]
    pub lan: LanSettings,
    #[serde(default)]
    pub domain: DomainSettings,
    #[serde(default)]
    pub proxy: ProxySettings,
    #[serde(default)]
    pub relay: RelaySettings,
    /// `[notes]`: where the owner's vault is (read by `journal::notes::location`).
    #[serde(default)]
    pub notes: crate::journal::notes::NotesSettings,
}

/// `[domain]`: the route at the owner's own hostname, with an ACME certificate; off unless enabled.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainSettings {
    #[serde(default)]
    pub enabled: bool,
    pub hostname: Option<String>,
    /// Where to listen; `[::]:443` (every address, IPv4 and IPv6) unless given.
    pub listen: Option<String>,
    /// The port agents use, when a router forwards it to another `listen` port; 443 unless given.
    pub public_port: Option<u16>,
    /// The ACME directory; Let's Encrypt's unless given.
    pub acme_directory: Option<String>,
    /// A contact address for the ACME account (the CA writes about expiring certificates).
    pub email: Option<String>,
    /// The DNS server (IP or IP:PORT) for the route's checks; the system's unless given.
    pub resolver: Option<String>,
    /// A PEM file of a CA to trust for the ACME server, beside the web's usual ones.
    pub acme_root: Option<PathBuf>,
    /// The CA's CAA identity, for a directory that does not name its own.
    pub caa_identity: Option<String>,
}

/// `[proxy]`: the route behind a tunnel or reverse proxy the owner runs (Tailscale Funnel,
/// Cloudflare Tunnel, Caddy), which terminates TLS and forwards to a loopback port; off unless
/// enabled.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxySettings {
    #[serde(default)]
    pub enabled: bool,
    /// The HTTPS URL agents use, the tunnel's (`https://journal.tail1234.ts.net`).
    pub public_url: Option<String>,
    /// The loopback address the tunnel forwards to; 127.0.0.1:7661 unless given.
    pub listen: Option<String>,
}

/// The proxy route's checked settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyPlan {
    pub hostname: String,
    /// The port in the public URL (443 unless it names another).
    pub public_port: u16,
    pub listen: SocketAddr,
}

/// `[relay]`: the route through a relay the owner runs (`journal relay serve` on a server); off
/// unless enabled.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelaySettings {
    #[serde(default)]
    pub enabled: bool,
    /// The relay's own hostname, with its port when not 443.
    pub relay: Option<String>,
    /// This journal's name there: agents reach it at `NAME.<relay host>`.
    pub name: Option<String>,
    /// Where to reach the relay instead of asking DNS (IP:PORT each): one tunnel to each.
    #[serde(default)]
    pub addresses: Vec<String>,
    /// A PEM file of a CA to trust for the relay's own certificate.
    pub relay_root: Option<PathBuf>,
    pub acme_directory: Option<String>,
    pub email: Option<String>,
    pub acme_root: Option<PathBuf>,
    pub caa_identity: Option<String>,
}

/// The relay route's checked settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayRoutePlan {
    pub relay_host: String,
    pub relay_port: u16,
    pub name: String,
    /// The relays' addresses as given; empty: every address the relay's name resolves to.
    pub addresses: Vec<SocketAddr>,
    pub relay_root: Option<PathBuf>,
    pub directory: String,
    pub email: Option<String>,
    pub acme_root: Option<PathBuf>,
    pub caa_identity: Option<String>,
}

impl RelayRoutePlan {
    /// The name agents use: `NAME.<relay host>`.
    pub fn hostname(&self) -> String {
        format!("{}.{}", self.name, self.relay_host)
    }

    /// Where its certificates come from.
    pub fn acme(&self) -> crate::domain::keeper::AcmeSettings {
        crate::domain::keeper::AcmeSettings {
            directory: self.directory.clone(),
            email: self.email.clone(),
            acme_root: self.acme_root.clone(),
            caa_identity: self.caa_identity.clone(),
        }
    }
}

/// The default address the proxy route listens on, for the tunnel to forward to.
pub const DEFAULT_PROXY_LISTEN: &str = "127.0.0.1:7661";

/// The default listening address of the domain route.
pub const DEFAULT_DOMAIN_LISTEN: &str = "[::]:443";

/// The own-domain route's checked settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPlan {
    pub hostname: String,
    pub listen: SocketAddr,
    /// The port in the route's URLs (443 unless a forward says otherwise).
    pub public_port: u16,
    pub directory: String,
    pub email: Option<String>,
    /// None: the system's resolver.
    pub resolver: Option<SocketAddr>,
    pub acme_root: Option<PathBuf>,
    pub caa_identity: Option<String>,
}

impl DomainPlan {
    /// Where its certificates come from.
    pub fn acme(&self) -> crate::domain::keeper::AcmeSettings {
        crate::domain::keeper::AcmeSettings {
            directory: self.directory.clone(),
            email: self.email.clone(),
            acme_root: self.acme_root.clone(),
            caa_identity: self.caa_identity.clone(),
        }
    }
}

/// `[lan]`: the route over the owner's private network or VPN; off unless enabled.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LanSettings {
    #[serde(default)]
    pub enabled: bool,
    /// One private address and port to serve; without it, every private address of this computer
    /// on port 7660.
    pub addr: Option<String>,
}

/// Where the LAN route listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LanPlan {
    /// Every private address of this computer, on this port, following them as they change.
    Every { port: u16 },
    /// Exactly this address.
    One(SocketAddr),
}

/// `[local]`: the loopback route.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalSettings {
    /// Address to listen on; must be a loopback address.
    pub addr: Option<String>,
}

/// Why settings were refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("{0}")]
    Invalid(String),
}

/// The journal folder: the flag (or JOURNAL_HOME, which clap fills in), else the user's data folder.
pub fn journal_dir(flag: Option<PathBuf>) -> Result<PathBuf, ConfigError> {
    match flag {
        Some(dir) => Ok(dir),
        None => Ok(data_dir()?.join("journal")),
    }
}

/// The user's data folder: `$XDG_DATA_HOME`, else `~/.local/share`. The default journal, the demo
/// journal and the list of running servers live there.
pub fn data_dir() -> Result<PathBuf, ConfigError> {
    if let Some(data) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(data));
    }
    let home = std::env::var_os("HOME").filter(|v| !v.is_empty()).ok_or_else(|| {
        ConfigError::Invalid(
            "no journal folder given and HOME is not set: pass --journal DIR or set JOURNAL_HOME".into(),
        )
    })?;
    Ok(PathBuf::from(home).join(".local/share"))
}

/// Reads `journal.toml` from the journal folder; a missing file means defaults.
pub fn read_file(journal: &Path) -> Result<FileSettings, ConfigError> {
    let path = journal.join("journal.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).map_err(|e| ConfigError::File {
            path,
            message: one_line(&e.to_string()),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileSettings::default()),
        Err(e) => Err(ConfigError::File {
            path,
            message: e.to_string(),
        }),
    }
}

/// The local route's address: flag, then file, then the default; it must be loopback.
pub fn local_addr(flag: Option<&str>, file: &FileSettings) -> Result<SocketAddr, ConfigError> {
    let text = flag.or(file.local.addr.as_deref()).unwrap_or(DEFAULT_LOCAL_ADDR);
    let addr: SocketAddr = text.parse().map_err(|_| {
        ConfigError::Invalid(format!(
            "local address \"{text}\" is not IP:PORT, like {DEFAULT_LOCAL_ADDR}"
        ))
    })?;
    if !addr.ip().is_loopback() {
        return Err(ConfigError::Invalid(format!(
            "local address {addr} is not a loopback address: the local route serves this computer only (use 127.0.0.1 or [::1])"
        )));
    }
    Ok(addr)
}

/// The LAN route's plan when it is enabled, checked.
pub fn lan_plan(file: &FileSettings) -> Result<Option<LanPlan>, ConfigError> {
    if !file.lan.enabled {
        return Ok(None);
    }
    Ok(Some(match file.lan.addr.as_deref() {
        Some(text) => LanPlan::One(lan_addr(text)?),
        None => LanPlan::Every { port: DEFAULT_LAN_PORT },
    }))
}

/// A LAN address: IP:PORT, a private IP, a port other than 0.
pub fn lan_addr(text: &str) -> Result<SocketAddr, ConfigError> {
    let addr: SocketAddr = text.trim().parse().map_err(|_| {
        ConfigError::Invalid(format!(
            "LAN address \"{text}\" is not IP:PORT, like 192.168.1.20:{DEFAULT_LAN_PORT}"
        ))
    })?;
    // `[::ffff:192.168.1.2]` is 192.168.1.2: certified, served and named as that.
    let addr = SocketAddr::new(private_range::canonical(addr.ip()), addr.port());
    if let Some(reason) = private_range::refusal(addr.ip()) {
        return Err(ConfigError::Invalid(format!("LAN address {addr}: {reason}")));
    }
    if addr.port() == 0 {
        return Err(ConfigError::Invalid(format!(
            "LAN address {addr} has port 0: devices need a fixed port to reach (the usual one is {DEFAULT_LAN_PORT})"
        )));
    }
    Ok(addr)
}

/// The domain route's plan when it is enabled, checked.
pub fn domain_plan(file: &FileSettings) -> Result<Option<DomainPlan>, ConfigError> {
    let domain = &file.domain;
    if !domain.enabled {
        return Ok(None);
    }
    let hostname = domain.hostname.as_deref().ok_or_else(|| {
        ConfigError::Invalid("the domain route is enabled without a hostname: set [domain] hostname".into())
    })?;
    Ok(Some(DomainPlan {
        hostname: hostname_of(hostname)?,
        listen: domain_listen(domain.listen.as_deref().unwrap_or(DEFAULT_DOMAIN_LISTEN))?,
        public_port: match domain.public_port {
            Some(0) => {
                return Err(ConfigError::Invalid(
                    "the domain route's public port cannot be 0".into(),
                ));
            }
            Some(port) => port,
            None => 443,
        },
        directory: acme_directory(domain.acme_directory.as_deref())?,
        email: domain.email.as_deref().map(email).transpose()?,
        resolver: domain.resolver.as_deref().map(resolver).transpose()?,
        acme_root: domain.acme_root.clone(),
        caa_identity: domain.caa_identity.as_deref().map(hostname_of).transpose()?,
    }))
}

/// The proxy route's plan when it is enabled, checked.
pub fn proxy_plan(file: &FileSettings) -> Result<Option<ProxyPlan>, ConfigError> {
    let proxy = &file.proxy;
    if !proxy.enabled {
        return Ok(None);
    }
    let url = proxy.public_url.as_deref().ok_or_else(|| {
        ConfigError::Invalid("the proxy route is enabled without a public URL: set [proxy] public_url".into())
    })?;
    let (hostname, public_port) = public_url(url)?;
    let text = proxy.listen.as_deref().unwrap_or(DEFAULT_PROXY_LISTEN);
    let listen: SocketAddr = text.trim().parse().map_err(|_| {
        ConfigError::Invalid(format!(
            "proxy listen address \"{text}\" is not IP:PORT, like {DEFAULT_PROXY_LISTEN}"
        ))
    })?;
    if !listen.ip().is_loopback() {
        return Err(ConfigError::Invalid(format!(
            "proxy listen address {listen} is not a loopback address: the tunnel forwards to this computer, and nothing else may reach the route around it (use 127.0.0.1 or [::1])"
        )));
    }
    if listen.port() == 0 {
        return Err(ConfigError::Invalid(format!(
            "proxy listen address {listen} has port 0: the tunnel needs a fixed port to forward to"
        )));
    }
    Ok(Some(ProxyPlan {
        hostname,
        public_port,
        listen,
    }))
}

/// The relay route's plan when it is enabled, checked.
pub fn relay_plan(file: &FileSettings) -> Result<Option<RelayRoutePlan>, ConfigError> {
    let relay = &file.relay;
    if !relay.enabled {
        return Ok(None);
    }
    let text = relay
        .relay
        .as_deref()
        .ok_or_else(|| ConfigError::Invalid("the relay route is enabled without a relay: set [relay] relay".into()))?;
    let (host, port) = match text.trim().rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => {
            let port: u16 = port.parse().ok().filter(|p| *p != 0).ok_or_else(|| {
                ConfigError::Invalid(format!("relay \"{text}\": the port is not a number from 1 to 65535"))
            })?;
            (host, port)
        }
        _ => (text.trim(), 443),
    };
    let name = relay
        .name
        .as_deref()
        .ok_or_else(|| ConfigError::Invalid("the relay route is enabled without a name: set [relay] name".into()))?;
    let name = crate::relay::enrolments::name_of(name).map_err(|e| ConfigError::Invalid(e.to_string()))?;
    let addresses = relay
        .addresses
        .iter()
        .map(|text| {
            text.trim().parse::<SocketAddr>().map_err(|_| {
                ConfigError::Invalid(format!("relay address \"{text}\" is not IP:PORT, like 203.0.113.7:443"))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(RelayRoutePlan {
        relay_host: hostname_of(host)?,
        relay_port: port,
        name,
        addresses,
        relay_root: relay.relay_root.clone(),
        directory: acme_directory(relay.acme_directory.as_deref())?,
        email: relay.email.as_deref().map(email).transpose()?,
        acme_root: relay.acme_root.clone(),
        caa_identity: relay.caa_identity.as_deref().map(hostname_of).transpose()?,
    }))
}

/// The public URL of a tunnel: `https://` and a hostname, perhaps a port, nothing else (the
/// journal serves at the root of its name: `/mcp` and the discovery documents beside it).
pub fn public_url(text: &str) -> Result<(String, u16), ConfigError> {
    let refuse = |why: &str| {
        Err(ConfigError::Invalid(format!(
            "public URL \"{text}\" {why}, like https://journal.tail1234.ts.net"
        )))
    };
    let Ok(url) = url::Url::parse(text.trim()) else {
        return refuse("is not a URL");
    };
    if url.scheme() != "https" {
        return refuse("must be https (the tunnel terminates TLS; agents sign in only over HTTPS)");
    }
    if !url.username().is_empty() || url.password().is_some() || url.query().is_some() || url.fragment().is_some() {
        return refuse("must hold no user, query or fragment");
    }
    if url.path() != "/" {
        return refuse("must be the root of its name, with no path (the journal serves /mcp there)");
    }
    let Some(url::Host::Domain(host)) = url.host() else {
        return refuse("must name a host, not an IP address");
    };
    let hostname = hostname_of(host)?;
    Ok((hostname, url.port().unwrap_or(443)))
}

/// A hostname for a certificate: letters, digits and hyphens in dot-separated labels of 1 to 63,
/// at least two labels, no IP address; lower-cased.
pub fn hostname_of(text: &str) -> Result<String, ConfigError> {
    let name = text.trim().trim_end_matches('.').to_ascii_lowercase();
    let refuse = |why: &str| Err(ConfigError::Invalid(format!("hostname \"{text}\" {why}")));
    if name.parse::<std::net::IpAddr>().is_ok() {
        return refuse("is an IP address: the domain route needs a name (the LAN route serves addresses)");
    }
    if name.is_empty() || name.len() > 253 {
        return refuse("must be 1 to 253 characters");
    }
    let labels: Vec<&str> = name.split('.').collect();
    if labels.len() < 2 {
        return refuse("needs a domain, like journal.example.org");
    }
    for label in &labels {
        let valid = !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !valid {
            return refuse(
                "has a part that is not letters, digits and inner hyphens (write an international name in its xn-- form)",
            );
        }
    }
    if labels.last().is_some_and(|tld| tld.bytes().all(|b| b.is_ascii_digit())) {
        return refuse("ends in a number, which no top-level domain is");
    }
    Ok(name)
}

fn domain_listen(text: &str) -> Result<SocketAddr, ConfigError> {
    let addr: SocketAddr = text.trim().parse().map_err(|_| {
        ConfigError::Invalid(format!(
            "domain listen address \"{text}\" is not IP:PORT, like {DEFAULT_DOMAIN_LISTEN}"
        ))
    })?;
    if addr.port() == 0 {
        return Err(ConfigError::Invalid(format!(
            "domain listen address {addr} has port 0: the CA and agents need a fixed port (443)"
        )));
    }
    Ok(addr)
}

fn acme_directory(text: Option<&str>) -> Result<String, ConfigError> {
    let Some(text) = text else {
        return Ok(crate::domain::acme::LETS_ENCRYPT.to_string());
    };
    match url::Url::parse(text) {
        Ok(url) if url.scheme() == "https" && url.host().is_some() => Ok(text.to_string()),
        _ => Err(ConfigError::Invalid(format!(
            "ACME directory \"{text}\" is not an https URL, like {}",
            crate::domain::acme::LETS_ENCRYPT
        ))),
    }
}

fn email(text: &str) -> Result<String, ConfigError> {
    let text = text.trim();
    let valid = text
        .split_once('@')
        .is_some_and(|(user, domain)| !user.is_empty() && domain.contains('.') && !text.contains(char::is_whitespace));
    if valid {
        Ok(text.to_string())
    } else {
        Err(ConfigError::Invalid(format!("\"{text}\" is not an email address")))
    }
}

/// A DNS server: IP or IP:PORT (port 53 unless given).
pub fn resolver(text: &str) -> Result<SocketAddr, ConfigError> {
    let text = text.trim();
    if let Ok(ip) = text.parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, 53));
    }
    text.parse().map_err(|_| {
        ConfigError::Invalid(format!(
            "DNS server \"{text}\" is not IP or IP:PORT, like 1.1.1.1 or 127.0.0.1:8053"
        ))
    })
}

/// Changes `journal.toml` with `change`, keeping everything else in it as it was, and writes it only
/// if the result is still settings this version reads (so a bad edit changes nothing).
pub fn edit(journal: &Path, change: impl FnOnce(&mut toml_edit::DocumentMut)) -> Result<(), ConfigError> {
    let path = journal.join("journal.toml");
    let file_error = |message: String| ConfigError::File {
        path: path.clone(),
        message,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(file_error(e.to_string())),
    };
    // The file as it is must be valid first: an edit must not paper over (or trip on) a mistake.
    read_file(journal)?;
    let mut document: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| file_error(one_line(&e.to_string())))?;
    change(&mut document);
    let edited = document.to_string();
    let settings: FileSettings = toml::from_str(&edited).map_err(|e| file_error(one_line(&e.to_string())))?;
    lan_plan(&settings)?;
    domain_plan(&settings)?;
    proxy_plan(&settings)?;
    relay_plan(&settings)?;
    fsio::write_atomic(&path, edited.as_bytes()).map_err(|e| file_error(e.to_string()))
}

/// A `[name]` section of the document to edit, made as a standard table (not an inline one) when
/// the file has none yet.
pub fn section<'a>(doc: &'a mut toml_edit::DocumentMut, name: &str) -> &'a mut dyn toml_edit::TableLike {
    if doc.get(name).and_then(toml_edit::Item::as_table_like).is_none() {
        doc.insert(name, toml_edit::table());
    }
    doc[name].as_table_like_mut().expect("made a table just above")
}

/// Sets each key that has a value, and removes each that has none (an option not given again).
pub fn set_optional<const N: usize>(table: &mut dyn toml_edit::TableLike, pairs: [(&str, Option<String>); N]) {
    for (key, value) in pairs {
        match value {
            Some(value) => table.insert(key, toml_edit::value(value)),
            None => table.remove(key),
        };
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_addresses() {
        let file = FileSettings::default();
        assert_eq!(local_addr(None, &file).unwrap().to_string(), DEFAULT_LOCAL_ADDR);
        assert_eq!(local_addr(Some("[::1]:8000"), &file).unwrap().port(), 8000);
        assert!(
            local_addr(Some("0.0.0.0:7659"), &file)
                .unwrap_err()
                .to_string()
                .contains("not a loopback")
        );
        assert!(
            local_addr(Some("localhost"), &file)
                .unwrap_err()
                .to_string()
                .contains("IP:PORT")
        );
        let file: FileSettings = toml::from_str("[local]\naddr = \"127.0.0.1:9000\"\n").unwrap();
        assert_eq!(local_addr(None, &file).unwrap().port(), 9000);
        assert!(toml::from_str::<FileSettings>("[local]\nport = 1\n").is_err());
    }

    #[test]
    fn lan_plans() {
        let plan = |text: &str| lan_plan(&toml::from_str::<FileSettings>(text).unwrap());
        assert_eq!(plan("").unwrap(), None);
        assert_eq!(
            plan("[lan]\naddr = \"10.0.0.2:7000\"\n").unwrap(),
            None,
            "off unless enabled"
        );
        assert_eq!(
            plan("[lan]\nenabled = true\n").unwrap(),
            Some(LanPlan::Every { port: 7660 })
        );
        assert_eq!(
            plan("[lan]\nenabled = true\naddr = \"[fd00::5]:7000\"\n").unwrap(),
            Some(LanPlan::One("[fd00::5]:7000".parse().unwrap()))
        );
        for (addr, says) in [
            ("127.0.0.1:7660", "loopback"),
            ("0.0.0.0:7660", "unspecified"),
            ("8.8.8.8:7660", "not a private address"),
            ("169.254.1.1:7660", "link-local"),
            ("192.168.1.2", "IP:PORT"),
            ("192.168.1.2:0", "port 0"),
        ] {
            let error = plan(&format!("[lan]\nenabled = true\naddr = \"{addr}\"\n"))
                .unwrap_err()
                .to_string();
            assert!(error.contains(says), "{addr}: {error}");
        }
        assert_eq!(
            plan("[lan]\nenabled = true\naddr = \"[::ffff:192.168.1.2]:7660\"\n").unwrap(),
            Some(LanPlan::One("192.168.1.2:7660".parse().unwrap()))
        );
        assert!(toml::from_str::<FileSettings>("[lan]\nenabled = \"yes\"\n").is_err());
        assert!(toml::from_str::<FileSettings>("[lan]\nport = 1\n").is_err());
    }

    #[test]
    fn domain_plans() {
        let plan = |text: &str| domain_plan(&toml::from_str::<FileSettings>(text).unwrap());
        assert_eq!(
            plan("[domain]\nhostname = \"j.example.org\"\n").unwrap(),
            None,
            "off unless enabled"
        );
        let on = plan("[domain]\nenabled = true\nhostname = \"Journal.Example.org.\"\n")
            .unwrap()
            .unwrap();
        assert_eq!(on.hostname, "journal.example.org");
        assert_eq!(on.listen, "[::]:443".parse().unwrap());
        assert_eq!(on.directory, crate::domain::acme::LETS_ENCRYPT);
        assert_eq!(on.resolver, None);
        let full = plan(
            "[domain]\nenabled = true\nhostname = \"j.test\"\nlisten = \"127.0.0.1:5001\"\nacme_directory = \"https://127.0.0.1:14000/dir\"\nemail = \"me@example.org\"\nresolver = \"127.0.0.1:8053\"\ncaa_identity = \"pebble.test\"\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(full.resolver, Some("127.0.0.1:8053".parse().unwrap()));
        assert_eq!(resolver("9.9.9.9").unwrap(), "9.9.9.9:53".parse().unwrap());
        for (text, says) in [
            ("[domain]\nenabled = true\n", "without a hostname"),
            ("[domain]\nenabled = true\nhostname = \"192.168.1.2\"\n", "IP address"),
            ("[domain]\nenabled = true\nhostname = \"localhost\"\n", "needs a domain"),
            (
                "[domain]\nenabled = true\nhostname = \"bad_name.example\"\n",
                "letters, digits",
            ),
            (
                "[domain]\nenabled = true\nhostname = \"-x.example\"\n",
                "letters, digits",
            ),
            ("[domain]\nenabled = true\nhostname = \"a.b.123\"\n", "ends in a number"),
            (
                "[domain]\nenabled = true\nhostname = \"j.example.org\"\nlisten = \"443\"\n",
                "not IP:PORT",
            ),
            (
                "[domain]\nenabled = true\nhostname = \"j.example.org\"\nacme_directory = \"http://acme.example/dir\"\n",
                "not an https URL",
            ),
            (
                "[domain]\nenabled = true\nhostname = \"j.example.org\"\nemail = \"me\"\n",
                "not an email",
            ),
            (
                "[domain]\nenabled = true\nhostname = \"j.example.org\"\nresolver = \"dns.google\"\n",
                "not IP or IP:PORT",
            ),
        ] {
            let error = plan(text).unwrap_err().to_string();
            assert!(error.contains(says), "{text}: {error}");
        }
        assert!(toml::from_str::<FileSettings>("[domain]\nport = 1\n").is_err());
    }

    #[test]
    fn proxy_plans() {
        let plan = |text: &str| proxy_plan(&toml::from_str::<FileSettings>(text).unwrap());
        assert_eq!(
            plan("[proxy]\npublic_url = \"https://j.example.org\"\n").unwrap(),
            None,
            "off unless enabled"
        );
        let on = plan("[proxy]\nenabled = true\npublic_url = \"https://Journal.tail1234.TS.net/\"\n")
            .unwrap()
            .unwrap();
        assert_eq!(
            on,
            ProxyPlan {
                hostname: "journal.tail1234.ts.net".into(),
                public_port: 443,
                listen: "127.0.0.1:7661".parse().unwrap(),
            }
        );
        let port = plan("[proxy]\nenabled = true\npublic_url = \"https://j.test:8443\"\nlisten = \"[::1]:9000\"\n")
            .unwrap()
            .unwrap();
        assert_eq!((port.public_port, port.listen), (8443, "[::1]:9000".parse().unwrap()));
        for (text, says) in [
            ("[proxy]\nenabled = true\n", "without a public URL"),
            (
                "[proxy]\nenabled = true\npublic_url = \"j.example.org\"\n",
                "is not a URL",
            ),
            (
                "[proxy]\nenabled = true\npublic_url = \"http://j.example.org\"\n",
                "must be https",
            ),
            (
                "[proxy]\nenabled = true\npublic_url = \"https://j.example.org/journal\"\n",
                "no path",
            ),
            (
                "[proxy]\nenabled = true\npublic_url = \"https://j.example.org/?a=1\"\n",
                "no user, query",
            ),
            (
                "[proxy]\nenabled = true\npublic_url = \"https://me@j.example.org\"\n",
                "no user, query",
            ),
            (
                "[proxy]\nenabled = true\npublic_url = \"https://203.0.113.5\"\n",
                "not an IP address",
            ),
            (
                "[proxy]\nenabled = true\npublic_url = \"https://localhost\"\n",
                "needs a domain",
            ),
            (
                "[proxy]\nenabled = true\npublic_url = \"https://j.example.org\"\nlisten = \"0.0.0.0:7661\"\n",
                "not a loopback address",
            ),
            (
                "[proxy]\nenabled = true\npublic_url = \"https://j.example.org\"\nlisten = \"127.0.0.1:0\"\n",
                "port 0",
            ),
            (
                "[proxy]\nenabled = true\npublic_url = \"https://j.example.org\"\nlisten = \"7661\"\n",
                "not IP:PORT",
            ),
        ] {
            let error = plan(text).unwrap_err().to_string();
            assert!(error.contains(says), "{text}: {error}");
        }
        assert!(toml::from_str::<FileSettings>("[proxy]\nport = 1\n").is_err());
    }

    #[test]
    fn relay_plans() {
        let plan = |text: &str| relay_plan(&toml::from_str::<FileSettings>(text).unwrap());
        assert_eq!(
            plan("[relay]\nrelay = \"relay.example.org\"\n").unwrap(),
            None,
            "off unless enabled"
        );
        let on = plan("[relay]\nenabled = true\nrelay = \"Relay.Example.org\"\nname = \"Alice\"\n")
            .unwrap()
            .unwrap();
        assert_eq!(
            (on.relay_host.as_str(), on.relay_port, on.name.as_str()),
            ("relay.example.org", 443, "alice")
        );
        assert_eq!(on.hostname(), "alice.relay.example.org");
        assert_eq!(on.directory, crate::domain::acme::LETS_ENCRYPT);
        let port = plan(
            "[relay]\nenabled = true\nrelay = \"relay.test:8443\"\nname = \"a\"\naddresses = [\"127.0.0.1:8443\", \"[::1]:8443\"]\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(port.relay_port, 8443);
        assert_eq!(
            port.addresses,
            [
                "127.0.0.1:8443".parse::<SocketAddr>().unwrap(),
                "[::1]:8443".parse().unwrap()
            ]
        );
        for (text, says) in [
            ("[relay]\nenabled = true\nname = \"a\"\n", "without a relay"),
            ("[relay]\nenabled = true\nrelay = \"relay.test\"\n", "without a name"),
            (
                "[relay]\nenabled = true\nrelay = \"relay.test:0\"\nname = \"a\"\n",
                "not a number",
            ),
            (
                "[relay]\nenabled = true\nrelay = \"relay.test:x\"\nname = \"a\"\n",
                "not a number",
            ),
            (
                "[relay]\nenabled = true\nrelay = \"10.0.0.1\"\nname = \"a\"\n",
                "IP address",
            ),
            (
                "[relay]\nenabled = true\nrelay = \"relay.test\"\nname = \"a.b\"\n",
                "letters, digits",
            ),
            (
                "[relay]\nenabled = true\nrelay = \"relay.test\"\nname = \"a\"\naddresses = [\"relay.test\"]\n",
                "not IP:PORT",
            ),
        ] {
            let error = plan(text).unwrap_err().to_string();
            assert!(error.contains(says), "{text}: {error}");
        }
    }

    #[test]
    fn edits_keep_the_rest_of_the_file_and_refuse_what_would_not_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.toml");
        edit(dir.path(), |doc| {
            section(doc, "lan").insert("enabled", toml_edit::value(true));
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[lan]\nenabled = true\n");
        let original =
            "# my settings\n[local]\naddr = \"127.0.0.1:9000\" # a port of my own\n\n[lan]\nenabled = true\n";
        std::fs::write(&path, original).unwrap();
        edit(dir.path(), |doc| {
            section(doc, "lan").insert("addr", toml_edit::value("10.1.2.3:7660"));
        })
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# my settings\n[local]\naddr = \"127.0.0.1:9000\" # a port of my own\n"),
            "{text}"
        );
        assert_eq!(
            read_file(dir.path()).unwrap().lan.addr.as_deref(),
            Some("10.1.2.3:7660")
        );
        // An edit that would leave settings that don't read back changes nothing.
        let error = edit(dir.path(), |doc| {
            section(doc, "lan").insert("addr", toml_edit::value("8.8.8.8:7660"));
        })
        .unwrap_err();
        assert!(error.to_string().contains("not a private address"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        // A file that is already wrong is not edited.
        std::fs::write(&path, "[lan\n").unwrap();
        assert!(
            edit(dir.path(), |doc| {
                section(doc, "lan").insert("enabled", toml_edit::value(false));
            })
            .is_err()
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[lan\n");
    }

    #[test]
    fn reads_the_file_with_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_file(dir.path()).unwrap().local.addr.is_none());
        std::fs::write(dir.path().join("journal.toml"), "[local\n").unwrap();
        let error = read_file(dir.path()).unwrap_err().to_string();
        assert!(error.contains("journal.toml"), "{error}");
        assert!(!error.contains('\n'));
    }
}
