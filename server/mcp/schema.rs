//! JSON Schemas for tool inputs and outputs, generated from the Rust argument and result types so
//! that the schema an agent reads and the parser that checks its call are one source of truth.
//!
//! The generated schemas are trimmed to what clients handle well: no `$schema` or `title` keys, and
//! optional fields as their plain type (absence already means "not given"; a `null` type confuses
//! some clients). Grant-dependent enums (`facet`, `category`) are filled in per connection.

use schemars::JsonSchema;
use serde_json::{Map, Value};

/// The schema of `T`, trimmed.
pub fn of<T: JsonSchema>() -> Value {
    // Nested types are inlined: several clients do not resolve `$ref` in tool schemas.
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    if let Some(object) = value.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
        object.entry("type").or_insert_with(|| Value::String("object".into()));
    }
    strip_nulls(&mut value);
    standard(&mut value);
    if let Some(object) = value.as_object_mut() {
        object.remove("$defs");
    }
    value
}

/// The `format` values JSON Schema (2020-12) defines; schemars adds others for Rust's number types
/// (`uint`, `uint32`, `int64`, `double`), which clients warn about on every listing.
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keeps schemas to what every client reads without a warning: only standard formats (a Rust
/// number type's `uint` goes; its `minimum: 0` already says it), and `{}` wherever a subschema is
/// the bare `true` (any value), which strict validators refuse where they expect an object.
fn standard(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| !STANDARD_FORMATS.contains(&format))
            {
                object.remove("format");
            }
            for (key, child) in object.iter_mut() {
                if *child == Value::Bool(true) && SUBSCHEMA_KEYS.contains(&key.as_str()) {
                    *child = Value::Object(Map::new());
                }
                // Under `properties` (and the like), every value is a subschema.
                if let Value::Object(named) = child
                    && NAMED_SUBSCHEMA_KEYS.contains(&key.as_str())
                {
                    for schema in named.values_mut() {
                        if *schema == Value::Bool(true) {
                            *schema = Value::Object(Map::new());
                        }
                    }
                }
                if let Value::Array(list) = child
                    && LISTED_SUBSCHEMA_KEYS.contains(&key.as_str())
                {
                    for schema in list.iter_mut() {
                        if *schema == Value::Bool(true) {
                            *schema = Value::Object(Map::new());
                        }
                    }
                }
                standard(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(standard),
        _ => {}
    }
}

/// What in a schema a strict client would warn about: a format JSON Schema does not define, or a
/// subschema that is the bare `true`; each with where it is. Empty for every schema `of` makes.
pub fn nonstandard(value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    walk(value, "", &mut found);
    found
}

fn walk(value: &Value, at: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            if let Some(format) = object.get("format").and_then(Value::as_str)
                && !STANDARD_FORMATS.contains(&format)
            {
                found.push(format!("{at}: format \"{format}\""));
            }
            for (key, child) in object {
                let here = format!("{at}.{key}");
                if SUBSCHEMA_KEYS.contains(&key.as_str()) && *child == Value::Bool(true) {
                    found.push(format!("{here}: true"));
                }
                if NAMED_SUBSCHEMA_KEYS.contains(&key.as_str())
                    && let Value::Object(named) = child
                {
                    for (name, _) in named.iter().filter(|(_, s)| **s == Value::Bool(true)) {
                        found.push(format!("{here}.{name}: true"));
                    }
                }
                if LISTED_SUBSCHEMA_KEYS.contains(&key.as_str())
                    && let Value::Array(list) = child
                    && list.contains(&Value::Bool(true))
                {
                    found.push(format!("{here}: a bare true"));
                }
                walk(child, &here, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| walk(item, at, found)),
        _ => {}
    }
}

/// Keywords whose value is one subschema, a map of them, or a list of them.
const SUBSCHEMA_KEYS: [&str; 8] = [
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "additionalItems",
];
const NAMED_SUBSCHEMA_KEYS: [&str; 3] = ["properties", "patternProperties", "$defs"];
const LISTED_SUBSCHEMA_KEYS: [&str; 4] = ["prefixItems", "anyOf", "oneOf", "allOf"];

/// Makes `["string", "null"]` into `"string"` everywhere and drops `null` defaults and `$defs`.
fn strip_nulls(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if let Some(Value::Array(types)) = object.get("type") {
                let kept: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
                if kept.len() == 1 {
                    object.insert("type".into(), kept[0].clone());
                }
            }
            if object.get("default") == Some(&Value::Null) {
                object.remove("default");
            }
            for child in object.values_mut() {
                strip_nulls(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

/// Sets the allowed values of a string property, or removes the property when none are allowed
/// (an agent must never be told about a facet it cannot read, nor offered an empty choice).
pub fn set_enum(schema: &mut Value, property: &str, values: &[String]) {
    let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    if values.is_empty() {
        properties.remove(property);
        return;
    }
    if let Some(Value::Object(field)) = properties.get_mut(property) {
        field.insert(
            "enum".into(),
            Value::Array(values.iter().cloned().map(Value::String).collect()),
        );
    }
}

/// An object schema with no properties, as the specification recommends for tools without arguments.
pub fn no_arguments() -> Value {
    let mut object = Map::new();
    object.insert("type".into(), Value::String("object".into()));
    object.insert("additionalProperties".into(), Value::Bool(false));
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// Arguments of a test tool.
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        /// What to look for.
        query: String,
        facet: Option<String>,
        limit: Option<u32>,
    }

    /// A result with Rust's number types and free-form values.
    #[derive(serde::Serialize, JsonSchema)]
    #[allow(dead_code)]
    struct Output {
        count: u32,
        total: usize,
        offset: i64,
        share: f64,
        when: chrono_like::Time,
        rows: Vec<Vec<Value>>,
        extra: std::collections::BTreeMap<String, Value>,
        one: Value,
    }

    mod chrono_like {
        /// A time, as RFC 3339 text.
        #[derive(serde::Serialize)]
        pub struct Time(pub String);

        impl schemars::JsonSchema for Time {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                "Time".into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({"type": "string", "format": "date-time"})
            }
        }
    }

    #[test]
    fn formats_are_standard_and_no_subschema_is_a_bare_true() {
        let raw = schemars::generate::SchemaSettings::draft2020_12()
            .with(|s| s.inline_subschemas = true)
            .into_generator()
            .into_root_schema_for::<Output>()
            .to_value();
        // What the trimming is for: schemars writes these.
        assert_eq!(raw["properties"]["count"]["format"], "uint32");
        let schema = of::<Output>();
        assert_eq!(nonstandard(&schema), Vec::<String>::new());
        assert_eq!(nonstandard(&raw).len(), 7, "{:?}", nonstandard(&raw));
        assert_eq!(schema["properties"]["count"]["minimum"], 0);
        assert_eq!(schema["properties"]["when"]["format"], "date-time");
        assert_eq!(schema["properties"]["rows"]["items"]["items"], serde_json::json!({}));
    }

    #[test]
    fn trims_and_fills_enums() {
        let mut schema = of::<Args>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
        assert_eq!(schema["properties"]["facet"]["type"], "string");
        assert_eq!(schema["properties"]["query"]["description"], "What to look for.");
        assert_eq!(schema["required"], serde_json::json!(["query"]));
        set_enum(&mut schema, "facet", &["a".into()]);
        assert_eq!(schema["properties"]["facet"]["enum"], serde_json::json!(["a"]));
        set_enum(&mut schema, "facet", &[]);
        assert!(schema["properties"].get("facet").is_none());
    }
}
