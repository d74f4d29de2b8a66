//! One connection's page: what it is and may see, the tools that grant offers it, editing the grant
//! (which applies to its next call, in open sessions too) and revoking it.
//!
//! Both changes go through `auth::connections`, the functions behind `journal mcp permission set`
//! and `journal mcp token revoke`, which announce the change to every server process.

use std::collections::BTreeSet;

use askama::Template;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};

use super::form::{OwnerForm, malformed};
use super::notice::Notice;
use super::refusals::unavailable;
use super::session::Owner;
use super::summary::{self, Summary};
use crate::app::AppState;
use crate::auth::{AuthError, Category, WriteMode, connections};
use crate::clock::unix_now;
use crate::journal::day::format_timestamp;
use crate::journal::facet::Facet;
use crate::mcp::tools;
use crate::page::form::Params;
use crate::page::{self, CategoryChoice, category_choices};

/// One write mode radio button of the grant form.
pub struct WriteChoice {
    pub value: &'static str,
    pub label: &'static str,
    pub description: &'static str,
    pub checked: bool,
}

/// The grant form's write modes, `current` chosen. Force is offered here (and in the CLI) only,
/// never on the consent page, and says plainly what it means.
fn write_choices(current: WriteMode) -> Vec<WriteChoice> {
    WriteMode::ALL
        .into_iter()
        .map(|mode| WriteChoice {
            value: mode.as_str(),
            label: match mode {
                WriteMode::None => "It can't change anything",
                WriteMode::Propose => "It can suggest changes for you to review",
                WriteMode::Force => "It can change notes and connections directly",
            },
            description: match mode {
                WriteMode::None => "It reads what you tick above and keeps notes of its own.",
                WriteMode::Propose => "Nothing changes until you accept a suggestion.",
                WriteMode::Force => {
                    "Warning: its changes are made at once, without your review. A mistaken or misled agent can \
                     change many notes before you look."
                }
            },
            checked: mode == current,
        })
        .collect()
}

/// One facet checkbox of the grant form.
pub struct FacetBox {
    pub id: String,
    pub name: String,
    pub title: String,
    pub emoji: String,
    pub checked: bool,
}

#[derive(Template)]
#[template(path = "app/connection.html")]
struct ConnectionPage {
    nonce: String,
    csrf: String,
    /// Where this session's pages are (`/app/<place>`), for every link and form.
    base: String,
    section: &'static str,
    id: String,
    label: String,
    is_key: bool,
    client_id: String,
    route: String,
    created: String,
    last_used: String,
    calls: i64,
    ends: Option<String>,
    ended: bool,
    grant: String,
    writes: &'static str,
    write_choices: Vec<WriteChoice>,
    tools: Vec<&'static str>,
    categories: Vec<CategoryChoice>,
    whole_journal: bool,
    facets: Vec<FacetBox>,
    notice: Option<&'static str>,
    error: Option<String>,
}

/// What the grant form asks for, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantChoice {
    pub categories: BTreeSet<Category>,
    /// None: the whole journal.
    pub facet_ids: Option<Vec<String>>,
    pub write_mode: WriteMode,
}

/// Why a grant form was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantFormError {
    /// Fields no page of the app sends (an unknown category or scope): a malformed form.
    Malformed,
    /// A choice the owner can correct, in words.
    Correctable(String),
}

