//! The proposals page: the changes agents in propose mode asked for, grouped by connection, each
//! with its unified diff; accept or reject one, or all of one connection. A proposal whose note
//! changed since shows the conflict and the change against the note as it is now, and is made only
//! if the owner accepts it onto that note (the form carries the hash the owner saw).
//!
//! Listings and decisions go through `review`, as `journal proposals` and `my_proposals` do.

use askama::Template;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};

use super::form::{OwnerForm, malformed};
use super::notice::Notice;
use super::session::Owner;
use crate::app::AppState;
use crate::auth::connections;
use crate::journal::day::format_timestamp;
use crate::journal::proposals::{self, Filter, Proposal, Status};
use crate::page;
use crate::page::form::Params;
use crate::review::{self, Onto, ReviewError};

/// How many proposals the page lists.
const PAGE_SIZE: i64 = 200;

/// One line of a unified diff, with how to show it.
pub struct DiffLine {
    /// `add`, `del`, `hunk`, `head` or `ctx`.
    pub class: &'static str,
    pub text: String,
}

/// A unified diff as lines to show.
pub fn diff_lines(diff: &str) -> Vec<DiffLine> {
    diff.lines()
        .map(|line| DiffLine {
            class: if line.starts_with("+++") || line.starts_with("---") {
                "head"
            } else if line.starts_with("@@") {
                "hunk"
            } else if line.starts_with('+') {
                "add"
            } else if line.starts_with('-') {
                "del"
            } else {
                "ctx"
            },
            text: line.to_string(),
        })
        .collect()
}

/// One proposal as the page shows it.
pub struct ProposalView {
    pub id: i64,
    pub at: String,
    pub tool: String,
    pub path: String,
    pub status: &'static str,
    pub decided: String,
    pub reason: String,
    pub diff: Vec<DiffLine>,
    /// It changes instructions other agents follow (an AGENTS.md, a skill).
    pub instructs: bool,
    /// The note changed since the proposal: the change against it now (or why it cannot be made),
    /// and the hash the owner sees, which an accept onto the current note carries.
    pub conflict: Option<Conflict>,
}

pub struct Conflict {
    pub diff_now: Vec<DiffLine>,
    pub cannot: Option<String>,
    pub current_hash: String,
}

/// The proposals of one connection.
pub struct Group {
    pub connection_id: String,
    pub label: String,
    /// The connection was removed: its proposals can only be rejected.
    pub removed: bool,
    pub proposals: Vec<ProposalView>,
}

/// One tab of the page.
pub struct Tab {
    pub value: &'static str,
    pub label: &'static str,
    pub here: bool,
}

#[derive(Template)]
#[template(path = "app/proposals.html")]
struct ProposalsPage {
    nonce: String,
    csrf: String,
    base: String,
    section: &'static str,
    pending_view: bool,
    tabs: Vec<Tab>,
    groups: Vec<Group>,
    notice: Option<&'static str>,
    error: Option<String>,
}

/// `GET /app/proposals[?status=pending|accepted|rejected]`.
pub async fn show(State(state): State<AppState>, owner: Owner, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let (Ok(status), Ok(notice)) = (params.one("status"), params.one("notice")) else {
        return malformed();
    };
    let status = match status.filter(|s| !s.is_empty()) {
        None => Status::Pending,
        Some(text) => match Status::parse(text) {
            Some(status) => status,
            None => return malformed(),
        },
    };
    let notice = Notice::parse(notice, &[Notice::Accepted, Notice::Rejected, Notice::SomeStale]).map(Notice::text);
    render(&state, &owner, status, notice, None, StatusCode::OK).await
}

/// `POST /app/proposals/{id}/accept`: with `onto` (the note's hash the owner saw), onto the note
/// as it is now.
pub async fn accept(State(state): State<AppState>, Path((_, id)): Path<(String, i64)>, form: OwnerForm) -> Response {
    let Ok(onto) = form.params.one("onto") else {
        return malformed();
    };
    let onto = onto.filter(|h| !h.is_empty());
    if onto.is_some_and(|h| h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit())) {
        return malformed();
    }
    let onto = onto.map_or(Onto::Proposed, Onto::Seen);
    match review::accept(&state.journal, id, onto).await {
        Ok(_) => done(&form.owner, Notice::Accepted),
        Err(error) => refused(&state, &form.owner, error).await,
    }
}

/// `POST /app/proposals/{id}/reject`, with the owner's `reason` for the agent.
pub async fn reject(State(state): State<AppState>, Path((_, id)): Path<(String, i64)>, form: OwnerForm) -> Response {
    let Ok(reason) = form.params.one("reason") else {
        return malformed();
    };
    match review::reject(&state.journal, id, reason.unwrap_or_default()).await {
        Ok(()) => done(&form.owner, Notice::Rejected),
        Err(error) => refused(&state, &form.owner, error).await,
    }
}

