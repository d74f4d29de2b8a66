//! The items a connection joins, and who may see them: the one place that decides whether a viewer
//! reaches an item, so that the graph shows a connection only when its viewer reaches both ends.
//!
//! An item's key names it the way `graph.jsonl` keeps it, readable by hand: `note:<path in the
//! vault>`, `entity:<file name>` (`entities/<name>.md`), `facet:<name>` and `segment:<day>/<time>`
//! (`transcripts/<day>/<time>.md`). What a person or an agent types is wider (`resolve`): a key, a
//! note's path or id, an entity's or a facet's name. An item the viewer cannot reach answers exactly
//! as a missing one, with the same words, so nothing tells an agent that it exists.

use std::collections::HashMap;

use crate::journal::content::Scope;
use crate::journal::notes::Reader;
use crate::journal::{Journal, JournalError};

/// What kind of thing an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Note,
    Entity,
    Facet,
    Segment,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Note => "note",
            Kind::Entity => "entity",
            Kind::Facet => "facet",
            Kind::Segment => "segment",
        }
    }

    /// The kind of a search reference (`fetch`'s kinds).
    pub fn of_reference(kind: &str) -> Option<Kind> {
        match kind {
            "note" => Some(Kind::Note),
            "entity" => Some(Kind::Entity),
            "facet" => Some(Kind::Facet),
            "transcript" => Some(Kind::Segment),
            _ => None,
        }
    }

    /// The reference kind `fetch` takes for this kind.
    pub fn reference_kind(self) -> &'static str {
        match self {
            Kind::Segment => "transcript",
            other => other.as_str(),
        }
    }
}

/// An item that exists and that its viewer reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// `note:Projects/a.md`, `entity:ada-lovelace`, ...
    pub key: String,
    pub kind: Kind,
    pub title: String,
    /// Its path among the journal's files (in the vault for a note), which references carry.
    pub path: String,
}

/// Who looks at the graph: the owner sees every item; an agent only what its grant reaches.
#[derive(Debug, Clone)]
pub enum Viewer {
    Owner,
    Agent(AgentSight),
}

impl Viewer {
    /// Who the viewer is in the graph.
    pub fn author(&self) -> super::Author {
        match self {
            Viewer::Owner => super::Author::owner(),
            Viewer::Agent(sight) => sight.author.clone(),
        }
    }
}

/// An agent's reach, from its grant.
#[derive(Debug, Clone)]
pub struct AgentSight {
    pub notes: bool,
    pub entities: bool,
    pub transcripts: bool,
    /// Facet names reach (and, for a facet-limited grant, which facets' items).
    pub scope: Scope,
    pub reader: Reader,
    /// Who the agent is in the graph (`Author::connection`).
    pub author: super::Author,
}

/// The one answer for an item that is missing or out of reach.
pub fn missing(typed: &str) -> String {
    let shown: String = typed.chars().filter(|c| !c.is_control()).take(200).collect();
    format!(
        "there is no item \"{shown}\": name a note by its path or id, an entity or a facet by its name, or use a \
         reference from search (or write note:, entity:, facet: or segment: before it)"
    )
}

/// The key of the item at a catalog path of `kind`, or None when the path is not one of its files.
pub fn key_of_path(kind: Kind, path: &str) -> Option<String> {
    let name = match kind {
        Kind::Note => Some(path),
        Kind::Entity => path.strip_prefix("entities/").and_then(|p| p.strip_suffix(".md")),
        Kind::Facet => path.strip_prefix("facets/").and_then(|p| p.strip_suffix("/facet.md")),
        Kind::Segment => path.strip_prefix("transcripts/").and_then(|p| p.strip_suffix(".md")),
    }?;
    (!name.is_empty()).then(|| format!("{}:{name}", kind.as_str()))
}

/// The kind and catalog path of a key, or None when it is not a key.
pub fn path_of_key(key: &str) -> Option<(Kind, String)> {
    let (kind, name) = key.split_once(':')?;
    if name.is_empty() || name.trim() != name || name.split('/').any(|part| part.is_empty() || part.starts_with('.')) {
        return None;
    }
    Some(match kind {
        "note" => (Kind::Note, name.to_string()),
        "entity" if !name.contains('/') => (Kind::Entity, format!("entities/{name}.md")),
        "facet" if !name.contains('/') => (Kind::Facet, format!("facets/{name}/facet.md")),
        "segment" if name.matches('/').count() == 1 => (Kind::Segment, format!("transcripts/{name}.md")),
        _ => return None,
    })
}

