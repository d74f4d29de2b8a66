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
    if let Some(object) = value.as_object_mut() {
        object.remove("$defs");
    }
    value
}

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
