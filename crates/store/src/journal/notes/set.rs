//! Every readable note's metadata in memory, newest first, with lookups by path and by id.
//!
//! Built from the catalog at open and rebuilt after each sync that changed a note, then swapped in
//! whole (readers hold an `Arc` of the set they started with). Listings, queries, reads and the
//! AGENTS.md and skill lookups answer from here without touching the database; a note's body is
//! read from its file only when it is asked for. Lookups that an agent drives take a `Reader` and
//! skip what `access::sight` hides, so a hidden note can never shadow or reveal anything.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::access::{Reader, Sight, sight};
use super::note::Note;
use super::query::{Frontmatter, NoteFields, ValueIndex};
use super::rowset::RowSet;
use super::{KeyHasher, rules};

/// The notes of the vault as of the last sync.
#[derive(Debug, Default)]
pub struct NoteSet {
    /// Newest first (then by path), so listings stop early.
    newest: Vec<Arc<Note>>,
    by_path: HashMap<String, usize>,
    /// Frontmatter ids, each to its notes in path order (ids are not guaranteed unique).
    by_id: HashMap<String, Vec<usize>>,
    /// Rows by `notes::index_key`, so that a search's filter finds a hit's row in a `RowSet`.
    by_index_key: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
    /// The rows of notes with `agent_overrides`, so that what hides a note from one connection is
    /// found without reading every note.
    overridden: Vec<usize>,
    /// The rows of skills (`Skills/<name>/SKILL.md`), by path.
    skill_rows: Vec<usize>,
    /// What a query's scan reads of every note, side by side by row, so that a scan of 100,000
    /// notes never reads the notes themselves (each its own allocation: a scan through them is
    /// bound by memory, about 250 ns a note).
    rows: Rows,
    /// What queries build once and reuse while the set lives (it never changes; a sync makes a new
    /// one): frontmatter columns by key (see `column`), value indexes by key, the whole set in a
    /// sort order by the order's name, and the rows each recent reader may see.
    columns: Kept<String, Column>,
    values: Kept<String, Arc<ValueIndex>>,
    orders: Kept<String, Arc<Vec<u32>>>,
    sights: Kept<Reader, Arc<RowSet>>,
}

/// The built-in fields of every note, by row.
#[derive(Debug, Default)]
struct Rows {
    paths: Vec<Box<str>>,
    titles: Vec<Box<str>>,
    modified: Vec<i64>,
    tags: Vec<Box<[String]>>,
}

/// One frontmatter key's values, by row.
pub type Column = Arc<Vec<Option<Value>>>;

/// Columns, value indexes and orders kept per set: each is a few megabytes over 100,000 notes.
const KEYS_KEPT: usize = 8;
/// Readers whose visible rows are kept per set (12 KB each over 100,000 notes).
const SIGHTS_KEPT: usize = 16;

/// A few values built on demand, most recently used first. Lookups never wait for a build; builds
/// take turns, so that 32 queries arriving together for a new sort order build it once.
#[derive(Debug)]
struct Kept<K, V> {
    entries: Mutex<Vec<(K, V)>>,
    building: Mutex<()>,
    most: usize,
}

impl<K, V: Clone> Kept<K, V> {
    fn new(most: usize) -> Self {
        Kept {
            entries: Mutex::new(Vec::new()),
            building: Mutex::new(()),
            most,
        }
    }

    /// The value kept for a key that `same` recognizes, or one made with `build` and kept.
    fn get(&self, same: impl Fn(&K) -> bool, key: impl FnOnce() -> K, build: impl FnOnce() -> V) -> V {
        if let Some(value) = self.find(&same) {
            return value;
        }
        // A poisoned lock only means another build panicked: building again is still right.
        let _turn = self.building.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(value) = self.find(&same) {
            return value;
        }
        let value = build();
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|(kept, _)| !same(kept));
            entries.insert(0, (key(), value.clone()));
            entries.truncate(self.most);
        }
        value
    }
}

impl<K, V: Clone> Kept<K, V> {
    fn find(&self, same: impl Fn(&K) -> bool) -> Option<V> {
        let mut entries = self.entries.lock().ok()?;
        let at = entries.iter().position(|(kept, _)| same(kept))?;
        let found = entries.remove(at);
        let value = found.1.clone();
        entries.insert(0, found);
        Some(value)
    }
}

impl<K, V: Clone> Default for Kept<K, V> {
    fn default() -> Self {
        Kept::new(KEYS_KEPT)
    }
}

