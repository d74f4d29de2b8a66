//! Fuzzes client ID metadata documents and their URLs: checking never panics, an accepted URL is
//! https on a public host, an accepted document keeps only allowed redirect URIs and a clean name,
//! and a catalog client keeps to its own callbacks.
#![no_main]

use std::net::IpAddr;

use journal::oauth::client_metadata::{self, cache_seconds, check_document, check_url};
use journal::oauth::{known_clients, redirect, registration};
use libfuzzer_sys::fuzz_target;
use url::Host;

fuzz_target!(|data: &[u8]| {
    // The first line is the client_id (and a redirect URI and a Cache-Control header to try), the
    // rest the document.
    let (head, body) = match data.iter().position(|&b| b == b'\n') {
        Some(n) => (&data[..n], &data[n + 1..]),
        None => (data, &[][..]),
    };
    let Ok(client_id) = std::str::from_utf8(head) else {
        return;
    };

    if let Ok(url) = check_url(client_id) {
        assert_eq!(url.scheme(), "https");
        match url.host() {
            Some(Host::Domain(name)) => {
                // check_url refuses "localhost" and "*.localhost", with any final dots too.
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                assert!(name != "localhost" && !name.ends_with(".localhost"), "{client_id}");
            }
            Some(Host::Ipv4(ip)) => assert!(client_metadata::is_public(IpAddr::V4(ip)), "{client_id}"),
            Some(Host::Ipv6(ip)) => assert!(client_metadata::is_public(IpAddr::V6(ip)), "{client_id}"),
            None => panic!("{client_id} has no host"),
        }
    }

    if let Ok((name, uris)) = check_document(client_id, body) {
        assert_eq!(registration::clean_name(&name), name);
        assert!(!name.trim().is_empty());
        assert!(!uris.is_empty() && uris.len() <= 16);
        for uri in &uris {
            assert!(redirect::allowed(uri), "{uri}");
        }
    }

    let text = String::from_utf8_lossy(body);
    let _ = cache_seconds(Some(&text));
    if let Some(known) = known_clients::lookup(client_id) {
        assert!(check_url(client_id).is_ok(), "{client_id}");
        let examples = known.examples();
        for example in &examples {
            assert!(known.allows(example), "{example}");
        }
        let uri = text.lines().next().unwrap_or_default();
        if known.allows(uri) {
            assert!(
                (uri.starts_with("http://") && redirect::allowed(uri)) || examples.iter().any(|e| e == uri),
                "{uri}"
            );
        }
    }
});
