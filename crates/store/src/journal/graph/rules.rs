//! The graph's changes and the rules each keeps, "add, not override": anyone with the graph may
//! connect two items and keep one note of their own on any connection; an agent sets a connection's
//! type only when it has none or the agent set it, and removes only connections it created (a
//! connection with no recorded creator is the owner's); the owner may change anything.
//!
//! Plain functions over a `Graph` (`store::update` runs them under the file's lock). Which items
//! an author may reach is checked before, where the items are.

use super::store::{
    Graph, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_AGENT, MAX_CONNECTIONS_PER_PAIR, MAX_NOTE_BYTES_PER_AGENT,
};
use super::{Author, AuthorNote, Edge, check_item, check_note, check_type, new_id};

/// Why a change was refused. Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// Another author's part: the text says what the caller may do instead.
    #[error("forbidden: {0}")]
    Forbidden(String),
    #[error("there is no connection {0}")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
}

/// Connects `from` to `to` (optionally typed) as `author`. The same two items already connected
/// with the same type (or both untyped) answer that connection instead of a second one.
pub fn connect(
    graph: &mut Graph,
    author: &Author,
    from: &str,
    to: &str,
    kind: Option<&str>,
    now: &str,
) -> Result<Edge, RuleError> {
    check_item(from).map_err(RuleError::Invalid)?;
    check_item(to).map_err(RuleError::Invalid)?;
    if from == to {
        return Err(RuleError::Invalid(
            "from and to are the same item; connect two items".into(),
        ));
    }
    if let Some(kind) = kind {
        check_type(kind).map_err(RuleError::Invalid)?;
    }
    if let Some(existing) = graph
        .connections()
        .find(|c| c.from == from && c.to == to && c.kind.as_deref() == kind)
    {
        return Ok(existing.clone());
    }
    if graph.len() >= MAX_CONNECTIONS {
        return Err(RuleError::Invalid(format!(
            "the graph holds {MAX_CONNECTIONS} connections, its most; the owner can remove some"
        )));
    }
    if graph.connections().filter(|c| c.from == from && c.to == to).count() >= MAX_CONNECTIONS_PER_PAIR {
        return Err(RuleError::Invalid(format!(
            "these two items are connected {MAX_CONNECTIONS_PER_PAIR} times already, one per type; set the type of \
             one of those, or add your view to it with write_connection_note"
        )));
    }
    if !author.is_owner() && graph.connections().filter(|c| c.creator() == *author).count() >= MAX_CONNECTIONS_PER_AGENT
    {
        return Err(RuleError::Invalid(format!(
            "you made {MAX_CONNECTIONS_PER_AGENT} connections, the most one agent may; remove some of yours first"
        )));
    }
    let mut id = new_id();
    while graph.get(&id).is_some() {
        id = new_id();
    }
    let connection = Edge {
        id,
        from: from.to_string(),
        to: to.to_string(),
        kind: kind.map(str::to_string),
        created_by: Some(author.clone()),
        created_at: now.to_string(),
        type_by: kind.map(|_| author.clone()),
        notes: Vec::new(),
    };
    graph.push(connection.clone());
    Ok(connection)
}

/// Sets (or with None clears) a connection's type.
pub fn set_type(graph: &mut Graph, author: &Author, id: &str, kind: Option<&str>) -> Result<Edge, RuleError> {
    if let Some(kind) = kind {
        check_type(kind).map_err(RuleError::Invalid)?;
    }
    let connection = graph.get_mut(id).ok_or_else(|| RuleError::NotFound(id.to_string()))?;
    if !author.is_owner() && connection.kind.is_some() {
        let setter = connection.type_by.clone().unwrap_or_else(Author::owner);
        if setter != *author {
            return Err(RuleError::Forbidden(format!(
                "{setter} set this connection's type; add your view with write_connection_note instead"
            )));
        }
    }
    connection.kind = kind.map(str::to_string);
    connection.type_by = kind.map(|_| author.clone());
    Ok(connection.clone())
}

