//! The one gate every change to a note goes through, whoever makes it: an agent in force mode, an
//! agent's proposal (staged, not made), the owner accepting a proposal, the owner undoing a change.
//!
//! A change is planned off the async threads (`write::plan`: every access rule, the expected hash,
//! the new text), its previous version is recorded in the history (`history`), then the file is
//! replaced (`write::commit`); a commit that fails forgets the version, so that the history and the
//! files agree. Afterwards a quick sync makes the change visible to reads and searches.
//!
//! One writer at a time: from the plan (where the note is read and its hash compared) to the
//! rename, a change holds `notes.lock` in the journal folder (`Writer`), which every process on the
//! journal takes, so two agents appending at once both land, and of two writes with the same
//! `expected_hash` exactly one is made. Only the owner's own editor writes without it; the
//! comparison just before the rename narrows that window to the rename itself.

use std::sync::Arc;

use serde_json::Value;

use super::Reader;
use super::history::{self, ChangeRecord, ChangedBy, NewVersion};
use super::write::{self, NoteChange, Plan, WriteError, Written};
use crate::journal::Journal;
use crate::journal::proposals::{self, Kind, NewProposal, Proposal, ProposalError};

/// A change without an expected hash is planned again this many times when the note changes
/// between its plan and its commit (the owner saving in an editor, which takes no lock).
const ATTEMPTS: usize = 3;

/// The lock file that makes one writer of notes at a time, in the journal folder.
pub const WRITER_LOCK: &str = "notes.lock";

/// How long a change waits for the writer before it (in this process or another) to finish.
const WRITER_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The right to change notes: one holder at a time across every process on this journal, from the
/// plan to the rename (see the module's doc). Dropped, it lets the next writer in.
pub struct Writer {
    _lock: crate::fsio::Lock,
}

/// Waits for the right to change notes.
async fn writer(journal: &Arc<Journal>) -> Result<Writer, ChangeError> {
    let path = journal.root().join(WRITER_LOCK);
    let taken = tokio::task::spawn_blocking(move || crate::fsio::Lock::take(&path, WRITER_WAIT))
        .await
        .map_err(|e| ChangeError::Failed(e.to_string()))?;
    let writer = match taken {
        Ok(lock) => Writer { _lock: lock },
        Err(crate::fsio::LockError::Busy) => return Err(ChangeError::Busy),
        Err(crate::fsio::LockError::Io(e)) => return Err(ChangeError::Failed(format!("{WRITER_LOCK}: {e}"))),
    };
    // Whatever a writer that died left half-made is undone before anything else is changed.
    recover(journal, &writer).await?;
    Ok(writer)
}

/// At open: undoes what a writer that died left half-made, unless a live writer holds the notes
/// now (then that writer, or the next, does it), so that reads never see a half-made change.
pub async fn recover_at_open(journal: &Journal) -> Result<(), ChangeError> {
    let path = journal.root().join(WRITER_LOCK);
    let taken = tokio::task::spawn_blocking(move || crate::fsio::Lock::take(&path, std::time::Duration::ZERO))
        .await
        .map_err(|e| ChangeError::Failed(e.to_string()))?;
    match taken {
        Ok(lock) => recover(journal, &Writer { _lock: lock }).await,
        Err(crate::fsio::LockError::Busy) => Ok(()),
        Err(crate::fsio::LockError::Io(e)) => Err(ChangeError::Failed(format!("{WRITER_LOCK}: {e}"))),
    }
}

