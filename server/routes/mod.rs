//! Routes: the ways of reaching the journal, assembled. Each route's router serves the same
//! endpoints (`endpoints`: MCP, discovery, registration, consent, tokens) behind its own guard, the
//! Host and Origin rules of `context::host`: `local` (loopback, plain HTTP, keys and sign-ins, and
//! the owner app), `lan` (the owner's private network or VPN, HTTPS from the journal's own CA,
//! sign-ins only), `domain` (the owner's hostname, HTTPS from an ACME CA, sign-ins only) and
//! `proxy` (behind the owner's tunnel, which terminates TLS; sign-ins only). This
//! is the one module that knows every feature's handlers; none of them imports it.

pub mod domain;
pub mod lan;
pub mod layers;
pub mod local;
pub mod proxy;
pub mod status;

use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde_json::json;

use crate::app::AppState;
use crate::context::Route;
use crate::mcp::transport;
use crate::oauth::{authorize, discovery, register, revoke, token};

/// The endpoints every route serves (MCP, discovery, registration, consent, tokens) and the route's
/// own (`extra`), all told which route they are on. Endpoints that browser-based clients call from
/// their own page answer CORS, with preflight.
pub fn endpoints(route: Route, extra: Router<AppState>) -> Router<AppState> {
    let cors = Router::new()
        .route(
            "/mcp",
            post(transport::post)
                .get(transport::get)
                .delete(transport::delete)
                .options(preflight)
                .fallback(transport::method_not_allowed),
        )
        .route(
            "/.well-known/oauth-protected-resource",
            get(discovery::protected_resource).options(preflight),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(discovery::protected_resource).options(preflight),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(discovery::authorization_server).options(preflight),
        )
        .route(
            "/.well-known/openid-configuration",
            get(discovery::authorization_server).options(preflight),
        )
        .route("/token", post(token::token).options(preflight))
        .route("/register", post(register::register).options(preflight))
        .route("/revoke", post(revoke::revoke).options(preflight))
        .layer(layers::AnyOrigin);
    Router::new()
        .route("/authorize", get(authorize::start).post(authorize::decide))
        .merge(cors)
        .merge(extra)
        .fallback(not_found)
        .layer(Extension(Arc::new(route)))
}

/// CORS preflight: any origin the guard let through may call with these headers.
async fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(
            "authorization, content-type, mcp-protocol-version, mcp-session-id, mcp-method, mcp-name",
        ),
    );
    headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    response
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "application/json")],
        json!({"error": "not_found", "error_description": "nothing is served here; MCP is at /mcp"}).to_string(),
    )
        .into_response()
}
