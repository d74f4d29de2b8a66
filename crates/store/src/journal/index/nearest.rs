//! Search by meaning inside the index: each document's vector (`journal_meaning`'s model, made when
//! the document is indexed) is kept in the index's own columns, and [`Nearest`] is a query whose
//! score is a document's similarity to the question. Being a query like any other, it runs under
//! the very filters a search by words runs under (categories, facets, days, tags, folders, the
//! notes a reader may not see, frontmatter tests: `ranked::FilteredTop`), so a hidden note is never
//! a neighbour. Similarity needs no statistics of other documents, so no score hints at them.
//!
//! A document's vectors (one for a short text; for a long one, the whole and each section, see
//! `sections`) are kept in one bytes column whose name records the model, so that a journal
//! indexed with another model has another schema and is indexed again rather than mixing vectors.
//! Each vector is a record of `RECORD` bytes: its scale (f32), where its section starts in the
//! text (u32), and 256 int8 values. (Columns of numbers were tried first: tantivy sorts the values
//! a document holds in one column, so several vectors cannot share numeric columns.)

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tantivy::columnar::BytesColumn;
use tantivy::query::{EnableScoring, Explanation, Query, Scorer, Weight};
use tantivy::schema::{FAST, Field, SchemaBuilder};
use tantivy::{DocId, DocSet, Score, SegmentReader, TERMINATED, TantivyDocument};

use journal_meaning::Model;

use super::vectors::{Question, RECORD, SegmentVectors, VectorCache};

pub use super::vectors::DIMS;

/// A text longer than this many bytes is embedded by section as well as whole: one direction for
/// a long note blurs what each of its parts is about.
pub const SECTION_BYTES: usize = 4000;

/// The most vectors one document holds (the whole and its sections); the sections past it are
/// part of the last one.
pub const MAX_VECTORS: usize = 32;

/// The column of the vectors, named after the model that made them.
pub fn field_name() -> String {
    format!("meaning {}", journal_meaning::BUILTIN)
}

/// Adds the vectors' column to a schema.
pub fn add_fields(builder: &mut SchemaBuilder) {
    builder.add_bytes_field(&field_name(), FAST);
}

/// A document's vectors as the index keeps them: records of int8 values, scale and section start.
#[derive(Debug, Clone, PartialEq)]
pub struct Packed(Vec<u8>);

impl Packed {
    /// The records of `vectors` (each with where its section starts); None when none has a
    /// direction (a text without a token the model knows).
    pub fn of(vectors: &[(u32, Vec<f32>)]) -> Option<Packed> {
        let mut bytes = Vec::with_capacity(vectors.len() * RECORD);
        for (start, vector) in vectors {
            let largest = vector.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            if largest == 0.0 || vector.len() != DIMS {
                continue;
            }
            let scale = largest / 127.0;
            bytes.extend_from_slice(&scale.to_le_bytes());
            bytes.extend_from_slice(&start.to_le_bytes());
            bytes.extend(
                vector
                    .iter()
                    .map(|value| (value / scale).round().clamp(-127.0, 127.0) as i8 as u8),
            );
        }
        (!bytes.is_empty()).then_some(Packed(bytes))
    }

    /// Adds the vectors to a document.
    pub fn add_to(&self, document: &mut TantivyDocument, fields: &VectorFields) {
        document.add_bytes(fields.field, &self.0);
    }
}

/// The vectors' field in a schema.
#[derive(Debug, Clone, Copy)]
pub struct VectorFields {
    field: Field,
}

impl VectorFields {
    /// The vectors' column in one segment (None in a segment where no document has one).
    pub fn columns(reader: &SegmentReader) -> tantivy::Result<Option<BytesColumn>> {
        reader.fast_fields().bytes(&field_name())
    }

    pub fn of(schema: &tantivy::schema::Schema) -> tantivy::Result<VectorFields> {
        Ok(VectorFields {
            field: schema.get_field(&field_name())?,
        })
    }
}

/// The vectors of a text: of the whole, and for a text longer than `SECTION_BYTES` of each
/// section too (`sections`), each embedded with the title; None when no part has a word the
/// model knows.
pub fn embed(model: &Model, title: &str, body: &str) -> Option<Packed> {
    let mut vectors = vec![(0, model.embed(&format!("{title}\n{body}")))];
    if body.len() > SECTION_BYTES {
        for (start, section) in sections(body).into_iter().take(MAX_VECTORS - 1) {
            vectors.push((start as u32, model.embed(&format!("{title}\n{section}"))));
        }
    }
    Packed::of(&vectors)
}

