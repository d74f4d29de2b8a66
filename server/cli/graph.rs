//! `journal graph ...`: the owner's hand on the graph. The owner acts as `owner` and may override
//! anything: retype any connection, remove any, and keep a note of their own on each. Changes go
//! through the graph's one gate, like an agent's.

use super::shown;
use std::sync::Arc;

use anyhow::bail;
use clap::Subcommand;

use crate::journal::Journal;
use crate::journal::day::format_timestamp;
use crate::journal::graph::gate::{self, GraphChange};
use crate::journal::graph::history::{self as graph_history, Entry, Origin};
use crate::journal::graph::items::{Items, Viewer};
use crate::journal::graph::rules::RuleError;
use crate::journal::graph::{Edge, store};
use crate::journal::notes::history::KEEP_DAYS;

#[derive(Debug, Subcommand)]
pub enum GraphCommand {
    /// Every connection (or those of one item), newest first, with every author's note.
    List {
        /// Only the connections of this item: a note's path or id, an entity's or a facet's name, or a key
        /// such as note:Projects/a.md.
        #[arg(value_name = "ITEM")]
        item: Option<String>,
        /// Only connections of this type.
        #[arg(long = "type", value_name = "TYPE")]
        kind: Option<String>,
    },
    /// Connect two items, as the owner.
    Connect {
        #[arg(value_name = "FROM")]
        from: String,
        #[arg(value_name = "TO")]
        to: String,
        /// 1-64 lowercase letters, digits, - or _ (supports, part-of).
        #[arg(long = "type", value_name = "TYPE")]
        kind: Option<String>,
    },
    /// Remove a connection, whoever made it.
    Disconnect {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Set (or with --clear remove) a connection's type, whoever set it.
    SetType {
        #[arg(value_name = "ID")]
        id: String,
        #[arg(value_name = "TYPE", required_unless_present = "clear", conflicts_with = "clear")]
        kind: Option<String>,
        /// Remove the type.
        #[arg(long)]
        clear: bool,
    },
    /// Write the owner's own note on a connection; "" removes it. Agents' notes stay theirs.
    Note {
        #[arg(value_name = "ID")]
        id: String,
        #[arg(value_name = "TEXT")]
        text: String,
    },
    /// Every change made to the graph (by agents, accepted proposals, the owner, and undos),
    /// newest first, each with its number for `journal graph revert`.
    History {
        /// How many changes to show.
        #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(i64).range(1..=10_000))]
        limit: i64,
    },
    /// Undo a change of `journal graph history`: its connection goes back to what it was before,
    /// while nothing changed it since. The undo is kept in the history too.
    Revert {
        #[arg(value_name = "CHANGE")]
        change: i64,
    },
}

pub async fn run(dir: &std::path::Path, command: GraphCommand) -> anyhow::Result<()> {
    let journal = super::naming_folder(dir, Journal::open(dir).await)?;
    match command {
        GraphCommand::List { item, kind } => list(&journal, item.as_deref(), kind.as_deref()).await,
        GraphCommand::Connect { from, to, kind } => {
            let from = resolve(&journal, &from).await?;
            let to = resolve(&journal, &to).await?;
            let made = change(&journal, GraphChange::Connect { from, to, kind }).await?;
            say!("{}", line(&made));
            Ok(())
        }
        GraphCommand::Disconnect { id } => {
            let made = change(&journal, GraphChange::Disconnect { id }).await?;
            say!("removed {}", line(&made));
            Ok(())
        }
        GraphCommand::SetType { id, kind, clear } => {
            let kind = if clear { None } else { kind };
            let made = change(&journal, GraphChange::SetType { id, kind }).await?;
            say!("{}", line(&made));
            Ok(())
        }
        GraphCommand::Note { id, text } => {
            let made = change(&journal, GraphChange::Note { id, text }).await?;
            say!("{}", line(&made));
            for note in &made.notes {
                say!("    {}: {}", shown::line(note.author.as_str()), shown::line(&note.text));
            }
            Ok(())
        }
        GraphCommand::History { limit } => history(&journal, limit).await,
        GraphCommand::Revert { change } => {
            let undo = gate::revert(&journal, change)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            say!("undid change {change}: {}", entry_line(&undo));
            say!("this undo is kept in the history too: `journal graph history`");
            Ok(())
        }
    }
}

async fn history(journal: &Arc<Journal>, limit: i64) -> anyhow::Result<()> {
    let entries = graph_history::recent(&journal.db, limit).await?;
    if entries.is_empty() {
        say!(
            "no changes to the graph in the last {} days; agents' and your changes are listed here",
            KEEP_DAYS
        );
        return Ok(());
    }
    for entry in &entries {
        say!("{:>6}  {}", entry.id, entry_line(entry));
        let who = if entry.label.is_empty() {
            shown::line(&entry.actor).to_string()
        } else {
            format!("{} ({})", shown::line(&entry.actor), shown::line(&entry.label))
        };
        let how = match (entry.proposal_id, entry.reverted) {
            (_, Some(undone)) => format!(", undoing change {undone}"),
            (Some(proposal), None) => format!(", proposal {proposal} accepted"),
            (None, None) => String::new(),
        };
        say!("        by {who} at {}{how}", format_timestamp(entry.at));
    }
    say!("`journal graph revert CHANGE` undoes a change");
    Ok(())
}

/// A change in one line: what it did, and to which connection.
fn entry_line(entry: &Entry) -> String {
    let Some(connection) = entry.shown() else {
        return format!("{} {}", entry.what(), shown::line(&entry.connection));
    };
    let kind = |c: Option<&Edge>| c.and_then(|c| c.kind.clone());
    let detail = match entry.what() {
        "retyped" => format!(
            " ({} → {})",
            shown::line(&kind(entry.before.as_ref()).unwrap_or_else(|| "no type".into())),
            shown::line(&kind(entry.after.as_ref()).unwrap_or_else(|| "no type".into()))
        ),
        _ => String::new(),
    };
    format!(
        "{} {}  {} → {}{detail}",
        entry.what(),
        shown::line(&connection.id),
        shown::line(&connection.from),
        shown::line(&connection.to)
    )
}

/// The key of the item the owner typed.
async fn resolve(journal: &Arc<Journal>, typed: &str) -> anyhow::Result<String> {
    let viewer = Viewer::Owner;
    let mut items = Items::new(journal, &viewer);
    match items.resolve(typed).await? {
        Ok(item) => Ok(item.key),
        Err(why) => bail!("{why}"),
    }
}

async fn change(journal: &Arc<Journal>, change: GraphChange) -> anyhow::Result<Edge> {
    let made = gate::make(journal, &Origin::owner(), &Viewer::Owner, &change)
        .await
        .map_err(|e| match e {
            gate::GateError::Rule(RuleError::NotFound(id)) => {
                anyhow::anyhow!("there is no connection {id}; `journal graph list` lists them")
            }
            other => anyhow::anyhow!("{other}"),
        })?;
    Ok(made.connection)
}

/// A connection in one line: `c-... from → to [type] by who at when`.
fn line(connection: &Edge) -> String {
    let kind = connection
        .kind
        .as_ref()
        .map(|k| format!(" [{}]", shown::line(k)))
        .unwrap_or_default();
    format!(
        "{}  {} → {}{kind}  by {} at {}",
        shown::line(&connection.id),
        shown::line(&connection.from),
        shown::line(&connection.to),
        shown::line(connection.creator().as_str()),
        shown::line(&connection.created_at)
    )
}

async fn list(journal: &Arc<Journal>, item: Option<&str>, kind: Option<&str>) -> anyhow::Result<()> {
    let key = match item {
        Some(typed) => Some(resolve(journal, typed).await?),
        None => None,
    };
    let graph = gate::load(journal).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    for problem in &graph.problems {
        eprintln!(
            "warning: {} line {}: {} (the line is kept as it is and passed over)",
            store::FILE,
            problem.line,
            problem.message
        );
    }
    let mut shown: Vec<&Edge> = graph
        .connections()
        .filter(|c| key.as_ref().is_none_or(|k| c.touches(k)))
        .filter(|c| kind.is_none() || c.kind.as_deref() == kind)
        .collect();
    shown.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| a.id.cmp(&b.id)));
    if shown.is_empty() {
        say!("no connections; `journal graph connect FROM TO` makes one, and agents with the graph category can too");
        return Ok(());
    }
    let viewer = Viewer::Owner;
    let mut items = Items::new(journal, &viewer);
    for connection in shown {
        let mut missing = Vec::new();
        for end in [&connection.from, &connection.to] {
            if items.get(end).await?.is_none() {
                missing.push(end.as_str());
            }
        }
        let gone = if missing.is_empty() {
            String::new()
        } else {
            format!("  (missing: {})", missing.join(", "))
        };
        say!("{}{gone}", line(connection));
        for note in &connection.notes {
            say!(
                "    {} ({}): {}",
                shown::line(note.author.as_str()),
                note.at,
                shown::line(&note.text.replace('\n', " "))
            );
        }
    }
    Ok(())
}
