//! Who acts on the journal, as the graph and the notes' history record it: one identity and one
//! slug rule for both.

use serde::{Deserialize, Serialize};

/// Who acts: the owner, or an agent by the slug of its connection's label (`agent:claude-code`), a
/// signed-in app's with its connection's first id digits (`agent:codex~1a2b3c4d`). The graph
/// records it on what an agent made; the notes' history records it with each change.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Author(String);

impl Author {
    pub fn owner() -> Author {
        Author("owner".into())
    }

    /// `agent:<slug>` for a key's label (the owner chose it, and keys' labels are unique).
    pub fn agent(label: &str) -> Author {
        let slug = slug(label);
        Author(format!("agent:{}", if slug.is_empty() { "unnamed" } else { &slug }))
    }

    /// The identity of a connection: a key's is `agent:<slug of its label>`; a signed-in app's adds
    /// `~` and the first 8 hex digits of its connection's id, since the app chose its own name (an
    /// app registering as "Codex" is not the key `codex`, nor another app of that name). No label's
    /// slug holds a `~`, so the two kinds never meet.
    pub fn connection(label: &str, is_key: bool, connection_id: &str) -> Author {
        let agent = Author::agent(label);
        if is_key {
            return agent;
        }
        let digits: String = connection_id
            .chars()
            .filter(char::is_ascii_hexdigit)
            .take(8)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        Author(format!("{}~{digits}", agent.0))
    }

    pub fn is_owner(&self) -> bool {
        self.0 == "owner"
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Author {
    type Error = String;

    fn try_from(text: String) -> Result<Author, String> {
        let slug_ok = |slug: &str| {
            !slug.is_empty()
                && slug.chars().count() <= 200
                && slug
                    .chars()
                    .all(|c| c == '-' || (c.is_alphanumeric() && !c.is_uppercase()))
        };
        let valid = text == "owner"
            || text
                .strip_prefix("agent:")
                .is_some_and(|rest| match rest.split_once('~') {
                    None => slug_ok(rest),
                    Some((slug, id)) => {
                        slug_ok(slug)
                            && id.len() == 8
                            && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
                    }
                });
        if valid {
            Ok(Author(text))
        } else {
            Err(format!(
                "\"{text}\" is not an author: owner, agent:<slug> or agent:<slug>~<8 hex digits>"
            ))
        }
    }
}

impl From<Author> for String {
    fn from(author: Author) -> String {
        author.0
    }
}

impl std::fmt::Display for Author {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A label as a slug: lowercase letters and digits, other runs as one `-`.
pub fn slug(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for c in label.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slug("Claude Code"), "claude-code");
        assert_eq!(slug("  my--script 2 "), "my-script-2");
        assert_eq!(slug("Zoë"), "zoë");
    }

    #[test]
    fn authors() {
        assert_eq!(Author::agent("Claude Code").as_str(), "agent:claude-code");
        assert_eq!(Author::agent("!!").as_str(), "agent:unnamed");
        assert_eq!(
            Author::connection("Codex", false, "1A2B3C4D-5e6f").as_str(),
            "agent:codex~1a2b3c4d"
        );
        assert_eq!(Author::connection("Codex", true, "1a2b3c4d"), Author::agent("Codex"));
        assert!(Author::owner().is_owner());
        assert!(Author::try_from("agent:Upper".to_string()).is_err());
        assert!(Author::try_from("agent:codex~1a2b".to_string()).is_err());
        assert_eq!(Author::try_from("owner".to_string()), Ok(Author::owner()));
    }
}
