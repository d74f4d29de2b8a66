//! `POST /revoke`: token revocation (RFC 7009). Answers 200 for unknown tokens too, as the RFC asks,
//! so the endpoint cannot be used to test whether a token exists.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{OAuthError, store};
use crate::app::AppState;
use crate::page::form::{self, Params};

/// POST /revoke
pub async fn revoke(State(state): State<AppState>, headers: HeaderMap, body: Body) -> Response {
    let result: Result<(), OAuthError> = async {
        let bytes = form::body(&headers, body, "application/x-www-form-urlencoded").await?;
        let params = Params::parse(&bytes);
        let token = params.required("token")?;
        store::revoke_token(&state.journal.db, token, params.one("client_id")?).await
    }
    .await;
    match result {
        Ok(()) => {
            let mut response = StatusCode::OK.into_response();
            super::error::no_store(&mut response);
            response
        }
        Err(error) => error.into_response(),
    }
}
