//! A note as the journal knows it: read from a markdown file's bytes into its id, title, tags,
//! links, facets and access rules, with its frontmatter as data.
//!
//! The frontmatter is optional (a plain markdown file is a note), but a block that begins and does
//! not end, or YAML that does not read, makes the whole note unreadable: its `access` cannot be
//! known, so it is kept from agents (and reported to the owner) rather than guessed at.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::markdown::{self, Link};
use super::{flat, rules};
use crate::journal::frontmatter;

/// The largest note the journal reads; a larger file is reported and left out.
pub const MAX_NOTE_BYTES: u64 = 8 * 1024 * 1024;

/// The frontmatter key of the per-connection overrides, never shown to an agent.
pub const OVERRIDES_KEY: &str = "agent_overrides";

/// A note's own access rule, from its `access` frontmatter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// No `access`, or any value other than the two below.
    #[default]
    Open,
    ReadOnly,
    Private,
}

/// What `agent_overrides` may say for one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Override {
    ReadOnly,
    NoAccess,
}

/// One note's metadata: everything but its body. This is what the catalog keeps (as JSON) and what
/// the server holds in memory for listings, queries and access decisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Note {
    /// Relative to the vault, `/`-separated.
    pub path: String,
    /// The frontmatter `id`, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub title: String,
    /// Frontmatter tags, then inline ones, each once (compared ignoring case).
    pub tags: Vec<String>,
    #[serde(default)]
    pub links: Vec<Link>,
    /// Facet names from the frontmatter `facets`.
    #[serde(default)]
    pub facets: Vec<String>,
    #[serde(default)]
    pub access: Access,
    /// Connection label (folded to lowercase) to what the override says.
    #[serde(default)]
    pub overrides: BTreeMap<String, Override>,
    /// The frontmatter without `agent_overrides`.
    #[serde(default)]
    pub frontmatter: Map<String, Value>,
    /// Modification time in Unix milliseconds.
    pub modified_ms: i64,
    pub size: u64,
    /// SHA-256 of the file's bytes, in hex.
    pub hash: String,
}

impl Note {
    /// The id agents use: the frontmatter `id`, or `path:<path>`.
    pub fn public_id(&self) -> String {
        match &self.id {
            Some(id) => id.clone(),
            None => format!("path:{}", self.path),
        }
    }

    pub fn folder(&self) -> &str {
        rules::folder_of(&self.path)
    }
}

/// A note read from its file: the metadata and where the body starts.
pub struct Read<'a> {
    pub note: Note,
    pub body: &'a str,
}

/// SHA-256 of bytes in hex: a note's `hash`, which write tools take back as `expected_hash`.
pub fn hash_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads a note from its file's bytes. The error says, in one line, what the owner should fix.
pub fn read<'a>(path: &str, bytes: &'a [u8], modified_ms: i64) -> Result<Read<'a>, String> {
    if bytes.len() as u64 > MAX_NOTE_BYTES {
        return Err("the note is larger than 8 MiB".into());
    }
    let text =
        std::str::from_utf8(bytes).map_err(|e| format!("the note is not UTF-8 text (byte {})", e.valid_up_to()))?;
    let unmarked = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (mut frontmatter, body) = if unmarked.starts_with("---\n") || unmarked.starts_with("---\r\n") {
        let (yaml, body) = frontmatter::split(text).map_err(|e| e.to_string())?;
        if yaml.len() > frontmatter::MAX_YAML_BYTES {
            return Err(format!(
                "frontmatter: the block is larger than {} KiB; keep long text in the body",
                frontmatter::MAX_YAML_BYTES / 1024
            ));
        }
        // Flat frontmatter is read directly; anything else by the YAML parser.
        let map = match flat::read(yaml) {
            Some(map) => map,
            None => match frontmatter::parse::<Value>(text).map_err(|e| e.to_string())?.0 {
                Value::Object(map) => map,
                Value::Null => Map::new(),
                _ => return Err("frontmatter: expected key: value lines".into()),
            },
        };
        // What the catalog keeps and every query walks: never much more than the file itself.
        let expanded = serde_json::to_vec(&map).map_or(usize::MAX, |json| json.len());
        if expanded > frontmatter::MAX_EXPANDED_BYTES {
            return Err(format!(
                "frontmatter: it stands for more than {} KiB once read (YAML aliases repeat what they name); write \
                 it out plainly",
                frontmatter::MAX_EXPANDED_BYTES / 1024
            ));
        }
        (map, body)
    } else {
        (Map::new(), unmarked)
    };
    let offset = text.len() - body.len();
    let overrides = match frontmatter.remove(OVERRIDES_KEY) {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(map)) => read_overrides(map),
        Some(_) => {
            return Err(format!(
                "frontmatter: {OVERRIDES_KEY} must map connection names to read-only or no-access"
            ));
        }
    };
    let folder = rules::folder_of(path);
    let facts = markdown::read_body(body, offset, folder);
    let title = scalar_text(frontmatter.get("title"))
        .or(facts.heading)
        .unwrap_or_else(|| rules::stem_of(path).to_string());
    let mut tags = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for tag in list_of(frontmatter.get("tags")).into_iter().chain(facts.tags) {
        if tags.len() < markdown::MAX_TAGS && seen.insert(tag.to_lowercase()) {
            tags.push(tag);
        }
    }
    let note = Note {
        path: path.to_string(),
        id: scalar_text(frontmatter.get("id")).filter(|id| id.len() <= 256),
        title,
        tags,
        links: facts.links,
        // Facet names are lowercase (`journal facet create` refuses others); `Work` means `work`.
        facets: list_of(frontmatter.get("facets"))
            .iter()
            .map(|f| f.to_lowercase())
            .collect(),
        access: access_of(frontmatter.get("access")),
        overrides,
        frontmatter,
        modified_ms,
        size: bytes.len() as u64,
        hash: hash_hex(bytes),
    };
    Ok(Read { note, body })
}

