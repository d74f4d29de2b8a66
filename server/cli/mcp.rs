//! `journal mcp ...`: keys and the activity log, and the dispatch to grants (`permission`) and
//! sign-in (`oauth`).

use super::shown;
use std::path::Path;

use clap::Subcommand;
use serde_json::json;

use super::open_for_access;
use crate::auth::activity::{self, Filter};
use crate::auth::audit::Outcome;
use crate::auth::connections;
use crate::journal::day::{Day, format_timestamp};
use crate::oauth::store;

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Minted keys for scripts.
    #[command(subcommand)]
    Token(TokenCommand),
    /// What a connection (a key or a signed-in app) may see.
    #[command(subcommand)]
    Permission(super::permission::PermissionCommand),
    /// One-time codes that open sign-in for an agent.
    #[command(subcommand)]
    Pairing(super::oauth::PairingCommand),
    /// Apps signed in with OAuth.
    #[command(subcommand)]
    Oauth(super::oauth::OauthCommand),
    /// Serve MCP over standard input and output for an agent on this computer, as an existing
    /// connection (e.g. `claude mcp add --scope user journal -- journal --journal DIR mcp stdio
    /// --agent claude`; name the journal: some agents pass their servers few environment variables).
    Stdio {
        /// The connection to act as: a key's label (or a signed-in app's name). Its grant, write
        /// mode, identity and audit trail apply.
        #[arg(long, value_name = "LABEL")]
        agent: String,
    },
    /// The audit log of tool calls, newest first.
    Activity {
        /// How many calls to show.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Only the calls of this key.
        #[arg(long, value_name = "LABEL", conflicts_with = "client")]
        token: Option<String>,
        /// Only the calls of this signed-in app (every sign-in of its client id).
        #[arg(long, value_name = "ID")]
        client: Option<String>,
        /// Only the calls of this tool.
        #[arg(long, value_name = "NAME")]
        tool: Option<String>,
        /// Only calls with this outcome: served, empty, refused or error.
        #[arg(long)]
        outcome: Option<String>,
        /// Only the calls of this UTC day (YYYY-MM-DD).
        #[arg(long)]
        day: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Mint a key; it is printed once, on the last line.
    Create {
        #[arg(long)]
        label: String,
        /// Print {"label", "key"} as JSON instead.
        #[arg(long)]
        json: bool,
    },
    /// List keys (never the keys themselves).
    List,
    /// Revoke a key and drop its grant.
    Revoke {
        #[arg(long)]
        label: String,
    },
}

