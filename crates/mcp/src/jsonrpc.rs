//! JSON-RPC 2.0 envelopes as MCP uses them: classifying what arrived and building replies.
//!
//! MCP narrows JSON-RPC: a request id is a string or a number (never null), params are an object.
//! This module only shapes messages; it does not know any method.

use serde_json::{Map, Value, json};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// One incoming message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request {
        id: Value,
        method: String,
        params: Map<String, Value>,
    },
    Notification {
        method: String,
        params: Map<String, Value>,
    },
    /// A response to something the server asked (its id, and its result or error).
    Response(Map<String, Value>),
}

/// Classifies one JSON value, or says why it is not a valid MCP message (with the id, when one
/// could be read, so the error can name it). Takes the value, so that the method and parameters
/// move out of it rather than being copied.
pub fn classify(value: Value) -> Result<Message, (Value, String)> {
    let Value::Object(mut object) = value else {
        return Err((Value::Null, "a JSON-RPC message must be a JSON object".into()));
    };
    let id = object.remove("id");
    let reply_id = || match &id {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((reply_id(), "\"jsonrpc\" must be \"2.0\"".into()));
    }
    if object.contains_key("result") || object.contains_key("error") {
        if object.contains_key("method") {
            return Err((reply_id(), "a message cannot be both a request and a response".into()));
        }
        if let Some(id) = id {
            object.insert("id".into(), id);
        }
        return Ok(Message::Response(object));
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        Some(_) => return Err((reply_id(), "\"method\" must be a string".into())),
        None => return Err((reply_id(), "a request needs a \"method\"".into())),
    };
    let params = match object.remove("params") {
        // Absent or null: no parameters (null is not strictly allowed, but harmless to accept).
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params,
        Some(_) => return Err((reply_id(), "\"params\" must be an object".into())),
    };
    match id {
        None => Ok(Message::Notification { method, params }),
        Some(id @ (Value::String(_) | Value::Number(_))) => Ok(Message::Request { id, method, params }),
        Some(_) => Err((Value::Null, "\"id\" must be a string or a number".into())),
    }
}

/// A successful reply.
pub fn result(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// An error reply.
pub fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
}

/// A JSON-RPC error a method answers with: its code, its message and, where the specification
/// asks for one, its data.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }

    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    /// The error reply to the request `id`.
    pub fn reply(&self, id: Value) -> Value {
        let mut reply = error(id, self.code, self.message.clone());
        if let Some(data) = &self.data {
            reply["error"]["data"] = data.clone();
        }
        reply
    }
}

/// A reply, serialized. Replies are text so that an answer kept as text (a cached tool list) is
/// spliced in rather than parsed and serialized again.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    text: String,
    /// The error's code, when the reply is an error (a transport may answer some with their own
    /// HTTP status).
    error: Option<i64>,
}

impl Encoded {
    /// Serializes a reply built as a value.
    pub fn value(reply: &Value) -> Encoded {
        Encoded {
            text: reply.to_string(),
            error: reply
                .get("error")
                .and_then(|error| error.get("code"))
                .and_then(Value::as_i64),
        }
    }

    /// A success reply whose result is already JSON text (one complete JSON value).
    pub fn result_text(id: &Value, result: &str) -> Encoded {
        Encoded {
            text: format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
            error: None,
        }
    }

    /// Several replies as one JSON array (a batch's answer).
    pub fn batch(replies: &[Encoded]) -> String {
        let parts: Vec<&str> = replies.iter().map(|r| r.text.as_str()).collect();
        format!("[{}]", parts.join(","))
    }

    /// The error code, when the reply is an error.
    pub fn error_code(&self) -> Option<i64> {
        self.error
    }

    pub fn into_string(self) -> String {
        self.text
    }

    /// The length of the serialized reply in bytes.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_replies_are_the_json_they_stand_for() {
        let spliced = Encoded::result_text(&json!("a\"b"), r#"{"tools":[]}"#);
        let value: Value = serde_json::from_str(&spliced.clone().into_string()).unwrap();
        assert_eq!(value, result(json!("a\"b"), json!({"tools": []})));
        let batch = Encoded::batch(&[spliced, Encoded::value(&error(json!(7), INVALID_PARAMS, "no"))]);
        let value: Value = serde_json::from_str(&batch).unwrap();
        assert_eq!(value[1]["error"]["code"], INVALID_PARAMS);
        let refused = Encoded::value(&error(json!(8), -32021, "needs sampling"));
        assert_eq!(refused.error_code(), Some(-32021));
        assert_eq!(Encoded::result_text(&json!(8), "{}").error_code(), None);
        assert_eq!(value.as_array().unwrap().len(), 2);
    }

    #[test]
    fn classifies_messages() {
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        assert!(matches!(classify(request), Ok(Message::Request { method, .. }) if method == "ping"));
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(
            classify(note),
            Ok(Message::Notification {
                method: "notifications/initialized".into(),
                params: Map::new(),
            })
        );
        let Ok(Message::Response(response)) = classify(json!({"jsonrpc": "2.0", "id": 1, "result": {"a": 2}})) else {
            panic!("a response is a response");
        };
        assert_eq!(response["id"], 1);
        assert_eq!(response["result"]["a"], 2);
    }

    #[test]
    fn refuses_malformed_envelopes_naming_the_id() {
        let cases = [
            (json!([1]), Value::Null),
            (json!({"id": 3, "method": "ping"}), json!(3)),
            (json!({"jsonrpc": "2.0", "id": "a", "method": 5}), json!("a")),
            (
                json!({"jsonrpc": "2.0", "id": 4, "method": "x", "params": [1]}),
                json!(4),
            ),
            (json!({"jsonrpc": "2.0", "id": null, "method": "x"}), Value::Null),
            (json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "x"}), Value::Null),
            (json!({"jsonrpc": "2.0", "id": 1, "method": "x", "result": 1}), json!(1)),
        ];
        for (message, id) in cases {
            let (got, _why) = classify(message.clone()).unwrap_err();
            assert_eq!(got, id, "{message}");
        }
    }
}
