//! Signing in with a one-time link from `journal app`, and signing out.
//!
//! Opening the link shows a page with one button; the link is used only when the owner presses it.
//! A GET that used the link would let anything that fetches URLs ahead of the owner (a link
//! preview, a prefetching browser) spend it.

use std::sync::Arc;

use askama::Template;
use axum::Extension;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

use super::form::OwnerForm;
use super::refusals::{foreign_form, same_origin, unavailable};
use super::session;
use crate::app::AppState;
use crate::auth::owner::{self, LinkRefusal};
use crate::auth::passphrase;
use crate::clock::unix_now;
use crate::context::Route;
use crate::page;
use crate::page::form::{self, Params};

#[derive(Template)]
#[template(path = "app/signin.html")]
struct SignInPage {
    nonce: String,
    token: String,
    hours: i64,
    /// Whether the owner set a passphrase, which the page then asks for.
    passphrase: bool,
    error: Option<String>,
}

/// `GET /app/signin`: with a link's token, the button that uses it; without, how to get one.
pub async fn show(State(state): State<AppState>, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let Some(token) = params
        .one("t")
        .ok()
        .flatten()
        .filter(|t| !t.is_empty())
        .map(str::to_string)
    else {
        return how_to_sign_in(StatusCode::OK);
    };
    let db = &state.journal.db;
    match owner::check_link(db, &token, unix_now()).await {
        Ok(Ok(())) => match passphrase::stored(db).await {
            Ok(stored) => confirm_page(StatusCode::OK, token, stored.is_some(), None),
            Err(error) => unavailable(error),
        },
        Ok(Err(refusal)) => refused(refusal),
        Err(error) => unavailable(error),
    }
}

/// The page with the button that uses the link (and the passphrase field, when one is set).
fn confirm_page(status: StatusCode, token: String, passphrase: bool, error: Option<String>) -> Response {
    let nonce = page::nonce();
    let page = SignInPage {
        nonce: nonce.clone(),
        token,
        hours: owner::SESSION_LIFETIME_SECONDS / 3600,
        passphrase,
        error,
    };
    page::html(status, &page, &nonce, None)
}

/// `POST /app/signin`: uses the link and starts the session.
pub async fn redeem(
    State(state): State<AppState>,
    Extension(route): Extension<Arc<Route>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if !same_origin(&headers, &route) {
        return foreign_form();
    }
    let Ok(bytes) = form::body(&headers, body, "application/x-www-form-urlencoded").await else {
        return how_to_sign_in(StatusCode::BAD_REQUEST);
    };
    let params = Params::parse(&bytes);
    let (Ok(Some(token)), Ok(typed)) = (params.one("t"), params.one("passphrase")) else {
        return how_to_sign_in(StatusCode::BAD_REQUEST);
    };
    let db = &state.journal.db;
    let stored = match passphrase::stored(db).await {
        Ok(stored) => stored,
        Err(error) => return unavailable(error),
    };
    if let Some(stored) = stored {
        let typed = typed.unwrap_or_default().to_string();
        if typed.is_empty() {
            // Nothing to weigh: ask again without spending a try (when the link is still good).
            return match owner::check_link(db, token, unix_now()).await {
                Ok(Ok(())) => confirm_page(
                    StatusCode::BAD_REQUEST,
                    token.to_string(),
                    true,
                    Some("Type your owner passphrase to sign in.".into()),
                ),
                Ok(Err(refusal)) => refused(refusal),
                Err(error) => unavailable(error),
            };
        }
        // A try is taken before the passphrase is weighed, so requests sent together cannot weigh
        // more passphrases than the link has tries.
        let left = match owner::take_try(db, token, unix_now()).await {
            Ok(Ok(left)) => left,
            Ok(Err(refusal)) => return refused(refusal),
            Err(error) => return unavailable(error),
        };
        // argon2 is slow on purpose: it runs off the async workers.
        let matched = tokio::task::spawn_blocking(move || passphrase::matches(&stored, &typed))
            .await
            .unwrap_or(false);
        if !matched {
            if left == 0 {
                return match owner::void_link(db, token).await {
                    Ok(()) => refused(LinkRefusal::TriesUsed),
                    Err(error) => unavailable(error),
                };
            }
            return confirm_page(
                StatusCode::FORBIDDEN,
                token.to_string(),
                true,
                Some(format!(
                    "That passphrase is not right. {left} {} left with this link.",
                    if left == 1 { "try" } else { "tries" }
                )),
            );
        }
    }
    match owner::redeem_link(db, token, unix_now()).await {
        Ok(Ok(secret)) => {
            // The session's own pages: its cookie is sent only there.
            let mut response = Redirect::to(&format!("{}/", session::base(&secret))).into_response();
            response
                .headers_mut()
                .insert(header::SET_COOKIE, session::set_cookie(route.port, &secret));
            response
        }
        Ok(Err(refusal)) => refused(refusal),
        Err(error) => unavailable(error),
    }
}

/// `POST /app/signout`: ends this browser's session.
pub async fn sign_out(State(state): State<AppState>, form: OwnerForm) -> Response {
    let owner = form.owner;
    if let Err(error) = owner::end_session(&state.journal.db, owner.secret()).await {
        return unavailable(error);
    }
    let mut response = page::message(
        StatusCode::OK,
        "You are signed out",
        "This browser no longer has access to the owner app.",
        Some("To sign in again, run journal app in a terminal on this computer."),
    );
    response
        .headers_mut()
        .insert(header::SET_COOKIE, session::clear_cookie(owner.route.port, &owner.base));
    response
}

fn how_to_sign_in(status: StatusCode) -> Response {
    page::message(
        status,
        "Sign in to your journal",
        "The owner app opens with a one-time link. Run this in a terminal on this computer:",
        Some("journal app (it prints the link, and opens it in your browser when it can)"),
    )
}

fn refused(refusal: LinkRefusal) -> Response {
    let text = match refusal {
        LinkRefusal::Unknown => {
            "This sign-in link was already used, or it is not one the journal made. A link works once."
        }
        LinkRefusal::Expired => "This sign-in link has expired: a link works for 5 minutes.",
        LinkRefusal::TriesUsed => "The passphrase was wrong too many times, so this link no longer works.",
    };
    page::message(
        StatusCode::FORBIDDEN,
        "This link does not sign you in",
        text,
        Some("Run journal app in a terminal on this computer for a new link."),
    )
}
