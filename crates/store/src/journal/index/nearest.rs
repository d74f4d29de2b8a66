//! Search by meaning inside the index: each document's vector (`journal_meaning`'s model, made when
//! the document is indexed) is kept in the index's own columns, and [`Nearest`] is a query whose
//! score is a document's similarity to the question. Being a query like any other, it runs under
//! the very filters a search by words runs under (categories, facets, days, tags, folders, the
//! notes a reader may not see, frontmatter tests: `ranked::FilteredTop`), so a hidden note is never
//! a neighbour. Similarity needs no statistics of other documents, so no score hints at them.
//!
//! A vector is 256 int8 values and one scale: the values packed eight to a u64 in 32 fast columns,
//! the scale in one f64 column whose name records the model, so that a journal indexed with another
//! model has another schema and is indexed again rather than mixing vectors.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tantivy::query::{EnableScoring, Explanation, Query, Scorer, Weight};
use tantivy::schema::{FAST, SchemaBuilder};
use tantivy::{DocId, DocSet, Score, SegmentReader, TERMINATED, TantivyDocument};

use journal_meaning::Model;

use super::vectors::{Columns, Question, SegmentVectors, VectorCache};

pub use super::vectors::DIMS;
const WORDS: usize = DIMS / 8;

/// The column of the vector's scale, named after the model that made the vectors.
pub fn scale_field() -> String {
    format!("meaning {}", journal_meaning::BUILTIN)
}

fn word_field(word: usize) -> String {
    format!("meaning_{word}")
}

/// Adds the vector's columns to a schema.
pub fn add_fields(builder: &mut SchemaBuilder) {
    for word in 0..WORDS {
        builder.add_u64_field(&word_field(word), FAST);
    }
    builder.add_f64_field(&scale_field(), FAST);
}

/// A text's vector as the index keeps it: int8 values and the scale that gives them back.
#[derive(Debug, Clone, PartialEq)]
pub struct Packed {
    words: [u64; WORDS],
    scale: f64,
}

impl Packed {
    /// `vector`'s packed form; None for a vector of zeros (a text without a token has no direction).
    pub fn of(vector: &[f32]) -> Option<Packed> {
        let largest = vector.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        if largest == 0.0 || vector.len() != DIMS {
            return None;
        }
        let scale = largest / 127.0;
        let mut words = [0u64; WORDS];
        for (i, value) in vector.iter().enumerate() {
            let byte = (value / scale).round().clamp(-127.0, 127.0) as i8 as u8;
            words[i / 8] |= u64::from(byte) << ((i % 8) * 8);
        }
        Some(Packed {
            words,
            scale: f64::from(scale),
        })
    }

    /// Adds the vector to a document (through the index's fields, in the order `add_fields` made them).
    pub fn add_to(&self, document: &mut TantivyDocument, fields: &VectorFields) {
        for (field, word) in fields.words.iter().zip(self.words) {
            document.add_u64(*field, word);
        }
        document.add_f64(fields.scale, self.scale);
    }
}

/// The vector's fields in a schema.
#[derive(Debug, Clone, Copy)]
pub struct VectorFields {
    words: [tantivy::schema::Field; WORDS],
    scale: tantivy::schema::Field,
}

impl VectorFields {
    /// The vector's columns in one segment: the 32 words of values and the scale.
    pub fn columns(reader: &SegmentReader) -> tantivy::Result<Columns> {
        let fast = reader.fast_fields();
        let mut words = Vec::with_capacity(WORDS);
        for word in 0..WORDS {
            words.push(fast.u64(&word_field(word))?);
        }
        Ok((words, fast.f64(&scale_field())?))
    }

    pub fn of(schema: &tantivy::schema::Schema) -> tantivy::Result<VectorFields> {
        let mut words = [tantivy::schema::Field::from_field_id(0); WORDS];
        for (word, field) in words.iter_mut().enumerate() {
            *field = schema.get_field(&word_field(word))?;
        }
        Ok(VectorFields {
            words,
            scale: schema.get_field(&scale_field())?,
        })
    }
}

/// The vector of a text, packed; None when it has no word the model knows (or the model is
/// missing, which `journal_meaning` reports when asked).
pub fn embed(text: &str) -> Option<Packed> {
    let model = Model::builtin().ok()?;
    Packed::of(&model.embed(text))
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
        let mut near = vectors.rough(&self.question);
        if near.len() > candidates {
            self.narrowed.store(true, Ordering::Relaxed);
            near.select_nth_unstable_by(candidates, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            near.truncate(candidates);
        }
        let mut docs: Vec<(DocId, Score)> = near
            .into_iter()
            .map(|(_, doc)| (doc, (1.0 + vectors.similarity(doc, &self.question)) * boost))
            .collect();
        docs.sort_unstable_by_key(|(doc, _)| *doc);
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
    use super::*;

    #[test]
    fn a_packed_vector_keeps_its_direction() {
        let mut vector: Vec<f32> = (0..DIMS).map(|i| ((i as f32) * 0.37).sin()).collect();
        let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        vector.iter_mut().for_each(|v| *v /= norm);
        let packed = Packed::of(&vector).unwrap();
        let back: Vec<f32> = (0..DIMS)
            .map(|i| {
                let byte = (packed.words[i / 8] >> ((i % 8) * 8)) as u8 as i8;
                f32::from(byte) * packed.scale as f32
            })
            .collect();
        let cosine: f32 = vector.iter().zip(&back).map(|(a, b)| a * b).sum();
        assert!(cosine > 0.999, "{cosine}");
        assert_eq!(Packed::of(&[0.0; DIMS]), None, "no direction, no vector");
        assert_eq!(Packed::of(&[1.0; 3]), None, "another model's size is refused");
    }
}
