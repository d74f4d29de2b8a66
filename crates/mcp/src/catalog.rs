//! The journal's offer: its tools (each call checked against the grant as it is now, audited, and
//! only then answered), the owner's skills as prompts, the notes as resources and their path
//! completions, every one of them through the same sight rules. `dispatch` hands it every request
//! that is not one of the protocol's own.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::asking::{self, Answer, Question};
use super::caller::{Caller, not_found, reply};
use super::jsonrpc::{self, Encoded, INTERNAL_ERROR, INVALID_PARAMS, RpcError};
use super::listing;
use super::offer::{Answering, Offer, Request};
use super::session::Sessions;
use super::state::McpState;
use super::stateless::{self, Cache};
use super::tools::{self, ToolContext, ToolError, ToolOutput};
use super::{completion, prompts, resources};
use crate::auth::audit::{self, Outcome};

/// The journal's tools, prompts, resources and completions.
pub struct Journal;

/// What MCP needs to answer for `journal` with the journal's own offer.
pub fn state(journal: Arc<crate::journal::Journal>, sessions: Sessions) -> McpState {
    McpState::offering(journal, sessions, Arc::new(Journal))
}

const INSTRUCTIONS: &str = "The owner's personal journal. Call list_facets to see the areas you can read, search to find things, \
                            and save_memory / recall_memory for your own notes. What you can see depends on the access the owner granted.";

impl Offer<McpState> for Journal {
    /// Lists announce their changes in both eras (a 2025 session on its GET stream or over stdio,
    /// 2026-07-28 on `subscriptions/listen`); a note's own changes only at 2026-07-28, where
    /// `subscriptions/listen` follows resources.
    fn capabilities(&self, stateless: bool) -> Value {
        json!({
            "tools": { "listChanged": true },
            "prompts": { "listChanged": true },
            "resources": { "subscribe": stateless, "listChanged": true },
            "completions": {},
        })
    }

    fn instructions(&self) -> &str {
        INSTRUCTIONS
    }

    fn answer<'a>(&'a self, state: &'a McpState, request: Request<'a>) -> Answering<'a> {
        Box::pin(answer(state, request))
    }
}

async fn answer(state: &McpState, request: Request<'_>) -> Encoded {
    let Request {
        caller,
        id,
        method,
        params,
        ..
    } = request;
    match method {
        "tools/list" => tools_list(state, caller, id, &params),
        "tools/call" => tools_call(state, caller, id, params).await,
        "completion/complete" => {
            let outcome = completion::asked(&params).map(|asked| completion::complete(&context(state, caller), &asked));
            match outcome {
                // Offers change as the notes do: never kept.
                Ok(result) => reply(caller, &id, &result.to_string(), None),
                Err(error) => Encoded::value(&error.reply(id)),
            }
        }
        "prompts/list" => listed(caller, &id, prompts::list(&context(state, caller), &params)),
        "resources/list" => listed(caller, &id, resources::list(&context(state, caller), &params)),
        "resources/templates/list" => listed(caller, &id, resources::templates(&context(state, caller), &params)),
        "prompts/get" => {
            let context = context(state, caller);
            let outcome = match prompts::asked(&params) {
                Ok(asked) => prompts::get(&context, &asked).await,
                Err(error) => Err(error),
            };
            let arguments = json!({ "name": params.get("name") });
            audited(state, caller, id, "prompts/get", arguments, outcome, None).await
        }
        "resources/read" => {
            let context = context(state, caller);
            let not_found = if caller.version.is_stateless() {
                INVALID_PARAMS
            } else {
                resources::NOT_FOUND_2025
            };
            let outcome = match resources::asked(&params) {
                Ok(uri) => resources::read(&context, uri, not_found).await,
                Err(error) => Err(error),
            };
            let arguments = json!({ "uri": params.get("uri") });
            // A note read now may change at any moment: kept by no one.
            let cache = Cache {
                ttl_ms: 0,
                private: true,
            };
            audited(state, caller, id, "resources/read", arguments, outcome, Some(cache)).await
        }
        other => not_found(id, other),
    }
}

/// A list's answer: the list's result with the caching hints lists carry, or its error.
fn listed(caller: &Caller, id: &Value, outcome: Result<Value, RpcError>) -> Encoded {
    match outcome {
        // Every list follows the credential's grant.
        Ok(result) => reply(
            caller,
            id,
            &result.to_string(),
            Some(Cache {
                ttl_ms: stateless::LIST_TTL_MS,
                private: true,
            }),
        ),
        Err(error) => Encoded::value(&error.reply(id.clone())),
    }
}

