//! Discovery documents: RFC 9728 protected resource metadata and RFC 8414 authorization server
//! metadata, per route, with the route's origin as issuer and `<origin>/mcp` as the resource.

use std::sync::Arc;

use axum::Extension;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::context::Route;

/// The protected resource metadata of `origin`.
pub fn resource_metadata(origin: &str) -> Value {
    json!({
        "resource": format!("{origin}/mcp"),
        "authorization_servers": [origin],
        "bearer_methods_supported": ["header"],
        "resource_name": "journal",
    })
}

/// The authorization server metadata of `origin`.
pub fn server_metadata(origin: &str) -> Value {
    json!({
        "issuer": origin,
        "authorization_endpoint": format!("{origin}/authorize"),
        "token_endpoint": format!("{origin}/token"),
        "registration_endpoint": format!("{origin}/register"),
        "revocation_endpoint": format!("{origin}/revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": true,
        "scopes_supported": [],
    })
}

/// GET /.well-known/oauth-protected-resource[/mcp]
pub async fn protected_resource(Extension(route): Extension<Arc<Route>>, headers: HeaderMap) -> Response {
    json_document(resource_metadata(&route.origin(&headers)))
}

/// GET /.well-known/oauth-authorization-server and /.well-known/openid-configuration
pub async fn authorization_server(Extension(route): Extension<Arc<Route>>, headers: HeaderMap) -> Response {
    json_document(server_metadata(&route.origin(&headers)))
}

fn json_document(document: Value) -> Response {
    let mut response = ([(header::CONTENT_TYPE, "application/json")], document.to_string()).into_response();
    // Metadata may be cached briefly; it changes only when routes change.
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
    response
}
