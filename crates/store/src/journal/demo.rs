//! The sample journal: a few facets, entities and days of realistic transcripts, written from a seed
//! so the same options always write the same journal (benchmarks and tests rely on that).
//!
//! Text is built from per-facet phrase templates filled with the journal's entities and a
//! Zipf-distributed vocabulary, so searches behave like they do on real speech: a few words are
//! everywhere, most are rare.

use std::collections::BTreeMap;
use std::path::Path;

use super::JournalError;
use super::day::{self, Day};
use super::entity::{self, Entity, EntityType};
use super::facet::Facet;
use super::transcript::{Line, Segment, SegmentHead};
use crate::fsio;

/// What to generate.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    pub days: u32,
    pub segments_per_day: u32,
    pub seed: u64,
    /// The last day with transcripts.
    pub end: Day,
    /// Generated notes to write into `notes/Generated/` beside the sample vault (for benchmarks).
    pub notes: u32,
}

/// What was written.
#[derive(Debug, Default, Clone, Copy)]
pub struct Written {
    pub facets: usize,
    pub entities: usize,
    pub segments: usize,
    /// Files of the sample vault in `notes/` (see `demo_notes`).
    pub notes: usize,
}

const FACETS: [(&str, &str, &str, &str, &str); 4] = [
    (
        "work",
        "Work",
        "The day job at Northwind: the data platform team, planning and reviews.",
        "💼",
        "#3b82f6",
    ),
    (
        "family",
        "Family",
        "Home life: the kids' school, the flat, weekends and relatives.",
        "🏡",
        "#f59e0b",
    ),
    (
        "health",
        "Health",
        "Running, the physio and doctor's appointments, sleep.",
        "🏃",
        "#10b981",
    ),
    (
        "side-project",
        "Side project",
        "Building a small bookbinding shop with Tomás.",
        "📚",
        "#8b5cf6",
    ),
];

/// (name, type, aka, facet, description)
const ENTITIES: [(&str, EntityType, &str, &str, &str); 10] = [
    (
        "Ada Okafor",
        EntityType::Person,
        "Ada",
        "work",
        "Leads the data platform team; my manager.",
    ),
    (
        "Priya Raman",
        EntityType::Person,
        "Priya",
        "work",
        "Staff engineer who owns the ingestion pipeline.",
    ),
    (
        "Northwind",
        EntityType::Organization,
        "",
        "work",
        "The company I work for.",
    ),
    (
        "Project Atlas",
        EntityType::Project,
        "Atlas",
        "work",
        "The migration of reporting to the new warehouse.",
    ),
    (
        "Maya",
        EntityType::Person,
        "",
        "family",
        "My daughter, in year four at Elm Street School.",
    ),
    ("Sam", EntityType::Person, "", "family", "My partner."),
    (
        "Elm Street School",
        EntityType::Place,
        "",
        "family",
        "Maya's primary school.",
    ),
    (
        "Dr. Lindqvist",
        EntityType::Person,
        "",
        "health",
        "Physiotherapist treating my knee.",
    ),
    (
        "Tomás Ruiz",
        EntityType::Person,
        "Tomás",
        "side-project",
        "Co-founder of the bookbinding shop.",
    ),
    (
        "Riverside Park",
        EntityType::Place,
        "",
        "health",
        "Where I run on weekday mornings.",
    ),
];

