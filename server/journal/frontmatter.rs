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

/// Reads the frontmatter into `T` and returns it with the body.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<(T, &str), FrontmatterError> {
    let (yaml, body) = split(text)?;
    let value = serde_saphyr::from_str::<T>(yaml).map_err(|e| FrontmatterError::Yaml(one_line(&e.to_string())))?;
    Ok((value, body))
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

    #[test]
    fn accepts_crlf_and_bom() {
        let (head, body): (Head, _) = parse("\u{feff}---\r\nname: x\r\n---\r\nhello").unwrap();
        assert_eq!(head.name, "x");
        assert_eq!(body, "hello");
    }
}
