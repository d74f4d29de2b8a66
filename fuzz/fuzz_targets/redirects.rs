//! Fuzzes the OAuth rules that read URLs from strangers: redirect URI checks and resource matching
//! never panic, and an allowed redirect URI is always loopback or one of the known hosted callbacks.
#![no_main]

use journal::oauth::{redirect, resource};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if redirect::allowed(text) {
        let host = url::Url::parse(text).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_default();
        let known = ["localhost", "127.0.0.1", "[::1]", "claude.ai", "claude.com", "chatgpt.com", "grok.com",
            "oauth-redirect.googleusercontent.com"];
        assert!(known.contains(&host.as_str()) || host.starts_with("127."), "{text}");
    }
    let _ = redirect::matches(text, "http://localhost/callback");
    let _ = resource::matches(text, &["http://127.0.0.1:7659".to_string()]);
});
