//! `journal notes`: which folder of markdown notes the journal serves, and what it found there.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;

use crate::journal::notes::{self, note::Access};

#[derive(Debug, Subcommand)]
pub enum NotesCommand {
    /// Serve an existing folder of markdown notes (an Obsidian vault, say) in place of notes/ in the journal.
    /// The journal reads and indexes it and never moves or rewrites its files.
    Use {
        /// The vault's folder.
        dir: PathBuf,
    },
    /// Which folder is served, how many notes it holds, and the notes that could not be read.
    Status,
}

pub async fn run(journal_dir: &Path, command: NotesCommand) -> anyhow::Result<()> {
    match command {
        NotesCommand::Use { dir } => use_folder(journal_dir, &dir).await,
        NotesCommand::Status => status(journal_dir).await,
    }
}

async fn use_folder(journal_dir: &Path, dir: &Path) -> anyhow::Result<()> {
    let meta =
        std::fs::metadata(dir).with_context(|| format!("{} cannot be used as the notes folder", dir.display()))?;
    if !meta.is_dir() {
        anyhow::bail!(
            "{} is not a folder; name the folder that holds your notes",
            dir.display()
        );
    }
    let dir = dir
        .canonicalize()
        .with_context(|| format!("{} cannot be used as the notes folder", dir.display()))?;
    crate::fsio::create_dir_all_durable(journal_dir)
        .with_context(|| format!("could not create the journal folder {}", journal_dir.display()))?;
    notes::check_location(journal_dir, &dir)?;
    let text = dir
        .to_str()
        .ok_or_else(|| anyhow::anyhow!("{} is not a UTF-8 path; rename the folder", dir.display()))?
        .to_string();
    crate::config::edit(journal_dir, |doc| {
        crate::config::section(doc, "notes").insert("dir", toml_edit::value(text));
    })?;
    let journal = super::open(journal_dir).await?;
    let set = journal.notes.set();
    println!("serving the notes in {}: {} notes", dir.display(), set.len());
    print_unreadable(&journal).await?;
    println!("a running `journal serve` serves this folder from its next start");
    Ok(())
}

async fn status(journal_dir: &Path) -> anyhow::Result<()> {
    let journal = super::open(journal_dir).await?;
    let set = journal.notes.set();
    let count = |access: Access| set.all().iter().filter(|n| n.access == access).count();
    println!("notes folder: {}", journal.notes.root().display());
    println!(
        "{} notes ({} read-only, {} private); _private/, Widgets/ and dot folders are never served",
        set.len(),
        count(Access::ReadOnly),
        count(Access::Private)
    );
    print_unreadable(&journal).await
}

/// Lists the notes that could not be read, with why (they are served nowhere until fixed).
async fn print_unreadable(journal: &crate::journal::Journal) -> anyhow::Result<()> {
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT path, error FROM notes WHERE error IS NOT NULL ORDER BY path LIMIT 100")
            .fetch_all(&journal.db)
            .await?;
    for (path, error) in rows {
        println!("not served: {path}: {error}");
    }
    Ok(())
}