pub async fn run(dir: &Path, command: McpCommand) -> anyhow::Result<()> {
    // Serving over stdio reads notes at once, as `serve` does; the other commands need no catalog.
    let journal = match &command {
        McpCommand::Stdio { .. } => super::open_to_serve(dir).await?,
        _ => open_for_access(dir).await?,
    };
    let db = &journal.db;
    match command {
        McpCommand::Stdio { agent } => stdio(&journal, &agent).await?,
        McpCommand::Token(TokenCommand::Create { label, json }) => {
            let (connection, key) = connections::create_key(db, &label).await?;
            if json {
                say!("{}", json!({ "label": connection.label, "key": key }));
            } else {
                say!(
                    "created key \"{}\"; it is shown only this once. It can use only its own memory until you grant it more:",
                    connection.label
                );
                say!(
                    "  journal mcp permission set --token {} --category transcripts --category entities --category facets --category notes --category graph",
                    shell_word(&connection.label)
                );
                say!("{key}");
            }
        }
        McpCommand::Token(TokenCommand::List) => {
            let keys = connections::list_keys(db).await?;
            if keys.is_empty() {
                say!("no keys yet: create one with `journal mcp token create --label NAME`");
            }
            for key in keys {
                let used = key.last_used_at.map_or_else(|| "never".to_string(), format_timestamp);
                say!(
                    "{}  created {}  last used {}  {}",
                    key.label,
                    format_timestamp(key.created_at),
                    used,
                    key.grant.describe(&journal.facets())
                );
            }
        }
        McpCommand::Token(TokenCommand::Revoke { label }) => {
            let connection = connections::revoke_key(db, &label).await?;
            say!("revoked key \"{}\": its next request is refused", connection.label);
        }
        McpCommand::Permission(command) => super::permission::run(&journal, command).await?,
        McpCommand::Pairing(command) => super::oauth::pairing(&journal, command).await?,
        McpCommand::Oauth(command) => super::oauth::oauth(&journal, command).await?,
        McpCommand::Activity {
            limit,
            token,
            client,
            tool,
            outcome,
            day,
        } => {
            let outcome = match outcome.as_deref() {
                None => None,
                Some(text) => Some(Outcome::parse(text).ok_or_else(|| {
                    anyhow::anyhow!("unknown outcome \"{text}\": use served, empty, refused or error")
                })?),
            };
            let day = day.as_deref().map(Day::parse).transpose()?;
            if let Some(name) = &tool
                && crate::mcp::tools::find(name).is_none()
            {
                anyhow::bail!("there is no tool named {name}: see docs/mcp.md for the tools");
            }
            // A key is one connection; a client may have signed in more than once.
            let connection_ids: Vec<Option<String>> = if let Some(label) = &token {
                vec![Some(connections::find_key(db, label).await?.id)]
            } else if let Some(client) = &client {
                let ids = store::connection_for_client(db, client)
                    .await
                    .map_err(super::oauth::plain)?;
                if ids.is_empty() {
                    anyhow::bail!("no signed-in app has the client id {client}: see `journal mcp oauth list`");
                }
                ids.into_iter().map(Some).collect()
            } else {
                vec![None]
            };
            let limit = i64::from(limit.clamp(1, 10_000));
            let mut entries = Vec::new();
            for connection_id in connection_ids {
                let filter = Filter {
                    connection_id,
                    tool: tool.clone(),
                    outcome,
                    day,
                    kind: None,
                };
                entries.extend(activity::page(db, &filter, None, limit).await?.entries);
            }
            entries.sort_by_key(|entry| std::cmp::Reverse(entry.id));
            entries.truncate(limit as usize);
            if entries.is_empty() {
                let filtered =
                    token.is_some() || client.is_some() || tool.is_some() || outcome.is_some() || day.is_some();
                say!(
                    "{}",
                    if filtered {
                        "no tool calls match these filters"
                    } else {
                        "no tool calls recorded yet"
                    }
                );
            }
            for entry in entries {
                let mut detail = match &entry.change {
                    Some(change) => format!("  {} ({})", change.path, change.write_mode),
                    None => String::new(),
                };
                if !entry.detail.is_empty() {
                    detail.push_str("  ");
                    detail.push_str(&entry.detail);
                }
                say!(
                    "{}  {}  {}  {}{}",
                    format_timestamp(entry.at),
                    shown::line(&entry.connection_label),
                    shown::line(&entry.tool),
                    entry.outcome,
                    shown::line(&detail)
                );
            }
        }
    }
    Ok(())
}

/// Quotes a label for the shell when it holds a space.
fn shell_word(label: &str) -> String {
    if label.contains(' ') {
        format!("\"{label}\"")
    } else {
        label.to_string()
    }
}

/// `journal mcp stdio --agent LABEL`: MCP on standard input and output until the input ends, with
/// the catalog kept in step with the files as `serve` keeps it.
async fn stdio(journal: &std::sync::Arc<crate::journal::Journal>, label: &str) -> anyhow::Result<()> {
    let connection = connections::find_by_label(&journal.db, label).await?;
    let state = crate::mcp::catalog::state(
        std::sync::Arc::clone(journal),
        crate::mcp::session::Sessions::new(crate::mcp::session::Limits::default()),
    );
    let (stop, stopped) = tokio::sync::watch::channel(false);
    crate::server::spawn_upkeep(state.clone(), stopped, crate::server::FULL_SYNC_EVERY);
    tracing::info!(connection = %connection.label, "serving MCP on standard input and output");
    let input = tokio::io::BufReader::new(tokio::io::stdin());
    let served = crate::mcp::stdio::serve(&state, &connection, input, tokio::io::stdout()).await;
    let _ = stop.send(true);
    served?;
    Ok(())
}