/// Reads the grant form: `category` (repeated), `scope` (`journal` or `facets`), `facet`
/// (repeated facet ids, with `scope=facets`) and `write` (`none`, the default, `propose` or
/// `force`). A grant without categories is the empty grant (the connection's own memory only)
/// whatever the scope.
pub fn read_grant_form(
    categories: &[&str],
    scope: Option<&str>,
    facet_ids: &[&str],
    write: Option<&str>,
    known: &[Facet],
) -> Result<GrantChoice, GrantFormError> {
    let write_mode = match write {
        None => WriteMode::None,
        Some(text) => WriteMode::parse(text).ok_or(GrantFormError::Malformed)?,
    };
    let mut chosen = BTreeSet::new();
    for name in categories {
        chosen.insert(Category::parse(name).ok_or(GrantFormError::Malformed)?);
    }
    let whole = match scope {
        Some("journal") | None => true,
        Some("facets") => false,
        Some(_) => return Err(GrantFormError::Malformed),
    };
    if chosen.is_empty() || whole {
        return Ok(GrantChoice {
            categories: chosen,
            facet_ids: None,
            write_mode,
        });
    }
    let mut ids = Vec::new();
    for id in facet_ids {
        if !known.iter().any(|facet| facet.id == *id) {
            return Err(GrantFormError::Correctable(
                "One of the facets you ticked no longer exists. Reload the page and choose again.".into(),
            ));
        }
        if !ids.iter().any(|known: &String| known == id) {
            ids.push((*id).to_string());
        }
    }
    if ids.is_empty() {
        return Err(GrantFormError::Correctable(
            "Tick at least one facet, or choose the whole journal.".into(),
        ));
    }
    Ok(GrantChoice {
        categories: chosen,
        facet_ids: Some(ids),
        write_mode,
    })
}

