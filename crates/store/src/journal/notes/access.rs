//! Who may see a note: the one place that decides it.
//!
//! `sight` is the rule "private = missing": a note marked `access: private`, a note whose
//! `agent_overrides` say `no-access` for the reading connection, and a note outside the facets of a
//! facet-limited grant are `Hidden`, and every path that shows notes (listings, reads, queries,
//! search, fetch, the AGENTS.md lookup, skills) asks this function and answers a hidden note
//! exactly as it answers a missing one. Quarantined paths never reach it: they are not catalogued.

use super::note::{Access, Note, Override};
use crate::journal::author::slug;
use crate::journal::content::Scope;

/// The reader of notes: the reach of its grant and the label its notes' `agent_overrides` name it by.
#[derive(Debug, Clone)]
pub struct Reader {
    pub scope: Scope,
    /// The connection's label (`Claude Code`, or a key's label).
    pub label: String,
}

/// What a reader may do with a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sight {
    /// Answered as missing, everywhere.
    Hidden,
    /// Seen, never written.
    ReadOnly,
    /// Seen, and writable within the grant's write mode.
    Open,
}

impl Sight {
    pub fn visible(self) -> bool {
        self != Sight::Hidden
    }
}

/// How `reader` sees `note`.
pub fn sight(note: &Note, reader: &Reader) -> Sight {
    if note.access == Access::Private || !reaches(&reader.scope, &note.facets) {
        return Sight::Hidden;
    }
    let tightened = reader.override_in(note);
    match (note.access, tightened) {
        (_, Some(Override::NoAccess)) => Sight::Hidden,
        (Access::ReadOnly, _) | (_, Some(Override::ReadOnly)) => Sight::ReadOnly,
        _ => Sight::Open,
    }
}

/// Whether a grant's reach includes a note in these facets: a whole-journal grant reaches every
/// note, a facet-limited one only notes filed in one of its facets (a note in none is not in its reach).
fn reaches(scope: &Scope, facets: &[String]) -> bool {
    match scope {
        Scope::WholeJournal => true,
        Scope::Facets(allowed) => facets.iter().any(|f| allowed.contains(f)),
    }
}

impl Reader {
    /// The override a note's `agent_overrides` sets for this reader. A key names the reader by its
    /// label ignoring case, by the label's slug (`claude-code`) or by its identity (`agent:claude-code`).
    pub fn override_in(&self, note: &Note) -> Option<Override> {
        if note.overrides.is_empty() {
            return None;
        }
        let label = self.label.trim().to_lowercase();
        let slug = slug(&label);
        let identity = format!("agent:{slug}");
        let named = |key: &str| key == label || key == slug || key == identity;
        // When several keys name the reader, the strictest wins.
        let mut found = None;
        for (key, level) in &note.overrides {
            if named(key) {
                if *level == Override::NoAccess {
                    return Some(Override::NoAccess);
                }
                found = Some(*level);
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::notes::note;

    fn note(text: &str) -> Note {
        note::read("a.md", text.as_bytes(), 0).unwrap().note
    }

    fn reader(label: &str, scope: Scope) -> Reader {
        Reader {
            scope,
            label: label.into(),
        }
    }

    #[test]
    fn private_overrides_and_facets_hide_and_read_only_holds() {
        let whole = reader("Claude Code", Scope::WholeJournal);
        let work = reader("Claude Code", Scope::Facets(vec!["work".into()]));
        assert_eq!(sight(&note("plain"), &whole), Sight::Open);
        assert_eq!(
            sight(&note("plain"), &work),
            Sight::Hidden,
            "in no facet: whole-journal grants only"
        );
        assert_eq!(sight(&note("---\nfacets: [Work]\n---\n"), &work), Sight::Open);
        assert_eq!(sight(&note("---\nfacets: [home]\n---\n"), &work), Sight::Hidden);
        assert_eq!(sight(&note("---\naccess: private\n---\n"), &whole), Sight::Hidden);
        assert_eq!(sight(&note("---\naccess: read-only\n---\n"), &whole), Sight::ReadOnly);
        for key in ["claude code", "Claude-Code", "agent:claude-code", "CLAUDE CODE"] {
            let hidden = note(&format!("---\nagent_overrides:\n  {key}: no-access\n---\n"));
            assert_eq!(sight(&hidden, &whole), Sight::Hidden, "{key}");
            let other = reader("Codex", Scope::WholeJournal);
            assert_eq!(sight(&hidden, &other), Sight::Open, "{key} names only Claude Code");
        }
        let read_only = note("---\nagent_overrides: {codex: read-only}\n---\n");
        assert_eq!(
            sight(&read_only, &reader("Codex", Scope::WholeJournal)),
            Sight::ReadOnly
        );
        let both = note("---\nagent_overrides: {codex: read-only, agent:codex: no-access}\n---\n");
        assert_eq!(sight(&both, &reader("Codex", Scope::WholeJournal)), Sight::Hidden);
        let loosen = note("---\naccess: private\nagent_overrides: {codex: read-only}\n---\n");
        assert_eq!(
            sight(&loosen, &reader("Codex", Scope::WholeJournal)),
            Sight::Hidden,
            "overrides only tighten"
        );
    }
}
