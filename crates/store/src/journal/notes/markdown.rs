//! What the journal reads from a note's markdown body: its first `# ` heading, its inline `#tags`
//! and its links, each link with the byte range it occupies in the file.
//!
//! Read from pulldown-cmark's events and their offsets, never with a pattern over the raw text: a
//! `#word` or `[[name]]` inside a code block or inline code is not a tag or a link, and the byte
//! ranges let later moves rewrite exactly the link they mean. This module does not decide anything
//! about access or paths beyond resolving a relative link against the note's folder.

use std::collections::HashSet;

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};
use serde::{Deserialize, Serialize};

/// How a link is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// `[[target]]`, `[[target|alias]]`, `[[target#heading]]`.
    Wiki,
    /// `![[target]]`.
    Embed,
    /// `[text](relative/path.md)`.
    Markdown,
}

/// One link from a note to another file of the vault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    pub kind: LinkKind,
    /// For wikilinks the name as written (`People/Ana` or `Ana`); for markdown links the path
    /// resolved against the note's folder (`People/ana.md`).
    pub target: String,
    /// The `#heading` part, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heading: Option<String>,
    /// Byte offsets of the whole link in the file.
    pub start: usize,
    pub end: usize,
}

/// What a body yields.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct BodyFacts {
    /// The text of the first level-one heading.
    pub heading: Option<String>,
    /// Inline tags without their `#`, in order of first appearance, each once.
    pub tags: Vec<String>,
    pub links: Vec<Link>,
}

/// Reads a body that starts at byte `offset` of its file, for a note in `folder`.
pub fn read_body(body: &str, offset: usize, folder: &str) -> BodyFacts {
    let mut facts = BodyFacts::default();
    let mut seen_tags = HashSet::new();
    let options = Options::ENABLE_WIKILINKS | Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut in_code = 0usize;
    let mut heading: Option<String> = None;
    let mut in_first_heading = false;
    for (event, range) in Parser::new_ext(body, options).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_code += 1,
            Event::End(TagEnd::CodeBlock) => in_code = in_code.saturating_sub(1),
            Event::Start(Tag::Heading {
                level: pulldown_cmark::HeadingLevel::H1,
                ..
            }) if facts.heading.is_none() && heading.is_none() => {
                heading = Some(String::new());
                in_first_heading = true;
            }
            Event::End(TagEnd::Heading(_)) if in_first_heading => {
                in_first_heading = false;
                facts.heading = heading.take().map(|h| h.trim().to_string()).filter(|h| !h.is_empty());
            }
            Event::Text(text) => {
                if in_first_heading && let Some(h) = heading.as_mut() {
                    h.push_str(&text);
                }
                if in_code == 0 {
                    inline_tags(body, range.start, &text, &mut facts.tags, &mut seen_tags);
                }
            }
            Event::Code(text) if in_first_heading => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&text);
                }
            }
            Event::Start(Tag::Link {
                link_type, dest_url, ..
            })
            | Event::Start(Tag::Image {
                link_type, dest_url, ..
            }) => {
                let embed = body[range.clone()].starts_with('!');
                if let Some(link) = link_of(link_type, &dest_url, embed, folder) {
                    facts.links.push(Link {
                        start: offset + range.start,
                        end: offset + range.end,
                        ..link
                    });
                }
            }
            _ => {}
        }
    }
    facts
}

/// Where an inline link or image names a relative file: the byte range of its destination as
/// written (still percent-encoded, without `<>`), for rewriting when what it names moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub start: usize,
    pub end: usize,
}

