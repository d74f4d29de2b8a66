//! Changing a note's text as the write tools ask: plain functions from (the file's text, the
//! request) to the new text, with no files, grants or clocks, so that every rule here is tested
//! on its own and a proposal's diff is computed by the same code that later applies it.
//!
//! Frontmatter is edited as text, a top-level key's lines at a time, so that the owner's comments,
//! order and quoting of every other key survive an agent's change. Every frontmatter edit is then
//! checked by reading the result back with the notes' own reader: the keys asked for hold exactly
//! the values asked for, every other key is as it was, and the protected keys (`access`,
//! `agent_overrides`) are untouched by any edit, of the frontmatter or of the body (a body edit at
//! the top of a note without frontmatter could otherwise write one). An edit that cannot be made
//! this way fails with a message and changes nothing.

use serde_json::{Map, Value};

use super::flat;
use super::note::OVERRIDES_KEY;
use crate::journal::frontmatter;

/// Keys no agent may create, change or delete: they decide what agents may see and do.
pub const PROTECTED_KEYS: [&str; 2] = ["access", OVERRIDES_KEY];

/// The most bytes a frontmatter key may have.
const MAX_KEY_BYTES: usize = 128;

/// Why an edit was not made. The text is for the agent: what was wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The request does not fit the note (an anchor that is not there, an ambiguous heading).
    #[error("{0}")]
    Invalid(String),
    /// The request would change a protected key.
    #[error("the {0} key decides what agents may see and do: no agent may set, change or remove it")]
    Protected(String),
}

fn invalid(text: impl Into<String>) -> EditError {
    EditError::Invalid(text.into())
}

/// A note's text in its parts: an optional byte-order mark, the frontmatter's YAML (without its
/// `---` lines) and the body, with the line ending the file uses.
struct Parts<'a> {
    bom: bool,
    yaml: Option<&'a str>,
    body: &'a str,
    newline: &'static str,
}

fn parts(text: &str) -> Result<Parts<'_>, EditError> {
    let bom = text.starts_with('\u{feff}');
    let unmarked = text.strip_prefix('\u{feff}').unwrap_or(text);
    let newline = if unmarked.contains("\r\n") { "\r\n" } else { "\n" };
    if unmarked.starts_with("---\n") || unmarked.starts_with("---\r\n") {
        let (yaml, body) = frontmatter::split(unmarked).map_err(|e| {
            invalid(format!(
                "the note's frontmatter cannot be read ({e}); the owner must fix it first"
            ))
        })?;
        Ok(Parts {
            bom,
            yaml: Some(yaml),
            body,
            newline,
        })
    } else {
        Ok(Parts {
            bom,
            yaml: None,
            body: unmarked,
            newline,
        })
    }
}

fn join(bom: bool, yaml: Option<&str>, body: &str, newline: &str) -> String {
    let mut out = String::with_capacity(body.len() + yaml.map_or(0, str::len) + 16);
    if bom {
        out.push('\u{feff}');
    }
    if let Some(yaml) = yaml {
        out.push_str("---");
        out.push_str(newline);
        out.push_str(yaml);
        if !yaml.is_empty() && !yaml.ends_with('\n') {
            out.push_str(newline);
        }
        out.push_str("---");
        out.push_str(newline);
    }
    out.push_str(body);
    out
}

/// The frontmatter as data, read as the notes' reader reads it (`agent_overrides` included).
pub fn frontmatter_of(text: &str) -> Result<Map<String, Value>, EditError> {
    read_map(text).map_err(|reason| {
        invalid(format!(
            "the note's frontmatter cannot be read ({reason}); the owner must fix it first"
        ))
    })
}

