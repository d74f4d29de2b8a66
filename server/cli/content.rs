//! Commands for content: init, facets, entities, imports, the demo journal and reindexing.

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::{Args, Subcommand};

use super::{open, open_for_access};
use crate::journal::content::{self, ImportOptions, NewEntity, NewFacet};
use crate::journal::day::{self, Day};
use crate::journal::entity::EntityType;
use crate::journal::{Journal, demo};

#[derive(Debug, Subcommand)]
pub enum FacetCommand {
    /// Create a facet.
    Create {
        /// Lowercase name, also its folder: letters, digits and '-' (like "work").
        name: String,
        #[arg(long)]
        title: Option<String>,
        #[arg(long)]
        description: Option<String>,
        #[arg(long)]
        emoji: Option<String>,
        /// #rrggbb
        #[arg(long)]
        color: Option<String>,
    },
    /// List facets with their ids.
    List,
}

#[derive(Debug, Subcommand)]
pub enum EntityCommand {
    /// Add a person, place, project or organization.
    Add {
        name: String,
        /// person, place, project or organization
        #[arg(long = "type", value_name = "TYPE")]
        kind: String,
        /// Another name it goes by (repeatable).
        #[arg(long)]
        aka: Vec<String>,
        /// A facet it belongs to (needs --description).
        #[arg(long, requires = "description")]
        facet: Option<String>,
        /// What it is within --facet.
        #[arg(long, requires = "facet")]
        description: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Import transcript files (.vtt, .srt, .jsonl, .txt), one segment each, all or nothing.
    Transcript {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The day it was said (YYYY-MM-DD).
        #[arg(long)]
        day: String,
        /// When the recording started (HH:MM:SS; default 00:00:00).
        #[arg(long)]
        time: Option<String>,
        /// File it under this facet (repeatable).
        #[arg(long)]
        facet: Vec<String>,
    },
    /// Copy markdown files (.md) into the notes folder as notes, all or nothing; each keeps its name
    /// (a taken name gets -2, -3, ...).
    Note {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The folder in the notes folder to put them in, e.g. Inbox or Projects/2026 (default: its top).
        #[arg(long, default_value = "")]
        folder: String,
    },
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to write the sample journal (must be empty or missing).
    pub dir: PathBuf,
    /// How many days of transcripts, ending today.
    #[arg(long, default_value_t = 14)]
    pub days: u32,
    /// Transcript segments per day.
    #[arg(long, default_value_t = 4)]
    pub segments_per_day: u32,
    /// Seed for the generator: the same seed writes the same journal.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Generated notes to add to the sample vault, in notes/Generated/ (for benchmarks).
    #[arg(long, default_value_t = 0)]
    pub notes: u32,
}

pub async fn init(dir: &Path) -> anyhow::Result<()> {
    let journal = open(dir).await?;
    say!("journal ready in {}", journal.root().display());
    Ok(())
}

pub async fn facet(dir: &Path, command: FacetCommand) -> anyhow::Result<()> {
    let journal = open(dir).await?;
    match command {
        FacetCommand::Create {
            name,
            title,
            description,
            emoji,
            color,
        } => {
            let facet = content::create_facet(
                &journal,
                NewFacet {
                    name,
                    title,
                    description,
                    emoji,
                    color,
                },
            )
            .await?;
            say!("created facet {} ({})", facet.name, facet.id);
        }
        FacetCommand::List => {
            let facets = journal.facets();
            if facets.is_empty() {
                say!("no facets yet: create one with `journal facet create NAME`");
            }
            for facet in facets.iter() {
                let emoji = facet.emoji.as_deref().map(|e| format!("{e} ")).unwrap_or_default();
                say!("{}  {}{}  {}", facet.id, emoji, facet.name, facet.display_title());
            }
        }
    }
    Ok(())
}

pub async fn entity(dir: &Path, command: EntityCommand) -> anyhow::Result<()> {
    let journal = open(dir).await?;
    let EntityCommand::Add {
        name,
        kind,
        aka,
        facet,
        description,
    } = command;
    let Some(kind) = EntityType::parse(&kind) else {
        bail!("entity type \"{kind}\" is not known: use person, place, project or organization");
    };
    let entity = content::add_entity(
        &journal,
        NewEntity {
            name,
            kind,
            aka,
            facet: facet.zip(description),
        },
    )
    .await?;
    say!("added {} {} ({})", entity.kind.as_str(), entity.name, entity.id);
    Ok(())
}

pub async fn import(dir: &Path, command: ImportCommand) -> anyhow::Result<()> {
    let (files, day, time, facet) = match command {
        ImportCommand::Transcript {
            files,
            day,
            time,
            facet,
        } => (files, day, time, facet),
        ImportCommand::Note { files, folder } => return import_notes(dir, &files, &folder).await,
    };
    let day = Day::parse(&day).map_err(|e| anyhow::anyhow!("--day: {e}"))?;
    let start = match time {
        Some(time) => day::parse_time(&time).map_err(|e| anyhow::anyhow!("--time: {e}"))?,
        None => 0,
    };
    let journal = open(dir).await?;
    let written = content::import_transcripts(
        &journal,
        &files,
        &ImportOptions {
            day,
            start,
            facets: facet,
        },
    )
    .await?;
    print_lines(written.iter().map(|path| {
        format!(
            "imported {}",
            path.strip_prefix(journal.root()).unwrap_or(path).display()
        )
    }));
    Ok(())
}

/// Prints one line per file through one buffer (an import of 10,000 files says 10,000 lines), and
/// stops quietly when whoever reads the output stopped reading (`| head`): the work is done either
/// way, and its error would only hide that.
fn print_lines(lines: impl Iterator<Item = String>) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in lines {
        if writeln!(out, "{line}").is_err() {
            return;
        }
    }
    let _ = out.flush();
}

