//! The owner's browser session: the cookie that carries it, and the extractor every page of the
//! app starts with. Without a live session a page answers a redirect to the sign-in page, which
//! explains how to get a link; nothing of the app is shown or changed.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

use crate::app::AppState;
use crate::auth::owner;
use crate::clock::unix_now;
use crate::routes::Route;

/// A request made in a live owner session.
pub struct Owner {
    /// The session's secret, from the cookie (never logged, never sent back in a page).
    secret: String,
    /// The token every form of this session carries.
    pub csrf: String,
    /// The route the app is served on.
    pub route: Arc<Route>,
}

impl Owner {
    /// Whether a submitted form's anti-forgery token is this session's.
    pub fn form_is_ours(&self, sent: Option<&str>) -> bool {
        sent.is_some_and(|sent| owner::form_token_matches(&self.secret, sent))
    }

    pub fn secret(&self) -> &str {
        &self.secret
    }
}

/// The cookie's name carries the port: cookies ignore ports, and two journals on one computer
/// (on two ports) must not sign each other's owner out.
pub fn cookie_name(port: u16) -> String {
    format!("journal_owner_{port}")
}

/// The `Set-Cookie` value that starts a session.
pub fn set_cookie(port: u16, secret: &str) -> HeaderValue {
    let value = format!(
        "{}={secret}; Path=/app; HttpOnly; SameSite=Strict; Max-Age={}",
        cookie_name(port),
        owner::SESSION_LIFETIME_SECONDS
    );
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The `Set-Cookie` value that ends one.
pub fn clear_cookie(port: u16) -> HeaderValue {
    HeaderValue::from_str(&format!(
        "{}=; Path=/app; HttpOnly; SameSite=Strict; Max-Age=0",
        cookie_name(port)
    ))
    .unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The session secret a request's cookies carry, if any.
pub fn cookie_secret(headers: &HeaderMap, port: u16) -> Option<String> {
    let name = cookie_name(port);
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_string())
}

/// Where a request without a session is sent.
pub const SIGN_IN_PAGE: &str = "/app/signin";

impl FromRequestParts<AppState> for Owner {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Owner, Response> {
        let Some(route) = parts.extensions.get::<Arc<Route>>().cloned() else {
            return Err(StatusCode::NOT_FOUND.into_response());
        };
        let Some(secret) = cookie_secret(&parts.headers, route.port) else {
            return Err(Redirect::to(SIGN_IN_PAGE).into_response());
        };
        match owner::session_valid(&state.journal.db, &secret, unix_now()).await {
            Ok(true) => Ok(Owner {
                csrf: owner::form_token(&secret),
                secret,
                route,
            }),
            Ok(false) => Err(Redirect::to(SIGN_IN_PAGE).into_response()),
            Err(error) => Err(super::signin::unavailable(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_its_own_cookie_among_others() {
        let mut headers = HeaderMap::new();
        headers.append(
            header::COOKIE,
            HeaderValue::from_static("a=1; journal_owner_7000=other"),
        );
        headers.append(header::COOKIE, HeaderValue::from_static("journal_owner_7659=mine; b=2"));
        assert_eq!(cookie_secret(&headers, 7659).as_deref(), Some("mine"));
        assert_eq!(cookie_secret(&headers, 7000).as_deref(), Some("other"));
        assert_eq!(cookie_secret(&headers, 1), None);
        let set = set_cookie(7659, "s3cret");
        let set = set.to_str().unwrap();
        assert!(set.starts_with("journal_owner_7659=s3cret;"));
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/app"] {
            assert!(set.contains(attribute), "{set}");
        }
    }
}
