//! The owner app: pages at `/app` on the local route, where the owner sees and manages who may see
//! what from a browser on the journal's own computer.
//!
//! Handlers are thin: they read the request, call the same functions the CLI calls (`auth`,
//! `oauth::store`) and fill a template. Every page needs the owner's session (`session::Owner`),
//! every form goes through `form::OwnerForm` (the session, the app's own Origin, the anti-forgery
//! token), and every page is sent with the consent page's headers. The app is mounted only on the
//! local route: other routes never answer under `/app`.

pub mod activity;
pub mod chart;
pub mod clients;
pub mod connect;
pub mod connection;
pub mod connections;
pub mod form;
pub mod lan;
pub mod notice;
pub mod overview;
pub mod session;
pub mod signin;
pub mod summary;

use axum::Router;
use axum::routing::{get, post};

use crate::app::AppState;

/// The routes of the owner app, for the local router to merge.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/app", get(overview::show))
        .route("/app/", get(overview::show))
        .route("/app/connect", get(connect::show))
        .route("/app/connect/code", post(connect::make_code))
        .route("/app/connect/close", post(connect::close_code))
        .route("/app/connections", get(connections::list))
        .route("/app/connections/mint", post(connections::mint))
        .route("/app/connections/{id}", get(connection::show))
        .route("/app/connections/{id}/grant", post(connection::set_grant))
        .route("/app/connections/{id}/revoke", post(connection::revoke))
        .route("/app/activity", get(activity::show))
        .route("/app/signin", get(signin::show).post(signin::redeem))
        .route("/app/signout", post(signin::sign_out))
        .route("/app/ca.pem", get(lan::ca_certificate))
}
