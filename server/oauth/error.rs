//! OAuth errors as RFC 6749 and RFC 7591 name them, with the HTTP status each one answers with.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An OAuth error: its RFC code and a description a developer can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {description}")]
pub struct OAuthError {
    pub code: &'static str,
    pub description: String,
}

impl OAuthError {
    pub fn new(code: &'static str, description: impl Into<String>) -> OAuthError {
        OAuthError {
            code,
            description: description.into(),
        }
    }

    pub fn invalid_request(description: impl Into<String>) -> OAuthError {
        OAuthError::new("invalid_request", description)
    }

    pub fn invalid_grant(description: impl Into<String>) -> OAuthError {
        OAuthError::new("invalid_grant", description)
    }

    pub fn invalid_client(description: impl Into<String>) -> OAuthError {
        OAuthError::new("invalid_client", description)
    }

    pub fn server(description: impl Into<String>) -> OAuthError {
        OAuthError::new("server_error", description)
    }

    /// The HTTP status of this error at the token, registration and revocation endpoints.
    pub fn status(&self) -> StatusCode {
        match self.code {
            // RFC 6749 5.2; it also makes Claude register again.
            "invalid_client" => StatusCode::UNAUTHORIZED,
            "slow_down" => StatusCode::TOO_MANY_REQUESTS,
            "server_error" => StatusCode::INTERNAL_SERVER_ERROR,
            "temporarily_unavailable" => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::BAD_REQUEST,
        }
    }
}

impl From<crate::page::form::FormError> for OAuthError {
    fn from(error: crate::page::form::FormError) -> OAuthError {
        OAuthError::invalid_request(error.description)
    }
}

impl From<sqlx::Error> for OAuthError {
    fn from(error: sqlx::Error) -> OAuthError {
        tracing::error!(%error, "the OAuth store failed");
        OAuthError::server("the journal could not complete this request; try again")
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let body = json!({ "error": self.code, "error_description": self.description }).to_string();
        let mut response = (self.status(), [(header::CONTENT_TYPE, "application/json")], body).into_response();
        no_store(&mut response);
        if self.status() == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"oauth\""),
            );
        }
        response
    }
}

/// Token responses and errors must not be cached (RFC 6749 5.1).
pub fn no_store(response: &mut Response) {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
        .headers_mut()
        .insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
}
