//! What a connection sees, reduced to what its lists and subscriptions depend on, and the
//! notifications a change between two such views calls for. Plain functions over a connection and
//! a set of notes: `listen` takes views when the access epoch moves or the notes change, and sends
//! what `diff` says.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};

use serde_json::{Value, json};

use super::resources;
use super::tools::ToolContext;
use crate::auth::{Category, WriteMode};
use crate::journal::notes::NoteSet;
use crate::journal::notes::ops;

/// What a listener asked to hear about.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
    /// Notes (by URI) whose changes the listener follows.
    pub subscriptions: BTreeSet<String>,
}

impl Filter {
    /// Every list, no resource: what a 2025 session's stream carries.
    pub fn lists() -> Filter {
        Filter {
            tools: true,
            prompts: true,
            resources: true,
            subscriptions: BTreeSet::new(),
        }
    }

    /// Reads `subscriptions/listen`'s `params.notifications`; None when it is not an object.
    pub fn read(notifications: &Value) -> Option<Filter> {
        let object = notifications.as_object()?;
        let flag = |key: &str| object.get(key).and_then(Value::as_bool).unwrap_or(false);
        let subscriptions = match object.get("resourceSubscriptions") {
            None | Some(Value::Null) => BTreeSet::new(),
            Some(Value::Array(uris)) => uris
                .iter()
                .map(|u| u.as_str().map(str::to_string))
                .collect::<Option<_>>()?,
            Some(_) => return None,
        };
        Some(Filter {
            tools: flag("toolsListChanged"),
            prompts: flag("promptsListChanged"),
            resources: flag("resourcesListChanged"),
            subscriptions,
        })
    }

    /// The filter as the acknowledgment echoes it: the parts this server honours, which are all.
    pub fn to_json(&self) -> Value {
        let mut out = serde_json::Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resources),
        ] {
            if on {
                out.insert(key.into(), json!(true));
            }
        }
        if !self.subscriptions.is_empty() {
            out.insert("resourceSubscriptions".into(), json!(self.subscriptions));
        }
        Value::Object(out)
    }
}

/// A change a listener hears of.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    ToolsListChanged,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated(String),
}

impl Change {
    /// The notification, tagged with the subscription it belongs to (2026-07-28) or not (a 2025
    /// session's stream).
    pub fn notification(&self, subscription: Option<&Value>) -> Value {
        let (method, mut params) = match self {
            Change::ToolsListChanged => ("notifications/tools/list_changed", json!({})),
            Change::PromptsListChanged => ("notifications/prompts/list_changed", json!({})),
            Change::ResourcesListChanged => ("notifications/resources/list_changed", json!({})),
            Change::ResourceUpdated(uri) => ("notifications/resources/updated", json!({ "uri": uri })),
        };
        if let Some(id) = subscription {
            params["_meta"] = json!({ "io.modelcontextprotocol/subscriptionId": id });
        }
        json!({ "jsonrpc": "2.0", "method": method, "params": params })
    }
}

/// What a connection sees, as far as its lists and subscriptions go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// What the tool list is built from (as `listing` keys it).
    tools: (Vec<Category>, Vec<String>, WriteMode),
    /// The skills seen: id, name, description.
    prompts: u64,
    /// The paths of the notes seen.
    resources: u64,
    /// Each subscribed URI's note hash as seen (None: not there for this connection).
    subscribed: BTreeMap<String, Option<String>>,
}