/// `frontmatter_of`, with the bare reason it fails.
fn read_map(text: &str) -> Result<Map<String, Value>, String> {
    let unmarked = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !(unmarked.starts_with("---\n") || unmarked.starts_with("---\r\n")) {
        return Ok(Map::new());
    }
    let (yaml, _) = frontmatter::split(unmarked).map_err(|e| e.to_string())?;
    if let Some(map) = flat::read(yaml) {
        return Ok(map);
    }
    match frontmatter::parse::<Value>(unmarked) {
        Ok((Value::Object(map), _)) => Ok(map),
        Ok((Value::Null, _)) => Ok(Map::new()),
        Ok(_) => Err("it is not key: value lines".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// The body of a note's text (what follows its frontmatter).
pub fn body_of(text: &str) -> Result<&str, EditError> {
    Ok(parts(text)?.body)
}

/// Whether a key is protected, in any case (`Access` reads as `access` to some tools).
pub fn is_protected(key: &str) -> bool {
    PROTECTED_KEYS.iter().any(|p| p.eq_ignore_ascii_case(key.trim()))
}

/// Checks that `after` holds the protected keys exactly as `before` did (`before` is None for a
/// new note, which may hold none).
pub fn check_protected(before: Option<&str>, after: &str) -> Result<(), EditError> {
    let old = match before {
        Some(text) => frontmatter_of(text)?,
        None => Map::new(),
    };
    let new =
        read_map(after).map_err(|reason| invalid(format!("the result would not be a readable note: {reason}")))?;
    for key in old.keys().chain(new.keys()) {
        if is_protected(key) && old.get(key) != new.get(key) {
            return Err(EditError::Protected(key.trim().to_lowercase()));
        }
    }
    Ok(())
}

/// A new note's text, checked: its frontmatter (if any) must read, and hold no protected key.
pub fn create(content: &str) -> Result<String, EditError> {
    frontmatter_of(content)?;
    check_protected(None, content)?;
    Ok(content.to_string())
}

/// The note with its body replaced and its frontmatter kept.
pub fn replace_body(text: &str, body: &str) -> Result<String, EditError> {
    let p = parts(text)?;
    let result = join(p.bom, p.yaml, body, p.newline);
    check_protected(Some(text), &result)?;
    Ok(result)
}

/// The note with `addition` after its body; with `ensure_newline`, on a line of its own.
pub fn append(text: &str, addition: &str, ensure_newline: bool) -> Result<String, EditError> {
    let p = parts(text)?;
    let mut body = p.body.to_string();
    if ensure_newline && !body.is_empty() && !body.ends_with('\n') {
        body.push_str(p.newline);
    }
    body.push_str(addition);
    let result = join(p.bom, p.yaml, &body, p.newline);
    check_protected(Some(text), &result)?;
    Ok(result)
}

/// What the frontmatter editor keeps, whatever the note's text (the fuzz target `note_edit` and its
/// proptest twin check it): no panic; setting a plain key either is refused or gives a note whose
/// frontmatter holds exactly that value under the key, with the body as it was. Panics with the
/// input when one does not hold.
pub fn check_patch(text: &str, key: &str, value: &str) {
    if is_protected(key) {
        return;
    }
    let mut patch = Map::new();
    patch.insert(key.to_string(), Value::String(value.to_string()));
    let Ok(patched) = patch_frontmatter(text, &patch) else {
        return;
    };
    let map = frontmatter_of(&patched).unwrap_or_else(|e| panic!("{text:?} + {key:?}: {e}"));
    assert_eq!(
        map.get(key),
        Some(&Value::String(value.to_string())),
        "{text:?} + {key:?} gave {patched:?}"
    );
    // The body as a reader sees it: after the frontmatter, or the whole text but for one leading
    // byte order mark (a second mark is the body's own, so its `---` is not frontmatter).
    let body = |t: &str| match crate::journal::frontmatter::split(t) {
        Ok((_, body)) => body.to_string(),
        Err(_) => t.strip_prefix('\u{feff}').unwrap_or(t).to_string(),
    };
    assert_eq!(body(&patched), body(text), "{text:?} + {key:?}");
}

/// The note with its frontmatter's keys set (a `null` removes the key). Keys not named keep their
/// lines as they were.
pub fn patch_frontmatter(text: &str, patch: &Map<String, Value>) -> Result<String, EditError> {
    for key in patch.keys() {
        check_key(key)?;
        if is_protected(key) {
            return Err(EditError::Protected(key.trim().to_lowercase()));
        }
    }
    let before = frontmatter_of(text)?;
    let p = parts(text)?;
    let mut lines: Vec<String> = p.yaml.unwrap_or("").split_inclusive('\n').map(str::to_string).collect();
    for (key, value) in patch {
        let block = find_block(&lines, key);
        match (block, value) {
            (Some((start, end)), Value::Null) => {
                lines.drain(start..end);
            }
            (None, Value::Null) => {}
            (Some((start, end)), value) => {
                let rendered = render_entry(key, value, p.newline);
                lines.splice(start..end, [rendered]);
            }
            (None, value) => {
                if let Some(last) = lines.last_mut()
                    && !last.ends_with('\n')
                {
                    last.push_str(p.newline);
                }
                lines.push(render_entry(key, value, p.newline));
            }
        }
    }
    let yaml = lines.concat();
    let keep_block = p.yaml.is_some() || !yaml.trim().is_empty();
    let result = join(p.bom, keep_block.then_some(yaml.as_str()), p.body, p.newline);
    // Read back: exactly the asked-for change, nothing else.
    let after = frontmatter_of(&result).map_err(|_| unsafe_to_edit())?;
    let mut expected = before;
    for (key, value) in patch {
        if value.is_null() {
            expected.remove(key);
        } else {
            expected.insert(key.clone(), value.clone());
        }
    }
    if after != expected {
        return Err(unsafe_to_edit());
    }
    check_protected(Some(text), &result)?;
    Ok(result)
}

fn unsafe_to_edit() -> EditError {
    invalid(
        "the note's frontmatter is written in a way this change cannot be made to safely (anchors, merges or \
         several documents); change the body instead, or ask the owner to edit it",
    )
}

fn check_key(key: &str) -> Result<(), EditError> {
    if key.trim().is_empty() || key.len() > MAX_KEY_BYTES || key.chars().any(char::is_control) || key != key.trim() {
        return Err(invalid(format!(
            "\"{}\" is not a frontmatter key: 1 to {MAX_KEY_BYTES} bytes, no control characters, no spaces at either end",
            key.chars().take(40).collect::<String>()
        )));
    }
    Ok(())
}

/// The lines `[start, end)` of a top-level key's entry: its own line, then every line that is
/// indented, a sequence item at the margin (`- x`, which YAML allows under a key) or blank and
/// followed by more of the entry.
fn find_block(lines: &[String], key: &str) -> Option<(usize, usize)> {
    let start = lines.iter().position(|line| key_of(line).as_deref() == Some(key))?;
    let mut end = start + 1;
    let mut last_content = end;
    while end < lines.len() {
        let line = lines[end].trim_end_matches(['\n', '\r']);
        if line.starts_with([' ', '\t']) || line == "-" || line.starts_with("- ") {
            end += 1;
            last_content = end;
        } else if line.trim().is_empty() {
            end += 1;
        } else {
            break;
        }
    }
    // Blank lines after the entry belong to the space between entries, not to it.
    Some((start, last_content))
}

/// The key a top-level line names: `key: ...`, `"key": ...` or `'key': ...`.
fn key_of(line: &str) -> Option<String> {
    let line = line.trim_end_matches(['\n', '\r']);
    if line.starts_with([' ', '\t', '#', '-']) || line.is_empty() {
        return None;
    }
    if let Some(rest) = line.strip_prefix('"') {
        let end = rest.find("\":").or_else(|| rest.strip_suffix("\":").map(str::len))?;
        return serde_json::from_str::<String>(&format!("\"{}\"", &rest[..end])).ok();
    }
    if let Some(rest) = line.strip_prefix('\'') {
        let end = rest.find("':")?;
        return Some(rest[..end].replace("''", "'"));
    }
    let colon = line.find(": ").or_else(|| line.strip_suffix(':').map(str::len))?;
    Some(line[..colon].trim_end().to_string())
}

/// One `key: value` entry, as YAML that reads back as `value`: plain words stay plain, anything
/// else is written as JSON (which YAML reads as the same value).
fn render_entry(key: &str, value: &Value, newline: &str) -> String {
    let key = if plain_safe(key) {
        key.to_string()
    } else {
        Value::String(key.to_string()).to_string()
    };
    format!("{key}: {}{newline}", render_value(value))
}

fn render_value(value: &Value) -> String {
    match value {
        Value::String(text) if plain_safe(text) => text.clone(),
        Value::Array(items) if items.iter().all(|i| matches!(i, Value::String(s) if plain_safe(s))) => {
            let items: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// Whether a text can be written unquoted, in a block or a flow, and read back as the same string.
fn plain_safe(text: &str) -> bool {
    const SPECIAL: [&str; 12] = [
        "true", "false", "yes", "no", "on", "off", "null", "y", "n", "nan", "inf", "~",
    ];
    let mut chars = text.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    first.is_alphabetic()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '_' | '-' | '.' | '/'))
        && !text.ends_with(' ')
        && !SPECIAL.contains(&text.to_lowercase().as_str())
}

/// Where a section edit applies.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// A substring of the body that occurs exactly once.
    Anchor(String),
    /// A heading (`## Plans`, `Plans`) or a path of headings (`# Project > ## Plans`).
    Heading(String),
}

/// What a section edit does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SectionOp {
    Replace,
    InsertBefore,
    InsertAfter,
    /// At the end of a heading's section, before the next heading.
    AppendWithin,
}

impl SectionOp {
    pub fn parse(text: &str) -> Option<SectionOp> {
        match text {
            "replace" => Some(SectionOp::Replace),
            "insert_before" => Some(SectionOp::InsertBefore),
            "insert_after" => Some(SectionOp::InsertAfter),
            "append_within" => Some(SectionOp::AppendWithin),
            _ => None,
        }
    }
}

/// The note with one part of its body changed. Ambiguity always fails: an anchor must occur once,
/// a heading must name one section.
pub fn edit_section(text: &str, place: &Place, op: SectionOp, content: &str) -> Result<String, EditError> {
    let p = parts(text)?;
    let body = p.body;
    let new_body = match place {
        Place::Anchor(anchor) => {
            if anchor.is_empty() {
                return Err(invalid(
                    "anchor is empty: give a piece of the note's text that occurs once",
                ));
            }
            if op == SectionOp::AppendWithin {
                return Err(invalid("append_within needs a heading, not an anchor"));
            }
            let found: Vec<usize> = body.match_indices(anchor.as_str()).map(|(at, _)| at).collect();
            let at = match found.as_slice() {
                [one] => *one,
                [] => {
                    return Err(invalid(
                        "the anchor does not occur in the note's body; read the note again",
                    ));
                }
                many => {
                    return Err(invalid(format!(
                        "the anchor occurs {} times in the note's body; give a longer one that occurs once",
                        many.len()
                    )));
                }
            };
            let end = at + anchor.len();
            match op {
                SectionOp::Replace => format!("{}{content}{}", &body[..at], &body[end..]),
                SectionOp::InsertBefore => format!("{}{content}{}", &body[..at], &body[at..]),
                SectionOp::InsertAfter => format!("{}{content}{}", &body[..end], &body[end..]),
                SectionOp::AppendWithin => unreachable!("refused above"),
            }
        }
        Place::Heading(spec) => {
            let (start, end) = find_section(body, spec)?;
            let block = as_block(content, p.newline);
            match op {
                SectionOp::Replace => format!("{}{block}{}", &body[..start], &body[end..]),
                SectionOp::InsertBefore => format!("{}{block}{}", &body[..start], &body[start..]),
                SectionOp::InsertAfter | SectionOp::AppendWithin => {
                    // The section ends where the next heading starts; a section at the end of a body
                    // without a final newline gets one first.
                    let before = &body[..end];
                    let glue = if !before.is_empty() && !before.ends_with('\n') && !block.is_empty() {
                        p.newline
                    } else {
                        ""
                    };
                    format!("{before}{glue}{block}{}", &body[end..])
                }
            }
        }
    };
    let result = join(p.bom, p.yaml, &new_body, p.newline);
    check_protected(Some(text), &result)?;
    Ok(result)
}

/// Content placed between lines: ends with a line ending (unless empty).
fn as_block(content: &str, newline: &str) -> String {
    if content.is_empty() || content.ends_with('\n') {
        content.to_string()
    } else {
        format!("{content}{newline}")
    }
}

/// A heading line of the body: its byte range start, level and text.
#[derive(Debug, Clone)]
struct Heading {
    start: usize,
    level: usize,
    text: String,
}

/// The ATX headings of a body, outside fenced code blocks.
fn headings(body: &str) -> Vec<Heading> {
    let mut found = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_end_matches(['\n', '\r']);
        let indent = trimmed.len() - trimmed.trim_start_matches(' ').len();
        let unindented = &trimmed[indent..];
        if indent <= 3 {
            let marker = unindented.chars().next();
            if let Some(mark @ ('`' | '~')) = marker {
                let run = unindented.chars().take_while(|c| *c == mark).count();
                if run >= 3 {
                    match fence {
                        None => fence = Some((mark, run)),
                        Some((open, len)) if open == mark && run >= len && unindented[run..].trim().is_empty() => {
                            fence = None;
                        }
                        Some(_) => {}
                    }
                    continue;
                }
            }
        }
        if fence.is_some() || indent > 3 {
            continue;
        }
        if let Some(heading) = atx(unindented) {
            found.push(Heading {
                start,
                level: heading.0,
                text: heading.1,
            });
        }
    }
    found
}

/// `## Text ##` as (2, "Text").
fn atx(line: &str) -> Option<(usize, String)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &line[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let text = rest.trim();
    let text = text.trim_end_matches('#').trim_end();
    Some((level, text.to_string()))
}

/// One step of a heading path: an optional level and the text.
fn step(spec: &str) -> (Option<usize>, String) {
    let spec = spec.trim();
    match atx(spec) {
        Some((level, text)) if spec.starts_with('#') => (Some(level), text),
        _ => (None, spec.to_string()),
    }
}

/// The byte range of the one section `spec` names.
fn find_section(body: &str, spec: &str) -> Result<(usize, usize), EditError> {
    let steps: Vec<(Option<usize>, String)> = spec.split(" > ").map(step).collect();
    if steps.iter().any(|(_, text)| text.is_empty()) {
        return Err(invalid(
            "heading is empty: give it as \"## Plans\" or \"# Project > ## Plans\"",
        ));
    }
    let all = headings(body);
    let end_of = |i: usize| -> usize {
        all[i + 1..]
            .iter()
            .find(|h| h.level <= all[i].level)
            .map_or(body.len(), |h| h.start)
    };
    let matches = |h: &Heading, (level, text): &(Option<usize>, String)| {
        level.is_none_or(|l| l == h.level) && h.text.to_lowercase() == text.to_lowercase()
    };
    // Sections matching the whole path: each step inside the previous step's section.
    let mut candidates: Vec<usize> = (0..all.len()).filter(|&i| matches(&all[i], &steps[0])).collect();
    for wanted in &steps[1..] {
        let mut next = Vec::new();
        for &outer in &candidates {
            let limit = end_of(outer);
            for (i, inner) in all.iter().enumerate().skip(outer + 1) {
                if inner.start >= limit {
                    break;
                }
                if inner.level > all[outer].level && matches(inner, wanted) {
                    next.push(i);
                }
            }
        }
        candidates = next;
    }
    match candidates.as_slice() {
        [one] => Ok((all[*one].start, end_of(*one))),
        [] => {
            let known: Vec<String> = all
                .iter()
                .take(20)
                .map(|h| format!("{} {}", "#".repeat(h.level), h.text))
                .collect();
            Err(invalid(if known.is_empty() {
                "the note has no headings; use an anchor instead".to_string()
            } else {
                format!(
                    "no heading matches \"{spec}\"; the note's headings are: {}",
                    known.join(", ")
                )
            }))
        }
        many => Err(invalid(format!(
            "{} headings match \"{spec}\"; give its path, such as \"# Project > ## Plans\"",
            many.len()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// Any text, with the words YAML reads as something else and the characters it treats specially.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[a-zA-Z][a-zA-Z0-9 _./-]{0,12}",
            prop::sample::select(vec![
                "yes", "No", "null", "~", "1e3", "0x1f", "- x", "a: b", "#c", "'q'", "\"", "&a", "*a", "!t", "|", ">",
                "@", "`", "%"
            ])
            .prop_map(String::from),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            text().prop_map(Value::String),
            any::<i64>().prop_map(Value::from),
            any::<bool>().prop_map(Value::from),
            Just(Value::Null),
        ];
        leaf.prop_recursive(2, 8, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,5}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// The twin of the fuzz target `note_edit`: any text as the note, a plain key and value.
        #[test]
        fn setting_a_key_in_any_note_holds_it_or_is_refused(
            text in prop::collection::vec(prop::sample::select(vec![
                "---\n", "title: x\n", "a: [1, 2]\n", "k: &a v\n", "b: *a\n", "# c\n", "body\n", "\u{feff}", "---",
                " ", "\r\n", "x:\n  - y\n",
            ]), 0..16).prop_map(|p| p.concat()),
            key in "[a-z][a-z0-9_]{0,6}",
            value in "[ -~]{0,12}",
        ) {
            check_patch(&text, &key, &value);
        }

        #[test]
        fn any_value_under_any_plain_key_is_written_so_that_it_reads_back(
            key in "[a-zA-Z_][a-zA-Z0-9_ -]{0,10}[a-zA-Z0-9_]",
            value in value(),
            start in prop::sample::select(vec!["", "body\n", "---\ntitle: x\n---\nbody\n", "---\n---\n"]),
        ) {
            prop_assume!(!is_protected(&key));
            let mut patch = Map::new();
            patch.insert(key.clone(), value.clone());
            // The function reads its result back itself and refuses a mismatch: it must never need to.
            let result = patch_frontmatter(start, &patch);
            prop_assert!(result.is_ok(), "{:?} = {}: {:?}", key, value, result);
            let map = frontmatter_of(&result.unwrap()).unwrap();
            prop_assert_eq!(map.get(&key), (!value.is_null()).then_some(&value));
        }
    }

    #[test]
    fn a_second_byte_order_mark_keeps_its_dashes_in_the_body() {
        // Found by the property above: the first mark is the file's, the second is text, so the
        // `---` after it is body and must come through a patch unchanged.
        check_patch("\u{feff}\u{feff}---\n---\n", "a", "");
        let patched = patch_frontmatter("\u{feff}\u{feff}---\n---\n", &patch(json!({"a": "b"}))).unwrap();
        assert_eq!(patched, "\u{feff}---\na: b\n---\n\u{feff}---\n---\n");
    }

    fn patch(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    const NOTE: &str = "---\n# the owner's comment\ntitle: Alpha\ntags:\n- project\n- planning\nstatus: active # inline\n\
                        access: read-only\n---\n# Alpha\n\nIntro.\n\n## Plans\n\nShip it.\n\n### Later\n\nMaybe.\n\n## Notes\n\nDone.\n";

    #[test]
    fn a_patch_changes_the_named_keys_and_keeps_every_other_line() {
        let result = patch_frontmatter(NOTE, &patch(json!({"status": "done", "priority": 2}))).unwrap();
        assert!(
            result.contains("# the owner's comment\ntitle: Alpha\ntags:\n- project\n- planning\n"),
            "{result}"
        );
        assert!(
            result.contains("status: done\naccess: read-only\npriority: 2\n---\n# Alpha"),
            "{result}"
        );
        let map = frontmatter_of(&result).unwrap();
        assert_eq!(map["status"], "done");
        assert_eq!(map["priority"], 2);
        assert_eq!(body_of(&result).unwrap(), body_of(NOTE).unwrap());
    }

    #[test]
    fn null_removes_a_key_with_all_its_lines() {
        let result = patch_frontmatter(NOTE, &patch(json!({"tags": null, "missing": null}))).unwrap();
        assert!(!result.contains("tags") && !result.contains("- project"), "{result}");
        assert!(result.contains("title: Alpha\nstatus: active # inline\n"), "{result}");
    }

    #[test]
    fn values_that_need_quotes_get_them_and_read_back_the_same() {
        let values = json!({
            "plain": "two words",
            "colon": "a: b",
            "boolish": "yes",
            "number_text": "12",
            "list": ["a", "b c"],
            "mixed": ["x", 1, true],
            "nested": {"k": [1, 2]},
            "empty": "",
            "quote": "say \"hi\" # not a comment",
            "unicode": "café ✓",
            "Spaced Key": 1,
        });
        let result = patch_frontmatter("# no frontmatter yet\n", &patch(values.clone())).unwrap();
        let map = frontmatter_of(&result).unwrap();
        assert_eq!(Value::Object(map), values);
        assert!(
            result.starts_with("---\n") && result.ends_with("---\n# no frontmatter yet\n"),
            "{result}"
        );
        assert!(
            result.contains("plain: two words\n") && result.contains("list: [a, b c]\n"),
            "{result}"
        );
    }

    #[test]
    fn protected_keys_cannot_be_set_changed_or_removed() {
        for key in ["access", "agent_overrides", "Access", "AGENT_OVERRIDES"] {
            for value in [json!("private"), Value::Null, json!({"x": "no-access"})] {
                let refused = patch_frontmatter(NOTE, &patch(json!({ key: value }))).unwrap_err();
                assert!(matches!(refused, EditError::Protected(_)), "{key}: {refused}");
            }
        }
        assert!(matches!(
            create("---\naccess: private\n---\nhidden"),
            Err(EditError::Protected(_))
        ));
        assert!(matches!(
            create("---\nagent_overrides:\n  claude: read-only\n---\n"),
            Err(EditError::Protected(_))
        ));
        assert_eq!(
            create("---\ntitle: ok\n---\nbody").unwrap(),
            "---\ntitle: ok\n---\nbody"
        );
    }

    #[test]
    fn a_body_edit_cannot_write_a_frontmatter_with_protected_keys() {
        let plain = "First line.\n";
        let sneaky = "---\naccess: private\n---\n";
        let refused = edit_section(plain, &Place::Anchor("First".into()), SectionOp::InsertBefore, sneaky);
        assert!(matches!(refused, Err(EditError::Protected(_))), "{refused:?}");
        assert!(matches!(replace_body(plain, sneaky), Err(EditError::Protected(_))));
        // A harmless frontmatter written at the top is allowed: it protects nothing.
        assert!(replace_body(plain, "---\ntitle: x\n---\nbody").is_ok());
    }

    #[test]
    fn append_keeps_a_line_of_its_own_when_asked() {
        assert_eq!(append("a", "b", true).unwrap(), "a\nb");
        assert_eq!(append("a\n", "b", true).unwrap(), "a\nb");
        assert_eq!(append("a", "b", false).unwrap(), "ab");
        assert_eq!(append("", "b", true).unwrap(), "b");
        assert_eq!(append("---\nt: 1\n---\n", "b", true).unwrap(), "---\nt: 1\n---\nb");
        assert_eq!(
            append("x\r\ny", "z", true).unwrap(),
            "x\r\ny\r\nz",
            "the file's own line endings"
        );
    }

    #[test]
    fn replace_body_keeps_the_frontmatter_and_the_mark() {
        let text = "\u{feff}---\ntitle: t\n---\nold";
        assert_eq!(replace_body(text, "new").unwrap(), "\u{feff}---\ntitle: t\n---\nnew");
        assert_eq!(replace_body("old", "new").unwrap(), "new");
    }

    #[test]
    fn anchors_must_occur_exactly_once() {
        let text = "one two one three";
        let twice = edit_section(text, &Place::Anchor("one".into()), SectionOp::Replace, "x").unwrap_err();
        assert!(twice.to_string().contains("occurs 2 times"), "{twice}");
        let none = edit_section(text, &Place::Anchor("four".into()), SectionOp::Replace, "x").unwrap_err();
        assert!(none.to_string().contains("does not occur"), "{none}");
        let at = Place::Anchor("two".into());
        assert_eq!(
            edit_section(text, &at, SectionOp::Replace, "2").unwrap(),
            "one 2 one three"
        );
        assert_eq!(
            edit_section(text, &at, SectionOp::Replace, "").unwrap(),
            "one  one three"
        );
        assert_eq!(
            edit_section(text, &at, SectionOp::InsertBefore, "[").unwrap(),
            "one [two one three"
        );
        assert_eq!(
            edit_section(text, &at, SectionOp::InsertAfter, "]").unwrap(),
            "one two] one three"
        );
        let within = edit_section(text, &at, SectionOp::AppendWithin, "x").unwrap_err();
        assert!(within.to_string().contains("needs a heading"), "{within}");
        assert!(edit_section(text, &Place::Anchor(String::new()), SectionOp::Replace, "x").is_err());
    }

    #[test]
    fn headings_name_sections_that_run_to_the_next_of_their_level() {
        let plans = Place::Heading("## Plans".into());
        let replaced = edit_section(NOTE, &plans, SectionOp::Replace, "## Plans\n\nRewritten.\n\n").unwrap();
        assert!(
            replaced.contains("Intro.\n\n## Plans\n\nRewritten.\n\n## Notes\n"),
            "{replaced}"
        );
        assert!(!replaced.contains("### Later"), "a subsection is part of its section");
        let appended = edit_section(NOTE, &plans, SectionOp::AppendWithin, "- one more").unwrap();
        assert!(appended.contains("Maybe.\n\n- one more\n## Notes"), "{appended}");
        let before = edit_section(NOTE, &plans, SectionOp::InsertBefore, "## Goals\n").unwrap();
        assert!(before.contains("Intro.\n\n## Goals\n## Plans"), "{before}");
        let deleted = edit_section(NOTE, &plans, SectionOp::Replace, "").unwrap();
        assert!(deleted.contains("Intro.\n\n## Notes"), "{deleted}");
        let last = edit_section(NOTE, &Place::Heading("Notes".into()), SectionOp::AppendWithin, "More.").unwrap();
        assert!(last.ends_with("Done.\nMore.\n"), "{last}");
        let path = Place::Heading("# Alpha > ## Plans > ### Later".into());
        let nested = edit_section(NOTE, &path, SectionOp::Replace, "### Later\n\nSoon.\n\n").unwrap();
        assert!(nested.contains("### Later\n\nSoon.\n\n## Notes"), "{nested}");
    }

    #[test]
    fn ambiguous_or_unknown_headings_fail_loudly() {
        let text = "# A\n## Plans\nx\n# B\n## Plans\ny\n```\n## Plans\n```\n";
        let two = edit_section(text, &Place::Heading("## Plans".into()), SectionOp::Replace, "").unwrap_err();
        assert!(
            two.to_string().contains("2 headings match"),
            "headings in code do not count: {two}"
        );
        let one = edit_section(text, &Place::Heading("# B > ## Plans".into()), SectionOp::Replace, "").unwrap();
        assert_eq!(one, "# A\n## Plans\nx\n# B\n");
        let none = edit_section(text, &Place::Heading("### Plans".into()), SectionOp::Replace, "").unwrap_err();
        assert!(
            none.to_string().contains("the note's headings are: # A, ## Plans"),
            "{none}"
        );
        let bare = edit_section("no headings", &Place::Heading("x".into()), SectionOp::Replace, "").unwrap_err();
        assert!(bare.to_string().contains("no headings"), "{bare}");
    }

    #[test]
    fn frontmatter_this_cannot_edit_safely_is_refused_not_guessed() {
        let anchored = "---\nbase: &b\n  x: 1\nother: *b\n---\nbody";
        let refused = patch_frontmatter(anchored, &patch(json!({"base": 2}))).unwrap_err();
        assert!(refused.to_string().contains("cannot be made to safely"), "{refused}");
        let unclosed = "---\ntitle: x\nbody";
        assert!(patch_frontmatter(unclosed, &patch(json!({"a": 1}))).is_err());
        for bad in ["", " padded", "line\nbreak"] {
            assert!(patch_frontmatter(NOTE, &patch(json!({ bad: 1 }))).is_err(), "{bad:?}");
        }
    }
}
