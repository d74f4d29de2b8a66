//! The owner's skills as MCP prompts (`prompts/list`, `prompts/get`): a skill the owner wrote for
//! agents (`Skills/<name>/SKILL.md`) is a prompt named by its folder, so that clients which show
//! prompts as commands (Claude Code's slash commands) offer the owner's ways of working.
//!
//! Prompts need the notes grant and go through the notes' sight rules, as `skills_list` and
//! `skill_read` do: a hidden skill, a skill outside the grant and one that does not exist are the
//! same unknown prompt, and without the notes grant the list is empty.

use serde_json::{Map, Value, json};

use super::jsonrpc::RpcError;
use super::paging;
use super::tools::{ToolContext, ToolError};
use crate::auth::Category;
use crate::journal::notes::ops::{self, Target};

/// Prompts on one page of `prompts/list`.
pub const PAGE: usize = 100;
/// The one argument a prompt takes: what the person wants done now.
pub const REQUEST: &str = "request";
/// The most text the argument may hold.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024;

/// Whether the connection may see prompts at all.
fn granted(context: &ToolContext<'_>) -> bool {
    context.connection.grant.categories.contains(&Category::Notes)
}

/// One page of `prompts/list`.
pub fn list(context: &ToolContext<'_>, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let skills = if granted(context) {
        ops::skills(&context.journal.notes.set(), &context.reader())
    } else {
        Vec::new()
    };
    let (page, next) = paging::page(skills, params, "prompts", PAGE)?;
    let prompts: Vec<Value> = page
        .into_iter()
        .map(|skill| {
            json!({
                "name": skill.id,
                "title": skill.name,
                "description": if skill.description.is_empty() {
                    format!("The owner's skill \"{}\" ({})", skill.name, skill.path)
                } else {
                    skill.description
                },
                "arguments": [{
                    "name": REQUEST,
                    "description": "What you want done now, in your own words (optional).",
                    "required": false,
                }],
            })
        })
        .collect();
    let mut result = json!({ "prompts": prompts });
    if let Some(next) = next {
        result["nextCursor"] = json!(next);
    }
    Ok(result)
}

/// What `prompts/get` asked for, checked.
#[derive(Debug, PartialEq)]
pub struct Asked {
    pub name: String,
    pub request: Option<String>,
}

/// Reads `prompts/get`'s params: a name, and string arguments of which only `request` is known.
pub fn asked(params: &Map<String, Value>) -> Result<Asked, RpcError> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err(RpcError::invalid_params(
            "prompts/get needs params.name, a prompt's name from prompts/list",
        ));
    };
    let mut request = None;
    match params.get("arguments") {
        None | Some(Value::Null) => {}
        Some(Value::Object(arguments)) => {
            for (key, value) in arguments {
                let Some(text) = value.as_str() else {
                    return Err(RpcError::invalid_params(format!("argument \"{key}\" must be a string")));
                };
                if key != REQUEST {
                    return Err(RpcError::invalid_params(format!(
                        "unknown argument \"{key}\"; a prompt takes only \"{REQUEST}\""
                    )));
                }
                if text.len() > MAX_REQUEST_BYTES {
                    return Err(RpcError::invalid_params(format!(
                        "argument \"{REQUEST}\" is longer than {MAX_REQUEST_BYTES} bytes"
                    )));
                }
                request = Some(text.to_string()).filter(|t| !t.trim().is_empty());
            }
        }
        Some(_) => {
            return Err(RpcError::invalid_params(
                "params.arguments must be an object of strings",
            ));
        }
    }
    Ok(Asked {
        name: name.to_string(),
        request,
    })
}

/// The message that hands a skill to the agent, with the person's request after it.
pub fn message(name: &str, body: &str, request: Option<&str>) -> String {
    let mut text = format!("Follow the owner's skill \"{name}\":\n\n{}", body.trim_end());
    if let Some(request) = request {
        text.push_str("\n\n---\n\n");
        text.push_str(request);
    }
    text
}

/// `prompts/get`: the skill's instructions as one user message.
pub async fn get(context: &ToolContext<'_>, asked: &Asked) -> Result<Value, RpcError> {
    let unknown = || {
        RpcError::invalid_params(format!("unknown prompt: {}; see prompts/list", asked.name))
            .with_data(json!({"name": asked.name}))
    };
    let id = asked.name.trim();
    if !granted(context) || id.is_empty() || id.contains('/') || id.starts_with('.') || id.len() > 256 {
        return Err(unknown());
    }
    let read = match context.read_note(Target::Skill(id.to_string())).await {
        Ok(read) => read,
        Err(ToolError::Failed(message)) => return Err(RpcError::new(super::jsonrpc::INTERNAL_ERROR, message)),
        Err(_) => return Err(unknown()),
    };
    let skill = ops::skill_of(&read.note).ok_or_else(unknown)?;
    let (body, _) = super::tools::fetch::cut(read.body, super::tools::note_read::MAX_BODY_BYTES);
    Ok(json!({
        "description": skill.description,
        "messages": [{
            "role": "user",
            "content": { "type": "text", "text": message(&skill.name, &body, asked.request.as_deref()) },
        }],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn a_prompt_is_asked_by_name_with_at_most_a_request() {
        assert_eq!(
            asked(&params(
                json!({"name": "weekly", "arguments": {"request": "for this week"}})
            )),
            Ok(Asked {
                name: "weekly".into(),
                request: Some("for this week".into())
            })
        );
        assert_eq!(
            asked(&params(json!({"name": "weekly", "arguments": {"request": "  "}})))
                .unwrap()
                .request,
            None
        );
        for (bad, why) in [
            (json!({}), "needs params.name"),
            (json!({"name": 3}), "needs params.name"),
            (
                json!({"name": "w", "arguments": {"other": "x"}}),
                "unknown argument \"other\"",
            ),
            (json!({"name": "w", "arguments": {"request": 1}}), "must be a string"),
            (json!({"name": "w", "arguments": ["x"]}), "must be an object"),
            (
                json!({"name": "w", "arguments": {"request": "x".repeat(MAX_REQUEST_BYTES + 1)}}),
                "longer than",
            ),
        ] {
            let error = asked(&params(bad.clone())).unwrap_err();
            assert_eq!(error.code, -32602, "{bad}");
            assert!(error.message.contains(why), "{bad}: {}", error.message);
        }
    }

    #[test]
    fn the_message_is_the_skill_then_the_request() {
        assert_eq!(
            message("Review", "Do it.\n\n", None),
            "Follow the owner's skill \"Review\":\n\nDo it."
        );
        assert_eq!(
            message("Review", "Do it.", Some("this week")),
            "Follow the owner's skill \"Review\":\n\nDo it.\n\n---\n\nthis week"
        );
    }
}
