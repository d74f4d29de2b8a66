//! Pages of the lists MCP methods answer (`prompts/list`, `resources/list`): an opaque cursor that
//! names the next page's offset and the list it belongs to, so a cursor of one list is refused by
//! another. A list is in the same order on every call while it has not changed.

use serde_json::{Map, Value};

use super::jsonrpc::RpcError;

/// The cursor of the page of `kind` that starts at `offset`.
pub fn encode(kind: &str, offset: usize) -> String {
    format!("{kind}-{offset}")
}

/// The offset a cursor of `kind` names, or None when it is not one.
pub fn decode(kind: &str, cursor: &str) -> Option<usize> {
    cursor
        .strip_prefix(kind)?
        .strip_prefix('-')?
        .parse()
        .ok()
        .filter(|n| *n > 0)
}

/// The offset `params.cursor` names (0 without one).
pub fn offset(params: &Map<String, Value>, kind: &str) -> Result<usize, RpcError> {
    let invalid = || RpcError::invalid_params(format!("invalid cursor: use a nextCursor from {kind}/list, or none"));
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(0),
        Some(Value::String(cursor)) => decode(kind, cursor).ok_or_else(invalid),
        Some(_) => Err(RpcError::invalid_params("cursor must be a string")),
    }
}

/// The page of `items` that `params.cursor` asks for, and the cursor of the next one.
pub fn page<T>(
    items: Vec<T>,
    params: &Map<String, Value>,
    kind: &str,
    size: usize,
) -> Result<(Vec<T>, Option<String>), RpcError> {
    let offset = offset(params, kind)?;
    let total = items.len();
    if offset > total {
        return Err(RpcError::invalid_params(format!(
            "invalid cursor: use a nextCursor from {kind}/list, or none"
        )));
    }
    let next = (offset + size < total).then(|| encode(kind, offset + size));
    Ok((items.into_iter().skip(offset).take(size).collect(), next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cursors_page_through_a_list_and_belong_to_it() {
        let params = |cursor: Value| json!({ "cursor": cursor }).as_object().unwrap().clone();
        let (first, next) = page((0..5).collect(), &Map::new(), "prompts", 2).unwrap();
        assert_eq!((first, next.clone()), (vec![0, 1], Some("prompts-2".to_string())));
        let (last, end) = page((0..5).collect(), &params(json!("prompts-4")), "prompts", 2).unwrap();
        assert_eq!((last, end), (vec![4], None));
        for bad in [
            json!("resources-2"),
            json!("prompts-0"),
            json!("prompts-9"),
            json!("x"),
            json!(2),
        ] {
            let error = page((0..5).collect::<Vec<_>>(), &params(bad.clone()), "prompts", 2).unwrap_err();
            assert_eq!(error.code, -32602, "{bad}");
        }
    }
}
