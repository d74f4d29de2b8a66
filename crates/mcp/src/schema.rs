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
/// number type's `uint` goes; its `minimum: 0` already says it), and wherever a subschema accepts
/// any value (the bare `true`, or an object with no keyword that constrains, such as `{}` or only a
/// description) the same said with types: `anyOf` one branch per JSON type. Strict validators
/// refuse a bare `true` where they expect an object, and linters warn about a schema that
/// constrains nothing.
fn standard(value: &mut Value) {
    if let Value::Object(object) = value
        && object
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|format| !STANDARD_FORMATS.contains(&format))
    {
        object.remove("format");
    }
    children_mut(value, &mut |keyword, child| {
        if *child == Value::Bool(true) {
            *child = Value::Object(Map::new());
        }
        // Under `not`, a schema that takes anything means "nothing": leave its meaning alone.
        if keyword != "not"
            && let Value::Object(object) = child
            && !constrains(object)
        {
            object.insert("anyOf".into(), any_value());
        }
        standard(child);
    });
}

/// Any JSON value, said with types: one single-type branch each (a `type` array is less portable).
fn any_value() -> Value {
    let branches = ["string", "number", "boolean", "null", "array", "object"]
        .into_iter()
        .map(|kind| {
            let mut branch = Map::new();
            branch.insert("type".into(), Value::String(kind.into()));
            Value::Object(branch)
        })
        .collect();
    Value::Array(branches)
}

/// Whether a schema object has a keyword that limits what it accepts (as opposed to annotations
/// such as `description`).
fn constrains(object: &Map<String, Value>) -> bool {
    object.keys().any(|key| CONSTRAINING.contains(&key.as_str()))
        || (object.contains_key("if") && (object.contains_key("then") || object.contains_key("else")))
}

const CONSTRAINING: [&str; 44] = [
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "items",
    "prefixItems",
    "contains",
    "additionalItems",
    "unevaluatedItems",
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "dependentSchemas",
    "dependencies",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "$defs",
];

/// What in a schema a strict client would warn about: a format JSON Schema does not define, a
/// subschema that is the bare `true`, or one that constrains nothing; each with where it is.
/// Empty for every schema `of` makes.
pub fn nonstandard(value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    walk(value, "", &mut found);
    found
}

fn walk(value: &Value, at: &str, found: &mut Vec<String>) {
    if let Some(format) = value.get("format").and_then(Value::as_str)
        && !STANDARD_FORMATS.contains(&format)
    {
        found.push(format!("{at}: format \"{format}\""));
    }
    children(value, at, &mut |keyword, here, child| {
        match child {
            Value::Bool(true) => found.push(format!("{here}: true")),
            Value::Object(object) if keyword != "not" && !constrains(object) => {
                found.push(format!("{here}: constrains nothing"));
            }
            _ => {}
        }
        walk(child, &here, found);
    });
}

/// Calls `visit` with each subschema directly inside `schema` (under `items`, each of
/// `properties`, each of `anyOf`, ...) and the keyword it is under.
fn children_mut(schema: &mut Value, visit: &mut dyn FnMut(&str, &mut Value)) {
    let Value::Object(object) = schema else {
        return;
    };
    for (key, child) in object.iter_mut() {
        let keyword = key.as_str();
        if SUBSCHEMA_KEYS.contains(&keyword) {
            visit(keyword, child);
        } else if NAMED_SUBSCHEMA_KEYS.contains(&keyword)
            && let Value::Object(named) = child
        {
            named.values_mut().for_each(|schema| visit(keyword, schema));
        } else if LISTED_SUBSCHEMA_KEYS.contains(&keyword)
            && let Value::Array(list) = child
        {
            list.iter_mut().for_each(|schema| visit(keyword, schema));
        }
    }
}

/// `children_mut` for reading, with where each subschema is (`.properties.rows.items`).
fn children(schema: &Value, at: &str, visit: &mut dyn FnMut(&str, String, &Value)) {
    let Value::Object(object) = schema else {
        return;
    };
    for (key, child) in object {
        let keyword = key.as_str();
        let here = format!("{at}.{key}");
        if SUBSCHEMA_KEYS.contains(&keyword) {
            visit(keyword, here, child);
        } else if NAMED_SUBSCHEMA_KEYS.contains(&keyword)
            && let Value::Object(named) = child
        {
            for (name, schema) in named {
                visit(keyword, format!("{here}.{name}"), schema);
            }
        } else if LISTED_SUBSCHEMA_KEYS.contains(&keyword)
            && let Value::Array(list) = child
        {
            for (i, schema) in list.iter().enumerate() {
                visit(keyword, format!("{here}[{i}]"), schema);
            }
        }
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
        /// A value described but not constrained.
        described: Value,
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
        assert_eq!(nonstandard(&raw).len(), 8, "{:?}", nonstandard(&raw));
        assert_eq!(schema["properties"]["count"]["minimum"], 0);
        assert_eq!(schema["properties"]["when"]["format"], "date-time");
        // Any value, said with one type per branch.
        let any = serde_json::json!({"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"},
            {"type": "null"}, {"type": "array"}, {"type": "object"}]});
        assert_eq!(schema["properties"]["rows"]["items"]["items"], any);
        assert_eq!(schema["properties"]["one"], any);
        assert_eq!(schema["properties"]["extra"]["additionalProperties"], any);
        assert_eq!(schema["properties"]["described"]["anyOf"], any["anyOf"]);
        assert_eq!(
            schema["properties"]["described"]["description"],
            "A value described but not constrained."
        );
    }

    #[test]
    fn a_schema_that_constrains_nothing_is_found_and_a_negated_one_left_alone() {
        let found = nonstandard(&serde_json::json!({"type": "object", "properties": {
            "a": {}, "b": {"description": "x"}, "c": {"type": "string"}, "d": {"not": {}},
            "e": {"anyOf": [{"type": "string"}, {}]}}}));
        assert_eq!(
            found,
            vec![
                ".properties.a: constrains nothing",
                ".properties.b: constrains nothing",
                ".properties.e.anyOf[1]: constrains nothing"
            ]
        );
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
