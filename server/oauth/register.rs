//! `POST /register`: dynamic client registration (RFC 7591) for public clients.
//!
//! Closed (403, before the body is read) until the owner opens a pairing code, so a stranger cannot
//! fill the client table or learn anything about the journal.

use std::sync::Arc;

use axum::Extension;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::registration::check;
use super::{OAuthError, pages, store};
use crate::app::AppState;
use crate::clock::unix_now;
use crate::context::{Route, Source};
use crate::page::form;

/// POST /register
pub async fn register(
    State(state): State<AppState>,
    Extension(route): Extension<Arc<Route>>,
    Source(source): Source,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let now = unix_now();
    match store::code_open(&state.journal.db, route.name, now).await {
        Ok(true) => {}
        Ok(false) => return pages::nothing_waiting().answer(&headers),
        Err(e) => return e.into_response(),
    }
    match handle(&state, &source, &headers, body, now).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    }
}

async fn handle(
    state: &AppState,
    source: &str,
    headers: &HeaderMap,
    body: Body,
    now: i64,
) -> Result<Response, OAuthError> {
    let bytes = form::body(headers, body, "application/json").await?;
    let request: Value = serde_json::from_slice(&bytes)
        .map_err(|e| OAuthError::new("invalid_client_metadata", format!("the body is not valid JSON: {e}")))?;
    let registration = check(&request)?;
    let Some((client, created)) = store::register_client(
        &state.journal.db,
        &registration.client_name,
        &registration.redirect_uris,
        source,
        now,
    )
    .await?
    else {
        let error = OAuthError::new(
            "too_many_registrations",
            "too many clients are registered; try again later",
        );
        let mut response = error.into_response();
        *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
        return Ok(response);
    };
    let record = json!({
        "client_id": client.client_id,
        "client_id_issued_at": client.created_at,
        "client_name": client.client_name,
        "redirect_uris": client.redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    let status = if created { StatusCode::CREATED } else { StatusCode::OK };
    let mut response = (status, [(header::CONTENT_TYPE, "application/json")], record.to_string()).into_response();
    super::error::no_store(&mut response);
    Ok(response)
}
