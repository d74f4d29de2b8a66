//! `journal trash ...`: the notes agents deleted (`note_delete`), kept in the notes' history, and
//! bringing them back.

use super::shown;
use std::sync::Arc;

use clap::Subcommand;

use crate::journal::Journal;
use crate::journal::day::format_timestamp;
use crate::journal::notes::{changes, history};

#[derive(Debug, Subcommand)]
pub enum TrashCommand {
    /// What agents deleted, newest first: one line per deletion, with its notes and whether they are back.
    List,
    /// Bring back every note of one deletion where it was. Nothing is restored when a path is taken again.
    Restore {
        /// The deletion's number, from `journal trash list`.
        #[arg(value_name = "ID")]
        id: i64,
    },
}

pub async fn run(journal: &Arc<Journal>, command: TrashCommand) -> anyhow::Result<()> {
    match command {
        TrashCommand::List => list(journal).await,
        TrashCommand::Restore { id } => {
            let restored = changes::restore(journal, id).await?;
            for note in &restored {
                say!("restored {}", note.path);
            }
            say!("this restore is kept in the history too: `journal notes history PATH`");
            Ok(())
        }
    }
}

async fn list(journal: &Arc<Journal>) -> anyhow::Result<()> {
    let deletions = history::deletions(&journal.db, 1000).await?;
    if deletions.is_empty() {
        say!(
            "the trash is empty (deleted notes are kept for {} days)",
            history::KEEP_DAYS
        );
        return Ok(());
    }
    let walls = journal.notes.walls();
    for (id, versions) in deletions {
        let Some(first) = versions.first() else { continue };
        let back = versions
            .iter()
            .filter(|v| walls.file(&v.path).is_some_and(|f| f.exists()))
            .count();
        let notes = match versions.len() {
            1 => shown::line(&first.path).into_owned(),
            n => format!("{} and {} more", shown::line(&first.path), n - 1),
        };
        let state = match back {
            0 => String::new(),
            n if n == versions.len() => "  (back in place)".into(),
            n => format!("  ({n} back in place)"),
        };
        say!(
            "{id:>5}  {}  {} ({})  {notes}{state}",
            format_timestamp(first.at),
            shown::line(&first.actor),
            shown::line(&first.label)
        );
    }
    say!("`journal trash restore ID` brings a deletion's notes back");
    Ok(())
}