impl NoteSet {
    pub fn new(mut notes: Vec<Arc<Note>>) -> NoteSet {
        notes.sort_by(|a, b| b.modified_ms.cmp(&a.modified_ms).then_with(|| a.path.cmp(&b.path)));
        let by_path = notes.iter().enumerate().map(|(i, n)| (n.path.clone(), i)).collect();
        let mut by_id: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, note) in notes.iter().enumerate() {
            if let Some(id) = &note.id {
                by_id.entry(id.clone()).or_default().push(i);
            }
        }
        for indices in by_id.values_mut() {
            indices.sort_by(|a, b| notes[*a].path.cmp(&notes[*b].path));
        }
        let overridden = (0..notes.len()).filter(|i| !notes[*i].overrides.is_empty()).collect();
        let mut skill_rows: Vec<usize> = (0..notes.len())
            .filter(|i| skill_name(&notes[*i].path).is_some())
            .collect();
        skill_rows.sort_by(|a, b| notes[*a].path.cmp(&notes[*b].path));
        let rows = Rows {
            paths: notes.iter().map(|n| n.path.as_str().into()).collect(),
            titles: notes.iter().map(|n| n.title.as_str().into()).collect(),
            modified: notes.iter().map(|n| n.modified_ms).collect(),
            tags: notes.iter().map(|n| n.tags.clone().into_boxed_slice()).collect(),
        };
        let by_index_key = notes
            .iter()
            .enumerate()
            .map(|(row, note)| (super::index_key(&note.path), row as u32))
            .collect();
        NoteSet {
            newest: notes,
            by_path,
            by_id,
            by_index_key,
            overridden,
            skill_rows,
            rows,
            columns: Kept::default(),
            values: Kept::default(),
            orders: Kept::default(),
            sights: Kept::new(SIGHTS_KEPT),
        }
    }

    /// One frontmatter key's values for every note, by row (the note's place in `all`), so a query
    /// reads its keys from a few contiguous vectors instead of 100,000 maps. Built on first use.
    pub fn column(&self, key: &str) -> Column {
        self.columns.get(
            |name| name == key,
            || key.to_string(),
            || {
                Arc::new(
                    self.newest
                        .iter()
                        .map(|note| note.frontmatter.get(key).cloned())
                        .collect(),
                )
            },
        )
    }

    /// One frontmatter key's values, inverted (see `ValueIndex`). Built on first use.
    pub fn value_index(&self, key: &str) -> Arc<ValueIndex> {
        self.values.get(
            |name| name == key,
            || key.to_string(),
            || Arc::new(ValueIndex::build(&self.column(key))),
        )
    }

    /// Whether what `passing` reads for `reader` and `keys` is built already (the rows the reader may
    /// see, each key's column and value index), so that it costs no scan of the notes.
    pub fn prepared(&self, reader: &Reader, keys: &[&str]) -> bool {
        self.sights
            .find(|kept| kept.label == reader.label && kept.scope == reader.scope)
            .is_some()
            && keys.iter().all(|key| {
                self.columns.find(|name| name == key).is_some() && self.values.find(|name| name == key).is_some()
            })
    }

    /// Every row in an order a query names, built with `build` on first use.
    pub fn order(&self, name: &str, build: &dyn Fn() -> Vec<u32>) -> Arc<Vec<u32>> {
        self.orders
            .get(|kept| kept == name, || name.to_string(), || Arc::new(build()))
    }

    /// The rows `reader` may see, decided by `sight` for every note once per set and reader.
    pub fn visible_rows(&self, reader: &Reader) -> Arc<RowSet> {
        self.sights.get(
            |kept| kept.label == reader.label && kept.scope == reader.scope,
            || reader.clone(),
            || {
                let visible =
                    (0..self.newest.len() as u32).filter(|row| sight(&self.newest[*row as usize], reader).visible());
                Arc::new(RowSet::from_rows(self.newest.len(), visible))
            },
        )
    }

    /// The note in a row as the query language reads it, with frontmatter keys read from `columns`
    /// (the others from the note's own map).
    pub fn fields_at<'a>(&'a self, row: usize, columns: &'a [(&'a str, &'a [Option<Value>])]) -> NoteFields<'a> {
        NoteFields {
            path: &self.rows.paths[row],
            title: &self.rows.titles[row],
            modified_ms: self.rows.modified[row],
            tags: &self.rows.tags[row],
            // A reference to the map, not a read of it: the note is read only when a key outside
            // the columns is asked for.
            frontmatter: Frontmatter::Columns {
                columns,
                row,
                map: &self.newest[row].frontmatter,
            },
        }
    }

    /// The row of the note with a search index key.
    pub fn row_of_index_key(&self, key: u64) -> Option<usize> {
        self.by_index_key.get(&key).map(|row| *row as usize)
    }

    pub fn len(&self) -> usize {
        self.newest.len()
    }

    pub fn is_empty(&self) -> bool {
        self.newest.is_empty()
    }

    /// Every note, newest first (for the sync and the owner; agents go through `visible`).
    pub fn all(&self) -> &[Arc<Note>] {
        &self.newest
    }

    /// A note by path, whoever asks (the sync's own bookkeeping).
    pub fn at(&self, path: &str) -> Option<&Arc<Note>> {
        self.by_path.get(path).map(|i| &self.newest[*i])
    }

    /// The notes `reader` may see, newest first, with how it sees each.
    pub fn visible<'a>(&'a self, reader: &'a Reader) -> impl Iterator<Item = (&'a Arc<Note>, Sight)> + 'a {
        self.newest.iter().filter_map(move |note| {
            let seen = sight(note, reader);
            seen.visible().then_some((note, seen))
        })
    }

    /// The notes with `agent_overrides` (few, so what hides a note from one connection is found
    /// without reading every note).
    pub fn with_overrides(&self) -> impl Iterator<Item = &Arc<Note>> + '_ {
        self.overridden.iter().map(|i| &self.newest[*i])
    }

    /// A note by path, as `reader` may see it.
    pub fn find_path(&self, path: &str, reader: &Reader) -> Option<(&Arc<Note>, Sight)> {
        let note = self.at(path)?;
        let seen = sight(note, reader);
        seen.visible().then_some((note, seen))
    }

    /// A note by the id agents use (`path:<path>` or a frontmatter id). When several notes share a
    /// frontmatter id, the first by path that `reader` may see answers.
    pub fn find_id(&self, id: &str, reader: &Reader) -> Option<(&Arc<Note>, Sight)> {
        if let Some(path) = id.strip_prefix("path:") {
            // A synthetic id names a note without a frontmatter id.
            return self.find_path(path, reader).filter(|(note, _)| note.id.is_none());
        }
        self.by_id.get(id)?.iter().find_map(|i| {
            let note = &self.newest[*i];
            let seen = sight(note, reader);
            seen.visible().then_some((note, seen))
        })
    }

    /// The paths of the notes `reader` may see whose frontmatter id is `id`, in path order.
    pub fn paths_with_id(&self, id: &str, reader: &Reader) -> Vec<String> {
        let Some(rows) = self.by_id.get(id) else {
            return Vec::new();
        };
        rows.iter()
            .map(|i| &self.newest[*i])
            .filter(|note| sight(note, reader).visible())
            .map(|note| note.path.clone())
            .collect()
    }

    /// The nearest `AGENTS.md` (or `AGENT.md`) in the note's folder or above it that `reader` may
    /// see. A hidden one is skipped as if it were not there.
    pub fn agents_md(&self, note_path: &str, reader: &Reader) -> Option<&Arc<Note>> {
        let mut folder = rules::folder_of(note_path);
        loop {
            for name in ["AGENTS.md", "AGENT.md"] {
                let path = if folder.is_empty() {
                    name.to_string()
                } else {
                    format!("{folder}/{name}")
                };
                if let Some((found, _)) = self.find_path(&path, reader)
                    && found.path != note_path
                {
                    return Some(found);
                }
            }
            if folder.is_empty() {
                return None;
            }
            folder = rules::folder_of(folder);
        }
    }

    /// The skills `reader` may see: `Skills/<name>/SKILL.md`, by name.
    pub fn skills<'a>(&'a self, reader: &'a Reader) -> Vec<&'a Arc<Note>> {
        self.skill_rows
            .iter()
            .map(|row| &self.newest[*row])
            .filter(|note| sight(note, reader).visible())
            .collect()
    }
}