const TEMPLATES: [(&str, [&str; 8]); 4] = [
    (
        "work",
        [
            "{p} asked whether the {w} migration for {proj} can land before Friday",
            "we agreed the {w} dashboard needs a review from {p} first",
            "the lease renewal for the office came up again, {p} wants numbers by Monday",
            "{p} thinks the ingestion backlog is a {w} problem, not a staffing one",
            "let's write down the {w} decision so {p} can sign it off",
            "the quarterly planning doc still has three open {w} questions",
            "I'll pair with {p} on the {w} alerting tomorrow morning",
            "{proj} is blocked on access to the {w} warehouse",
        ],
    ),
    (
        "family",
        [
            "{p} has a {w} trip with Elm Street School next week, we need to sign the form",
            "remind me to call the landlord about the lease renewal and the {w} heater",
            "{p} wants pancakes on Saturday and a {w} afternoon at the library",
            "we should book the dentist for {p} before the holidays",
            "grandma is visiting on Sunday, {p} will pick her up at the {w} station",
            "the parents' evening is on Thursday at six, {p} can't make it",
            "let's sort the {w} boxes in the hallway this weekend",
            "{p} lost a tooth today and asked about the {w} fairy",
        ],
    ),
    (
        "health",
        [
            "{p} said the knee is better, keep the {w} exercises twice a day",
            "ran five kilometres in Riverside Park, the {w} felt easy",
            "slept badly again, too much {w} after eight",
            "next physio appointment with {p} is on Tuesday at nine",
            "the doctor wants a {w} blood test before the next check-up",
            "stretching after the run helps the {w} a lot",
            "try the interval plan {p} suggested: four by {w} minutes",
            "booked the annual {w} check for the end of the month",
        ],
    ),
    (
        "side-project",
        [
            "{p} found a supplier for {w} linen thread, cheaper than the last one",
            "we need photos of the {w} notebooks for the shop page",
            "{p} wants to try a {w} stitch binding for the spring collection",
            "the market stall costs forty a day, {p} thinks it's worth it",
            "invoice the café for the {w} guest books",
            "{p} will cut the {w} boards on Saturday",
            "let's price the {w} journals at twenty-eight",
            "the website checkout still fails for {w} orders",
        ],
    ),
];

const SPEAKERS: [&str; 2] = ["Me", "Sam"];

/// The waking day the demo spreads segments over: 06:00 to 23:30, in seconds.
const DAY_SECONDS: u32 = 17 * 3600 + 1800;

/// A small, fast, seedable generator (splitmix64): demo text needs repeatability, not secrecy.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// A Zipf-like index in 0..n: rank r is chosen with weight about 1/(r+1).
    fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        let x = ((n as f64 + 1.0).ln() * u).exp() - 1.0;
        (x as usize).min(n - 1)
    }
}

/// A vocabulary of pronounceable made-up words plus common ones, most frequent first.
fn vocabulary(rng: &mut Rng, size: usize) -> Vec<String> {
    const COMMON: [&str; 24] = [
        "budget", "report", "schedule", "weekend", "garden", "meeting", "deadline", "kitchen", "timeline", "coffee",
        "contract", "holiday", "review", "invoice", "morning", "evening", "train", "summer", "winter", "paper",
        "leather", "metrics", "rollout", "pipeline",
    ];
    const SYLLABLES: [&str; 16] = [
        "ka", "lo", "mi", "ver", "sta", "no", "ri", "den", "pa", "tor", "el", "ux", "bri", "sen", "qua", "fi",
    ];
    let mut words: Vec<String> = COMMON.iter().map(|w| w.to_string()).collect();
    while words.len() < size {
        let parts = 2 + rng.below(2);
        let word: String = (0..parts).map(|_| SYLLABLES[rng.below(SYLLABLES.len())]).collect();
        words.push(word);
    }
    words
}

