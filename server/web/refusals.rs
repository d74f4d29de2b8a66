//! The owner app's shared refusals, and the same-origin rule every form of it is held to. Below
//! the pages, the session and the sign-in, which all answer with them.

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;

use crate::context::Route;
use crate::page;

/// A present `Origin` must be the app's own: a form posted from any other page (another local
/// tool on another port counts as the same site to the browser's cookie rules) is refused.
pub fn same_origin(headers: &HeaderMap, route: &Route) -> bool {
    let fetch_site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
    if fetch_site.is_some_and(|site| site != "same-origin" && site != "none") {
        return false;
    }
    match headers.get(header::ORIGIN) {
        None => true,
        Some(origin) => origin.to_str().ok() == Some(route.origin(headers).as_str()),
    }
}

/// The answer to a form that did not come from this session's own page.
pub fn foreign_form() -> Response {
    page::message(
        StatusCode::FORBIDDEN,
        "This form was not accepted",
        "It did not come from this app's own page, or its page is older than your session. Nothing was changed.",
        Some("Go back, reload the page and try again."),
    )
}

/// The answer when the journal could not be read (the error is logged, not shown).
pub fn unavailable(error: crate::auth::AuthError) -> Response {
    tracing::error!(%error, "the owner app could not read the journal");
    page::message(
        StatusCode::SERVICE_UNAVAILABLE,
        "The journal could not be read",
        "Try again in a moment.",
        None,
    )
}
