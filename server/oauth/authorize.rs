//! `/authorize`: the authorization request (GET) and the owner's answer on the consent page (POST).
//!
//! GET checks the request and shows stage one: who wants to connect, where the browser goes back
//! to, the scope and categories, and the pairing code field. POST checks the code; for a grant of
//! chosen facets it then shows stage two (facet names appear only once the code matched), and
//! finally redirects to the client with `code`, `state` and `iss`. A request naming an unknown client
//! or an unregistered redirect URI gets an error page and is never redirected.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Extension;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use url::Url;

use super::client_metadata::MetadataError;
use super::pages::{self, ConsentPage, FacetChoice, Refusal};
use super::store::{self, CodeRefusal, Pending};
use super::{OAuthError, client_metadata, known_clients, pkce, redirect, registration, resource};
use crate::app::AppState;
use crate::auth::{Category, WriteMode};
use crate::clock::unix_now;
use crate::context::{Route, Source};
use crate::page;
use crate::page::form::{self, Params};

/// GET /authorize
pub async fn start(
    State(state): State<AppState>,
    Extension(route): Extension<Arc<Route>>,
    Source(source): Source,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    // Only a top-level navigation starts a sign-in. An <img>, a fetch or a frame on any web page the
    // owner visits would otherwise start pending sign-ins from the owner's own address, displacing
    // the one the owner has open. Browsers send Sec-Fetch-Mode; programs that send none are fine.
    if headers
        .get("sec-fetch-mode")
        .is_some_and(|mode| mode.as_bytes() != b"navigate")
    {
        return not_a_navigation().answer(&headers);
    }
    let now = unix_now();
    let db = &state.journal.db;
    match store::code_open(db, route.name, now).await {
        Ok(true) => {}
        Ok(false) => return pages::nothing_waiting().answer(&headers),
        Err(e) => return e.into_response(),
    }
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let issuer = route.origin(&headers);

    // Until the client and its callback are known to be genuine, errors stay on this page.
    let client_id = match params.required("client_id") {
        Ok(id) => id,
        Err(e) => return broken_link(&e.description).answer(&headers),
    };
    // An https client_id names a metadata document; anything else must have registered.
    let client = if client_id.starts_with("https://") {
        match client_metadata::resolve(db, state.fetcher.as_ref(), client_id, &source, now).await {
            Ok(client) => client,
            Err(MetadataError::Refused(why)) => return broken_link(&why).answer(&headers),
            Err(MetadataError::Unreachable(why)) => return unreachable(client_id, &why).answer(&headers),
            Err(MetadataError::Full) => return too_many_clients().answer(&headers),
            Err(MetadataError::Store(e)) => return e.into_response(),
        }
    } else {
        match store::client(db, client_id).await {
            Ok(Some(client)) => client,
            Ok(None) => {
                return broken_link("the app asking to connect is not registered here; start again from the app")
                    .answer(&headers);
            }
            Err(e) => return e.into_response(),
        }
    };
    let known = known_clients::lookup(&client.client_id);
    let redirect_uri = match params.one("redirect_uri") {
        Ok(Some(uri)) if callback_allowed(&client, known.as_ref(), uri) => uri.to_string(),
        Ok(Some(_)) => return broken_link("the app's return address is not one it registered").answer(&headers),
        Ok(None) if client.redirect_uris.len() == 1 && known.is_none() => client.redirect_uris[0].clone(),
        Ok(None) => return broken_link("the request names no return address (redirect_uri)").answer(&headers),
        Err(e) => return broken_link(&e.description).answer(&headers),
    };
    let state_param = params.firsts().get("state").map(|s| s.to_string());
    let back = |error: OAuthError| redirect_error(&redirect_uri, &error, state_param.as_deref(), &issuer);

    let checked = (|| {
        if params.required("response_type")? != "code" {
            return Err(OAuthError::new(
                "unsupported_response_type",
                "response_type must be code",
            ));
        }
        let challenge = params.required("code_challenge")?;
        if params.one("code_challenge_method")? != Some("S256") {
            return Err(OAuthError::invalid_request(
                "code_challenge_method must be S256 (PKCE is required)",
            ));
        }
        if !pkce::valid_challenge(challenge) {
            return Err(OAuthError::invalid_request(
                "code_challenge must be the base64url SHA-256 of the verifier",
            ));
        }
        // Clients are told to send `resource`; one that does not gets this route's endpoint, which is
        // the only resource its tokens could ever be used at.
        let resource = match params.one("resource")? {
            Some(resource) if resource::matches(resource, &route.origins()) => resource.to_string(),
            Some(_) => {
                return Err(OAuthError::new(
                    "invalid_target",
                    "resource must be this journal's MCP endpoint",
                ));
            }
            None => format!("{issuer}/mcp"),
        };
        if let Some(state) = params.one("state")?
            && state.len() > 2048
        {
            return Err(OAuthError::invalid_request("state is too long"));
        }
        Ok((challenge.to_string(), resource))
    })();
    let (challenge, resource) = match checked {
        Ok(checked) => checked,
        Err(error) => return back(error),
    };
    let new = store::NewPending {
        client_id: &client.client_id,
        redirect_uri: &redirect_uri,
        state: state_param.as_deref(),
        code_challenge: &challenge,
        resource: &resource,
        route: route.name,
        issuer: &issuer,
        source: &source,
    };
    let (pending, csrf) = match store::create_pending(db, new, now).await {
        Ok(Some(created)) => created,
        Ok(None) => {
            return back(OAuthError::new(
                "temporarily_unavailable",
                "too many sign-ins are waiting; try again later",
            ));
        }
        Err(e) => return e.into_response(),
    };
    consent_page(
        Asker::new(&client.client_name, &client.client_id),
        &redirect_uri,
        &pending,
        &csrf,
        Stage::One {
            scope_facets: false,
            checked: &[],
            write_mode: WriteMode::None,
        },
        None,
    )
}

