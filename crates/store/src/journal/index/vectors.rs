//! The vectors of each segment of the index in one block of memory, so that a search by meaning
//! reads them as a flat array instead of 33 columns a document.
//!
//! The index keeps a document's vector in its own fast columns (`nearest`): durable, rebuilt with
//! the index, never mixed across models. Read there, a vector costs 33 column lookups (about half a
//! microsecond), and a search by meaning that weighs every document of a 10,000-segment journal
//! spent 4 ms of CPU on it. A segment never changes once written, so its vectors are read out once,
//! into int8 values laid end to end and their scales; `Nearest` picks the documents worth weighing
//! in full by their first `ROUGH_DIMS` values. A segment that leaves the index (merged, or its
//! documents deleted) leaves the cache at the next reload. 260 bytes a document: 2.6 MB for 10,000
//! segments, 260 MB for a million.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tantivy::columnar::Column;
use tantivy::index::SegmentId;
use tantivy::{DocId, SegmentReader};

/// How many numbers a vector holds (the built-in model's).
pub const DIMS: usize = 256;

/// A segment's vector columns as the index keeps them: the values packed eight to a u64 in
/// `DIMS / 8` columns, and the scale.
pub type Columns = (Vec<Column<u64>>, Column<f64>);

/// A segment's vectors, by document id.
pub struct SegmentVectors {
    /// `DIMS` int8 values a document, end to end (zeros for a document without a vector).
    values: Vec<i8>,
    /// The scale that gives each document's values back; 0 for a document without a vector.
    scales: Vec<f32>,
}

/// How many of a vector's first values pick the candidates a search by meaning weighs in full.
/// Measured on the 10,000-segment demo journal's 200 questions (docs/performance.md): the first
/// 128 values find 99.8% of the exact top ten among 200 candidates, and 98.3% of the top hundred
/// among 400; the signs of all 256 (a 256-bit code) found 56% and 46%, the first 64 values 93% and 87%.
pub const ROUGH_DIMS: usize = 128;

impl SegmentVectors {
    /// Reads the vectors of a segment's `docs` documents from their columns.
    fn read(docs: usize, (words, scale): Columns) -> SegmentVectors {
        let mut vectors = SegmentVectors {
            values: vec![0; docs * DIMS],
            scales: vec![0.0; docs],
        };
        for doc in 0..docs {
            let Some(scale) = scale.first(doc as DocId) else {
                continue;
            };
            vectors.scales[doc] = scale as f32;
            let values = &mut vectors.values[doc * DIMS..(doc + 1) * DIMS];
            for (word_index, column) in words.iter().enumerate() {
                let word = column.first(doc as DocId).unwrap_or(0);
                for (i, byte) in word.to_le_bytes().into_iter().enumerate() {
                    values[word_index * 8 + i] = byte as i8;
                }
            }
        }
        vectors
    }

    /// How many documents (with a vector or not) the segment holds.
    pub fn docs(&self) -> usize {
        self.scales.len()
    }

    /// Whether `doc` has a vector.
    pub fn has(&self, doc: DocId) -> bool {
        self.scales.get(doc as usize).is_some_and(|scale| *scale > 0.0)
    }

    /// The cosine of `doc`'s vector and a question's (`Question`).
    pub fn similarity(&self, doc: DocId, question: &Question) -> f32 {
        let doc = doc as usize;
        let values = &self.values[doc * DIMS..(doc + 1) * DIMS];
        dot(head::<DIMS>(values), &question.values) as f32 * self.scales[doc] * question.scale
    }

    /// Adds `doc`'s vector (its values times its scale; nothing without one) to `sum`.
    pub fn add_to(&self, doc: DocId, sum: &mut [f32]) {
        let doc = doc as usize;
        let scale = self.scales[doc];
        if scale > 0.0 {
            for (sum, value) in sum.iter_mut().zip(&self.values[doc * DIMS..(doc + 1) * DIMS]) {
                *sum += f32::from(*value) * scale;
            }
        }
    }

    /// The documents with a vector, each with the dot product of its first `ROUGH_DIMS` values and
    /// the question's (scaled, not the question's scale): the model's values come by PCA, largest
    /// variance first, so the first values say most of where a vector points. One pass over the
    /// values laid end to end.
    pub fn rough(&self, question: &Question) -> Vec<(f32, DocId)> {
        let question: &[i8; ROUGH_DIMS] = head(&question.values);
        let mut near = Vec::with_capacity(self.scales.len());
        for (doc, (values, scale)) in self.values.chunks_exact(DIMS).zip(&self.scales).enumerate() {
            if *scale > 0.0 {
                near.push((dot(head::<ROUGH_DIMS>(values), question) as f32 * scale, doc as DocId));
            }
        }
        near
    }

