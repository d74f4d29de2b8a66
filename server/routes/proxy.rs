//! The router of the route behind the owner's tunnel or reverse proxy (Tailscale Funnel,
//! Cloudflare Tunnel, Caddy): every route's endpoints, without the owner app and without keys,
//! behind the own-domain route's rules with the tunnel's public name (`context::host::domain`: the
//! Host must be that name, the consent form must come from its page). The tunnel terminates TLS
//! and forwards plain HTTP to the route's loopback listener; the client's address it reports in
//! `X-Forwarded-For` counts the per-source quotas and nothing else (`layers::TrustForwarder`).

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::response::Response;

use super::endpoints;
use super::layers::{Guard, TrustForwarder};
use crate::app::AppState;
use crate::context::Route;
use crate::context::host::{domain::check, forbidden};

/// The router of the proxy route.
pub fn router(state: AppState, route: Route) -> Router {
    let guarded = Arc::new(route.clone());
    endpoints(route, Router::new())
        .layer(Guard(move |request: &Request| guard(request, &guarded)))
        .layer(TrustForwarder)
        .with_state(state)
}

fn guard(request: &Request, route: &Route) -> Option<Response> {
    check(request.method(), request.uri().path(), request.headers(), route)
        .err()
        .map(|(error, description)| forbidden(error, description))
}
