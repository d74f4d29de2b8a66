//! Search by meaning through the search tool: the modes, how each hit says it matched, a bad mode
//! refused, and private = missing on the meaning path (a note hidden from a connection is never its
//! neighbour, even for a question made of the note's own words).

use serde_json::{Value, json};

use crate::harness::{Client, TestServer, eventually};
use journal::journal::demo_notes;

fn paths(answer: &Value) -> Vec<String> {
    answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["path"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test]
async fn meaning_finds_a_note_in_other_words_and_says_how_each_hit_matched() {
    let server = TestServer::start().await;
    let key = server.key("meaning", &["notes"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    // The half-marathon note says "three runs a week, the long one on Sundays": asked in other words.
    let question = "jogging schedule to prepare for a race";
    let every_word = client
        .ok("search", json!({"query": question, "mode": "all_words"}))
        .await;
    assert!(every_word["results"].as_array().unwrap().is_empty(), "{every_word}");
    for mode in ["semantic", "hybrid", "the default"] {
        let mut arguments = json!({"query": question, "limit": 5});
        if mode != "the default" {
            arguments["mode"] = json!(mode);
        }
        let answer = client.ok("search", arguments).await;
        assert_eq!(paths(&answer)[0], "Projects/half-marathon.md", "{mode}: {answer}");
        let first = &answer["results"][0];
        assert!(first["score"].as_f64().unwrap() > 0.0, "{first}");
        assert!(first["matched"]["meaning"].as_f64().is_some(), "{first}");
    }
    // No note holds the word: the default answers by meaning, and says that is all it is.
    let unworded = client.ok("search", json!({"query": "jogging", "limit": 3})).await;
    assert!(
        paths(&unworded).contains(&"Projects/half-marathon.md".to_string()),
        "{unworded}"
    );
    for hit in unworded["results"].as_array().unwrap() {
        assert!(hit["matched"].get("words").is_none(), "{unworded}");
        assert!(hit["matched"]["meaning"].as_f64().unwrap() >= 0.15, "{unworded}");
    }
    assert!(
        unworded["note"].as_str().unwrap().contains("nearest in meaning"),
        "{unworded}"
    );
    // A rare word of one note ranks that note first in every mode, found by its words.
    for mode in ["lexical", "hybrid"] {
        let answer = client
            .ok("search", json!({"query": "marzipan-ledger", "mode": mode}))
            .await;
        assert_eq!(paths(&answer)[0], demo_notes::OVERRIDDEN_NOTE, "{mode}: {answer}");
        assert_eq!(answer["results"][0]["matched"]["words"], 1.0, "{mode}: {answer}");
        assert!(answer.get("note").is_none(), "{mode}: {answer}");
    }
    let refused = client
        .refused("search", json!({"query": "running", "mode": "fuzzy"}))
        .await;
    assert!(
        refused.contains("mode must be hybrid, lexical, semantic or all_words, not \"fuzzy\""),
        "{refused}"
    );
}

#[tokio::test]
async fn a_hidden_note_is_never_a_neighbour_in_meaning() {
    let server = TestServer::start().await;
    // The overridden note denies the connection it names, and no other.
    let denied_key = server.key(demo_notes::OVERRIDDEN_FOR, &["notes"], None).await;
    let denied = Client::connected(&server.url(), &denied_key).await;
    let other_key = server.key("another", &["notes"], None).await;
    let other = Client::connected(&server.url(), &other_key).await;
    let own_words = "Bindery pricing, costs per notebook, keep the margin above 40 %, A5 notebook, guest book";
    for mode in ["semantic", "hybrid", "lexical"] {
        let seen = other
            .ok("search", json!({"query": own_words, "mode": mode, "limit": 5}))
            .await;
        assert_eq!(paths(&seen)[0], demo_notes::OVERRIDDEN_NOTE, "{mode}: {seen}");
        let hidden = denied
            .ok("search", json!({"query": own_words, "mode": mode, "limit": 100}))
            .await;
        assert!(
            !paths(&hidden).contains(&demo_notes::OVERRIDDEN_NOTE.to_string()),
            "{mode}: {hidden}"
        );
        assert!(!hidden.to_string().contains("marzipan"), "{mode}: {hidden}");
    }
}

#[tokio::test]
async fn items_like_one_are_found_by_its_reference_and_never_reach_past_the_grant() {
    let server = TestServer::start().await;
    let key = server.key("like", &["notes", "entities"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    let found = client
        .ok("search", json!({"query": "path:Projects/half-marathon.md"}))
        .await;
    let reference = found["results"][0]["reference"].as_str().unwrap().to_string();
    let like = client
        .ok("search", json!({"like": reference.clone(), "limit": 5}))
        .await;
    let near = paths(&like);
    assert!(
        !near.contains(&"Projects/half-marathon.md".to_string()),
        "never itself: {like}"
    );
    assert!(
        near.iter().any(|p| p.contains("running-log") || p.contains("health")),
        "{like}"
    );
    for hit in like["results"].as_array().unwrap() {
        assert!(
            hit["matched"]["meaning"].is_number() && hit["matched"].get("words").is_none(),
            "{hit}"
        );
    }
    // Filters in the query narrow it; words are refused, and so is another mode.
    let in_folder = client
        .ok("search", json!({"like": reference, "query": "path:Projects/Atlas/"}))
        .await;
    assert!(
        paths(&in_folder).iter().all(|p| p.starts_with("Projects/Atlas/")),
        "{in_folder}"
    );
    let worded = client
        .refused("search", json!({"like": reference, "query": "running"}))
        .await;
    assert!(worded.contains("leave the words out of query"), "{worded}");
    let moded = client
        .refused("search", json!({"like": reference, "mode": "lexical"}))
        .await;
    assert!(moded.contains("like ranks by meaning"), "{moded}");
    // A reference is the connection's own: another's, or a made-up one, is refused alike.
    let other_key = server.key("other", &["notes"], None).await;
    let other = Client::connected(&server.url(), &other_key).await;
    let foreign = other.refused("search", json!({"like": reference})).await;
    assert!(foreign.contains("that reference is not valid here"), "{foreign}");
    // A note made private since its reference was given answers as a missing item.
    let running = client
        .ok("search", json!({"query": "path:Meetings/landlord-call.md"}))
        .await;
    let running_reference = running["results"][0]["reference"].clone();
    let file = server.root().join("notes/Meetings/landlord-call.md");
    let text = std::fs::read_to_string(&file).unwrap();
    let private = text.replacen("---\n", "---\naccess: private\n", 1);
    assert_ne!(private, text, "the note has frontmatter");
    std::fs::write(&file, private).unwrap();
    let hidden = eventually(100, || async {
        client
            .ok("search", json!({"query": "path:Meetings/landlord-call.md"}))
            .await["results"]
            .as_array()
            .unwrap()
            .is_empty()
    })
    .await;
    assert!(hidden, "the sync saw the note made private");
    let gone = client.refused("search", json!({"like": running_reference})).await;
    assert_eq!(gone, "that item no longer exists");
    // A note the connection may not see is never like another.
    let denied_key = server.key(demo_notes::OVERRIDDEN_FOR, &["notes"], None).await;
    let denied = Client::connected(&server.url(), &denied_key).await;
    let seen_by_other = other
        .ok(
            "search",
            json!({"query": format!("path:{}", demo_notes::OVERRIDDEN_NOTE)}),
        )
        .await;
    assert_eq!(paths(&seen_by_other), [demo_notes::OVERRIDDEN_NOTE]);
    let own = denied
        .ok("search", json!({"query": "path:Projects/half-marathon.md"}))
        .await;
    let like_own = denied
        .ok("search", json!({"like": own["results"][0]["reference"], "limit": 100}))
        .await;
    assert!(
        !paths(&like_own).contains(&demo_notes::OVERRIDDEN_NOTE.to_string()),
        "a hidden note is never like another: {like_own}"
    );
}

#[tokio::test]
async fn path_and_where_arguments_mean_what_the_inline_filters_mean() {
    let server = TestServer::start().await;
    let key = server.key("structured", &["notes", "transcripts"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    let inline = client
        .ok(
            "search",
            json!({"query": "plan path:Projects/ [status:is \"active\"]", "mode": "all_words", "limit": 100}),
        )
        .await;
    let structured = client
        .ok(
            "search",
            json!({"query": "plan", "path": "Projects/", "where": "status is \"active\"", "mode": "all_words", "limit": 100}),
        )
        .await;
    assert!(!paths(&inline).is_empty(), "{inline}");
    assert_eq!(paths(&inline), paths(&structured));
    // `or` and `and` as in base_query; a filter only lists what passes it.
    let either = client
        .ok(
            "search",
            json!({"where": "status is \"todo\" or status is \"done\"", "limit": 100}),
        )
        .await;
    let listed = paths(&either);
    assert!(listed.contains(&"Projects/Atlas/dashboards.md".to_string()), "{either}");
    assert!(
        listed.contains(&"Projects/Atlas/warehouse-cutover.md".to_string()),
        "{either}"
    );
    assert!(!listed.contains(&"Projects/half-marathon.md".to_string()), "{either}");
    assert!(
        either["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|hit| hit["category"] == "notes")
    );
    let bad = client
        .refused("search", json!({"query": "plan", "where": "status iss \"x\""}))
        .await;
    assert!(bad.starts_with("where: "), "{bad}");
    let note = client
        .ok("search", json!({"path": "Projects/half-marathon.md", "limit": 100}))
        .await;
    assert_eq!(paths(&note), ["Projects/half-marathon.md"]);
}

#[tokio::test]
async fn metadata_searches_frontmatter_values_alone_and_shows_no_text() {
    let server = TestServer::start().await;
    let key = server.key("metadata", &["notes", "transcripts"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    let by_value = client
        .ok(
            "search",
            json!({"query": "someday", "fields": "metadata", "limit": 100}),
        )
        .await;
    let by_condition = client
        .ok("search", json!({"where": "status is \"someday\"", "limit": 100}))
        .await;
    let mut found = paths(&by_value);
    let mut expected = paths(&by_condition);
    found.sort();
    expected.sort();
    assert!(expected.len() >= 3, "{by_condition}");
    assert_eq!(found, expected, "{by_value}");
    for hit in by_value["results"].as_array().unwrap() {
        assert!(hit.get("snippet").is_none(), "{hit}");
        assert_eq!(hit["category"], "notes");
    }
    // A word of a note's text but of no frontmatter value is not found by metadata.
    let text_only = client
        .ok("search", json!({"query": "Riverside", "fields": "metadata"}))
        .await;
    assert!(text_only["results"].as_array().unwrap().is_empty(), "{text_only}");
    let in_text = client
        .ok("search", json!({"query": "Riverside", "mode": "all_words"}))
        .await;
    assert!(!in_text["results"].as_array().unwrap().is_empty(), "{in_text}");
    let refused = client
        .refused("search", json!({"query": "someday", "fields": "body"}))
        .await;
    assert!(
        refused.contains("fields must be all or metadata, not \"body\""),
        "{refused}"
    );
    let moded = client
        .refused(
            "search",
            json!({"query": "someday", "fields": "metadata", "mode": "semantic"}),
        )
        .await;
    assert!(moded.contains("leave mode and like out"), "{moded}");
    let wordless = client
        .refused("search", json!({"query": "tag:atlas", "fields": "metadata"}))
        .await;
    assert_eq!(wordless, "fields: metadata needs words in query");
}

#[tokio::test]
async fn regex_matches_titles_and_text_within_the_arguments_and_refuses_a_bad_pattern() {
    let server = TestServer::start().await;
    let key = server.key("regex", &["notes", "transcripts"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    let found = client
        .ok(
            "search",
            json!({"query": "half[- ]marathon", "regex": true, "limit": 100}),
        )
        .await;
    let found_paths = paths(&found);
    assert!(
        found_paths.contains(&"Projects/half-marathon.md".to_string()),
        "{found}"
    );
    for hit in found["results"].as_array().unwrap() {
        let text = format!("{} {}", hit["title"], hit["snippet"]).to_lowercase();
        assert!(
            text.contains("half marathon") || text.contains("half-marathon"),
            "{hit}"
        );
        assert!(hit["score"].as_f64().unwrap() >= 1.0, "{hit}");
    }
    // Case does not matter; brackets and colons are the pattern's, and arguments narrow it.
    let upper = client
        .ok(
            "search",
            json!({"query": "HALF[- ]MARATHON", "regex": true, "limit": 100}),
        )
        .await;
    assert_eq!(paths(&upper), found_paths);
    let in_folder = client
        .ok(
            "search",
            json!({"query": "half[- ]marathon", "regex": true, "path": "Areas/", "limit": 100}),
        )
        .await;
    assert!(!paths(&in_folder).is_empty(), "{in_folder}");
    assert!(paths(&in_folder).iter().all(|p| p.starts_with("Areas/")), "{in_folder}");
    // A hidden note's words are never matched.
    let denied_key = server.key(demo_notes::OVERRIDDEN_FOR, &["notes"], None).await;
    let denied = Client::connected(&server.url(), &denied_key).await;
    let hidden = denied
        .ok("search", json!({"query": "marzipan-ledger", "regex": true}))
        .await;
    assert!(hidden["results"].as_array().unwrap().is_empty(), "{hidden}");
    let bad = client.refused("search", json!({"query": "(half", "regex": true})).await;
    assert_eq!(bad, "regex: unclosed group");
    let moded = client
        .refused("search", json!({"query": "half", "regex": true, "mode": "semantic"}))
        .await;
    assert!(moded.contains("leave mode, like and fields out"), "{moded}");
    let empty = client.refused("search", json!({"regex": true, "path": "Areas/"})).await;
    assert_eq!(empty, "regex: true needs a pattern in query");
}
