//! The command line: clap types, and one file per command group that turns parsed flags into calls
//! on the library. Errors reach people as one line, `error: what went wrong: why`, and exit status 1.

/// Prints a line to standard output. A closed output is no error: whoever read it stopped reading
/// (`journal ... | head`, a supervisor that closed the stream), and the command's work is done or
/// goes on all the same; a server must never die of it. Every command prints through this.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `say!` without the line break (a diff that carries its own).
macro_rules! say_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

mod app;
mod content;
mod graph;
mod invocation;
mod mcp;
mod notes;
mod oauth;
mod permission;
mod proposals;
mod relay;
mod route;
mod serve;
mod served;
mod shown;
mod trash;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// A personal journal served to AI agents over MCP, safely.
#[derive(Debug, Parser)]
#[command(name = "journal", version, about, propagate_version = true)]
pub struct Cli {
    /// The journal folder (default: $XDG_DATA_HOME/journal or ~/.local/share/journal).
    #[arg(long, global = true, env = "JOURNAL_HOME", value_name = "DIR")]
    pub journal: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create the journal folder (other commands create it too when it is missing).
    Init,
    /// Serve the journal to MCP clients on the loopback address.
    Serve(serve::ServeArgs),
    /// Facets: the areas of life or work that content is filed under.
    #[command(subcommand)]
    Facet(content::FacetCommand),
    /// People, places, projects and organisations.
    #[command(subcommand)]
    Entity(content::EntityCommand),
    /// Bring content in from files.
    #[command(subcommand)]
    Import(content::ImportCommand),
    /// The owner's markdown notes: which folder is served, and what was found there.
    #[command(subcommand)]
    Notes(notes::NotesCommand),
    /// Changes agents proposed to notes: review them, accept or reject them.
    #[command(subcommand)]
    Proposals(proposals::ProposalsCommand),
    /// The graph: typed connections between notes, entities, facets and segments, with each author's note.
    #[command(subcommand)]
    Graph(graph::GraphCommand),
    /// Notes agents deleted: list them, bring them back.
    #[command(subcommand)]
    Trash(trash::TrashCommand),
    /// Write a realistic sample journal into DIR.
    Demo(content::DemoArgs),
    /// Rebuild the search index from the files.
    Reindex,
    /// Who may connect: keys, sign-in (pairing codes, signed-in apps), grants and the activity log.
    #[command(subcommand)]
    Mcp(mcp::McpCommand),
    /// The owner app in the browser: prints (and opens) a one-time sign-in link.
    App(app::AppArgs),
    /// The ways of reaching the journal: list them, turn the LAN and own-domain routes on or off, the LAN route's certificate authority.
    #[command(subcommand)]
    Route(route::RouteCommand),
    /// Run a relay on a server of your own, for journals behind NAT: serve it, enrol journals.
    #[command(subcommand)]
    Relay(relay::RelayCommand),
}

/// Runs the command line and maps the outcome to an exit status.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(error),
    };
    let verbose = matches!(
        cli.command,
        Command::Serve(_) | Command::Relay(relay::RelayCommand::Serve(_))
    );
    init_tracing(verbose);
    crate::alloc::configure();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    // Resolved only by the commands that use a journal folder: `demo DIR` and `serve --demo` need
    // no HOME or JOURNAL_HOME.
    let journal = cli.journal;
    let creates = matches!(
        cli.command,
        Command::Init
            | Command::Serve(_)
            | Command::Import(_)
            | Command::Facet(_)
            | Command::Entity(_)
            | Command::Notes(_)
            | Command::Demo(_)
            // Settings in journal.toml, read or written before the journal's first start.
            | Command::Route(_)
    );
    // A new journal, or a server of its own: never the one another server serves.
    let follows = !matches!(cli.command, Command::Init | Command::Serve(_) | Command::Demo(_));
    let dir = move || which_journal(journal, creates, follows);
    match cli.command {
        Command::Init => content::init(&dir()?).await,
        Command::Serve(args) if args.demo => serve::run(None, args).await,
        Command::Serve(args) => serve::run(Some(&dir()?), args).await,
        Command::Facet(command) => content::facet(&dir()?, command).await,
        Command::Entity(command) => content::entity(&dir()?, command).await,
        Command::Import(command) => content::import(&dir()?, command).await,
        Command::Notes(command) => notes::run(&dir()?, command).await,
        // Loaded: accepting a graph proposal finds the notes it names.
        Command::Proposals(command) => proposals::run(&open(&dir()?).await?, command).await,
        Command::Graph(command) => graph::run(&dir()?, command).await,
        Command::Trash(command) => trash::run(&open_for_access(&dir()?).await?, command).await,
        Command::Demo(args) => content::demo(args).await,
        Command::Reindex => content::reindex(&dir()?).await,
        Command::Mcp(command) => mcp::run(&dir()?, command).await,
        Command::App(args) => app::run(&dir()?, args).await,
        Command::Route(command) => route::run(&dir()?, command).await,
        Command::Relay(command) => relay::run(command).await,
    }
}

