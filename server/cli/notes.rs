//! `journal notes`: which folder of markdown notes the journal serves, and what it found there.

use super::shown;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;

use crate::journal::day::format_timestamp;
use crate::journal::notes::{self, changes, history, note::Access};

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
    /// The changes agents made to a note (and your undos), newest first, each a version you can go back to.
    History {
        /// The note's path in the notes folder, e.g. Projects/alpha.md.
        path: String,
    },
    /// Undo an agent's change: the note goes back to what it was before that version (a note the
    /// change created is removed). The undo is kept in the history too.
    Revert {
        /// The note's path in the notes folder.
        path: String,
        /// The version to undo, from `journal notes history`.
        #[arg(value_name = "VERSION")]
        number: i64,
    },
}

pub async fn run(journal_dir: &Path, command: NotesCommand) -> anyhow::Result<()> {
    match command {
        NotesCommand::Use { dir } => use_folder(journal_dir, &dir).await,
        NotesCommand::Status => status(journal_dir).await,
        NotesCommand::History { path } => history(journal_dir, &path).await,
        NotesCommand::Revert { path, number } => revert(journal_dir, &path, number).await,
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
    say!("serving the notes in {}: {} notes", dir.display(), set.len());
    print_unreadable(&journal).await?;
    say!("a running `journal serve` serves this folder from its next start");
    Ok(())
}

async fn status(journal_dir: &Path) -> anyhow::Result<()> {
    let journal = super::open(journal_dir).await?;
    let set = journal.notes.set();
    let count = |access: Access| set.all().iter().filter(|n| n.access == access).count();
    say!("notes folder: {}", journal.notes.root().display());
    say!(
        "{} notes ({} read-only, {} private); _private/, Widgets/, dot folders and what git ignores are never served",
        set.len(),
        count(Access::ReadOnly),
        count(Access::Private)
    );
    print_unreadable(&journal).await
}

/// A note path as typed: `Projects/alpha` and `./Projects/alpha.md` name the same note.
fn note_path(text: &str) -> anyhow::Result<String> {
    notes::rules::typed_note_path(text).map_err(|why| anyhow::anyhow!("{text} is not a note path: {why}"))
}

async fn history(journal_dir: &Path, path: &str) -> anyhow::Result<()> {
    let path = note_path(path)?;
    let journal = super::open_for_access(journal_dir).await?;
    let versions = history::of_path(&journal.db, &path, 1000).await?;
    if versions.is_empty() {
        say!(
            "no agent has changed {path} (versions are kept for {} days)",
            history::KEEP_DAYS
        );
        return Ok(());
    }
    for v in versions {
        let what = match (&v.before_hash, &v.new_path) {
            (None, _) => "created".to_string(),
            (_, None) => "deleted".to_string(),
            (_, Some(to)) if *to == path && v.path != path => format!("moved here from {}", shown::line(&v.path)),
            (_, Some(to)) if *to != v.path => format!("moved to {}", shown::line(to)),
            _ if v.tool == "note_move" => "links updated".to_string(),
            _ => "changed".to_string(),
        };
        let by = if v.label.is_empty() {
            shown::line(&v.actor).into_owned()
        } else {
            format!("{} ({})", shown::line(&v.actor), shown::line(&v.label))
        };
        let mut how = v.tool.clone();
        if let Some(id) = v.proposal_id {
            how.push_str(&format!(", proposal {id}"));
        }
        if let Some(id) = v.reverted {
            how.push_str(&format!(" of version {id}"));
        }
        say!(
            "version {:>5}  {}  {by}  {what} ({how}), {} bytes kept",
            v.id,
            format_timestamp(v.at),
            v.size
        );
    }
    say!("`journal notes revert {path} VERSION` undoes a version");
    Ok(())
}

async fn revert(journal_dir: &Path, path: &str, version: i64) -> anyhow::Result<()> {
    let path = note_path(path)?;
    let journal = super::open_for_access(journal_dir).await?;
    match history::get(&journal.db, version).await? {
        Some((v, _)) if v.touches(&path) => {}
        _ => anyhow::bail!("{path} has no version {version}; `journal notes history {path}` lists its versions"),
    };
    let written = changes::revert(&journal, version, None).await?;
    match written.hash {
        Some(_) if written.moved_from.is_some() => say!(
            "{} is back where it was before version {version}, and the links the move updated are as they were",
            written.path
        ),
        Some(_) => say!("{} is back as it was before version {version}", written.path),
        None => say!(
            "{} is removed again, as before version {version} created it",
            written.path
        ),
    }
    say!("this undo is kept in the history too: `journal notes history {path}`");
    Ok(())
}

/// Lists the notes that could not be read, with why (they are served nowhere until fixed).
async fn print_unreadable(journal: &crate::journal::Journal) -> anyhow::Result<()> {
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT path, error FROM notes WHERE error IS NOT NULL ORDER BY path LIMIT 100")
            .fetch_all(&journal.db)
            .await?;
    for (path, error) in rows {
        say!("not served: {path}: {error}");
    }
    Ok(())
}