async fn import_notes(dir: &Path, files: &[std::path::PathBuf], folder: &str) -> anyhow::Result<()> {
    let journal = open(dir).await?;
    let written = crate::journal::notes::import::import_notes(&journal, files, folder).await?;
    print_lines(written.iter().map(|path| format!("imported note {path}")));
    Ok(())
}

pub async fn demo(args: DemoArgs) -> anyhow::Result<()> {
    let options = demo::DemoOptions {
        days: args.days,
        segments_per_day: args.segments_per_day,
        seed: args.seed,
        end: Day::today(),
        notes: args.notes,
    };
    let report = write_demo(&args.dir, &options).await?;
    say!("{report}");
    Ok(())
}

/// Writes a demo journal into `dir` and indexes it; answers a one-line summary.
pub async fn write_demo(dir: &Path, options: &demo::DemoOptions) -> anyhow::Result<String> {
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        bail!(
            "{} is not empty: the demo writes into a new or empty folder",
            dir.display()
        );
    }
    let written = demo::write(dir, options)?;
    let journal = Journal::open(dir).await?;
    Ok(format!(
        "wrote a demo journal to {}: {} facets, {} entities, {} transcript segments, {} notes",
        journal.root().display(),
        written.facets,
        written.entities,
        written.segments,
        journal.notes.set().len()
    ))
}

pub async fn reindex(dir: &Path) -> anyhow::Result<()> {
    // Not synced first: the reindex reads every file anyway.
    let journal = open_for_access(dir).await?;
    let started = std::time::Instant::now();
    let report = journal.reindex().await?;
    if report.deferred {
        bail!(
            "the index is in use by a running `journal serve`; it keeps the index current by itself, or stop it and run reindex again"
        );
    }
    let seconds = started.elapsed().as_secs_f64();
    say!(
        "indexed {} files ({:.1} MB of text) in {:.2} s{}",
        report.indexed,
        report.bytes as f64 / 1e6,
        seconds,
        if report.failed.is_empty() {
            String::new()
        } else {
            format!("; {} could not be read", report.failed.len())
        }
    );
    for (path, error) in &report.failed {
        say!("  {path}: {error}");
    }
    Ok(())
}
