//! The HTML pages of sign-in: the consent page and the plain message pages (nothing to connect, a
//! broken sign-in link). Plain HTML that works without JavaScript, with the security headers every
//! page of the journal sends.

use askama::Template;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::page::{CategoryChoice, message};

/// One facet checkbox (stage two only: facet names are shown after the pairing code matched).
pub struct FacetChoice {
    pub id: String,
    pub name: String,
    pub title: String,
    pub emoji: String,
}

#[derive(Template)]
#[template(path = "consent.html")]
pub struct ConsentPage {
    pub nonce: String,
    pub client_name: String,
    /// For a metadata document client, the host its `client_id` names.
    pub client_host: Option<String>,
    pub callback_host: String,
    pub pending: String,
    pub csrf: String,
    pub stage_two: bool,
    pub scope_facets: bool,
    /// The "can suggest changes" choice is ticked (stage one).
    pub propose: bool,
    pub error: Option<String>,
    pub categories: Vec<CategoryChoice>,
    pub facets: Vec<FacetChoice>,
}

/// A refusal at `/register` or `GET /authorize`, said two ways: a page for a person in a browser,
/// and one JSON line for a program. Codex prints a `/register` refusal verbatim, and an HTML page
/// there fills the terminal; a browser asks for `text/html` and gets the page.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub status: StatusCode,
    /// The OAuth error code of the JSON answer.
    pub error: &'static str,
    /// One line for a program's user: what is wrong and what to do, e.g. "sign-in is closed: run
    /// journal mcp pairing generate on the journal's computer, then try again".
    pub description: String,
    pub heading: &'static str,
    pub text: String,
    pub hint: Option<String>,
}

impl Refusal {
    /// The page when the request asks for HTML, JSON otherwise.
    pub fn answer(self, headers: &HeaderMap) -> Response {
        if wants_html(headers) {
            return message(self.status, self.heading, &self.text, self.hint.as_deref());
        }
        let body = serde_json::json!({ "error": self.error, "error_description": self.description }).to_string();
        let mut response = (self.status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
        super::error::no_store(&mut response);
        response
    }
}

/// Whether the request's `Accept` names `text/html` (browsers' navigations do; API clients don't).
pub fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|media| {
            media
                .split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("text/html"))
        })
}

/// The refusal while no pairing code is open: it says nothing about the journal.
pub fn nothing_waiting() -> Refusal {
    Refusal {
        status: StatusCode::FORBIDDEN,
        error: "access_denied",
        description: "sign-in is closed: run journal mcp pairing generate on the journal's computer, then try again"
            .into(),
        heading: "Nothing is waiting to connect",
        text: "Sign-in is closed until the owner opens it.".into(),
        hint: Some(
            "If this is your journal, make a pairing code on its computer first (journal mcp pairing generate), then try again.".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn refusals_are_pages_for_browsers_and_json_for_programs() {
        let mut browser = HeaderMap::new();
        browser.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
        );
        let page = nothing_waiting().answer(&browser);
        assert_eq!(page.status(), StatusCode::FORBIDDEN);
        assert!(
            page.headers()[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("text/html")
        );
        for accept in [None, Some("application/json"), Some("*/*")] {
            let mut headers = HeaderMap::new();
            if let Some(accept) = accept {
                headers.insert(header::ACCEPT, HeaderValue::from_static(accept));
            }
            let answer = nothing_waiting().answer(&headers);
            assert_eq!(answer.status(), StatusCode::FORBIDDEN);
            assert_eq!(answer.headers()[header::CONTENT_TYPE], "application/json", "{accept:?}");
            assert_eq!(answer.headers()[header::CACHE_CONTROL], "no-store");
        }
    }
}
