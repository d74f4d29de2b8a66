//! The arguments that recur across tools, one type each: a page size (`Limit`), a continuation
//! (`Cursor`), a day (`DayArg`), a facet id (`FacetId`), a note's path (`NotePath`), a folder
//! (`FolderPath`), the hash a write expects to replace (`ExpectedHash`), and the graph's item
//! (`ItemArg`), connection id (`ConnectionId`) and type (`ConnectionType`).
//!
//! Each type checks its value while the call's arguments are parsed, so a tool receives only values
//! it can use, every tool words the same mistake the same way, and the schema an agent reads (type,
//! bounds, lengths) comes from the same type as the check. A value's own errors name the value, not
//! the field: serde does not tell a type which field it fills.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};

use crate::journal::day::Day;
use crate::journal::graph;
use crate::journal::notes::rules;
use crate::journal::signed::MAX_TOKEN_BYTES;

/// How many items a page holds: absent (or `null`) gives `DEFAULT`, otherwise 1 to `MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit<const DEFAULT: u32, const MAX: u32>(u32);

impl<const DEFAULT: u32, const MAX: u32> Limit<DEFAULT, MAX> {
    /// A checked limit.
    pub fn new(n: u32) -> Result<Self, String> {
        if (1..=MAX).contains(&n) {
            Ok(Limit(n))
        } else {
            Err(format!("limit must be between 1 and {MAX}, not {n}"))
        }
    }

    pub fn get(self) -> usize {
        self.0 as usize
    }
}

impl<const DEFAULT: u32, const MAX: u32> Default for Limit<DEFAULT, MAX> {
    fn default() -> Self {
        Limit(DEFAULT)
    }
}

impl<'de, const DEFAULT: u32, const MAX: u32> Deserialize<'de> for Limit<DEFAULT, MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Read wide, so that -1 or 2^40 get the bounds in the message instead of a type error.
        match Option::<i64>::deserialize(deserializer)? {
            None => Ok(Self::default()),
            Some(n) => {
                let n = u32::try_from(n)
                    .map_err(|_| de::Error::custom(format!("limit must be between 1 and {MAX}, not {n}")))?;
                Self::new(n).map_err(de::Error::custom)
            }
        }
    }
}

impl<const DEFAULT: u32, const MAX: u32> JsonSchema for Limit<DEFAULT, MAX> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("Limit_{DEFAULT}_{MAX}").into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "integer", "minimum": 1, "maximum": MAX, "default": DEFAULT })
    }
}

/// Defines a string argument type whose value `check` turns into the stored text.
macro_rules! text_argument {
    ($(#[$doc:meta])* $name:ident, max = $max:expr, check = $check:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Checks a value as a call's argument would be checked.
            pub fn parse(text: &str) -> Result<$name, String> {
                let check: fn(&str) -> Result<String, String> = $check;
                check(text).map($name)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = Cow::<str>::deserialize(deserializer)?;
                $name::parse(&text).map_err(de::Error::custom)
            }
        }

        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({ "type": "string", "maxLength": $max })
            }
        }
    };
}

/// The bytes a facet id may have.
const MAX_FACET_BYTES: usize = 256;

text_argument!(
    /// A `next_cursor` a previous page returned; what it continues is checked when it is opened.
    Cursor,
    max = MAX_TOKEN_BYTES,
    check = |text| within("cursor", text, MAX_TOKEN_BYTES).map(str::to_string)
);

text_argument!(
    /// A facet id (from `list_facets`); whether the grant reaches it is the tool's question.
    FacetId,
    max = MAX_FACET_BYTES,
    check = |text| within("facet", text, MAX_FACET_BYTES).map(str::to_string)
);

text_argument!(
    /// A note's path from the top of the notes folder, normalized (`./` and a leading `/` dropped,
    /// `.md` added). A well-formed path may still be quarantined or missing: that is the notes'
    /// rule to answer, with the one answer for both.
    NotePath,
    max = rules::MAX_PATH_BYTES,
    check = |text| rules::typed_note_path(text).map_err(|e| e.to_string())
);

text_argument!(
    /// A folder of the notes, normalized (`""` is the top).
    FolderPath,
    max = rules::MAX_PATH_BYTES,
    check = |text| rules::typed_folder(text).map_err(|e| e.to_string())
);

text_argument!(
    /// The SHA-256 (hex) of the note a write expects to replace, as `note_read` or the previous
    /// write returned it. Read in any case, kept in lower case.
    ExpectedHash,
    max = 64,
    check = |text| {
        let text = text.trim();
        if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(text.to_ascii_lowercase())
        } else {
            Err("expected_hash must be the 64 hex digits of a hash that note_read or a previous write returned".into())
        }
    }
);

text_argument!(
    /// An item of the journal a connection joins: a note's path or id, an entity's or a facet's
    /// name, a reference from search, or a key as the graph tools answer it (`note:...`,
    /// `entity:...`, `facet:...`, `segment:...`). Which item it names is the graph's question.
    ItemArg,
    max = MAX_TOKEN_BYTES,
    check = |text| {
        let text = within("item", text, MAX_TOKEN_BYTES)?.trim();
        if text.is_empty() {
            return Err("item is empty: name a note, an entity, a facet, or give a reference from search".into());
        }
        Ok(text.to_string())
    }
);

