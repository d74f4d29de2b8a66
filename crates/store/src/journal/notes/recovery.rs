//! Undoing a change to notes that a process left half-made when it died: the files of one
//! unfinished change (`history::unfinished`) put back as they were before it, from its versions.
//!
//! Plain file work over the vault's walls. A note is only ever put back from the state this very
//! change left it in (the file's hash is the version's `after_hash`, or the note is gone where the
//! change removed it), so an edit the owner saved since the crash is never undone; anything else is
//! left as it is and logged. The temporary files the change's writes left are removed.

use std::fs;

use super::history::Version;
use super::note::hash_hex;
use super::walls::Walls;
use crate::fsio;

/// Puts back every note of one unfinished change. Answers the moves it undid, as `(new path, old
/// path)`, so that the graph can follow them back.
pub fn undo(walls: &Walls, versions: &[(Version, Option<Vec<u8>>)]) -> Vec<(String, String)> {
    let mut renames = Vec::new();
    for (version, before) in versions {
        for path in [Some(version.path.as_str()), version.new_path.as_deref()]
            .into_iter()
            .flatten()
        {
            if let Some(file) = walls.file(path) {
                fsio::remove_temps(&file);
            }
        }
        match undo_one(walls, version, before.as_deref()) {
            Ok(Some(rename)) => renames.push(rename),
            Ok(None) => {}
            Err(why) => tracing::error!(
                path = version.path,
                new_path = version.new_path.as_deref().unwrap_or(""),
                "a half-made change could not be put back: {why}; the note is left as it is"
            ),
        }
    }
    renames
}

/// The hash of the note at `path` now (None: no file there).
fn hash_at(walls: &Walls, path: &str) -> Option<String> {
    let file = walls.file(path)?;
    fs::read(file).ok().map(|bytes| hash_hex(&bytes))
}

fn undo_one(walls: &Walls, version: &Version, before: Option<&[u8]>) -> Result<Option<(String, String)>, String> {
    let file = |path: &str| {
        walls
            .file(path)
            .ok_or_else(|| format!("{path} is outside the vault's walls"))
    };
    let io = |e: std::io::Error| e.to_string();
    let ours = |path: &str| version.after_hash.is_some() && hash_at(walls, path) == version.after_hash;
    match version.new_path.as_deref() {
        // A move: the new file may be made, the old one removed or not yet.
        Some(new) if new != version.path => {
            let Some(before) = before else {
                return Err("a move keeps the note as it was; this version keeps nothing".into());
            };
            let old_there = hash_at(walls, &version.path);
            if old_there.is_none() {
                // Moved whole: back where it was, from what it was.
                fsio::create_new_atomic(&file(&version.path)?, before).map_err(io)?;
            } else if old_there != version.before_hash {
                return Err("the note at its old path changed since".into());
            }
            if ours(new) {
                fsio::remove_durable(&file(new)?).map_err(io)?;
            }
            Ok(Some((new.to_string(), version.path.clone())))
        }
        // Created or changed in place: back to what it was, or gone again if it was new.
        Some(_) => {
            if !ours(&version.path) {
                return Ok(None);
            }
            match before {
                Some(bytes) => fsio::write_atomic(&file(&version.path)?, bytes).map_err(io)?,
                None => fsio::remove_durable(&file(&version.path)?).map_err(io)?,
            }
            Ok(None)
        }
        // Deleted: back, unless a note is there again.
        None => {
            if let (Some(bytes), None) = (before, hash_at(walls, &version.path)) {
                fsio::create_new_atomic(&file(&version.path)?, bytes).map_err(io)?;
            }
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(path: &str, new_path: Option<&str>, before: Option<&str>, after: Option<&str>) -> Version {
        Version {
            id: 1,
            change_id: 1,
            at: 0,
            actor: "agent:a".into(),
            label: "a".into(),
            tool: "note_move".into(),
            proposal_id: None,
            reverted: None,
            path: path.into(),
            new_path: new_path.map(str::to_string),
            before_hash: before.map(|b| hash_hex(b.as_bytes())),
            after_hash: after.map(|a| hash_hex(a.as_bytes())),
            size: 0,
        }
    }

    fn kept(v: Version, before: Option<&str>) -> (Version, Option<Vec<u8>>) {
        (v, before.map(|b| b.as_bytes().to_vec()))
    }

    #[test]
    fn a_move_cut_anywhere_goes_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let walls = Walls::new(root);
        let at = |p: &str| root.join(p);
        // Cut after the new file was made, before the old one went: both there.
        fs::create_dir_all(at("Done")).unwrap();
        fs::write(at("a.md"), "A").unwrap();
        fs::write(at("Done/a.md"), "A").unwrap();
        fs::write(at("Done/.a.md.0123456789ab.tmp"), "half").unwrap();
        // Cut after both: only the new one there.
        fs::write(at("Done/b.md"), "B2").unwrap();
        // A link rewritten in another note, and a note created.
        fs::write(at("linking.md"), "after").unwrap();
        fs::write(at("new.md"), "fresh").unwrap();
        // A deleted note, gone.
        let versions = vec![
            kept(version("a.md", Some("Done/a.md"), Some("A"), Some("A")), Some("A")),
            kept(version("b.md", Some("Done/b.md"), Some("B"), Some("B2")), Some("B")),
            kept(
                version("linking.md", Some("linking.md"), Some("before"), Some("after")),
                Some("before"),
            ),
            kept(version("new.md", Some("new.md"), None, Some("fresh")), None),
            kept(version("gone.md", None, Some("G"), None), Some("G")),
        ];
        let renames = undo(&walls, &versions);
        assert_eq!(fs::read_to_string(at("a.md")).unwrap(), "A");
        assert!(!at("Done/a.md").exists() && !at("Done/.a.md.0123456789ab.tmp").exists());
        assert_eq!(fs::read_to_string(at("b.md")).unwrap(), "B");
        assert!(!at("Done/b.md").exists());
        assert_eq!(fs::read_to_string(at("linking.md")).unwrap(), "before");
        assert!(!at("new.md").exists());
        assert_eq!(fs::read_to_string(at("gone.md")).unwrap(), "G");
        assert_eq!(
            renames,
            vec![
                ("Done/a.md".to_string(), "a.md".to_string()),
                ("Done/b.md".into(), "b.md".into())
            ]
        );
    }

    #[test]
    fn what_the_owner_saved_since_is_never_undone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let walls = Walls::new(root);
        fs::write(root.join("edited.md"), "the owner's words").unwrap();
        fs::write(root.join("back.md"), "here again").unwrap();
        let versions = vec![
            kept(
                version("edited.md", Some("edited.md"), Some("before"), Some("after")),
                Some("before"),
            ),
            kept(version("back.md", None, Some("old"), None), Some("old")),
        ];
        undo(&walls, &versions);
        assert_eq!(fs::read_to_string(root.join("edited.md")).unwrap(), "the owner's words");
        assert_eq!(fs::read_to_string(root.join("back.md")).unwrap(), "here again");
    }
}
