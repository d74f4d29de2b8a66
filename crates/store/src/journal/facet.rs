//! Facets: the areas of the owner's life or work that content is filed under.
//!
//! A facet is the file `facets/<name>/facet.md`; its YAML frontmatter holds the stable id (a UUID that
//! grants refer to, so renaming the folder keeps grants intact), the display fields and `muted`.
//! The body is free text for the owner. This module reads, validates and writes that file.

use serde::{Deserialize, Serialize};

use super::frontmatter;

/// One facet as stored in its `facet.md`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Facet {
    /// Stable id (UUID); grants and tool arguments use it.
    pub id: String,
    /// Short lowercase name, also the folder name (`work`, `side-project`).
    pub name: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// `#rrggbb`, for the owner's pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emoji: Option<String>,
    #[serde(default)]
    pub muted: bool,
}

impl Facet {
    /// A facet with only an id and a name, for the tests of code that reads facets (in this crate
    /// and the ones above it, whose tests cannot see this crate's `cfg(test)` items).
    pub fn sample(id: &str, name: &str) -> Facet {
        Facet {
            id: id.into(),
            name: name.into(),
            title: String::new(),
            description: String::new(),
            color: None,
            emoji: None,
            muted: false,
        }
    }
}

/// Why a facet's fields were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FacetError {
    #[error(
        "facet name \"{0}\" is not allowed: use 1-64 lowercase letters, digits and '-', starting with a letter or digit (like \"work\" or \"side-project\")"
    )]
    Name(String),
    #[error("color \"{0}\" is not allowed: use #rrggbb, like #3b82f6")]
    Color(String),
    #[error("{field} is too long: at most {max} characters")]
    TooLong { field: &'static str, max: usize },
    #[error("id \"{0}\" is not a UUID")]
    Id(String),
}

impl Facet {
    /// Checks every field; used for new facets and for files read from disk.
    pub fn validate(&self) -> Result<(), FacetError> {
        validate_name(&self.name)?;
        if uuid::Uuid::parse_str(&self.id).is_err() {
            return Err(FacetError::Id(self.id.clone()));
        }
        if let Some(color) = &self.color {
            let hex = color.strip_prefix('#').unwrap_or("");
            if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(FacetError::Color(color.clone()));
            }
        }
        for (field, value, max) in [
            ("title", self.title.as_str(), 200),
            ("description", self.description.as_str(), 4000),
            ("emoji", self.emoji.as_deref().unwrap_or(""), 16),
        ] {
            if value.chars().count() > max {
                return Err(FacetError::TooLong { field, max });
            }
        }
        Ok(())
    }

    /// The title to show, falling back to the name.
    pub fn display_title(&self) -> &str {
        if self.title.is_empty() { &self.name } else { &self.title }
    }

    pub fn render(&self, body: &str) -> String {
        frontmatter::render(self, body)
    }

    pub fn parse(text: &str) -> Result<Facet, String> {
        let (facet, _body): (Facet, _) = frontmatter::parse(text).map_err(|e| e.to_string())?;
        facet.validate().map_err(|e| e.to_string())?;
        Ok(facet)
    }
}

/// A facet's name is its folder's name: a mismatch (a renamed folder) is refused, not guessed at.
pub fn matches_folder(facet: Facet, folder: &str) -> Result<Facet, String> {
    if facet.name == folder {
        Ok(facet)
    } else {
        Err(format!(
            "the facet's name \"{}\" differs from its folder \"{folder}\"; make them the same",
            facet.name
        ))
    }
}

/// Facet names: lowercase ASCII letters, digits and '-', 1-64 long, starting alphanumeric.
pub fn validate_name(name: &str) -> Result<(), FacetError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && name.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(FacetError::Name(name.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Facet {
        Facet {
            id: "3f1c2a9e-7b4d-4e8a-9c21-5d6e0f4b7a13".into(),
            name: "work".into(),
            title: "Work".into(),
            description: "The day job".into(),
            color: Some("#3b82f6".into()),
            emoji: Some("💼".into()),
            muted: false,
        }
    }

    #[test]
    fn round_trips_through_its_file() {
        let facet = sample();
        assert_eq!(Facet::parse(&facet.render("")).unwrap(), facet);
    }

    #[test]
    fn refuses_bad_fields() {
        for name in ["", "Work", "-work", "wo rk", "work/..", &"a".repeat(65)] {
            assert!(validate_name(name).is_err(), "{name:?}");
        }
        assert!(validate_name("side-project2").is_ok());
        let mut facet = sample();
        facet.color = Some("blue".into());
        assert_eq!(facet.validate(), Err(FacetError::Color("blue".into())));
        let mut facet = sample();
        facet.id = "nope".into();
        assert_eq!(facet.validate(), Err(FacetError::Id("nope".into())));
        assert!(Facet::parse("---\nid: x\nname: work\nsurprise: 1\n---\n").is_err());
    }
}