    fn bytes(&self) -> usize {
        self.values.len() + self.scales.len() * 4
    }
}

/// A question's vector as the documents' are kept: int8 values and their scale.
pub struct Question {
    values: [i8; DIMS],
    scale: f32,
}

impl Question {
    /// `vector` (of length one, `DIMS` values) made int8 like a document's; the rounding moves a
    /// cosine by less than a thousandth.
    pub fn new(vector: &[f32]) -> Question {
        let largest = vector.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let scale = if largest > 0.0 { largest / 127.0 } else { 1.0 };
        let mut values = [0i8; DIMS];
        for (value, v) in values.iter_mut().zip(vector) {
            *value = (v / scale).round().clamp(-127.0, 127.0) as i8;
        }
        Question { values, scale }
    }
}

/// The dot product of two int8 vectors of `N` values. Of fixed length, so that the compiler makes
/// it vector instructions (it left a loop over slices scalar: four times slower).
#[inline(always)]
fn dot<const N: usize>(a: &[i8; N], b: &[i8; N]) -> i32 {
    let mut sum = 0i32;
    for i in 0..N {
        sum += i32::from(a[i]) * i32::from(b[i]);
    }
    sum
}

/// The first `N` values of a slice that holds at least that many (every vector holds `DIMS`).
fn head<const N: usize>(values: &[i8]) -> &[i8; N] {
    values[..N].try_into().expect("a vector holds DIMS values")
}

/// The segments' vectors an index has read, by segment.
#[derive(Default)]
pub struct VectorCache {
    segments: Mutex<HashMap<SegmentId, Arc<SegmentVectors>>>,
}

impl VectorCache {
    /// The vectors of `reader`'s segment, read from its columns (`columns`) the first time.
    pub fn segment(
        &self,
        reader: &SegmentReader,
        columns: impl FnOnce(&SegmentReader) -> tantivy::Result<Columns>,
    ) -> tantivy::Result<Arc<SegmentVectors>> {
        let id = reader.segment_id();
        if let Some(found) = self.lock().get(&id) {
            return Ok(Arc::clone(found));
        }
        // Read without the lock: two searches that meet a new segment at once both read it, and
        // the second keeps the first's.
        let read = Arc::new(SegmentVectors::read(reader.max_doc() as usize, columns(reader)?));
        Ok(Arc::clone(self.lock().entry(id).or_insert(read)))
    }

    /// Forgets every segment but `kept` (those of the reader's current searcher).
    pub fn keep_only(&self, kept: &[SegmentId]) {
        self.lock().retain(|id, _| kept.contains(id));
    }

    /// The memory the cached vectors take, in bytes.
    pub fn bytes(&self) -> usize {
        self.lock().values().map(|segment| segment.bytes()).sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SegmentId, Arc<SegmentVectors>>> {
        // A panic while the map was held leaves it whole (each step is one insert or retain).
        self.segments.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_int8_question_keeps_the_cosine() {
        let unit = |seed: f32| {
            let v: Vec<f32> = (0..DIMS).map(|i| ((i as f32) * seed).sin()).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / norm).collect::<Vec<f32>>()
        };
        let (a, b) = (unit(0.37), unit(0.11));
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let doc = Question::new(&a);
        let vectors = SegmentVectors {
            values: doc.values.to_vec(),
            scales: vec![doc.scale],
        };
        let near = vectors.similarity(0, &Question::new(&b));
        assert!((near - exact).abs() < 0.002, "{near} against {exact}");
        let rough: f32 = a[..ROUGH_DIMS].iter().zip(&b[..ROUGH_DIMS]).map(|(x, y)| x * y).sum();
        let scale = Question::new(&b).scale;
        let [(found, 0)] = vectors.rough(&Question::new(&b))[..] else {
            panic!("one document")
        };
        assert!((found * scale - rough).abs() < 0.002, "{found} against {rough}");
        assert!((vectors.similarity(0, &Question::new(&a)) - 1.0).abs() < 0.002);
    }
}
