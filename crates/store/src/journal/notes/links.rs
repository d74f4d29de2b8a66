//! Which note a link names, and how to write a link again when what it names (or the note it is
//! in) moves. Plain functions over paths and link text, used by `note_move`.
//!
//! A wikilink names a note as Obsidian resolves it: `[[Folder/Name]]` is a path from the top of the
//! vault (or, failing that, from the linking note's folder, or the end of some note's path);
//! `[[Name]]` is the note with that file name, and when several share it, the one in the linking
//! note's folder, else the one nearest the top (then the shortest path, then the first in order).
//! Names compare ignoring case. A relative markdown link names the file at its path from the
//! linking note's folder, exactly.

use std::collections::HashMap;

use super::markdown::resolve_relative;
use super::rules::{folder_of, stem_of};

/// The vault's note paths, looked up as wikilinks look them up.
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// Lowercased path to the path.
    by_path: HashMap<String, String>,
    /// Lowercased file name without `.md` to the paths that have it.
    by_stem: HashMap<String, Vec<String>>,
}

impl Names {
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a str>) -> Names {
        let mut names = Names::default();
        for path in paths {
            names.insert(path);
        }
        names
    }

    pub fn insert(&mut self, path: &str) {
        if self.by_path.insert(path.to_lowercase(), path.to_string()).is_none() {
            self.by_stem
                .entry(stem_of(path).to_lowercase())
                .or_default()
                .push(path.to_string());
        }
    }

    pub fn remove(&mut self, path: &str) {
        if self.by_path.remove(&path.to_lowercase()).is_some()
            && let Some(paths) = self.by_stem.get_mut(&stem_of(path).to_lowercase())
        {
            paths.retain(|p| p != path);
        }
    }

    /// The note the wikilink target `target` (without `#heading` or `|alias`) names from the note
    /// at `source`.
    pub fn resolve(&self, target: &str, source: &str) -> Option<&str> {
        let target = target.trim();
        let target = match target.len().checked_sub(3) {
            Some(cut) if target.is_char_boundary(cut) && target[cut..].eq_ignore_ascii_case(".md") => &target[..cut],
            _ => target,
        };
        let name = target.rsplit('/').next().unwrap_or(target);
        if name.is_empty() {
            return None;
        }
        if target.contains('/') {
            let exact = self.by_path.get(&format!("{target}.md").to_lowercase());
            let relative = || {
                resolve_relative(folder_of(source), &format!("{target}.md"))
                    .and_then(|path| self.by_path.get(&path.to_lowercase()))
            };
            if let Some(found) = exact.or_else(relative) {
                return Some(found);
            }
            let ending = format!("/{target}.md").to_lowercase();
            let candidates = self.by_stem.get(&name.to_lowercase())?;
            return best(
                candidates.iter().filter(|p| p.to_lowercase().ends_with(&ending)),
                source,
            );
        }
        best(self.by_stem.get(&name.to_lowercase())?.iter(), source)
    }

    /// How a wikilink from the note at `source` names the note at `path`: by its file name when
    /// that names it, else by its path from the top of the vault (without `.md`).
    pub fn wikilink_to(&self, path: &str, source: &str) -> String {
        let stem = stem_of(path);
        let name = if self.resolve(stem, source) == Some(path) {
            stem
        } else {
            path.strip_suffix(".md").unwrap_or(path)
        };
        // A name that ends in another extension (`report.md.bak`) would read as an attachment of
        // that type: such a note is named with its `.md`.
        let last = name.rsplit('/').next().unwrap_or(name);
        if last.trim_start_matches('.').contains('.') {
            format!("{name}.md")
        } else {
            name.to_string()
        }
    }
}

/// Of several notes with one name: the one in the linking note's folder, else the one nearest the
/// top of the vault, then the shortest path, then the first in order.
fn best<'a>(candidates: impl Iterator<Item = &'a String>, source: &str) -> Option<&'a str> {
    let folder = folder_of(source);
    candidates
        .min_by_key(|p| (folder_of(p) != folder, p.matches('/').count(), p.len(), p.as_str()))
        .map(String::as_str)
}

/// The relative path from a note in `folder` to the file at `path` (both from the top of the vault).
pub fn relative_path(folder: &str, path: &str) -> String {
    let from: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    let to: Vec<&str> = path.split('/').collect();
    let common = from.iter().zip(&to[..to.len() - 1]).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; from.len() - common];
    parts.extend(&to[common..]);
    parts.join("/")
}