/// What every read of a vault note keeps, whatever the bytes (the fuzz target `vault_note` and its
/// proptest twin check it): no panic; a note that reads has the file's size and hash, at most
/// `MAX_TAGS` tags, none twice ignoring case, a title, and frontmatter that stands for at most
/// `MAX_EXPANDED_BYTES`. Panics with the input when one does not hold.
pub fn check_read(path: &str, bytes: &[u8]) {
    let Ok(read) = read(path, bytes, 0) else { return };
    let note = read.note;
    assert_eq!(note.size, bytes.len() as u64, "{bytes:?}");
    assert_eq!(note.hash, hash_hex(bytes), "{bytes:?}");
    assert!(note.tags.len() <= markdown::MAX_TAGS, "{bytes:?}");
    let mut folded: Vec<String> = note.tags.iter().map(|t| t.to_lowercase()).collect();
    folded.sort();
    folded.dedup();
    assert_eq!(folded.len(), note.tags.len(), "a tag twice: {:?}", note.tags);
    assert!(!note.title.is_empty(), "{bytes:?}");
    let expanded = serde_json::to_vec(&note.frontmatter).map_or(usize::MAX, |json| json.len());
    assert!(expanded <= frontmatter::MAX_EXPANDED_BYTES, "{bytes:?}");
    assert!(
        bytes.ends_with(read.body.as_bytes()),
        "the body is the end of the file: {bytes:?}"
    );
}

/// `access`: read leniently towards the stricter reading (`Private`, ` private ` mean private).
fn access_of(value: Option<&Value>) -> Access {
    match scalar_text(value).map(|v| v.to_lowercase()).as_deref() {
        Some("private") => Access::Private,
        Some("read-only") | Some("readonly") | Some("read_only") => Access::ReadOnly,
        _ => Access::Open,
    }
}

/// `agent_overrides`: values other than the two levels tighten nothing.
fn read_overrides(map: Map<String, Value>) -> BTreeMap<String, Override> {
    map.into_iter()
        .filter_map(|(label, level)| {
            let level = match scalar_text(Some(&level))?.to_lowercase().as_str() {
                "no-access" | "no_access" | "noaccess" | "none" => Override::NoAccess,
                "read-only" | "readonly" | "read_only" => Override::ReadOnly,
                _ => return None,
            };
            Some((label.trim().to_lowercase(), level))
        })
        .collect()
}

/// A string or number as trimmed text; None when empty or not a scalar.
fn scalar_text(value: Option<&Value>) -> Option<String> {
    let text = match value? {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => return None,
    };
    (!text.is_empty()).then_some(text)
}

/// A list of names: a YAML list, or one string of names separated by commas or spaces. A leading
/// `#` is dropped (`tags: [#a]` is common in vaults).
fn list_of(value: Option<&Value>) -> Vec<String> {
    let raw: Vec<String> = match value {
        Some(Value::Array(items)) => items.iter().filter_map(|v| scalar_text(Some(v))).collect(),
        Some(Value::String(s)) => s
            .split(|c: char| c == ',' || c.is_whitespace())
            .map(str::to_string)
            .collect(),
        Some(other) => scalar_text(Some(other)).into_iter().collect(),
        None => Vec::new(),
    };
    let mut names: Vec<String> = Vec::new();
    for name in raw {
        let name = name.trim().trim_start_matches('#').to_string();
        if !name.is_empty() && !names.iter().any(|n| n.to_lowercase() == name.to_lowercase()) {
            names.push(name);
        }
    }
    names
}

