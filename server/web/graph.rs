//! The graph pages: the latest connections, and one item's page with a picture of its
//! neighbourhood (`neighbourhood`), every connection with every author's note, and the owner's
//! hand on each: remove it, or write the owner's own note. The owner sees every item and acts as
//! `owner`, through the same gate as `journal graph` (`graph::gate`).

use askama::Template;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};

use super::changes::query_escape;
use super::form::{OwnerForm, malformed};
use super::neighbourhood::{self, Neighbour};
use super::notice::Notice;
use super::session::Owner;
use crate::app::AppState;
use crate::journal::graph::gate::{self, GateError, GraphChange};
use crate::journal::graph::history::Origin;
use crate::journal::graph::items::{Items, Viewer};
use crate::journal::graph::store::Graph;
use crate::journal::graph::{Author, Edge, is_id};
use crate::page;
use crate::page::form::Params;

/// How many connections the graph page lists.
const LATEST: usize = 100;

/// One end of a connection, as a link.
pub struct End {
    pub key: String,
    pub title: String,
    pub href: String,
    /// The item is gone (a note deleted by hand).
    pub missing: bool,
}

/// One author's note.
pub struct NoteRow {
    pub author: String,
    pub at: String,
    pub text: String,
}

/// One connection on a page.
pub struct ConnectionRow {
    pub id: String,
    pub from: End,
    pub to: End,
    pub kind: String,
    pub created_by: String,
    pub created_at: String,
    pub type_by: String,
    pub notes: Vec<NoteRow>,
    /// The owner's own note, for the form.
    pub owner_note: String,
}

#[derive(Template)]
#[template(path = "app/graph.html")]
struct GraphPage {
    nonce: String,
    csrf: String,
    base: String,
    section: &'static str,
    /// The item the page is about (None: the latest connections).
    item: Option<End>,
    kind: String,
    picture: String,
    rows: Vec<ConnectionRow>,
    total: usize,
    problems: Vec<String>,
    typed: String,
    notice: Option<&'static str>,
    error: Option<String>,
}

/// `GET /app/graph[?item=...]`.
pub async fn show(State(state): State<AppState>, owner: Owner, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let (Ok(item), Ok(notice)) = (params.one("item"), params.one("notice")) else {
        return malformed();
    };
    let notice = Notice::parse(notice, &[Notice::Disconnected, Notice::Noted]).map(Notice::text);
    render(&state, &owner, item.unwrap_or_default(), notice, None, StatusCode::OK).await
}

/// `POST /app/graph/{id}/disconnect`: the owner removes any connection.
pub async fn disconnect(
    State(state): State<AppState>,
    Path((_, id)): Path<(String, String)>,
    form: OwnerForm,
) -> Response {
    if !is_id(&id) {
        return malformed();
    }
    act(&state, form, GraphChange::Disconnect { id }, Notice::Disconnected).await
}

/// `POST /app/graph/{id}/note`: the owner's own note on a connection ("" removes it).
pub async fn note(State(state): State<AppState>, Path((_, id)): Path<(String, String)>, form: OwnerForm) -> Response {
    let (true, Some(text)) = (is_id(&id), form.field("text").map(str::to_string)) else {
        return malformed();
    };
    act(&state, form, GraphChange::Note { id, text }, Notice::Noted).await
}

/// Makes the owner's change (its connection id already checked) and goes back to the item's page.
async fn act(state: &AppState, form: OwnerForm, change: GraphChange, notice: Notice) -> Response {
    let Some(item) = form.field("item").map(str::to_string) else {
        return malformed();
    };
    match gate::make(&state.journal, &Origin::owner(), &Viewer::Owner, &change).await {
        Ok(_) => Redirect::to(&format!(
            "{}/graph?item={}&notice={}",
            form.owner.base,
            query_escape(&item),
            notice.as_str()
        ))
        .into_response(),
        Err(error @ (GateError::Journal(_) | GateError::Store(_))) => failed(error),
        Err(other) => {
            let message = format!("Nothing was changed: {other}");
            render(state, &form.owner, &item, None, Some(message), StatusCode::CONFLICT).await
        }
    }
}

