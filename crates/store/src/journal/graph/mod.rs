//! The graph: typed connections between items of the journal (notes, entities, facets, transcript
//! segments), each with at most one note per author.
//!
//! The connections live in `graph.jsonl` in the journal folder, one connection a line, readable and
//! editable by hand (`store`). Authorship follows "add, not override" (`rules`): an agent sets a
//! connection's type only when it has none or the agent set it, changes only its own note, and
//! removes only connections it created; the owner may do anything. Items are known by their keys
//! (`note:Projects/a.md`, `entity:ada-lovelace`); which of them a viewer reaches, and so which
//! connections it sees, is decided in one place (`items`).

pub mod gate;
pub mod history;
pub mod items;
pub mod rules;
pub mod store;

use serde::{Deserialize, Serialize};

pub use crate::journal::author::Author;

/// The longest connection type, in characters.
pub const MAX_TYPE_CHARS: usize = 64;
/// The longest note of one author on a connection, in characters.
pub const MAX_NOTE_CHARS: usize = 4000;
/// The longest item key, in bytes (a note path is at most 1024).
pub const MAX_ITEM_BYTES: usize = 1100;

/// One author's note on a connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthorNote {
    pub author: Author,
    pub text: String,
    /// When it was last written, `YYYY-MM-DDTHH:MM:SSZ`.
    pub at: String,
}

/// One connection between two items, a line of `graph.jsonl`: an edge of the graph (called `Edge`
/// here so that it is not taken for a credential, `auth::Connection`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    pub id: String,
    pub from: String,
    pub to: String,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Who made it; none recorded counts as the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<Author>,
    /// When it was made, `YYYY-MM-DDTHH:MM:SSZ`.
    pub created_at: String,
    /// Who set its type; none recorded counts as the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_by: Option<Author>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<AuthorNote>,
}

impl Edge {
    /// Who created it: the recorded creator, else the owner.
    pub fn creator(&self) -> Author {
        self.created_by.clone().unwrap_or_else(Author::owner)
    }

    /// Whether it touches `item` at either end.
    pub fn touches(&self, item: &str) -> bool {
        self.from == item || self.to == item
    }

    /// The latest time anything on it was written.
    pub fn last_written(&self) -> &str {
        self.notes
            .iter()
            .map(|n| n.at.as_str())
            .fold(self.created_at.as_str(), |a, b| a.max(b))
    }

    /// Everything a line must hold beyond its shape; the message says what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if !is_id(&self.id) {
            return Err(format!(
                "\"{}\" is not a connection id (c- and 10 letters or digits)",
                self.id
            ));
        }
        check_item(&self.from).map_err(|e| format!("from: {e}"))?;
        check_item(&self.to).map_err(|e| format!("to: {e}"))?;
        if self.from == self.to {
            return Err("from and to are the same item".into());
        }
        if let Some(kind) = &self.kind {
            check_type(kind)?;
        }
        check_time(&self.created_at).map_err(|e| format!("created_at: {e}"))?;
        let mut authors = std::collections::BTreeSet::new();
        for note in &self.notes {
            if !authors.insert(&note.author) {
                return Err(format!(
                    "{} has two notes; an author has one note on a connection",
                    note.author
                ));
            }
            check_note(&note.text)?;
            check_time(&note.at).map_err(|e| format!("a note's at: {e}"))?;
        }
        Ok(())
    }
}

/// A connection id: `c-` and ten lowercase letters or digits.
pub fn is_id(text: &str) -> bool {
    text.strip_prefix("c-")
        .is_some_and(|rest| rest.len() == 10 && rest.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
}

/// A new connection id.
pub fn new_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; 10];
    // Without a random source ids could repeat; `store` refuses a repeated id, so nothing is lost.
    let _ = getrandom::fill(&mut bytes);
    let rest: String = bytes
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect();
    format!("c-{rest}")
}

/// An item key: `note:<path>`, `entity:<file name>`, `facet:<name>` or `segment:<day>/<time>`.
pub fn check_item(item: &str) -> Result<(), String> {
    if item.len() > MAX_ITEM_BYTES || item.chars().any(char::is_control) {
        return Err("an item is at most 1100 bytes, without control characters".into());
    }
    if items::path_of_key(item).is_none() || item.trim() != item {
        let shown: String = item.chars().take(120).collect();
        return Err(format!(
            "\"{shown}\" is not an item (note:<path>, entity:<file name>, facet:<name> or segment:<day>/<time>)"
        ));
    }
    Ok(())
}

