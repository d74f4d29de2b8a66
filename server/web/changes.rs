//! The changes pages: every change agents made to notes (and the owner's undos), newest first, and
//! one note's history, each change with its diff and a button that undoes it. An undo is made only
//! over the note as the page showed it (the form carries its hash), and is itself kept in the
//! history.
//!
//! The changes page also holds the trash: every deletion an agent made, with a button that brings
//! its notes back where they were.
//!
//! Undo goes through `notes::changes::revert`, the function behind `journal notes revert`; a
//! restore through `notes::changes::restore`, behind `journal trash restore`.

use askama::Template;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};

use super::form::{OwnerForm, malformed};
use super::notice::Notice;
use super::proposals::{DiffLine, diff_lines};
use super::session::Owner;
use crate::app::AppState;
use crate::journal::day::format_timestamp;
use crate::journal::graph::gate::{self, GateError};
use crate::journal::graph::history as graph_history;
use crate::journal::graph::store::GraphFileError;
use crate::journal::notes::changes::{self, ChangeError};
use crate::journal::notes::history::{self, Version};
use crate::journal::notes::{diff, note, rules};
use crate::page;
use crate::page::form::Params;

/// How many changes the list shows, and how many versions a note's page.
const RECENT: i64 = 100;
const NOTE_VERSIONS: i64 = 50;

/// One change in a list.
pub struct ChangeRow {
    pub id: i64,
    pub at: String,
    pub by: String,
    pub how: String,
    pub what: &'static str,
    pub path: String,
    /// The note's path escaped for a link's query.
    pub path_query: String,
}

/// One deletion in the trash.
pub struct TrashRow {
    pub id: i64,
    pub at: String,
    pub by: String,
    /// The notes it took (the first few).
    pub notes: Vec<String>,
    /// How many more it took.
    pub more: usize,
    /// Every note of it is back in place (restored, or put back by hand).
    pub back: bool,
}

/// How many deletions the trash shows, and how many notes of each.
const TRASH: i64 = 50;
const TRASH_NOTES: usize = 5;

/// One version on a note's page: the change and its diff.
pub struct VersionView {
    pub row: ChangeRow,
    /// None: what the change made is no longer known (the note changed by hand since, and a later
    /// version does not keep it).
    pub diff: Option<Vec<DiffLine>>,
}

/// One change of the graph in the list.
pub struct GraphRow {
    pub id: i64,
    pub at: String,
    pub by: String,
    pub how: String,
    pub what: &'static str,
    /// `from → to` of the connection, and its type.
    pub connection: String,
    /// The connection is still as the change left it, so it can be undone.
    pub undoable: bool,
}

#[derive(Template)]
#[template(path = "app/changes.html")]
struct ChangesPage {
    nonce: String,
    csrf: String,
    base: String,
    section: &'static str,
    rows: Vec<ChangeRow>,
    graph: Vec<GraphRow>,
    trash: Vec<TrashRow>,
    keep_days: i64,
    keep_mib: i64,
    notice: Option<&'static str>,
    error: Option<String>,
}

#[derive(Template)]
#[template(path = "app/note_history.html")]
struct NotePage {
    nonce: String,
    csrf: String,
    base: String,
    section: &'static str,
    path: String,
    /// The note's hash now ("" when there is no note at the path), carried by every undo.
    current_hash: String,
    exists: bool,
    versions: Vec<VersionView>,
    notice: Option<&'static str>,
    error: Option<String>,
}

/// `GET /app/changes`.
pub async fn list(State(state): State<AppState>, owner: Owner, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let Ok(notice) = params.one("notice") else {
        return malformed();
    };
    let notice = Notice::parse(notice, &[Notice::Restored, Notice::GraphReverted]).map(Notice::text);
    render_list(&state, &owner, notice, None, StatusCode::OK).await
}

/// `POST /app/graph-changes/{change}/revert`: the connection a change of the graph changed, back as
/// it was before, while it is still as that change left it (`graph::gate::revert`).
pub async fn revert_graph(
    State(state): State<AppState>,
    Path((_, change)): Path<(String, i64)>,
    form: OwnerForm,
) -> Response {
    match graph_history::get(&state.journal.db, change).await {
        Ok(Some(_)) => {}
        Ok(None) => {
            let message = format!("Nothing was undone: the graph's history has no change {change}.");
            return render_list(&state, &form.owner, None, Some(message), StatusCode::NOT_FOUND).await;
        }
        Err(error) => return failed(error),
    }
    match gate::revert(&state.journal, change).await {
        Ok(_) => Redirect::to(&format!(
            "{}/changes?notice={}#graph",
            form.owner.base,
            Notice::GraphReverted.as_str()
        ))
        .into_response(),
        Err(error @ (GateError::Journal(_) | GateError::Store(GraphFileError::Io(_)))) => failed(error),
        Err(other) => {
            let message = format!("Nothing was undone: {other}");
            render_list(&state, &form.owner, None, Some(message), StatusCode::CONFLICT).await
        }
    }
}

