//! How fast the built-in model embeds, on one core: `cargo run --release -p journal-meaning
//! --example speed [ROUNDS]`. Embeds the labelled set's notes (tests/data/meaning/labelled.json,
//! read as text: each `"text"` value) ROUNDS times (default 2,000) and prints texts and bytes a second.

use std::time::Instant;

use journal_meaning::Model;

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(2000);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/meaning/labelled.json");
    let data = std::fs::read_to_string(path).expect("the labelled set is in the repository");
    let texts: Vec<&str> = data
        .split("\"text\": \"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    let started = Instant::now();
    let model = Model::builtin().expect("the built-in model loads");
    let loaded = started.elapsed();
    let bytes: usize = texts.iter().map(|t| t.len()).sum::<usize>() * rounds;
    let started = Instant::now();
    let mut checksum = 0.0f32;
    for _ in 0..rounds {
        for text in &texts {
            checksum += model.embed(text)[0];
        }
    }
    let took = started.elapsed().as_secs_f64();
    let count = texts.len() * rounds;
    println!(
        "{count} texts ({} bytes each on average) in {took:.2} s: {:.0} texts/s, {:.1} MB/s; model loaded in {:.1} ms ({checksum:.1})",
        bytes / count,
        count as f64 / took,
        bytes as f64 / took / 1e6,
        loaded.as_secs_f64() * 1000.0
    );
}
