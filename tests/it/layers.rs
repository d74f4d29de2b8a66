//! The layering ARCHITECTURE.md promises. The floors are crates, so the compiler holds them: the
//! store (`crates/store`) cannot name access or any feature, and access (`crates/access`) cannot
//! name a feature. What is checked here is what the compiler does not: that no HTTP, TLS or
//! template crate reaches the floors through their dependencies (read from `cargo metadata`), that
//! MCP and the request's context need no TLS or page crate, and, inside the server crate, that the
//! pages layer uses no feature.

use std::path::{Path, PathBuf};

/// Every Rust source file under a folder, in order.
pub fn sources(under: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![under.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|entry| entry.unwrap().path()));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    found.sort();
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

/// Every package the crate `name` depends on, directly or not (normal dependencies, not dev or build).
fn dependency_closure(name: &str) -> std::collections::BTreeSet<String> {
    // This machine's platform only: the packages other platforms need are never downloaded here.
    let rustc = std::process::Command::new("rustc").arg("-vV").output().unwrap();
    let host = String::from_utf8(rustc.stdout)
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("host: ").map(str::to_string))
        .unwrap();
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--locked",
            "--filter-platform",
            &host,
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    let id_of = |name: &str| {
        packages
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["id"].as_str().unwrap().to_string())
            .unwrap()
    };
    let nodes = metadata["resolve"]["nodes"].as_array().unwrap();
    let name_of = |id: &str| {
        packages.iter().find(|p| p["id"] == id).unwrap()["name"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut stack = vec![id_of(name)];
    while let Some(id) = stack.pop() {
        let node = nodes.iter().find(|n| n["id"] == id.as_str()).unwrap();
        for dep in node["deps"].as_array().unwrap() {
            let normal = dep["dep_kinds"].as_array().unwrap().iter().any(|k| k["kind"].is_null());
            let dep_id = dep["pkg"].as_str().unwrap().to_string();
            if normal && seen.insert(name_of(&dep_id)) {
                stack.push(dep_id);
            }
        }
    }
    seen
}

/// What speaks HTTP or TLS or renders pages: none of it belongs below the features.
const ABOVE_THE_FLOORS: [&str; 12] = [
    "axum",
    "hyper",
    "hyper-util",
    "hyper-rustls",
    "tower",
    "tower-layer",
    "tower-service",
    "rustls",
    "tokio-rustls",
    "askama",
    "instant-acme",
    "rcgen",
];

#[test]
fn no_http_tls_or_template_crate_reaches_the_floors() {
    for floor in ["journal-store", "journal-access"] {
        let closure = dependency_closure(floor);
        assert!(closure.contains("sqlx"), "{floor}: the closure is read ({closure:?})");
        for above in ABOVE_THE_FLOORS {
            assert!(!closure.contains(above), "{floor} depends on {above}");
        }
    }
    assert!(
        !dependency_closure("journal-store").contains("journal-access"),
        "the store stands below access"
    );
    // And the check can fail: the server has them.
    let server = dependency_closure("journal");
    assert!(server.contains("axum") && server.contains("rustls"));
}

/// What MCP and the request's context have no use for: TLS, sign-in's certificates, pages.
const NOT_FOR_MCP: [&str; 6] = [
    "rustls",
    "tokio-rustls",
    "hyper-rustls",
    "askama",
    "instant-acme",
    "rcgen",
];

#[test]
fn mcp_and_the_context_stand_apart_from_sign_in_and_the_app() {
    for name in ["journal-mcp", "journal-context"] {
        let closure = dependency_closure(name);
        assert!(closure.contains("axum"), "{name}: the closure is read ({closure:?})");
        for other in NOT_FOR_MCP {
            assert!(!closure.contains(other), "{name} depends on {other}");
        }
    }
    // MCP sees only connections resolved by access; the context knows no floor and no feature.
    let mcp = dependency_closure("journal-mcp");
    assert!(mcp.contains("journal-access") && mcp.contains("journal-context"));
    let context = dependency_closure("journal-context");
    assert!(!context.iter().any(|name| name.starts_with("journal")), "{context:?}");
}

#[test]
fn the_pages_layer_uses_no_feature() {
    assert_uses_none_of("page", &["oauth", "mcp", "web", "routes", "server", "cli", "app"]);
}

#[test]
fn the_model_is_a_leaf() {
    // Search by meaning's model and tokenizer: no journal crate, no runtime, no storage, no parser
    // of JSON; a few small Unicode tables.
    let closure = dependency_closure("journal-meaning");
    assert!(
        closure.contains("unicode-normalization"),
        "the closure is read ({closure:?})"
    );
    for heavy in ["tokio", "sqlx", "tantivy", "axum", "serde_json"] {
        assert!(!closure.contains(heavy), "journal-meaning depends on {heavy}");
    }
    assert!(!closure.iter().any(|name| name.starts_with("journal")), "{closure:?}");
}
