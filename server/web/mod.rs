//! The owner app: pages at `/app` on the local route, where the owner sees and manages who may see
//! what from a browser on the journal's own computer.
//!
//! Handlers are thin: they read the request, call the same functions the CLI calls (`auth`,
//! `oauth::store`) and fill a template. Every page needs the owner's session (`session::Owner`),
//! every form its anti-forgery token, and every page is sent with the consent page's headers.
//! The app is mounted only on the local route: other routes never answer under `/app`.

pub mod overview;
pub mod session;
pub mod signin;

use axum::Router;
use axum::routing::{get, post};

use crate::app::AppState;

/// The routes of the owner app, for the local router to merge.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/app", get(overview::show))
        .route("/app/", get(overview::show))
        .route("/app/signin", get(signin::show).post(signin::redeem))
        .route("/app/signout", post(signin::sign_out))
}