/// Answers a read that is not a tool (`prompts/get`, `resources/read`) after recording it in the
/// audit log as calls are: the owner sees every note an agent read, however it asked.
async fn audited(
    state: &McpState,
    caller: &Caller,
    id: Value,
    method: &str,
    arguments: Value,
    outcome: Result<Value, RpcError>,
    cache: Option<Cache>,
) -> Encoded {
    let (audit_outcome, detail) = match &outcome {
        Ok(_) => (Outcome::Served, String::new()),
        Err(error) if error.code == INTERNAL_ERROR => (Outcome::Error, error.message.clone()),
        Err(error) => (Outcome::Refused, error.message.clone()),
    };
    let record = record(caller, method, arguments, audit_outcome, detail);
    let withheld = "the read could not be recorded in the audit log, so its answer is withheld; try again";
    if let Err(reply) = recorded(state, record, &id, withheld).await {
        return reply;
    }
    match outcome {
        Ok(result) => reply(caller, &id, &result.to_string(), cache),
        Err(error) => Encoded::value(&error.reply(id)),
    }
}

/// Writes `record` to the audit log; when it cannot be written, the error reply (saying `withheld`)
/// that takes the answer's place: nothing leaves unrecorded.
async fn recorded(state: &McpState, record: audit::Record, id: &Value, withheld: &str) -> Result<(), Encoded> {
    state.audit.record(record).await.map_err(|error| {
        tracing::error!(%error, "the audit log could not be written; the answer is withheld");
        Encoded::value(&jsonrpc::error(id.clone(), INTERNAL_ERROR, withheld))
    })
}

/// An audit record of the caller's connection (no note change named).
fn record(caller: &Caller, tool: &str, arguments: Value, outcome: Outcome, detail: String) -> audit::Record {
    audit::Record {
        connection_id: caller.connection.id.clone(),
        connection_label: caller.connection.label.clone(),
        tool: tool.to_string(),
        arguments,
        outcome,
        detail,
        change: None,
    }
}

fn context<'a>(state: &'a McpState, caller: &'a Caller) -> ToolContext<'a> {
    ToolContext {
        journal: &state.journal,
        connection: &caller.connection,
        facets: state.journal.facets(),
    }
}

fn tools_list(state: &McpState, caller: &Caller, id: Value, params: &Map<String, Value>) -> Encoded {
    let invalid_cursor = |id| {
        Encoded::value(&jsonrpc::error(
            id,
            INVALID_PARAMS,
            "invalid cursor: use a nextCursor from tools/list, or none",
        ))
    };
    let offset = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(cursor)) => match listing::decode_cursor(cursor) {
            Some(offset) => offset,
            None => return invalid_cursor(id),
        },
        Some(_) => return Encoded::value(&jsonrpc::error(id, INVALID_PARAMS, "cursor must be a string")),
    };
    let Some(result) = state.listings.result(&context(state, caller), caller.version, offset) else {
        return invalid_cursor(id);
    };
    if let Some(session) = &caller.session {
        state
            .sessions
            .set_listed(&session.id, caller.connection.grant.generation);
    }
    // Kept whole, in either era (a 2026-07-28 answer with its fields and hints already).
    Encoded::result_text(&id, &result)
}

