//! The overview page: the routes and their state, every connection with what it may see, calls
//! today and the last few calls.

use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::refusals::unavailable;
use super::session::Owner;
use super::summary::{self, ConnectionRow, oauth_failure};
use crate::app::AppState;
use crate::auth::{AuthError, audit};
use crate::clock::unix_now;
use crate::journal::day::format_timestamp;
use crate::journal::proposals;
use crate::oauth::store;

/// One route as the overview shows it.
pub struct RouteRow {
    pub name: &'static str,
    pub address: String,
    pub pairing_open: bool,
}

/// One recorded call.
pub struct CallRow {
    pub at: String,
    pub connection: String,
    pub tool: String,
    pub outcome: String,
}

#[derive(Template)]
#[template(path = "app/overview.html")]
struct OverviewPage {
    nonce: String,
    csrf: String,
    /// Where this session's pages are (`/app/<place>`), for every link and form.
    base: String,
    section: &'static str,
    routes: Vec<RouteRow>,
    connections: Vec<ConnectionRow>,
    calls_today: i64,
    calls: Vec<CallRow>,
    /// Proposals that wait for the owner's review.
    proposals: i64,
}

/// How many calls the overview lists.
const LAST_CALLS: i64 = 8;

/// `GET /app`.
pub async fn show(State(state): State<AppState>, owner: Owner) -> Response {
    match gather(&state, &owner).await {
        Ok(page) => crate::page::html(StatusCode::OK, &page, &page.nonce.clone(), None),
        Err(error) => unavailable(error),
    }
}

async fn gather(state: &AppState, owner: &Owner) -> Result<OverviewPage, AuthError> {
    let db = &state.journal.db;
    let now = unix_now();
    let facets = state.journal.facets();
    let connections = summary::all(db).await?.iter().map(|s| s.row(&facets, now)).collect();
    let route = &owner.route;
    let pairing_open = store::code_open(db, route.name, now).await.map_err(oauth_failure)?;
    // Days are UTC, as everywhere in the journal.
    let today = now - now.rem_euclid(86_400);
    let calls = audit::recent(db, LAST_CALLS, None)
        .await?
        .into_iter()
        .map(|entry| CallRow {
            at: format_timestamp(entry.at),
            connection: entry.connection_label,
            tool: entry.tool,
            outcome: entry.outcome,
        })
        .collect();
    Ok(OverviewPage {
        nonce: crate::page::nonce(),
        csrf: owner.csrf.clone(),
        base: owner.base.clone(),
        section: "overview",
        routes: vec![RouteRow {
            name: route.name,
            address: route.mcp_url(),
            pairing_open,
        }],
        connections,
        calls_today: audit::count_since(db, today).await?,
        calls,
        proposals: proposals::pending_count(db).await.map_err(AuthError::from)?,
    })
}
