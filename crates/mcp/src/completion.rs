//! `completion/complete`: what a client may offer while the person types an argument. The one
//! argument with something to offer is the note template's `path` (`journal://notes/{+path}`): the
//! paths of the notes the connection sees that start with what was typed, so that an `@` mention
//! finds its note. A prompt's `request` is free text: nothing to offer.
//!
//! Completions go through the notes' sight rules as `resources/list` does (private = missing), and
//! an unknown prompt or template offers nothing rather than an error, which would tell a prompt
//! that exists from one that does not.

use serde_json::{Map, Value, json};

use super::jsonrpc::RpcError;
use super::resources;
use super::tools::ToolContext;
use crate::auth::Category;

/// The most values one answer holds (the specification's bound).
pub const MAX_VALUES: usize = 100;
/// The longest typed value taken.
pub const MAX_TYPED_BYTES: usize = 1024;

/// What is being completed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// An argument of a resource template, by the template's URI.
    Resource {
        template: String,
        argument: String,
        typed: String,
    },
    /// An argument of a prompt.
    Prompt,
}

/// Reads `completion/complete`'s params: `ref` and `argument {name, value}`.
pub fn asked(params: &Map<String, Value>) -> Result<Asked, RpcError> {
    let reference = params.get("ref").and_then(Value::as_object).ok_or_else(|| {
        RpcError::invalid_params("completion/complete needs params.ref, a ref/prompt or ref/resource")
    })?;
    let argument = params
        .get("argument")
        .and_then(Value::as_object)
        .ok_or_else(|| RpcError::invalid_params("completion/complete needs params.argument {name, value}"))?;
    let (Some(name), Some(typed)) = (
        argument.get("name").and_then(Value::as_str),
        argument.get("value").and_then(Value::as_str),
    ) else {
        return Err(RpcError::invalid_params(
            "params.argument needs a name and a value, both strings",
        ));
    };
    if typed.len() > MAX_TYPED_BYTES {
        return Err(RpcError::invalid_params(format!(
            "params.argument.value is longer than {MAX_TYPED_BYTES} bytes"
        )));
    }
    match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") if reference.get("name").is_some_and(Value::is_string) => Ok(Asked::Prompt),
        Some("ref/resource") => match reference.get("uri").and_then(Value::as_str) {
            Some(template) => Ok(Asked::Resource {
                template: template.to_string(),
                argument: name.to_string(),
                typed: typed.to_string(),
            }),
            None => Err(RpcError::invalid_params("a ref/resource needs its uri")),
        },
        Some("ref/prompt") => Err(RpcError::invalid_params("a ref/prompt needs its name")),
        _ => Err(RpcError::invalid_params(
            "params.ref.type must be ref/prompt or ref/resource",
        )),
    }
}

/// The completion result for what was asked.
pub fn complete(context: &ToolContext<'_>, asked: &Asked) -> Value {
    let mut values = Vec::new();
    let mut total = 0usize;
    if let Asked::Resource {
        template,
        argument,
        typed,
    } = asked
        && template == resources::TEMPLATE
        && argument == "path"
        && context.connection.grant.categories.contains(&Category::Notes)
    {
        let set = context.journal.notes.set();
        let reader = context.reader();
        let typed = typed.to_lowercase();
        let mut paths: Vec<&str> = set
            .visible(&reader)
            .map(|(note, _)| note.path.as_str())
            .filter(|path| path.to_lowercase().starts_with(&typed))
            .collect();
        paths.sort_unstable();
        total = paths.len();
        values = paths.into_iter().take(MAX_VALUES).map(str::to_string).collect();
    }
    json!({ "completion": { "values": values, "total": total, "hasMore": total > MAX_VALUES } })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn what_is_asked_is_read_strictly() {
        assert_eq!(
            asked(&params(
                json!({"ref": {"type": "ref/resource", "uri": resources::TEMPLATE},
                "argument": {"name": "path", "value": "Proj"}})
            )),
            Ok(Asked::Resource {
                template: resources::TEMPLATE.into(),
                argument: "path".into(),
                typed: "Proj".into()
            })
        );
        assert_eq!(
            asked(&params(json!({"ref": {"type": "ref/prompt", "name": "weekly-review"},
                "argument": {"name": "request", "value": "x"}}))),
            Ok(Asked::Prompt)
        );
        for bad in [
            json!({}),
            json!({"ref": {"type": "ref/tool", "name": "x"}, "argument": {"name": "a", "value": "b"}}),
            json!({"ref": {"type": "ref/prompt"}, "argument": {"name": "a", "value": "b"}}),
            json!({"ref": {"type": "ref/resource"}, "argument": {"name": "a", "value": "b"}}),
            json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a"}}),
            json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "x".repeat(MAX_TYPED_BYTES + 1)}}),
        ] {
            assert_eq!(asked(&params(bad.clone())).unwrap_err().code, -32602, "{bad}");
        }
    }
}