/// POST /authorize: the consent form.
pub async fn decide(
    State(state): State<AppState>,
    Extension(route): Extension<Arc<Route>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let now = unix_now();
    let db = &state.journal.db;
    let bytes = match form::body(&headers, body, "application/x-www-form-urlencoded").await {
        Ok(bytes) => bytes,
        Err(e) => {
            return page::message(
                StatusCode::BAD_REQUEST,
                "This form could not be read",
                &e.description,
                None,
            );
        }
    };
    let params = Params::parse(&bytes);
    let (Ok(Some(id)), Ok(Some(csrf))) = (params.one("pending"), params.one("csrf")) else {
        return expired();
    };
    let pending = match store::pending(db, id, csrf, now).await {
        // A sign-in started on one route is finished on that route only.
        Ok(Some(pending)) if pending.route == route.name => pending,
        Ok(_) => return expired(),
        Err(e) => return e.into_response(),
    };
    let client_name = match store::client(db, &pending.client_id).await {
        // Cleaned again here: a name stored before names were cleaned on the way in also labels
        // the connection this sign-in makes.
        Ok(Some(client)) => registration::clean_name(&client.client_name),
        Ok(None) => return expired(),
        Err(e) => return e.into_response(),
    };
    let decision = params.one("decision").ok().flatten().unwrap_or("");
    if decision != "approve" {
        let _ = store::drop_pending(db, &pending.id).await;
        let denied = OAuthError::new("access_denied", "the owner denied the request");
        return redirect_error(
            &pending.redirect_uri,
            &denied,
            pending.state.as_deref(),
            &pending.issuer,
        );
    }
    if pending.paired {
        return stage_two(&state, &pending, &client_name, csrf, &params, now).await;
    }

    let categories: BTreeSet<Category> = params.all("category").into_iter().filter_map(Category::parse).collect();
    let scope_facets = params.one("scope").ok().flatten() == Some("facets");
    // The page offers "can't change anything" (the default) and "can suggest changes"; force is
    // never granted here, so a form that asks for it (or anything else) is refused before the code
    // is tried.
    let write_mode = match params.one("write") {
        Ok(None | Some("none")) => WriteMode::None,
        Ok(Some("propose")) => WriteMode::Propose,
        _ => {
            return page::message(
                StatusCode::BAD_REQUEST,
                "This form could not be read",
                "It asked for a kind of change this page does not offer. Nothing was shared.",
                Some("Start again from the app."),
            );
        }
    };
    let checked: Vec<Category> = categories.iter().copied().collect();
    let typed = params.one("pairing_code").ok().flatten().unwrap_or("");
    let again = |error: String| {
        consent_page(
            Asker::new(&client_name, &pending.client_id),
            &pending.redirect_uri,
            &pending.id,
            csrf,
            Stage::One {
                scope_facets,
                checked: &checked,
                write_mode,
            },
            Some(error),
        )
    };
    match store::try_code(db, &pending, typed, now).await {
        Ok(()) => {}
        Err(CodeRefusal::Malformed(why)) => return again(format!("That is not a pairing code: {why}.")),
        Err(CodeRefusal::Wrong { tries_left }) => {
            return again(format!(
                "That code is not right. {tries_left} {} left.",
                if tries_left == 1 { "try" } else { "tries" }
            ));
        }
        Err(CodeRefusal::Exhausted) => {
            return page::message(
                StatusCode::FORBIDDEN,
                "Too many wrong codes",
                "This sign-in was stopped after five wrong pairing codes.",
                Some("Start again from the app, with a code from journal mcp pairing generate."),
            );
        }
        Err(CodeRefusal::Closed) => {
            let _ = store::drop_pending(db, &pending.id).await;
            return page::message(
                StatusCode::FORBIDDEN,
                "The pairing code is no longer open",
                "It was used, it expired or it was revoked.",
                Some("Make a new code with journal mcp pairing generate and start again from the app."),
            );
        }
        Err(CodeRefusal::SourceLocked) => {
            let _ = store::drop_pending(db, &pending.id).await;
            return page::message(
                StatusCode::FORBIDDEN,
                "Too many wrong codes from this address",
                "Twenty wrong pairing codes came from this address, so it may not try this code again.",
                Some("Make a new code with journal mcp pairing generate and start again from the app."),
            );
        }
    }
    if scope_facets {
        if let Err(e) = store::mark_paired(db, &pending.id, &categories, write_mode).await {
            return e.into_response();
        }
        let facets = facet_choices(&state);
        return consent_page(
            Asker::new(&client_name, &pending.client_id),
            &pending.redirect_uri,
            &pending.id,
            csrf,
            Stage::Two { facets },
            None,
        );
    }
    finish(&state, &pending, &client_name, &categories, None, write_mode, now).await
}