/// Undoes every change recorded and never marked done. The caller holds the writer, and a live
/// writer marks its change done before it lets the writer go, so each of these belongs to a process
/// that died between recording its change and finishing it: none was acknowledged. Each note goes
/// back only from the state this change left it in (its `after_hash`, or a move's new file), so an
/// edit the owner made since is never undone; the graph follows moved notes back; the change is
/// forgotten; a proposal it was accepting is still pending.
async fn recover(journal: &Journal, _writer: &Writer) -> Result<(), ChangeError> {
    for change_id in history::unfinished(&journal.db).await? {
        let versions = history::of_change(&journal.db, change_id).await?;
        let walls = journal.notes.walls().clone();
        let renames = blocking(move || Ok(super::recovery::undo(&walls, &versions))).await?;
        if !renames.is_empty() {
            crate::journal::graph::store::rename_notes(journal.root(), renames).await;
        }
        history::forget(&journal.db, change_id).await?;
        tracing::warn!(
            change_id,
            "a change to the notes left half-made by a process that stopped was undone"
        );
    }
    Ok(())
}

/// Why a change was not made (or not staged). Nothing changed in any case.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// A rule of the write refused it; the text is for the agent (or the owner).
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Store(#[from] ProposalError),
    /// No proposal or version with that id.
    #[error("{0}")]
    NotFound(String),
    /// A proposal that was already accepted or rejected.
    #[error("proposal {id} was already {status}")]
    Decided { id: i64, status: &'static str },
    /// The note changed since the proposal (or since the owner looked): nothing applied blindly.
    #[error(
        "the note {path} changed since this was proposed (its hash is now {current}); review the change against the \
         note as it is now and accept it onto the current note, or reject it"
    )]
    Stale { path: String, current: String },
    #[error("{0}")]
    Invalid(String),
    /// An agent's change that touches instructions for other agents (`rules::instructs`): never
    /// made at once, whatever the agent's write mode; the caller proposes it instead.
    #[error(
        "AGENTS.md and skills instruct other agents: a change to them always waits for the owner's review; propose it"
    )]
    Instructions,
    /// The agent's changes already keep its budget of earlier versions (`history`).
    #[error("{0}")]
    HistoryFull(String),
    /// Another writer of the notes held them for the whole wait.
    #[error("another change to the notes is taking long; nothing was changed, try again in a moment")]
    Busy,
    #[error("the journal database: {0}")]
    Db(#[from] sqlx::Error),
    #[error("the change could not be made: {0}")]
    Failed(String),
}

/// One change an agent asks for.
#[derive(Debug, Clone)]
pub struct Request {
    pub by: ChangedBy,
    pub reader: Reader,
    /// The write tool, and its arguments as sent (kept with a proposal).
    pub tool: String,
    pub arguments: Value,
    pub path: String,
    pub change: NoteChange,
    pub expected_hash: Option<String>,
}

/// A staged proposal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposed {
    pub id: i64,
    pub path: String,
    /// The note's hash when proposed (None: a new note; for a folder, one hash of its notes).
    pub base_hash: Option<String>,
    /// The notes it would change (for a move: the moved notes at their new paths).
    pub notes: Vec<String>,
    /// For a move: the other notes whose links it would write again.
    pub links: Vec<String>,
}

/// A change that was made: one note, or every note of a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Made {
    /// The path the request named.
    pub path: String,
    /// The note's new hash (None: removed, or several notes).
    pub hash: Option<String>,
    pub notes: Vec<Written>,
}

impl Made {
    /// The notes it changed (for a move: the moved notes at their new paths), and for a move the
    /// other notes whose links it wrote again.
    pub fn summary(&self, change: &NoteChange) -> (Vec<String>, Vec<String>) {
        summary(
            change,
            self.notes.iter().map(|w| (w.path.as_str(), w.moved_from.is_some())),
        )
    }
}

/// Splits the notes of a change: for a move, the moved notes and those whose links changed.
fn summary<'a>(change: &NoteChange, notes: impl Iterator<Item = (&'a str, bool)>) -> (Vec<String>, Vec<String>) {
    let mut changed = Vec::new();
    let mut links = Vec::new();
    let moving = matches!(change, NoteChange::Move { .. });
    for (path, moved) in notes {
        if moving && !moved {
            links.push(path.to_string());
        } else {
            changed.push(path.to_string());
        }
    }
    (changed, links)
}

