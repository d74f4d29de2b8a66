//! Reading request bodies and query strings as parameters, for sign-in and the owner app alike:
//! size-limited, content-type checked, and strict about repeated parameters (RFC 6749 3.1: a
//! parameter must not appear twice).

use std::collections::HashMap;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, header};

/// Why a body or a parameter could not be read: a description a developer can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{description}")]
pub struct FormError {
    pub description: String,
}

impl FormError {
    fn new(description: impl Into<String>) -> FormError {
        FormError {
            description: description.into(),
        }
    }
}

/// The largest body read as a form (OAuth endpoints, the consent page, the owner app's forms).
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// Reads a body of at most 16 KiB whose media type is `expected`.
pub async fn body(headers: &HeaderMap, body: Body, expected: &str) -> Result<Bytes, FormError> {
    let media = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    if media.as_deref() != Some(expected) {
        return Err(FormError::new(format!("the body must be {expected}")));
    }
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        axum::body::to_bytes(body, MAX_BODY_BYTES),
    )
    .await;
    match read {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) => Err(FormError::new(format!(
            "the body is larger than {MAX_BODY_BYTES} bytes"
        ))),
        Err(_) => Err(FormError::new("the body did not arrive in time")),
    }
}

/// Form or query parameters, with repeated ones kept in order (for the consent form's checkboxes).
pub struct Params {
    pairs: Vec<(String, String)>,
}

impl Params {
    pub fn parse(bytes: &[u8]) -> Params {
        Params {
            pairs: form_urlencoded::parse(bytes)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .take(256)
                .collect(),
        }
    }

    /// A single-valued parameter: absent is None; given twice is an error.
    pub fn one(&self, name: &str) -> Result<Option<&str>, FormError> {
        let mut values = self.pairs.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let first = values.next();
        if values.next().is_some() {
            return Err(FormError::new(format!("{name} is given more than once")));
        }
        Ok(first)
    }

    /// A required single-valued parameter.
    pub fn required(&self, name: &str) -> Result<&str, FormError> {
        self.one(name)?
            .filter(|v| !v.is_empty())
            .ok_or_else(|| FormError::new(format!("{name} is required")))
    }

    /// Every value of a repeated parameter.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The first value of every parameter, for building error redirects.
    pub fn firsts(&self) -> HashMap<&str, &str> {
        let mut map = HashMap::new();
        for (k, v) in &self.pairs {
            map.entry(k.as_str()).or_insert(v.as_str());
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters() {
        let params = Params::parse(b"a=1&b=x%20y&c=1&c=2&e=");
        assert_eq!(params.one("a").unwrap(), Some("1"));
        assert_eq!(params.one("b").unwrap(), Some("x y"));
        assert!(params.one("c").is_err());
        assert_eq!(params.all("c"), ["1", "2"]);
        assert_eq!(params.one("d").unwrap(), None);
        assert!(params.required("e").is_err());
        assert!(params.required("d").is_err());
    }
}