async fn stage_two(
    state: &AppState,
    pending: &Pending,
    client_name: &str,
    csrf: &str,
    params: &Params,
    now: i64,
) -> Response {
    let known = state.journal.facets();
    let chosen: Vec<String> = params
        .all("facet")
        .into_iter()
        .filter(|id| known.iter().any(|f| f.id == *id))
        .map(str::to_string)
        .collect();
    if chosen.is_empty() {
        let facets = facet_choices(state);
        let error = Some("Choose at least one facet, or deny.".to_string());
        return consent_page(
            Asker::new(client_name, &pending.client_id),
            &pending.redirect_uri,
            &pending.id,
            csrf,
            Stage::Two { facets },
            error,
        );
    }
    finish(
        state,
        pending,
        client_name,
        &pending.categories,
        Some(&chosen),
        pending.write_mode,
        now,
    )
    .await
}

async fn finish(
    state: &AppState,
    pending: &Pending,
    client_name: &str,
    categories: &BTreeSet<Category>,
    facets: Option<&[String]>,
    write_mode: WriteMode,
    now: i64,
) -> Response {
    match store::approve(
        &state.journal.db,
        pending,
        client_name,
        categories,
        facets,
        write_mode,
        now,
    )
    .await
    {
        Ok(code) => {
            let mut params = vec![("code", code.as_str())];
            if let Some(state) = &pending.state {
                params.push(("state", state));
            }
            params.push(("iss", &pending.issuer));
            see_other(&with_query(&pending.redirect_uri, &params))
        }
        Err(error) => redirect_error(&pending.redirect_uri, &error, pending.state.as_deref(), &pending.issuer),
    }
}

fn facet_choices(state: &AppState) -> Vec<FacetChoice> {
    state
        .journal
        .facets()
        .iter()
        .map(|f| FacetChoice {
            id: f.id.clone(),
            name: f.name.clone(),
            title: f.display_title().to_string(),
            emoji: f.emoji.clone().unwrap_or_default(),
        })
        .collect()
}

enum Stage<'a> {
    One {
        scope_facets: bool,
        checked: &'a [Category],
        write_mode: WriteMode,
    },
    Two {
        facets: Vec<FacetChoice>,
    },
}

/// Who asks to connect, as the consent page names it.
struct Asker<'a> {
    name: &'a str,
    client_id: &'a str,
}

impl<'a> Asker<'a> {
    fn new(name: &'a str, client_id: &'a str) -> Asker<'a> {
        Asker { name, client_id }
    }

    /// The host of a metadata document client's `client_id`, shown beside its name (MCP
    /// 2025-11-25): the name is whatever the document says, the host is who vouches for it.
    fn document_host(&self) -> Option<String> {
        super::client_metadata::document_host(self.client_id)
    }
}