/// Looks items up for one viewer, remembering each answer for the rest of the call (a listing asks
/// about the same few items many times).
pub struct Items<'a> {
    journal: &'a Journal,
    viewer: &'a Viewer,
    seen: HashMap<String, Option<Item>>,
}

impl<'a> Items<'a> {
    pub fn new(journal: &'a Journal, viewer: &'a Viewer) -> Items<'a> {
        Items {
            journal,
            viewer,
            seen: HashMap::new(),
        }
    }

    /// The item a key names, if it exists and the viewer reaches it.
    pub async fn get(&mut self, key: &str) -> Result<Option<Item>, JournalError> {
        if let Some(known) = self.seen.get(key) {
            return Ok(known.clone());
        }
        let found = match path_of_key(key) {
            Some((kind, path)) => self.find(kind, &path).await?,
            None => None,
        };
        self.seen.insert(key.to_string(), found.clone());
        Ok(found)
    }

    /// Whether the viewer reaches both ends of a connection.
    pub async fn reaches_both(&mut self, from: &str, to: &str) -> Result<bool, JournalError> {
        Ok(self.get(from).await?.is_some() && self.get(to).await?.is_some())
    }

    /// The item that what someone typed names: a key, a note's path or id, an entity's or a facet's
    /// name. A name that fits several items the viewer reaches is refused with the keys to choose
    /// from; one that fits none answers `missing`.
    pub async fn resolve(&mut self, typed: &str) -> Result<Result<Item, String>, JournalError> {
        let typed_trimmed = typed.trim();
        if typed_trimmed.is_empty() || typed_trimmed.len() > super::MAX_ITEM_BYTES {
            return Ok(Err(missing(typed)));
        }
        if let Some((prefix, name)) = typed_trimmed.split_once(':')
            && ["note", "entity", "facet", "segment"].contains(&prefix)
        {
            let found = match prefix {
                "note" => self.note(name),
                "entity" => match self.get(typed_trimmed).await? {
                    Some(item) => Some(item),
                    None => self.entity_named(name).await?,
                },
                "facet" => match self.get(typed_trimmed).await? {
                    Some(item) => Some(item),
                    None => self.facet_named(name),
                },
                _ => self.get(typed_trimmed).await?,
            };
            return Ok(found.ok_or_else(|| missing(typed)));
        }
        let mut fits: Vec<Item> = Vec::new();
        for item in [
            self.note(typed_trimmed),
            self.entity_named(typed_trimmed).await?,
            self.facet_named(typed_trimmed),
        ]
        .into_iter()
        .flatten()
        {
            fits.push(item);
        }
        match fits.len() {
            0 => Ok(Err(missing(typed))),
            1 => Ok(Ok(fits.remove(0))),
            _ => {
                let keys: Vec<&str> = fits.iter().map(|i| i.key.as_str()).collect();
                Ok(Err(format!(
                    "\"{typed_trimmed}\" names more than one item; write one of {}",
                    keys.join(", ")
                )))
            }
        }
    }

    /// A note by path (`.md` may be left off) or id, as the viewer sees it.
    fn note(&self, typed: &str) -> Option<Item> {
        let reader = match self.viewer {
            Viewer::Owner => None,
            Viewer::Agent(sight) if sight.notes => Some(&sight.reader),
            Viewer::Agent(_) => return None,
        };
        let set = self.journal.notes.set();
        let with_md = if typed.to_lowercase().ends_with(".md") {
            typed.to_string()
        } else {
            format!("{typed}.md")
        };
        let note = match reader {
            None => set
                .at(typed)
                .or_else(|| set.at(&with_md))
                .cloned()
                .or_else(|| set.all().iter().find(|n| n.id.as_deref() == Some(typed)).cloned()),
            Some(reader) => set
                .find_path(typed, reader)
                .or_else(|| set.find_path(&with_md, reader))
                .or_else(|| set.find_id(typed, reader))
                .map(|(note, _)| note.clone()),
        }?;
        Some(Item {
            key: format!("note:{}", note.path),
            kind: Kind::Note,
            title: note.title.clone(),
            path: note.path.clone(),
        })
    }

    /// An entity by its name (ignoring case) or one of its other names' exact file name.
    async fn entity_named(&mut self, name: &str) -> Result<Option<Item>, JournalError> {
        if !self.sees(Kind::Entity) {
            return Ok(None);
        }
        let paths: Vec<String> = sqlx::query_scalar(
            "SELECT path FROM items WHERE kind = 'entity' AND error IS NULL AND lower(title) = lower(?) ORDER BY path",
        )
        .bind(name)
        .fetch_all(&self.journal.db)
        .await?;
        for path in paths {
            if let Some(key) = key_of_path(Kind::Entity, &path)
                && let Some(item) = self.get(&key).await?
            {
                return Ok(Some(item));
            }
        }
        Ok(None)
    }

    /// A facet by its name or id.
    fn facet_named(&self, name: &str) -> Option<Item> {
        let facet = self.journal.facet(name)?;
        self.facet_item(&facet.name)
    }

    fn facet_item(&self, name: &str) -> Option<Item> {
        let facets = self.journal.facets();
        let facet = facets.iter().find(|f| f.name == name)?;
        let reached = match self.viewer {
            Viewer::Owner => true,
            Viewer::Agent(sight) => sight.scope.allows_facet(&facet.name),
        };
        reached.then(|| Item {
            key: format!("facet:{}", facet.name),
            kind: Kind::Facet,
            title: facet.display_title().to_string(),
            path: format!("facets/{}/facet.md", facet.name),
        })
    }

    fn sees(&self, kind: Kind) -> bool {
        match (self.viewer, kind) {
            (Viewer::Owner, _) => true,
            (Viewer::Agent(sight), Kind::Note) => sight.notes,
            (Viewer::Agent(sight), Kind::Entity) => sight.entities,
            (Viewer::Agent(sight), Kind::Segment) => sight.transcripts,
            (Viewer::Agent(_), Kind::Facet) => true,
        }
    }

    /// The item at a catalog path, if it exists and the viewer reaches it.
    async fn find(&self, kind: Kind, path: &str) -> Result<Option<Item>, JournalError> {
        if !self.sees(kind) {
            return Ok(None);
        }
        match kind {
            Kind::Note => Ok(self.note_at(path)),
            Kind::Facet => Ok(path
                .strip_prefix("facets/")
                .and_then(|p| p.strip_suffix("/facet.md"))
                .and_then(|name| self.facet_item(name))),
            Kind::Entity | Kind::Segment => {
                let catalog = if kind == Kind::Entity { "entity" } else { "transcript" };
                let title: Option<String> =
                    sqlx::query_scalar("SELECT title FROM items WHERE path = ? AND kind = ? AND error IS NULL")
                        .bind(path)
                        .bind(catalog)
                        .fetch_optional(&self.journal.db)
                        .await?;
                let Some(title) = title else {
                    return Ok(None);
                };
                if let Viewer::Agent(sight) = self.viewer
                    && sight.scope != Scope::WholeJournal
                {
                    let facets = crate::journal::content::item_facets(self.journal, path, catalog)
                        .await?
                        .unwrap_or_default();
                    if !sight.scope.allows(&facets) {
                        return Ok(None);
                    }
                }
                Ok(key_of_path(kind, path).map(|key| Item {
                    key,
                    kind,
                    title,
                    path: path.to_string(),
                }))
            }
        }
    }

    /// A note by its exact path, as the viewer sees it.
    fn note_at(&self, path: &str) -> Option<Item> {
        let set = self.journal.notes.set();
        let note = match self.viewer {
            Viewer::Owner => set.at(path)?.clone(),
            Viewer::Agent(sight) => set.find_path(path, &sight.reader)?.0.clone(),
        };
        Some(Item {
            key: format!("note:{}", note.path),
            kind: Kind::Note,
            title: note.title.clone(),
            path: note.path.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_paths_map_both_ways() {
        let cases = [
            (Kind::Note, "Projects/Atlas.md", "note:Projects/Atlas.md"),
            (Kind::Entity, "entities/ada-lovelace.md", "entity:ada-lovelace"),
            (Kind::Facet, "facets/work/facet.md", "facet:work"),
            (
                Kind::Segment,
                "transcripts/2026-12-02/140000.md",
                "segment:2026-12-02/140000",
            ),
        ];
        for (kind, path, key) in cases {
            assert_eq!(key_of_path(kind, path).as_deref(), Some(key));
            assert_eq!(path_of_key(key), Some((kind, path.to_string())));
        }
        assert_eq!(key_of_path(Kind::Entity, "notes/x.md"), None);
        for bad in [
            "entity:a/b",
            "facet:",
            "segment:2026-12-02",
            "note:../x.md",
            "note:.obsidian/x.md",
            "page:x",
            "note",
        ] {
            assert_eq!(path_of_key(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_missing_answer_does_not_echo_control_characters() {
        let text = missing("a\u{7}b");
        assert!(text.starts_with("there is no item \"ab\""), "{text}");
    }
}
