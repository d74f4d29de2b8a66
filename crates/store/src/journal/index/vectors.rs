//! The vectors of each segment of the index in one block of memory, so that a search by meaning
//! reads them as a flat array instead of a column lookup a document.
//!
//! The index keeps a document's vectors in its own column (`nearest`): durable, rebuilt with the
//! index, never mixed across models. Read there, each costs a lookup in the column's dictionary; a
//! search by meaning that read every document's vector from the index's columns (then 33 a
//! document) spent 4 ms of CPU on a 10,000-segment journal. A segment never changes once written, so its vectors are read out once,
//! into int8 values laid end to end and their scales; `Nearest` picks the documents worth weighing
//! in full by their first `ROUGH_DIMS` values (a document with several vectors by the nearest of
//! them). A segment that leaves the index (merged, or its documents deleted) leaves the cache at
//! the next reload. 268 bytes a vector: 2.7 MB for 10,000 segments, 268 MB for a million.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tantivy::columnar::BytesColumn;
use tantivy::index::SegmentId;
use tantivy::{DocId, SegmentReader};

/// How many numbers a vector holds (the built-in model's).
pub const DIMS: usize = 256;

/// The bytes of one vector's record as the index keeps it (`nearest::Packed`): its scale (f32),
/// where its section starts (u32), its values.
pub const RECORD: usize = 8 + DIMS;

/// The records of a document's vectors, each as (scale, section start, values).
pub fn records(bytes: &[u8]) -> impl Iterator<Item = (f32, u32, &[u8])> {
    bytes.chunks_exact(RECORD).map(|record| {
        let scale = f32::from_le_bytes(record[0..4].try_into().expect("four bytes"));
        let start = u32::from_le_bytes(record[4..8].try_into().expect("four bytes"));
        (scale, start, &record[8..])
    })
}

/// A segment's vectors column as the index keeps it (`nearest::Packed`); None where no document
/// of the segment has a vector.
pub type Columns = Option<BytesColumn>;

/// A segment's vectors, by document: a document has none, one, or (a long text) its whole and each
/// of its sections.
pub struct SegmentVectors {
    /// `DIMS` int8 values a vector, end to end.
    values: Vec<i8>,
    /// The scale that gives each vector's values back.
    scales: Vec<f32>,
    /// Where each vector's section starts in its document's text.
    starts: Vec<u32>,
    /// The first vector of each document, and one past the last: document `d` has the vectors
    /// `first[d]..first[d + 1]`.
    first: Vec<u32>,
}

/// How many of a vector's first values pick the candidates a search by meaning weighs in full.
/// Measured on the 10,000-segment demo journal's 200 questions (docs/performance.md): the first
/// 128 values find 99.8% of the exact top ten among 200 candidates, and 98.3% of the top hundred
/// among 400; the signs of all 256 (a 256-bit code) found 56% and 46%, the first 64 values 93% and 87%.
pub const ROUGH_DIMS: usize = 128;

impl SegmentVectors {
    /// Reads the vectors of a segment's `docs` documents from their column.
    fn read(docs: usize, column: Columns) -> tantivy::Result<SegmentVectors> {
        let mut vectors = SegmentVectors {
            values: Vec::new(),
            scales: Vec::new(),
            starts: Vec::new(),
            first: Vec::with_capacity(docs + 1),
        };
        let mut bytes = Vec::new();
        for doc in 0..docs {
            vectors.first.push(vectors.scales.len() as u32);
            let Some(column) = &column else { continue };
            let Some(ord) = column.term_ords(doc as DocId).next() else {
                continue;
            };
            bytes.clear();
            column.ord_to_bytes(ord, &mut bytes)?;
            for (scale, start, values) in records(&bytes) {
                if scale > 0.0 {
                    vectors.scales.push(scale);
                    vectors.starts.push(start);
                    vectors.values.extend(values.iter().map(|v| *v as i8));
                }
            }
        }
        vectors.first.push(vectors.scales.len() as u32);
        Ok(vectors)
    }

    /// How many documents (with vectors or not) the segment holds.
    pub fn docs(&self) -> usize {
        self.first.len() - 1
    }

    /// The vectors of `doc`, as indexes.
    fn of(&self, doc: DocId) -> std::ops::Range<usize> {
        let doc = doc as usize;
        match (self.first.get(doc), self.first.get(doc + 1)) {
            (Some(from), Some(to)) => *from as usize..*to as usize,
            _ => 0..0,
        }
    }

    /// Whether `doc` has a vector.
    pub fn has(&self, doc: DocId) -> bool {
        !self.of(doc).is_empty()
    }

    fn values(&self, vector: usize) -> &[i8] {
        &self.values[vector * DIMS..(vector + 1) * DIMS]
    }

    /// The cosine of a question's vector (`Question`) and the nearest of `doc`'s, with where that
    /// one's section starts.
    pub fn nearest(&self, doc: DocId, question: &Question) -> (f32, u32) {
        let mut best = (f32::MIN, 0);
        for vector in self.of(doc) {
            let cosine =
                dot(head::<DIMS>(self.values(vector)), &question.values) as f32 * self.scales[vector] * question.scale;
            if cosine > best.0 {
                best = (cosine, self.starts[vector]);
            }
        }
        best
    }

    /// The cosine of a question's vector and the nearest of `doc`'s.
    pub fn similarity(&self, doc: DocId, question: &Question) -> f32 {
        self.nearest(doc, question).0
    }

    /// Adds `doc`'s vectors (each its values times its scale) to `sum`.
    pub fn add_to(&self, doc: DocId, sum: &mut [f32]) {
        for vector in self.of(doc) {
            let scale = self.scales[vector];
            for (sum, value) in sum.iter_mut().zip(self.values(vector)) {
                *sum += f32::from(*value) * scale;
            }
        }
    }

    /// The documents with a vector, each with the largest dot product of its vectors' first
    /// `ROUGH_DIMS` values and the question's (scaled, not by the question's scale): the model's
    /// values come by PCA, largest variance first, so the first values say most of where a vector
    /// points. One pass over the values laid end to end.
    pub fn rough(&self, question: &Question) -> Vec<(f32, DocId)> {
        let question: &[i8; ROUGH_DIMS] = head(&question.values);
        let mut near = Vec::with_capacity(self.docs());
        for (doc, range) in self.first.windows(2).enumerate() {
            let mut best = f32::MIN;
            for vector in range[0] as usize..range[1] as usize {
                let values = &self.values[vector * DIMS..vector * DIMS + ROUGH_DIMS];
                best = best.max(dot(head::<ROUGH_DIMS>(values), question) as f32 * self.scales[vector]);
            }
            if range[0] < range[1] {
                near.push((best, doc as DocId));
            }
        }
        near
    }

    fn bytes(&self) -> usize {
        self.values.len() + self.scales.len() * 8 + self.first.len() * 4
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
        let read = Arc::new(SegmentVectors::read(reader.max_doc() as usize, columns(reader)?)?);
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
        let (a, b) = (unit(0.37), unit(0.3705));
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let doc = Question::new(&a);
        // A second vector, far from both, never wins the document's similarity.
        let far = Question::new(&a.iter().map(|x| -x).collect::<Vec<f32>>());
        let vectors = SegmentVectors {
            values: [doc.values, far.values].concat(),
            scales: vec![doc.scale, far.scale],
            starts: vec![0, 40],
            first: vec![0, 2],
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
        let minus_a: Vec<f32> = a.iter().map(|x| -x).collect();
        assert_eq!(
            vectors.nearest(0, &Question::new(&minus_a)).1,
            40,
            "the second section is nearer"
        );
        assert!(!vectors.has(1));
    }
}