/// Makes an agent's change now (force mode), keeping the previous version.
pub async fn apply(journal: &Arc<Journal>, request: &Request) -> Result<Made, ChangeError> {
    let record = ChangeRecord {
        by: request.by.clone(),
        tool: request.tool.clone(),
        proposal_id: None,
        reverted: None,
    };
    make(journal, request, request.expected_hash.clone(), &record).await
}

/// Stages an agent's change as a proposal (propose mode): checked by every rule now, as if it were
/// made, and nothing changed.
pub async fn propose(journal: &Arc<Journal>, request: &Request) -> Result<Proposed, ChangeError> {
    let plans = plan(journal, request, request.expected_hash.clone()).await?;
    let Some(connection_id) = request.by.connection_id.clone() else {
        return Err(ChangeError::Invalid("only an agent proposes changes".into()));
    };
    let change = serde_json::to_string(&request.change).map_err(|e| ChangeError::Failed(e.to_string()))?;
    let base_hash = write::base_hash(&plans);
    let id = proposals::insert(
        &journal.db,
        &NewProposal {
            kind: Kind::Note,
            connection_id,
            label: request.by.label.clone(),
            tool: request.tool.clone(),
            arguments: request.arguments.to_string(),
            change,
            path: request.path.clone(),
            base_hash: base_hash.clone(),
            diff: diff_of(&plans),
        },
    )
    .await?;
    let (notes, links) = summary(
        &request.change,
        plans.iter().map(|p| (p.path.as_str(), p.source.is_some())),
    );
    Ok(Proposed {
        id,
        path: request.path.clone(),
        base_hash,
        notes,
        links,
    })
}

/// The change a proposal makes, worked out against the note as it is now.
#[derive(Debug, Clone)]
pub struct Preview {
    /// The note's hash now (None: no note there).
    pub current_hash: Option<String>,
    /// Whether the note changed since the proposal.
    pub stale: bool,
    /// The diff against the note as it is now, or why the change cannot be made to it now.
    pub diff_now: Result<String, String>,
}

/// Works out what accepting `proposal` would do now, for the owner's review (`journal_access::review`).
/// `reader` is the proposing connection as a reader today.
pub async fn preview(journal: &Arc<Journal>, proposal: &Proposal, reader: Reader) -> Result<Preview, ChangeError> {
    let request = stored_request(proposal, reader)?;
    let planned = plan(journal, &request, None).await;
    let current_hash = match &planned {
        Ok(plans) => write::base_hash(plans),
        Err(_) => current_hash(journal, &proposal.path).await,
    };
    Ok(Preview {
        stale: current_hash != proposal.base_hash,
        current_hash,
        diff_now: planned.map(|p| diff_of(&p)).map_err(|e| e.to_string()),
    })
}

/// Makes a pending proposal's change, as its connection (`reader`, today), by every rule of a write.
/// The note must be as it was when proposed, or (with `onto`) as the owner last saw it in the review.
/// Only the owner's review calls it (`journal_access::review`), which has checked that the proposal
/// is pending and holds the review lock; the proposal is decided in the change's own transaction.
pub async fn accept(
    journal: &Arc<Journal>,
    proposal: &Proposal,
    reader: Reader,
    onto: Option<&str>,
) -> Result<Made, ChangeError> {
    let request = stored_request(proposal, reader)?;
    let record = ChangeRecord {
        by: request.by.clone(),
        tool: request.tool.clone(),
        proposal_id: Some(proposal.id),
        reverted: None,
    };
    let expected = onto.map(str::to_string).or_else(|| proposal.base_hash.clone());
    let written = match make(journal, &request, expected, &record).await {
        Err(ChangeError::Write(WriteError::Conflict { current })) => {
            return Err(ChangeError::Stale {
                path: proposal.path.clone(),
                current,
            });
        }
        // A new note proposed where one is now: the same conflict.
        Err(ChangeError::Write(WriteError::Exists(_) | WriteError::NotCreatable(_)))
            if proposal.base_hash.is_none() =>
        {
            let current = current_hash(journal, &proposal.path).await.unwrap_or_default();
            return Err(ChangeError::Stale {
                path: proposal.path.clone(),
                current,
            });
        }
        other => other?,
    };
    // Decided in the same transaction that marked the change done (`commit_recorded`).
    Ok(written)
}

