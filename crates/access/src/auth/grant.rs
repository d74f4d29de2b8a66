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
    Notes,
    /// The typed connections between items; not searchable itself, and each connection shows only
    /// when the grant reaches both of its ends through the other categories.
    Graph,
}

impl Category {
    pub const ALL: [Category; 5] = [
        Category::Transcripts,
        Category::Entities,
        Category::Facets,
        Category::Notes,
        Category::Graph,
    ];

    /// The categories `search` looks in (the graph is read through its own tools).
    pub const SEARCHABLE: [Category; 4] = [
        Category::Transcripts,
        Category::Entities,
        Category::Facets,
        Category::Notes,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Transcripts => "transcripts",
            Category::Entities => "entities",
            Category::Facets => "facets",
            Category::Notes => "notes",
            Category::Graph => "graph",
        }
    }

    pub fn parse(text: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// Whether and how a connection may change the owner's content (its own memory it may always
/// write): not at all, by proposals the owner reviews, or directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

    pub const ALL: [WriteMode; 3] = [WriteMode::None, WriteMode::Propose, WriteMode::Force];

    /// Reads a mode the owner typed or chose: exactly one of the three names, nothing else.
    pub fn parse(text: &str) -> Option<WriteMode> {
        WriteMode::ALL.into_iter().find(|m| m.as_str() == text)
    }

    /// What the mode allows, in words for the owner's pages.
    pub fn in_words(self) -> &'static str {
        match self {
            WriteMode::None => "can't change anything",
            WriteMode::Propose => "can suggest changes for you to review",
            WriteMode::Force => "can change notes and connections directly, without review",
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

    /// The grant in a short sentence for the owner's pages, without the generation and the write
    /// mode that `describe` adds for the CLI: `transcripts and entities in work, family`.
    pub fn in_words(&self, facets: &[Facet]) -> String {
        if self.categories.is_empty() {
            return "its own notes only".into();
        }
        let names: Vec<&str> = self.categories.iter().map(|c| c.as_str()).collect();
        let kinds = match names.as_slice() {
            [one] => (*one).to_string(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
            [] => String::new(),
        };
        match &self.facet_ids {
            None => format!("{kinds} in the whole journal"),
            Some(ids) if ids.is_empty() => format!("{kinds} in no facets"),
            Some(ids) => {
                let reach: Vec<String> = ids
                    .iter()
                    .map(|id| {
                        facets
                            .iter()
                            .find(|f| &f.id == id)
                            .map_or_else(|| "a deleted facet".to_string(), |f| f.name.clone())
                    })
                    .collect();
                format!("{kinds} in {}", reach.join(", "))
            }
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

    #[test]
    fn scopes_follow_facet_ids() {
        let facets = [Facet::sample("1", "work"), Facet::sample("2", "home")];
        let mut grant = Grant::empty();
        assert!(grant.reachable(&facets).is_empty(), "no category: no facets either");
        grant.categories.insert(Category::Entities);
        assert_eq!(grant.scope(&facets), Scope::WholeJournal);
        assert_eq!(grant.reachable(&facets).len(), 2);
        grant.facet_ids = Some(vec!["2".into(), "gone".into()]);
        assert_eq!(grant.scope(&facets), Scope::Facets(vec!["home".into()]));
        assert!(grant.describe(&facets).contains("home, gone (deleted)"));
        assert_eq!(grant.in_words(&facets), "entities in home, a deleted facet");
        grant.categories.insert(Category::Transcripts);
        grant.categories.insert(Category::Facets);
        grant.facet_ids = None;
        assert_eq!(
            grant.in_words(&facets),
            "transcripts, entities and facets in the whole journal"
        );
        assert_eq!(Grant::empty().in_words(&facets), "its own notes only");
    }

    #[test]
    fn typed_write_modes_are_exact() {
        for mode in WriteMode::ALL {
            assert_eq!(WriteMode::parse(mode.as_str()), Some(mode));
            assert_eq!(WriteMode::parse_stored(mode.as_str()), mode);
        }
        for typed in ["", "FORCE", "Force", " force", "forced", "read"] {
            assert_eq!(WriteMode::parse(typed), None, "{typed:?}");
        }
    }

    #[test]
    fn unknown_write_modes_fall_back_to_propose() {
        assert_eq!(WriteMode::parse_stored("force"), WriteMode::Force);
        assert_eq!(WriteMode::parse_stored("FORCE"), WriteMode::Propose);
        assert_eq!(WriteMode::parse_stored(""), WriteMode::Propose);
        assert_eq!(Category::parse("notes"), Some(Category::Notes));
        assert_eq!(Category::parse("graph"), Some(Category::Graph));
        assert_eq!(Category::parse("Graph"), None);
    }
}
