//! The unified diff of a note before and after a change, as the owner reviews it (a proposal, a
//! version in the note's history) and as `git diff` would print it.

use std::time::Duration;

use similar::TextDiff;

/// Lines of context around each change.
const CONTEXT: usize = 3;
/// A diff of two large, very different notes stops looking for the smallest diff after this long
/// and answers a correct, larger one.
const DEADLINE: Duration = Duration::from_secs(1);

/// The unified diff from `before` (None: no note there) to `after` (None: the note is gone) of the
/// note at `path`. Empty when nothing changed.
pub fn unified(path: &str, before: Option<&str>, after: Option<&str>) -> String {
    let old = before.unwrap_or("");
    let new = after.unwrap_or("");
    let diff = TextDiff::configure().timeout(DEADLINE).diff_lines(old, new);
    let from = if before.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".into()
    };
    let to = if after.is_some() {
        format!("b/{path}")
    } else {
        "/dev/null".into()
    };
    diff.unified_diff()
        .context_radius(CONTEXT)
        .header(&from, &to)
        .missing_newline_hint(true)
        .to_string()
}

/// The diff of a note moved from `from` to `to`, as `git diff` prints a rename: the two paths, then
/// what changed in the text on the way (its links), if anything.
pub fn moved(from: &str, to: &str, before: Option<&str>, after: Option<&str>) -> String {
    let old = before.unwrap_or("");
    let new = after.unwrap_or("");
    let mut out = format!("rename from {from}\nrename to {to}\n");
    if old != new {
        let diff = TextDiff::configure().timeout(DEADLINE).diff_lines(old, new);
        out.push_str(
            &diff
                .unified_diff()
                .context_radius(CONTEXT)
                .header(&format!("a/{from}"), &format!("b/{to}"))
                .missing_newline_hint(true)
                .to_string(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_a_change_with_its_context() {
        let diff = unified("a.md", Some("one\ntwo\nthree\n"), Some("one\n2\nthree\n"));
        assert_eq!(
            diff,
            "--- a/a.md\n+++ b/a.md\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
        );
    }

    #[test]
    fn a_new_note_and_a_removed_one_diff_against_nothing() {
        let created = unified("n.md", None, Some("# N\n"));
        assert!(created.starts_with("--- /dev/null\n+++ b/n.md\n"), "{created}");
        assert!(created.contains("+# N\n"));
        let removed = unified("n.md", Some("# N\n"), None);
        assert!(removed.starts_with("--- a/n.md\n+++ /dev/null\n"), "{removed}");
        assert!(removed.contains("-# N\n"));
        assert_eq!(unified("same.md", Some("x\n"), Some("x\n")), "");
    }

    #[test]
    fn a_missing_final_newline_is_marked() {
        let diff = unified("a.md", Some("one"), Some("one\ntwo"));
        assert!(diff.contains("\\ No newline at end of file"), "{diff}");
    }
}
