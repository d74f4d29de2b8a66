//! Markdown files with a YAML frontmatter block: the shape of most journal files.
//!
//! A file is `---`, YAML, `---`, then a markdown body. Reading is strict about the block's shape and
//! passes YAML errors on with their line, so a person who edited a file by hand learns what to fix.
//! The YAML parser (serde-saphyr) has budgets against hostile documents (deep nesting, alias bombs).

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Why a journal file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontmatterError {
    #[error("line 1: expected the file to start with a '---' line opening the YAML frontmatter")]
    MissingOpen,
    #[error("no closing '---' line after the YAML frontmatter")]
    MissingClose,
    #[error("frontmatter: {0}")]
    Yaml(String),
}

/// Splits a file into its YAML block and its body (without the separator lines).
pub fn split(text: &str) -> Result<(&str, &str), FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or(FrontmatterError::MissingOpen)?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let yaml = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return Ok((yaml, body));
        }
        offset += line.len();
    }
    Err(FrontmatterError::MissingClose)
}

/// The largest YAML block read, in bytes: frontmatter is a few keys, never a document.
pub const MAX_YAML_BYTES: usize = 256 * 1024;

/// What a YAML block may grow to once read: text of all its scalars, aliases repeated. An alias
/// repeats what its anchor names, so 30 KB of YAML can otherwise stand for tens of megabytes.
pub const MAX_EXPANDED_BYTES: usize = 1024 * 1024;

/// Reads the frontmatter into `T` and returns it with the body.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<(T, &str), FrontmatterError> {
    let (yaml, body) = split(text)?;
    if yaml.len() > MAX_YAML_BYTES {
        return Err(FrontmatterError::Yaml(format!(
            "the block is larger than {} KiB; keep long text in the body",
            MAX_YAML_BYTES / 1024
        )));
    }
    let value = serde_saphyr::from_str_with_options::<T>(yaml, options())
        .map_err(|e| FrontmatterError::Yaml(yaml_error(&e)))?;
    Ok((value, body))
}

/// The parser's budgets, tightened for frontmatter: what aliases expand to counts against
/// `MAX_EXPANDED_BYTES`, and a block has at most a few thousand aliases and nodes.
fn options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_total_scalar_bytes = MAX_EXPANDED_BYTES;
    budget.max_recorded_anchor_bytes = MAX_EXPANDED_BYTES;
    budget.max_aliases = 1_000;
    budget.max_nodes = 50_000;
    budget.max_events = 200_000;
    serde_saphyr::options! { budget: Some(budget) }
}

/// A YAML error as one line that names the line of the file: the parser counts from the first line
/// of the YAML block, which is the file's second (after the opening `---`), and it appends a code
/// frame that a log line or a CLI error cannot show.
fn yaml_error(error: &serde_saphyr::Error) -> String {
    let plain = one_line(&error.without_snippet().to_string());
    let plain = plain.strip_prefix("error: ").unwrap_or(&plain);
    let Some(at) = error.location().filter(|at| at.line() > 0) else {
        return plain.to_string();
    };
    // The parser's own "line N column M: " prefix, replaced by the file's.
    let what = plain
        .strip_prefix("line ")
        .and_then(|rest| rest.split_once(": "))
        .map_or(plain, |(_, what)| what);
    // Some messages repeat the parser's position at their end ("... at line 3, column 1").
    let what = match what.rsplit_once(" at line ") {
        Some((before, position))
            if position.split_once(", column ").is_some_and(|(l, c)| {
                [l, c]
                    .iter()
                    .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            }) =>
        {
            before
        }
        _ => what,
    };
    format!("line {} column {}: {what}", at.line() + 1, at.column())
}

/// Writes `value` as frontmatter followed by `body`.
pub fn render<T: Serialize>(value: &T, body: &str) -> String {
    // Serialising plain structs of strings, numbers and lists cannot fail; an empty block is still valid.
    let yaml = serde_saphyr::to_string(value).unwrap_or_default();
    let mut out = String::with_capacity(yaml.len() + body.len() + 8);
    out.push_str("---\n");
    out.push_str(&yaml);
    if !yaml.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("---\n");
    out.push_str(body);
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Head {
        name: String,
        #[serde(default)]
        tags: Vec<String>,
    }

    #[test]
    fn round_trips() {
        let head = Head {
            name: "work: the \"day job\"".into(),
            tags: vec!["a".into(), "b c".into()],
        };
        let text = render(&head, "body line\n");
        let (back, body): (Head, _) = parse(&text).unwrap();
        assert_eq!(back, head);
        assert_eq!(body, "body line\n");
    }

    #[test]
    fn refuses_broken_blocks() {
        assert_eq!(parse::<Head>("name: x\n").unwrap_err(), FrontmatterError::MissingOpen);
        assert_eq!(
            parse::<Head>("---\nname: x\n").unwrap_err(),
            FrontmatterError::MissingClose
        );
        assert!(matches!(
            parse::<Head>("---\nname: [\n---\n").unwrap_err(),
            FrontmatterError::Yaml(_)
        ));
        assert!(matches!(
            parse::<Head>("---\ntags: []\n---\n").unwrap_err(),
            FrontmatterError::Yaml(_)
        ));
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        name: String,
    }

    #[test]
    fn yaml_errors_name_the_line_of_the_file_in_one_line() {
        let FrontmatterError::Yaml(why) = parse::<Strict>("---\nname: x\nfoo: 1\n---\n").unwrap_err() else {
            panic!("a YAML error")
        };
        assert_eq!(why, "line 3 column 1: unknown field `foo`, expected one of name");
        let FrontmatterError::Yaml(why) = parse::<Head>("---\nname: x\ntags: {a: 1}\n---\n").unwrap_err() else {
            panic!("a YAML error")
        };
        assert!(why.starts_with("line 3 column "), "the file's line 3: {why}");
        assert!(!why.contains("-->") && !why.contains('\n'), "no code frame: {why}");
        let FrontmatterError::Yaml(why) = parse::<Head>("---\n\n\nname: [\n---\n").unwrap_err() else {
            panic!("a YAML error")
        };
        assert!(why.starts_with("line "), "{why}");
    }

    #[test]
    fn accepts_crlf_and_bom() {
        let (head, body): (Head, _) = parse("\u{feff}---\r\nname: x\r\n---\r\nhello").unwrap();
        assert_eq!(head.name, "x");
        assert_eq!(body, "hello");
    }
}
