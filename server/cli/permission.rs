//! `journal mcp permission ...`: a connection's grant, for a key (`--token LABEL`) or a signed-in
//! app (`--client ID`).

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::bail;
use clap::{Args, Subcommand};

use crate::auth::{Category, Connection, WriteMode, connections};
use crate::journal::Journal;
use crate::oauth::store;

/// Whose grant: exactly one of a key label or an OAuth client id.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct Who {
    /// The key's label.
    #[arg(long, value_name = "LABEL")]
    pub token: Option<String>,
    /// The signed-in app's client id (see `journal mcp oauth list`).
    #[arg(long, value_name = "ID")]
    pub client: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum PermissionCommand {
    /// Replace a grant.
    Set {
        #[command(flatten)]
        who: Who,
        /// transcripts, entities, facets, notes or graph (repeatable).
        #[arg(long, required = true)]
        category: Vec<String>,
        /// Limit to this facet, by name or id (repeatable); without it: the whole journal.
        #[arg(long)]
        facet: Vec<String>,
        /// May it change notes: none, propose (changes wait for your review) or force (applied at
        /// once). Without it the connection keeps its current mode.
        #[arg(long, value_name = "MODE")]
        write: Option<String>,
    },
    /// Show a grant.
    Show {
        #[command(flatten)]
        who: Who,
    },
    /// Take everything back: the connection keeps only its own memory.
    Clear {
        #[command(flatten)]
        who: Who,
    },
}

pub async fn run(journal: &Arc<Journal>, command: PermissionCommand) -> anyhow::Result<()> {
    let db = &journal.db;
    match command {
        PermissionCommand::Set {
            who,
            category,
            facet,
            write,
        } => {
            let write = match write.as_deref() {
                None => None,
                Some(text) => Some(
                    WriteMode::parse(text)
                        .ok_or_else(|| anyhow::anyhow!("unknown write mode \"{text}\": use none, propose or force"))?,
                ),
            };
            let mut categories = BTreeSet::new();
            for name in &category {
                let Some(category) = Category::parse(name) else {
                    bail!("unknown category \"{name}\": use transcripts, entities, facets, notes or graph");
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
            let reach = (!facet.is_empty()).then_some(facet_ids.as_slice());
            for connection in resolve(journal, &who).await? {
                let mode = write.unwrap_or(connection.grant.write_mode);
                let grant = connections::set_grant(db, &connection.id, &categories, reach, mode).await?;
                say!("{}: {}", connection.label, grant.describe(&journal.facets()));
                if mode == WriteMode::Force && connection.grant.write_mode != WriteMode::Force {
                    say!("  {} may now change notes without your review", connection.label);
                }
            }
        }
        PermissionCommand::Show { who } => {
            for connection in resolve(journal, &who).await? {
                say!("{}: {}", connection.label, connection.grant.describe(&journal.facets()));
            }
        }
        PermissionCommand::Clear { who } => {
            for connection in resolve(journal, &who).await? {
                let grant = connections::set_grant(db, &connection.id, &BTreeSet::new(), None, WriteMode::None).await?;
                say!("{}: {}", connection.label, grant.describe(&journal.facets()));
            }
        }
    }
    Ok(())
}

/// The connections a `Who` names: one key, or every live sign-in of one client.
async fn resolve(journal: &Journal, who: &Who) -> anyhow::Result<Vec<Connection>> {
    if let Some(label) = &who.token {
        return Ok(vec![connections::find_key(&journal.db, label).await?]);
    }
    let client = who.client.as_deref().unwrap_or_default();
    let mut found = Vec::new();
    for id in store::connection_for_client(&journal.db, client)
        .await
        .map_err(super::oauth::plain)?
    {
        if let Some(connection) = connections::load(&journal.db, &id).await? {
            found.push(connection);
        }
    }
    if found.is_empty() {
        bail!("no signed-in app has the client id {client}: see `journal mcp oauth list`");
    }
    Ok(found)
}
