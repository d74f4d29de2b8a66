//! The LAN route's router: every route's endpoints, without the owner app, behind the LAN Host and
//! Origin rules (`context::host::lan`). TLS is terminated by the listener (`lan`) before a request
//! gets here.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::response::Response;

use super::endpoints;
use super::layers::Guard;
use crate::app::AppState;
use crate::context::Route;
use crate::context::host::{forbidden, lan::check};

/// The router of the LAN route as served at `address`.
pub fn router(state: AppState, address: SocketAddr) -> Router {
    let route = Route::lan(address);
    let guarded = Arc::new(route.clone());
    endpoints(route, Router::new())
        .layer(Guard(move |request: &Request| guard(request, &guarded)))
        .with_state(state)
}

fn guard(request: &Request, route: &Route) -> Option<Response> {
    check(request.headers(), route)
        .err()
        .map(|(error, description)| forbidden(error, description))
}