/// The skill a path holds: `Skills/<name>/SKILL.md` gives `<name>`.
pub fn skill_name(path: &str) -> Option<&str> {
    let name = path.strip_prefix("Skills/")?.strip_suffix("/SKILL.md")?;
    (!name.is_empty() && !name.contains('/')).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::content::Scope;
    use crate::journal::notes::note;

    fn note(path: &str, text: &str, modified_ms: i64) -> Arc<Note> {
        Arc::new(note::read(path, text.as_bytes(), modified_ms).unwrap().note)
    }

    fn reader(label: &str) -> Reader {
        Reader {
            scope: Scope::WholeJournal,
            label: label.into(),
        }
    }

    #[test]
    fn queries_read_the_same_from_columns_as_from_each_note() {
        let notes: Vec<Arc<Note>> = (0..40)
            .map(|i| {
                let status = ["todo", "active", "done"][i % 3];
                let extra = if i % 4 == 0 {
                    "due: 2026-11-0".to_string() + &(i % 9 + 1).to_string()
                } else {
                    String::new()
                };
                note(
                    &format!("n{i:02}.md"),
                    &format!("---\nstatus: {status}\npriority: {}\n{extra}\n---\n", i % 5),
                    i as i64,
                )
            })
            .collect();
        let set = NoteSet::new(notes);
        let reader = reader("any");
        let query = crate::journal::notes::query::parse(
            "where status is \"active\" or priority gt 2\nsort due desc\nsort priority\ncolumns __path, status, due",
        )
        .unwrap();
        let keys = query.keys();
        assert_eq!(keys, ["status", "priority", "due"]);
        let built: Vec<_> = keys.iter().map(|key| set.column(key)).collect();
        let columns: Vec<(&str, &[Option<Value>])> = keys
            .iter()
            .zip(&built)
            .map(|(key, values)| (*key, values.as_slice()))
            .collect();
        let rows = set.visible_rows(&reader);
        let from_columns = query.run(rows.rows().map(|row| set.fields_at(row, &columns)), 0);
        let from_maps = query.run(
            set.visible(&reader).map(|(note, _)| NoteFields {
                path: &note.path,
                title: &note.title,
                modified_ms: note.modified_ms,
                tags: &note.tags,
                frontmatter: Frontmatter::Map(&note.frontmatter),
            }),
            0,
        );
        assert!(from_columns.total > 0);
        assert_eq!(from_columns.rows, from_maps.rows);
        assert_eq!(from_columns.total, from_maps.total);
        assert!(Arc::ptr_eq(&set.column("status"), &built[0]), "a column is built once");
        assert!(
            Arc::ptr_eq(&set.visible_rows(&reader), &rows),
            "and the rows of a reader"
        );
    }

    #[test]
    fn lookups_skip_what_the_reader_may_not_see() {
        let set = NoteSet::new(vec![
            note("AGENTS.md", "top rules", 1),
            note("Projects/AGENTS.md", "---\naccess: private\n---\nproject rules", 2),
            note("Projects/a/alpha.md", "---\nid: shared\n---\n", 3),
            note("Projects/b.md", "---\nid: shared\naccess: private\n---\n", 4),
            note(
                "Projects/0.md",
                "---\nid: shared\nagent_overrides: {codex: no-access}\n---\n",
                5,
            ),
            note("Skills/review/SKILL.md", "---\nname: review\n---\n", 6),
            note("Skills/SKILL.md", "", 7),
            note("loose.md", "", 8),
        ]);
        let codex = reader("Codex");
        let other = reader("Other");
        assert_eq!(set.all()[0].path, "loose.md", "newest first");
        assert_eq!(set.visible(&codex).count(), 5);
        assert_eq!(set.find_id("shared", &codex).unwrap().0.path, "Projects/a/alpha.md");
        assert_eq!(set.find_id("shared", &other).unwrap().0.path, "Projects/0.md");
        assert!(
            set.find_id("path:Projects/a/alpha.md", &codex).is_none(),
            "it has an id of its own"
        );
        assert_eq!(set.find_id("path:loose.md", &codex).unwrap().0.path, "loose.md");
        assert!(set.find_path("Projects/b.md", &codex).is_none());
        assert_eq!(set.agents_md("Projects/a/alpha.md", &codex).unwrap().path, "AGENTS.md");
        assert!(set.agents_md("AGENTS.md", &codex).is_none(), "not its own AGENTS.md");
        let skills: Vec<&str> = set.skills(&codex).iter().map(|n| n.path.as_str()).collect();
        assert_eq!(skills, ["Skills/review/SKILL.md"]);
        assert_eq!(skill_name("Skills/a/b/SKILL.md"), None);
    }
}
