//! `journal mcp ...`: keys and the activity log, and the dispatch to grants (`permission`) and
//! sign-in (`oauth`).

use std::path::Path;

use clap::Subcommand;
use serde_json::json;

use super::open_for_access;
use crate::auth::audit;
use crate::auth::connections;
use crate::journal::day::format_timestamp;

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
    /// The audit log of tool calls, newest first.
    Activity {
        /// How many calls to show.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Only the calls of this key.
        #[arg(long, value_name = "LABEL")]
        token: Option<String>,
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
    let journal = open_for_access(dir).await?;
    let db = &journal.db;
    match command {
        McpCommand::Token(TokenCommand::Create { label, json }) => {
            let (connection, key) = connections::create_key(db, &label).await?;
            if json {
                println!("{}", json!({ "label": connection.label, "key": key }));
            } else {
                println!(
                    "created key \"{}\"; it is shown only this once. It can use only its own memory until you grant it more:",
                    connection.label
                );
                println!(
                    "  journal mcp permission set --token {} --category transcripts --category entities --category facets",
                    shell_word(&connection.label)
                );
                println!("{key}");
            }
        }
        McpCommand::Token(TokenCommand::List) => {
            let keys = connections::list_keys(db).await?;
            if keys.is_empty() {
                println!("no keys yet: create one with `journal mcp token create --label NAME`");
            }
            for key in keys {
                let used = key.last_used_at.map_or_else(|| "never".to_string(), format_timestamp);
                println!(
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
            println!("revoked key \"{}\": its next request is refused", connection.label);
        }
        McpCommand::Permission(command) => super::permission::run(&journal, command).await?,
        McpCommand::Pairing(command) => super::oauth::pairing(&journal, command).await?,
        McpCommand::Oauth(command) => super::oauth::oauth(&journal, command).await?,
        McpCommand::Activity { limit, token } => {
            if let Some(label) = &token {
                connections::find_key(db, label).await?;
            }
            let entries = audit::recent(db, i64::from(limit.clamp(1, 10_000)), token.as_deref()).await?;
            if entries.is_empty() {
                println!("no tool calls recorded yet");
            }
            for entry in entries {
                let detail = if entry.detail.is_empty() {
                    String::new()
                } else {
                    format!("  {}", entry.detail)
                };
                println!(
                    "{}  {}  {}  {}{}",
                    format_timestamp(entry.at),
                    entry.connection_label,
                    entry.tool,
                    entry.outcome,
                    detail
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