/// The sections of a long text, each with where it starts: split before each markdown heading,
/// then a part longer than half of `SECTION_BYTES` at blank lines into pieces of about that size;
/// at most `MAX_VECTORS - 1` of them, the last holding the rest.
pub fn sections(body: &str) -> Vec<(usize, &str)> {
    let target = SECTION_BYTES / 2;
    // Where each part starts: the text's start and each line that opens with `#`.
    let mut starts = vec![0];
    let mut at = 0;
    for line in body.split_inclusive('\n') {
        if at > 0 && line.starts_with('#') {
            starts.push(at);
        }
        at += line.len();
    }
    starts.push(body.len());
    let mut pieces: Vec<(usize, usize)> = Vec::new();
    for pair in starts.windows(2) {
        let (mut from, end) = (pair[0], pair[1]);
        // A long part is cut at the last blank line before `target` bytes (or, without one, at
        // the last line break, or at a character).
        while end - from > target {
            let mut cut = from + target;
            while !body.is_char_boundary(cut) {
                cut -= 1;
            }
            let window = &body[from..cut];
            let at = window
                .rfind("\n\n")
                .map(|i| i + 2)
                .or_else(|| window.rfind('\n').map(|i| i + 1))
                .filter(|i| *i > 0)
                .unwrap_or(window.len());
            pieces.push((from, from + at));
            from += at;
        }
        if end > from {
            pieces.push((from, end));
        }
    }
    let most = MAX_VECTORS - 1;
    if pieces.len() > most {
        let end = pieces[pieces.len() - 1].1;
        pieces.truncate(most);
        pieces[most - 1].1 = end;
    }
    pieces
        .into_iter()
        .map(|(from, end)| (from, &body[from..end]))
        .filter(|(_, text)| !text.trim().is_empty())
        .collect()
}

/// The documents nearest in meaning to a question, scored `1 + cosine` (never negative, as the
/// collector needs); documents without a vector do not match.
///
/// With a number of candidates, each segment weighs in full only that many documents, those
/// nearest the question by their first values (`vectors::ROUGH_DIMS`): the rest are far enough
/// that they would not reach the top. Whether a segment held more than that is kept (`narrowed`), so that a
/// search whose filters left too few of them can ask again with every document.
#[derive(Clone)]
pub struct Nearest {
    question: Arc<Question>,
    vectors: Arc<VectorCache>,
    candidates: Option<usize>,
    narrowed: Arc<AtomicBool>,
}

impl std::fmt::Debug for Nearest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nearest").field("candidates", &self.candidates).finish()
    }
}

impl Nearest {
    /// The query for `question`'s vector (of the model's dimensions, length one), weighing at most
    /// `candidates` documents a segment exactly (None: every one).
    pub fn new(question: Vec<f32>, vectors: Arc<VectorCache>, candidates: Option<usize>) -> Nearest {
        Nearest {
            question: Arc::new(Question::new(&question)),
            vectors,
            candidates,
            narrowed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Whether some segment had more documents than the candidates this query weighed.
    pub fn narrowed(&self) -> bool {
        self.narrowed.load(Ordering::Relaxed)
    }
}

impl Query for Nearest {
    fn weight(&self, _scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(self.clone()))
    }
}

impl Weight for Nearest {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let vectors = self.vectors.segment(reader, VectorFields::columns)?;
        let Some(candidates) = self.candidates else {
            let mut every = Every {
                vectors,
                question: Arc::clone(&self.question),
                boost,
                doc: 0,
            };
            every.settle();
            return Ok(Box::new(every));
        };
        let (near, more) = vectors.rough(&self.question, candidates);
        if more {
            self.narrowed.store(true, Ordering::Relaxed);
        }
        // In document order, which is what the scorer gives and the order of memory.
        let mut near: Vec<DocId> = near.into_iter().map(|(_, doc)| doc).collect();
        near.sort_unstable();
        let similarities = vectors.similarities(&near, &self.question);
        let docs: Vec<(DocId, Score)> = near
            .into_iter()
            .zip(similarities)
            .map(|(doc, similarity)| (doc, (1.0 + similarity) * boost))
            .collect();
        Ok(Box::new(Listed { docs, at: 0 }))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let vectors = self.vectors.segment(reader, VectorFields::columns)?;
        if !vectors.has(doc) {
            return Err(tantivy::TantivyError::InvalidArgument(format!(
                "document {doc} has no vector"
            )));
        }
        let score = 1.0 + vectors.similarity(doc, &self.question);
        Ok(Explanation::new("similarity in meaning, plus one", score))
    }
}

/// The candidates of a segment, scored, in document order.
struct Listed {
    docs: Vec<(DocId, Score)>,
    at: usize,
}

impl DocSet for Listed {
    fn advance(&mut self) -> DocId {
        self.at = (self.at + 1).min(self.docs.len());
        self.doc()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        let rest = &self.docs[self.at..];
        self.at += rest.partition_point(|(doc, _)| *doc < target);
        self.doc()
    }

    fn doc(&self) -> DocId {
        self.docs.get(self.at).map_or(TERMINATED, |(doc, _)| *doc)
    }

    fn size_hint(&self) -> u32 {
        self.docs.len() as u32
    }
}

