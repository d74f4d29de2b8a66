//! The HTML pages of sign-in: the consent page and the plain message pages (nothing to connect, a
//! broken sign-in link). Plain HTML that works without JavaScript, with the security headers every
//! page of the journal sends.

use askama::Template;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::auth::Category;

/// One category checkbox.
pub struct CategoryChoice {
    pub value: &'static str,
    pub label: &'static str,
    pub description: &'static str,
    pub checked: bool,
}

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
    pub error: Option<String>,
    pub categories: Vec<CategoryChoice>,
    pub facets: Vec<FacetChoice>,
}

#[derive(Template)]
#[template(path = "message.html")]
pub struct MessagePage {
    pub nonce: String,
    pub heading: String,
    pub text: String,
    pub hint: Option<String>,
}

/// The category checkboxes, with the plain sentence that says what each one lets an agent see.
pub fn category_choices(checked: &[Category]) -> Vec<CategoryChoice> {
    Category::ALL
        .into_iter()
        .map(|category| {
            let (label, description) = match category {
                Category::Transcripts => (
                    "Transcripts",
                    "The text of what was said in your recorded conversations.",
                ),
                Category::Entities => (
                    "People, places and projects",
                    "Who and what your journal knows, and what they are to you.",
                ),
                Category::Facets => ("Facets", "The areas of your life, with their descriptions."),
            };
            CategoryChoice {
                value: category.as_str(),
                label,
                description,
                checked: checked.contains(&category),
            }
        })
        .collect()
}

/// A fresh nonce for the page's inline style and script (the owner app's copy buttons and countdown).
pub fn nonce() -> String {
    super::secret("").unwrap_or_else(|_| NO_NONCE.into())
}

/// What `nonce` answers when the random source fails: a page rendered with it runs no script and
/// no inline style at all (it shows unstyled), since a guessable nonce would let injected markup in.
const NO_NONCE: &str = "unavailable";

/// The page's Content Security Policy for its nonce and the origin its forms may also be sent to.
fn policy(nonce: &str, form_target: Option<&str>) -> String {
    let form_action = match form_target {
        Some(origin) => format!("'self' {origin}"),
        None => "'self'".to_string(),
    };
    let inline = if nonce == NO_NONCE {
        "'none'".to_string()
    } else {
        format!("'nonce-{nonce}'")
    };
    format!(
        "default-src 'none'; style-src {inline}; script-src {inline}; img-src 'self' data:; form-action {form_action}; frame-ancestors 'none'; base-uri 'none'"
    )
}

/// Renders a page with the journal's page headers. `form_target` is the origin a form on the page may
/// be sent to besides the journal itself (the client's callback, which approval redirects to).
pub fn html(status: StatusCode, page: &impl Template, nonce: &str, form_target: Option<&str>) -> Response {
    let body = match page.render() {
        Ok(body) => body,
        Err(error) => {
            tracing::error!(%error, "a page could not be rendered");
            return (StatusCode::INTERNAL_SERVER_ERROR, "the page could not be shown").into_response();
        }
    };
    let csp = policy(nonce, form_target);
    let mut response = (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // `same-origin`, not `no-referrer`: under `no-referrer` Chromium sends `Origin: null` with the
    // consent form, which the loopback guard must refuse; `same-origin` still sends nothing to any
    // other site, the client's callback included.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if let Ok(value) = HeaderValue::from_str(&csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// A plain message page.
pub fn message(status: StatusCode, heading: &str, text: &str, hint: Option<&str>) -> Response {
    let nonce = nonce();
    let page = MessagePage {
        nonce: nonce.clone(),
        heading: heading.into(),
        text: text.into(),
        hint: hint.map(str::to_string),
    };
    html(status, &page, &nonce, None)
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

    #[test]
    fn the_policy_allows_only_the_page_nonce_and_no_script_without_one() {
        let csp = policy("abc", Some("http://127.0.0.1:9"));
        assert!(csp.contains("script-src 'nonce-abc'"), "{csp}");
        assert!(csp.contains("form-action 'self' http://127.0.0.1:9"));
        assert!(csp.contains("frame-ancestors 'none'"));
        let without = policy(NO_NONCE, None);
        assert!(without.contains("script-src 'none'"), "{without}");
        assert!(without.contains("style-src 'none'"), "{without}");
        assert!(without.contains("form-action 'self';"));
        assert_ne!(nonce(), nonce(), "a fresh nonce per page");
    }
}
