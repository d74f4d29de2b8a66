//! Each route's Host and Origin rules, as plain checks of a request's headers: the loopback
//! route's (`local`), the LAN route's (`lan`) and the own-domain route's (`domain`, which the proxy
//! route shares with its tunnel's name), and the refusals they answer with. `routes/` puts each in front of its route's router.

pub mod domain;
pub mod lan;
pub mod local;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The refusal of a request with more than one `Host` header (400), which `layers::Guard` checks
/// before every route's own rules: each reads the first, and a server or proxy in front might read
/// another.
pub fn repeated_host(headers: &HeaderMap) -> Option<Response> {
    (headers.get_all(header::HOST).iter().count() > 1).then(|| {
        (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            json!({ "error": "invalid_request", "error_description": "the request has more than one Host header" })
                .to_string(),
        )
            .into_response()
    })
}

/// A guard's refusal: 403 with a JSON error and a description.
pub fn forbidden(error: &str, description: &str) -> Response {
    (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "application/json")],
        json!({ "error": error, "error_description": description }).to_string(),
    )
        .into_response()
}