fn consent_page(
    asker: Asker<'_>,
    redirect_uri: &str,
    pending: &str,
    csrf: &str,
    stage: Stage<'_>,
    error: Option<String>,
) -> Response {
    let nonce = page::nonce();
    let (stage_two, scope_facets, propose, categories, facets) = match stage {
        Stage::One {
            scope_facets,
            checked,
            write_mode,
        } => (
            false,
            scope_facets,
            write_mode == WriteMode::Propose,
            page::category_choices(checked),
            Vec::new(),
        ),
        Stage::Two { facets } => (true, true, false, Vec::new(), facets),
    };
    let page = ConsentPage {
        nonce: nonce.clone(),
        client_name: registration::clean_name(asker.name),
        client_host: asker.document_host(),
        callback_host: redirect::host(redirect_uri),
        pending: pending.to_string(),
        csrf: csrf.to_string(),
        stage_two,
        scope_facets,
        propose,
        error,
        categories,
        facets,
    };
    let status = if page.error.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    page::html(status, &page, &nonce, redirect::origin(redirect_uri).as_deref())
}

/// Whether `client` may send the browser back to `uri`: a known client by its catalog rule, any
/// other by the callbacks it registered or its document lists.
fn callback_allowed(client: &store::Client, known: Option<&known_clients::KnownClient>, uri: &str) -> bool {
    match known {
        Some(known) => known.allows(uri),
        None => client.redirect_uris.iter().any(|r| redirect::matches(r, uri)),
    }
}

fn broken_link(why: &str) -> Refusal {
    Refusal {
        status: StatusCode::BAD_REQUEST,
        error: "invalid_request",
        description: format!("this sign-in link is not valid: {why}"),
        heading: "This sign-in link is not valid",
        text: why.to_string(),
        hint: Some("Nothing was shared. Start again from the app.".into()),
    }
}

fn not_a_navigation() -> Refusal {
    Refusal {
        status: StatusCode::FORBIDDEN,
        error: "invalid_request",
        description: "a sign-in starts only when the browser opens the link as a page".into(),
        heading: "This sign-in must open as a page",
        text: "The sign-in link was loaded from inside another page (as an image, a frame or a script), which is never how an app asks to connect.".into(),
        hint: Some("Nothing was shared. If you are signing in an app, open its link in the browser's address bar.".into()),
    }
}

/// The refusal when a client's metadata document (its `client_id` URL) could not be fetched, with
/// the way to sign in without it.
fn unreachable(client_id: &str, why: &str) -> Refusal {
    let host = redirect::host(client_id);
    let instead = if client_id.starts_with("https://chatgpt.com/oauth/codex/") {
        "sign Codex in with dynamic registration instead: codex mcp login NAME --oauth-client-registration dcr"
            .to_string()
    } else {
        "sign in with a client registered on this journal instead: journal mcp oauth register --name NAME --redirect-uri URI prints a client id for the app's client-id setting (for Claude Code: claude mcp add ... --client-id ID)".to_string()
    };
    Refusal {
        status: StatusCode::BAD_GATEWAY,
        error: "invalid_client",
        description: format!("the app's description at {host} could not be fetched ({why}); {instead}"),
        heading: "The app's description could not be fetched",
        text: format!(
            "This app identifies itself with a document at {host}, and the journal could not fetch it: {why}."
        ),
        hint: Some(format!("Nothing was shared. To connect anyway, {instead}.")),
    }
}

fn too_many_clients() -> Refusal {
    Refusal {
        status: StatusCode::TOO_MANY_REQUESTS,
        error: "temporarily_unavailable",
        description: "too many apps from this address are waiting to sign in; finish or abandon one and try again"
            .into(),
        heading: "Too many apps are waiting to sign in",
        text: "The journal keeps a limited number of apps that have not signed in yet, per address and in all.".into(),
        hint: Some("Apps that never finish signing in are forgotten after a day. Try again later.".into()),
    }
}

fn expired() -> Response {
    page::message(
        StatusCode::BAD_REQUEST,
        "This sign-in is no longer waiting",
        "It expired, or it was already approved or denied.",
        Some("Start again from the app."),
    )
}

/// Sends the browser back to the client with an error (RFC 6749 4.1.2.1, RFC 9207 `iss`).
fn redirect_error(redirect_uri: &str, error: &OAuthError, state: Option<&str>, issuer: &str) -> Response {
    let mut params = vec![("error", error.code), ("error_description", error.description.as_str())];
    if let Some(state) = state {
        params.push(("state", state));
    }
    params.push(("iss", issuer));
    see_other(&with_query(redirect_uri, &params))
}

fn with_query(uri: &str, params: &[(&str, &str)]) -> String {
    match Url::parse(uri) {
        Ok(mut url) => {
            url.query_pairs_mut().extend_pairs(params);
            url.to_string()
        }
        Err(_) => uri.to_string(),
    }
}

fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
        .headers_mut()
        .insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}
