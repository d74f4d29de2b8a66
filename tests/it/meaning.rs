//! Search by meaning through the search tool: the modes, how each hit says it matched, a bad mode
//! refused, and private = missing on the meaning path (a note hidden from a connection is never its
//! neighbour, even for a question made of the note's own words).

use serde_json::{Value, json};

use crate::harness::{Client, TestServer};
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