async fn render(
    state: &AppState,
    owner: &Owner,
    typed: &str,
    notice: Option<&'static str>,
    error: Option<String>,
    code: StatusCode,
) -> Response {
    let graph = match gate::load(&state.journal).await {
        Ok(graph) => graph,
        Err(error) => return failed(error),
    };
    let viewer = Viewer::Owner;
    let mut items = Items::new(&state.journal, &viewer);
    let mut error = error;
    let mut code = code;
    // The item: what the owner typed, read as agents' names are; a key whose item is gone still
    // shows its connections.
    let item = if typed.trim().is_empty() {
        None
    } else {
        match items.resolve(typed).await {
            Ok(Ok(found)) => Some((found.key, found.title, found.kind.as_str().to_string(), false)),
            Ok(Err(_)) if crate::journal::graph::check_item(typed).is_ok() => {
                Some((typed.to_string(), typed.to_string(), "missing".to_string(), true))
            }
            Ok(Err(why)) => {
                // A failed change keeps its own answer; otherwise the page says the item is unknown.
                if error.is_none() {
                    error = Some(why);
                    code = StatusCode::NOT_FOUND;
                }
                None
            }
            Err(failure) => return failed(GateError::Journal(failure)),
        }
    };
    let mut chosen: Vec<&Edge> = match &item {
        Some((key, ..)) => graph.connections().filter(|c| c.touches(key)).collect(),
        None => graph.connections().collect(),
    };
    chosen.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| a.id.cmp(&b.id)));
    let total = chosen.len();
    let mut rows = Vec::new();
    for connection in chosen.into_iter().take(LATEST) {
        match row(&mut items, &owner.base, connection).await {
            Ok(row) => rows.push(row),
            Err(failure) => return failed(GateError::Journal(failure)),
        }
    }
    let (item, kind, picture) = match item {
        Some((key, title, kind, missing)) => {
            let neighbours: Vec<Neighbour> = rows
                .iter()
                .map(|row| {
                    let outgoing = row.from.key == key;
                    let other = if outgoing { &row.to } else { &row.from };
                    Neighbour {
                        key: other.key.clone(),
                        href: other.href.clone(),
                        label: other.title.clone(),
                        kind: (!row.kind.is_empty()).then(|| row.kind.clone()),
                        outgoing,
                    }
                })
                .collect();
            let picture = neighbourhood::svg(&title, &neighbours);
            let end = End {
                href: link(&owner.base, &key),
                key,
                title,
                missing,
            };
            (Some(end), kind, picture)
        }
        None => (None, String::new(), String::new()),
    };
    let page = GraphPage {
        nonce: page::nonce(),
        csrf: owner.csrf.clone(),
        base: owner.base.clone(),
        section: "graph",
        item,
        kind,
        picture,
        rows,
        total,
        problems: problems(&graph),
        typed: typed.to_string(),
        notice,
        error,
    };
    page::html(code, &page, &page.nonce.clone(), None)
}

async fn row(
    items: &mut Items<'_>,
    base: &str,
    connection: &Edge,
) -> Result<ConnectionRow, crate::journal::JournalError> {
    let from = end(items, base, &connection.from).await?;
    let to = end(items, base, &connection.to).await?;
    let owner = Author::owner();
    Ok(ConnectionRow {
        id: connection.id.clone(),
        from,
        to,
        kind: connection.kind.clone().unwrap_or_default(),
        created_by: connection.creator().to_string(),
        created_at: connection.created_at.clone(),
        type_by: connection.type_by.as_ref().map(Author::to_string).unwrap_or_default(),
        notes: connection
            .notes
            .iter()
            .map(|n| NoteRow {
                author: n.author.to_string(),
                at: n.at.clone(),
                text: n.text.clone(),
            })
            .collect(),
        owner_note: connection
            .notes
            .iter()
            .find(|n| n.author == owner)
            .map(|n| n.text.clone())
            .unwrap_or_default(),
    })
}

/// One end of a connection, with the item's title when it still exists.
async fn end(items: &mut Items<'_>, base: &str, key: &str) -> Result<End, crate::journal::JournalError> {
    let found = items.get(key).await?;
    Ok(End {
        href: link(base, key),
        title: found.as_ref().map_or_else(|| key.to_string(), |i| i.title.clone()),
        missing: found.is_none(),
        key: key.to_string(),
    })
}

fn link(base: &str, key: &str) -> String {
    format!("{base}/graph?item={}", query_escape(key))
}

fn problems(graph: &Graph) -> Vec<String> {
    graph
        .problems
        .iter()
        .map(|p| format!("line {}: {}", p.line, p.message))
        .collect()
}

fn failed(error: GateError) -> Response {
    tracing::error!(%error, "the graph could not be read or changed");
    page::message(
        StatusCode::SERVICE_UNAVAILABLE,
        "The graph could not be read",
        "Nothing was changed. Try again in a moment; the server log has the details.",
        None,
    )
}
