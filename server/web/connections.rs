//! The connections page: every key and signed-in app with its grant, route, dates and calls; and
//! minting a key, which is shown once, with a copy button and the lines that use it.
//!
//! Minting calls `auth::connections::create_key`, the function behind `journal mcp token create`.

use askama::Template;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};

use super::clients::{self, KeyLine};
use super::form::{OwnerForm, malformed};
use super::notice::Notice;
use super::refusals::unavailable;
use super::session::Owner;
use super::summary::{self, ConnectionRow};
use crate::app::AppState;
use crate::auth::{AuthError, connections};
use crate::clock::unix_now;
use crate::page;
use crate::page::form::Params;

#[derive(Template)]
#[template(path = "app/connections.html")]
struct ConnectionsPage {
    nonce: String,
    csrf: String,
    /// Where this session's pages are (`/app/<place>`), for every link and form.
    base: String,
    section: &'static str,
    rows: Vec<ConnectionRow>,
    /// How many rows can never answer again (the "Remove them" button's count).
    stale: usize,
    notice: Option<&'static str>,
    /// Why the last mint was refused, with the label typed, to correct it.
    error: Option<String>,
    label: String,
}

#[derive(Template)]
#[template(path = "app/minted.html")]
struct MintedPage {
    nonce: String,
    csrf: String,
    /// Where this session's pages are (`/app/<place>`), for every link and form.
    base: String,
    section: &'static str,
    id: String,
    label: String,
    key: String,
    lines: Vec<KeyLine>,
}

/// `GET /app/connections`.
pub async fn list(State(state): State<AppState>, owner: Owner, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let Ok(notice) = params.one("notice") else {
        return malformed();
    };
    let notice = Notice::parse(notice, &[Notice::Revoked, Notice::Cleared]).map(Notice::text);
    render(&state, &owner, notice, None, String::new(), StatusCode::OK).await
}

/// `POST /app/connections/mint`: mints a key under the label typed; its grant starts empty.
pub async fn mint(State(state): State<AppState>, form: OwnerForm) -> Response {
    let Some(label) = form.field("label") else {
        return malformed();
    };
    let label = label.trim().to_string();
    match connections::create_key(&state.journal.db, &label).await {
        Ok((connection, key)) => {
            let address = form.owner.route.mcp_url();
            let nonce = page::nonce();
            let page = MintedPage {
                nonce: nonce.clone(),
                csrf: form.owner.csrf.clone(),
                base: form.owner.base.clone(),
                section: "connections",
                id: connection.id,
                label: connection.label,
                lines: clients::with_key(&address, &key),
                key,
            };
            page::html(StatusCode::OK, &page, &nonce, None)
        }
        Err(AuthError::Invalid(reason)) => {
            render(&state, &form.owner, None, Some(reason), label, StatusCode::BAD_REQUEST).await
        }
        Err(error) => unavailable(error),
    }
}

/// `POST /app/connections/clear`: removes every sign-in that ended or never finished, as they
/// are now (not as the page showed them: one that was renewed meanwhile stays).
pub async fn clear(State(state): State<AppState>, form: OwnerForm) -> Response {
    let summaries = match summary::without_calls(&state.journal.db).await {
        Ok(summaries) => summaries,
        Err(error) => return unavailable(error),
    };
    let now = unix_now();
    for stale in summaries.iter().filter(|s| s.stale(now).is_some()) {
        match connections::revoke(&state.journal.db, &stale.connection.id).await {
            // Gone meanwhile (revoked on another page, replaced by a new sign-in): nothing to do.
            Ok(_) | Err(AuthError::NotFound(_)) => {}
            Err(error) => return unavailable(error),
        }
    }
    Redirect::to(&format!(
        "{}/connections?notice={}",
        form.owner.base,
        Notice::Cleared.as_str()
    ))
    .into_response()
}

async fn render(
    state: &AppState,
    owner: &Owner,
    notice: Option<&'static str>,
    error: Option<String>,
    label: String,
    status: StatusCode,
) -> Response {
    let summaries = match summary::all(&state.journal.db).await {
        Ok(summaries) => summaries,
        Err(error) => return unavailable(error),
    };
    let facets = state.journal.facets();
    let now = unix_now();
    let page = ConnectionsPage {
        nonce: page::nonce(),
        csrf: owner.csrf.clone(),
        base: owner.base.clone(),
        section: "connections",
        rows: summaries.iter().map(|s| s.row(&facets, now)).collect(),
        stale: summaries.iter().filter(|s| s.stale(now).is_some()).count(),
        notice,
        error,
        label,
    };
    page::html(status, &page, &page.nonce.clone(), None)
}
