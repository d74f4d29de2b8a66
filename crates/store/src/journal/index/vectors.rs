//! The vectors of each segment of the index in one block of memory, so that a search by meaning
//! reads them as a flat array instead of a column lookup a document.
//!
//! The index keeps a document's vectors in its own column (`nearest`): durable, rebuilt with the
//! index, never mixed across models. Read there, each costs a lookup in the column's dictionary; a
//! search by meaning that read every document's vector from the index's columns (then 33 a
//! document) spent 4 ms of CPU on a 10,000-segment journal. A segment never changes once written,
//! so its vectors are read out once, into int8 values and their scales; `Nearest` picks the
//! documents worth weighing in full by their first `ROUGH_DIMS` values (a document with several
//! vectors by the nearest of them), which lie end to end apart from the rest, so that the pass over
//! every document reads them in order, with AVX2 where the processor has it (chosen at run time;
//! with the way the nearest are kept, 4.4 ms a question became 1.3 ms on a segment of 160,000
//! documents). A segment that leaves the index (merged, or its documents deleted) leaves the cache
//! at the next reload. 268 bytes a vector: 2.7 MB for 10,000 segments, 268 MB for a million.
//!
//! Every document is weighed by its first values: an index that reads fewer (k-means clusters, a
//! graph of near neighbours) was measured and lost too many of the nearest (docs/performance.md).

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
    /// The first `ROUGH_DIMS` int8 values of each vector, end to end: the pass that picks the
    /// candidates reads only these, in order (laid out whole, each vector's first half was half of
    /// the memory the pass went through).
    heads: Vec<i8>,
    /// The other `DIMS - ROUGH_DIMS` values of each vector, end to end.
    tails: Vec<i8>,
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

/// The values of a vector past its first `ROUGH_DIMS`: as many (`product` takes either half).
const TAIL: usize = DIMS - ROUGH_DIMS;
const _: () = assert!(TAIL == ROUGH_DIMS);