/// The owner's undo of a version: the note goes back to what it was before that change (a note the
/// change created is removed). Made over whatever the note holds now (when `expected_hash` is
/// given, only if it still holds that; `""`: only if there is no note), and itself kept in the
/// history, so an undo can be undone.
pub async fn revert(
    journal: &Arc<Journal>,
    version_id: i64,
    expected_hash: Option<&str>,
) -> Result<Written, ChangeError> {
    let _undo = UNDO.lock().await;
    let (version, before) = history::get(&journal.db, version_id)
        .await?
        .ok_or_else(|| ChangeError::NotFound(format!("there is no version {version_id} in the notes' history")))?;
    let record = ChangeRecord {
        by: ChangedBy::owner(),
        tool: "revert".into(),
        proposal_id: None,
        reverted: Some(version_id),
    };
    // A move (or the undo of one) is undone whole: its notes and the links it wrote again.
    if history::moved_any(&journal.db, version.change_id).await? {
        let versions = history::of_change(&journal.db, version.change_id).await?;
        return revert_move(journal, version.change_id, versions, &record).await;
    }
    let writer = writer(journal).await?;
    let walls = journal.notes.walls().clone();
    let path = version.path.clone();
    let expected = expected_hash.map(str::to_string);
    let plan = blocking(move || write::plan_restore(&walls, &path, before, expected.as_deref())).await?;
    let mut made = commit_recorded(journal, &writer, vec![plan], &record, None).await?;
    settle(journal, writer).await;
    Ok(made.remove(0))
}

/// Undoes a whole move (or the undo of one): every note goes back where it was, as it was, and every
/// note whose links it wrote again gets its text back. All or nothing, and only over notes as the
/// move left them: an owner's edit since is never undone unseen. Answers the note of the version
/// named, or the first.
async fn revert_move(
    journal: &Arc<Journal>,
    change_id: i64,
    versions: Vec<(history::Version, Option<Vec<u8>>)>,
    record: &ChangeRecord,
) -> Result<Written, ChangeError> {
    let named = record.reverted;
    let writer = writer(journal).await?;
    let walls = journal.notes.walls().clone();
    let plans = blocking(move || {
        let mut moves = Vec::new();
        let mut rewrites = Vec::new();
        for (version, before) in versions {
            let changed_since = |error: WriteError| match error {
                WriteError::Conflict { .. } | WriteError::Missing(_) => WriteError::Refused(format!(
                    "{} changed since the move; undo that change first, or move the note back yourself",
                    version.new_path.as_deref().unwrap_or(&version.path)
                )),
                WriteError::NotCreatable(path) => WriteError::Refused(format!(
                    "{path} is taken again; move that note away first, then undo the move"
                )),
                other => other,
            };
            let bytes = before.ok_or_else(|| WriteError::Refused("the version keeps no file".into()))?;
            let plan = match version.new_path.as_deref() {
                Some(new_path) if new_path != version.path => {
                    let plan =
                        write::plan_move_back(&walls, new_path, version.after_hash.as_deref(), &version.path, bytes)
                            .map_err(changed_since)?;
                    let first = Some(version.id) == named;
                    moves.push((first, plan));
                    continue;
                }
                _ => write::plan_restore(&walls, &version.path, Some(bytes), version.after_hash.as_deref())
                    .map_err(changed_since)?,
            };
            rewrites.push(plan);
        }
        moves.sort_by_key(|(first, _)| !first);
        Ok(moves
            .into_iter()
            .map(|(_, plan)| plan)
            .chain(rewrites)
            .collect::<Vec<Plan>>())
    })
    .await?;
    let mut made = commit_recorded(journal, &writer, plans, record, None).await?;
    settle(journal, writer).await;
    if made.is_empty() {
        return Err(ChangeError::NotFound(format!("change {change_id} has nothing to undo")));
    }
    Ok(made.remove(0))
}

