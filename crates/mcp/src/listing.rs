//! The `tools/list` answer: which tools a grant offers, with their grant-dependent enums filled in,
//! paged, and serialized once for each distinct shape of grant.
//!
//! An answer depends only on what the key holds: whether the protocol version has structured tools
//! (titles and output schemas) and is 2026-07-28 (whose answer carries that era's fields), the grant's categories, the facet ids it reaches, its
//! write mode and the page. Because the key is the whole input, an entry never goes stale and needs no
//! invalidation: a changed grant or a new facet is simply another key. Agents call `tools/list`
//! often, and building, copying and serializing nine schemas cost about 300 µs a call; a cached
//! answer is spliced into the reply as text.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::protocol::Version;
use super::stateless::{self, Cache};
use super::tools::{self, ToolContext};
use crate::auth::{Category, WriteMode};

/// How many tools one page holds.
pub const TOOLS_PAGE: usize = 50;

/// How many distinct answers are kept (a journal has few grant shapes); emptied when full.
const MAX_ANSWERS: usize = 256;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    structured: bool,
    /// 2026-07-28's answer carries `resultType`, the server and caching hints: kept whole too.
    stateless: bool,
    categories: Vec<Category>,
    facet_ids: Vec<String>,
    write_mode: WriteMode,
    offset: usize,
}

/// Serialized `tools/list` results, shared by every session.
#[derive(Default)]
pub struct Listings {
    answers: Mutex<HashMap<Key, Arc<str>>>,
}

impl Listings {
    /// The `tools/list` result (as JSON text) for this caller from `offset` on, or None when the
    /// offset is past the end (an invalid cursor).
    pub fn result(&self, context: &ToolContext<'_>, version: Version, offset: usize) -> Option<Arc<str>> {
        let key = Key {
            structured: version.has_structured_tools(),
            stateless: version.is_stateless(),
            categories: context.connection.grant.categories.iter().copied().collect(),
            facet_ids: context.reachable_facet_ids(),
            write_mode: context.connection.grant.write_mode,
            offset,
        };
        if let Some(text) = self.lock().get(&key) {
            return Some(text.clone());
        }
        let built = build(context, version, offset)?.to_string();
        let text: Arc<str> = if version.is_stateless() {
            // The list follows the credential's grant: private to it.
            let cache = Cache {
                ttl_ms: stateless::LIST_TTL_MS,
                private: true,
            };
            stateless::complete(&built, Some(cache)).into()
        } else {
            built.into()
        };
        let mut answers = self.lock();
        if answers.len() >= MAX_ANSWERS {
            answers.clear();
        }
        answers.insert(key, text.clone());
        Some(text)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Arc<str>>> {
        self.answers.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Builds one page of the list.
fn build(context: &ToolContext<'_>, version: Version, offset: usize) -> Option<Value> {
    let offered: Vec<_> = tools::ALL.iter().filter(|t| t.offered(context.connection)).collect();
    if offset > offered.len() {
        return None;
    }
    let page: Vec<Value> = offered
        .iter()
        .skip(offset)
        .take(TOOLS_PAGE)
        .map(|t| t.listing(context, version))
        .collect();
    let mut result = json!({ "tools": page });
    if offset + TOOLS_PAGE < offered.len() {
        result["nextCursor"] = json!(encode_cursor(offset + TOOLS_PAGE));
    }
    Some(result)
}

/// The cursor of the page that starts at `offset`.
pub fn encode_cursor(offset: usize) -> String {
    format!("tools-{offset}")
}

/// The offset a cursor names, or None when it is not one of ours.
pub fn decode_cursor(cursor: &str) -> Option<usize> {
    cursor.strip_prefix("tools-")?.parse().ok().filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_cursors() {
        assert_eq!(decode_cursor(&encode_cursor(50)), Some(50));
        for bad in ["", "tools-", "tools-0", "tools--1", "50", "tools-x"] {
            assert_eq!(decode_cursor(bad), None, "{bad}");
        }
    }
}
