//! The one way the owner app takes a form: `OwnerForm` extracts a POST made in a live owner session,
//! from the app's own page (its Origin), carrying the session's anti-forgery token. A handler that
//! takes an `OwnerForm` can only run for the owner; every refusal answers a page and changes nothing.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::response::Response;

use super::refusals::{foreign_form, same_origin};
use super::session::Owner;
use crate::app::AppState;
use crate::page;
use crate::page::form::{self, Params};

/// A checked form: who sent it and its fields.
pub struct OwnerForm {
    pub owner: Owner,
    pub params: Params,
}

impl OwnerForm {
    /// A single-valued field, empty when absent; a field sent twice is refused by the caller as a
    /// malformed form (None).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.params.one(name).ok().map(Option::unwrap_or_default)
    }
}

impl FromRequest<AppState> for OwnerForm {
    type Rejection = Response;

    async fn from_request(request: Request, state: &AppState) -> Result<OwnerForm, Response> {
        let (mut parts, body) = request.into_parts();
        let owner = Owner::from_request_parts(&mut parts, state).await?;
        if !same_origin(&parts.headers, &owner.route) {
            return Err(foreign_form());
        }
        let Ok(bytes) = form::body(&parts.headers, body, "application/x-www-form-urlencoded").await else {
            return Err(malformed());
        };
        let params = Params::parse(&bytes);
        let Ok(sent) = params.one("csrf") else {
            return Err(foreign_form());
        };
        if !owner.form_is_ours(sent) {
            return Err(foreign_form());
        }
        Ok(OwnerForm { owner, params })
    }
}

/// The answer to a form whose body could not be read or whose fields make no sense; nothing changed.
pub fn malformed() -> Response {
    page::message(
        StatusCode::BAD_REQUEST,
        "This form could not be read",
        "Its fields were missing, repeated or too large. Nothing was changed.",
        Some("Go back, reload the page and try again."),
    )
}
