//! Properties of the parsers and rules that read what outsiders send, checked on generated input
//! (proptest, on stable Rust).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use journal::journal::day::Day;
use journal::journal::entity::{Entity, EntityType};
use journal::journal::facet::Facet;
use journal::journal::frontmatter::{self, FrontmatterError};
use journal::journal::import::{self, Format};
use journal::journal::memory::Memory;
use journal::journal::signed::SigningKey;
use journal::journal::transcript::{Line, Segment, SegmentHead};
use journal::mcp::jsonrpc;
use journal::oauth::client_metadata::{self, cache_seconds, check_document, check_url};
use journal::oauth::{known_clients, pairing, redirect, registration, resource};

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
            match jsonrpc::classify(value) {
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

// Hand-edited frontmatter files.

/// Values that YAML reads as something other than a plain string unless they are quoted, and
/// characters that need escaping.
const TRICKY: &[&str] = &[
    "null",
    "~",
    "true",
    "no",
    "1",
    "0x1f",
    "1e3",
    ".inf",
    " lead",
    "trail ",
    "a\nb",
    "\n",
    "\r",
    "\r\n",
    "\t",
    "\u{85}",
    "\u{2028}",
    "\u{feff}",
    "\u{1}",
    "\u{7f}",
    "- x",
    "#x",
    "a #b",
    "a: b",
    "---",
    "...",
    "'",
    "\"",
    "\\",
    "",
    "&a",
    "*a",
    "!x",
    "%",
    "@",
    "`",
    "|",
    ">",
    "[",
    "]",
    "{",
    "}",
    ",",
    "?",
    "é",
    "\u{1F600}",
    "\u{202e}",
];

/// Edits a person might make by hand, or get wrong.
const EDITS: &[&str] = &[
    "---\n",
    "---",
    "\n",
    "\r\n",
    "\r",
    ": ",
    "- ",
    "  ",
    "\t",
    "'",
    "\"",
    "&a ",
    "*a",
    "!!str ",
    "!!binary aGk= ",
    "#",
    "[",
    "]",
    "{",
    "}",
    "|\n",
    ">\n",
    "\u{feff}",
    "**",
    ":**",
    "id: x\n",
    "muted: yes\n",
    "extra: 1\n",
    "<<: {a: 1}\n",
    "? a\n",
    "...\n",
    "99:99:99",
    "- 09:30:05 **Ada:** hi\n",
    "- 09:30:05  **Ada:** hi\n",
    "- 09:30:05 plain\n",
];

fn field_text() -> BoxedStrategy<String> {
    prop_oneof![
        "[a-z0-9 -]{0,12}",
        prop::sample::select(TRICKY).prop_map(str::to_string),
        prop::collection::vec(prop::sample::select(TRICKY), 0..4).prop_map(|parts| parts.concat()),
        any::<String>(),
    ]
    .boxed()
}

fn one_line_text() -> BoxedStrategy<String> {
    field_text().prop_map(|text| text.replace(['\n', '\r'], " ")).boxed()
}

fn uuid_or_not() -> BoxedStrategy<String> {
    prop_oneof![
        4 => "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        1 => field_text(),
    ]
    .boxed()
}

fn facet_name_or_not() -> BoxedStrategy<String> {
    prop_oneof![6 => "[a-z0-9][a-z0-9-]{0,10}", 1 => field_text()].boxed()
}

fn day_or_not() -> BoxedStrategy<String> {
    prop_oneof![4 => "20[0-9]{2}-0[1-9]-[0-2][1-8]", 1 => field_text()].boxed()
}

fn facet() -> BoxedStrategy<Facet> {
    (
        uuid_or_not(),
        facet_name_or_not(),
        field_text(),
        field_text(),
        prop::option::of(prop_oneof!["#[0-9a-f]{6}", field_text()]),
        prop::option::of(field_text()),
        any::<bool>(),
    )
        .prop_map(|(id, name, title, description, color, emoji, muted)| Facet {
            id,
            name,
            title,
            description,
            color,
            emoji,
            muted,
        })
        .boxed()
}

fn entity() -> BoxedStrategy<Entity> {
    let kind = prop::sample::select(vec![
        EntityType::Person,
        EntityType::Place,
        EntityType::Project,
        EntityType::Organization,
    ]);
    (
        uuid_or_not(),
        field_text(),
        kind,
        prop::collection::vec(field_text(), 0..3),
        prop::collection::btree_map(facet_name_or_not(), field_text(), 0..3),
        prop::option::of(day_or_not()),
    )
        .prop_map(|(id, name, kind, aka, facets, last_seen)| Entity {
            id,
            name,
            kind,
            aka,
            facets,
            last_seen,
        })
        .boxed()
}

fn segment_head() -> BoxedStrategy<SegmentHead> {
    (
        day_or_not(),
        prop_oneof![4 => "[01][0-9]:[0-5][0-9](:[0-5][0-9])?", 1 => field_text()],
        any::<u32>(),
        prop::collection::vec(facet_name_or_not(), 0..3),
        field_text(),
        prop::option::of(field_text()),
    )
        .prop_map(|(day, start, duration_seconds, facets, title, source)| SegmentHead {
            day,
            start,
            duration_seconds,
            facets,
            title,
            source,
        })
        .boxed()
}

fn transcript_lines() -> BoxedStrategy<Vec<Line>> {
    let line = (0u32..400_000, prop::option::of(one_line_text()), one_line_text())
        .prop_map(|(time, speaker, text)| Line { time, speaker, text });
    prop::collection::vec(line, 0..5).boxed()
}

/// A transcript line as a person might type it: spacing, speakers and times a little off.
fn transcript_line_by_hand() -> BoxedStrategy<String> {
    let clock = prop_oneof!["[0-9]{1,3}:[0-5][0-9]:[0-5][0-9]", "[0-9:]{0,9}"];
    let gap = prop::sample::select(vec![" ", "  ", "\t", ""]);
    let speaker = prop::sample::select(vec![
        "",
        "**Ada:** ",
        "** Ada :**",
        "**:** ",
        "**Ada** ",
        "**Ada:**:** ",
        "**",
    ]);
    (
        prop::sample::select(vec!["- ", "-", "  - ", ""]),
        clock,
        gap,
        speaker,
        one_line_text(),
        prop::sample::select(vec!["\n", "\r\n", "  \n"]),
    )
        .prop_map(|(dash, clock, gap, speaker, text, end)| format!("{dash}{clock}{gap}{speaker}{text}{end}"))
        .boxed()
}

fn memory() -> BoxedStrategy<Memory> {
    (field_text(), field_text(), field_text())
        .prop_map(|(operation_id, saved_at, day)| Memory {
            operation_id,
            saved_at,
            day,
            content: String::new(),
        })
        .boxed()
}

/// `text` with a few hand edits: a piece inserted, a stretch deleted, or a line replaced.
fn edited(text: String, edits: Vec<(prop::sample::Index, u8, &'static str)>) -> String {
    let mut text = text;
    for (at, kind, piece) in edits {
        let mut i = at.index(text.len() + 1);
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        match kind % 3 {
            0 => text.insert_str(i, piece),
            1 => {
                let mut end = (i + piece.len().max(1)).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                text.replace_range(i..end, "");
            }
            _ => {
                let start = text[..i].rfind('\n').map_or(0, |n| n + 1);
                let end = text[i..].find('\n').map_or(text.len(), |n| i + n);
                text.replace_range(start..end, piece.trim_end_matches('\n'));
            }
        }
    }
    text
}

/// Real files of every kind, as the journal writes them, then edited by hand; and anything at all.
fn hand_edited_file() -> BoxedStrategy<String> {
    let body = prop_oneof![
        Just(String::new()),
        field_text(),
        Just("notes\n\n- a list\n".to_string())
    ];
    let file = prop_oneof![
        (facet(), body.clone()).prop_map(|(facet, body)| facet.render(&body)),
        (entity(), body.clone()).prop_map(|(entity, body)| entity.render(&body)),
        (
            segment_head(),
            transcript_lines(),
            prop::collection::vec(transcript_line_by_hand(), 0..3)
        )
            .prop_map(|(head, lines, by_hand)| Segment::render(&head, &lines) + &by_hand.concat()),
        (memory(), body).prop_map(|(memory, body)| frontmatter::render(&memory, &body)),
    ];
    let edits = prop::collection::vec(
        (any::<prop::sample::Index>(), any::<u8>(), prop::sample::select(EDITS)),
        0..3,
    );
    prop_oneof![
        3 => file.clone(),
        4 => (file, edits).prop_map(|(file, edits)| edited(file, edits)),
        1 => any::<String>(),
        1 => prop::collection::vec(prop::sample::select(EDITS), 0..12).prop_map(|parts| parts.concat()),
    ]
    .boxed()
}

/// The line an error names (`line N`), if it names one.
fn named_line(error: &str) -> Option<usize> {
    let (_, after) = error.split_once("line ")?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Frontmatter read as `T`: an error names a line of the file (a YAML error one inside the block,
/// which starts on line 2); what was read, written again, reads back the same.
fn frontmatter_holds<T>(text: &str) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    match frontmatter::parse::<T>(text) {
        Ok((value, body)) => {
            let again = frontmatter::render(&value, body);
            let (back, back_body) = frontmatter::parse::<T>(&again).map_err(|e| {
                TestCaseError::fail(format!("{text:?} rendered as {again:?}, which does not read: {e}"))
            })?;
            prop_assert_eq!(back, value, "{:?} rendered as {:?}", text, again);
            prop_assert_eq!(back_body, body);
        }
        Err(FrontmatterError::MissingOpen) => {
            prop_assert_eq!(named_line(&FrontmatterError::MissingOpen.to_string()), Some(1))
        }
        // Names no line: the whole file was searched for the closing line.
        Err(FrontmatterError::MissingClose) => {}
        Err(FrontmatterError::Yaml(why)) => {
            let (yaml, _) = frontmatter::split(text).unwrap();
            let line = named_line(&why);
            prop_assert!(line.is_some(), "{:?}: {} names no line", text, why);
            let line = line.unwrap();
            // YAML counts a lone carriage return as a line break too.
            let lines = yaml.replace("\r\n", "\n").replace('\r', "\n").lines().count();
            prop_assert!(
                line >= 2 && line <= lines + 2,
                "{:?}: {} names a line past the block",
                text,
                why
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn frontmatter_split_never_panics_and_round_trips(text in hand_edited_file()) {
        match frontmatter::split(&text) {
            Ok((yaml, body)) => {
                prop_assert!(yaml.is_empty() || yaml.ends_with('\n'));
                prop_assert!(text.ends_with(body));
                let rebuilt = format!("---\n{yaml}---\n{body}");
                prop_assert_eq!(frontmatter::split(&rebuilt), Ok((yaml, body)));
            }
            Err(FrontmatterError::MissingOpen) => {
                let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
                prop_assert!(!text.starts_with("---\n") && !text.starts_with("---\r\n"));
            }
            Err(FrontmatterError::MissingClose) => {}
            Err(FrontmatterError::Yaml(_)) => prop_assert!(false, "split does not read YAML"),
        }
    }

    #[test]
    fn frontmatter_parsing_names_lines_and_round_trips(text in hand_edited_file()) {
        frontmatter_holds::<Facet>(&text)?;
        frontmatter_holds::<Entity>(&text)?;
        frontmatter_holds::<SegmentHead>(&text)?;
        frontmatter_holds::<Memory>(&text)?;
        frontmatter_holds::<BTreeMap<String, String>>(&text)?;
    }

    #[test]
    fn journal_files_read_back_what_they_write(text in hand_edited_file()) {
        if let Ok(facet) = Facet::parse(&text) {
            prop_assert_eq!(Facet::parse(&facet.render("")), Ok(facet));
        }
        if let Ok((entity, body)) = Entity::parse(&text) {
            prop_assert_eq!(Entity::parse(&entity.render(&body)), Ok((entity, body)));
        }
        match Segment::parse(&text) {
            // Every line, `**` text without a speaker included (written escaped), reads back the same.
            Ok(segment) => {
                let again = Segment::render(&segment.head, &segment.lines);
                prop_assert_eq!(Segment::parse(&again), Ok(segment), "{:?} rendered as {:?}", text, again);
            }
            Err(why) => {
                // A transcript line's error names the file's line and quotes it.
                if let Some(quoted) = why.split_once("found \"").map(|(_, q)| q.strip_suffix('"').unwrap_or(q)) {
                    let line = named_line(&why).unwrap();
                    let named = text.lines().nth(line - 1).unwrap_or_default();
                    prop_assert!(named.starts_with(quoted), "{:?}: {} but line {} is {:?}", text, why, line, named);
                }
            }
        }
    }
}

// Client ID metadata documents and their URLs.

/// Hosts for a client_id URL: public names and addresses, and every way of naming this computer
/// or a private network.
const CLIENT_HOSTS: &[&str] = &[
    "app.example",
    "claude.ai",
    "chatgpt.com",
    "localhost",
    "LOCALHOST",
    "localhost.",
    "a.localhost",
    "a.localhost.",
    "localhost..",
    "127.0.0.1",
    "127.1",
    "2130706433",
    "0x7f.1",
    "0177.0.0.1",
    "0",
    "10.0.0.1",
    "169.254.169.254",
    "100.64.0.1",
    "192.168.1.1",
    "1.1.1.1",
    "[::1]",
    "[::]",
    "[::ffff:127.0.0.1]",
    "[::ffff:10.0.0.1]",
    "[::127.0.0.1]",
    "[64:ff9b::7f00:1]",
    "[2002:7f00:1::]",
    "[fe80::1]",
    "[2606:4700::1111]",
    "xn--e1afmkfd.example",
    "",
];

/// A client_id as a client might send it: the catalog's, or built from parts, or anything.
fn client_id() -> BoxedStrategy<String> {
    let built = (
        prop::sample::select(vec!["https", "http", "HTTPS", "ftp", "file"]),
        prop::sample::select(vec!["", "user@", "user:pw@", ":@"]),
        prop_oneof![
            4 => prop::sample::select(CLIENT_HOSTS).prop_map(str::to_string),
            1 => any::<Ipv4Addr>().prop_map(|ip| ip.to_string()),
            1 => any::<Ipv6Addr>().prop_map(|ip| format!("[{ip}]")),
            1 => "[a-z0-9.-]{0,20}",
        ],
        prop::sample::select(vec!["", ":443", ":0", ":8080", ":99999"]),
        prop::sample::select(vec![
            "",
            "/",
            "/client.json",
            "/oauth/client-metadata.json",
            "/%2e%2e/x",
            "/a b",
        ]),
        prop::sample::select(vec!["", "?x=1", "#f"]),
    )
        .prop_map(|(scheme, user, host, port, path, tail)| format!("{scheme}://{user}{host}{port}{path}{tail}"));
    prop_oneof![
        4 => built,
        1 => prop::sample::select(KNOWN_IDS).prop_map(str::to_string),
        1 => "https://chatgpt.com/oauth/codex/[A-Za-z0-9_./-]{0,70}/client.json",
        1 => any::<String>(),
    ]
    .boxed()
}

const KNOWN_IDS: &[&str] = &[
    "https://claude.ai/oauth/claude-code-client-metadata",
    "https://chatgpt.com/oauth/codex/client.json",
    "https://chatgpt.com/oauth/client.json",
    "https://vscode.dev/oauth/client-metadata.json",
    "https://zed.dev/oauth/client-metadata.json",
];

/// Redirect URIs a document might list: loopback, the hosted agents' callbacks, look-alikes.
fn document_redirect_uri() -> BoxedStrategy<String> {
    prop_oneof![
        concat!(
            "(http|https)://(localhost|LOCALHOST|127\\.0\\.0\\.1|127\\.9\\.9\\.9|\\[::1\\]|0\\.0\\.0\\.0|",
            "evil\\.example|claude\\.ai)",
            "(:[0-9]{1,5})?/[a-z_/.%-]{0,20}(\\?x=1)?(#f)?"
        ),
        concat!(
            "https://(claude\\.ai|claude\\.com|chatgpt\\.com|grok\\.com)/(api/mcp/auth_callback|",
            "connector_platform_oauth_redirect|connectors-oauth-exchange-code/|connector/oauth/[a-zA-Z0-9_.-]{0,8})"
        ),
        "http://(user@)?localhost@evil\\.example/cb",
        any::<String>(),
    ]
    .boxed()
}

/// A client name: plain, or with control, format and bidirectional characters, or too long.
fn client_name() -> BoxedStrategy<Value> {
    let spoofing = prop::sample::select(vec![
        "App",
        " ",
        "\u{202e}",
        "\u{200b}",
        "\u{2066}",
        "\u{feff}",
        "\u{ad}",
        "\u{e0041}",
        "\u{1}",
        "\u{7f}",
        "\u{85}",
        "\n",
        "\t",
        "é",
        "\u{1F600}",
        "\u{115f}",
        "\u{3164}",
        "\u{180e}",
        "\u{61c}",
        "\u{2028}",
    ]);
    prop_oneof![
        3 => prop::collection::vec(spoofing, 0..8).prop_map(|parts| Value::from(parts.concat())),
        1 => any::<String>().prop_map(Value::from),
        1 => (1usize..300).prop_map(|n| Value::from("n".repeat(n))),
        1 => prop::sample::select(vec![Value::Null, json!(5), json!(["App"]), json!({})]),
    ]
    .boxed()
}

/// A metadata document for `id`: a real one with random fields, a mangled one, or any bytes.
fn metadata_document() -> BoxedStrategy<(String, Vec<u8>)> {
    let uris = prop_oneof![
        6 => prop::collection::vec(document_redirect_uri().prop_map(Value::from), 0..20)
            .prop_map(Value::from),
        1 => Just(json!("http://localhost/cb")),
        1 => Just(json!([1, null, "http://localhost/cb"])),
    ];
    let method = prop::sample::select(vec![
        None,
        Some(json!("none")),
        Some(json!("client_secret_basic")),
        Some(Value::Null),
        Some(json!(1)),
    ]);
    let document = (
        client_id(),
        prop::bool::weighted(0.85),
        prop::option::weighted(0.85, client_name()),
        prop::option::weighted(0.9, uris),
        prop_oneof![4 => Just(None), 2 => Just(Some(json!("none"))), 1 => method],
        prop::option::weighted(
            0.3,
            prop::sample::select(vec![
                ("grant_types", json!(["authorization_code"])),
                ("grant_types", json!(["implicit"])),
                ("response_types", json!(["code"])),
                ("response_types", json!(["token"])),
                ("client_uri", json!("https://app.example/")),
            ]),
        ),
        prop::option::weighted(0.1, any::<prop::sample::Index>()),
    )
        .prop_map(|(id, same_id, name, uris, method, extra, cut)| {
            let mut document = serde_json::Map::new();
            let stated = if same_id { id.clone() } else { format!("{id}/") };
            document.insert("client_id".into(), stated.into());
            if let Some(name) = name {
                document.insert("client_name".into(), name);
            }
            if let Some(uris) = uris {
                document.insert("redirect_uris".into(), uris);
            }
            if let Some(method) = method {
                document.insert("token_endpoint_auth_method".into(), method);
            }
            if let Some((key, value)) = extra {
                document.insert(key.into(), value);
            }
            let mut body = Value::Object(document).to_string().into_bytes();
            if let Some(cut) = cut {
                body.truncate(cut.index(body.len() + 1));
            }
            (id, body)
        });
    prop_oneof![
        6 => document,
        1 => (client_id(), any::<Vec<u8>>()),
    ]
    .boxed()
}

fn cache_control() -> BoxedStrategy<Option<String>> {
    let directive = prop::sample::select(vec![
        "no-store",
        "NO-CACHE",
        " no-cache ",
        "public",
        "private",
        "max-age=600",
        "MAX-AGE=60",
        "max-age=-5",
        "max-age=+5",
        "max-age=99999999999999999999",
        "max-age=",
        "max-age = 5",
        "s-maxage=5",
        "",
        "\u{130}",
        "\u{212a}",
    ]);
    prop::option::of(prop_oneof![
        3 => prop::collection::vec(directive, 0..4).prop_map(|parts| parts.join(",")),
        1 => any::<String>(),
    ])
    .boxed()
}

/// Whether a URL's host names this computer or a private network, with any final dots too
/// ("localhost.", "localhost..").
fn names_this_computer(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => !client_metadata::is_public(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => !client_metadata::is_public(IpAddr::V6(ip)),
        None => true,
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn client_id_urls_are_https_and_public(id in client_id()) {
        if let Ok(url) = check_url(&id) {
            prop_assert_eq!(url.scheme(), "https");
            prop_assert!(url.host().is_some());
            prop_assert!(url.username().is_empty() && url.password().is_none() && url.fragment().is_none());
            prop_assert!(!names_this_computer(&url), "{} was accepted", id);
        }
    }

    #[test]
    fn metadata_documents_keep_only_allowed_callbacks_and_clean_names((id, body) in metadata_document()) {
        if let Ok((name, uris)) = check_document(&id, &body) {
            let document: Value = serde_json::from_slice(&body).unwrap();
            prop_assert_eq!(document["client_id"].as_str(), Some(id.as_str()));
            prop_assert_eq!(registration::clean_name(&name), name.clone());
            prop_assert!(!name.trim().is_empty() && name.chars().count() <= 256, "{:?}", name);
            prop_assert!(!uris.is_empty() && uris.len() <= 16);
            for (i, uri) in uris.iter().enumerate() {
                prop_assert!(redirect::allowed(uri), "{} was kept", uri);
                prop_assert!(!uris[..i].contains(uri), "{} is listed twice", uri);
            }
        }
    }

    #[test]
    fn known_clients_are_fetchable_urls_and_keep_to_their_callbacks(id in client_id(), uri in document_redirect_uri()) {
        if let Some(known) = known_clients::lookup(&id) {
            prop_assert!(check_url(&id).is_ok(), "{} is in the catalog but not a client_id URL", id);
            let examples = known.examples();
            for example in &examples {
                prop_assert!(known.allows(example), "{} does not allow its own {}", known.name, example);
            }
            if known.allows(&uri) {
                prop_assert!(
                    (uri.starts_with("http://") && redirect::allowed(&uri)) || examples.contains(&uri),
                    "{} allows {}", known.name, uri
                );
            }
        }
    }

    #[test]
    fn cache_headers_never_panic(header in cache_control()) {
        let seconds = cache_seconds(header.as_deref());
        let header = header.unwrap_or_default().to_ascii_lowercase();
        if header.split(',').any(|d| matches!(d.trim(), "no-store" | "no-cache")) {
            prop_assert_eq!(seconds, Some(0));
        }
    }
}
