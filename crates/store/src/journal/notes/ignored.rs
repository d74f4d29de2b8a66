//! What the vault leaves out the way git would: every `node_modules` folder, and what the vault's
//! git ignore rules ignore: its `.gitignore` files at any depth, and, when the vault lies in a git
//! repository, that repository's `.git/info/exclude` and the `.gitignore` files above the vault
//! inside it. A vault that is a code repository (or lies in one) then serves its notes, not its
//! dependencies and build output.
//!
//! Ignored paths are outside the vault's walls like quarantined ones: the scan does not list them,
//! and no read or write reaches them, so an agent can neither read an ignored file nor write a note
//! that would then vanish from the vault. Patterns are matched ignoring case on every system, as
//! quarantine names are: on a case-insensitive file system `Drafts/` is the folder `drafts/`
//! names, and ignoring a little too much on a case-sensitive one is the safe side.
//!
//! As in git, what lies in an ignored folder cannot be brought back by a `!pattern`, a deeper
//! file's rules win over a shallower one's, and `.git/info/exclude` is below every `.gitignore`.
//! Rule files are read again when they change (their length and time are kept with them).

use std::collections::HashMap;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::rules;

/// A rule file larger than this is not read (and logged): no real ignore file comes near it.
const MAX_RULES_BYTES: u64 = 1024 * 1024;

/// A rule file's length and time, to tell that it changed.
type Stamp = Option<(u64, SystemTime)>;

/// Rule files read, by path, with the stamp they were read at (None: no rules there).
type Cache = HashMap<PathBuf, (Stamp, Option<Arc<Gitignore>>)>;

/// One rule file and where its patterns are rooted.
#[derive(Debug, Clone)]
struct IgnoreFile {
    file: PathBuf,
    /// The folder its patterns are relative to.
    dir: PathBuf,
    /// The vault's path from `dir` (`""` for the vault's own files, `sub/vault/` above it).
    prefix: String,
}

/// The vault's ignore rules, read as they are needed and kept until their file changes.
#[derive(Debug, Clone)]
pub struct Ignores {
    root: PathBuf,
    /// The repository's exclude file and the `.gitignore` files above the vault, lowest first.
    above: Vec<IgnoreFile>,
    cache: Arc<Mutex<Cache>>,
    /// The rules' fingerprint when the scan last looked (`changed_since_last_scan`).
    last_seen: Arc<Mutex<Option<u64>>>,
}

/// The rules that apply to the entries of one folder, lowest first, with the path of that folder
/// from each rule file's folder.
pub struct FolderRules {
    rules: Vec<(Arc<Gitignore>, String)>,
}

