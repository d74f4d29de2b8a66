//! How a user's shell runs this very program, for the commands a banner prints: `journal` when
//! that name on PATH is this program, otherwise its path (relative to the working folder when it
//! is inside it, as after `cargo run --release`). A new user who started the demo with cargo has no
//! `journal` on PATH yet, and a command that answers "command not found" is a dead end.

use std::path::{Path, PathBuf};

/// How to run this program: `journal`, or a path such as `./target/release/journal`.
pub fn command() -> String {
    let Ok(exe) = std::env::current_exe().and_then(|p| p.canonicalize()) else {
        return "journal".into();
    };
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("journal"))
            .find(|candidate| candidate.is_file())
            .and_then(|found| found.canonicalize().ok())
    });
    let cwd = std::env::current_dir().and_then(|p| p.canonicalize()).ok();
    choose(&exe, on_path.as_deref(), cwd.as_deref())
}

/// The rule: the bare name when the first `journal` on PATH is `exe`; else `exe`, as `./relative`
/// when it lies under `cwd`, or as its whole path (quoted when it holds a space).
fn choose(exe: &Path, on_path: Option<&Path>, cwd: Option<&Path>) -> String {
    if on_path == Some(exe) {
        return "journal".into();
    }
    let shown: PathBuf = match cwd.and_then(|cwd| exe.strip_prefix(cwd).ok()) {
        Some(relative) => Path::new(".").join(relative),
        None => exe.to_path_buf(),
    };
    let shown = shown.display().to_string();
    if shown.contains(char::is_whitespace) {
        format!("'{shown}'")
    } else {
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bare_name_only_when_path_finds_this_program() {
        let exe = Path::new("/home/u/src/journal/target/release/journal");
        assert_eq!(
            choose(exe, Some(exe), Some(Path::new("/home/u/src/journal"))),
            "journal"
        );
        assert_eq!(
            choose(exe, None, Some(Path::new("/home/u/src/journal"))),
            "./target/release/journal",
            "after cargo run, from the checkout"
        );
        assert_eq!(
            choose(
                exe,
                Some(Path::new("/usr/local/bin/journal")),
                Some(Path::new("/home/u/src/journal"))
            ),
            "./target/release/journal",
            "another journal on PATH is not this one"
        );
        assert_eq!(
            choose(exe, None, Some(Path::new("/tmp"))),
            "/home/u/src/journal/target/release/journal"
        );
        assert_eq!(choose(Path::new("/my apps/journal"), None, None), "'/my apps/journal'");
    }
}
