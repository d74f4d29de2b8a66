//! Which paths of the vault are notes an agent may ever reach, and how a path an agent typed is read.
//!
//! Plain functions over `/`-separated relative paths. The scan of the vault never enters a
//! quarantined folder, and every tool checks the paths it is given here, so a quarantined note is
//! never catalogued, never indexed and answers exactly as a missing one does.

/// The longest note path a tool accepts, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;

/// Whether a folder or file name is one agents never reach: dot names (`.obsidian`, `.trash`,
/// `.git`, editors' temporary files) and `_private` at any depth, in any case.
pub fn quarantined_name(name: &str) -> bool {
    name.starts_with('.') || same_name(name, "_private")
}

/// Whether a relative path (a folder or a file) lies in quarantine: a quarantined name anywhere in
/// it, or `Widgets/` at the top of the vault (the owner's HTML widgets, which carry scripts).
pub fn quarantined(path: &str) -> bool {
    let mut parts = path.split('/');
    if parts.clone().next().is_some_and(|top| same_name(top, "Widgets")) {
        return true;
    }
    parts.any(quarantined_name)
}

/// Whether `name` names the same file as `reserved` on some file system the vault may live on:
/// compared with Unicode case folding (macOS's and Windows' default file systems ignore case, and
/// fold `ſ` to `s` and the Kelvin sign to `k` as well), and without the trailing dots and spaces
/// that Windows drops from a name. Quarantine is decided this way on every system, so that a vault
/// synced between a Mac and Linux keeps the same walls on both.
pub fn same_name(name: &str, reserved: &str) -> bool {
    unicase::eq(name.trim_end_matches(['.', ' ']), reserved)
}

/// Whether the paths `a` and `b` are twins: different, but at the first folder or file where they
/// differ the two names are the same name (`same_name`), as `Notes/Plan.md` and `notes/x.md`, or
/// `Plan.md` and `plan.md`. A file system that ignores case holds only one of them. The vault's
/// walls (`Walls::twin`) refuse to make a twin of what is on disk.
pub fn twins(a: &str, b: &str) -> bool {
    a.split('/')
        .zip(b.split('/'))
        .find(|(x, y)| x != y)
        .is_some_and(|(x, y)| same_name(x, y.trim_end_matches(['.', ' '])))
}

/// Whether the note at `path` instructs agents: an `AGENTS.md` (or `AGENT.md`) at any depth, which
/// agents receive with every note below it, or anything under the top-level `Skills/` folder (the
/// skills agents read as the owner's). Compared as quarantine is, case-folded, so that no spelling
/// makes one file an instruction on one system and a plain note on another.
pub fn instructs(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let top = path.split('/').next().unwrap_or(path);
    same_name(name, "AGENTS.md") || same_name(name, "AGENT.md") || (path.contains('/') && same_name(top, "Skills"))
}

/// Whether a name can be part of a note's path at all: printable UTF-8 without `\` (a path an agent
/// types must mean the same file on every system).
pub fn plain_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c.is_control() || c == '\\')
}

/// Whether a catalogued relative path is a note: a `.md` file outside quarantine.
pub fn is_note_path(path: &str) -> bool {
    path.ends_with(".md") && !quarantined(path) && path.split('/').all(plain_name)
}

/// The folder of a note path (`""` at the top of the vault).
pub fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// The file name without `.md`.
pub fn stem_of(path: &str) -> &str {
    let name = path.rsplit_once('/').map_or(path, |(_, name)| name);
    name.strip_suffix(".md").unwrap_or(name)
}

/// Why a typed path was refused. Refusals of shape are said plainly; a path that is well formed but
/// quarantined is not refused here: it is simply not a note, and answers as a missing one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PathError(pub String);

