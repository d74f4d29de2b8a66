//! The LAN route's CA certificate, for the owner to download on this computer and install on the
//! devices that will connect over the home network or VPN. It is a public certificate (no secret),
//! but it is served only on the local route, where the owner is, never on the LAN route itself: a
//! device must not learn what to trust from the connection it is deciding whether to trust.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::app::AppState;

/// `GET /app/ca.pem`: the CA certificate in PEM, as a file to save (`journal-ca.crt`, the name that
/// phones and Windows offer to install).
pub async fn ca_certificate(State(state): State<AppState>) -> Response {
    match state.routes.lan() {
        Some(lan) => (
            [
                (header::CONTENT_TYPE, "application/x-x509-ca-cert"),
                (header::CONTENT_DISPOSITION, "attachment; filename=\"journal-ca.crt\""),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            lan.ca_pem,
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "The LAN route is off, so there is no certificate to install. Turn it on with `journal route enable lan` and restart the journal.\n",
        )
            .into_response(),
    }
}
