//! The local route's router: every route's endpoints and the owner app, behind the loopback Host and
//! Origin rules (`context::host::local`).

use std::net::SocketAddr;

use axum::Router;
use axum::extract::Request;
use axum::response::Response;

use super::endpoints;
use super::layers::Guard;
use crate::app::AppState;
use crate::context::Route;
use crate::context::host::{forbidden, local::check};

/// The router of the local route, for a listener bound to `address`: every route's endpoints and
/// the owner app.
pub fn router(state: AppState, address: SocketAddr) -> Router {
    let port = address.port();
    endpoints(Route::local(address), crate::web::router())
        .layer(Guard(move |request: &Request| guard(request, port)))
        .with_state(state)
}

fn guard(request: &Request, port: u16) -> Option<Response> {
    check(request.headers(), port)
        .err()
        .map(|(error, description)| forbidden(error, description))
}
