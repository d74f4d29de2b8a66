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

use super::form::{self, Params};
use super::pages::{self, ConsentPage, FacetChoice};
use super::store::{self, CodeRefusal, Pending};
use super::{OAuthError, client_metadata, pkce, redirect, resource};
use crate::app::AppState;
use crate::auth::Category;
use crate::journal::day::unix_now;
use crate::routes::{Route, Source};

/// GET /authorize
pub async fn start(
    State(state): State<AppState>,
    Extension(route): Extension<Arc<Route>>,
    Source(source): Source,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let now = unix_now();
    let db = &state.journal.db;
    match store::code_open(db, route.name, now).await {
        Ok(true) => {}
        Ok(false) => return pages::nothing_waiting(),
        Err(e) => return e.into_response(),
    }
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let issuer = route.origin(&headers);

    // Until the client and its callback are known to be genuine, errors stay on this page.
    let client_id = match params.required("client_id") {
        Ok(id) => id,
        Err(e) => return broken_link(&e.description),
    };
    // An https client_id names a metadata document; anything else must have registered.
    let found = if client_id.starts_with("https://") {
        client_metadata::resolve(db, state.fetcher.as_ref(), client_id, now)
            .await
            .map(Some)
    } else {
        store::client(db, client_id).await
    };
    let client = match found {
        Ok(Some(client)) => client,
        Ok(None) => return broken_link("the app asking to connect is not registered here; start again from the app"),
        Err(e) if e.code == "server_error" => return e.into_response(),
        Err(e) => return broken_link(&e.description),
    };
    let redirect_uri = match params.one("redirect_uri") {
        Ok(Some(uri)) if client.redirect_uris.iter().any(|r| redirect::matches(r, uri)) => uri.to_string(),
        Ok(Some(_)) => return broken_link("the app's return address is not one it registered"),
        Ok(None) if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        Ok(None) => return broken_link("the request names no return address (redirect_uri)"),
        Err(e) => return broken_link(&e.description),
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
        &client.client_name,
        &redirect_uri,
        &pending,
        &csrf,
        Stage::One {
            scope_facets: false,
            checked: &[],
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
            return pages::message(
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
        Ok(Some(client)) => client.client_name,
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
    let checked: Vec<Category> = categories.iter().copied().collect();
    let typed = params.one("pairing_code").ok().flatten().unwrap_or("");
    let again = |error: String| {
        consent_page(
            &client_name,
            &pending.redirect_uri,
            &pending.id,
            csrf,
            Stage::One {
                scope_facets,
                checked: &checked,
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
            return pages::message(
                StatusCode::FORBIDDEN,
                "Too many wrong codes",
                "This sign-in was stopped after five wrong pairing codes.",
                Some("Start again from the app, with a code from journal mcp pairing generate."),
            );
        }
        Err(CodeRefusal::Closed) => {
            let _ = store::drop_pending(db, &pending.id).await;
            return pages::message(
                StatusCode::FORBIDDEN,
                "The pairing code is no longer open",
                "It was used, it expired, it was revoked, or it was locked after too many wrong tries.",
                Some("Make a new code with journal mcp pairing generate and start again from the app."),
            );
        }
    }
    if scope_facets {
        if let Err(e) = store::mark_paired(db, &pending.id, &categories).await {
            return e.into_response();
        }
        let facets = facet_choices(&state);
        return consent_page(
            &client_name,
            &pending.redirect_uri,
            &pending.id,
            csrf,
            Stage::Two { facets },
            None,
        );
    }
    finish(&state, &pending, &client_name, &categories, None, now).await
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
            client_name,
            &pending.redirect_uri,
            &pending.id,
            csrf,
            Stage::Two { facets },
            error,
        );
    }
    finish(state, pending, client_name, &pending.categories, Some(&chosen), now).await
}

async fn finish(
    state: &AppState,
    pending: &Pending,
    client_name: &str,
    categories: &BTreeSet<Category>,
    facets: Option<&[String]>,
    now: i64,
) -> Response {
    match store::approve(&state.journal.db, pending, client_name, categories, facets, now).await {
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
    },
    Two {
        facets: Vec<FacetChoice>,
    },
}

fn consent_page(
    client_name: &str,
    redirect_uri: &str,
    pending: &str,
    csrf: &str,
    stage: Stage<'_>,
    error: Option<String>,
) -> Response {
    let nonce = pages::nonce();
    let (stage_two, scope_facets, categories, facets) = match stage {
        Stage::One { scope_facets, checked } => (false, scope_facets, pages::category_choices(checked), Vec::new()),
        Stage::Two { facets } => (true, true, Vec::new(), facets),
    };
    let page = ConsentPage {
        nonce: nonce.clone(),
        client_name: client_name.to_string(),
        callback_host: redirect::host(redirect_uri),
        pending: pending.to_string(),
        csrf: csrf.to_string(),
        stage_two,
        scope_facets,
        error,
        categories,
        facets,
    };
    let status = if page.error.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    pages::html(status, &page, &nonce, redirect::origin(redirect_uri).as_deref())
}

fn broken_link(why: &str) -> Response {
    pages::message(
        StatusCode::BAD_REQUEST,
        "This sign-in link is not valid",
        why,
        Some("Nothing was shared. Start again from the app."),
    )
}

fn expired() -> Response {
    pages::message(
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