/// The journal a command acts on: the one named (`--journal`, `JOURNAL_HOME`), else the default
/// folder, else, when there is no journal there and one server runs on this computer, the journal
/// that server serves (said on stderr). A command that only reads or pairs never makes an empty
/// journal: it says what to run instead.
fn which_journal(
    named: Option<std::path::PathBuf>,
    creates: bool,
    follows: bool,
) -> anyhow::Result<std::path::PathBuf> {
    let explicit = named.is_some() || !follows;
    let default = crate::config::journal_dir(named)?;
    let exists = |dir: &std::path::Path| dir.join("journal.db").is_file();
    let dir = if explicit {
        default
    } else {
        let running = served::running();
        match running.iter().find(|s| served::same(&s.journal, &default)) {
            Some(_) => default,
            None if exists(&default) => {
                if let Some(other) = running.first() {
                    eprintln!(
                        "note: this acts on the journal in {}; the server at {} serves {} (add --journal {} to act on that one)",
                        default.display(),
                        other.url,
                        other.journal.display(),
                        other.journal.display()
                    );
                }
                default
            }
            None => match running.as_slice() {
                [one] => {
                    eprintln!(
                        "using the journal the server at {} serves: {}",
                        one.url,
                        one.journal.display()
                    );
                    one.journal.clone()
                }
                [] => default,
                several => anyhow::bail!(
                    "there is no journal in {}, and several servers run here: add --journal with one of {}",
                    default.display(),
                    several
                        .iter()
                        .map(|s| format!("{} ({})", s.journal.display(), s.url))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
        }
    };
    if !creates && !exists(&dir) {
        anyhow::bail!(
            "there is no journal in {}: make one with `journal init`, serve the sample one with `journal serve --demo`, or add --journal DIR (or set JOURNAL_HOME)",
            dir.display()
        );
    }
    Ok(dir)
}

/// Help and version print as clap renders them; a usage error becomes one line with a pointer to help.
fn usage_error(error: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = error.print();
            return ExitCode::SUCCESS;
        }
        // `journal mcp` alone: the list of what can follow is the most useful answer, but it is
        // still a usage error.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = error.print();
            return ExitCode::from(2);
        }
        _ => {}
    }
    // clap's first paragraph says what was wrong (possibly over several lines); the rest is usage.
    let rendered = error.render().to_string();
    let first: Vec<&str> = rendered
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim)
        .collect();
    let first = first.join(" ");
    let first = first.strip_prefix("error: ").unwrap_or(&first);
    eprintln!(
        "error: {}; see `journal --help` or add --help to the command",
        first.trim_end_matches(['.', ':'])
    );
    ExitCode::from(2)
}

fn init_tracing(verbose: bool) {
    let default = if verbose { "info" } else { "warn" };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colours only on a terminal: journald and log files get plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_target(false)
        .try_init();
}

/// Opens the journal for a command, with the folder named in any error.
async fn open(dir: &std::path::Path) -> anyhow::Result<std::sync::Arc<crate::journal::Journal>> {
    naming_folder(dir, crate::journal::Journal::open(dir).await)
}

/// Opens the journal without bringing its catalog up to date with the files (a full sync stats every
/// file: seconds on a journal of a million) and without reading the notes' catalog into memory: for
/// commands that only touch access state (keys, grants, sign-ins, routes, the audit log) and for
/// `reindex`, which rebuilds both.
async fn open_for_access(dir: &std::path::Path) -> anyhow::Result<std::sync::Arc<crate::journal::Journal>> {
    naming_folder(dir, crate::journal::Journal::open_unloaded(dir).await)
}

/// Opens the journal for `serve`: not synced (the server syncs in the background once it listens),
/// with the notes' catalog read so that notes are served at once.
async fn open_to_serve(dir: &std::path::Path) -> anyhow::Result<std::sync::Arc<crate::journal::Journal>> {
    naming_folder(dir, crate::journal::Journal::open_unsynced(dir).await)
}

fn naming_folder<T>(dir: &std::path::Path, opened: Result<T, crate::journal::JournalError>) -> anyhow::Result<T> {
    use anyhow::Context;
    opened.with_context(|| format!("could not open the journal in {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clap checks a command's definition only in debug builds, and only for the command that runs:
    /// check every one (two arguments with one name, say, would panic at its first use).
    #[test]
    fn every_command_is_well_defined() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