/// `POST /app/trash/{change}/restore`: every note of an agent's deletion back where it was, all or
/// nothing.
pub async fn restore(
    State(state): State<AppState>,
    Path((_, change)): Path<(String, i64)>,
    form: OwnerForm,
) -> Response {
    match changes::restore(&state.journal, change).await {
        Ok(_) => Redirect::to(&format!(
            "{}/changes?notice={}",
            form.owner.base,
            Notice::Restored.as_str()
        ))
        .into_response(),
        Err(error @ (ChangeError::Db(_) | ChangeError::Failed(_))) => failed(error),
        Err(other) => {
            let code = match other {
                ChangeError::NotFound(_) => StatusCode::NOT_FOUND,
                _ => StatusCode::CONFLICT,
            };
            let message = format!("Nothing was restored: {other}");
            render_list(&state, &form.owner, None, Some(message), code).await
        }
    }
}

async fn render_list(
    state: &AppState,
    owner: &Owner,
    notice: Option<&'static str>,
    error: Option<String>,
    code: StatusCode,
) -> Response {
    let db = &state.journal.db;
    let (versions, deletions) = match (history::recent(db, RECENT).await, history::deletions(db, TRASH).await) {
        (Ok(versions), Ok(deletions)) => (versions, deletions),
        (Err(error), _) | (_, Err(error)) => return failed(error),
    };
    let graph_rows = match graph_rows(state).await {
        Ok(rows) => rows,
        Err(error) => return failed(error),
    };
    let walls = state.journal.notes.walls();
    let trash = deletions
        .into_iter()
        .filter_map(|(id, versions)| {
            let first = versions.first()?;
            // A few stats per row, for at most TRASH rows: cheap enough for the async thread.
            let back = versions.iter().all(|v| walls.file(&v.path).is_some_and(|f| f.exists()));
            Some(TrashRow {
                id,
                at: format_timestamp(first.at),
                by: by(first),
                notes: versions.iter().take(TRASH_NOTES).map(|v| v.path.clone()).collect(),
                more: versions.len().saturating_sub(TRASH_NOTES),
                back,
            })
        })
        .collect();
    let page = ChangesPage {
        nonce: page::nonce(),
        csrf: owner.csrf.clone(),
        base: owner.base.clone(),
        section: "changes",
        rows: versions.iter().map(row).collect(),
        graph: graph_rows,
        trash,
        keep_days: history::KEEP_DAYS,
        keep_mib: state.journal.notes.history_budget() / (1024 * 1024),
        notice,
        error,
    };
    page::html(code, &page, &page.nonce.clone(), None)
}

/// `GET /app/changes/note?path=P`.
pub async fn note_page(State(state): State<AppState>, owner: Owner, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let (Ok(Some(path)), Ok(notice)) = (params.one("path"), params.one("notice")) else {
        return malformed();
    };
    let Ok(path) = rules::typed_note_path(path) else {
        return malformed();
    };
    let notice = Notice::parse(notice, &[Notice::Reverted]).map(Notice::text);
    render_note(&state, &owner, &path, notice, None, StatusCode::OK).await
}

/// `POST /app/changes/{version}/revert`, with `path` (the note's page it came from) and `seen`
/// (the note's hash the page showed; empty: no note there).
pub async fn revert(
    State(state): State<AppState>,
    Path((_, version)): Path<(String, i64)>,
    form: OwnerForm,
) -> Response {
    let (Ok(Some(path)), Ok(seen)) = (form.params.one("path"), form.params.one("seen")) else {
        return malformed();
    };
    let Ok(path) = rules::typed_note_path(path) else {
        return malformed();
    };
    // Empty: no note there when the page was shown; the undo may then only create it.
    let expected = seen.unwrap_or_default();
    match history::get(&state.journal.db, version).await {
        Ok(Some((v, _))) if v.touches(&path) => {}
        Ok(_) => return malformed(),
        Err(error) => return failed(error),
    }
    match changes::revert(&state.journal, version, Some(expected)).await {
        Ok(_) => Redirect::to(&format!(
            "{}/changes/note?path={}&notice={}",
            form.owner.base,
            query_escape(&path),
            Notice::Reverted.as_str()
        ))
        .into_response(),
        Err(ChangeError::Db(error)) => failed(error),
        Err(ChangeError::Failed(detail)) => failed(ChangeError::Failed(detail)),
        Err(error) => {
            let message = match error {
                ChangeError::Write(crate::journal::notes::write::WriteError::Conflict { .. }) => {
                    "The note changed since this page was shown, so nothing was undone. Look at its history again below."
                        .to_string()
                }
                other => format!("Nothing was undone: {other}"),
            };
            render_note(&state, &form.owner, &path, None, Some(message), StatusCode::CONFLICT).await
        }
    }
}