impl SegmentVectors {
    /// Reads the vectors of a segment's `docs` documents from their column.
    fn read(docs: usize, column: Columns) -> tantivy::Result<SegmentVectors> {
        let mut vectors = SegmentVectors {
            heads: Vec::new(),
            tails: Vec::new(),
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
                    vectors.heads.extend(values[..ROUGH_DIMS].iter().map(|v| *v as i8));
                    vectors.tails.extend(values[ROUGH_DIMS..].iter().map(|v| *v as i8));
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

    /// A vector's first `ROUGH_DIMS` values.
    fn head(&self, vector: usize) -> &[i8; ROUGH_DIMS] {
        head(&self.heads[vector * ROUGH_DIMS..])
    }

    /// A vector's other values.
    fn tail(&self, vector: usize) -> &[i8; TAIL] {
        head(&self.tails[vector * TAIL..])
    }

    /// The dot product of a vector's values and the question's.
    fn dot(&self, vector: usize, question: &Question) -> i32 {
        let (asked_head, asked_tail) = question.values.split_at(ROUGH_DIMS);
        product(self.head(vector), head(asked_head)) + product(self.tail(vector), head(asked_tail))
    }

    /// The cosine of a question's vector (`Question`) and the nearest of `doc`'s, with where that
    /// one's section starts.
    pub fn nearest(&self, doc: DocId, question: &Question) -> (f32, u32) {
        let mut best = (f32::MIN, 0);
        for vector in self.of(doc) {
            let cosine = self.dot(vector, question) as f32 * self.scales[vector] * question.scale;
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

    /// The cosine of the question and the nearest vector of each of `docs`, in their order. The
    /// vectors of the documents a few places on are asked of memory while these are weighed:
    /// candidates lie anywhere in the segment, and waiting for each one's values in turn cost
    /// more than weighing them (a fifth of a search at 100,000 notes).
    pub fn similarities(&self, docs: &[DocId], question: &Question) -> Vec<f32> {
        const AHEAD: usize = 8;
        let fetch = |doc: DocId| {
            #[cfg(target_arch = "x86_64")]
            for vector in self.of(doc) {
                use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
                let head = self.heads[vector * ROUGH_DIMS..].as_ptr();
                let tail = self.tails[vector * TAIL..].as_ptr();
                // SAFETY: a prefetch reads nothing and cannot fault; both addresses are inside
                // their vectors (a vector's values span two cache lines of each half).
                unsafe {
                    _mm_prefetch::<_MM_HINT_T0>(head);
                    _mm_prefetch::<_MM_HINT_T0>(head.add(64));
                    _mm_prefetch::<_MM_HINT_T0>(tail);
                    _mm_prefetch::<_MM_HINT_T0>(tail.add(64));
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = doc;
        };
        docs.iter().take(AHEAD).for_each(|doc| fetch(*doc));
        docs.iter()
            .enumerate()
            .map(|(at, doc)| {
                if let Some(ahead) = docs.get(at + AHEAD) {
                    fetch(*ahead);
                }
                self.similarity(*doc, question)
            })
            .collect()
    }

    /// Adds `doc`'s vectors (each its values times its scale) to `sum`.
    pub fn add_to(&self, doc: DocId, sum: &mut [f32]) {
        for vector in self.of(doc) {
            let scale = self.scales[vector];
            for (sum, value) in sum.iter_mut().zip(self.head(vector).iter().chain(self.tail(vector))) {
                *sum += f32::from(*value) * scale;
            }
        }
    }

    /// The `keep` documents nearest the question by their vectors' first `ROUGH_DIMS` values, each
    /// with the largest dot product of those and the question's (scaled, not by the question's
    /// scale), and whether more documents had a vector: the model's values come by PCA, largest
    /// variance first, so the first values say most of where a vector points. One pass over the
    /// first values laid end to end, four vectors at a time with AVX2 where the processor has it,
    /// then one over the products keeping the nearest (`nearest_by`; writing every document's
    /// score out and selecting among them all cost 12% of a search at 100,000 notes).
    pub fn rough(&self, question: &Question, keep: usize) -> (Vec<(f32, DocId)>, bool) {
        PRODUCTS.with(|products| {
            let mut products = products.borrow_mut();
            products.clear();
            products.resize(self.scales.len(), 0);
            let question: &[i8; ROUGH_DIMS] = head(&question.values);
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has AVX2, which is all `products_avx2` asks beyond the baseline.
                unsafe { products_avx2(&self.heads, question, &mut products) };
                return self.nearest_by(&products, keep);
            }
            for (vector, product) in products.iter_mut().enumerate() {
                *product = dot(self.head(vector), question);
            }
            self.nearest_by(&products, keep)
        })
    }

    /// The `keep` documents with the largest products (each document's largest, times its
    /// vector's scale), and whether there were more; of equals, the first documents. Documents
    /// gather in a buffer of twice `keep`, cut back to the best `keep` when full; past the first
    /// cut, a document below the last kept is passed over with one comparison (a heap of `keep`
    /// cost a quarter of a search at 10,000 segments, where many documents replaced its least).
    fn nearest_by(&self, products: &[i32], keep: usize) -> (Vec<(f32, DocId)>, bool) {
        let best_first = |a: &Ranked, b: &Ranked| b.cmp(a);
        if keep == 0 {
            let seen = self.first.windows(2).any(|range| range[0] < range[1]);
            return (Vec::new(), seen);
        }
        let mut kept: Vec<Ranked> = Vec::with_capacity(2 * keep + 1);
        // The least kept at the last cut (before the first, below every document): most documents
        // fall below its score, which one comparison of numbers tells; equals go on to the full
        // comparison, which prefers the earlier document.
        let mut floor = Ranked(f32::NEG_INFINITY, DocId::MAX);
        let mut seen = 0usize;
        for (doc, range) in self.first.windows(2).enumerate() {
            let (from, to) = (range[0] as usize, range[1] as usize);
            if from == to {
                continue;
            }
            seen += 1;
            let mut best = products[from] as f32 * self.scales[from];
            for (product, scale) in products[from + 1..to].iter().zip(&self.scales[from + 1..to]) {
                let score = *product as f32 * scale;
                if score > best {
                    best = score;
                }
            }
            if best < floor.0 {
                continue;
            }
            let ranked = Ranked(best, doc as DocId);
            if ranked <= floor {
                continue;
            }
            kept.push(ranked);
            if kept.len() == 2 * keep {
                kept.select_nth_unstable_by(keep - 1, best_first);
                kept.truncate(keep);
                floor = kept.iter().min().copied().unwrap_or(floor);
            }
        }
        if kept.len() > keep {
            kept.select_nth_unstable_by(keep - 1, best_first);
            kept.truncate(keep);
        }
        (
            kept.into_iter().map(|Ranked(score, doc)| (score, doc)).collect(),
            seen > keep,
        )
    }

    fn bytes(&self) -> usize {
        self.heads.len() + self.tails.len() + self.scales.len() * 8 + self.first.len() * 4
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

/// A rough score and its document, the larger score first and, of equals, the earlier document.
#[derive(Clone, Copy, PartialEq)]
struct Ranked(f32, DocId);

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

thread_local! {
    /// Each vector's rough product of a thread's last search, kept for the next: a segment's worth
    /// (640 KB for 160,000 vectors) allocated anew for each search costs its page faults each time.
    static PRODUCTS: std::cell::RefCell<Vec<i32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The dot products of the question's first values and those of every vector in `heads` (laid end
/// to end), into `out`, four vectors at a time: their sums are gathered together, where one vector
/// at a time spent more on gathering its sum than on its products.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn products_avx2(heads: &[i8], question: &[i8; ROUGH_DIMS], out: &mut [i32]) {
    use std::arch::x86_64::{
        __m128i, __m256i, _mm_add_epi32, _mm_storeu_si128, _mm256_castsi256_si128, _mm256_extracti128_si256,
        _mm256_hadd_epi32, _mm256_loadu_si256,
    };
    // SAFETY (the loads): each reads 32 bytes of a chunk of `ROUGH_DIMS` (4 * 32) bytes.
    let asked: [__m256i; 4] =
        std::array::from_fn(|i| unsafe { _mm256_loadu_si256(question.as_ptr().add(32 * i).cast::<__m256i>()) });
    let sums = |vector: &[i8]| {
        let mut sum = std::arch::x86_64::_mm256_setzero_si256();
        for (i, asked) in asked.iter().enumerate() {
            let values = unsafe { _mm256_loadu_si256(vector.as_ptr().add(32 * i).cast::<__m256i>()) };
            sum = std::arch::x86_64::_mm256_add_epi32(sum, products_of(values, *asked));
        }
        sum
    };
    let mut vectors = heads.chunks_exact(4 * ROUGH_DIMS);
    let mut outs = out.chunks_exact_mut(4);
    for (four, out) in (&mut vectors).zip(&mut outs) {
        let (a, b, c, d) = (
            sums(&four[..ROUGH_DIMS]),
            sums(&four[ROUGH_DIMS..2 * ROUGH_DIMS]),
            sums(&four[2 * ROUGH_DIMS..3 * ROUGH_DIMS]),
            sums(&four[3 * ROUGH_DIMS..]),
        );
        // Pairs within each half, then pairs of pairs: each half then holds a part of the four
        // sums, and the two halves added hold the sums.
        let pairs = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
        let four_sums = _mm_add_epi32(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256::<1>(pairs));
        // SAFETY: `out` is a chunk of four i32, 16 bytes.
        unsafe { _mm_storeu_si128(out.as_mut_ptr().cast::<__m128i>(), four_sums) };
    }
    for (vector, out) in vectors.remainder().chunks_exact(ROUGH_DIMS).zip(outs.into_remainder()) {
        *out = dot_avx2(head(vector), question);
    }
}

/// The products of 32 pairs of values, summed four by four into eight 32-bit sums (see `dot_avx2`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn products_of(values: std::arch::x86_64::__m256i, asked: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::{
        _mm256_abs_epi8, _mm256_madd_epi16, _mm256_maddubs_epi16, _mm256_set1_epi16, _mm256_sign_epi8,
    };
    // |values| times the question's values with the values' signs: unsigned by signed, which is
    // what the instruction multiplies.
    let pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(values), _mm256_sign_epi8(asked, values));
    _mm256_madd_epi16(pairs, _mm256_set1_epi16(1))
}

/// `dot` of half a vector, with AVX2 where the processor has it.
fn product(a: &[i8; ROUGH_DIMS], b: &[i8; ROUGH_DIMS]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, which is all `dot_avx2` asks beyond the baseline.
        return unsafe { dot_avx2(a, b) };
    }
    dot(a, b)
}

/// `dot` of half a vector (the first values, or the rest: as many), with AVX2: 32 products a
/// step. The values lie in -127..=127 (never -128: `Packed` and `Question` clamp them), so the
/// pairwise sums of 16-bit products cannot saturate (2 * 127 * 127 < 32767).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(a: &[i8; ROUGH_DIMS], b: &[i8; ROUGH_DIMS]) -> i32 {
    use std::arch::x86_64::{
        __m256i, _mm_add_epi32, _mm_cvtsi128_si32, _mm_shuffle_epi32, _mm256_add_epi32, _mm256_castsi256_si128,
        _mm256_extracti128_si256, _mm256_loadu_si256, _mm256_setzero_si256,
    };
    let mut sum = _mm256_setzero_si256();
    for (a, b) in a.chunks_exact(32).zip(b.chunks_exact(32)) {
        // SAFETY: each chunk holds 32 bytes, which is what an unaligned 256-bit load reads.
        let (a, b) = unsafe {
            (
                _mm256_loadu_si256(a.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(b.as_ptr().cast::<__m256i>()),
            )
        };
        sum = _mm256_add_epi32(sum, products_of(a, b));
    }
    let half = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256::<1>(sum));
    let quarter = _mm_add_epi32(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
    let last = _mm_add_epi32(quarter, _mm_shuffle_epi32::<0b10_11_00_01>(quarter));
    _mm_cvtsi128_si32(last)
}

/// The first `N` values of a slice that holds at least that many.
fn head<const N: usize>(values: &[i8]) -> &[i8; N] {
    values[..N].try_into().expect("a vector's part holds its values")
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

    /// Values in -127..=127, the same from the same seed.
    fn values(mut seed: u32) -> impl FnMut() -> i8 {
        move || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (((seed >> 16) % 255) as i32 - 127) as i8
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_wide_product_is_the_plain_one() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut next = values(7);
        for round in 0..200 {
            let a: [i8; ROUGH_DIMS] = std::array::from_fn(|_| next());
            let b: [i8; ROUGH_DIMS] = match round {
                // The extremes: every product at its largest, and at its most negative.
                0 => [127; ROUGH_DIMS],
                1 => [-127; ROUGH_DIMS],
                _ => std::array::from_fn(|_| next()),
            };
            let a = if round < 2 { [127; ROUGH_DIMS] } else { a };
            // SAFETY: AVX2 was found above.
            let wide = unsafe { dot_avx2(&a, &b) };
            assert_eq!(wide, dot(&a, &b), "round {round}");
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn four_at_a_time_gives_each_vectors_product() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut next = values(11);
        // 4 * 5 + 3 vectors: five groups of four and three past them.
        let heads: Vec<i8> = (0..23 * ROUGH_DIMS).map(|_| next()).collect();
        let question: [i8; ROUGH_DIMS] = std::array::from_fn(|_| next());
        let mut wide = vec![0; 23];
        // SAFETY: AVX2 was found above.
        unsafe { products_avx2(&heads, &question, &mut wide) };
        let plain: Vec<i32> = heads
            .chunks_exact(ROUGH_DIMS)
            .map(|v| dot(head(v), &question))
            .collect();
        assert_eq!(wide, plain);
    }

    #[test]
    fn the_rough_pass_keeps_the_nearest_documents_and_says_when_there_were_more() {
        // Five documents; the third has no vector, the fourth two. Each vector's first value is
        // all that differs.
        let vector = |first: i8| {
            let mut v = [0i8; DIMS];
            v[0] = first;
            v
        };
        let all = [vector(10), vector(50), vector(30), vector(90), vector(50)];
        let vectors = SegmentVectors {
            heads: all.iter().flat_map(|v| v[..ROUGH_DIMS].to_vec()).collect(),
            tails: all.iter().flat_map(|v| v[ROUGH_DIMS..].to_vec()).collect(),
            scales: vec![1.0; 5],
            starts: vec![0; 5],
            first: vec![0, 1, 2, 2, 4, 5],
        };
        let question = Question {
            values: vector(1),
            scale: 1.0,
        };
        let sorted = |(mut near, more): (Vec<(f32, DocId)>, bool)| {
            near.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            (near, more)
        };
        // The fourth by its nearer vector; of the two at 50, the earlier document.
        assert_eq!(sorted(vectors.rough(&question, 2)), (vec![(90.0, 3), (50.0, 1)], true));
        assert_eq!(
            sorted(vectors.rough(&question, 4)),
            (vec![(90.0, 3), (50.0, 1), (50.0, 4), (10.0, 0)], false)
        );
        assert_eq!(sorted(vectors.rough(&question, 0)), (vec![], true));
        // Weighed in full, in the order asked, more than the prefetch's reach ahead.
        let docs: Vec<DocId> = [4, 0, 3, 1, 4, 3, 0, 1, 3, 4, 0, 1].into();
        let each: Vec<f32> = docs.iter().map(|doc| vectors.similarity(*doc, &question)).collect();
        assert_eq!(vectors.similarities(&docs, &question), each);
        assert_eq!(each[..3], [50.0, 10.0, 90.0]);
    }

    #[test]
    fn the_nearest_kept_are_those_a_full_sort_finds() {
        // 1,000 documents of one vector each (every seventh without one), with many equal products.
        let docs = 1000;
        let first: Vec<u32> = std::iter::once(0)
            .chain((0..docs).scan(0u32, |at, doc| {
                *at += u32::from(doc % 7 != 3);
                Some(*at)
            }))
            .collect();
        let vectors_held = *first.last().unwrap() as usize;
        let vectors = SegmentVectors {
            heads: vec![0; vectors_held * ROUGH_DIMS],
            tails: vec![0; vectors_held * TAIL],
            scales: vec![0.5; vectors_held],
            starts: vec![0; vectors_held],
            first: first.clone(),
        };
        let products: Vec<i32> = (0..vectors_held as i32).map(|v| (v * 7919) % 113).collect();
        let mut every: Vec<(f32, DocId)> = (0..docs)
            .filter(|doc| first[*doc as usize] < first[*doc as usize + 1])
            .map(|doc| (products[first[doc as usize] as usize] as f32 * 0.5, doc))
            .collect();
        every.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for keep in [0, 1, 2, 7, 100, 400, every.len() - 1, every.len(), every.len() + 5] {
            let (mut kept, more) = vectors.nearest_by(&products, keep);
            kept.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            assert_eq!(kept, every[..keep.min(every.len())], "keep {keep}");
            assert_eq!(more, every.len() > keep, "keep {keep}");
        }
    }

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
            heads: [&doc.values[..ROUGH_DIMS], &far.values[..ROUGH_DIMS]].concat(),
            tails: [&doc.values[ROUGH_DIMS..], &far.values[ROUGH_DIMS..]].concat(),
            scales: vec![doc.scale, far.scale],
            starts: vec![0, 40],
            first: vec![0, 2],
        };
        let near = vectors.similarity(0, &Question::new(&b));
        assert!((near - exact).abs() < 0.002, "{near} against {exact}");
        let rough: f32 = a[..ROUGH_DIMS].iter().zip(&b[..ROUGH_DIMS]).map(|(x, y)| x * y).sum();
        let scale = Question::new(&b).scale;
        let [(found, 0)] = vectors.rough(&Question::new(&b), 10).0[..] else {
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

    /// How many of the exact nearest documents the candidates chosen by their first values hold,
    /// against weighing every vector, and what each costs, segment by segment: run by hand on a
    /// journal (docs/performance.md), as `JOURNAL_MEASURE=DIR cargo test --release -p
    /// journal-store candidates_against -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, run by hand on a large journal"]
    fn candidates_against_every_vector() {
        let Ok(dir) = std::env::var("JOURNAL_MEASURE") else {
            panic!("JOURNAL_MEASURE names a journal folder")
        };
        let index = tantivy::Index::open_in_dir(std::path::Path::new(&dir).join(".index")).unwrap();
        let searcher = index.reader().unwrap().searcher();
        let model = journal_meaning::Model::builtin().unwrap();
        let questions: Vec<Question> = include_str!("../../../../../benches/demo-queries.txt")
            .lines()
            .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
            .map(|line| Question::new(&model.embed(line)))
            .collect();
        let best = |mut scored: Vec<(f32, DocId)>, n: usize| {
            scored.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            scored.truncate(n);
            scored
        };
        for reader in searcher.segment_readers() {
            let columns = super::super::nearest::VectorFields::columns(reader).unwrap();
            let vectors = SegmentVectors::read(reader.max_doc() as usize, columns).unwrap();
            if vectors.docs() < 1000 {
                continue;
            }
            let started = std::time::Instant::now();
            let exact: Vec<Vec<(f32, DocId)>> = questions
                .iter()
                .map(|q| {
                    let every = (0..vectors.docs() as DocId).filter(|d| vectors.has(*d));
                    best(every.map(|d| (vectors.similarity(d, q), d)).collect(), 100)
                })
                .collect();
            let weighed = started.elapsed() / questions.len() as u32;
            let started = std::time::Instant::now();
            let rough: Vec<Vec<(f32, DocId)>> = questions.iter().map(|q| vectors.rough(q, 400).0).collect();
            let passed = started.elapsed() / questions.len() as u32;
            println!(
                "segment of {} documents: every vector weighed in full {weighed:?} a question, its first {ROUGH_DIMS} values {passed:?}",
                vectors.docs()
            );
            for candidates in [200, 400, 800, 1600] {
                let (mut ten, mut hundred, mut all_ten, mut all_hundred) = (0, 0, 0, 0);
                for ((q, rough), exact) in questions.iter().zip(&rough).zip(&exact) {
                    let kept = if candidates == 400 {
                        rough.clone()
                    } else {
                        vectors.rough(q, candidates).0
                    };
                    let found = best(
                        kept.into_iter().map(|(_, d)| (vectors.similarity(d, q), d)).collect(),
                        100,
                    );
                    let has = |doc: DocId, n: usize| found.iter().take(n).any(|f| f.1 == doc);
                    ten += exact.iter().take(10).filter(|e| has(e.1, 10)).count();
                    hundred += exact.iter().filter(|e| has(e.1, 100)).count();
                    all_ten += exact.len().min(10);
                    all_hundred += exact.len();
                }
                println!(
                    "  {candidates} candidates: {:.1}% of the exact ten nearest, {:.1}% of the hundred",
                    100.0 * ten as f64 / all_ten as f64,
                    100.0 * hundred as f64 / all_hundred as f64
                );
                if candidates == 400 {
                    // What docs/performance.md and `ROUGH_DIMS` claim of the candidates a search
                    // weighs: a measurement that finds less says the claim no longer holds.
                    assert!(ten * 100 >= all_ten * 99, "{ten} of the {all_ten} nearest");
                }
            }
        }
    }
}
