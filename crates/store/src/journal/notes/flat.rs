//! Flat frontmatter read without the YAML parser.
//!
//! Most notes' frontmatter is a few `key: value` lines and `key: [a, b]` lists of plain words, and the YAML parser
//! took 50 µs a note on these (a sixth of a vault's indexing). [`read`] reads exactly that shape and gives up
//! (`None`) on anything else: quotes, comments, nesting, several lines, flow maps, anything YAML could read as
//! another type (`yes`, `1.5`, `-3`, `0x1f`, `~`) and duplicate keys, all of which go to the YAML parser as before. The
//! tests check that whatever this reads, the YAML parser reads the same.

use serde_json::{Map, Value};

/// The frontmatter as a map, when every line is a flat `key: value` of the shape above.
pub fn read(yaml: &str) -> Option<Map<String, Value>> {
    let mut map = Map::new();
    for line in yaml.lines() {
        if line.is_empty() {
            continue;
        }
        let (key, value) = line.split_once(':')?;
        if !is_key(key) || map.contains_key(key) {
            return None;
        }
        let value = match value.strip_prefix(' ') {
            Some(value) => value.trim_end_matches(' '),
            None if value.is_empty() => "",
            None => return None,
        };
        map.insert(key.to_string(), self::value(value)?);
    }
    Some(map)
}

/// A key of letters, digits, `_` and `-`, starting with a letter or `_`.
fn is_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The value after `key: `: nothing (null), a word, or a list of words.
fn value(text: &str) -> Option<Value> {
    if text.is_empty() {
        return Some(Value::Null);
    }
    if let Some(inner) = text.strip_prefix('[') {
        let inner = inner.strip_suffix(']')?;
        if inner.trim().is_empty() {
            return (inner.is_empty()).then(|| Value::Array(Vec::new()));
        }
        return inner
            .split(',')
            .map(|item| scalar(item.trim_matches(' ')))
            .collect::<Option<Vec<Value>>>()
            .map(Value::Array);
    }
    scalar(text)
}

/// Words YAML reads as something other than text, in any case.
const NOT_TEXT: [&str; 9] = ["true", "false", "null", "yes", "no", "on", "off", "y", "n"];

/// A plain word YAML can only read as text, a whole number, or a day (which stays text).
fn scalar(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let first = *bytes.first()?;
    if first.is_ascii_digit() {
        if bytes.iter().all(u8::is_ascii_digit) && (bytes.len() == 1 || first != b'0') && bytes.len() <= 15 {
            return text.parse::<u64>().ok().map(Value::from);
        }
        return is_day(bytes).then(|| Value::from(text));
    }
    let plain = first.is_ascii_alphabetic()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b' ' | b'_' | b'-' | b'.' | b'/'))
        && !text.contains("  ")
        && !text.ends_with(' ')
        && !NOT_TEXT.iter().any(|word| text.eq_ignore_ascii_case(word));
    plain.then(|| Value::from(text))
}

/// `YYYY-MM-DD`.
fn is_day(bytes: &[u8]) -> bool {
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(at, b)| match at {
            4 | 7 => *b == b'-',
            _ => b.is_ascii_digit(),
        })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn yaml(text: &str) -> Option<Value> {
        serde_saphyr::from_str::<Value>(text).ok()
    }

    #[test]
    fn reads_flat_frontmatter_as_yaml_does_and_leaves_the_rest_to_it() {
        let text = "id: gen-0\ntitle: Miri verpaver schedule 0\nstatus: active\npriority: 1\ncreated: 2025-07-30\n\
                    tags: [meeting, meeting, project]\nempty:\nnone: []\nfolder: a/b.c\n";
        let flat = read(text).unwrap();
        assert_eq!(Some(Value::Object(flat.clone())), yaml(text));
        assert_eq!(flat["priority"], Value::from(1));
        assert_eq!(flat["created"], Value::from("2025-07-30"));
        for other in [
            "a: yes\n",
            "a: 1.5\n",
            "a: -3\n",
            "a: 007\n",
            "a: ~\n",
            "a: 'quoted'\n",
            "a: b # comment\n",
            "a:\n  - b\n",
            "a: {b: c}\n",
            "a: b\na: c\n",
            "a: b: c\n",
            "a: [b, [c]]\n",
            "a:b\n",
            " a: b\n",
            "a: 2025-07-30T10:00\n",
            "a: [b,, c]\n",
        ] {
            assert_eq!(read(other), None, "{other:?} is left to the YAML parser");
        }
    }

    fn word() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z][a-zA-Z0-9 _./-]{0,12}",
            "[0-9]{1,17}",
            "[0-9]{4}-[0-9]{2}-[0-9]{2}",
            prop::sample::select(vec![
                "Yes",
                "NO",
                "null",
                "True",
                "on",
                "Y",
                "n",
                "x",
                "0",
                "00",
                "1e3",
                ".5",
                "-",
                "nan",
                "NaN",
                "inf",
                "Infinity",
                "NULL",
                "TRUE",
                "Off",
                "0o17",
                "1_000",
                "2026-02-30",
                "9999-99-99",
                "1.0",
                "a.b",
                "e5",
            ])
            .prop_map(String::from),
        ]
    }

    proptest! {
        #[test]
        fn whatever_it_reads_yaml_reads_the_same(
            lines in prop::collection::vec(
                ("[a-zA-Z_][a-zA-Z0-9_-]{0,6}", prop_oneof![
                    word(),
                    prop::collection::vec(word(), 0..4).prop_map(|items| format!("[{}]", items.join(", "))),
                    Just(String::new()),
                ]),
                0..8,
            ),
        ) {
            let text: String = lines
                .iter()
                .map(|(key, value)| if value.is_empty() { format!("{key}:\n") } else { format!("{key}: {value}\n") })
                .collect();
            if let Some(map) = read(&text) {
                let expected = if map.is_empty() { None } else { Some(Value::Object(map.clone())) };
                let parsed = yaml(&text).filter(|value| !value.is_null());
                prop_assert_eq!(parsed, expected, "{}", text);
            }
        }
    }
}
