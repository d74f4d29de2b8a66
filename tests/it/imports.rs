//! No import circles: in each crate, the files that name one another (`use crate::…`, `super::…`,
//! paths in code) form no circle of more than two files, and each pair that does is one the map
//! (docs/ARCHITECTURE.md) names with its reason. A circle is where a layer stops being one: neither
//! file can be read, changed or moved without the other.
//!
//! What counts as an import: every path a file names outside its `#[cfg(test)]` items (a unit test
//! may drive its module through a higher one), resolved to the deepest module file it reaches. A
//! module naming its own submodules (a `mod.rs` re-exporting its children) is the module tree, not
//! an import, and is not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::layers::sources;

/// The pairs allowed to name each other, each one concept in one folder (ARCHITECTURE.md says why).
const ALLOWED_PAIRS: [(&str, &str); 1] = [("journal/notes/moves.rs", "journal/notes/write.rs")];

/// The crates checked: each as (name, folder of its sources).
const CRATES: [(&str, &str); 5] = [
    ("journal", "server"),
    ("journal-store", "crates/store/src"),
    ("journal-access", "crates/access/src"),
    ("journal-context", "crates/context/src"),
    ("journal-mcp", "crates/mcp/src"),
];

/// Source text without comments, with every string and char literal emptied, so that only code
/// is read (a doc comment or a URL in a string names no module).
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_char(chars.get(i.wrapping_sub(1))) {
            // A raw string: r"…", r#"…"#, …
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (0..hashes).all(|k| chars.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
            let literal_end = if next == Some('\\') {
                (i + 2..chars.len()).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match literal_end {
                Some(end) => {
                    out.push_str("' '");
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_char(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// The code without its `#[cfg(test)]` items (up to the item's `;`, or its balanced braces).
fn without_tests(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let brace = item.find('{');
        let semicolon = item.find(';');
        let end = match (brace, semicolon) {
            (Some(b), Some(s)) if s < b => s + 1,
            (None, Some(s)) => s + 1,
            (Some(b), _) => {
                let mut depth = 0;
                let mut end = item.len();
                for (k, ch) in item[b..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// Stands for ` as ` in a `use` tree, whose whitespace is dropped before it is read.
const RENAMED: char = '\u{1}';

/// The paths of a `use` tree (`crate::a::{b, c::{d, e as f}}`), each as its segments.
fn use_paths(tree: &str) -> Vec<Vec<String>> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let mut paths = Vec::new();
    expand(&[], &tree, &mut paths);
    paths
}

fn expand(prefix: &[String], tree: &str, paths: &mut Vec<Vec<String>>) {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in tree.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&tree[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&tree[start..]);
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        match part.find('{') {
            Some(open) => {
                let mut inner = prefix.to_vec();
                inner.extend(segments(part[..open].trim_end_matches("::")));
                let close = part.rfind('}').unwrap_or(part.len());
                expand(&inner, &part[open + 1..close], paths);
            }
            None => {
                // `x as y` names x (`as` was marked by `RENAMED`).
                let named = part.split(RENAMED).next().unwrap_or_default();
                let mut path = prefix.to_vec();
                path.extend(segments(named));
                paths.push(path);
            }
        }
    }
}

fn segments(path: &str) -> Vec<String> {
    path.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect()
}

/// Every module path a file's code names: its `use` trees and the `crate::`, `super::` and `self::`
/// paths written in its code.
fn named_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while let Some(found) = code[at..].find("use ") {
        let start = at + found;
        at = start + 4;
        let boundary = start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        if !boundary {
            continue;
        }
        if let Some(end) = code[at..].find(';') {
            let tree = code[at..at + end].replace(" as ", &RENAMED.to_string());
            paths.extend(use_paths(&tree));
        }
    }
    for root in ["crate::", "super::", "self::"] {
        for (start, _) in code.match_indices(root) {
            if start > 0
                && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_' || bytes[start - 1] == b':')
            {
                continue;
            }
            let text: String = code[start..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            paths.push(segments(&text));
        }
    }
    paths
}

/// A file's module path within its crate: `journal/notes/write.rs` is `journal::notes::write`, a
/// `mod.rs` or `lib.rs` is its folder's module.
fn module_of(root: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(root).unwrap().with_extension("");
    let mut module: Vec<String> = relative.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    if matches!(module.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        module.pop();
    }
    module
}

/// Which files of one crate name which, by their paths relative to the crate's sources.
fn import_graph(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = sources(root);
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|f| (module_of(root, f), f.strip_prefix(root).unwrap().display().to_string()))
        .collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let me = module_of(root, file);
        let name = file.strip_prefix(root).unwrap().display().to_string();
        let code = without_tests(&code_only(&std::fs::read_to_string(file).unwrap()));
        let mut named = BTreeSet::new();
        for path in named_paths(&code) {
            let (mut base, rest): (Vec<String>, &[String]) = match path.first().map(String::as_str) {
                Some("crate") => (Vec::new(), &path[1..]),
                Some("super" | "self") => (me.clone(), &path[..]),
                _ => continue,
            };
            let mut rest = rest;
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "super" => {
                        base.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
            base.extend(rest.iter().cloned());
            let target = (0..=base.len())
                .rev()
                .find_map(|k| modules.get(&base[..k]).map(|f| (k, f)));
            if let Some((k, target)) = target {
                // A module naming its own submodules is its tree, not an import.
                let descendant = k > me.len() && base[..me.len()] == me[..];
                if *target != name && !descendant {
                    named.insert(target.clone());
                }
            }
        }
        graph.insert(name, named);
    }
    graph
}

/// The strongly connected parts of a graph with more than one file (Tarjan's algorithm).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut part = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    part.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if part.len() > 1 {
                    part.sort();
                    self.found.push(part);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_import_circles_beyond_the_named_pairs() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture = std::fs::read_to_string(manifest.join("docs/ARCHITECTURE.md")).unwrap();
    let mut pairs_seen = BTreeSet::new();
    let mut refused = Vec::new();
    for (name, folder) in CRATES {
        let graph = import_graph(&manifest.join(folder));
        assert!(graph.len() > 5, "{name}: too few files read from {folder}");
        for circle in circles(&graph) {
            let pair = (circle.len() == 2).then(|| (circle[0].as_str(), circle[1].as_str()));
            if !pair.is_some_and(|pair| ALLOWED_PAIRS.contains(&pair)) {
                refused.push(format!("{name}: {}", circle.join(", ")));
            }
            pairs_seen.extend(pair.map(|(a, b)| (a.to_string(), b.to_string())));
        }
    }
    assert!(refused.is_empty(), "import circles:\n{}", refused.join("\n"));
    for (a, b) in ALLOWED_PAIRS {
        assert!(
            architecture.contains(&format!("`{a}` and `{b}`")),
            "ARCHITECTURE.md must say why {a} and {b} name each other"
        );
        assert!(
            pairs_seen.contains(&(a.to_string(), b.to_string())),
            "{a} and {b} no longer name each other: take them off the allowed pairs"
        );
    }
}

#[test]
fn the_import_reader_finds_what_a_file_names() {
    let code = code_only(
        "use crate::a::{b, c::{d, e as f}};\n// use crate::commented;\nlet s = \"crate::quoted\";\n\
         let t = super::g::h(); let c = 'x';\n#[cfg(test)]\nmod tests { use crate::tested; }\n\
         fn after<'a>(x: &'a str) { crate::i::j(x) }",
    );
    let code = without_tests(&code);
    let paths: BTreeSet<String> = named_paths(&code).iter().map(|p| p.join("::")).collect();
    let expected: BTreeSet<String> = [
        "crate::a::b",
        "crate::a::c::d",
        "crate::a::c::e",
        "super::g::h",
        "crate::i::j",
    ]
    .into_iter()
    .map(str::to_string)
    .collect();
    // The `crate::a` prefix of the use tree is also read as a path in code; it resolves the same.
    let found: BTreeSet<String> = paths.into_iter().filter(|p| p != "crate::a").collect();
    assert_eq!(found, expected);

    let mut graph = BTreeMap::new();
    graph.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    graph.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    graph.insert("c".to_string(), BTreeSet::from(["a".to_string(), "d".to_string()]));
    graph.insert("d".to_string(), BTreeSet::new());
    assert_eq!(
        circles(&graph),
        vec![vec!["a".to_string(), "b".to_string(), "c".to_string()]]
    );
}
