//! Entities: the people, places, projects and organisations the journal knows about.
//!
//! Each is `entities/<slug>.md` with YAML frontmatter (id, name, type, also-known-as, a description per
//! facet, last seen) and a free markdown body for the owner's own notes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::day::Day;
use super::frontmatter;

/// The kinds of entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntityType {
    Person,
    Place,
    Project,
    Organization,
}

impl EntityType {
    pub fn as_str(self) -> &'static str {
        match self {
            EntityType::Person => "person",
            EntityType::Place => "place",
            EntityType::Project => "project",
            EntityType::Organization => "organization",
        }
    }

    pub fn parse(text: &str) -> Option<EntityType> {
        match text {
            "person" => Some(EntityType::Person),
            "place" => Some(EntityType::Place),
            "project" => Some(EntityType::Project),
            "organization" | "organisation" => Some(EntityType::Organization),
            _ => None,
        }
    }
}

/// One entity as stored in its file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entity {
    pub id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: EntityType,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aka: Vec<String>,
    /// What the entity is within each facet, keyed by facet name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub facets: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<String>,
}

impl Entity {
    pub fn validate(&self) -> Result<(), String> {
        if uuid::Uuid::parse_str(&self.id).is_err() {
            return Err(format!("id \"{}\" is not a UUID", self.id));
        }
        validate_name(&self.name)?;
        for aka in &self.aka {
            validate_name(aka).map_err(|e| format!("aka: {e}"))?;
        }
        for (facet, description) in &self.facets {
            super::facet::validate_name(facet).map_err(|e| e.to_string())?;
            if description.chars().count() > 4000 {
                return Err(format!(
                    "the description for facet {facet} is too long: at most 4000 characters"
                ));
            }
        }
        if let Some(day) = &self.last_seen {
            Day::parse(day).map_err(|e| format!("last_seen: {e}"))?;
        }
        Ok(())
    }

    pub fn render(&self, body: &str) -> String {
        frontmatter::render(self, body)
    }

    /// Reads an entity file, returning the entity and its free-text body.
    pub fn parse(text: &str) -> Result<(Entity, String), String> {
        let (entity, body): (Entity, _) = frontmatter::parse(text).map_err(|e| e.to_string())?;
        entity.validate()?;
        Ok((entity, body.to_string()))
    }
}

/// Names: 1-200 characters, no control characters, not blank.
pub fn validate_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
        return Err(format!(
            "name \"{name}\" is not allowed: use 1-200 printable characters"
        ));
    }
    Ok(())
}

/// A file-name slug for a name: lowercase letters and digits (of any script) joined by '-'.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    let mut out: String = out.chars().take(60).collect();
    if out.is_empty() {
        out.push_str("entity");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_safe() {
        assert_eq!(slug("Ada Lovelace"), "ada-lovelace");
        assert_eq!(slug("  ../Café Zürich!! "), "café-zürich");
        assert_eq!(slug("日本"), "日本");
        assert_eq!(slug("../.."), "entity");
    }

    #[test]
    fn round_trips_and_validates() {
        let mut facets = BTreeMap::new();
        facets.insert("work".to_string(), "Leads the data team".to_string());
        let entity = Entity {
            id: uuid::Uuid::new_v4().to_string(),
            name: "Ada Lovelace".into(),
            kind: EntityType::Person,
            aka: vec!["Ada".into()],
            facets,
            last_seen: Some("2026-11-30".into()),
        };
        let (back, body) = Entity::parse(&entity.render("notes\n")).unwrap();
        assert_eq!(back, entity);
        assert_eq!(body, "notes\n");
        let mut bad = entity.clone();
        bad.last_seen = Some("yesterday".into());
        assert!(bad.validate().unwrap_err().contains("last_seen"));
        let mut bad = entity;
        bad.name = " ".into();
        assert!(bad.validate().is_err());
        assert!(Entity::parse("---\nid: x\nname: a\ntype: alien\n---\n").is_err());
    }
}
