//! `journal serve`: runs the service until SIGINT or SIGTERM.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;

use super::content::write_demo;
use crate::auth::{Category, WriteMode, connections};
use crate::config;
use crate::context::Route;
use crate::journal::day::Day;
use crate::journal::{Journal, demo};
use crate::server::{Running, StartError};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Loopback address for the local route.
    #[arg(long, value_name = "ADDR", env = "JOURNAL_LOCAL_ADDR")]
    pub local_addr: Option<String>,
    /// Serve the sample journal (made at the first start, in the user's data folder, and served
    /// again at every later one), with a ready key and a pairing code.
    #[arg(long)]
    pub demo: bool,
    /// With --demo: start the sample journal afresh (its keys and sign-ins go with it).
    #[arg(long, requires = "demo")]
    pub fresh: bool,
}

/// Serves the journal in `dir`, or (with `--demo`, when `dir` is None) the sample journal, which
/// stays in the user's data folder (`journal-demo`) from one start to the next.
pub async fn run(dir: Option<&Path>, args: ServeArgs) -> anyhow::Result<()> {
    // The handlers go in before anything is printed: a supervisor (or a test) that reads the
    // address and at once sends SIGTERM or SIGHUP must find them installed, not the default action.
    let mut signals = Signals::install()?;
    let dir: PathBuf = match dir {
        Some(dir) if !args.demo => dir.to_path_buf(),
        _ => demo_dir(args.fresh)?,
    };
    let first_demo = args.demo && !dir.join("journal.db").is_file();
    let settings = config::read_file(&dir)?;
    let addr = config::local_addr(args.local_addr.as_deref(), &settings)?;
    let lan = config::lan_plan(&settings)?;
    let domain = config::domain_plan(&settings)?;
    let proxy = config::proxy_plan(&settings)?;
    let relay = config::relay_plan(&settings)?;
    let journal = if first_demo {
        let options = demo::DemoOptions {
            days: 14,
            segments_per_day: 4,
            seed: 7,
            end: Day::today(),
            notes: 0,
        };
        say!("{}", write_demo(&dir, &options).await?);
        crate::fsio::write_atomic(&dir.join(DEMO_MARK), b"made by `journal serve --demo`\n")
            .with_context(|| format!("could not mark {} as the demo journal", dir.display()))?;
        Journal::open(&dir).await?
    } else {
        // The server listens first and brings the catalog up to date in its first upkeep pass, so it
        // starts in the same time whatever the journal's size; searches meanwhile see the index as
        // it was left.
        super::open_to_serve(&dir).await?
    };
    let options = crate::server::Options {
        lan,
        domain: domain.clone(),
        proxy: proxy.clone(),
        relay: relay.clone(),
        ..Default::default()
    };
    let running = match crate::server::start_with(journal.clone(), addr, options).await {
        Ok(running) => running,
        Err(error @ StartError::Listen { .. }) => {
            bail!("{error} (is another journal already serving there? pick another with --local-addr)")
        }
        Err(error @ StartError::Lan(_)) => {
            bail!("{error}; fix it, or turn the route off with `journal route disable lan`")
        }
        Err(error @ StartError::Relay(_)) => {
            bail!("{error}; fix it, or turn the route off with `journal route disable relay`")
        }
        Err(error @ StartError::Proxy { .. }) => {
            bail!(
                "{error} (is something else listening there? pick another port with `journal route enable proxy --listen`, or turn the route off with `journal route disable proxy`)"
            )
        }
        Err(error) => bail!("{error}; fix it, or turn the route off with `journal route disable domain`"),
    };
    let url = format!("http://{}/mcp", running.local_addr);
    say!("serving {} at {url}", journal.root().display());
    // Commands run without --journal find this journal while it is served (`served`).
    let _listed = super::served::register(journal.root(), &url);
    if lan.is_some() {
        print_lan(&running);
    }
    if let Some(plan) = &relay {
        say!(
            "the relay route serves at {} through {}:{} (`journal route list` shows whether it is connected)",
            crate::relay::route::route(plan).mcp_url(),
            plan.relay_host,
            plan.relay_port
        );
    }
    if let Some(plan) = &proxy {
        say!(
            "the proxy route serves at {} through your tunnel, which forwards to http://{}",
            crate::proxy::route(plan).mcp_url(),
            plan.listen
        );
    }
    signals.forward_hangups(&running);
    // The domain route's first check may order a certificate (a minute or two): its outcome is
    // printed when it is known, and Ctrl-C meanwhile stops the server cleanly.
    let mut stopped = false;
    if domain.is_some() {
        tokio::select! {
            () = first_domain_check(&running) => print_domain(&running),
            () = signals.stop() => stopped = true,
        }
    }
    if args.demo {
        if first_demo {
            let (connection, key) = connections::create_key(&journal.db, "demo").await?;
            connections::set_grant(
                &journal.db,
                &connection.id,
                &Category::ALL.into_iter().collect::<BTreeSet<_>>(),
                None,
                WriteMode::None,
            )
            .await?;
            print_demo_key(&url, &key);
        } else {
            say!();
            say!("The key \"demo\" made at the first start still works, and so do the agents signed in since.");
        }
        // The commands printed run as printed: `journal`, or this program's path while `journal`
        // is not on PATH (right after `cargo run`).
        let me = super::invocation::command();
        print_demo_sign_in(&journal, &url, &me).await?;
        say!();
        say!(
            "The sample journal stays in {}: the next `serve --demo` serves it again, `serve --demo --fresh` starts it afresh. Other commands find it while it is served (or add --journal {}).",
            journal.root().display(),
            journal.root().display()
        );
        let link = crate::auth::owner::create_link(&journal.db, crate::clock::unix_now()).await?;
        say!();
        say!(
            "The owner app (a one-time link, for {} minutes; `{me} app` makes another):",
            crate::auth::owner::LINK_LIFETIME_SECONDS / 60
        );
        say!("  http://{}/app/signin?t={link}", running.local_addr);
        if me != "journal" {
            say!();
            say!(
                "`journal` is not on your PATH yet, so the commands above run it as {me}; `cargo install --path .` in the journal's source folder puts it there."
            );
        }
    } else {
        say!("the owner app: run `journal app` for a sign-in link");
    }
    if !stopped {
        say!("press Ctrl-C to stop");
        signals.stop().await;
    }
    say!("stopping");
    running.stop().await.context("the server did not stop cleanly")?;
    Ok(())
}