/// A relative path as a markdown link's destination: written as is inside `<...>`; otherwise with
/// the characters that would end or change the destination percent-encoded.
pub fn encode_destination(path: &str, bracketed: bool) -> String {
    if bracketed {
        return path.to_string();
    }
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            ' ' => out.push_str("%20"),
            '%' => out.push_str("%25"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

/// The wikilink `link` (`[[old#heading|alias]]`, or an embed `![[...]]`) naming `target` instead,
/// its heading and alias kept. None when `link` is not a wikilink.
pub fn rewrite_wikilink(link: &str, target: &str) -> Option<String> {
    let open = link.find("[[")?;
    let inner = link[open + 2..].strip_suffix("]]")?;
    let (dest, alias) = match inner.find('|') {
        Some(at) => (&inner[..at], Some(&inner[at..])),
        None => (inner, None),
    };
    // In a table the alias's bar is written `\|`: the backslash stays with it.
    let (dest, escape) = match dest.strip_suffix('\\') {
        Some(dest) => (dest, "\\"),
        None => (dest, ""),
    };
    // Only the name changes: spaces and line breaks around it, and the heading after it, stay as
    // they were, so the link keeps its lines and the markdown around it reads the same after.
    let (name, heading) = match dest.find('#') {
        Some(at) => (&dest[..at], &dest[at..]),
        None => (dest, ""),
    };
    let trimmed = name.trim();
    let (lead, trail) = if trimmed.is_empty() {
        (name, "")
    } else {
        let start = name.len() - name.trim_start().len();
        (&name[..start], &name[start + trimmed.len()..])
    };
    Some(format!(
        "{}[[{lead}{target}{trail}{heading}{escape}{}]]",
        &link[..open],
        alias.unwrap_or("")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names {
        Names::new([
            "Ana.md",
            "People/Ana.md",
            "People/Bo.md",
            "Work/Projects/Alpha.md",
            "Archive/Projects/Alpha.md",
            "Inbox/idea one.md",
        ])
    }

    #[test]
    fn a_wikilink_names_a_note_as_obsidian_resolves_it() {
        let names = names();
        assert_eq!(names.resolve("Bo", "Inbox/x.md"), Some("People/Bo.md"));
        assert_eq!(names.resolve("bo.md", "x.md"), Some("People/Bo.md"));
        // Several with one name: the linking note's folder first, else the nearest the top.
        assert_eq!(names.resolve("Ana", "People/Bo.md"), Some("People/Ana.md"));
        assert_eq!(names.resolve("Ana", "Inbox/x.md"), Some("Ana.md"));
        // A path: from the top, from the folder, or the end of a path.
        assert_eq!(names.resolve("People/Ana", "Inbox/x.md"), Some("People/Ana.md"));
        assert_eq!(
            names.resolve("Projects/Alpha", "Archive/x.md"),
            Some("Archive/Projects/Alpha.md")
        );
        assert_eq!(names.resolve("Projects/Alpha", "x.md"), Some("Work/Projects/Alpha.md"));
        assert_eq!(names.resolve("idea one", "x.md"), Some("Inbox/idea one.md"));
        assert_eq!(names.resolve("Nobody", "x.md"), None);
        assert_eq!(names.resolve("", "x.md"), None);
        assert_eq!(names.resolve("People/", "x.md"), None);
    }

    #[test]
    fn a_moved_note_is_named_by_its_name_when_that_is_enough() {
        let mut names = names();
        assert_eq!(names.wikilink_to("People/Bo.md", "x.md"), "Bo");
        assert_eq!(names.wikilink_to("People/Ana.md", "x.md"), "People/Ana");
        assert_eq!(names.wikilink_to("People/Ana.md", "People/Bo.md"), "Ana");
        let dotted = Names::new(["Notes/other.md.bak.md"]);
        assert_eq!(dotted.wikilink_to("Notes/other.md.bak.md", "x.md"), "other.md.bak.md");
        assert_eq!(dotted.resolve("other.md.bak.md", "x.md"), Some("Notes/other.md.bak.md"));
        names.remove("People/Bo.md");
        names.insert("Team/Bo.md");
        assert_eq!(names.resolve("Bo", "x.md"), Some("Team/Bo.md"));
        assert_eq!(names.resolve("People/Bo", "x.md"), None);
    }

    #[test]
    fn relative_paths_climb_only_as_far_as_needed() {
        assert_eq!(relative_path("", "a/b.md"), "a/b.md");
        assert_eq!(relative_path("a", "a/b.md"), "b.md");
        assert_eq!(relative_path("a/x", "a/b.md"), "../b.md");
        assert_eq!(relative_path("x/y", "a/b.md"), "../../a/b.md");
        assert_eq!(relative_path("a", "b.md"), "../b.md");
        assert_eq!(
            encode_destination("my notes/a (1).md", false),
            "my%20notes/a%20%281%29.md"
        );
        assert_eq!(encode_destination("my notes/a.md", true), "my notes/a.md");
    }

    #[test]
    fn a_rewritten_wikilink_keeps_its_heading_and_alias() {
        assert_eq!(rewrite_wikilink("[[Bo]]", "Team/Bo").as_deref(), Some("[[Team/Bo]]"));
        assert_eq!(
            rewrite_wikilink("[[Bo#Plans|my friend]]", "Team/Bo").as_deref(),
            Some("[[Team/Bo#Plans|my friend]]")
        );
        assert_eq!(rewrite_wikilink("![[Bo]]", "Cy").as_deref(), Some("![[Cy]]"));
        assert_eq!(
            rewrite_wikilink("[[Bo\\|alias]]", "Cy").as_deref(),
            Some("[[Cy\\|alias]]")
        );
        assert_eq!(rewrite_wikilink("[Bo](Bo.md)", "Cy"), None);
        // A link written over several lines keeps its lines.
        assert_eq!(
            rewrite_wikilink("[[\nNotes/Plan.md\n]]", "Deep/Plan").as_deref(),
            Some("[[\nDeep/Plan\n]]")
        );
        assert_eq!(
            rewrite_wikilink("[[ Bo#Top |x]]", "Cy").as_deref(),
            Some("[[ Cy#Top |x]]")
        );
    }
}
