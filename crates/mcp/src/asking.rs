//! Asking the person (MCP 2026-07-28's multi-round-trip requests): a tool that needs the person's
//! answer (`note_delete` without `confirm`) answers a client that declared elicitation with an
//! `input_required` result, and the client calls again with the person's answer and the
//! `requestState` it was given.
//!
//! The state is signed with the journal's key and binds the connection, the tool, the arguments
//! (all but the one the question fills in) and an expiry: an answer counts only for the call it was
//! asked for, and a state that was altered, is another connection's or is old is refused. The
//! person's answer is not a security boundary (the agent could have sent `confirm: true` itself);
//! it keeps a destructive call from happening without the person seeing it, when the client can ask.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::jsonrpc::RpcError;
use crate::journal::signed::SigningKey;

/// How long an asked question stays answerable.
pub const STATE_TTL_MS: i64 = 10 * 60 * 1000;
const PURPOSE: &str = "input-required";

/// What a tool asks the person before it runs: a yes-or-no under `key`, which a yes sets to true in
/// the arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub key: &'static str,
    pub message: String,
}

/// Whether the client declared form elicitation in this request (`{}` means form).
pub fn can_elicit(capabilities: &Map<String, Value>) -> bool {
    match capabilities.get("elicitation") {
        Some(Value::Object(modes)) => modes.is_empty() || modes.contains_key("form"),
        _ => false,
    }
}

/// The arguments as one canonical text (keys sorted at every depth), without the answered key.
fn digest(arguments: &Value, key: &str) -> String {
    fn canonical(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let sorted: BTreeMap<&String, Value> = map.iter().map(|(k, v)| (k, canonical(v))).collect();
                json!(sorted)
            }
            Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
            other => other.clone(),
        }
    }
    let mut arguments = arguments.clone();
    if let Some(map) = arguments.as_object_mut() {
        map.remove(key);
    }
    let text = canonical(&arguments).to_string();
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

/// The state for asking `question` about this call.
pub fn state(
    signing: &SigningKey,
    connection_id: &str,
    tool: &str,
    arguments: &Value,
    key: &str,
    now_ms: i64,
) -> String {
    let expires = (now_ms + STATE_TTL_MS).to_string();
    signing.sign(PURPOSE, &[connection_id, tool, &digest(arguments, key), &expires])
}

/// Checks a state sent back with a call: signed by this journal, for this connection, tool and
/// arguments, and in time.
pub fn check_state(
    signing: &SigningKey,
    token: &str,
    connection_id: &str,
    tool: &str,
    arguments: &Value,
    key: &str,
    now_ms: i64,
) -> Result<(), RpcError> {
    let refused =
        |why: &str| RpcError::invalid_params(format!("requestState {why}; call again without it to be asked anew"));
    let fields = signing
        .verify(PURPOSE, token)
        .ok_or_else(|| refused("is not one this server gave"))?;
    let [connection, named_tool, args, expires] = fields.as_slice() else {
        return Err(refused("is not one this server gave"));
    };
    if connection != connection_id || named_tool != tool || *args != digest(arguments, key) {
        return Err(refused("was given for another call"));
    }
    if expires.parse::<i64>().map_or(true, |at| at < now_ms) {
        return Err(refused("has expired"));
    }
    Ok(())
}

/// The `input_required` result that asks `question` (without the era's `_meta`, which the caller adds).
pub fn input_required(question: &Question, state: &str) -> Value {
    json!({
        "resultType": "input_required",
        "inputRequests": {
            question.key: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": question.message,
                    "requestedSchema": {
                        "type": "object",
                        "properties": { question.key: { "type": "boolean", "title": "Yes, go ahead" } },
                        "required": [question.key],
                    },
                },
            },
        },
        "requestState": state,
    })
}

/// What the person answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Yes,
    /// Declined, cancelled, or accepted without saying yes.
    No,
    /// No answer to this question in the call.
    Missing,
}

