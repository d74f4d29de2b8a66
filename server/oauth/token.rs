//! `POST /token`: authorization codes and refresh tokens exchanged for tokens (RFC 6749 4.1.3, 6).

use std::sync::Arc;

use axum::Extension;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::store::{self, TokenPair};
use super::{OAuthError, resource};
use crate::app::AppState;
use crate::clock::unix_now;
use crate::context::Route;
use crate::page::form::{self, Params};

/// POST /token
pub async fn token(
    State(state): State<AppState>,
    Extension(route): Extension<Arc<Route>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match exchange(&state, &route, &headers, body).await {
        Ok(pair) => {
            let body = json!({
                "access_token": pair.access_token,
                "token_type": "Bearer",
                "expires_in": pair.expires_in,
                "refresh_token": pair.refresh_token,
            });
            let mut response = ([(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response();
            super::error::no_store(&mut response);
            response
        }
        Err(error) => error.into_response(),
    }
}

async fn exchange(state: &AppState, route: &Route, headers: &HeaderMap, body: Body) -> Result<TokenPair, OAuthError> {
    let now = unix_now();
    let bytes = form::body(headers, body, "application/x-www-form-urlencoded").await?;
    let params = Params::parse(&bytes);
    let grant_type = params.required("grant_type")?;
    if grant_type != "authorization_code" && grant_type != "refresh_token" {
        return Err(OAuthError::new(
            "unsupported_grant_type",
            "grant_type must be authorization_code or refresh_token",
        ));
    }
    let client_id = params.required("client_id")?;
    if store::client(&state.journal.db, client_id).await?.is_none() {
        return Err(OAuthError::invalid_client("unknown client_id; register again"));
    }
    if let Some(resource) = params.one("resource")?
        && !resource::matches(resource, &route.origins())
    {
        return Err(OAuthError::new(
            "invalid_target",
            "resource must be this journal's MCP endpoint",
        ));
    }
    if grant_type == "authorization_code" {
        let code = params.required("code")?;
        let redirect_uri = params.required("redirect_uri")?;
        let verifier = params.required("code_verifier")?;
        store::exchange_code(
            &state.journal.db,
            route.name,
            code,
            client_id,
            redirect_uri,
            verifier,
            now,
        )
        .await
    } else {
        let refresh_token = params.required("refresh_token")?;
        store::refresh(
            &state.journal.db,
            &state.refresh_retries,
            route.name,
            refresh_token,
            client_id,
            now,
        )
        .await
    }
}
