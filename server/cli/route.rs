//! `journal route ...`: the ways of reaching the journal. So far `route ca`, the LAN route's
//! certificate authority, which the owner installs on the devices that will connect over the home
//! network or VPN. (Turning routes on and off arrives with their listeners.)

use std::path::Path;

use clap::Subcommand;

use super::open_for_access;
use crate::journal::day::unix_now;
use crate::tls::ca::PrivateCa;

#[derive(Debug, Subcommand)]
pub enum RouteCommand {
    /// Print the LAN route's CA certificate and its SHA-256 fingerprint (made on first use).
    Ca {
        /// Print only the certificate, in PEM, to save as a file (`> journal-ca.pem`).
        #[arg(long)]
        pem: bool,
    },
}

pub async fn run(dir: &Path, command: RouteCommand) -> anyhow::Result<()> {
    // Opening checks that this is a journal folder (and makes one), as every command does.
    open_for_access(dir).await?;
    match command {
        RouteCommand::Ca { pem } => {
            let root = dir.to_path_buf();
            let ca = tokio::task::spawn_blocking(move || PrivateCa::load_or_create(&root, unix_now())).await??;
            if pem {
                print!("{}", ca.pem());
            } else {
                println!(
                    "The certificate authority of this journal's LAN route. Install it on the devices that connect"
                );
                println!("over your network, and check that they show this fingerprint:");
                println!("SHA-256 {}", ca.fingerprint());
                println!();
                print!("{}", ca.pem());
            }
        }
    }
    Ok(())
}
