//! Text that agents (or sign-in clients) wrote, made safe to print in the owner's terminal.
//!
//! A proposal's diff, a connection's note, a client's name: any of it may hold terminal escapes
//! (`ESC[2K` erases the line the owner is reading, OSC sequences retitle the window or forge links)
//! or Unicode's bidirectional controls (which reorder what the owner sees). The owner's review must
//! show exactly what would be written, so every such character is printed as a visible escape
//! (`\x1b`, `\u{202e}`), never passed through. `text` keeps line breaks and tabs (a diff is lines);
//! `line` shows them escaped too, for what must stay on one line.

use std::borrow::Cow;

/// `text` with every control and bidirectional character but `\n` and `\t` shown escaped.
pub fn text(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t')
}

/// `text` on one line: every control and bidirectional character shown escaped, breaks included.
pub fn line(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

fn escape(text: &str, kept: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|c| hidden(c) && !kept(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !hidden(c) || kept(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

/// Whether a character changes how a terminal shows the text rather than being shown: C0 and C1
/// controls, DEL, and the bidirectional marks, embeddings, overrides and isolates.
fn hidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_bidi_controls_are_shown_not_obeyed() {
        assert_eq!(text("plain\ntext\tok"), "plain\ntext\tok");
        assert!(matches!(text("plain"), Cow::Borrowed(_)));
        assert_eq!(text("a\u{1b}[2Kb"), "a\\x1b[2Kb");
        assert_eq!(text("\u{1b}]0;title\u{7}"), "\\x1b]0;title\\x07");
        assert_eq!(text("x\u{9b}y"), "x\\u{9b}y");
        assert_eq!(text("evil\u{202e}txt.md"), "evil\\u{202e}txt.md");
        assert_eq!(text("cr\rover"), "cr\\x0dover");
        assert_eq!(line("two\nlines"), "two\\x0alines");
        assert_eq!(line("del\u{7f}"), "del\\x7f");
    }
}
