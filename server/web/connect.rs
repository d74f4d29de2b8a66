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
use super::refusals::unavailable;
use super::session::Owner;
use super::summary::oauth_failure;
use crate::app::AppState;
use crate::auth::AuthError;
use crate::clock::unix_now;
use crate::context::{self, Route};
use crate::journal::day::format_timestamp;
use crate::oauth::{pairing, store};
use crate::page::form::Params;
use crate::routes::status::{DomainView, LanView};

/// One route the owner can pick.
pub struct RouteChoice {
    pub name: &'static str,
    pub title: &'static str,
    pub description: String,
    /// Whether this server serves the route (it can be picked).
    pub ready: bool,
}

/// The routes in the order the page lists them, as this server serves them.
fn route_choices(
    lan: Option<&LanView>,
    domain: Option<&DomainView>,
    relay: Option<&DomainView>,
    proxy: Option<&str>,
) -> Vec<RouteChoice> {
    let domain_description = match domain {
        None => "HTTPS with a certificate from Let's Encrypt; Claude on the web and ChatGPT need it. Off: turn it on with `journal route enable domain --hostname H`.".into(),
        Some(domain) if !domain.serving => format!(
            "On, but not serving: {}.",
            domain.problem.as_deref().unwrap_or("it has no certificate yet").trim_end_matches('.')
        ),
        Some(domain) => format!("For agents anywhere, including Claude on the web and ChatGPT: {}.", domain.mcp_url),
    };
    let lan_description = match lan {
        None => "HTTPS with a certificate from your journal's own authority. Off: turn it on with `journal route enable lan`.".into(),
        Some(lan) if lan.addresses.is_empty() => {
            "On, but this computer has no private address right now (no Wi-Fi, Ethernet or VPN).".into()
        }
        Some(_) => "For agents on your other devices at home or over your VPN: HTTPS with your journal's own authority.".into(),
    };
    vec![
        RouteChoice {
            name: context::LOCAL,
            title: "On this computer",
            description: "For agents that run here: Claude Code, Codex, Gemini CLI, scripts.".into(),
            ready: true,
        },
        RouteChoice {
            name: context::LAN,
            title: "On your Wi-Fi or VPN",
            description: lan_description,
            ready: lan.is_some_and(|lan| !lan.addresses.is_empty()),
        },
        RouteChoice {
            name: context::DOMAIN,
            title: "Anywhere, at your own domain",
            description: domain_description,
            ready: domain.is_some_and(|domain| domain.serving),
        },
        RouteChoice {
            name: context::RELAY,
            title: "Anywhere, through your relay",
            description: match relay {
                None => "Through a relay you run on a server (`journal relay serve`), for a computer with no public address; the relay passes encrypted bytes only. Off: turn it on with `journal route enable relay`.".into(),
                Some(relay) if !relay.serving => format!(
                    "On, but not serving: {}.",
                    relay.problem.as_deref().unwrap_or("it has no certificate yet").trim_end_matches('.')
                ),
                Some(relay) => format!("For agents anywhere, through your relay: {}.", relay.mcp_url),
            },
            ready: relay.is_some_and(|relay| relay.serving),
        },
        RouteChoice {
            name: context::PROXY,
            title: "Anywhere, through your tunnel",
            description: match proxy {
                None => "Behind Tailscale Funnel, Cloudflare Tunnel or a reverse proxy you run, which holds the certificate. Off: turn it on with `journal route enable proxy --public-url URL`.".into(),
                Some(url) => format!("For agents anywhere, through your tunnel: {url}."),
            },
            ready: proxy.is_some(),
        },
    ]
}

/// The route the page is about: its name and the addresses agents use for it.
struct Chosen {
    name: &'static str,
    addresses: Vec<String>,
    /// For the LAN route: its CA's fingerprint (the certificate is at `/app/ca.pem`).
    ca_fingerprint: Option<String>,
}

/// The local route, which every server serves (the owner app is on it).
fn local(owner: &Owner) -> Chosen {
    Chosen {
        name: context::LOCAL,
        addresses: vec![owner.route.mcp_url()],
        ca_fingerprint: None,
    }
}

