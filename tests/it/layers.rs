//! The layering ARCHITECTURE.md promises, read from the source: which modules each part may use.
//! A change that makes `journal` reach into a feature, `auth` into sign-in or MCP, or MCP into
//! sign-in's tables fails here, before the cycle grows.

use std::path::{Path, PathBuf};

fn sources(under: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![under.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|entry| entry.unwrap().path()));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    found
}

/// Every `crate::<module>` a part's files name, with the file that names it.
fn uses(part: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("server");
    let mut files = sources(&root.join(part));
    let single = root.join(format!("{part}.rs"));
    if single.exists() {
        files.push(single);
    }
    assert!(!files.is_empty(), "no sources for {part}");
    let mut used = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (at, _) in text.match_indices("crate::") {
            let module: String = text[at + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            used.push((module, file.display().to_string()));
        }
    }
    used
}

fn assert_uses_none_of(part: &str, forbidden: &[&str]) {
    for (module, file) in uses(part) {
        assert!(
            !forbidden.contains(&module.as_str()),
            "{part} must not use crate::{module} ({file})"
        );
    }
}

const FEATURES: [&str; 10] = [
    "auth", "oauth", "mcp", "web", "routes", "server", "cli", "lan", "domain", "app",
];

#[test]
fn the_domain_uses_no_feature() {
    assert_uses_none_of("journal", &FEATURES);
}

#[test]
fn access_state_uses_neither_sign_in_nor_mcp() {
    assert_uses_none_of("auth", &["oauth", "mcp", "web", "routes", "server", "cli", "app"]);
}

#[test]
fn mcp_sees_only_resolved_credentials() {
    assert_uses_none_of("mcp", &["oauth", "web", "cli"]);
}

#[test]
fn the_shared_layers_use_no_feature() {
    for part in ["secret", "clock", "fsio", "db"] {
        assert_uses_none_of(part, &FEATURES);
    }
    assert_uses_none_of("page", &["oauth", "mcp", "web", "routes", "server", "cli", "app"]);
}