/// Removes a connection. An agent removes only one it made and that carries no other author's
/// note: removing it would remove their view too. (A type another agent set goes with it: the type
/// describes the connection its creator made, as `set_type` lets any agent do on an untyped one.)
pub fn disconnect(graph: &mut Graph, author: &Author, id: &str) -> Result<Edge, RuleError> {
    let connection = graph.get(id).ok_or_else(|| RuleError::NotFound(id.to_string()))?;
    let creator = connection.creator();
    if !author.is_owner() && creator != *author {
        return Err(RuleError::Forbidden(format!(
            "{creator} made this connection, so only they or the owner remove it; add your view with \
             write_connection_note instead"
        )));
    }
    if !author.is_owner() {
        let mut others: Vec<&str> = connection
            .notes
            .iter()
            .map(|note| &note.author)
            .filter(|other| *other != author)
            .map(Author::as_str)
            .collect();
        others.sort_unstable();
        others.dedup();
        if !others.is_empty() {
            return Err(RuleError::Forbidden(format!(
                "{} added to this connection, so it stays with their view; remove your own note with \
                 write_connection_note and empty text, or ask the owner",
                others.join(", ")
            )));
        }
    }
    graph.remove(id).ok_or_else(|| RuleError::NotFound(id.to_string()))
}