async fn tools_call(state: &McpState, caller: &Caller, id: Value, mut params: Map<String, Value>) -> Encoded {
    // Malformed calls are protocol errors, but they are calls all the same: each is audited.
    let name = match params.remove("name") {
        Some(Value::String(name)) => name,
        _ => {
            return refuse(
                state,
                caller,
                id,
                "(no name)",
                "tools/call needs params.name, the tool's name",
            )
            .await;
        }
    };
    let arguments = match params.remove("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(arguments @ Value::Object(_)) => arguments,
        Some(_) => return refuse(state, caller, id, &name, "params.arguments must be an object").await,
    };
    let Some(tool) = tools::find(&name) else {
        return refuse(state, caller, id, &name, &format!("unknown tool: {name}")).await;
    };
    let context = context(state, caller);
    let connection = &caller.connection;
    // 2026-07-28: a tool that needs the person's answer asks for it, when the client can ask.
    let mut arguments = arguments;
    let mut declined = false;
    if let Some(question) = question(caller, tool, &arguments) {
        match asked(state, caller, &name, &arguments, &question, &params) {
            Ok(Answer::Yes) => arguments[question.key] = Value::Bool(true),
            Ok(Answer::No) => declined = true,
            Ok(Answer::Missing) => return ask(state, caller, id, &name, &arguments, &question).await,
            Err(error) => return refuse(state, caller, id, &name, &error.message).await,
        }
    }
    // A write tool's call says which note and in which mode, whatever its outcome.
    let change = tool.writes().then(|| audit::WriteTarget {
        path: tools::touched(tool, &arguments),
        write_mode: connection.grant.write_mode.as_str().into(),
    });
    let record = audit::Record {
        change,
        ..record(caller, &name, arguments.clone(), Outcome::Error, String::new())
    };
    let offered = tool.offered(&caller.connection);
    // A call that may change something is recorded before it runs, and its outcome written after.
    let begun = if offered && tool.writes() {
        match audit::begin(&state.journal.db, &record).await {
            Ok(id) => Some(id),
            Err(error) => {
                tracing::error!(%error, "the audit log could not be written; the call was not run");
                return Encoded::value(&jsonrpc::error(
                    id,
                    INTERNAL_ERROR,
                    "the call could not be recorded in the audit log, so it was not run; nothing changed; try again",
                ));
            }
        }
    } else {
        None
    };
    let outcome = if declined {
        Err(ToolError::Refused(
            "the person did not say yes, so nothing was done; ask them again if they want it".into(),
        ))
    } else if offered {
        tools::call(tool, arguments, &context).await
    } else {
        Err(ToolError::Refused(format!(
            "this connection's access does not include {name}; the owner can change that"
        )))
    };
    let (audit_outcome, detail) = match &outcome {
        Ok(output) if output.empty => (Outcome::Empty, String::new()),
        Ok(_) => (Outcome::Served, String::new()),
        Err(ToolError::Invalid(message)) | Err(ToolError::Refused(message)) => (Outcome::Refused, message.clone()),
        Err(ToolError::Failed(message)) => (Outcome::Error, message.clone()),
    };
    if let Err(ToolError::Failed(message)) = &outcome {
        tracing::error!(tool = %name, connection = %caller.connection.label, error = %message, "a tool failed");
    }
    if let Some(record_id) = begun {
        // The call is in the log already; a failure to write its outcome leaves it saying so
        // (`audit::BEGUN`) and does not turn a change that was made into an error for the agent.
        if let Err(error) = audit::finish(&state.journal.db, record_id, audit_outcome, &detail).await {
            tracing::error!(%error, record_id, "the outcome of a recorded call could not be written");
        }
    } else {
        // No result leaves without its audit record.
        let record = audit::Record {
            outcome: audit_outcome,
            detail,
            ..record
        };
        let withheld = "the call could not be recorded in the audit log, so its result is withheld; try again";
        if let Err(reply) = recorded(state, record, &id, withheld).await {
            return reply;
        }
    }
    // Several clients ignore notifications/tools/list_changed; say it in the result too (a 2025
    // session's only way to learn it).
    let list_changed = caller
        .session
        .as_ref()
        .is_some_and(|session| session.listed_generation != connection.grant.generation);
    let result = call_result(outcome, caller.version.has_structured_tools(), list_changed);
    // A call's result is never kept: no caching hints.
    reply(caller, &id, &result, None)
}

/// What `tool` asks the person before it runs with `arguments`, when this request can ask: at
/// 2026-07-28, with form elicitation declared, for a tool the grant offers.
fn question(caller: &Caller, tool: &tools::ToolDef, arguments: &Value) -> Option<Question> {
    if !caller.version.is_stateless() || !asking::can_elicit(&caller.capabilities) || !tool.offered(&caller.connection)
    {
        return None;
    }
    tool.asks.and_then(|asks| asks(arguments))
}

/// The person's answer in this call, if it carries one for the question this server asked.
fn asked(
    state: &McpState,
    caller: &Caller,
    tool: &str,
    arguments: &Value,
    question: &Question,
    params: &Map<String, Value>,
) -> Result<Answer, RpcError> {
    let token = match params.get("requestState") {
        // No state: whatever answers came, the question was not asked of this call.
        None | Some(Value::Null) => return Ok(Answer::Missing),
        Some(Value::String(token)) => token,
        Some(_) => {
            return Err(RpcError::invalid_params(
                "requestState must be the string this server gave",
            ));
        }
    };
    let now_ms = crate::clock::unix_now() * 1000;
    let signing = state.journal.signing_key();
    asking::check_state(
        signing,
        token,
        &caller.connection.id,
        tool,
        arguments,
        question.key,
        now_ms,
    )?;
    asking::answer(params, question.key)
}

