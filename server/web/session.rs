//! The owner's browser session: the cookie that carries it, and the extractor every page of the
//! app starts with. Without a live session a page answers a redirect to the sign-in page, which
//! explains how to get a link; nothing of the app is shown or changed.
//!
//! A session's pages live under `/app/<place>` (`owner::place`), and its cookie is sent only there:
//! cookies ignore ports, so a cookie for all of `/app` would reach any other local server the
//! owner's browser visits. A request needs both the cookie and its session's place in the path.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

use crate::app::AppState;
use crate::auth::owner;
use crate::clock::unix_now;
use crate::context::Route;

/// A request made in a live owner session.
pub struct Owner {
    /// The session's secret, from the cookie (never logged, never sent back in a page).
    secret: String,
    /// The token every form of this session carries.
    pub csrf: String,
    /// The route the app is served on.
    pub route: Arc<Route>,
    /// Where this session's pages are: `/app/<place>`.
    pub base: String,
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

/// Where the pages of the session `secret` are.
pub fn base(secret: &str) -> String {
    format!("/app/{}", owner::place(secret))
}

/// The `Set-Cookie` value that starts a session: sent back only under the session's own pages.
pub fn set_cookie(port: u16, secret: &str) -> HeaderValue {
    let value = format!(
        "{}={secret}; Path={}; HttpOnly; SameSite=Strict; Max-Age={}",
        cookie_name(port),
        base(secret),
        owner::SESSION_LIFETIME_SECONDS
    );
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The `Set-Cookie` value that ends the session whose pages are at `base`.
pub fn clear_cookie(port: u16, base: &str) -> HeaderValue {
    HeaderValue::from_str(&format!(
        "{}=; Path={base}; HttpOnly; SameSite=Strict; Max-Age=0",
        cookie_name(port)
    ))
    .unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The place a request's path names: `/app/<place>/...`, or `/<place>/...` as the pages see it
/// (the app is nested under `/app`, which the router strips from the path).
fn place_in(path: &str) -> Option<&str> {
    let path = path
        .strip_prefix("/app")
        .filter(|rest| rest.starts_with('/'))
        .unwrap_or(path);
    path.strip_prefix('/')?.split('/').next().filter(|p| !p.is_empty())
}

/// Any other path under `/app` (an old bookmark, a page of an ended session): the sign-in page.
pub async fn elsewhere() -> Response {
    Redirect::to(SIGN_IN_PAGE).into_response()
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
        if !place_in(parts.uri.path()).is_some_and(|place| owner::place_matches(&secret, place)) {
            return Err(Redirect::to(SIGN_IN_PAGE).into_response());
        }
        match owner::session_valid(&state.journal.db, &secret, unix_now()).await {
            Ok(true) => Ok(Owner {
                csrf: owner::form_token(&secret),
                base: base(&secret),
                secret,
                route,
            }),
            Ok(false) => Err(Redirect::to(SIGN_IN_PAGE).into_response()),
            Err(error) => Err(super::refusals::unavailable(error)),
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
        let path = format!("Path=/app/{};", owner::place("s3cret"));
        for attribute in ["HttpOnly", "SameSite=Strict", path.as_str()] {
            assert!(set.contains(attribute), "{set}");
        }
        assert_eq!(owner::place("s3cret").len(), 22);
        assert_ne!(owner::place("s3cret"), owner::place("other"));
        assert_eq!(place_in("/app/abc/connections/x"), Some("abc"));
        assert_eq!(place_in("/app/abc"), Some("abc"));
        assert_eq!(
            place_in("/abc/connections/x"),
            Some("abc"),
            "as the nested pages see it"
        );
        assert_eq!(place_in("/app/"), None);
        assert_eq!(place_in("/"), None);
    }
}