/// Every inline link and image of a body (starting at byte `offset` of its file) whose destination
/// is a relative path, whatever it names (a note, an image, a PDF). Reference-style links and
/// URLs are left out: their destinations are not inside the link, or do not name a vault file.
pub fn relative_destinations(body: &str, offset: usize) -> Vec<Destination> {
    let options = Options::ENABLE_WIKILINKS | Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut found = Vec::new();
    for (event, _) in Parser::new_ext(body, options).into_offset_iter() {
        let (Event::Start(Tag::Link {
            link_type, dest_url, ..
        })
        | Event::Start(Tag::Image {
            link_type, dest_url, ..
        })) = event
        else {
            continue;
        };
        if link_type != LinkType::Inline {
            continue;
        }
        // Where the parser read the destination: exactly, from the text it borrowed. A destination
        // the parser had to rewrite (escapes, entities) is not in the text as written: left alone,
        // as is one found by searching the link's text, which nested brackets can fool.
        let Some(start) = borrowed_at(body, &dest_url) else {
            continue;
        };
        let raw = &body[start..start + dest_url.len()];
        let path = raw.split('#').next().unwrap_or("");
        if path.is_empty() || path.starts_with('/') || path.contains(':') {
            continue;
        }
        // Brackets or a backtick in a path are markdown read as a destination by accident (no tool
        // writes them there): rewriting them would change how the text around reads.
        if path.contains(['[', ']', '`']) {
            continue;
        }
        found.push(Destination {
            start: offset + start,
            end: offset + start + raw.len(),
        });
    }
    found
}

/// Where in `body` the parser's text `part` lies, when it borrowed it from `body` as written.
fn borrowed_at(body: &str, part: &CowStr<'_>) -> Option<usize> {
    let CowStr::Borrowed(text) = part else {
        return None;
    };
    let start = (text.as_ptr() as usize).checked_sub(body.as_ptr() as usize)?;
    (start + text.len() <= body.len() && body.get(start..start + text.len()) == Some(*text)).then_some(start)
}

/// A link event as a vault link, or None for links that leave the vault (URLs, anchors, mail).
fn link_of(link_type: LinkType, dest: &str, embed: bool, folder: &str) -> Option<Link> {
    let (target, heading) = match dest.split_once('#') {
        Some((target, heading)) => (target, Some(heading.to_string()).filter(|h| !h.is_empty())),
        None => (dest, None),
    };
    match link_type {
        LinkType::WikiLink { .. } => {
            let target = target.trim();
            (!target.is_empty()).then(|| Link {
                kind: if embed { LinkKind::Embed } else { LinkKind::Wiki },
                target: target.to_string(),
                heading,
                start: 0,
                end: 0,
            })
        }
        LinkType::Inline | LinkType::Reference | LinkType::Collapsed | LinkType::Shortcut => {
            let decoded = percent_decode(target);
            let resolved = resolve_relative(folder, &decoded)?;
            (!embed && resolved.ends_with(".md")).then_some(Link {
                kind: LinkKind::Markdown,
                target: resolved,
                heading,
                start: 0,
                end: 0,
            })
        }
        _ => None,
    }
}

/// Resolves a relative link against a folder; None for a URL, an absolute path or one that climbs
/// out of the vault.
pub fn resolve_relative(folder: &str, target: &str) -> Option<String> {
    if target.is_empty() || target.starts_with('/') || target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// A relative destination that climbs out of the vault from `folder`: how many folders above the
/// vault's root it goes, and the path from there (`(1, "Plan.md")` for `../Plan.md` from the
/// root). None for one that stays inside (see `resolve_relative`), a URL or an absolute path.
pub fn above_the_vault(folder: &str, target: &str) -> Option<(usize, String)> {
    if target.is_empty() || target.starts_with('/') || target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    let mut above = 0;
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    above += 1;
                }
            }
            other => parts.push(other),
        }
    }
    (above > 0).then(|| (above, parts.join("/")))
}

/// `%20` and the like in a markdown link's destination (spaces in file names are common).
pub fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_string();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// At most this many tags are read from one note (the first ones): a note is filed under a few
/// tags, and 11,000 of them in 55 KB are a way to make every check of the note slow.
pub const MAX_TAGS: usize = 1000;

/// Whether a character may be part of a tag: letters, digits, `_`, `-` and `/` (nested tags).
fn tag_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-' || c == '/'
}

