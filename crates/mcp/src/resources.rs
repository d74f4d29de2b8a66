//! The owner's notes as MCP resources (`resources/list`, `resources/templates/list`,
//! `resources/read`), so that a client's `@` mention reaches the vault: a note is
//! `journal://notes/<path>`, its path percent-encoded segment by segment.
//!
//! Resources need the notes grant and go through the notes' sight rules, as `notes_list` and
//! `note_read` do: a hidden note, one outside the grant, a URI that names no note and one that is
//! not the journal's are the same "resource not found", and without the notes grant the lists are
//! empty.

use serde_json::{Map, Value, json};

use super::jsonrpc::RpcError;
use super::paging;
use super::tools::{ToolContext, ToolError};
use crate::auth::Category;
use crate::journal::notes::ops::{self, ListFilter, Target};
use crate::journal::notes::rules;

/// Where every note's URI starts.
pub const PREFIX: &str = "journal://notes/";
/// The template that names any note (RFC 6570: `+` keeps the path's slashes).
pub const TEMPLATE: &str = "journal://notes/{+path}";
/// Resources on one page of `resources/list`.
pub const PAGE: usize = 100;
/// Notes are markdown.
pub const MIME: &str = "text/markdown";
/// The error code of a resource that is not there: -32602 at 2026-07-28, -32002 in 2025 sessions.
pub const NOT_FOUND_2025: i64 = -32002;

/// Whether the connection may see notes at all.
fn granted(context: &ToolContext<'_>) -> bool {
    context.connection.grant.categories.contains(&Category::Notes)
}

/// A note's URI.
pub fn uri_of(path: &str) -> String {
    let mut uri = String::with_capacity(PREFIX.len() + path.len());
    uri.push_str(PREFIX);
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The note path a URI names, or None when it is not a note's URI (another scheme, a bad escape,
/// text that is not UTF-8, or a path no note may have).
pub fn path_of(uri: &str) -> Option<String> {
    let encoded = uri.strip_prefix(PREFIX)?;
    let mut bytes = Vec::with_capacity(encoded.len());
    let mut rest = encoded.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first == b'%' {
            let hex = tail.get(..2)?;
            let text = std::str::from_utf8(hex).ok()?;
            bytes.push(u8::from_str_radix(text, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(first);
            rest = tail;
        }
    }
    let path = String::from_utf8(bytes).ok()?;
    // The same reading as a typed path, which refuses `..`, empty parts and control characters.
    rules::typed_note_path(&path).ok().filter(|typed| *typed == path)
}

/// One page of `resources/list`: the notes the connection sees, newest first.
pub fn list(context: &ToolContext<'_>, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let offset = paging::offset(params, "resources")?;
    let (page, more) = if granted(context) {
        ops::list(
            &context.journal.notes.set(),
            &context.reader(),
            &ListFilter::default(),
            offset,
            PAGE,
        )
    } else {
        (Vec::new(), false)
    };
    if page.is_empty() && offset > 0 {
        return Err(RpcError::invalid_params(
            "invalid cursor: use a nextCursor from resources/list, or none",
        ));
    }
    let resources: Vec<Value> = page
        .iter()
        .map(|note| {
            json!({
                "uri": uri_of(&note.path),
                "name": note.path,
                "title": note.title,
                "mimeType": MIME,
                "annotations": { "lastModified": super::tools::format_ms(note.modified_ms) },
            })
        })
        .collect();
    let mut result = json!({ "resources": resources });
    if more {
        result["nextCursor"] = json!(paging::encode("resources", offset + PAGE));
    }
    Ok(result)
}

/// `resources/templates/list`: one template that names any note, for a connection that sees notes.
pub fn templates(context: &ToolContext<'_>, params: &Map<String, Value>) -> Result<Value, RpcError> {
    paging::offset(params, "resourceTemplates")?;
    let templates = if granted(context) {
        vec![json!({
            "uriTemplate": TEMPLATE,
            "name": "note",
            "title": "A note",
            "description": "One of the owner's notes by its path from the top of the notes folder, such as Projects/alpha.md.",
            "mimeType": MIME,
        })]
    } else {
        Vec::new()
    };
    Ok(json!({ "resourceTemplates": templates }))
}

/// The URI `resources/read` asks for.
pub fn asked(params: &Map<String, Value>) -> Result<&str, RpcError> {
    params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("resources/read needs params.uri, a URI from resources/list"))
}

/// `resources/read`: the note's file as it is (frontmatter and body). `not_found` is the code this version gives a
/// resource that is not there.
pub async fn read(context: &ToolContext<'_>, uri: &str, not_found: i64) -> Result<Value, RpcError> {
    let missing = || RpcError::new(not_found, format!("resource not found: {uri}")).with_data(json!({ "uri": uri }));
    let Some(path) = path_of(uri).filter(|_| granted(context)) else {
        return Err(missing());
    };
    let read = match context.read_note(Target::Path(path)).await {
        Ok(read) => read,
        Err(ToolError::Failed(message)) => return Err(RpcError::new(super::jsonrpc::INTERNAL_ERROR, message)),
        Err(_) => return Err(missing()),
    };
    let (text, _) = super::tools::fetch::cut(read.text, super::tools::note_read::MAX_BODY_BYTES);
    Ok(json!({
        "contents": [{ "uri": uri_of(&read.note.path), "mimeType": MIME, "text": text }],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_every_note_path_and_refuse_anything_else() {
        for path in ["Inbox.md", "Projects/alpha beta.md", "Área/日記 #1?.md", "a%b/100%.md"] {
            let uri = uri_of(path);
            assert!(
                uri.is_ascii() && !uri.contains(' ') && !uri.contains('#') && !uri.contains('?'),
                "{uri}"
            );
            assert_eq!(path_of(&uri).as_deref(), Some(path), "{uri}");
        }
        assert_eq!(
            uri_of("Projects/alpha beta.md"),
            "journal://notes/Projects/alpha%20beta.md"
        );
        assert_eq!(
            path_of("journal://notes/Projects/alpha%20beta.md").as_deref(),
            Some("Projects/alpha beta.md")
        );
        for bad in [
            "file:///etc/passwd",
            "journal://notes/",
            "journal://notes/../secret.md",
            "journal://notes/a/%2E%2E/b.md",
            "journal://notes/%zz.md",
            "journal://notes/%E2.md",
            "journal://notes/a%00b.md",
            "journal://notes//a.md",
            "journal://notes/Projects/alpha",
            "JOURNAL://notes/a.md",
        ] {
            assert_eq!(path_of(bad), None, "{bad}");
        }
    }
}
