//! `journal route ...`: the ways of reaching the journal. `list` shows each route (on or off, where
//! it serves, its certificate, its last error); `enable` and `disable` change `journal.toml`, which
//! the server reads when it starts; `ca` prints the LAN route's certificate authority, which the
//! owner installs on the devices that connect over the home network or VPN.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Subcommand;

use super::open_for_access;
use crate::clock::unix_now;
use crate::config::{self, DomainPlan, LanPlan, ProxyPlan, RelayRoutePlan};
use crate::context::{DOMAIN, LAN, LOCAL, PROXY, RELAY, Route};
use crate::domain::acme::{self, AcmeHttp};
use crate::domain::dns::Resolver;
use crate::domain::serving;
use crate::journal::day::format_timestamp;
use crate::lan::addresses;
use crate::relay;
use crate::routes::status::{self, RouteStatus};
use crate::tls::ca::{self, PrivateCa};

#[derive(Debug, Subcommand)]
pub enum RouteCommand {
    /// Show every route: on or off, where it serves, its certificate and its last error.
    List,
    /// Turn a route on (it serves from the next start of `journal serve`).
    #[command(subcommand)]
    Enable(EnableRoute),
    /// Turn a route off (from the next start of `journal serve`).
    Disable {
        /// The route: lan, domain, proxy or relay.
        name: String,
    },
    /// Print the LAN route's CA certificate and its SHA-256 fingerprint (made on first use).
    Ca {
        /// Print only the certificate, in PEM, to save as a file (`> journal-ca.pem`).
        #[arg(long)]
        pem: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum EnableRoute {
    /// HTTPS on this computer's private addresses (home network, office, VPN), port 7660.
    Lan {
        /// Serve only this private address and port (IP:PORT) instead of every private address.
        #[arg(long, value_name = "IP:PORT")]
        addr: Option<String>,
    },
    /// HTTPS at your own hostname, with a certificate from an ACME CA (Let's Encrypt by default).
    /// Makes the ACME account, then checks the hostname's DNS and CAA records.
    Domain(DomainArgs),
    /// Behind a tunnel or reverse proxy you run (Tailscale Funnel, Cloudflare Tunnel, Caddy), which
    /// terminates TLS at its public name and forwards to a port on this computer.
    /// Through a relay you (or someone you trust) run with `journal relay serve`: for a computer
    /// with no public address. Enrols this journal there with the one-time credential.
    Relay(RelayArgs),
    Proxy {
        /// The HTTPS URL agents use: the tunnel's (like https://journal.tail1234.ts.net).
        #[arg(long, value_name = "URL")]
        public_url: String,
        /// The loopback address the tunnel forwards to (default 127.0.0.1:7661).
        #[arg(long, value_name = "IP:PORT")]
        listen: Option<String>,
    },
}

#[derive(Debug, clap::Args)]
pub struct DomainArgs {
    /// The hostname agents will use (its A/AAAA record points at this computer).
    #[arg(long)]
    hostname: String,
    /// The ACME directory (default: Let's Encrypt's).
    #[arg(long, value_name = "URL")]
    acme_directory: Option<String>,
    /// A contact address for the ACME account.
    #[arg(long)]
    email: Option<String>,
    /// Where to listen (default [::]:443).
    #[arg(long, value_name = "IP:PORT")]
    listen: Option<String>,
    /// The port agents use, when your router forwards it to another --listen port (default 443).
    #[arg(long, value_name = "PORT")]
    public_port: Option<u16>,
    /// The DNS server for the route's checks (default: the system's).
    #[arg(long, value_name = "IP[:PORT]")]
    resolver: Option<String>,
    /// A PEM file of a CA to trust for the ACME server (a private or test ACME CA).
    #[arg(long, value_name = "FILE")]
    acme_root: Option<PathBuf>,
    /// The CA's CAA identity, for an ACME directory that does not name its own.
    #[arg(long, value_name = "DOMAIN")]
    caa_identity: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct RelayArgs {
    /// The relay's own hostname, with :PORT when not 443.
    #[arg(long, value_name = "HOST[:PORT]")]
    relay: String,
    /// This journal's name there (agents reach it at NAME.<relay host>).
    #[arg(long)]
    name: String,
    /// The one-time credential the relay's owner gave you (`journal relay enrol NAME`).
    #[arg(long, value_name = "CREDENTIAL")]
    enrolment: String,
    /// Reach the relay at this address instead of asking DNS for its hostname; repeat it for
    /// several relays behind one name (the journal keeps a tunnel to each).
    #[arg(long, value_name = "IP:PORT")]
    relay_address: Vec<String>,
    /// A PEM file of a CA to trust for the relay's own certificate (a relay with a private CA).
    #[arg(long, value_name = "FILE")]
    relay_root: Option<PathBuf>,
    /// The ACME directory of this journal's certificate (default: Let's Encrypt's).
    #[arg(long, value_name = "URL")]
    acme_directory: Option<String>,
    /// A contact address for the ACME account.
    #[arg(long)]
    email: Option<String>,
    /// A PEM file of a CA to trust for the ACME server.
    #[arg(long, value_name = "FILE")]
    acme_root: Option<PathBuf>,
    /// The CA's CAA identity, for an ACME directory that does not name its own.
    #[arg(long, value_name = "DOMAIN")]
    caa_identity: Option<String>,
}

pub async fn run(dir: &Path, command: RouteCommand) -> anyhow::Result<()> {
    // Opening checks that this is a journal folder (and makes one), as every command does.
    let journal = open_for_access(dir).await?;
    match command {
        RouteCommand::List => list(dir, &journal.db).await,
        RouteCommand::Enable(EnableRoute::Lan { addr }) => enable_lan(dir, addr).await,
        RouteCommand::Enable(EnableRoute::Domain(args)) => enable_domain(dir, args).await,
        RouteCommand::Enable(EnableRoute::Proxy { public_url, listen }) => enable_proxy(dir, public_url, listen),
        RouteCommand::Enable(EnableRoute::Relay(args)) => enable_relay(dir, args).await,
        RouteCommand::Disable { name } => disable(dir, &name),
        RouteCommand::Ca { pem } => {
            let ca = load_ca(dir).await?;
            if pem {
                say_raw!("{}", ca.pem());
            } else {
                say!("The certificate authority of this journal's LAN route. Install it on the devices that connect");
                say!("over your network, and check that they show this fingerprint:");
                say!("SHA-256 {}", ca.fingerprint());
                say!();
                say_raw!("{}", ca.pem());
            }
            Ok(())
        }
    }
}

async fn load_ca(dir: &Path) -> anyhow::Result<PrivateCa> {
    let root = dir.to_path_buf();
    Ok(tokio::task::spawn_blocking(move || PrivateCa::load_or_create(&root, unix_now())).await??)
}

async fn enable_lan(dir: &Path, addr: Option<String>) -> anyhow::Result<()> {
    // Checked here for a message about the flag; `edit` checks the whole file again.
    let addr = addr.as_deref().map(config::lan_addr).transpose()?;
    // The CA is made (or read) first, so that its fingerprint is known (and can be installed)
    // before the route first serves, and a CA that cannot be read leaves the settings as they were.
    let ca = load_ca(dir).await?;
    config::edit(dir, |doc| {
        let lan = config::section(doc, "lan");
        lan.insert("enabled", toml_edit::value(true));
        match addr {
            Some(addr) => lan.insert("addr", toml_edit::value(addr.to_string())),
            None => lan.remove("addr"),
        };
    })?;
    say!("The LAN route is on. Restart `journal serve` for it to take effect; it will serve at:");
    match addr {
        Some(addr) => say!("  {}", Route::lan(addr).mcp_url()),
        None => {
            let ips = addresses::current()
                .map(|found| addresses::choose(&found))
                .unwrap_or_default();
            if ips.is_empty() {
                say!(
                    "  every private address of this computer, port {} (it has none right now)",
                    config::DEFAULT_LAN_PORT
                );
            }
            for ip in ips {
                say!("  {}", lan_url(ip, config::DEFAULT_LAN_PORT));
            }
        }
    }
    say!("Install its certificate authority on the devices that connect (`journal route ca`, or");
    say!(
        "the owner app's Connect page) and check the fingerprint: SHA-256 {}",
        ca.fingerprint()
    );
    say!("Agents there sign in with a pairing code: `journal mcp pairing generate --route lan`.");
    Ok(())
}

async fn enable_domain(dir: &Path, mut args: DomainArgs) -> anyhow::Result<()> {
    // The server may start from another folder: the file is kept by its full path.
    if let Some(root) = &args.acme_root {
        let full = std::fs::canonicalize(root).map_err(|e| anyhow::anyhow!("--acme-root {}: {e}", root.display()))?;
        args.acme_root = Some(full);
    }
    // The settings as they will be written, checked first (the same check `serve` makes).
    let settings = config::FileSettings {
        domain: config::DomainSettings {
            enabled: true,
            hostname: Some(args.hostname.clone()),
            listen: args.listen.clone(),
            public_port: args.public_port,
            acme_directory: args.acme_directory.clone(),
            email: args.email.clone(),
            resolver: args.resolver.clone(),
            acme_root: args.acme_root.clone(),
            caa_identity: args.caa_identity.clone(),
        },
        ..Default::default()
    };
    let plan = config::domain_plan(&settings)?.expect("enabled just above");
    let resolver = match plan.resolver {
        Some(server) => Resolver { server },
        None => Resolver::system().map_err(anyhow::Error::msg)?,
    };
    let http = AcmeHttp::new(plan.acme_root.as_deref())?;
    let account = acme::account(
        dir,
        &plan.directory,
        plan.email.as_deref(),
        plan.caa_identity.as_deref(),
        http,
    )
    .await?;
    if let Err(finding) = serving::check_names(&resolver, &plan.hostname, &account.url, &account.caa_identity).await {
        bail!(
            "{}; then run this command again (the domain route stays off until then)",
            finding.text()
        );
    }
    config::edit(dir, |doc| {
        let domain = config::section(doc, "domain");
        domain.insert("enabled", toml_edit::value(true));
        domain.insert("hostname", toml_edit::value(plan.hostname.clone()));
        let optional = [
            ("listen", args.listen),
            ("acme_directory", args.acme_directory),
            ("email", plan.email.clone()),
            ("resolver", args.resolver),
            ("acme_root", args.acme_root.map(|p| p.display().to_string())),
            ("caa_identity", plan.caa_identity.clone()),
        ];
        config::set_optional(domain, optional);
        match args.public_port {
            Some(port) => domain.insert("public_port", toml_edit::value(i64::from(port))),
            None => domain.remove("public_port"),
        };
    })?;
    let url = Route::domain(&plan.hostname, plan.public_port, plan.listen).mcp_url();
    say!("The domain route is on. Restart `journal serve` for it to take effect; it will serve at {url}");
    say!(
        "with a certificate from {} (ACME account {}).",
        plan.directory,
        account.url
    );
    say!(
        "The CA checks the hostname by connecting to it on port {}: forward that port to {} if a router is in between.",
        plan.public_port,
        plan.listen
    );
    say!("Agents there sign in with a pairing code: `journal mcp pairing generate --route domain`.");
    Ok(())
}

async fn enable_relay(dir: &Path, mut args: RelayArgs) -> anyhow::Result<()> {
    // The server may start from another folder: files are kept by their full paths.
    for (flag, path) in [
        ("--relay-root", &mut args.relay_root),
        ("--acme-root", &mut args.acme_root),
    ] {
        if let Some(given) = path {
            let full =
                std::fs::canonicalize(&*given).map_err(|e| anyhow::anyhow!("{flag} {}: {e}", given.display()))?;
            *path = Some(full);
        }
    }
    let settings = config::FileSettings {
        relay: config::RelaySettings {
            enabled: true,
            relay: Some(args.relay.clone()),
            name: Some(args.name.clone()),
            addresses: args.relay_address.clone(),
            relay_root: args.relay_root.clone(),
            acme_directory: args.acme_directory.clone(),
            email: args.email.clone(),
            acme_root: args.acme_root.clone(),
            caa_identity: args.caa_identity.clone(),
        },
        ..Default::default()
    };
    let plan = config::relay_plan(&settings)?.expect("enabled just above");
    // The ACME account first: a directory that cannot be used is found before the credential is spent.
    let http = AcmeHttp::new(plan.acme_root.as_deref())?;
    acme::account(
        dir,
        &plan.directory,
        plan.email.as_deref(),
        plan.caa_identity.as_deref(),
        http,
    )
    .await?;
    // The credential binds this journal's key at the relay now (at each relay behind its name), and
    // is never written down.
    let identity = relay::route::journal_identity(dir)?;
    let relays = relay::route::relay_addresses(&plan).await.map_err(anyhow::Error::msg)?;
    for address in &relays {
        let target = relay::route::target(&plan, *address)?;
        relay::tunnel::open(&target, &identity, Some(args.enrolment.trim()))
            .await
            .map_err(|e| anyhow::anyhow!("{e}; the relay route stays off"))?;
    }
    config::edit(dir, |doc| {
        let relay = config::section(doc, "relay");
        relay.insert("enabled", toml_edit::value(true));
        relay.insert("relay", toml_edit::value(args.relay.trim()));
        relay.insert("name", toml_edit::value(plan.name.clone()));
        match args.relay_address.is_empty() {
            true => relay.remove("addresses"),
            false => relay.insert(
                "addresses",
                toml_edit::value(
                    args.relay_address
                        .iter()
                        .map(|a| a.trim())
                        .collect::<toml_edit::Array>(),
                ),
            ),
        };
        let optional = [
            ("relay_root", args.relay_root.map(|p| p.display().to_string())),
            ("acme_directory", args.acme_directory),
            ("email", plan.email.clone()),
            ("acme_root", args.acme_root.map(|p| p.display().to_string())),
            ("caa_identity", plan.caa_identity.clone()),
        ];
        config::set_optional(relay, optional);
    })?;
    let url = relay::route::route(&plan).mcp_url();
    say!(
        "This journal is enrolled on {} as {}. Restart `journal serve`; it will serve at {url}",
        plan.relay_host,
        plan.name
    );
    say!(
        "with its own certificate from {} (the relay passes encrypted bytes and holds no key).",
        plan.directory
    );
    say!("Agents there sign in with a pairing code (`journal mcp pairing generate --route relay`), or use a key.");
    Ok(())
}

fn enable_proxy(dir: &Path, public_url: String, listen: Option<String>) -> anyhow::Result<()> {
    // The settings as they will be written, checked first (the same check `serve` makes).
    let settings = config::FileSettings {
        proxy: config::ProxySettings {
            enabled: true,
            public_url: Some(public_url.clone()),
            listen: listen.clone(),
        },
        ..Default::default()
    };
    let plan = config::proxy_plan(&settings)?.expect("enabled just above");
    let url = crate::proxy::route(&plan).mcp_url();
    config::edit(dir, |doc| {
        let proxy = config::section(doc, "proxy");
        proxy.insert("enabled", toml_edit::value(true));
        proxy.insert("public_url", toml_edit::value(public_url.trim()));
        match listen {
            Some(listen) => proxy.insert("listen", toml_edit::value(listen.trim())),
            None => proxy.remove("listen"),
        };
    })?;
    say!("The proxy route is on. Restart `journal serve` for it to take effect; it will serve at {url}");
    say!(
        "through your tunnel, which must forward to http://{} and keep the Host {} (agents sign in; keys work only on this computer's own route).",
        plan.listen,
        url.trim_start_matches("https://").trim_end_matches("/mcp")
    );
    say!("Agents there sign in with a pairing code: `journal mcp pairing generate --route proxy`.");
    Ok(())
}

fn disable(dir: &Path, name: &str) -> anyhow::Result<()> {
    let (section, shown) = match name {
        LAN => ("lan", "LAN"),
        DOMAIN | RELAY | PROXY => (name, name),
        LOCAL => bail!(
            "the local route cannot be turned off: it is how the owner's own tools and the owner app reach the journal"
        ),
        other => bail!("unknown route \"{other}\": the routes that can be turned off are lan, domain, proxy and relay"),
    };
    config::edit(dir, |doc| {
        config::section(doc, section).insert("enabled", toml_edit::value(false));
    })?;
    say!("The {shown} route is off from the next start of `journal serve` (restart it now to stop serving).");
    Ok(())
}

fn lan_url(ip: IpAddr, port: u16) -> String {
    Route::lan(SocketAddr::new(ip, port)).mcp_url()
}

async fn list(dir: &Path, db: &crate::db::Pool) -> anyhow::Result<()> {
    let settings = config::read_file(dir)?;
    let local = config::local_addr(None, &settings)?;
    say!("local   on   {}", Route::local(local).mcp_url());
    say!("             keys and sign-ins; loopback only, so no certificate");
    let lan = config::lan_plan(&settings)?;
    let recorded = status::read(db, LAN).await?;
    for line in lan_lines(lan, recorded.as_ref(), unix_now()) {
        say!("{line}");
    }
    // Listing reads the CA if there is one; it never makes one.
    if lan.is_some() && ca::folder(dir).join("ca-key.pem").exists() {
        let ca = load_ca(dir).await?;
        say!(
            "             certificate authority: {}, SHA-256 {}",
            ca.name(),
            ca.fingerprint()
        );
    }
    let domain = config::domain_plan(&settings)?;
    let recorded = status::read(db, DOMAIN).await?;
    for line in domain_lines(domain.as_ref(), recorded.as_ref(), unix_now()) {
        say!("{line}");
    }
    let relay = config::relay_plan(&settings)?;
    let recorded = status::read(db, RELAY).await?;
    for line in relay_lines(relay.as_ref(), recorded.as_ref(), unix_now()) {
        say!("{line}");
    }
    let proxy = config::proxy_plan(&settings)?;
    let recorded = status::read(db, PROXY).await?;
    for line in proxy_lines(proxy.as_ref(), recorded.as_ref(), unix_now()) {
        say!("{line}");
    }
    Ok(())
}

/// The relay route's lines of `route list`.
fn relay_lines(plan: Option<&RelayRoutePlan>, recorded: Option<&RouteStatus>, now: i64) -> Vec<String> {
    let pad = "             ";
    let Some(plan) = plan else {
        return vec![
            "relay   off  turn it on with `journal route enable relay --relay HOST --name NAME --enrolment CREDENTIAL`"
                .to_string(),
        ];
    };
    let mut lines = vec![format!("relay   on   {}", relay::route::route(plan).mcp_url())];
    let relay = format!("{}:{}", plan.relay_host, plan.relay_port);
    match recorded.filter(|r| r.serving) {
        Some(serving) => {
            lines.push(format!(
                "{pad}connected to {relay} as of {}",
                format_timestamp(serving.updated_at)
            ));
            lines.extend(serving_lines(serving, now));
        }
        None if recorded.is_some_and(|r| r.error.is_some()) => {
            lines.push(format!("{pad}not serving through {relay} (see the last error)"));
        }
        None => lines.push(format!("{pad}not serving: start `journal serve`")),
    }
    lines.push(format!("{pad}keys and sign-ins; the relay passes encrypted bytes only"));
    lines.push(last_error_line(recorded));
    lines
}

/// The proxy route's lines of `route list`.
fn proxy_lines(plan: Option<&ProxyPlan>, recorded: Option<&RouteStatus>, now: i64) -> Vec<String> {
    let pad = "             ";
    let Some(plan) = plan else {
        return vec!["proxy   off  turn it on with `journal route enable proxy --public-url URL`".to_string()];
    };
    let mut lines = vec![format!("proxy   on   {}", crate::proxy::route(plan).mcp_url())];
    match recorded.filter(|r| r.serving) {
        Some(serving) => {
            lines.push(format!(
                "{pad}serving on http://{} for the tunnel as of {}",
                plan.listen,
                format_timestamp(serving.updated_at)
            ));
            lines.extend(serving_lines(serving, now));
        }
        None => lines.push(format!(
            "{pad}not serving: start `journal serve` (the tunnel forwards to http://{})",
            plan.listen
        )),
    }
    lines.push(format!("{pad}sign-ins only; the certificate is the tunnel's"));
    lines.push(last_error_line(recorded));
    lines
}

/// What a serving route's record adds: whether it is stale, and its certificate.
fn serving_lines(serving: &RouteStatus, now: i64) -> Vec<String> {
    let pad = "             ";
    let mut lines = Vec::new();
    // A running server records its routes at least every minute: a record older than three
    // minutes is from a server that was killed, not one that serves.
    if now - serving.updated_at > 180 {
        lines.push(format!(
            "{pad}(not recorded for over 3 minutes: is `journal serve` still running?)"
        ));
    }
    if let Some(cert) = &serving.certificate {
        lines.push(format!(
            "{pad}certificate: issued by {}, expires {}",
            cert.issuer,
            format_timestamp(cert.not_after)
        ));
        lines.push(format!("{pad}  SHA-256 {}", cert.fingerprint));
    }
    lines
}

/// The last error a route recorded, with its time.
fn last_error_line(recorded: Option<&RouteStatus>) -> String {
    let last = recorded
        .and_then(|r| r.error.as_ref())
        .map(|(error, at)| format!("{} {error}", format_timestamp(*at)))
        .unwrap_or_else(|| "none".into());
    format!("             last error: {last}")
}

/// The domain route's lines of `route list`.
fn domain_lines(plan: Option<&DomainPlan>, recorded: Option<&RouteStatus>, now: i64) -> Vec<String> {
    let pad = "             ";
    let Some(plan) = plan else {
        return vec!["domain  off  turn it on with `journal route enable domain --hostname H`".to_string()];
    };
    let url = Route::domain(&plan.hostname, plan.public_port, plan.listen).mcp_url();
    let mut lines = vec![format!("domain  on   {url}")];
    match recorded.filter(|r| r.serving) {
        Some(serving) => {
            lines.push(format!(
                "{pad}serving on {} as of {}",
                plan.listen,
                format_timestamp(serving.updated_at)
            ));
            lines.extend(serving_lines(serving, now));
        }
        None if recorded.is_some_and(|r| r.error.is_some()) => {
            lines.push(format!("{pad}not serving (see the last error)"));
        }
        None => lines.push(format!("{pad}not serving: start `journal serve`")),
    }
    lines.push(format!("{pad}ACME directory: {}", plan.directory));
    lines.push(last_error_line(recorded));
    lines
}

/// The LAN route's lines of `route list`: from the settings and what the server last recorded.
fn lan_lines(plan: Option<LanPlan>, recorded: Option<&RouteStatus>, now: i64) -> Vec<String> {
    let pad = "             ";
    let mut lines = Vec::new();
    let Some(plan) = plan else {
        lines.push("lan     off  turn it on with `journal route enable lan`".to_string());
        return lines;
    };
    let planned = match plan {
        LanPlan::One(addr) => Route::lan(addr).mcp_url(),
        LanPlan::Every { port } => format!("every private address of this computer, port {port}"),
    };
    match recorded.filter(|r| r.serving && !r.addresses.is_empty()) {
        Some(serving) => {
            for (i, addr) in serving.addresses.iter().enumerate() {
                let head = if i == 0 { "lan     on   " } else { pad };
                lines.push(format!("{head}https://{addr}/mcp"));
            }
            lines.push(format!("{pad}serving as of {}", format_timestamp(serving.updated_at)));
            lines.extend(serving_lines(serving, now));
        }
        None => {
            lines.push(format!("lan     on   {planned}"));
            lines.push(format!(
                "{pad}not serving: start `journal serve`{}",
                if recorded.is_some_and(|r| r.error.is_some()) {
                    " (see the last error)"
                } else {
                    ""
                }
            ));
        }
    }
    lines.push(last_error_line(recorded));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routes::status::Certificate;

    #[test]
    fn relay_lines_say_whether_the_tunnel_is_up() {
        assert!(relay_lines(None, None, 0)[0].starts_with("relay   off  turn it on with `journal route enable relay"));
        let plan = config::relay_plan(
            &toml::from_str("[relay]\nenabled = true\nrelay = \"relay.example.org\"\nname = \"alice\"\n").unwrap(),
        )
        .unwrap()
        .unwrap();
        let idle = relay_lines(Some(&plan), None, 0).join("\n");
        assert!(
            idle.starts_with("relay   on   https://alice.relay.example.org/mcp\n"),
            "{idle}"
        );
        assert!(idle.contains("not serving: start `journal serve`"), "{idle}");
        let down = RouteStatus {
            route: "relay".into(),
            serving: false,
            addresses: vec![],
            certificate: None,
            error: Some(("could not reach the relay relay.example.org:443".into(), 1_700_000_000)),
            updated_at: 1_700_000_000,
        };
        let text = relay_lines(Some(&plan), Some(&down), 1_700_000_010).join("\n");
        assert!(
            text.contains("not serving through relay.example.org:443 (see the last error)"),
            "{text}"
        );
        assert!(
            text.contains("last error: 2023-11-14T22:13:20Z could not reach the relay"),
            "{text}"
        );
        let up = RouteStatus {
            serving: true,
            certificate: Some(Certificate {
                issuer: "CN=R10".into(),
                not_after: 1_800_000_000,
                fingerprint: "AB:CD".into(),
            }),
            ..down
        };
        let text = relay_lines(Some(&plan), Some(&up), 1_700_000_010).join("\n");
        assert!(
            text.contains("connected to relay.example.org:443 as of 2023-11-14T22:13:20Z"),
            "{text}"
        );
        assert!(text.contains("certificate: issued by CN=R10"), "{text}");
    }

    #[test]
    fn proxy_lines_say_where_the_tunnel_forwards() {
        assert_eq!(
            proxy_lines(None, None, 0),
            ["proxy   off  turn it on with `journal route enable proxy --public-url URL`"]
        );
        let plan = ProxyPlan {
            hostname: "journal.tail1234.ts.net".into(),
            public_port: 443,
            listen: "127.0.0.1:7661".parse().unwrap(),
        };
        let idle = proxy_lines(Some(&plan), None, 0).join("\n");
        assert!(
            idle.starts_with("proxy   on   https://journal.tail1234.ts.net/mcp\n"),
            "{idle}"
        );
        assert!(idle.contains("not serving: start `journal serve` (the tunnel forwards to http://127.0.0.1:7661)"));
        let serving = RouteStatus {
            route: "proxy".into(),
            serving: true,
            addresses: vec!["127.0.0.1:7661".into()],
            certificate: None,
            error: None,
            updated_at: 1_700_000_000,
        };
        let text = proxy_lines(Some(&plan), Some(&serving), 1_700_000_030).join("\n");
        assert!(
            text.contains("serving on http://127.0.0.1:7661 for the tunnel as of 2023-11-14T22:13:20Z"),
            "{text}"
        );
        assert!(
            !text.contains("still running") && !text.contains("certificate:"),
            "{text}"
        );
        let stale = proxy_lines(Some(&plan), Some(&serving), 1_700_000_400).join("\n");
        assert!(stale.contains("is `journal serve` still running?"), "{stale}");
    }

    #[test]
    fn lan_lines_say_what_the_route_does() {
        let off = lan_lines(None, None, 0);
        assert_eq!(off, ["lan     off  turn it on with `journal route enable lan`"]);
        let every = LanPlan::Every { port: 7660 };
        let never_started = lan_lines(Some(every), None, 0).join("\n");
        assert!(never_started.contains("every private address of this computer, port 7660"));
        assert!(never_started.contains("not serving: start `journal serve`"));
        assert!(never_started.contains("last error: none"));
        let serving = RouteStatus {
            route: "lan".into(),
            serving: true,
            addresses: vec!["10.0.0.2:7660".into(), "[fd00::2]:7660".into()],
            certificate: Some(Certificate {
                issuer: "journal private CA 0a0b0c0d".into(),
                not_after: 1_800_000_000,
                fingerprint: "AB:CD".into(),
            }),
            error: Some(("could not listen on 10.0.0.9:7660".into(), 1_700_000_000)),
            updated_at: 1_700_000_100,
        };
        let text = lan_lines(Some(every), Some(&serving), 1_700_000_130).join("\n");
        assert!(!text.contains("still running"), "{text}");
        let old = lan_lines(Some(every), Some(&serving), 1_700_000_400).join("\n");
        assert!(old.contains("is `journal serve` still running?"), "{old}");
        assert!(
            text.starts_with("lan     on   https://10.0.0.2:7660/mcp\n             https://[fd00::2]:7660/mcp"),
            "{text}"
        );
        assert!(
            text.contains("issued by journal private CA 0a0b0c0d, expires 2027-01-15T08:00:00Z"),
            "{text}"
        );
        assert!(text.contains("SHA-256 AB:CD"));
        assert!(
            text.contains("last error: 2023-11-14T22:13:20Z could not listen on 10.0.0.9:7660"),
            "{text}"
        );
        let stopped = RouteStatus {
            serving: false,
            addresses: vec![],
            ..serving
        };
        let text = lan_lines(Some(LanPlan::One("10.0.0.2:7660".parse().unwrap())), Some(&stopped), 0).join("\n");
        assert!(text.contains("lan     on   https://10.0.0.2:7660/mcp\n"), "{text}");
        assert!(
            text.contains("not serving: start `journal serve` (see the last error)"),
            "{text}"
        );
    }
}
