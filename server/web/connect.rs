//! Connect an agent: pick the route, see its address and what to type into each client, and open
//! sign-in with a pairing code (shown once, with a countdown), or close it again.
//!
//! The code is made by the same function as `journal mcp pairing generate`, so the CLI and the page
//! open and close the same code.

use askama::Template;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};

use super::clients::{self, ClientSetup};
use super::form::{OwnerForm, malformed};
use super::notice::Notice;
use super::session::Owner;
use super::signin::unavailable;
use super::summary::oauth_failure;
use crate::app::AppState;
use crate::auth::AuthError;
use crate::journal::day::{format_timestamp, unix_now};
use crate::oauth::form::Params;
use crate::oauth::{pages, pairing, store};
use crate::routes::Route;

/// One route the owner can pick.
pub struct RouteChoice {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// Whether the route is set up on this journal (only the local route so far).
    pub ready: bool,
}

/// The routes in the order the page lists them.
fn route_choices() -> Vec<RouteChoice> {
    vec![
        RouteChoice {
            name: "local",
            title: "On this computer",
            description: "For agents that run here: Claude Code, Codex, Gemini CLI, scripts.",
            ready: true,
        },
        RouteChoice {
            name: "lan",
            title: "On your Wi-Fi or VPN",
            description: "HTTPS with a certificate from your journal's own authority. Not set up on this journal.",
            ready: false,
        },
        RouteChoice {
            name: "domain",
            title: "Anywhere, at your own domain",
            description: "HTTPS with a certificate from Let's Encrypt; Claude on the web and ChatGPT need it. Not set up on this journal.",
            ready: false,
        },
    ]
}

/// A code just made, shown once.
pub struct NewCode {
    pub display: String,
    pub seconds_left: i64,
    pub expires: String,
}

#[derive(Template)]
#[template(path = "app/connect.html")]
struct ConnectPage {
    nonce: String,
    csrf: String,
    section: &'static str,
    routes: Vec<RouteChoice>,
    route: &'static str,
    address: String,
    clients: Vec<ClientSetup>,
    /// The code this answer made (only the answer that made it shows it).
    code: Option<NewCode>,
    /// When an earlier code is still open, when it expires.
    open_until: Option<String>,
    notice: Option<&'static str>,
    error: Option<String>,
}

/// `GET /app/connect[?route=NAME]`.
pub async fn show(State(state): State<AppState>, owner: Owner, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let (Ok(route), Ok(notice)) = (params.one("route"), params.one("notice")) else {
        return malformed();
    };
    let mut error = None;
    if let Some(name) = route.filter(|name| *name != owner.route.name) {
        match route_choices().iter().find(|choice| choice.name == name) {
            Some(choice) => {
                error = Some(format!(
                    "The {} route is not set up on this journal, so agents can only connect on this computer for now.",
                    choice.name
                ))
            }
            None => return malformed(),
        }
    }
    let notice = Notice::parse(notice, &[Notice::CodeClosed]).map(Notice::text);
    render(&state, &owner, None, notice, error, StatusCode::OK).await
}

/// `POST /app/connect/code`: opens sign-in on the route with a new code, replacing an open one.
pub async fn make_code(State(state): State<AppState>, form: OwnerForm) -> Response {
    if !route_is_served(&form) {
        return malformed();
    }
    let route = form.owner.route.name;
    let now = unix_now();
    let code = match store::open_code(&state.journal.db, route, now).await {
        Ok(code) => code,
        Err(error) => return unavailable(oauth_failure(error)),
    };
    let new = NewCode {
        display: pairing::display(&code),
        seconds_left: pairing::LIFETIME_SECONDS,
        expires: format_timestamp(now + pairing::LIFETIME_SECONDS),
    };
    render(&state, &form.owner, Some(new), None, None, StatusCode::OK).await
}

/// `POST /app/connect/close`: closes sign-in on the route (the open code stops working).
pub async fn close_code(State(state): State<AppState>, form: OwnerForm) -> Response {
    if !route_is_served(&form) {
        return malformed();
    }
    match store::revoke_codes(&state.journal.db, Some(form.owner.route.name)).await {
        Ok(_) => Redirect::to(&format!("/app/connect?notice={}", Notice::CodeClosed.as_str())).into_response(),
        Err(error) => unavailable(oauth_failure(error)),
    }
}

/// The form names the route it acts on: it must be the route this page is served on (the only one
/// whose codes this server can take).
fn route_is_served(form: &OwnerForm) -> bool {
    form.field("route") == Some(form.owner.route.name)
}

async fn render(
    state: &AppState,
    owner: &Owner,
    code: Option<NewCode>,
    notice: Option<&'static str>,
    error: Option<String>,
    status: StatusCode,
) -> Response {
    match gather(state, owner, code, notice, error).await {
        Ok(page) => pages::html(status, &page, &page.nonce.clone(), None),
        Err(error) => unavailable(error),
    }
}

async fn gather(
    state: &AppState,
    owner: &Owner,
    code: Option<NewCode>,
    notice: Option<&'static str>,
    error: Option<String>,
) -> Result<ConnectPage, AuthError> {
    let route: &Route = &owner.route;
    let open_until = if code.is_some() {
        None
    } else {
        store::code_expiry(&state.journal.db, route.name, unix_now())
            .await
            .map_err(oauth_failure)?
            .map(format_timestamp)
    };
    // "Sign-in is closed" would contradict a code opened since.
    let notice = notice.filter(|_| open_until.is_none());
    let address = route.mcp_url();
    Ok(ConnectPage {
        nonce: pages::nonce(),
        csrf: owner.csrf.clone(),
        section: "connect",
        routes: route_choices(),
        route: route.name,
        clients: clients::for_route(route.name, &address),
        address,
        code,
        open_until,
        notice,
        error,
    })
}
