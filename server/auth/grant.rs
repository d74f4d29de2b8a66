//! Grants: which categories of content a connection may read, within which facets.
//!
//! A grant is pure data with plain rules: which tools it offers and which facets it reaches. The
//! database rows and the MCP tool list both derive from these functions, so they cannot disagree.

use std::collections::BTreeSet;

use crate::journal::content::Scope;
use crate::journal::facet::Facet;

/// A category of content a grant can include.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    Transcripts,
    Entities,
    Facets,
}

impl Category {
    pub const ALL: [Category; 3] = [Category::Transcripts, Category::Entities, Category::Facets];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Transcripts => "transcripts",
            Category::Entities => "entities",
            Category::Facets => "facets",
        }
    }

    pub fn parse(text: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// Whether and how a connection may write. Writes beyond its own memory arrive with later tools;
/// the mode is stored now so grants keep one shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    None,
    Propose,
    Force,
}

impl WriteMode {
    pub fn as_str(self) -> &'static str {
        match self {
            WriteMode::None => "none",
            WriteMode::Propose => "propose",
            WriteMode::Force => "force",
        }
    }

    /// Reads a stored mode. Anything unknown becomes `propose`: nothing may silently grant `force`.
    pub fn parse_stored(text: &str) -> WriteMode {
        match text {
            "none" => WriteMode::None,
            "force" => WriteMode::Force,
            _ => WriteMode::Propose,
        }
    }
}

/// What one connection may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub categories: BTreeSet<Category>,
    /// None: the whole journal. Some: only these facet ids.
    pub facet_ids: Option<Vec<String>>,
    pub write_mode: WriteMode,
    /// Bumped by every change, so references and sessions can tell they are stale.
    pub generation: i64,
}

impl Grant {
    /// A new connection's grant: its own memory and nothing else.
    pub fn empty() -> Grant {
        Grant {
            categories: BTreeSet::new(),
            facet_ids: None,
            write_mode: WriteMode::None,
            generation: 1,
        }
    }

    pub fn has(&self, category: Category) -> bool {
        self.categories.contains(&category)
    }

    /// The facets this grant reaches, among the journal's current facets. A grant without any
    /// category reaches none: a new connection learns nothing about the journal, not even facet names.
    pub fn reachable<'a>(&self, facets: &'a [Facet]) -> Vec<&'a Facet> {
        if self.categories.is_empty() {
            return Vec::new();
        }
        match &self.facet_ids {
            None => facets.iter().collect(),
            Some(ids) => facets.iter().filter(|f| ids.contains(&f.id)).collect(),
        }
    }

    /// The grant's reach as facet names for the journal's reads.
    pub fn scope(&self, facets: &[Facet]) -> Scope {
        match &self.facet_ids {
            None => Scope::WholeJournal,
            Some(_) => Scope::Facets(self.reachable(facets).into_iter().map(|f| f.name.clone()).collect()),
        }
    }

    /// One line for people: `transcripts, entities in work, family`.
    pub fn describe(&self, facets: &[Facet]) -> String {
        if self.categories.is_empty() {
            return format!("its own memory only; generation {}", self.generation);
        }
        let categories = self
            .categories
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let reach = match &self.facet_ids {
            None => "the whole journal".to_string(),
            Some(ids) if ids.is_empty() => "no facets".to_string(),
            Some(ids) => ids
                .iter()
                .map(|id| {
                    facets
                        .iter()
                        .find(|f| &f.id == id)
                        .map_or_else(|| format!("{id} (deleted)"), |f| f.name.clone())
                })
                .collect::<Vec<_>>()
                .join(", "),
        };
        format!(
            "{categories}; reach: {reach}; writes: {}; generation {}",
            self.write_mode.as_str(),
            self.generation
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facet(id: &str, name: &str) -> Facet {
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

    #[test]
    fn scopes_follow_facet_ids() {
        let facets = [facet("1", "work"), facet("2", "home")];
        let mut grant = Grant::empty();
        assert!(grant.reachable(&facets).is_empty(), "no category: no facets either");
        grant.categories.insert(Category::Entities);
        assert_eq!(grant.scope(&facets), Scope::WholeJournal);
        assert_eq!(grant.reachable(&facets).len(), 2);
        grant.facet_ids = Some(vec!["2".into(), "gone".into()]);
        assert_eq!(grant.scope(&facets), Scope::Facets(vec!["home".into()]));
        assert!(grant.describe(&facets).contains("home, gone (deleted)"));
    }

    #[test]
    fn unknown_write_modes_fall_back_to_propose() {
        assert_eq!(WriteMode::parse_stored("force"), WriteMode::Force);
        assert_eq!(WriteMode::parse_stored("FORCE"), WriteMode::Propose);
        assert_eq!(WriteMode::parse_stored(""), WriteMode::Propose);
        assert_eq!(Category::parse("notes"), None);
    }
}