impl Scorer for Listed {
    fn score(&mut self) -> Score {
        self.docs.get(self.at).map_or(0.0, |(_, score)| *score)
    }
}

/// Every document of a segment that has a vector, each weighed when asked: when filters lead, only
/// the documents they pass are weighed.
struct Every {
    vectors: Arc<SegmentVectors>,
    question: Arc<Question>,
    boost: Score,
    doc: DocId,
}

impl Every {
    /// Moves to the first document from `doc` on that has a vector.
    fn settle(&mut self) {
        let docs = self.vectors.docs() as DocId;
        while self.doc < docs && !self.vectors.has(self.doc) {
            self.doc += 1;
        }
        if self.doc >= docs {
            self.doc = TERMINATED;
        }
    }
}

impl DocSet for Every {
    fn advance(&mut self) -> DocId {
        if self.doc != TERMINATED {
            self.doc += 1;
            self.settle();
        }
        self.doc
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc != TERMINATED && self.doc < target {
            self.doc = target;
            self.settle();
        }
        self.doc
    }

    fn doc(&self) -> DocId {
        self.doc
    }

    fn size_hint(&self) -> u32 {
        self.vectors.docs() as u32
    }
}

impl Scorer for Every {
    fn score(&mut self) -> Score {
        (1.0 + self.vectors.similarity(self.doc, &self.question)) * self.boost
    }
}

#[cfg(test)]
mod tests {
    use super::super::vectors::records;
    use super::*;

    #[test]
    fn packed_vectors_keep_their_direction_and_section() {
        let mut vector: Vec<f32> = (0..DIMS).map(|i| ((i as f32) * 0.37).sin()).collect();
        let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        vector.iter_mut().for_each(|v| *v /= norm);
        let packed = Packed::of(&[(0, vector.clone()), (7, vec![0.0; DIMS]), (4096, vector.clone())]).unwrap();
        let records: Vec<(f32, u32, &[u8])> = records(&packed.0).collect();
        assert_eq!(records.len(), 2, "a vector without direction is left out");
        assert_eq!(records[1].1, 4096);
        let back: Vec<f32> = records[0]
            .2
            .iter()
            .map(|b| f32::from(*b as i8) * records[0].0)
            .collect();
        let cosine: f32 = vector.iter().zip(&back).map(|(a, b)| a * b).sum();
        assert!(cosine > 0.999, "{cosine}");
        assert_eq!(Packed::of(&[(0, vec![0.0; DIMS])]), None, "no direction, no vector");
        assert_eq!(
            Packed::of(&[(0, vec![1.0; 3])]),
            None,
            "another model's size is refused"
        );
    }

    #[test]
    fn a_long_text_is_cut_at_headings_then_blank_lines() {
        let short = "# Plan\n\nA few words.";
        assert_eq!(sections(short), [(0, short)]);
        let part = |word: &str| format!("{}\n\n", format!("{word} ").repeat(150));
        let body = format!("# One\n{}{}# Two\n{}", part("alpha"), part("beta"), part("gamma"));
        let cut = sections(&body);
        // Each piece starts where it says, and together they are the text.
        assert_eq!(cut.iter().map(|(_, text)| *text).collect::<String>(), body);
        for (start, text) in &cut {
            assert!(body[*start..].starts_with(text));
            assert!(text.len() <= SECTION_BYTES / 2, "{}", text.len());
        }
        assert!(cut.iter().any(|(_, text)| text.starts_with("# Two")), "{cut:?}");
        assert!(
            cut.iter()
                .all(|(_, text)| !text.contains("beta") || !text.contains("gamma"))
        );
        // No line breaks at all: cut at a character, never inside one.
        let dense = "é".repeat(SECTION_BYTES);
        assert!(sections(&dense).iter().all(|(_, text)| !text.is_empty()));
        let many = "# h\nword\n".repeat(100);
        assert_eq!(sections(&many).len(), MAX_VECTORS - 1);
        assert!(sections(&many).last().unwrap().1.len() > 20, "the last holds the rest");
    }

    #[test]
    fn a_long_text_has_a_vector_for_the_whole_and_each_section() {
        let body = format!(
            "# Garden\n{}\n# Car\n{}",
            "tomatoes basil lettuce slugs. ".repeat(80),
            "brake pads clutch mechanic. ".repeat(80)
        );
        assert!(body.len() > SECTION_BYTES);
        let packed = embed(Model::builtin().unwrap(), "Weekend", &body).unwrap();
        let starts: Vec<u32> = records(&packed.0).map(|(_, start, _)| start).collect();
        assert_eq!(starts[0], 0, "the whole first");
        assert!(starts.len() >= 3, "{starts:?}");
        assert!(starts.contains(&(body.find("# Car").unwrap() as u32)), "{starts:?}");
        assert_eq!(
            records(&embed(Model::builtin().unwrap(), "Short", "a few words").unwrap().0).count(),
            1
        );
    }
}