/// The index's key of a note's documents (apart from the journal's own files, which are keyed by
/// their path in the journal folder).
pub fn file_key(path: &str) -> String {
    format!("note:{path}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Text made of the pieces notes are made of, so that random cases reach the frontmatter,
    /// aliases, tags and links rather than only failing on the first byte.
    fn note_text() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "---\n",
            "---\r\n",
            "title: x\n",
            "tags: [a, B, a]\n",
            "a: &a [1, 2, 3]\n",
            "b: [*a, *a, *a]\n",
            "facets: work\n",
            "access: private\n",
            "agent_overrides:\n  x: no-access\n",
            "# Head\n",
            "#tag ",
            "#Tag ",
            "#42 ",
            "[[Link]] ",
            "[a](b.md) ",
            "```\n",
            "\u{feff}",
            "é",
            "\t",
            " ",
            "\n",
            ":",
            "- ",
        ]);
        prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// The twin of the fuzz target `vault_note`.
        #[test]
        fn any_file_reads_as_a_note_within_the_limits_or_not_at_all(text in note_text(), raw in prop::collection::vec(any::<u8>(), 0..64)) {
            check_read("Folder/n.md", text.as_bytes());
            check_read("n.md", &raw);
        }
    }

    #[test]
    fn reads_frontmatter_title_tags_facets_and_access() {
        let text = "---\nid: alpha-1\ntags: [project, \"#Planning\"]\nfacets: work\nstatus: active\naccess: Read-Only\n\
                    agent_overrides:\n  Claude Code: no-access\n  Other: maybe\n---\n# Alpha\n\nBody #planning #new [[Beta]]\n";
        let read = read("Projects/alpha.md", text.as_bytes(), 1_000).unwrap();
        let note = read.note;
        assert_eq!(note.public_id(), "alpha-1");
        assert_eq!(note.title, "Alpha");
        assert_eq!(note.tags, ["project", "Planning", "new"]);
        assert_eq!(note.facets, ["work"]);
        assert_eq!(note.access, Access::ReadOnly);
        assert_eq!(note.overrides.len(), 1);
        assert_eq!(note.overrides["claude code"], Override::NoAccess);
        assert!(!note.frontmatter.contains_key(OVERRIDES_KEY));
        assert_eq!(note.frontmatter["status"], "active");
        assert_eq!(read.body, "# Alpha\n\nBody #planning #new [[Beta]]\n");
        let link = &note.links[0];
        assert_eq!(&text[link.start..link.end], "[[Beta]]");
        assert_eq!(note.hash, hash_hex(text.as_bytes()));
        assert_eq!(note.hash.len(), 64);
    }

    #[test]
    fn a_plain_file_is_a_note_titled_by_its_name() {
        let read = read("Inbox/idea one.md", b"just text\n", 5).unwrap();
        assert_eq!(read.note.title, "idea one");
        assert_eq!(read.note.public_id(), "path:Inbox/idea one.md");
        assert_eq!(read.note.access, Access::Open);
        assert_eq!(read.body, "just text\n");
        let titled = read_title("---\ntitle: 42\n---\n# Heading\n");
        assert_eq!(titled, "42");
    }

    fn read_title(text: &str) -> String {
        read("a.md", text.as_bytes(), 0).unwrap().note.title
    }

    #[test]
    fn unreadable_frontmatter_makes_the_note_unreadable() {
        for (text, expected) in [
            ("---\naccess: private\nno end\n", "closing"),
            ("---\n: [\n---\nbody\n", "line"),
            ("---\n- a list\n---\n", "key: value"),
            ("---\nagent_overrides: [x]\n---\n", "agent_overrides"),
        ] {
            let error = read("a.md", text.as_bytes(), 0).err().unwrap();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
        assert!(read("a.md", b"\xff\xfe", 0).err().unwrap().contains("UTF-8"));
        assert_eq!(read_title("---\n---\n# T\n"), "T");
    }

    #[test]
    fn access_values_read_strictly_towards_privacy() {
        assert_eq!(access_of(Some(&Value::from(" Private "))), Access::Private);
        assert_eq!(access_of(Some(&Value::from("read-only"))), Access::ReadOnly);
        assert_eq!(access_of(Some(&Value::from("public"))), Access::Open);
        assert_eq!(access_of(Some(&Value::from(3))), Access::Open);
        assert_eq!(access_of(None), Access::Open);
    }
}