/// Reads a note path an agent typed: relative to the vault, `/`-separated, without `.` or `..`
/// parts. A leading `./` or `/` is dropped and `.md` added when missing, so `Projects/alpha`,
/// `/Projects/alpha.md` and `./Projects/alpha.md` name the same note.
pub fn typed_note_path(typed: &str) -> Result<String, PathError> {
    if typed.len() > MAX_PATH_BYTES {
        return Err(PathError(format!("path is too long: at most {MAX_PATH_BYTES} bytes")));
    }
    let trimmed = typed.trim();
    let relative = trimmed.strip_prefix("./").unwrap_or(trimmed).trim_start_matches('/');
    if relative.is_empty() {
        return Err(PathError(
            "path is empty: give a note's path such as Projects/alpha.md".into(),
        ));
    }
    if relative.contains('\\') {
        return Err(PathError("path uses \\; note paths are separated by /".into()));
    }
    for part in relative.split('/') {
        if part.is_empty() || part == "." || part == ".." {
            return Err(PathError(format!(
                "path \"{relative}\" has an empty, . or .. part; give the note's path from the top of the notes folder"
            )));
        }
        if part.chars().any(char::is_control) {
            return Err(PathError("path contains a control character".into()));
        }
    }
    if relative.ends_with(".md") {
        return Ok(relative.to_string());
    }
    if let Some(ext) = other_kind(relative) {
        return Err(PathError(format!(
            "\"{relative}\" is a .{ext} file, not a note: notes are markdown files; give a path ending in .md"
        )));
    }
    Ok(format!("{relative}.md"))
}

/// Kinds of file a path may name that are never notes (so `.md` is not added to them): the
/// vault's other files (Obsidian's canvases and bases, web pages, styles, scripts, data, images).
const OTHER_KINDS: [&str; 30] = [
    "txt", "html", "htm", "css", "js", "mjs", "ts", "canvas", "base", "pdf", "json", "jsonl", "yaml", "yml", "toml",
    "csv", "tsv", "xml", "png", "jpg", "jpeg", "gif", "svg", "webp", "mp3", "mp4", "zip", "sh", "py", "markdown",
];

/// The extension of a path's last name when it is a kind of file that is never a note.
pub fn other_kind(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next()?;
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && OTHER_KINDS.contains(&ext.to_ascii_lowercase().as_str())).then_some(ext)
}

/// Reads a folder an agent typed (for listings and queries): like a note path, without `.md`, and
/// `""` for the whole vault.
pub fn typed_folder(typed: &str) -> Result<String, PathError> {
    if typed.len() > MAX_PATH_BYTES {
        return Err(PathError(format!("folder is too long: at most {MAX_PATH_BYTES} bytes")));
    }
    let trimmed = typed.trim().trim_matches('/');
    let relative = trimmed.strip_prefix("./").unwrap_or(trimmed);
    if relative.is_empty() || relative == "." {
        return Ok(String::new());
    }
    if relative.contains('\\') || relative.split('/').any(|p| p.is_empty() || p == "." || p == "..") {
        return Err(PathError(format!(
            "folder \"{relative}\" is not a plain folder path such as Projects/2026"
        )));
    }
    Ok(relative.to_string())
}