/// The route named in a request, if this server serves it (None: not a route, or not served).
fn chosen(state: &AppState, owner: &Owner, name: &str) -> Option<Chosen> {
    match name {
        context::LOCAL => Some(local(owner)),
        context::LAN => state
            .routes
            .lan()
            .filter(|lan| !lan.addresses.is_empty())
            .map(|lan| Chosen {
                name: context::LAN,
                addresses: lan.addresses.iter().map(|addr| Route::lan(*addr).mcp_url()).collect(),
                ca_fingerprint: Some(lan.ca_fingerprint),
            }),
        context::DOMAIN => state
            .routes
            .domain()
            .filter(|domain| domain.serving)
            .map(|domain| Chosen {
                name: context::DOMAIN,
                addresses: vec![domain.mcp_url],
                ca_fingerprint: None,
            }),
        context::RELAY => state.routes.relay().filter(|relay| relay.serving).map(|relay| Chosen {
            name: context::RELAY,
            addresses: vec![relay.mcp_url],
            ca_fingerprint: None,
        }),
        context::PROXY => state.routes.proxy().map(|url| Chosen {
            name: context::PROXY,
            addresses: vec![url],
            ca_fingerprint: None,
        }),
        _ => None,
    }
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
    /// Where this session's pages are (`/app/<place>`), for every link and form.
    base: String,
    section: &'static str,
    routes: Vec<RouteChoice>,
    route: &'static str,
    address: String,
    /// Further addresses of the same route (the LAN route on several networks).
    more_addresses: Vec<String>,
    ca_fingerprint: Option<String>,
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
    let name = route.unwrap_or(context::LOCAL);
    let route = match chosen(&state, &owner, name) {
        Some(route) => route,
        None => {
            let (lan, domain, relay, proxy) = (
                state.routes.lan(),
                state.routes.domain(),
                state.routes.relay(),
                state.routes.proxy(),
            );
            let Some(choice) = route_choices(lan.as_ref(), domain.as_ref(), relay.as_ref(), proxy.as_deref())
                .into_iter()
                .find(|c| c.name == name)
            else {
                return malformed();
            };
            error = Some(format!(
                "The {} route is not serving on this journal, so this page shows the local route. {}",
                choice.name, choice.description
            ));
            local(&owner)
        }
    };
    let notice = Notice::parse(notice, &[Notice::CodeClosed]).map(Notice::text);
    render(&state, &owner, &route, None, notice, error, StatusCode::OK).await
}

/// `POST /app/connect/code`: opens sign-in on the route with a new code, replacing an open one.
pub async fn make_code(State(state): State<AppState>, form: OwnerForm) -> Response {
    let Some(route) = served(&state, &form) else {
        return malformed();
    };
    let now = unix_now();
    let code = match store::open_code(&state.journal.db, route.name, now).await {
        Ok(code) => code,
        Err(error) => return unavailable(oauth_failure(error)),
    };
    let new = NewCode {
        display: pairing::display(&code),
        seconds_left: pairing::LIFETIME_SECONDS,
        expires: format_timestamp(now + pairing::LIFETIME_SECONDS),
    };
    render(&state, &form.owner, &route, Some(new), None, None, StatusCode::OK).await
}

/// `POST /app/connect/close`: closes sign-in on the route (the open code stops working).
pub async fn close_code(State(state): State<AppState>, form: OwnerForm) -> Response {
    let Some(route) = served(&state, &form) else {
        return malformed();
    };
    match store::revoke_codes(&state.journal.db, Some(route.name)).await {
        Ok(_) => Redirect::to(&format!(
            "{}/connect?route={}&notice={}",
            form.owner.base,
            route.name,
            Notice::CodeClosed.as_str()
        ))
        .into_response(),
        Err(error) => unavailable(oauth_failure(error)),
    }
}

/// The route the form acts on: one this server serves (the only ones whose codes it can take).
fn served(state: &AppState, form: &OwnerForm) -> Option<Chosen> {
    chosen(state, &form.owner, form.field("route")?)
}

async fn render(
    state: &AppState,
    owner: &Owner,
    route: &Chosen,
    code: Option<NewCode>,
    notice: Option<&'static str>,
    error: Option<String>,
    status: StatusCode,
) -> Response {
    match gather(state, owner, route, code, notice, error).await {
        Ok(page) => crate::page::html(status, &page, &page.nonce.clone(), None),
        Err(error) => unavailable(error),
    }
}

async fn gather(
    state: &AppState,
    owner: &Owner,
    route: &Chosen,
    code: Option<NewCode>,
    notice: Option<&'static str>,
    error: Option<String>,
) -> Result<ConnectPage, AuthError> {
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
    let address = route.addresses.first().cloned().unwrap_or_default();
    Ok(ConnectPage {
        nonce: crate::page::nonce(),
        csrf: owner.csrf.clone(),
        base: owner.base.clone(),
        section: "connect",
        routes: route_choices(
            state.routes.lan().as_ref(),
            state.routes.domain().as_ref(),
            state.routes.relay().as_ref(),
            state.routes.proxy().as_deref(),
        ),
        route: route.name,
        clients: clients::for_route(route.name, &address),
        address,
        more_addresses: route.addresses.iter().skip(1).cloned().collect(),
        ca_fingerprint: route.ca_fingerprint.clone(),
        code,
        open_until,
        notice,
        error,
    })
}