/// Writes the sample journal's files into `root` (which should be new or empty). The caller opens the
/// journal afterwards to index them.
pub fn write(root: &Path, options: &DemoOptions) -> Result<Written, JournalError> {
    let mut rng = Rng(options.seed);
    let mut written = Written::default();
    // Sample data is not worth a disk flush per file (a million flushes take many minutes): files are
    // written whole but unflushed, and a crash while writing a demo means writing it again.
    let write = |rel: String, text: String| -> Result<(), JournalError> {
        let path = root.join(rel);
        fsio::write_unflushed(&path, text.as_bytes()).map_err(|e| JournalError::io(&path, e))
    };
    for (name, title, description, emoji, color) in FACETS {
        let facet = Facet {
            id: uuid_from(&mut rng),
            name: name.into(),
            title: title.into(),
            description: description.into(),
            color: Some(color.into()),
            emoji: Some(emoji.into()),
            muted: false,
        };
        write(format!("facets/{name}/facet.md"), facet.render(""))?;
        written.facets += 1;
    }
    for (name, kind, aka, facet, description) in ENTITIES {
        let mut facets = BTreeMap::new();
        facets.insert(facet.to_string(), description.to_string());
        let entity = Entity {
            id: uuid_from(&mut rng),
            name: name.into(),
            kind,
            aka: if aka.is_empty() {
                Vec::new()
            } else {
                vec![aka.to_string()]
            },
            facets,
            last_seen: Some(options.end.to_string()),
        };
        write(format!("entities/{}.md", entity::slug(name)), entity.render(""))?;
        written.entities += 1;
    }
    let words = vocabulary(&mut rng, 2000);
    for back in (0..options.days).rev() {
        let day = options.end.minus_days(i64::from(back));
        // Segments are spread over the waking day (06:00 to 23:30), one slot each, so that many
        // segments a day still get distinct start times (and file names).
        let slot = (DAY_SECONDS / options.segments_per_day.max(1)).max(1);
        for segment in 0..options.segments_per_day {
            let start = 6 * 3600 + segment * slot + rng.below((slot / 4).max(1) as usize) as u32;
            let (facet, templates) = TEMPLATES[rng.below(TEMPLATES.len())];
            let people: Vec<&str> = ENTITIES
                .iter()
                .filter(|e| e.3 == facet && e.1 == EntityType::Person)
                .map(|e| e.0)
                .collect();
            let project = ENTITIES
                .iter()
                .find(|e| e.3 == facet && e.1 == EntityType::Project)
                .map_or("the plan", |e| e.0);
            let count = 8 + rng.below(24);
            let mut lines = Vec::with_capacity(count);
            let mut time = start;
            for _ in 0..count {
                let template = templates[rng.below(templates.len())];
                let person = people.get(rng.below(people.len().max(1))).copied().unwrap_or("Sam");
                let text = template
                    .replace("{p}", person)
                    .replace("{proj}", project)
                    .replace("{w}", &words[rng.zipf(words.len())]);
                let speaker = SPEAKERS[rng.below(SPEAKERS.len())];
                lines.push(Line {
                    time,
                    speaker: Some(speaker.to_string()),
                    text,
                });
                // Utterances stay inside the segment's slot.
                time = (time + 5 + rng.below(40) as u32).min(start + slot.saturating_sub(1));
            }
            let head = SegmentHead {
                day: day.to_string(),
                start: day::format_time(start),
                duration_seconds: time - start,
                facets: vec![facet.to_string()],
                title: format!("{} conversation", title_of(facet)),
                source: Some("demo".into()),
            };
            // Starts are distinct within a day (one slot each), and so are the names.
            let name = day::format_time(start).replace(':', "");
            write(format!("transcripts/{day}/{name}.md"), Segment::render(&head, &lines))?;
            written.segments += 1;
        }
    }
    let vault = root.join("notes");
    written.notes = super::demo_notes::write(&vault, options.end).map_err(|e| JournalError::io(&vault, e))?;
    for i in 0..options.notes {
        let (rel, text) = generated_note(&mut rng, &words, i, options);
        let path = vault.join(&rel);
        if i % 1000 == 0 {
            let folder = path.parent().unwrap_or(&vault);
            std::fs::create_dir_all(folder).map_err(|e| JournalError::io(folder, e))?;
        }
        write(format!("notes/{rel}"), text)?;
        written.notes += 1;
    }
    Ok(written)
}

/// Tags of generated notes, drawn with a Zipf distribution so some are common and most rare.
const GENERATED_TAGS: [&str; 24] = [
    "project", "idea", "meeting", "reading", "todo", "family", "health", "travel", "finance", "recipe", "garden",
    "writing", "research", "review", "planning", "people", "home", "learning", "music", "running", "books", "design",
    "ops", "archive",
];