/// Finds `#tag`s in one text event. A tag starts after whitespace (or at the start of the body, or
/// of the event when the file has whitespace before it) and holds at least one non-digit: `#42` is
/// an issue number, not a tag.
fn inline_tags(body: &str, event_start: usize, text: &str, tags: &mut Vec<String>, seen: &mut HashSet<String>) {
    let mut previous: Option<char> = body[..event_start].chars().next_back();
    for (at, c) in text.char_indices() {
        let boundary = previous.is_none_or(char::is_whitespace);
        previous = Some(c);
        if c != '#' || !boundary {
            continue;
        }
        let rest = &text[at + 1..];
        let len: usize = rest.chars().take_while(|c| tag_char(*c)).map(char::len_utf8).sum();
        let tag = rest[..len].trim_end_matches('/');
        if tags.len() < MAX_TAGS
            && !tag.is_empty()
            && !tag.chars().all(|c| c.is_ascii_digit())
            && seen.insert(tag.into())
        {
            tags.push(tag.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_first_heading_tags_and_links_but_nothing_inside_code() {
        let body = "intro #first and #42 and a#b\n\n# The *Alpha* plan\n\nSee [[Beta]], [[People/Ana|Ana]] and \
                    [[Gamma#Risks]] and ![[diagram.png]].\n\n[ana](../People/ana%20b.md) [web](https://x.org) \
                    [top](#intro)\n\n```\n#not-a-tag [[not-a-link]]\n```\n\n`#inline [[code]]` #nested/tag #ü-tag\n\n# Second\n";
        let facts = read_body(body, 10, "Projects/Alpha");
        assert_eq!(facts.heading.as_deref(), Some("The Alpha plan"));
        assert_eq!(facts.tags, ["first", "nested/tag", "ü-tag"]);
        let targets: Vec<(&str, LinkKind, Option<&str>)> = facts
            .links
            .iter()
            .map(|l| (l.target.as_str(), l.kind, l.heading.as_deref()))
            .collect();
        assert_eq!(
            targets,
            [
                ("Beta", LinkKind::Wiki, None),
                ("People/Ana", LinkKind::Wiki, None),
                ("Gamma", LinkKind::Wiki, Some("Risks")),
                ("diagram.png", LinkKind::Embed, None),
                ("Projects/People/ana b.md", LinkKind::Markdown, None),
            ]
        );
        let beta = &facts.links[0];
        assert_eq!(&body[beta.start - 10..beta.end - 10], "[[Beta]]");
        let ana = &facts.links[1];
        assert_eq!(&body[ana.start - 10..ana.end - 10], "[[People/Ana|Ana]]");
    }

    #[test]
    fn relative_destinations_are_found_exactly_and_urls_left_out() {
        let body = "[a](../x%20y.md#h \"t\") ![i](<img 1.png>) [w](https://x.org/a.md) [m](mailto:a@b) \
                    [top](#h) [[wiki]] [r][ref] `[c](code.md)`\n\n[ref]: ref.md\n";
        let found: Vec<&str> = relative_destinations(body, 0)
            .iter()
            .map(|d| &body[d.start..d.end])
            .collect();
        assert_eq!(found, ["../x%20y.md#h", "img 1.png"]);
        let shifted = relative_destinations(body, 7);
        assert_eq!(shifted[0].start, relative_destinations(body, 0)[0].start + 7);
        // The destination the parser read, balanced parentheses and all; none with brackets in it
        // (markdown read as a destination by accident), and none the parser had to unescape.
        let tangled = "[x](a[x](Notes/Plan)a) [p](Meeting(1).md) [e](a\\(b.md)";
        let found: Vec<&str> = relative_destinations(tangled, 0)
            .iter()
            .map(|d| &tangled[d.start..d.end])
            .collect();
        assert_eq!(found, ["Meeting(1).md"]);
    }

    #[test]
    fn relative_links_stay_inside_the_vault() {
        assert_eq!(resolve_relative("a/b", "../c.md").as_deref(), Some("a/c.md"));
        assert_eq!(resolve_relative("", "./c.md").as_deref(), Some("c.md"));
        assert_eq!(resolve_relative("", "../c.md"), None);
        assert_eq!(resolve_relative("a", "/etc/passwd"), None);
        assert_eq!(resolve_relative("a", "http://x/y.md"), None);
    }

    #[test]
    fn odd_input_never_panics() {
        for body in [
            "#",
            "# ",
            "[[",
            "[[]]",
            "![[|]]",
            "#\u{301}",
            "%",
            "[x](%zz.md)",
            "\u{feff}#a",
        ] {
            let _ = read_body(body, 0, "");
        }
        assert_eq!(read_body("#a #a #b", 0, "").tags, ["a", "b"]);
    }
}
