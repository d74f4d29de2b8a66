//! `journal mcp ...`: keys, grants and the activity log.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::bail;
use clap::Subcommand;
use serde_json::json;

use super::open;
use crate::auth::audit;
use crate::auth::{Category, connections};
use crate::journal::day::format_timestamp;

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Minted keys for scripts.
    #[command(subcommand)]
    Token(TokenCommand),
    /// What a connection may see.
    #[command(subcommand)]
    Permission(PermissionCommand),
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

#[derive(Debug, Subcommand)]
pub enum PermissionCommand {
    /// Replace a key's grant.
    Set {
        /// The key's label.
        #[arg(long, value_name = "LABEL")]
        token: String,
        /// transcripts, entities or facets (repeatable).
        #[arg(long, required = true)]
        category: Vec<String>,
        /// Limit to this facet, by name or id (repeatable); without it: the whole journal.
        #[arg(long)]
        facet: Vec<String>,
    },
    /// Show a key's grant.
    Show {
        #[arg(long, value_name = "LABEL")]
        token: String,
    },
    /// Take everything back: the key keeps only its own memory.
    Clear {
        #[arg(long, value_name = "LABEL")]
        token: String,
    },
}

pub async fn run(dir: &Path, command: McpCommand) -> anyhow::Result<()> {
    let journal = open(dir).await?;
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
        McpCommand::Permission(PermissionCommand::Set { token, category, facet }) => {
            let mut categories = BTreeSet::new();
            for name in &category {
                let Some(category) = Category::parse(name) else {
                    bail!("unknown category \"{name}\": use transcripts, entities or facets");
                };
                categories.insert(category);
            }
            let mut facet_ids = Vec::new();
            for name in &facet {
                let Some(known) = journal.facet(name) else {
                    bail!("there is no facet named {name}: see `journal facet list`");
                };
                facet_ids.push(known.id);
            }
            let connection = connections::find_key(db, &token).await?;
            let reach = (!facet.is_empty()).then_some(facet_ids.as_slice());
            let grant = connections::set_grant(db, &connection.id, &categories, reach).await?;
            println!("{}: {}", connection.label, grant.describe(&journal.facets()));
        }
        McpCommand::Permission(PermissionCommand::Show { token }) => {
            let connection = connections::find_key(db, &token).await?;
            println!("{}: {}", connection.label, connection.grant.describe(&journal.facets()));
        }
        McpCommand::Permission(PermissionCommand::Clear { token }) => {
            let connection = connections::find_key(db, &token).await?;
            let grant = connections::set_grant(db, &connection.id, &BTreeSet::new(), None).await?;
            println!("{}: {}", connection.label, grant.describe(&journal.facets()));
        }
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