/// Whether `path` lies in `folder` or below it (`""` holds everything).
pub fn under(path: &str, folder: &str) -> bool {
    folder.is_empty()
        || path == folder
        || (path.starts_with(folder) && path.as_bytes().get(folder.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quarantine_covers_dot_folders_private_and_top_level_widgets() {
        for path in [
            ".obsidian/app.md",
            ".trash/old.md",
            "Projects/.git/x.md",
            "_private/diary.md",
            "Areas/_private/x.md",
            "Widgets/tasks.md",
            ".hidden.md",
            "_Private/diary.md",
            "Areas/_PRIVATE/x.md",
            "_private./x.md",
            "_private /x.md",
            "widgets/tasks.md",
            "WIDGETS/tasks.md",
            "Widget\u{17f}/tasks.md",
            "_PRIVATE",
        ] {
            assert!(quarantined(path), "{path}");
            assert!(!is_note_path(path), "{path}");
        }
        for path in [
            "Projects/alpha.md",
            "Areas/Widgets/x.md",
            "private/x.md",
            "Widgetsx/a.md",
        ] {
            assert!(!quarantined(path), "{path}");
            assert!(is_note_path(path), "{path}");
        }
        assert!(!is_note_path("Projects/alpha.txt"));
        assert!(!is_note_path("a\\b.md"));
    }

    #[test]
    fn typed_paths_are_read_leniently_and_refused_plainly() {
        assert_eq!(typed_note_path("Projects/alpha").unwrap(), "Projects/alpha.md");
        assert_eq!(typed_note_path("./Projects/alpha.md").unwrap(), "Projects/alpha.md");
        assert_eq!(typed_note_path("/Projects/alpha.md").unwrap(), "Projects/alpha.md");
        assert_eq!(typed_note_path(" a.md ").unwrap(), "a.md");
        for bad in [
            "",
            "  ",
            "../x.md",
            "a/../b.md",
            "a//b.md",
            "a\\b.md",
            "a/./b.md",
            "a\u{0}b",
        ] {
            assert!(typed_note_path(bad).is_err(), "{bad:?}");
        }
        assert!(typed_note_path(&"a".repeat(2000)).unwrap_err().0.contains("too long"));
        // Another kind of file is named as such, never quietly made a note beside it.
        for other in ["Themes/dark.css", "a.HTML", "board.canvas", "data.json"] {
            assert!(typed_note_path(other).unwrap_err().0.contains("not a note"), "{other}");
        }
        // A stem with dots is still a note's.
        assert_eq!(typed_note_path("Meeting 2026.12.05").unwrap(), "Meeting 2026.12.05.md");
        assert_eq!(typed_note_path("v1.2").unwrap(), "v1.2.md");
        // Quarantine is not a refusal of shape: the path reads, and then finds nothing.
        assert_eq!(typed_note_path("_private/diary").unwrap(), "_private/diary.md");
        assert_eq!(typed_folder("/Projects/").unwrap(), "Projects");
        assert_eq!(typed_folder("").unwrap(), "");
        assert!(typed_folder("../x").is_err());
    }

    #[test]
    fn instructions_are_agents_md_at_any_depth_and_everything_under_skills() {
        for path in [
            "AGENTS.md",
            "Projects/AGENTS.md",
            "a/agents.md",
            "AGENT.md",
            "Skills/x/SKILL.md",
            "skills/x/ref.md",
        ] {
            assert!(instructs(path), "{path}");
        }
        for path in [
            "Skills.md",
            "Projects/Skills/x.md",
            "MY-AGENTS.md",
            "notes/agent.txt.md",
        ] {
            assert!(!instructs(path), "{path}");
        }
    }

    #[test]
    fn twins_differ_only_in_case_where_they_first_differ() {
        assert!(twins("Plan.md", "plan.md"));
        assert!(twins("Notes/Plan.md", "notes/Other.md"));
        assert!(twins("Notes/Plan.md", "Notes/PLAN.md"));
        assert!(twins("Widgetſ/a.md", "widgets/b.md"));
        assert!(twins("Notes./a.md", "notes/b.md"));
        assert!(!twins("Plan.md", "Plan.md"));
        assert!(!twins("Notes/Plan.md", "Notes/Other.md"));
        assert!(!twins("Notes/Plan.md", "Other/plan.md"));
        assert!(!twins("Plan.md", "Plan.md.md"));
    }

    #[test]
    fn folders_and_hierarchy() {
        assert_eq!(folder_of("a/b/c.md"), "a/b");
        assert_eq!(folder_of("c.md"), "");
        assert_eq!(stem_of("a/b/c.md"), "c");
        assert!(under("Projects/a.md", "Projects"));
        assert!(under("Projects", "Projects"));
        assert!(!under("Projectsx/a.md", "Projects"));
        assert!(under("x.md", ""));
    }
}
