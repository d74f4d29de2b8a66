//! `journal app`: a one-time link that signs a browser in to the owner app, and `journal app
//! signout`, which ends every owner session.

use std::path::Path;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::open_for_access;
use crate::auth::owner;
use crate::config;
use crate::journal::day::unix_now;

#[derive(Debug, Args)]
pub struct AppArgs {
    #[command(subcommand)]
    pub command: Option<AppCommand>,
    /// Print the link without opening a browser.
    #[arg(long)]
    pub no_open: bool,
    /// The local route's address, when `journal serve` was given another one.
    #[arg(long, value_name = "ADDR", env = "JOURNAL_LOCAL_ADDR")]
    pub local_addr: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum AppCommand {
    /// Sign every browser out of the owner app, and void unused links.
    Signout,
}

pub async fn run(dir: &Path, args: AppArgs) -> anyhow::Result<()> {
    let journal = open_for_access(dir).await?;
    if let Some(AppCommand::Signout) = args.command {
        let ended = owner::end_all(&journal.db).await?;
        println!(
            "signed out of the owner app: {ended} session{} ended",
            if ended == 1 { "" } else { "s" }
        );
        return Ok(());
    }
    let settings = config::read_file(dir)?;
    let addr = config::local_addr(args.local_addr.as_deref(), &settings)?;
    let token = owner::create_link(&journal.db, unix_now()).await?;
    let link = format!("http://{addr}/app/signin?t={token}");
    let serving = tokio::time::timeout(Duration::from_secs(1), tokio::net::TcpStream::connect(addr))
        .await
        .is_ok_and(|connected| connected.is_ok());
    if !serving {
        eprintln!(
            "note: nothing is serving at {addr} yet: start it with `journal serve` (the link works for {} minutes)",
            owner::LINK_LIFETIME_SECONDS / 60
        );
    }
    println!(
        "Open this link to sign in to the owner app (it works once, for {} minutes):",
        owner::LINK_LIFETIME_SECONDS / 60
    );
    println!("{link}");
    if !args.no_open && serving {
        open_browser(&link);
    }
    Ok(())
}

/// Opens the link in the default browser when this is a desktop session; silently does nothing
/// otherwise (a server over SSH, CI), since the link is printed anyway.
fn open_browser(link: &str) {
    use std::io::IsTerminal;
    use std::process::{Command, Stdio};
    if !std::io::stdout().is_terminal() {
        return;
    }
    let mut command = if cfg!(target_os = "macos") {
        Command::new("open")
    } else if cfg!(windows) {
        let mut command = Command::new("cmd");
        command.args(["/C", "start", ""]);
        command
    } else {
        let desktop = ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
        if !desktop {
            return;
        }
        Command::new("xdg-open")
    };
    let _ = command
        .arg(link)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}
