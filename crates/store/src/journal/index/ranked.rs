//! The best-scoring documents among those that pass a search's filters, found without scoring every match.
//!
//! tantivy skips most of a frequent word's postings (block-max WAND) only when the query is the text alone: once
//! a filter joins it as a clause (a category, a tag, a folder) or a collector tests each hit (a frontmatter
//! filter), every document that holds the word is scored, tens of thousands over a large vault. [`FilteredTop`]
//! keeps the text as the query and tests the filters inside the pruning loop instead: a document is tested only
//! when its score could enter the top, and the threshold rises with each document that passes. Each filter is a
//! set of queries positioned on the segment's documents and moved forward as the loop goes (documents arrive in
//! order), so a test is a seek through skip lists, not a scan. When a filter holds few documents, leading with it
//! costs less; the caller decides that (see `SearchIndex::search`).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::fastfield::AliveBitSet;
use tantivy::query::{EnableScoring, Query, Scorer, Weight};
use tantivy::{DocAddress, DocId, DocSet, Score, Searcher, SegmentOrdinal, SegmentReader};

use super::NoteFilter;

/// A test of documents: one of the queries matches (or, negated, none does).
pub(super) struct Filter {
    pub any_of: Vec<Box<dyn Query>>,
    pub negated: bool,
}

/// Collects the `k` best documents by score (ties: the lower address first) that pass every filter and, when
/// given, whose `note` fast field passes `notes`.
pub(super) struct FilteredTop {
    k: usize,
    /// The best `k`-th score any segment has kept so far (an `f32`'s bits; scores are never negative,
    /// so the bits order as the scores do). No document scoring below it can make the top, so a
    /// later segment prunes from the start instead of from zero.
    floor: Arc<AtomicU32>,
    filters: Vec<(Vec<Box<dyn Weight>>, bool)>,
    notes: Option<NoteFilter>,
}

impl FilteredTop {
    pub fn new(
        searcher: &Searcher,
        k: usize,
        filters: &[Filter],
        notes: Option<NoteFilter>,
    ) -> tantivy::Result<FilteredTop> {
        let scoring = EnableScoring::disabled_from_searcher(searcher);
        let filters = filters
            .iter()
            .map(|filter| {
                let weights = filter
                    .any_of
                    .iter()
                    .map(|query| query.weight(scoring))
                    .collect::<tantivy::Result<Vec<_>>>()?;
                Ok((weights, filter.negated))
            })
            .collect::<tantivy::Result<Vec<_>>>()?;
        Ok(FilteredTop {
            k,
            floor: Arc::new(AtomicU32::new(0)),
            filters,
            notes,
        })
    }
}

/// The top of one segment, and the filters positioned on its documents.
pub(super) struct SegmentTop {
    segment: SegmentOrdinal,
    k: usize,
    floor: Arc<AtomicU32>,
    heap: BinaryHeap<Entry>,
    filters: Vec<(Vec<Box<dyn Scorer>>, bool)>,
    notes: Option<(Column<u64>, NoteFilter)>,
    alive: Option<AliveBitSet>,
}

/// A scored document in the heap, whose top is the worst kept: the lowest score, then the highest document.
#[derive(Debug, Clone, Copy)]
struct Entry {
    score: Score,
    doc: DocId,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .partial_cmp(&self.score)
            .unwrap_or(Ordering::Equal)
            .then_with(|| self.doc.cmp(&other.doc))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

impl SegmentTop {
    /// Whether a document passes every filter. Documents must come in increasing order.
    fn passes(&mut self, doc: DocId) -> bool {
        if self.alive.as_ref().is_some_and(|alive| alive.is_deleted(doc)) {
            return false;
        }
        for (scorers, negated) in &mut self.filters {
            let mut found = false;
            for scorer in scorers.iter_mut() {
                if scorer.doc() < doc {
                    scorer.seek(doc);
                }
                if scorer.doc() == doc {
                    found = true;
                    break;
                }
            }
            if found == *negated {
                return false;
            }
        }
        match &self.notes {
            Some((column, NoteFilter(passes))) => column.first(doc).is_some_and(|key| passes(key)),
            None => true,
        }
    }

    /// The score a document must beat to be kept: the worst kept once the top is full.
    fn threshold(&self) -> Score {
        match self.heap.peek() {
            Some(worst) if self.heap.len() >= self.k => worst.score,
            _ => Score::MIN,
        }
    }

    fn offer(&mut self, doc: DocId, score: Score) {
        if self.k == 0 || (self.heap.len() >= self.k && score <= self.threshold()) {
            // Equal scores keep the earlier document, as documents arrive in order.
            return;
        }
        if !self.passes(doc) {
            return;
        }
        self.heap.push(Entry { score, doc });
        if self.heap.len() > self.k {
            self.heap.pop();
        }
        if self.heap.len() >= self.k {
            self.floor
                .fetch_max(self.threshold().max(0.0).to_bits(), AtomicOrdering::Relaxed);
        }
    }
}

impl SegmentCollector for SegmentTop {
    type Fruit = Vec<(Score, DocAddress)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        self.offer(doc, score);
    }

    fn harvest(self) -> Self::Fruit {
        let segment = self.segment;
        self.heap
            .into_iter()
            .map(|entry| (entry.score, DocAddress::new(segment, entry.doc)))
            .collect()
    }
}

impl Collector for FilteredTop {
    type Fruit = Vec<(Score, DocAddress)>;
    type Child = SegmentTop;

    fn for_segment(&self, segment: SegmentOrdinal, reader: &SegmentReader) -> tantivy::Result<SegmentTop> {
        let filters = self
            .filters
            .iter()
            .map(|(weights, negated)| {
                let scorers = weights
                    .iter()
                    .map(|weight| weight.scorer(reader, 1.0))
                    .collect::<tantivy::Result<Vec<_>>>()?;
                Ok((scorers, *negated))
            })
            .collect::<tantivy::Result<Vec<_>>>()?;
        let notes = match &self.notes {
            Some(filter) => Some((reader.fast_fields().u64("note")?, filter.clone())),
            None => None,
        };
        Ok(SegmentTop {
            segment,
            k: self.k,
            floor: Arc::clone(&self.floor),
            heap: BinaryHeap::with_capacity(self.k.min(1024) + 1),
            filters,
            notes,
            alive: reader.alive_bitset().cloned(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, segments: Vec<Self::Fruit>) -> tantivy::Result<Self::Fruit> {
        let mut all: Vec<(Score, DocAddress)> = segments.into_iter().flatten().collect();
        all.sort_by(|a, b| {
            b.0.partial_cmp(&a.0)
                .unwrap_or(Ordering::Equal)
                .then_with(|| a.1.cmp(&b.1))
        });
        all.truncate(self.k);
        Ok(all)
    }

    fn collect_segment(
        &self,
        weight: &dyn Weight,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<Self::Fruit> {
        let mut top = self.for_segment(segment, reader)?;
        weight.for_each_pruning(Score::MIN, reader, &mut |doc, score| {
            top.offer(doc, score);
            // A score equal to the floor may still win its tie (on address) against another
            // segment's document, so only what is below it is skipped.
            let floor = f32::from_bits(top.floor.load(AtomicOrdering::Relaxed));
            top.threshold().max(floor.next_down())
        })?;
        Ok(top.harvest())
    }
}