/// Asks the person: an `input_required` result with a signed state, recorded in the audit log.
async fn ask(
    state: &McpState,
    caller: &Caller,
    id: Value,
    tool: &str,
    arguments: &Value,
    question: &Question,
) -> Encoded {
    let now_ms = crate::clock::unix_now() * 1000;
    let signing = state.journal.signing_key();
    let token = asking::state(signing, &caller.connection.id, tool, arguments, question.key, now_ms);
    let detail = format!("input required: asked the person \"{}\"", question.message);
    let record = record(caller, tool, arguments.clone(), Outcome::Refused, detail);
    if let Err(reply) = recorded(
        state,
        record,
        &id,
        "the call could not be recorded in the audit log; try again",
    )
    .await
    {
        return reply;
    }
    let mut result = asking::input_required(question, &token);
    result["_meta"] = stateless::server_meta();
    Encoded::result_text(&id, &result.to_string())
}

/// The `tools/call` result as JSON text. A success carries its serialized output twice: as the text
/// block, and (from 2025-06-18) spliced in as `structuredContent`, so it is serialized once.
fn call_result(outcome: Result<ToolOutput, ToolError>, structured: bool, list_changed: bool) -> String {
    let meta = if list_changed {
        r#","_meta":{"tools_list_changed":true}"#
    } else {
        ""
    };
    match outcome {
        Ok(output) => {
            // One buffer: the text block is the result escaped as a JSON string by serde_json's
            // writer (formatting a `Value` through `fmt` escaped it a character at a time, 6% of a
            // search's instructions), then the result once more as structured content.
            let text = serde_json::to_string(output.json.as_str()).unwrap_or_else(|_| "\"\"".into());
            let mut result = String::with_capacity(text.len() + output.json.len() + 96);
            result.push_str(r#"{"content":[{"type":"text","text":"#);
            result.push_str(&text);
            result.push_str(r#"}],"isError":false"#);
            if structured {
                result.push_str(r#","structuredContent":"#);
                result.push_str(&output.json);
            }
            result.push_str(meta);
            result.push('}');
            result
        }
        Err(error) => {
            let text = Value::String(error.to_string());
            format!(r#"{{"content":[{{"type":"text","text":{text}}}],"isError":true{meta}}}"#)
        }
    }
}

/// Audits a malformed call and answers it with -32602.
async fn refuse(state: &McpState, caller: &Caller, id: Value, tool: &str, message: &str) -> Encoded {
    // Names come from the client: keep the log readable whatever was sent.
    let tool: String = tool.chars().filter(|c| !c.is_control()).take(128).collect();
    let record = record(caller, &tool, Value::Null, Outcome::Refused, message.to_string());
    if let Err(reply) = recorded(
        state,
        record,
        &id,
        "the call could not be recorded in the audit log; try again",
    )
    .await
    {
        return reply;
    }
    Encoded::value(&jsonrpc::error(id, INVALID_PARAMS, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: String) -> Value {
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn call_results_repeat_the_output_and_flag_a_changed_list() {
        let output = || ToolOutput::of(&json!({"results": [{"snippet": "a \"quote\"\n"}]}), false);
        let result = parsed(call_result(output(), true, false));
        assert_eq!(result["isError"], false);
        assert_eq!(result["structuredContent"]["results"][0]["snippet"], "a \"quote\"\n");
        let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(
            text, result["structuredContent"],
            "the text block repeats the structured result"
        );
        assert!(result.get("_meta").is_none());

        let older = parsed(call_result(output(), false, true));
        assert!(
            older.get("structuredContent").is_none(),
            "2025-03-26 has no structured content"
        );
        assert_eq!(older["_meta"]["tools_list_changed"], true);

        let failed = parsed(call_result(
            Err(ToolError::Invalid("limit \"x\" is wrong".into())),
            true,
            true,
        ));
        assert_eq!(failed["isError"], true);
        assert_eq!(failed["content"][0]["text"], "limit \"x\" is wrong");
        assert_eq!(failed["_meta"]["tools_list_changed"], true);
    }
}