/// Brings back every note an agent's deletion (`note_delete`, change `change_id`) took, where it was.
/// All or nothing: when any of their paths is taken again, nothing is restored. The restore is kept
/// in the history (and can be undone).
pub async fn restore(journal: &Arc<Journal>, change_id: i64) -> Result<Vec<Written>, ChangeError> {
    let _undo = UNDO.lock().await;
    let versions = history::of_change(&journal.db, change_id).await?;
    let not_found = || ChangeError::NotFound(format!("there is no deletion {change_id} in the trash"));
    if versions.is_empty() || versions.iter().any(|(v, _)| v.tool != "note_delete") {
        return Err(not_found());
    }
    let writer = writer(journal).await?;
    let walls = journal.notes.walls().clone();
    let plans = blocking(move || {
        versions
            .into_iter()
            .map(|(v, before)| {
                // "" expects no note there: a restore never replaces one.
                write::plan_restore(&walls, &v.path, before, Some("")).map_err(|error| match error {
                    WriteError::Conflict { .. } | WriteError::NotCreatable(_) => WriteError::Refused(format!(
                        "{} is taken again; move that note away first, or bring back this one alone with `journal \
                         notes revert`",
                        v.path
                    )),
                    other => other,
                })
            })
            .collect::<Result<Vec<Plan>, WriteError>>()
    })
    .await?;
    let record = ChangeRecord {
        by: ChangedBy::owner(),
        tool: "restore".into(),
        proposal_id: None,
        reverted: None,
    };
    let made = commit_recorded(journal, &writer, plans, &record, None).await?;
    settle(journal, writer).await;
    Ok(made)
}

/// One undo at a time in this process: two windows undoing the same change make it once.
static UNDO: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The request a stored proposal makes, as its connection today.
fn stored_request(proposal: &Proposal, reader: Reader) -> Result<Request, ChangeError> {
    let change: NoteChange = serde_json::from_str(&proposal.change)
        .map_err(|e| ChangeError::Failed(format!("proposal {} cannot be read: {e}", proposal.id)))?;
    Ok(Request {
        by: ChangedBy::agent(&proposal.connection_id, &proposal.label),
        reader,
        tool: proposal.tool.clone(),
        arguments: serde_json::from_str(&proposal.arguments).unwrap_or(Value::Null),
        path: proposal.path.clone(),
        change,
        expected_hash: proposal.base_hash.clone(),
    })
}

/// Plans, records and commits a change; without an expected hash, a note that changed between
/// plan and commit is planned again.
async fn make(
    journal: &Arc<Journal>,
    request: &Request,
    expected_hash: Option<String>,
    record: &ChangeRecord,
) -> Result<Made, ChangeError> {
    let writer = writer(journal).await?;
    let mut attempt = 1;
    loop {
        let plans = plan(journal, request, expected_hash.clone()).await?;
        // The owner accepting a proposal makes it; an agent never makes one itself.
        if record.proposal_id.is_none() && record.by.connection_id.is_some() && touches_instructions(&plans) {
            return Err(ChangeError::Instructions);
        }
        match commit_recorded(journal, &writer, plans, record, Some(&request.change)).await {
            Err(ChangeError::Write(WriteError::Conflict { .. })) if expected_hash.is_none() && attempt < ATTEMPTS => {
                attempt += 1;
            }
            Err(error) => return Err(error),
            Ok(notes) => {
                settle(journal, writer).await;
                if matches!(
                    request.change,
                    NoteChange::Delete { folder: true } | NoteChange::Move { folder: true, .. }
                ) {
                    let (walls, folder) = (journal.notes.walls().clone(), request.path.clone());
                    let _ = tokio::task::spawn_blocking(move || write::remove_empty_folders(&walls, &folder)).await;
                }
                let hash = made_hash(&notes, &request.change);
                return Ok(Made {
                    path: request.path.clone(),
                    hash,
                    notes,
                });
            }
        }
    }
}

