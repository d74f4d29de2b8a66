//! Properties of the parsers and rules that read what outsiders send, checked on generated input
//! (proptest, on stable Rust).

use proptest::prelude::*;

use journal::journal::day::Day;
use journal::journal::import::{self, Format};
use journal::journal::signed::SigningKey;
use journal::mcp::jsonrpc;
use journal::oauth::{pairing, redirect, resource};

fn config() -> ProptestConfig {
    // Bounded so the test command stays quick.
    ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    }
}

/// Text that looks a little like the formats, so the parsers get past their first checks.
fn transcript_like() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "WEBVTT\n",
        "\n",
        "\r\n",
        "00:00:01.000 --> 00:00:02.000\n",
        "1\n",
        "00:00:01,000 --> 00:00:02,000\n",
        "<v Ada>",
        "</v>",
        "Ada: ",
        "hello",
        "é",
        "NOTE x\n",
        "{\"start\": 1, \"text\": \"hi\"}\n",
        "[00:01]",
        "-->",
        "\u{feff}",
        "99999999:00:00",
        "<b>",
        "&amp;",
        "\"",
        "{",
        "}",
        ":",
        "  ",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn transcript_parsers_never_panic_and_yield_clean_lines(text in prop_oneof![transcript_like(), any::<String>()]) {
        for format in [Format::Vtt, Format::Srt, Format::Jsonl, Format::Text] {
            match import::parse(format, &text) {
                Ok(utterances) => {
                    prop_assert!(!utterances.is_empty());
                    for u in utterances {
                        prop_assert!(!u.text.is_empty());
                        prop_assert!(!u.text.contains('\n'));
                    }
                }
                Err(error) => {
                    prop_assert!(error.line >= 1);
                    prop_assert!(error.line <= text.lines().count().max(1) + 1, "{} names a line past the end", error);
                }
            }
        }
    }

    #[test]
    fn days_round_trip(days in -300_000i64..2_900_000) {
        let day = Day::from_epoch_days(days);
        prop_assert_eq!(Day::parse(&day.to_string()).unwrap(), day);
        prop_assert_eq!(Day::parse(&day.as_number().to_string()).unwrap(), day);
    }

    #[test]
    fn day_parsing_never_panics(text in any::<String>()) {
        let _ = Day::parse(&text);
    }

    #[test]
    fn signed_tokens_round_trip_and_refuse_any_change(fields in prop::collection::vec("[^\n]{0,40}", 0..5), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let key = SigningKey::from_bytes([9; 32]);
        let refs: Vec<&str> = fields.iter().map(String::as_str).collect();
        let token = key.sign("ref", &refs);
        prop_assert_eq!(key.verify("ref", &token), Some(fields.clone()));
        let mut altered = token.clone().into_bytes();
        let i = at.index(altered.len());
        if altered[i] != byte {
            altered[i] = byte;
            if let Ok(altered) = String::from_utf8(altered) {
                prop_assert_eq!(key.verify("ref", &altered), None);
            }
        }
    }

    #[test]
    fn json_rpc_classification_never_panics(text in "[\\[\\]{}\":,0-9a-z .-]{0,80}") {
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
            match jsonrpc::classify(&value) {
                Ok(jsonrpc::Message::Request { id, .. }) => prop_assert!(id.is_string() || id.is_number()),
                Ok(_) => {}
                Err((id, why)) => {
                    prop_assert!(id.is_null() || id.is_string() || id.is_number());
                    prop_assert!(!why.is_empty());
                }
            }
        }
    }

    #[test]
    fn redirect_rules_never_panic_and_allow_only_loopback_or_known_hosts(uri in prop_oneof![
        any::<String>(),
        "(http|https)://(localhost|127\\.0\\.0\\.1|\\[::1\\]|claude\\.ai|evil\\.example|chatgpt\\.com)(:[0-9]{1,5})?/[a-z_/.-]{0,30}",
    ]) {
        if redirect::allowed(&uri) {
            let url = url::Url::parse(&uri).unwrap();
            let host = url.host_str().unwrap().to_string();
            prop_assert!(
                ["localhost", "127.0.0.1", "[::1]"].contains(&host.as_str()) || ["claude.ai", "claude.com", "chatgpt.com", "grok.com", "oauth-redirect.googleusercontent.com"].contains(&host.as_str()),
                "{} was allowed", uri
            );
        }
        let _ = redirect::matches(&uri, "http://localhost/callback");
        let _ = resource::matches(&uri, &["http://127.0.0.1:7659".to_string()]);
    }

    #[test]
    fn pairing_codes_normalize_to_eight_alphabet_characters(typed in any::<String>()) {
        if let Ok(code) = pairing::normalize(&typed) {
            prop_assert_eq!(code.len(), 8);
            prop_assert!(code.bytes().all(|b| pairing::ALPHABET.contains(&b)));
            prop_assert_eq!(pairing::normalize(&pairing::display(&code)), Ok(code));
        }
    }
}