/// `POST /app/proposals/by/{connection}/{accept|reject}`: every pending proposal of one connection,
/// oldest first. Accepting all makes those that still apply and leaves the ones whose note changed
/// since (or that a rule now refuses) waiting, with a notice that says so.
pub async fn decide_all(
    State(state): State<AppState>,
    Path((_, connection_id, decision)): Path<(String, String, String)>,
    form: OwnerForm,
) -> Response {
    let accepting = match decision.as_str() {
        "accept" => true,
        "reject" => false,
        _ => return malformed(),
    };
    let filter = Filter {
        connection_id: Some(connection_id.clone()),
        status: Some(Status::Pending),
        limit: proposals::MAX_PENDING_PER_CONNECTION,
        ..Filter::default()
    };
    let mut pending = match review::list(&state.journal, &filter).await {
        Ok(pending) => pending,
        Err(error) => return failed(error),
    };
    pending.reverse();
    let mut left = false;
    for proposal in pending {
        let outcome = if accepting {
            review::accept(&state.journal, proposal.id, Onto::Proposed)
                .await
                .map(|_| ())
        } else {
            review::reject(&state.journal, proposal.id, "").await
        };
        match outcome {
            Ok(()) => {}
            Err(error @ ReviewError::Db(_)) => return failed(error),
            Err(error) => {
                tracing::info!(id = proposal.id, %error, "a proposal was left for the owner's review");
                left = true;
            }
        }
    }
    let notice = match (left, accepting) {
        (true, _) => Notice::SomeStale,
        (false, true) => Notice::Accepted,
        (false, false) => Notice::Rejected,
    };
    done(&form.owner, notice)
}

fn done(owner: &Owner, notice: Notice) -> Response {
    Redirect::to(&format!("{}/proposals?notice={}", owner.base, notice.as_str())).into_response()
}

/// A decision that was not made: the page again, saying why (nothing changed).
async fn refused(state: &AppState, owner: &Owner, error: ReviewError) -> Response {
    let (status, message) = match &error {
        _ if error.is_failure() => return failed(error),
        ReviewError::NotFound(_) => (StatusCode::NOT_FOUND, error.to_string()),
        ReviewError::Stale { path, .. } => (
            StatusCode::CONFLICT,
            format!(
                "{path} changed since this was proposed, so nothing was applied. The change against the note as it is now \
                 is shown below: accept it onto the current note, or reject it."
            ),
        ),
        _ => (StatusCode::CONFLICT, format!("Nothing was changed: {error}")),
    };
    render(state, owner, Status::Pending, None, Some(message), status).await
}

fn failed(error: ReviewError) -> Response {
    tracing::error!(%error, "a proposal could not be decided");
    page::message(
        StatusCode::SERVICE_UNAVAILABLE,
        "The proposal could not be decided",
        "Nothing was changed. Try again in a moment; the server log has the details.",
        None,
    )
}

async fn render(
    state: &AppState,
    owner: &Owner,
    status: Status,
    notice: Option<&'static str>,
    error: Option<String>,
    code: StatusCode,
) -> Response {
    let filter = Filter {
        status: Some(status),
        limit: PAGE_SIZE,
        ..Filter::default()
    };
    let listed = match review::list(&state.journal, &filter).await {
        Ok(listed) => listed,
        Err(error) => return failed(error),
    };
    let mut groups: Vec<Group> = Vec::new();
    for proposal in listed {
        let view = match view(state, &proposal).await {
            Ok(view) => view,
            Err(error) => return failed(error),
        };
        match groups.iter_mut().find(|g| g.connection_id == proposal.connection_id) {
            Some(group) => group.proposals.push(view),
            None => {
                let removed = match connections::load(&state.journal.db, &proposal.connection_id).await {
                    Ok(found) => found.is_none(),
                    Err(error) => return failed(error.into()),
                };
                groups.push(Group {
                    connection_id: proposal.connection_id.clone(),
                    label: proposal.label.clone(),
                    removed,
                    proposals: vec![view],
                });
            }
        }
    }
    let tabs = Status::ALL
        .into_iter()
        .map(|s| Tab {
            value: s.as_str(),
            label: match s {
                Status::Pending => "Waiting",
                Status::Accepted => "Accepted",
                Status::Rejected => "Rejected",
            },
            here: s == status,
        })
        .collect();
    let page = ProposalsPage {
        nonce: page::nonce(),
        csrf: owner.csrf.clone(),
        base: owner.base.clone(),
        section: "proposals",
        pending_view: status == Status::Pending,
        tabs,
        groups,
        notice,
        error,
    };
    page::html(code, &page, &page.nonce.clone(), None)
}

async fn view(state: &AppState, proposal: &Proposal) -> Result<ProposalView, ReviewError> {
    let conflict = if proposal.status == Status::Pending {
        match review::preview(&state.journal, proposal).await {
            // A removed connection's proposal can only be rejected: there is nothing to compare.
            Err(ReviewError::Removed { .. }) => None,
            Err(error) => return Err(error),
            Ok(preview) => preview.stale.then(|| {
                let (diff_now, cannot) = match preview.diff_now {
                    Ok(diff) => (diff_lines(&diff), None),
                    Err(why) => (Vec::new(), Some(why)),
                };
                Conflict {
                    diff_now,
                    cannot,
                    current_hash: preview.current_hash.unwrap_or_default(),
                }
            }),
        }
    } else {
        None
    };
    Ok(ProposalView {
        instructs: proposal.instructs(),
        id: proposal.id,
        at: format_timestamp(proposal.at),
        tool: proposal.tool.clone(),
        path: proposal.path.clone(),
        status: proposal.status.as_str(),
        decided: proposal.decided_at.map(format_timestamp).unwrap_or_default(),
        reason: proposal.reason.clone(),
        diff: diff_lines(&proposal.diff),
        conflict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_lines_are_classed_by_their_mark() {
        let lines =
            diff_lines("--- a/x.md\n+++ b/x.md\n@@ -1 +1 @@\n-old\n+new\n same\n\\ No newline at end of file\n");
        let classes: Vec<&str> = lines.iter().map(|l| l.class).collect();
        assert_eq!(classes, ["head", "head", "hunk", "del", "add", "ctx", "ctx"]);
        assert_eq!(lines[3].text, "-old");
    }
}