/// `GET /app/connections/{id}`.
pub async fn show(
    State(state): State<AppState>,
    owner: Owner,
    Path((_, id)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let Ok(notice) = params.one("notice") else {
        return malformed();
    };
    let notice = Notice::parse(notice, &[Notice::GrantSaved]).map(Notice::text);
    render(&state, &owner, &id, notice, None, StatusCode::OK).await
}

/// `POST /app/connections/{id}/grant`: replaces the grant.
pub async fn set_grant(
    State(state): State<AppState>,
    Path((_, id)): Path<(String, String)>,
    form: OwnerForm,
) -> Response {
    let (Ok(scope), Ok(write)) = (form.params.one("scope"), form.params.one("write")) else {
        return malformed();
    };
    let facets = state.journal.facets();
    let choice = match read_grant_form(
        &form.params.all("category"),
        scope,
        &form.params.all("facet"),
        write,
        &facets,
    ) {
        Ok(choice) => choice,
        Err(GrantFormError::Malformed) => return malformed(),
        Err(GrantFormError::Correctable(reason)) => {
            return render(&state, &form.owner, &id, None, Some(reason), StatusCode::BAD_REQUEST).await;
        }
    };
    // `set_grant` answers NotFound for a connection that is gone (never made, or revoked meanwhile).
    let db = &state.journal.db;
    match connections::set_grant(
        db,
        &id,
        &choice.categories,
        choice.facet_ids.as_deref(),
        choice.write_mode,
    )
    .await
    {
        Ok(_) => Redirect::to(&format!(
            "{}/connections/{id}?notice={}",
            form.owner.base,
            Notice::GrantSaved.as_str()
        ))
        .into_response(),
        Err(AuthError::NotFound(_)) => gone(),
        Err(error) => unavailable(error),
    }
}

/// `POST /app/connections/{id}/revoke`: ends the connection.
pub async fn revoke(State(state): State<AppState>, Path((_, id)): Path<(String, String)>, form: OwnerForm) -> Response {
    match connections::revoke(&state.journal.db, &id).await {
        Ok(_) => Redirect::to(&format!(
            "{}/connections?notice={}",
            form.owner.base,
            Notice::Revoked.as_str()
        ))
        .into_response(),
        Err(AuthError::NotFound(_)) => gone(),
        Err(error) => unavailable(error),
    }
}

fn gone() -> Response {
    page::message(
        StatusCode::NOT_FOUND,
        "There is no such connection",
        "It was revoked, or the link is not one of this journal's connections.",
        Some("See every connection on the Connections page."),
    )
}

async fn render(
    state: &AppState,
    owner: &Owner,
    id: &str,
    notice: Option<&'static str>,
    error: Option<String>,
    status: StatusCode,
) -> Response {
    let summary = match summary::one(&state.journal.db, id).await {
        Ok(Some(summary)) => summary,
        Ok(None) => return gone(),
        Err(error) => return unavailable(error),
    };
    let page = build(&summary, &state.journal.facets(), owner, notice, error);
    page::html(status, &page, &page.nonce.clone(), None)
}

fn build(
    summary: &Summary,
    facets: &[Facet],
    owner: &Owner,
    notice: Option<&'static str>,
    error: Option<String>,
) -> ConnectionPage {
    let now = unix_now();
    let row = summary.row(facets, now);
    let connection = &summary.connection;
    let grant = &connection.grant;
    let checked: Vec<Category> = grant.categories.iter().copied().collect();
    ConnectionPage {
        nonce: page::nonce(),
        csrf: owner.csrf.clone(),
        base: owner.base.clone(),
        section: "connections",
        id: row.id,
        label: row.label,
        is_key: summary.is_key(),
        client_id: summary.client_id.clone().unwrap_or_default(),
        route: row.route,
        created: row.created,
        last_used: row.last_used,
        calls: row.calls,
        ends: summary.ends_at.map(format_timestamp),
        ended: row.ended,
        grant: row.grant,
        writes: grant.write_mode.in_words(),
        write_choices: write_choices(grant.write_mode),
        // An app whose sign-in ended is offered nothing until it pairs again.
        tools: tools::ALL
            .iter()
            .filter(|tool| !row.ended && tool.offered(connection))
            .map(|tool| tool.name)
            .collect(),
        categories: category_choices(&checked),
        whole_journal: grant.facet_ids.is_none(),
        facets: facets
            .iter()
            .map(|facet| FacetBox {
                id: facet.id.clone(),
                name: facet.name.clone(),
                title: if facet.title.is_empty() {
                    facet.name.clone()
                } else {
                    facet.title.clone()
                },
                emoji: facet.emoji.clone().unwrap_or_default(),
                checked: grant.facet_ids.as_ref().is_some_and(|ids| ids.contains(&facet.id)),
            })
            .collect(),
        notice,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grant_form_reads_categories_and_reach() {
        let known = [Facet::sample("f1", "name-f1"), Facet::sample("f2", "name-f2")];
        let whole = read_grant_form(&["transcripts", "entities"], Some("journal"), &["f1"], None, &known).unwrap();
        assert_eq!(whole.categories.len(), 2);
        assert_eq!(whole.facet_ids, None, "facets ticked under 'whole journal' are ignored");
        let some = read_grant_form(&["facets"], Some("facets"), &["f2", "f2", "f1"], None, &known).unwrap();
        assert_eq!(some.facet_ids, Some(vec!["f2".to_string(), "f1".to_string()]));
        let cleared = read_grant_form(&[], Some("facets"), &[], None, &known).unwrap();
        assert!(cleared.categories.is_empty());
        assert_eq!(cleared.facet_ids, None);
        assert_eq!(cleared.write_mode, WriteMode::None, "no choice is no writes");
        for mode in WriteMode::ALL {
            let chosen = read_grant_form(&["notes"], Some("journal"), &[], Some(mode.as_str()), &known).unwrap();
            assert_eq!(chosen.write_mode, mode);
        }
    }

    #[test]
    fn the_grant_form_refuses_what_no_page_sends_and_explains_the_rest() {
        let known = [Facet::sample("f1", "name-f1")];
        assert_eq!(
            read_grant_form(&["pictures"], None, &[], None, &known),
            Err(GrantFormError::Malformed)
        );
        assert_eq!(
            read_grant_form(&["entities"], Some("everything"), &[], None, &known),
            Err(GrantFormError::Malformed)
        );
        for write in ["FORCE", "", "everything"] {
            assert_eq!(
                read_grant_form(&["notes"], None, &[], Some(write), &known),
                Err(GrantFormError::Malformed),
                "{write:?}"
            );
        }
        let none_ticked = read_grant_form(&["entities"], Some("facets"), &[], None, &known).unwrap_err();
        assert!(matches!(none_ticked, GrantFormError::Correctable(ref text) if text.contains("at least one facet")));
        let deleted = read_grant_form(&["entities"], Some("facets"), &["gone"], None, &known).unwrap_err();
        assert!(matches!(deleted, GrantFormError::Correctable(ref text) if text.contains("no longer exists")));
    }
}