fn digest(value: impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

impl View {
    /// The view of `context`'s connection over `set`, for the URIs `filter` follows.
    pub fn of(context: &ToolContext<'_>, set: &NoteSet, filter: &Filter) -> View {
        let grant = &context.connection.grant;
        let tools = (
            grant.categories.iter().copied().collect(),
            context.reachable_facet_ids(),
            grant.write_mode,
        );
        let notes = grant.categories.contains(&Category::Notes);
        let reader = context.reader();
        let prompts = if notes && filter.prompts {
            let skills: Vec<_> = ops::skills(set, &reader)
                .into_iter()
                .map(|s| (s.id, s.name, s.description))
                .collect();
            digest(skills)
        } else {
            0
        };
        let resources = if notes && filter.resources {
            let mut paths: Vec<&str> = set.visible(&reader).map(|(note, _)| note.path.as_str()).collect();
            paths.sort_unstable();
            digest(paths)
        } else {
            0
        };
        let subscribed = filter
            .subscriptions
            .iter()
            .map(|uri| {
                let hash = resources::path_of(uri)
                    .filter(|_| notes)
                    .and_then(|path| set.find_path(&path, &reader).map(|(note, _)| note.hash.clone()));
                (uri.clone(), hash)
            })
            .collect();
        View {
            tools,
            prompts,
            resources,
            subscribed,
        }
    }
}

/// The notifications that take a listener from `before` to `after`, for what `filter` asked.
pub fn diff(before: &View, after: &View, filter: &Filter) -> Vec<Change> {
    let mut changes = Vec::new();
    if filter.tools && before.tools != after.tools {
        changes.push(Change::ToolsListChanged);
    }
    if filter.prompts && before.prompts != after.prompts {
        changes.push(Change::PromptsListChanged);
    }
    if filter.resources && before.resources != after.resources {
        changes.push(Change::ResourcesListChanged);
    }
    for (uri, hash) in &after.subscribed {
        if filter.subscriptions.contains(uri) && before.subscribed.get(uri) != Some(hash) {
            changes.push(Change::ResourceUpdated(uri.clone()));
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(tools: WriteMode, prompts: u64, resources: u64, subscribed: &[(&str, Option<&str>)]) -> View {
        View {
            tools: (vec![Category::Notes], vec![], tools),
            prompts,
            resources,
            subscribed: subscribed
                .iter()
                .map(|(u, h)| (u.to_string(), h.map(str::to_string)))
                .collect(),
        }
    }

    #[test]
    fn a_change_is_heard_only_by_who_asked_for_it() {
        let all = Filter::read(&json!({
            "toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true,
            "resourceSubscriptions": ["journal://notes/a.md"]}))
        .unwrap();
        let before = view(WriteMode::None, 1, 1, &[("journal://notes/a.md", Some("h1"))]);
        assert_eq!(diff(&before, &before, &all), []);
        let after = view(WriteMode::Force, 2, 2, &[("journal://notes/a.md", Some("h2"))]);
        assert_eq!(
            diff(&before, &after, &all),
            [
                Change::ToolsListChanged,
                Change::PromptsListChanged,
                Change::ResourcesListChanged,
                Change::ResourceUpdated("journal://notes/a.md".into())
            ]
        );
        let tools_only = Filter::read(&json!({"toolsListChanged": true})).unwrap();
        assert_eq!(diff(&before, &after, &tools_only), [Change::ToolsListChanged]);
        // A note that disappears for this reader (made private, deleted) is an update too.
        let gone = view(WriteMode::None, 1, 2, &[("journal://notes/a.md", None)]);
        assert_eq!(
            diff(&before, &gone, &all),
            [
                Change::ResourcesListChanged,
                Change::ResourceUpdated("journal://notes/a.md".into())
            ]
        );
    }

    #[test]
    fn filters_are_read_strictly_and_echoed_as_honoured() {
        assert_eq!(Filter::read(&json!({})), Some(Filter::default()));
        assert_eq!(Filter::read(&json!(true)), None);
        assert_eq!(Filter::read(&json!({"resourceSubscriptions": "x"})), None);
        assert_eq!(Filter::read(&json!({"resourceSubscriptions": [1]})), None);
        let filter = Filter::read(&json!({"toolsListChanged": true, "promptsListChanged": false,
            "resourceSubscriptions": ["journal://notes/a.md"]}))
        .unwrap();
        assert_eq!(
            filter.to_json(),
            json!({"toolsListChanged": true, "resourceSubscriptions": ["journal://notes/a.md"]})
        );
    }

    #[test]
    fn notifications_carry_the_subscription_they_belong_to() {
        let tagged = Change::ResourceUpdated("journal://notes/a.md".into()).notification(Some(&json!(7)));
        assert_eq!(tagged["method"], "notifications/resources/updated");
        assert_eq!(tagged["params"]["uri"], "journal://notes/a.md");
        assert_eq!(tagged["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);
        let plain = Change::ToolsListChanged.notification(None);
        assert_eq!(
            plain,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})
        );
    }
}