async fn plan(
    journal: &Arc<Journal>,
    request: &Request,
    expected_hash: Option<String>,
) -> Result<Vec<Plan>, ChangeError> {
    if matches!(request.change, NoteChange::Move { .. }) {
        // A move rewrites the links that name what moves, found in the catalog: it must know the
        // notes as they are now, the owner's latest edits included.
        if let Err(error) = journal.sync().await {
            tracing::warn!(%error, "the notes could not be synced before a move; links are found as of the last sync");
        }
    }
    let walls = journal.notes.walls().clone();
    let set = journal.notes.set();
    let (reader, path, change) = (request.reader.clone(), request.path.clone(), request.change.clone());
    let root = journal.root().to_path_buf();
    blocking(move || {
        let plans = write::plan_all(&walls, &set, &reader, &path, &change, expected_hash.as_deref())?;
        check_no_orphans(&root, &plans)?;
        Ok(plans)
    })
    .await
}

/// A note an agent puts at a new path (created, or moved there) may not take the graph's
/// connections that name that path: with no note there, they are the owner's, left by a note moved
/// or deleted by hand (or by an agent, with its undo in the trash), and a new note would adopt
/// them, the owner's notes on them and their other ends with them. Such a path answers as any path
/// no note can be created at; the owner sees those connections marked missing in `journal graph list`.
fn check_no_orphans(journal_root: &std::path::Path, plans: &[Plan]) -> Result<(), WriteError> {
    let arriving: Vec<&Plan> = plans
        .iter()
        .filter(|p| (p.after.is_some() && p.original().is_none()) || p.original_path() != p.path)
        .collect();
    if arriving.is_empty() {
        return Ok(());
    }
    let keys: Vec<String> = arriving.iter().map(|p| format!("note:{}", p.path)).collect();
    let named =
        crate::journal::graph::store::names_any(journal_root, &keys).map_err(|e| WriteError::Io(e.to_string()))?;
    match named {
        Some(key) => Err(WriteError::NotCreatable(key.trim_start_matches("note:").to_string())),
        None => Ok(()),
    }
}

/// Whether any note the plans change, at its old path or its new one, instructs agents.
pub fn touches_instructions(plans: &[Plan]) -> bool {
    plans
        .iter()
        .any(|p| super::rules::instructs(&p.path) || super::rules::instructs(p.original_path()))
}

/// The diff of every note a change touches, one after another.
fn diff_of(plans: &[Plan]) -> String {
    plans.iter().map(Plan::diff).collect()
}

/// Records the versions the plans replace and commits them (forgetting the versions if that
/// fails), as the one writer of the notes; the graph follows the notes that moved.
async fn commit_recorded(
    journal: &Arc<Journal>,
    _writer: &Writer,
    plans: Vec<Plan>,
    record: &ChangeRecord,
    change: Option<&NoteChange>,
) -> Result<Vec<Written>, ChangeError> {
    let versions: Vec<NewVersion> = plans
        .iter()
        .map(|plan| NewVersion {
            path: plan.original_path().to_string(),
            new_path: plan.after.as_ref().map(|_| plan.path.clone()),
            before: plan.original().map(<[u8]>::to_vec),
            before_hash: plan.before_hash(),
            after_hash: plan.after_hash(),
        })
        .collect();
    let change_id = history::record(&journal.db, record, &versions, journal.notes.history_budget())
        .await
        .map_err(|e| match e {
            history::RecordError::Db(e) => ChangeError::Db(e),
            full @ history::RecordError::Full { .. } => ChangeError::HistoryFull(full.to_string()),
        })?;
    let written = match blocking(move || write::commit_all(plans)).await {
        Ok(written) => written,
        Err(error) => {
            if let Err(forget) = history::forget(&journal.db, change_id).await {
                tracing::warn!(error = %forget, change_id, "a change that was not made stays in the history");
            }
            return Err(error);
        }
    };
    follow_moves(journal, &written).await;
    // Done, and for an accepted proposal decided, in one transaction: after a crash the change is
    // either done and decided, or undone by the next writer with its proposal still pending.
    let mut tx = crate::db::begin_write(&journal.db).await?;
    history::finish(&mut tx, change_id).await?;
    if let Some(proposal_id) = record.proposal_id {
        let hash = change.and_then(|c| made_hash(&written, c));
        proposals::decide(&mut *tx, proposal_id, proposals::Status::Accepted, "", hash.as_deref()).await?;
    }
    tx.commit().await?;
    Ok(written)
}

