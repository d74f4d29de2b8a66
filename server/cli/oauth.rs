//! `journal mcp pairing ...` and `journal mcp oauth ...`: opening sign-in, and the apps signed in.

use super::shown;
use std::sync::Arc;

use anyhow::bail;
use clap::Subcommand;

use crate::clock::unix_now;
use crate::journal::Journal;
use crate::journal::day::format_timestamp;
use crate::oauth::{pairing, registration, store};
use crate::{config, context};

/// The routes sign-in can be opened on.
const ROUTES: [&str; 5] = [
    context::LOCAL,
    context::LAN,
    context::DOMAIN,
    context::PROXY,
    context::RELAY,
];

#[derive(Debug, Subcommand)]
pub enum PairingCommand {
    /// Open sign-in: print a one-time code to type into the consent page (valid 10 minutes).
    Generate {
        /// The route the code works on.
        #[arg(long, default_value = "local")]
        route: String,
    },
    /// Close sign-in: revoke the open code (of one route, or of all).
    Revoke {
        #[arg(long)]
        route: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum OauthCommand {
    /// List the apps signed in, with their grants.
    List,
    /// Register a client for an app that cannot register itself or fetch-free sign in (its
    /// metadata document cannot be fetched): prints the client id to give the app.
    Register {
        /// The name the consent page shows.
        #[arg(long)]
        name: String,
        /// A callback the app uses (repeat for more): loopback with any port, or a known hosted one.
        #[arg(long = "redirect-uri", value_name = "URI", required = true)]
        redirect_uris: Vec<String>,
    },
    /// Sign an app out: end every grant of this client id.
    Revoke {
        #[arg(long, value_name = "ID")]
        client_id: String,
    },
}

fn check_route(route: &str) -> anyhow::Result<()> {
    if !ROUTES.contains(&route) {
        bail!("unknown route \"{route}\": the routes are {}", ROUTES.join(", "));
    }
    Ok(())
}

pub async fn pairing(journal: &Arc<Journal>, command: PairingCommand) -> anyhow::Result<()> {
    match command {
        PairingCommand::Generate { route } => {
            check_route(&route)?;
            // A code for a route that is off would wait for a sign-in that cannot arrive.
            let settings = config::read_file(journal.root())?;
            if route == context::LAN && config::lan_plan(&settings)?.is_none() {
                bail!("the lan route is off: turn it on with `journal route enable lan` and restart `journal serve`");
            }
            if route == context::DOMAIN && config::domain_plan(&settings)?.is_none() {
                bail!(
                    "the domain route is off: turn it on with `journal route enable domain --hostname H` and restart `journal serve`"
                );
            }
            if route == context::RELAY && config::relay_plan(&settings)?.is_none() {
                bail!(
                    "the relay route is off: turn it on with `journal route enable relay --relay HOST --name NAME --enrolment CREDENTIAL` and restart `journal serve`"
                );
            }
            if route == context::PROXY && config::proxy_plan(&settings)?.is_none() {
                bail!(
                    "the proxy route is off: turn it on with `journal route enable proxy --public-url URL` and restart `journal serve`"
                );
            }
            let code = store::open_code(&journal.db, &route, unix_now()).await.map_err(plain)?;
            say!(
                "Sign-in is open on the {route} route for {} minutes. Type this code on the consent page when your agent asks:",
                pairing::LIFETIME_SECONDS / 60
            );
            say!("{}", pairing::display(&code));
        }
        PairingCommand::Revoke { route } => {
            if let Some(route) = &route {
                check_route(route)?;
            }
            let closed = store::revoke_codes(&journal.db, route.as_deref())
                .await
                .map_err(plain)?;
            say!(
                "{}",
                if closed == 0 {
                    "no pairing code was open"
                } else {
                    "sign-in is closed: the pairing code no longer works"
                }
            );
        }
    }
    Ok(())
}

pub async fn oauth(journal: &Arc<Journal>, command: OauthCommand) -> anyhow::Result<()> {
    match command {
        OauthCommand::List => {
            let now = unix_now();
            let signed_in = store::list_grants(&journal.db, now).await.map_err(plain)?;
            if signed_in.is_empty() {
                say!("no apps are signed in: open sign-in with `journal mcp pairing generate`");
            }
            for entry in signed_in {
                let used = entry
                    .connection
                    .last_used_at
                    .map_or_else(|| "never".to_string(), format_timestamp);
                let state = if entry.expires_at <= now {
                    "ended"
                } else if !entry.finished {
                    "never finished, ends"
                } else {
                    "ends"
                };
                say!(
                    "{}  {}  route {}  paired {}  {state} {}  last used {}  {}",
                    shown::line(&entry.client_id),
                    shown::line(&entry.connection.label),
                    entry.route,
                    format_timestamp(entry.paired_at),
                    format_timestamp(entry.expires_at),
                    used,
                    entry.connection.grant.describe(&journal.facets())
                );
            }
        }
        OauthCommand::Register { name, redirect_uris } => {
            let request = serde_json::json!({ "client_name": name, "redirect_uris": redirect_uris });
            let registration = registration::check(&request).map_err(plain)?;
            let dropped: Vec<&String> = redirect_uris
                .iter()
                .filter(|uri| !registration.redirect_uris.contains(uri))
                .collect();
            if !dropped.is_empty() {
                bail!(
                    "{} is not a callback this journal allows: use a loopback one (http://127.0.0.1:PORT/...) or a known hosted agent's",
                    dropped[0]
                );
            }
            let Some((client, _)) = store::register_client(
                &journal.db,
                &registration.client_name,
                &registration.redirect_uris,
                store::OWNER_SOURCE,
                unix_now(),
            )
            .await
            .map_err(plain)?
            else {
                bail!(
                    "too many clients are registered: sign apps out with `journal mcp oauth revoke --client-id ID` first"
                );
            };
            say!("registered {}; give the app this client id:", client.client_name);
            say!("{}", client.client_id);
        }
        OauthCommand::Revoke { client_id } => {
            let ended = store::revoke_client(&journal.db, &client_id).await.map_err(plain)?;
            say!(
                "signed out {client_id}: {ended} grant{} ended",
                if ended == 1 { "" } else { "s" }
            );
        }
    }
    Ok(())
}

/// An OAuth error for a person at the terminal: its description, without the RFC code.
pub(super) fn plain(error: crate::oauth::OAuthError) -> anyhow::Error {
    anyhow::anyhow!(error.description)
}
