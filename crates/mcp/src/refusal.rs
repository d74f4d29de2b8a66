//! Why a request to `/mcp` is refused before any of its messages is dispatched: the error type of
//! the Streamable HTTP boundary. Each refusal answers itself (`IntoResponse`), so the transport's
//! checks return `Result<_, Refusal>` and use `?`, and a refusal is small (no response is built
//! until one is sent).

use std::borrow::Cow;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::jsonrpc;

/// A request refused at the HTTP level.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A JSON-RPC error without an id, under an HTTP status.
    Http {
        status: StatusCode,
        code: i64,
        message: Cow<'static, str>,
    },
    /// No credential, or one that is unknown, revoked or expired: 401, with the challenge that
    /// tells the client where to sign in (`origin` is the route's, as the client reached it).
    Unauthorized { origin: String, presented: bool },
}

impl Refusal {
    pub fn http(status: StatusCode, code: i64, message: impl Into<Cow<'static, str>>) -> Refusal {
        Refusal::Http {
            status,
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Http { status, code, message } => {
                json_response(status, jsonrpc::error(Value::Null, code, message.into_owned()))
            }
            Refusal::Unauthorized { origin, presented } => {
                let (error, description) = if presented {
                    ("invalid_token", "the credential is unknown, revoked or expired")
                } else {
                    (
                        "invalid_request",
                        "this endpoint needs Authorization: Bearer <key or access token>",
                    )
                };
                let mut response = json_response(
                    StatusCode::UNAUTHORIZED,
                    json!({ "error": error, "error_description": description }),
                );
                let challenge = format!(
                    "Bearer realm=\"mcp\", resource_metadata=\"{origin}/.well-known/oauth-protected-resource\""
                );
                if let Ok(value) = HeaderValue::from_str(&challenge) {
                    response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
                }
                response
            }
        }
    }
}

/// A JSON answer with its status.
pub fn json_response(status: StatusCode, body: Value) -> Response {
    text_response(status, body.to_string())
}

/// JSON text already serialized, with its status.
pub fn text_response(status: StatusCode, json: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], json).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_answers_with_its_status_and_a_challenge_where_one_is_due() {
        let refused = Refusal::http(StatusCode::PAYLOAD_TOO_LARGE, jsonrpc::INVALID_REQUEST, "too big").into_response();
        assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert!(refused.headers().get(header::WWW_AUTHENTICATE).is_none());
        let unknown = Refusal::Unauthorized {
            origin: "http://127.0.0.1:7659".into(),
            presented: true,
        }
        .into_response();
        assert_eq!(unknown.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            unknown.headers()[header::WWW_AUTHENTICATE],
            "Bearer realm=\"mcp\", resource_metadata=\"http://127.0.0.1:7659/.well-known/oauth-protected-resource\""
        );
        // Small: a refusal is returned by value through every check.
        assert!(
            std::mem::size_of::<Refusal>() <= 64,
            "{}",
            std::mem::size_of::<Refusal>()
        );
    }
}
