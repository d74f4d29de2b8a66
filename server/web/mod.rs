//! The owner app: pages at `/app` on the local route, where the owner sees and manages who may see
//! what from a browser on the journal's own computer.
//!
//! Handlers are thin: they read the request, call the same functions the CLI calls (`auth`,
//! `oauth::store`) and fill a template. Every page needs the owner's session (`session::Owner`),
//! every form goes through `form::OwnerForm` (the session, the app's own Origin, the anti-forgery
//! token), and every page is sent with the consent page's headers. The app is mounted only on the
//! local route: other routes never answer under `/app`. A session's pages are under `/app/<place>`
//! (see `session`); any other path under `/app` leads to the sign-in page.

pub mod activity;
pub mod changes;
pub mod chart;
pub mod clients;
pub mod connect;
pub mod connection;
pub mod connections;
pub mod form;
pub mod graph;
pub mod lan;
pub mod neighbourhood;
pub mod notice;
pub mod overview;
pub mod proposals;
pub mod refusals;
pub mod session;
pub mod signin;
pub mod summary;

use axum::Router;
use axum::routing::{get, post};

use crate::app::AppState;

/// The routes of the owner app, for the local router to merge.
pub fn router() -> Router<AppState> {
    // Nested, so that any other path under /app (an old bookmark, an ended session's page) gets
    // the app's own answer, the sign-in page, rather than the JSON 404 of the API.
    let pages = Router::new()
        .route("/", get(session::elsewhere))
        .route("/signin", get(signin::show).post(signin::redeem))
        // The LAN route's CA certificate is public (devices install it): no session needed.
        .route("/ca.pem", get(lan::ca_certificate))
        // `/app/signout` without a session reaches this route (as a place named "signout"): any
        // method other than GET gets the sign-in page too, not a 405.
        .route("/{place}", get(overview::show).fallback(session::elsewhere))
        .route("/{place}/", get(overview::show).fallback(session::elsewhere))
        .route("/{place}/connect", get(connect::show))
        .route("/{place}/connect/code", post(connect::make_code))
        .route("/{place}/connect/close", post(connect::close_code))
        .route("/{place}/connections", get(connections::list))
        .route("/{place}/connections/mint", post(connections::mint))
        .route("/{place}/connections/clear", post(connections::clear))
        .route("/{place}/connections/{id}", get(connection::show))
        .route("/{place}/connections/{id}/grant", post(connection::set_grant))
        .route("/{place}/connections/{id}/revoke", post(connection::revoke))
        .route("/{place}/activity", get(activity::show))
        .route("/{place}/proposals", get(proposals::show))
        .route("/{place}/proposals/{id}/accept", post(proposals::accept))
        .route("/{place}/proposals/{id}/reject", post(proposals::reject))
        .route(
            "/{place}/proposals/by/{connection}/{decision}",
            post(proposals::decide_all),
        )
        .route("/{place}/changes", get(changes::list))
        .route("/{place}/changes/note", get(changes::note_page))
        .route("/{place}/changes/{version}/revert", post(changes::revert))
        .route("/{place}/trash/{change}/restore", post(changes::restore))
        .route("/{place}/graph-changes/{change}/revert", post(changes::revert_graph))
        .route("/{place}/graph", get(graph::show))
        .route("/{place}/graph/{id}/disconnect", post(graph::disconnect))
        .route("/{place}/graph/{id}/note", post(graph::note))
        .route("/{place}/signout", post(signin::sign_out))
        .fallback(session::elsewhere);
    Router::new()
        .route("/app/", get(session::elsewhere))
        .nest("/app", pages)
}