/// Writes `author`'s own note on a connection; empty text removes it. Another author's note is
/// never touched (the owner's own note included: the owner edits the file, or uses the CLI as owner).
pub fn write_note(graph: &mut Graph, author: &Author, id: &str, text: &str, now: &str) -> Result<Edge, RuleError> {
    if !text.trim().is_empty() {
        check_note(text).map_err(RuleError::Invalid)?;
    }
    if graph.get(id).is_none() {
        return Err(RuleError::NotFound(id.to_string()));
    }
    if !author.is_owner() && !text.trim().is_empty() {
        let kept: usize = graph
            .connections()
            .filter(|c| c.id != id)
            .flat_map(|c| &c.notes)
            .filter(|note| note.author == *author)
            .map(|note| note.text.len())
            .sum();
        if kept + text.len() > MAX_NOTE_BYTES_PER_AGENT {
            return Err(RuleError::Invalid(format!(
                "your notes on connections would hold more than {} MiB, the most one agent may; shorten or remove \
                 some of yours first (an empty text removes one)",
                MAX_NOTE_BYTES_PER_AGENT / (1024 * 1024)
            )));
        }
    }
    let connection = graph.get_mut(id).ok_or_else(|| RuleError::NotFound(id.to_string()))?;
    connection.notes.retain(|note| note.author != *author);
    if !text.trim().is_empty() {
        connection.notes.push(AuthorNote {
            author: author.clone(),
            text: text.to_string(),
            at: now.to_string(),
        });
        connection.notes.sort_by(|a, b| a.author.cmp(&b.author));
    }
    Ok(connection.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-12-04T18:00:00Z";

    fn agent(name: &str) -> Author {
        Author::agent(name)
    }

    #[test]
    fn connecting_twice_answers_the_same_connection() {
        let mut graph = Graph::default();
        let first = connect(
            &mut graph,
            &agent("a"),
            "note:x.md",
            "entity:e-1",
            Some("mentions"),
            NOW,
        )
        .unwrap();
        let again = connect(
            &mut graph,
            &agent("b"),
            "note:x.md",
            "entity:e-1",
            Some("mentions"),
            NOW,
        )
        .unwrap();
        assert_eq!(first, again);
        assert_eq!(first.created_by, Some(agent("a")));
        let other = connect(&mut graph, &agent("b"), "note:x.md", "entity:e-1", None, NOW).unwrap();
        assert_ne!(other.id, first.id);
        assert_eq!(graph.len(), 2);
        for (from, to, kind) in [
            ("note:x.md", "note:x.md", None),
            ("x.md", "note:y.md", None),
            ("note:x.md", "note:y.md", Some("Not A Type")),
        ] {
            assert!(matches!(
                connect(&mut graph, &agent("a"), from, to, kind, NOW),
                Err(RuleError::Invalid(_))
            ));
        }
        assert_eq!(graph.len(), 2);
    }

    #[test]
    fn one_agent_keeps_only_so_many_bytes_of_notes() {
        let mut graph = Graph::default();
        let long = "n".repeat(4000);
        let count = MAX_NOTE_BYTES_PER_AGENT / 4000;
        let mut ids = Vec::new();
        for n in 0..=count {
            let to = format!("note:t{n}.md");
            let made = connect(&mut graph, &agent("a"), "note:x.md", &to, None, NOW).unwrap();
            ids.push(made.id);
        }
        for id in &ids[..count] {
            write_note(&mut graph, &agent("a"), id, &long, NOW).unwrap();
        }
        let refused = write_note(&mut graph, &agent("a"), &ids[count], &long, NOW).unwrap_err();
        assert!(refused.to_string().contains("the most one agent may"), "{refused}");
        assert!(graph.get(&ids[count]).unwrap().notes.is_empty());
        // Rewriting one of its own notes counts it once; another author, and the owner, are not held.
        write_note(&mut graph, &agent("a"), &ids[0], &long, NOW).unwrap();
        write_note(&mut graph, &agent("b"), &ids[count], &long, NOW).unwrap();
        write_note(&mut graph, &Author::owner(), &ids[count], &long, NOW).unwrap();
        // Removing one frees room for another.
        write_note(&mut graph, &agent("a"), &ids[0], "", NOW).unwrap();
        write_note(&mut graph, &agent("a"), &ids[count], &long, NOW).unwrap();
    }

    #[test]
    fn one_pair_and_one_agent_make_only_so_many_connections() {
        let mut graph = Graph::default();
        for n in 0..MAX_CONNECTIONS_PER_PAIR {
            connect(
                &mut graph,
                &agent("a"),
                "note:x.md",
                "note:y.md",
                Some(&format!("t{n}")),
                NOW,
            )
            .unwrap();
        }
        let refused = connect(&mut graph, &agent("b"), "note:x.md", "note:y.md", Some("more"), NOW).unwrap_err();
        assert!(refused.to_string().contains("connected 16 times already"), "{refused}");
        assert_eq!(graph.len(), MAX_CONNECTIONS_PER_PAIR);
        let made = graph.connections().next().unwrap().clone();
        for n in MAX_CONNECTIONS_PER_PAIR..MAX_CONNECTIONS_PER_AGENT {
            graph.push(Edge {
                id: format!("c-{n:010}"),
                to: format!("note:{n}.md"),
                ..made.clone()
            });
        }
        let refused = connect(&mut graph, &agent("a"), "note:z.md", "note:w.md", None, NOW).unwrap_err();
        assert!(refused.to_string().contains("the most one agent may"), "{refused}");
        // Another agent, and the owner, still connect.
        connect(&mut graph, &agent("b"), "note:z.md", "note:w.md", None, NOW).unwrap();
        connect(&mut graph, &Author::owner(), "note:z.md", "note:v.md", None, NOW).unwrap();
    }

    #[test]
    fn an_agent_sets_a_type_only_when_none_is_set_or_it_set_it() {
        let mut graph = Graph::default();
        let typed = connect(&mut graph, &agent("a"), "note:x.md", "note:y.md", Some("supports"), NOW).unwrap();
        let untyped = connect(&mut graph, &agent("a"), "note:x.md", "note:z.md", None, NOW).unwrap();
        let refused = set_type(&mut graph, &agent("b"), &typed.id, Some("contradicts")).unwrap_err();
        assert!(
            refused
                .to_string()
                .starts_with("forbidden: agent:a set this connection's type"),
            "{refused}"
        );
        assert_eq!(graph.get(&typed.id).unwrap().kind.as_deref(), Some("supports"));
        assert_eq!(
            set_type(&mut graph, &agent("a"), &typed.id, Some("extends"))
                .unwrap()
                .kind
                .as_deref(),
            Some("extends")
        );
        let set = set_type(&mut graph, &agent("b"), &untyped.id, Some("mentions")).unwrap();
        assert_eq!(set.type_by, Some(agent("b")));
        assert!(set_type(&mut graph, &agent("a"), &untyped.id, None).is_err());
        // The owner overrides; a type with no recorded setter is the owner's.
        set_type(&mut graph, &Author::owner(), &untyped.id, Some("cites")).unwrap();
        assert!(matches!(
            set_type(&mut graph, &agent("b"), &untyped.id, Some("x")),
            Err(RuleError::Forbidden(_))
        ));
        assert!(matches!(
            set_type(&mut graph, &agent("a"), "c-0000000000", Some("x")),
            Err(RuleError::NotFound(_))
        ));
    }

    #[test]
    fn an_agent_removes_only_what_it_created() {
        let mut graph = Graph::default();
        let mine = connect(&mut graph, &agent("a"), "note:x.md", "note:y.md", None, NOW).unwrap();
        let refused = disconnect(&mut graph, &agent("b"), &mine.id).unwrap_err();
        assert!(
            refused
                .to_string()
                .starts_with("forbidden: agent:a made this connection"),
            "{refused}"
        );
        let mut owners = mine.clone();
        owners.id = "c-ownerowner".into();
        owners.to = "note:w.md".into();
        owners.created_by = None;
        graph.push(owners.clone());
        assert!(matches!(
            disconnect(&mut graph, &agent("a"), &owners.id),
            Err(RuleError::Forbidden(_))
        ));
        // Another author's note on it: it stays, with every note.
        write_note(&mut graph, &agent("b"), &mine.id, "b's view", NOW).unwrap();
        write_note(&mut graph, &Author::owner(), &mine.id, "mine", NOW).unwrap();
        let kept = disconnect(&mut graph, &agent("a"), &mine.id).unwrap_err();
        assert!(
            kept.to_string()
                .starts_with("forbidden: agent:b, owner added to this connection"),
            "{kept}"
        );
        assert_eq!(graph.get(&mine.id).unwrap().notes.len(), 2);
        write_note(&mut graph, &agent("b"), &mine.id, "", NOW).unwrap();
        write_note(&mut graph, &Author::owner(), &mine.id, "", NOW).unwrap();
        write_note(&mut graph, &agent("a"), &mine.id, "my own view", NOW).unwrap();
        disconnect(&mut graph, &agent("a"), &mine.id).unwrap();
        disconnect(&mut graph, &Author::owner(), &owners.id).unwrap();
        assert!(graph.is_empty());
    }

    #[test]
    fn a_signed_in_apps_identity_is_its_own_whatever_name_it_chose() {
        let key = Author::connection("Codex", true, "0b7d5c3e-aaaa-4bbb-8ccc-123456789abc");
        let app = Author::connection("Codex", false, "9F2A4C1E-aaaa-4bbb-8ccc-123456789abc");
        let other_app = Author::connection("Codex", false, "1c2d3e4f-aaaa-4bbb-8ccc-123456789abc");
        assert_eq!(key.as_str(), "agent:codex");
        assert_eq!(app.as_str(), "agent:codex~9f2a4c1e");
        assert_ne!(app, other_app);
        assert_eq!(Author::try_from(app.as_str().to_string()), Ok(app.clone()));
        for bad in [
            "agent:codex~9f2a",
            "agent:codex~9F2A4C1E",
            "agent:~9f2a4c1e",
            "agent:co dex",
        ] {
            assert!(Author::try_from(bad.to_string()).is_err(), "{bad}");
        }
        let mut graph = Graph::default();
        let keys = connect(&mut graph, &key, "note:x.md", "note:y.md", None, NOW).unwrap();
        assert!(matches!(
            disconnect(&mut graph, &app, &keys.id),
            Err(RuleError::Forbidden(_))
        ));
    }

    #[test]
    fn each_author_writes_only_their_own_note() {
        let mut graph = Graph::default();
        let c = connect(&mut graph, &agent("a"), "note:x.md", "note:y.md", None, NOW).unwrap();
        write_note(&mut graph, &agent("a"), &c.id, "a's view", NOW).unwrap();
        write_note(&mut graph, &agent("b"), &c.id, "b's view", NOW).unwrap();
        let rewritten = write_note(&mut graph, &agent("a"), &c.id, "a's second view", NOW).unwrap();
        let notes: Vec<(&str, &str)> = rewritten
            .notes
            .iter()
            .map(|n| (n.author.as_str(), n.text.as_str()))
            .collect();
        assert_eq!(notes, [("agent:a", "a's second view"), ("agent:b", "b's view")]);
        let removed = write_note(&mut graph, &agent("b"), &c.id, "  ", NOW).unwrap();
        assert_eq!(removed.notes.len(), 1);
        assert!(matches!(
            write_note(&mut graph, &agent("b"), &c.id, &"x".repeat(4001), NOW),
            Err(RuleError::Invalid(_))
        ));
        assert_eq!(graph.get(&c.id).unwrap().notes.len(), 1);
    }
}