/// Reads the answer to `key` from a call's `inputResponses`.
pub fn answer(params: &Map<String, Value>, key: &str) -> Result<Answer, RpcError> {
    let responses = match params.get("inputResponses") {
        None | Some(Value::Null) => return Ok(Answer::Missing),
        Some(Value::Object(responses)) => responses,
        Some(_) => {
            return Err(RpcError::invalid_params(
                "inputResponses must be an object of answers by key",
            ));
        }
    };
    let Some(response) = responses.get(key) else {
        return Ok(Answer::Missing);
    };
    let Some(action) = response.get("action").and_then(Value::as_str) else {
        return Err(RpcError::invalid_params(format!(
            "inputResponses.{key} must be an elicitation result: {{\"action\": \"accept\", \"content\": {{...}}}}"
        )));
    };
    let yes = action == "accept" && response.pointer(&format!("/content/{key}")) == Some(&Value::Bool(true));
    Ok(if yes { Answer::Yes } else { Answer::No })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SigningKey {
        SigningKey::from_bytes([7; 32])
    }

    #[test]
    fn a_state_counts_only_for_the_call_it_was_given_for_and_only_in_time() {
        let arguments = json!({"path": "Projects/old.md", "expected_hash": null});
        let token = state(&key(), "c1", "note_delete", &arguments, "confirm", 1_000);
        let check = |token: &str, connection: &str, tool: &str, arguments: &Value, now: i64| {
            check_state(&key(), token, connection, tool, arguments, "confirm", now)
        };
        assert_eq!(check(&token, "c1", "note_delete", &arguments, 2_000), Ok(()));
        // The answered key and the order of keys do not matter.
        let answered = json!({"expected_hash": null, "confirm": true, "path": "Projects/old.md"});
        assert_eq!(check(&token, "c1", "note_delete", &answered, 2_000), Ok(()));
        let other = json!({"path": "Projects/other.md"});
        for (why, result) in [
            (
                "tampered",
                check(&format!("{token}-TAMPERED"), "c1", "note_delete", &arguments, 2_000),
            ),
            (
                "another connection",
                check(&token, "c2", "note_delete", &arguments, 2_000),
            ),
            ("another tool", check(&token, "c1", "note_move", &arguments, 2_000)),
            ("other arguments", check(&token, "c1", "note_delete", &other, 2_000)),
            (
                "expired",
                check(&token, "c1", "note_delete", &arguments, 1_000 + STATE_TTL_MS + 1),
            ),
            ("not a state", check("x", "c1", "note_delete", &arguments, 2_000)),
        ] {
            assert_eq!(result.unwrap_err().code, -32602, "{why}");
        }
    }

    #[test]
    fn answers_are_read_strictly() {
        let params = |responses: Value| json!({ "inputResponses": responses }).as_object().unwrap().clone();
        let yes = params(json!({"confirm": {"action": "accept", "content": {"confirm": true}}}));
        assert_eq!(answer(&yes, "confirm"), Ok(Answer::Yes));
        for no in [
            json!({"confirm": {"action": "decline"}}),
            json!({"confirm": {"action": "cancel"}}),
            json!({"confirm": {"action": "accept", "content": {"confirm": false}}}),
            json!({"confirm": {"action": "accept", "content": {"confirm": "true"}}}),
        ] {
            assert_eq!(answer(&params(no.clone()), "confirm"), Ok(Answer::No), "{no}");
        }
        assert_eq!(answer(&Map::new(), "confirm"), Ok(Answer::Missing));
        assert_eq!(
            answer(&params(json!({"other": {"action": "accept"}})), "confirm"),
            Ok(Answer::Missing)
        );
        assert!(answer(&params(json!({"confirm": 12345})), "confirm").is_err());
        assert!(answer(&params(json!([1])), "confirm").is_err());
    }

    #[test]
    fn form_elicitation_is_declared_by_either_spelling() {
        let caps = |v: Value| v.as_object().unwrap().clone();
        assert!(can_elicit(&caps(json!({"elicitation": {}}))));
        assert!(can_elicit(&caps(json!({"elicitation": {"form": {}}}))));
        assert!(!can_elicit(&caps(json!({"elicitation": {"url": {}}}))));
        assert!(!can_elicit(&caps(json!({"sampling": {}}))));
    }

    #[test]
    fn the_question_is_one_form_with_a_yes() {
        let asked = input_required(
            &Question {
                key: "confirm",
                message: "Delete?".into(),
            },
            "s",
        );
        assert_eq!(asked["resultType"], "input_required");
        assert_eq!(asked["requestState"], "s");
        let request = &asked["inputRequests"]["confirm"];
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(
            request["params"]["requestedSchema"]["properties"]["confirm"]["type"],
            "boolean"
        );
    }
}