impl FolderRules {
    /// Whether the entry `name` (a folder when `is_dir`) of this folder is ignored.
    pub fn ignores(&self, name: &str, is_dir: bool) -> bool {
        if is_dir && rules::same_name(name, "node_modules") {
            return true;
        }
        for (rules, from_rules) in self.rules.iter().rev() {
            match rules.matched(format!("{from_rules}{name}"), is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }
}

impl Ignores {
    /// The rules of the vault at `root`: its own `.gitignore` files, and those of the repository it
    /// lies in, if any.
    pub fn new(root: &Path) -> Ignores {
        Ignores {
            root: root.to_path_buf(),
            above: above(root),
            cache: Arc::default(),
            last_seen: Arc::default(),
        }
    }

    /// Whether the vault path `path` (a note, or a folder when `is_dir`) is ignored: itself, or any
    /// folder on the way to it.
    pub fn ignored(&self, path: &str, is_dir: bool) -> bool {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let mut folder = String::new();
        for (i, name) in parts.iter().enumerate() {
            let last = i + 1 == parts.len();
            if self.folder_rules(&folder).ignores(name, !last || is_dir) {
                return true;
            }
            if !folder.is_empty() {
                folder.push('/');
            }
            folder.push_str(name);
        }
        false
    }

    /// The rules for the entries of `folder` (a vault path, `""` for the top), which is taken to be
    /// not ignored itself.
    pub fn folder_rules(&self, folder: &str) -> FolderRules {
        let mut out = Vec::new();
        for source in &self.above {
            if let Some(rules) = self.load(&source.file, &source.dir) {
                let from = if folder.is_empty() {
                    source.prefix.clone()
                } else {
                    format!("{}{folder}/", source.prefix)
                };
                out.push((rules, from));
            }
        }
        let mut dir = self.root.clone();
        let mut rest: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
        rest.reverse();
        loop {
            if let Some(rules) = self.load(&dir.join(".gitignore"), &dir) {
                let from: Vec<&str> = rest.iter().rev().copied().collect();
                let from = if from.is_empty() {
                    String::new()
                } else {
                    format!("{}/", from.join("/"))
                };
                out.push((rules, from));
            }
            match rest.pop() {
                Some(next) => dir.push(next),
                None => break,
            }
        }
        FolderRules { rules: out }
    }

    /// Whether any rule file (above the vault, or in one of `folders`) changed since the last call;
    /// the first call answers false. A quick scan that finds the rules changed scans everything.
    pub fn changed_since_last_scan<'a>(&self, folders: impl Iterator<Item = &'a String>) -> bool {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for source in &self.above {
            source.file.hash(&mut hasher);
            stamp(&source.file).hash(&mut hasher);
        }
        let mut folders: Vec<&String> = folders.collect();
        folders.sort();
        for folder in folders {
            let file = self.root.join(folder).join(".gitignore");
            if let Some(stamp) = stamp(&file) {
                folder.hash(&mut hasher);
                stamp.hash(&mut hasher);
            }
        }
        let now = hasher.finish();
        let Ok(mut last) = self.last_seen.lock() else {
            return true;
        };
        let changed = last.is_some_and(|last| last != now);
        *last = Some(now);
        changed
    }

    /// The rules of one file (None: no such file, or nothing in it), read again when it changed.
    fn load(&self, file: &Path, dir: &Path) -> Option<Arc<Gitignore>> {
        let now = stamp(file);
        let mut cache = self.cache.lock().ok()?;
        if let Some((seen, rules)) = cache.get(file)
            && *seen == now
        {
            return rules.clone();
        }
        let rules = now.and_then(|_| read(file, dir)).map(Arc::new);
        cache.insert(file.to_path_buf(), (now, rules.clone()));
        rules
    }
}

fn stamp(file: &Path) -> Stamp {
    // A rule file is followed through a link, as git does; a folder or a missing file has none.
    let meta = fs::metadata(file).ok().filter(fs::Metadata::is_file)?;
    Some((meta.len(), meta.modified().ok()?))
}

/// Reads one rule file into a matcher rooted at `dir`. A pattern git would not take is skipped
/// (logged), as git skips it.
fn read(file: &Path, dir: &Path) -> Option<Gitignore> {
    let meta = fs::metadata(file).ok()?;
    if meta.len() > MAX_RULES_BYTES {
        tracing::warn!(file = %file.display(), "an ignore file over 1 MiB is not read");
        return None;
    }
    let text = fs::read(file).ok()?;
    let text = String::from_utf8_lossy(&text);
    let mut builder = GitignoreBuilder::new(dir);
    builder.case_insensitive(true).ok()?;
    for line in text.lines() {
        if let Err(error) = builder.add_line(Some(file.to_path_buf()), line) {
            tracing::debug!(file = %file.display(), %error, "an ignore pattern was skipped");
        }
    }
    let rules = builder.build().ok()?;
    (!rules.is_empty()).then_some(rules)
}

/// The rule files above the vault: when a folder above it (or the vault itself) holds `.git`, that
/// repository's `info/exclude` and the `.gitignore` of every folder from the repository's top down
/// to the vault's parent, lowest first.
fn above(root: &Path) -> Vec<IgnoreFile> {
    let Ok(root) = root.canonicalize() else {
        return Vec::new();
    };
    let Some(top) = root.ancestors().find(|dir| dir.join(".git").exists()) else {
        return Vec::new();
    };
    let Ok(inside) = root.strip_prefix(top) else {
        return Vec::new();
    };
    let names: Vec<String> = inside
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let prefix_from = |depth: usize| -> String { names[depth..].iter().map(|n| format!("{n}/")).collect() };
    let mut sources = Vec::new();
    if let Some(git_dir) = git_dir(top) {
        sources.push(IgnoreFile {
            file: git_dir.join("info").join("exclude"),
            dir: top.to_path_buf(),
            prefix: prefix_from(0),
        });
    }
    let mut dir = top.to_path_buf();
    for (depth, name) in names.iter().enumerate() {
        sources.push(IgnoreFile {
            file: dir.join(".gitignore"),
            dir: dir.clone(),
            prefix: prefix_from(depth),
        });
        dir.push(name);
    }
    sources
}

/// The repository's git folder: `.git` itself, or where a `.git` file (a worktree, a submodule)
/// points with `gitdir:`.
fn git_dir(top: &Path) -> Option<PathBuf> {
    let dot_git = top.join(".git");
    if dot_git.is_dir() {
        return Some(dot_git);
    }
    let text = fs::read_to_string(&dot_git).ok()?;
    let pointed = text.lines().find_map(|line| line.strip_prefix("gitdir:"))?.trim();
    Some(top.join(pointed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    #[test]
    fn node_modules_and_the_vaults_own_rules_at_any_depth() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".gitignore", "build/\n*.tmp.md\n/top-only.md\n");
        write(root, "docs/.gitignore", "drafts/\n!keep.tmp.md\n");
        let ignores = Ignores::new(root);
        for ignored in [
            "node_modules/pkg/README.md",
            "docs/Node_Modules/x.md",
            "build/out.md",
            "deep/build/out.md",
            "a.tmp.md",
            "top-only.md",
            "docs/drafts/d.md",
            "Build/out.md",
        ] {
            assert!(ignores.ignored(ignored, false), "{ignored}");
        }
        for kept in [
            "notes.md",
            "deep/top-only.md",
            "docs/keep.tmp.md",
            "drafts/d.md",
            "node_modules.md",
        ] {
            assert!(!ignores.ignored(kept, false), "{kept}");
        }
        assert!(ignores.ignored("build", true));
        assert!(!ignores.ignored("build", false), "build/ names folders only");
    }

    /// As in git, a `!pattern` does not bring back what lies in an ignored folder.
    #[test]
    fn nothing_comes_back_from_an_ignored_folder() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), ".gitignore", "out/\n!out/keep.md\n");
        write(dir.path(), "out/.gitignore", "!keep.md\n");
        assert!(Ignores::new(dir.path()).ignored("out/keep.md", false));
    }

    #[test]
    fn the_repositorys_rules_above_the_vault_apply_inside_it() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        fs::create_dir_all(repo.join(".git/info")).unwrap();
        write(repo, ".git/info/exclude", "secret.md\n");
        write(repo, ".gitignore", "/docs/vault/generated/\n");
        write(repo, "docs/.gitignore", "*.log.md\n");
        write(repo, "docs/vault/a.md", "a");
        let ignores = Ignores::new(&repo.join("docs/vault"));
        assert!(ignores.ignored("secret.md", false));
        assert!(ignores.ignored("x/secret.md", false));
        assert!(ignores.ignored("generated/g.md", false));
        assert!(ignores.ignored("run.log.md", false));
        assert!(!ignores.ignored("a.md", false));
        assert!(
            !ignores.ignored("docs/vault/generated/g.md", false),
            "rooted at the repository, not the vault"
        );
        // The vault's own rules win over the ones above it.
        write(repo, "docs/vault/.gitignore", "!run.log.md\n");
        assert!(!Ignores::new(&repo.join("docs/vault")).ignored("run.log.md", false));
    }

    /// Without a repository, rules above the vault are not the vault's.
    #[test]
    fn rules_above_a_vault_outside_any_repository_do_not_apply() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), ".gitignore", "*.md\n");
        write(dir.path(), "vault/a.md", "a");
        assert!(!Ignores::new(&dir.path().join("vault")).ignored("a.md", false));
    }

    #[test]
    fn a_changed_rule_file_is_read_again_and_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let ignores = Ignores::new(root);
        let folders = [String::new(), "sub".to_string()];
        assert!(!ignores.changed_since_last_scan(folders.iter()));
        assert!(!ignores.ignored("sub/a.md", false));
        write(root, "sub/.gitignore", "a.md\n");
        assert!(ignores.ignored("sub/a.md", false));
        assert!(ignores.changed_since_last_scan(folders.iter()));
        assert!(!ignores.changed_since_last_scan(folders.iter()));
        write(
            root,
            "sub/.gitignore",
            "b.md\n# longer, so the change shows whatever the clock\n",
        );
        assert!(!ignores.ignored("sub/a.md", false));
        assert!(ignores.ignored("sub/b.md", false));
        assert!(ignores.changed_since_last_scan(folders.iter()));
    }
}