/// The hash a change answers with: its one note's, or a single move's note at its new path.
fn made_hash(notes: &[Written], change: &NoteChange) -> Option<String> {
    match (notes, change) {
        ([one], _) => one.hash.clone(),
        (_, NoteChange::Move { folder: false, .. }) => notes
            .iter()
            .find(|w| w.moved_from.is_some())
            .and_then(|w| w.hash.clone()),
        _ => None,
    }
}

/// After a commit: lets the next writer in, then syncs the catalog and keeps the history within
/// its bounds. The change is on disk (acknowledged from here on); the sync makes it visible to
/// reads and searches. A failed sync is retried by the upkeep and does not undo the change.
async fn settle(journal: &Arc<Journal>, writer: Writer) {
    drop(writer);
    sync_written(journal).await;
    prune(journal).await;
}

/// How long a change's sync waits for the index writer that another process holds.
const SYNC_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Syncs after a change until the change is in the catalog, so that the writer's next call reads
/// what it wrote. Another process (a server, a stdio agent, the CLI) may hold the index writer for
/// its own batch, which it holds only that long: a deferred sync is tried again, for a few seconds
/// at most; after that the upkeep's next sync (in whichever process) brings the change in.
async fn sync_written(journal: &Arc<Journal>) {
    let started = std::time::Instant::now();
    loop {
        match journal.sync().await {
            Ok(report) if report.deferred && started.elapsed() < SYNC_WAIT => {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            Ok(report) => {
                if report.deferred {
                    tracing::warn!(
                        "another process held the search index for 5 s; a changed note shows at a later sync"
                    );
                }
                return;
            }
            Err(error) => {
                tracing::warn!(%error, "a changed note is not in the catalog yet; the upkeep retries");
                return;
            }
        }
    }
}

/// A moved note keeps its connections in the graph: every connection that named it at its old
/// path names it at the new one (a move, its undo, the undo of that).
async fn follow_moves(journal: &Arc<Journal>, written: &[Written]) {
    let renames: Vec<(String, String)> = written
        .iter()
        .filter_map(|w| Some((w.moved_from.clone()?, w.path.clone())))
        .collect();
    crate::journal::graph::store::rename_notes(journal.root(), renames).await;
}

/// Keeps the history and the decided proposals within their bounds; a failure is tried again with
/// the next change.
async fn prune(journal: &Arc<Journal>) {
    let now = crate::clock::unix_now();
    if let Err(error) = history::prune(&journal.db, now).await {
        tracing::warn!(%error, "the notes' history could not be pruned; it is tried again with the next change");
    }
    if let Err(error) = crate::journal::graph::history::prune(&journal.db, now).await {
        tracing::warn!(%error, "the graph's history could not be pruned; it is tried again with the next change");
    }
    if let Err(error) = proposals::prune(&journal.db, now).await {
        tracing::warn!(%error, "old decided proposals could not be forgotten; it is tried again with the next change");
    }
}

async fn current_hash(journal: &Arc<Journal>, path: &str) -> Option<String> {
    let (journal, path) = (Arc::clone(journal), path.to_string());
    tokio::task::spawn_blocking(move || journal.notes.read_file(&path).map(|(b, _)| super::note::hash_hex(&b)))
        .await
        .ok()
        .flatten()
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, WriteError> + Send + 'static,
) -> Result<T, ChangeError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ChangeError::Failed(e.to_string()))?
        .map_err(ChangeError::Write)
}
