//! The overview page: the routes and their state, every connection with what it may see, calls
//! today and the last few calls.

use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::session::Owner;
use super::signin::unavailable;
use crate::app::AppState;
use crate::auth::{AuthError, audit, connections};
use crate::journal::day::{format_timestamp, unix_now};
use crate::oauth::{pages, store};

/// One route as the overview shows it.
pub struct RouteRow {
    pub name: &'static str,
    pub address: String,
    pub pairing_open: bool,
}

/// One connection as the overview shows it.
pub struct ConnectionRow {
    pub label: String,
    pub kind: &'static str,
    pub grant: String,
    pub route: String,
    pub last_used: String,
    pub calls: i64,
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
    section: &'static str,
    routes: Vec<RouteRow>,
    connections: Vec<ConnectionRow>,
    calls_today: i64,
    calls: Vec<CallRow>,
}

/// How many calls the overview lists.
const LAST_CALLS: i64 = 8;

/// `GET /app`.
pub async fn show(State(state): State<AppState>, owner: Owner) -> Response {
    match gather(&state, &owner).await {
        Ok(page) => pages::html(StatusCode::OK, &page, &page.nonce.clone(), None),
        Err(error) => unavailable(error),
    }
}

async fn gather(state: &AppState, owner: &Owner) -> Result<OverviewPage, AuthError> {
    let db = &state.journal.db;
    let now = unix_now();
    let facets = state.journal.facets();
    let counts = audit::counts_by_connection(db).await?;
    let last_used = |at: Option<i64>| at.map_or_else(|| "never".to_string(), format_timestamp);
    let mut rows = Vec::new();
    for key in connections::list_keys(db).await? {
        rows.push(ConnectionRow {
            grant: key.grant.describe(&facets),
            route: "local".into(),
            last_used: last_used(key.last_used_at),
            calls: counts.get(&key.id).copied().unwrap_or(0),
            label: key.label,
            kind: "key",
        });
    }
    let signed_in = store::list_grants(db)
        .await
        .map_err(|e| AuthError::Invalid(e.description))?;
    for entry in signed_in {
        let connection = entry.connection;
        let ended = entry.expires_at <= now;
        rows.push(ConnectionRow {
            grant: if ended {
                "nothing: the sign-in ended (30 days after pairing)".into()
            } else {
                connection.grant.describe(&facets)
            },
            route: entry.route,
            last_used: last_used(connection.last_used_at),
            calls: counts.get(&connection.id).copied().unwrap_or(0),
            label: connection.label,
            kind: "signed-in app",
        });
    }
    let route = &owner.route;
    let pairing_open = store::code_open(db, route.name, now)
        .await
        .map_err(|e| AuthError::Invalid(e.description))?;
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
        nonce: pages::nonce(),
        csrf: owner.csrf.clone(),
        section: "overview",
        routes: vec![RouteRow {
            name: route.name,
            address: format!("http://127.0.0.1:{}/mcp", route.port),
            pairing_open,
        }],
        connections: rows,
        calls_today: audit::count_since(db, today).await?,
        calls,
    })
}
