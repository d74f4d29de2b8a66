//! What every HTML page of the journal shares, the sign-in pages and the owner app alike: the
//! security headers and the Content Security Policy with a fresh nonce (`html`), the plain message
//! page, the category checkboxes, and reading forms (`form`). Features render their pages through
//! here; nothing here knows what a page is about.

pub mod form;

use askama::Template;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::auth::Category;

/// One category checkbox.
pub struct CategoryChoice {
    pub value: &'static str,
    pub label: &'static str,
    pub description: &'static str,
    pub checked: bool,
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
                Category::Notes => (
                    "Notes",
                    "Your markdown notes, except those marked private or kept in _private/.",
                ),
                Category::Graph => (
                    "The graph",
                    "The links between notes, people and conversations, and what each agent wrote about them; only links between things it can already see.",
                ),
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
    crate::secret::generate("").unwrap_or_else(|_| NO_NONCE.into())
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

#[cfg(test)]
mod tests {
    use super::*;

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