/// A connection type: 1-64 lowercase letters, digits, `-` or `_` (`supports`, `part-of`).
pub fn check_type(kind: &str) -> Result<(), String> {
    let ok = !kind.is_empty()
        && kind.chars().count() <= MAX_TYPE_CHARS
        && kind
            .chars()
            .all(|c| c.is_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        let shown: String = kind.chars().filter(|c| !c.is_control()).take(80).collect();
        Err(format!(
            "\"{shown}\" is not a connection type: 1-{MAX_TYPE_CHARS} lowercase letters, digits, - or _, e.g. supports"
        ))
    }
}

/// An author's note: 1-4000 characters.
pub fn check_note(text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err("a note on a connection is not empty".into());
    }
    if text.chars().count() > MAX_NOTE_CHARS {
        return Err(format!("a note on a connection is at most {MAX_NOTE_CHARS} characters"));
    }
    Ok(())
}

/// A time as the file keeps it: `YYYY-MM-DDTHH:MM:SSZ` (which sorts as it reads).
pub fn check_time(text: &str) -> Result<(), String> {
    let bytes = text.as_bytes();
    let shape = bytes.len() == 20
        && bytes.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            10 => *b == b'T',
            13 | 16 => *b == b':',
            19 => *b == b'Z',
            _ => b.is_ascii_digit(),
        });
    if shape && crate::journal::day::Day::parse(&text[..10]).is_ok() {
        Ok(())
    } else {
        Err(format!("\"{text}\" is not a time such as 2026-12-04T18:00:00Z"))
    }
}

/// Now, as the file keeps times.
pub fn now() -> String {
    crate::journal::day::format_timestamp(crate::clock::unix_now())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connection() -> Edge {
        Edge {
            id: "c-abcdefgh12".into(),
            from: "note:Projects/a.md".into(),
            to: "entity:e-1".into(),
            kind: Some("supports".into()),
            created_by: Some(Author::agent("Claude Code")),
            created_at: "2026-12-04T18:00:00Z".into(),
            type_by: None,
            notes: vec![AuthorNote {
                author: Author::owner(),
                text: "why".into(),
                at: "2026-12-04T18:01:00Z".into(),
            }],
        }
    }

    #[test]
    fn a_connection_is_checked_whole() {
        let good = connection();
        assert_eq!(good.check(), Ok(()));
        assert_eq!(good.creator().as_str(), "agent:claude-code");
        assert_eq!(good.last_written(), "2026-12-04T18:01:00Z");
        type Spoil = Box<dyn Fn(&mut Edge)>;
        let cases: Vec<(Spoil, &str)> = vec![
            (Box::new(|c| c.id = "x".into()), "not a connection id"),
            (Box::new(|c| c.from = "page:a".into()), "from:"),
            (Box::new(|c| c.to = c.from.clone()), "the same item"),
            (Box::new(|c| c.kind = Some("Supports!".into())), "not a connection type"),
            (Box::new(|c| c.created_at = "yesterday".into()), "created_at"),
            (Box::new(|c| c.notes.push(c.notes[0].clone())), "two notes"),
            (Box::new(|c| c.notes[0].text = "x".repeat(4001)), "at most 4000"),
            (Box::new(|c| c.notes[0].at = "2026-13-01T00:00:00Z".into()), "note's at"),
        ];
        for (spoil, expected) in cases {
            let mut bad = connection();
            spoil(&mut bad);
            let error = bad.check().unwrap_err();
            assert!(error.contains(expected), "{error} should say {expected}");
        }
    }

    #[test]
    fn authors_items_types_and_ids_have_one_shape() {
        assert!(Author::try_from("agent:claude-code".to_string()).is_ok());
        assert!(Author::try_from("agent:Claude".to_string()).is_err());
        assert!(Author::try_from("root".to_string()).is_err());
        assert!(check_item("note:Projects/a b.md").is_ok());
        assert!(check_item("segment:t-1/4").is_ok());
        assert!(check_item("note: a.md").is_err());
        assert!(check_item("note:").is_err());
        assert!(check_type("part-of").is_ok() && check_type("").is_err() && check_type(&"a".repeat(65)).is_err());
        let id = new_id();
        assert!(is_id(&id), "{id}");
        assert_ne!(new_id(), id);
        assert!(check_time(&now()).is_ok());
    }
}
