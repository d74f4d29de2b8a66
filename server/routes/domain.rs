//! The router of the routes at a hostname of their own with an ACME certificate, the own-domain
//! route and the relay route: every route's endpoints, without the owner app, behind the route's
//! Host rule and the consent form's Origin rule (`context::host::domain`). TLS with the route's
//! certificate is terminated (by the listener, or over the relay's stream) before a request gets
//! here; whether keys work is the route's own (`Route::accepts_keys`).

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::response::Response;

use super::endpoints;
use super::layers::Guard;
use crate::app::AppState;
use crate::context::Route;
use crate::context::host::{domain::check, forbidden};

/// The router of the own-domain route or the relay route.
pub fn router(state: AppState, route: Route) -> Router {
    let guarded = Arc::new(route.clone());
    endpoints(route, Router::new())
        .layer(Guard(move |request: &Request| guard(request, &guarded)))
        .with_state(state)
}

fn guard(request: &Request, route: &Route) -> Option<Response> {
    check(request.method(), request.uri().path(), request.headers(), route)
        .err()
        .map(|(error, description)| forbidden(error, description))
}
