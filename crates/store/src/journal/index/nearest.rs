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

use tantivy::columnar::Column;
use tantivy::query::{EnableScoring, Explanation, Query, Scorer, Weight};
use tantivy::schema::{FAST, SchemaBuilder};
use tantivy::{DocId, DocSet, Score, SegmentReader, TERMINATED, TantivyDocument};

use journal_meaning::Model;

/// How many numbers a vector holds.
pub const DIMS: usize = 256;
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
#[derive(Debug, Clone)]
pub struct Nearest {
    question: std::sync::Arc<[f32]>,
}

impl Nearest {
    /// The query for `question`'s vector (of the model's dimensions, length one).
    pub fn new(question: Vec<f32>) -> Nearest {
        Nearest {
            question: question.into(),
        }
    }
}

impl Query for Nearest {
    fn weight(&self, _scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(self.clone()))
    }
}

impl Weight for Nearest {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let fast = reader.fast_fields();
        let mut words = Vec::with_capacity(WORDS);
        for word in 0..WORDS {
            words.push(fast.u64(&word_field(word))?);
        }
        let mut scorer = NearestScorer {
            question: std::sync::Arc::clone(&self.question),
            words,
            scale: fast.f64(&scale_field())?,
            boost,
            doc: 0,
            max_doc: reader.max_doc(),
            score: 0.0,
        };
        scorer.settle();
        Ok(Box::new(scorer))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let mut scorer = self.scorer(reader, 1.0)?;
        if scorer.seek(doc) != doc {
            return Err(tantivy::TantivyError::InvalidArgument(format!(
                "document {doc} has no vector"
            )));
        }
        Ok(Explanation::new("similarity in meaning, plus one", scorer.score()))
    }
}

struct NearestScorer {
    question: std::sync::Arc<[f32]>,
    words: Vec<Column<u64>>,
    scale: Column<f64>,
    boost: Score,
    doc: DocId,
    max_doc: DocId,
    score: Score,
}

impl NearestScorer {
    /// Moves to the first document from `doc` on that has a vector, and scores it.
    fn settle(&mut self) {
        while self.doc < self.max_doc {
            if let Some(scale) = self.scale.first(self.doc) {
                let mut dot = 0.0f32;
                for (word_index, column) in self.words.iter().enumerate() {
                    let word = column.first(self.doc).unwrap_or(0);
                    let question = &self.question[word_index * 8..word_index * 8 + 8];
                    for (byte, q) in word.to_le_bytes().iter().zip(question) {
                        dot += f32::from(*byte as i8) * q;
                    }
                }
                self.score = (1.0 + dot * scale as f32) * self.boost;
                return;
            }
            self.doc += 1;
        }
        self.doc = TERMINATED;
    }
}

impl DocSet for NearestScorer {
    fn advance(&mut self) -> DocId {
        if self.doc != TERMINATED {
            self.doc += 1;
            self.settle();
        }
        self.doc
    }

    fn doc(&self) -> DocId {
        self.doc
    }

    fn size_hint(&self) -> u32 {
        self.max_doc
    }
}

impl Scorer for NearestScorer {
    fn score(&mut self) -> Score {
        self.score
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