/// One generated note: `Generated/<thousands>/note-<i>.md`, about 2 KB, with frontmatter of the
/// kinds `base_query` reads (status, priority, dates, tags, facets), inline tags and wikilinks to
/// other generated notes.
fn generated_note(rng: &mut Rng, words: &[String], i: u32, options: &DemoOptions) -> (String, String) {
    const STATUSES: [&str; 4] = ["todo", "active", "done", "someday"];
    let title: Vec<&str> = (0..3).map(|_| words[rng.zipf(words.len())].as_str()).collect();
    let title = format!("{} {} {i}", title_case_word(title[0]), title[1..].join(" "));
    let tags: Vec<&str> = (0..1 + rng.below(3))
        .map(|_| GENERATED_TAGS[rng.zipf(GENERATED_TAGS.len())])
        .collect();
    let facet = match rng.below(10) {
        0..=1 => None,
        n => Some(FACETS[n % FACETS.len()].0),
    };
    let created = options.end.minus_days(rng.below(1000) as i64);
    let due = options.end.minus_days(rng.below(400) as i64 - 100);
    let mut text = format!(
        "---\nid: gen-{i}\ntitle: {title}\nstatus: {}\npriority: {}\ncreated: {created}\ndue: {due}\ntags: [{}]\n",
        STATUSES[rng.below(STATUSES.len())],
        1 + rng.below(5),
        tags.join(", ")
    );
    if let Some(facet) = facet {
        text.push_str(&format!("facets: [{facet}]\n"));
    }
    text.push_str(&format!("---\n# {title}\n\n"));
    for line in 0..(12 + rng.below(12)) {
        let mut sentence: Vec<String> = (0..12).map(|_| words[rng.zipf(words.len())].clone()).collect();
        if line % 5 == 1 {
            let other = rng.below(options.notes.max(1) as usize);
            sentence.push(format!("[[note-{other:06}]]"));
        }
        if line % 7 == 3 {
            sentence.push(format!("#{}", GENERATED_TAGS[rng.zipf(GENERATED_TAGS.len())]));
        }
        text.push_str(&title_case_word(&sentence.join(" ")));
        text.push_str(".\n");
    }
    (format!("Generated/{:03}/note-{i:06}.md", i / 1000), text)
}

fn title_case_word(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn title_of(facet: &str) -> &'static str {
    FACETS.iter().find(|f| f.0 == facet).map_or("A", |f| f.1)
}

/// A version-4-shaped UUID from the generator, so ids repeat with the seed.
fn uuid_from(rng: &mut Rng) -> String {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&rng.next().to_le_bytes());
    bytes[8..].copy_from_slice(&rng.next().to_le_bytes());
    uuid::Builder::from_random_bytes(bytes).into_uuid().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn generated_notes_join_the_sample_vault_and_all_read() {
        let options = DemoOptions {
            days: 1,
            segments_per_day: 1,
            seed: 5,
            end: Day::parse("2026-11-30").unwrap(),
            notes: 1_200,
        };
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &options).unwrap();
        let journal = super::super::Journal::open(dir.path()).await.unwrap();
        let set = journal.notes.set();
        assert_eq!(set.len(), super::super::demo_notes::NOTE_COUNT + 1_200);
        let generated = set.at("Generated/001/note-001100.md").unwrap();
        assert_eq!(generated.id.as_deref(), Some("gen-1100"));
        assert!(generated.frontmatter.contains_key("status") && !generated.tags.is_empty());
        assert!(!generated.links.is_empty());
        let unreadable: i64 = sqlx::query_scalar("SELECT count(*) FROM notes WHERE error IS NOT NULL")
            .fetch_one(&journal.db)
            .await
            .unwrap();
        assert_eq!(unreadable, 0);
    }

    #[test]
    fn the_same_seed_writes_the_same_journal() {
        let options = DemoOptions {
            days: 2,
            segments_per_day: 3,
            seed: 42,
            end: Day::parse("2026-11-30").unwrap(),
            notes: 0,
        };
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let written = write(a.path(), &options).unwrap();
        write(b.path(), &options).unwrap();
        assert_eq!(written.segments, 6);
        let read = |root: &Path| {
            let mut files: Vec<(String, String)> = Vec::new();
            for day in ["2026-11-29", "2026-11-30"] {
                for entry in std::fs::read_dir(root.join("transcripts").join(day)).unwrap() {
                    let path = entry.unwrap().path();
                    files.push((
                        path.file_name().unwrap().to_string_lossy().into(),
                        std::fs::read_to_string(&path).unwrap(),
                    ));
                }
            }
            files.sort();
            files
        };
        let files = read(a.path());
        assert_eq!(files, read(b.path()));
        assert_eq!(files.len(), 6);
        for (_, text) in &files {
            let segment = Segment::parse(text).unwrap();
            assert!(segment.lines.len() >= 8);
        }
    }

    #[test]
    fn many_segments_a_day_get_files_of_their_own() {
        let options = DemoOptions {
            days: 1,
            segments_per_day: 300,
            seed: 1,
            end: Day::parse("2026-11-30").unwrap(),
            notes: 0,
        };
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(write(dir.path(), &options).unwrap().segments, 300);
        let files = std::fs::read_dir(dir.path().join("transcripts/2026-11-30"))
            .unwrap()
            .count();
        assert_eq!(files, 300, "every segment is a file: none overwrote another");
    }
}