async fn render_note(
    state: &AppState,
    owner: &Owner,
    path: &str,
    notice: Option<&'static str>,
    error: Option<String>,
    code: StatusCode,
) -> Response {
    let db = &state.journal.db;
    let versions = match history::of_path_kept(db, path, NOTE_VERSIONS).await {
        Ok(versions) => versions,
        Err(error) => return failed(error),
    };
    let (journal, note_path) = (std::sync::Arc::clone(&state.journal), path.to_string());
    let current = tokio::task::spawn_blocking(move || journal.notes.read_file(&note_path).map(|(bytes, _)| bytes))
        .await
        .ok()
        .flatten();
    let current_hash = current.as_deref().map(note::hash_hex).unwrap_or_default();
    // Newest first: what a version made is the file the next newer one kept, or the note now.
    let mut after: Option<(Option<String>, Option<Vec<u8>>)> =
        Some((current.as_ref().map(|_| current_hash.clone()), current.clone()));
    let mut views = Vec::new();
    for (v, before) in versions {
        let made = match &after {
            Some((hash, bytes)) if *hash == v.after_hash => Some(bytes.clone()),
            _ => None,
        };
        let diff = made.map(|made| {
            let old = before.as_deref().map(String::from_utf8_lossy);
            let new = made.as_deref().map(String::from_utf8_lossy);
            let text = match v.new_path.as_deref() {
                Some(to) if v.moved() => diff::moved(&v.path, to, old.as_deref(), new.as_deref()),
                _ => diff::unified(path, old.as_deref(), new.as_deref()),
            };
            diff_lines(&text)
        });
        views.push(VersionView { row: row(&v), diff });
        after = Some((v.before_hash.clone(), before));
    }
    let page = NotePage {
        nonce: page::nonce(),
        csrf: owner.csrf.clone(),
        base: owner.base.clone(),
        section: "changes",
        path: path.to_string(),
        exists: current.is_some(),
        current_hash,
        versions: views,
        notice,
        error,
    };
    page::html(code, &page, &page.nonce.clone(), None)
}

/// The graph's recent changes, each marked undoable while its connection is as it left it.
async fn graph_rows(state: &AppState) -> Result<Vec<GraphRow>, GateError> {
    let entries = graph_history::recent(&state.journal.db, RECENT).await?;
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let graph = gate::load(&state.journal).await?;
    Ok(entries
        .iter()
        .map(|e| {
            let mut how = match e.tool.as_str() {
                "revert" => "undo".to_string(),
                tool => tool.to_string(),
            };
            if let Some(id) = e.proposal_id {
                how.push_str(&format!(", proposal #{id}"));
            }
            if let Some(id) = e.reverted {
                how.push_str(&format!(" of change #{id}"));
            }
            let connection = e.shown().map_or_else(
                || e.connection.clone(),
                |c| match &c.kind {
                    Some(kind) => format!("{} → {} ({kind})", c.from, c.to),
                    None => format!("{} → {}", c.from, c.to),
                },
            );
            GraphRow {
                id: e.id,
                at: format_timestamp(e.at),
                by: if e.label.is_empty() {
                    "you".to_string()
                } else {
                    format!("{} ({})", e.label, e.actor)
                },
                how,
                what: e.what(),
                connection,
                undoable: graph_history::unchanged_since(&graph, e),
            }
        })
        .collect())
}

fn by(v: &Version) -> String {
    if v.label.is_empty() {
        "you".to_string()
    } else {
        format!("{} ({})", v.label, v.actor)
    }
}

fn row(v: &Version) -> ChangeRow {
    let by = by(v);
    let mut how = match v.tool.as_str() {
        "revert" => "undo".to_string(),
        tool => tool.to_string(),
    };
    if let Some(id) = v.proposal_id {
        how.push_str(&format!(", proposal #{id}"));
    }
    if let Some(id) = v.reverted {
        how.push_str(&format!(" of change #{id}"));
    }
    let path = v.new_path.clone().unwrap_or_else(|| v.path.clone());
    ChangeRow {
        id: v.id,
        at: format_timestamp(v.at),
        by,
        how,
        what: match (&v.before_hash, &v.new_path) {
            (None, _) => "created",
            (_, None) => "deleted",
            _ if v.moved() => "moved",
            _ if v.tool == "note_move" => "links updated",
            _ => "changed",
        },
        path_query: query_escape(&path),
        path,
    }
}

/// A value for a link's query string.
pub(crate) fn query_escape(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

fn failed(error: impl std::fmt::Display) -> Response {
    tracing::error!(%error, "the notes' history could not be read or changed");
    page::message(
        StatusCode::SERVICE_UNAVAILABLE,
        "The notes' history could not be read",
        "Nothing was changed. Try again in a moment; the server log has the details.",
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_escaped_for_a_query() {
        assert_eq!(query_escape("Projects/a b&c=d.md"), "Projects/a%20b%26c%3Dd.md");
        assert_eq!(query_escape("Zoë.md"), "Zo%C3%AB.md");
    }
}