/// Where the own-domain route serves, or why it does not yet (it keeps checking).
fn print_domain(running: &Running) {
    match running.state.routes.domain() {
        Some(domain) if domain.serving => say!("the domain route serves at {}", domain.mcp_url),
        Some(domain) => say!(
            "the domain route is not serving yet: {}; it checks again every minute (`journal route list`)",
            domain.problem.as_deref().unwrap_or("no certificate yet")
        ),
        None => say!("the domain route is still checking; `journal route list` shows how it went"),
    }
}

/// Where the LAN route serves, or why it does not yet (it keeps trying).
fn print_lan(running: &Running) {
    match running.state.routes.lan() {
        Some(lan) if !lan.addresses.is_empty() => {
            for addr in &lan.addresses {
                say!("the LAN route serves at {}", Route::lan(*addr).mcp_url());
            }
            say!(
                "  its certificate authority: SHA-256 {} (`journal route ca`)",
                lan.ca_fingerprint
            );
        }
        _ => say!("the LAN route is not serving yet: `journal route list` says why; it tries again every 30 seconds"),
    }
}

/// The file that marks a folder as the sample journal `serve --demo` made (so `--fresh` removes
/// only what it made).
const DEMO_MARK: &str = ".journal-demo";

/// The sample journal's folder; with `fresh`, emptied first (only if `serve --demo` made it).
fn demo_dir(fresh: bool) -> anyhow::Result<PathBuf> {
    let dir = crate::config::data_dir()?.join("journal-demo");
    if fresh && dir.exists() {
        if !dir.join(DEMO_MARK).is_file() {
            bail!(
                "{} was not made by `journal serve --demo`, so --fresh leaves it alone; move it away first",
                dir.display()
            );
        }
        if super::served::running()
            .iter()
            .any(|s| super::served::same(&s.journal, &dir))
        {
            bail!("the sample journal is being served: stop that server first, then start afresh");
        }
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("could not remove the sample journal {}", dir.display()))?;
    }
    Ok(dir)
}

fn print_demo_key(url: &str, key: &str) {
    say!();
    say!("A key named \"demo\" can read the whole sample journal (shown once; it works at every later start):");
    for line in crate::web::clients::with_key(url, key) {
        say!("  # {}", line.name);
        say!("  {}", line.line);
    }
}

/// Opens sign-in on the local route and prints the code with each client's lines, so that an agent
/// signs in to this journal at once, whatever journal the other commands would pick.
async fn print_demo_sign_in(journal: &Journal, url: &str, me: &str) -> anyhow::Result<()> {
    let code = crate::oauth::store::open_code(&journal.db, crate::context::LOCAL, crate::clock::unix_now())
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    say!();
    say!(
        "Or sign an agent in: this pairing code works once, for {} minutes (`{me} mcp pairing generate` makes another):",
        crate::oauth::pairing::LIFETIME_SECONDS / 60
    );
    say!("  {}", crate::oauth::pairing::display(&code));
    for client in crate::web::clients::for_route(crate::context::LOCAL, url) {
        if client.is_command && client.unavailable.is_none() {
            say!("  # {}", client.name);
            say!("  {}", client.add);
            say!("  #   {}", client.then);
        }
    }
    Ok(())
}

/// The signals `serve` answers, installed at once: SIGINT and SIGTERM stop the server; SIGHUP makes
/// the routes check their addresses, DNS and certificates now (after the owner changed a DNS record,
/// say) instead of at their next check, and never ends the process.
pub(super) struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hangup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    pub(super) fn install() -> anyhow::Result<Signals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let failed = |e: std::io::Error| anyhow::anyhow!("could not install the signal handlers: {e}");
            Ok(Signals {
                interrupt: signal(SignalKind::interrupt()).map_err(failed)?,
                terminate: signal(SignalKind::terminate()).map_err(failed)?,
                hangup: Some(signal(SignalKind::hangup()).map_err(failed)?),
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    /// Hands SIGHUP to the running routes.
    fn forward_hangups(&mut self, running: &Running) {
        #[cfg(unix)]
        if let Some(mut hangup) = self.hangup.take() {
            let routes = running.state.routes.clone();
            tokio::spawn(async move {
                while hangup.recv().await.is_some() {
                    tracing::info!("SIGHUP: the routes check again now");
                    routes.recheck_now();
                }
            });
        }
        #[cfg(not(unix))]
        let _ = running;
    }

    /// Waits for SIGINT or SIGTERM.
    pub(super) async fn stop(&mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Waits until the domain route has published the outcome of its first check (at most 3 minutes).
async fn first_domain_check(running: &Running) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(180);
    while running.state.routes.domain().is_none() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