text_argument!(
    /// A connection's id, as the graph tools answer it (`c-` and ten letters or digits).
    ConnectionId,
    max = 12,
    check = |text| {
        let text = text.trim();
        if graph::is_id(text) {
            Ok(text.to_string())
        } else {
            Err(format!(
                "\"{}\" is not a connection id (c- and ten letters or digits, as find_connections answers)",
                text.chars().filter(|c| !c.is_control()).take(40).collect::<String>()
            ))
        }
    }
);

text_argument!(
    /// A connection type: 1-64 lowercase letters, digits, `-` or `_` (`supports`, `part-of`).
    ConnectionType,
    max = graph::MAX_TYPE_CHARS,
    check = |text| {
        let text = text.trim();
        graph::check_type(text)?;
        Ok(text.to_string())
    }
);

/// A day, `YYYY-MM-DD` or `YYYYMMDD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayArg(pub Day);

impl<'de> Deserialize<'de> for DayArg {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        within("a day", &text, 32).map_err(de::Error::custom)?;
        Day::parse(text.trim()).map(DayArg).map_err(de::Error::custom)
    }
}

impl JsonSchema for DayArg {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Day".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "maxLength": 10 })
    }
}

/// `text` if it is at most `max` bytes.
fn within<'a>(what: &str, text: &'a str, max: usize) -> Result<&'a str, String> {
    if text.len() > max {
        return Err(format!("{what} is too long: at most {max} bytes"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Sample {
        /// How many.
        #[serde(default)]
        limit: Limit<10, 100>,
        cursor: Option<Cursor>,
        path: Option<NotePath>,
        day: Option<DayArg>,
        expected_hash: Option<ExpectedHash>,
        folder: Option<FolderPath>,
    }

    fn parse(value: serde_json::Value) -> Result<Sample, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    #[test]
    fn a_limit_defaults_and_is_bounded() {
        assert_eq!(parse(json!({})).unwrap().limit.get(), 10);
        assert_eq!(parse(json!({ "limit": null })).unwrap().limit.get(), 10);
        assert_eq!(parse(json!({ "limit": 100 })).unwrap().limit.get(), 100);
        for bad in [json!(0), json!(101), json!(-1), json!(1u64 << 40)] {
            let error = parse(json!({ "limit": bad })).unwrap_err();
            assert!(error.contains("limit must be between 1 and 100"), "{error}");
        }
        assert!(parse(json!({ "limit": "ten" })).is_err());
    }

    #[test]
    fn paths_are_normalized_and_bad_ones_refused() {
        let sample = parse(json!({ "path": "./Projects/alpha", "folder": "/Projects/" })).unwrap();
        assert_eq!(sample.path.unwrap().as_str(), "Projects/alpha.md");
        assert_eq!(sample.folder.unwrap().as_str(), "Projects");
        for bad in ["", "../x.md", "a//b.md", "a\\b.md"] {
            assert!(parse(json!({ "path": bad })).is_err(), "{bad}");
        }
        let long = "a".repeat(rules::MAX_PATH_BYTES + 1);
        assert!(parse(json!({ "path": long })).unwrap_err().contains("too long"));
    }

    #[test]
    fn an_expected_hash_is_64_hex_digits() {
        let hash = "AB".repeat(32);
        let sample = parse(json!({ "expected_hash": hash })).unwrap();
        assert_eq!(sample.expected_hash.unwrap().as_str(), "ab".repeat(32));
        for bad in ["abc", &"g".repeat(64), &"a".repeat(65)] {
            let error = parse(json!({ "expected_hash": bad })).unwrap_err();
            assert!(error.contains("64 hex digits"), "{error}");
        }
    }

    #[test]
    fn days_cursors_and_facets_are_checked() {
        let sample = parse(json!({ "day": "20261130" })).unwrap();
        assert_eq!(sample.day.unwrap().0.to_string(), "2026-11-30");
        assert!(parse(json!({ "day": "2026-02-30" })).is_err());
        assert!(
            parse(json!({ "day": "x".repeat(40) }))
                .unwrap_err()
                .contains("too long")
        );
        let cursor = "c".repeat(MAX_TOKEN_BYTES + 1);
        assert!(
            parse(json!({ "cursor": cursor }))
                .unwrap_err()
                .contains("cursor is too long")
        );
        let kept = parse(json!({ "cursor": "abc" })).unwrap().cursor.unwrap();
        assert_eq!(kept.as_str(), "abc");
        assert!(FacetId::parse(&"f".repeat(257)).is_err());
        assert_eq!(FacetId::parse("work").unwrap().as_str(), "work");
    }

    #[test]
    fn the_schema_carries_the_bounds_and_the_field_docs() {
        let schema = crate::schema::of::<Sample>();
        let limit = &schema["properties"]["limit"];
        assert_eq!(limit["type"], "integer");
        assert_eq!(limit["minimum"], 1);
        assert_eq!(limit["maximum"], 100);
        assert_eq!(limit["default"], 10);
        assert_eq!(limit["description"], "How many.");
        assert_eq!(schema["properties"]["path"]["maxLength"], rules::MAX_PATH_BYTES);
        assert_eq!(schema["properties"]["expected_hash"]["maxLength"], 64);
        let required = schema.get("required").cloned().unwrap_or(json!([]));
        assert!(!required.as_array().unwrap().contains(&json!("limit")), "{schema}");
    }
}
