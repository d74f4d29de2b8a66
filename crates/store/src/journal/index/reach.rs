//! BM25's statistics over what a search may reach: the index's own, less the notes hidden from the
//! caller by its connection's overrides (private notes are never indexed).
//!
//! A score weighs a word by how many documents hold it (its IDF) and a document's length against
//! the average. Taken over the whole index, those counts include the notes hidden from the caller,
//! so the order of its results (which of two words weighs more) would change with what a hidden
//! note says: a ranking oracle. Here the hidden notes are taken out of each count: the documents,
//! the documents that hold each searched word, and the words of each field (by the hidden notes'
//! field norms, which tantivy keeps rounded, so the average length moves by a rounding at most).
//! The hidden notes' documents are found by their file keys (one term each), so the cost is one
//! look per hidden note, nothing when none is hidden.
//!
//! Left as it is: the statistics of categories and facets a grant does not reach (a notes-only
//! agent's scores still count the words of transcripts). Those hidden sets are most of the index,
//! and taking them out per search would cost a pass over them; see the closing note.

use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, DocSet, Searcher, TERMINATED, Term};

/// The statistics of `searcher` without the documents of the files `hidden` names.
pub(super) struct Reach<'a> {
    searcher: &'a Searcher,
    /// Per segment (by ordinal), the hidden files' live documents, in order.
    hidden: Vec<Vec<DocId>>,
    count: u64,
}

impl<'a> Reach<'a> {
    /// `file` is the field of the documents' file keys; `hidden` the keys of the hidden notes.
    pub fn new(searcher: &'a Searcher, file: Field, hidden: &[String]) -> tantivy::Result<Reach<'a>> {
        let mut per_segment = Vec::with_capacity(searcher.segment_readers().len());
        let mut count = 0;
        for reader in searcher.segment_readers() {
            let mut docs = Vec::new();
            let inverted = reader.inverted_index(file)?;
            let alive = reader.alive_bitset();
            for key in hidden {
                let term = Term::from_field_text(file, key);
                if let Some(mut postings) = inverted.read_postings(&term, IndexRecordOption::Basic)? {
                    let mut doc = postings.doc();
                    while doc != TERMINATED {
                        if alive.is_none_or(|alive| alive.is_alive(doc)) {
                            docs.push(doc);
                        }
                        doc = postings.advance();
                    }
                }
            }
            docs.sort_unstable();
            docs.dedup();
            count += docs.len() as u64;
            per_segment.push(docs);
        }
        Ok(Reach {
            searcher,
            hidden: per_segment,
            count,
        })
    }

    /// Whether some note is hidden (else the index's own statistics are the reach's).
    pub fn hides_any(&self) -> bool {
        self.count > 0
    }
}

impl Bm25StatisticsProvider for Reach<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let mut total = self.searcher.total_num_tokens(field)?;
        for (reader, docs) in self.searcher.segment_readers().iter().zip(&self.hidden) {
            if docs.is_empty() {
                continue;
            }
            let norms = reader.get_fieldnorms_reader(field)?;
            let hidden: u64 = docs.iter().map(|&doc| u64::from(norms.fieldnorm(doc))).sum();
            total = total.saturating_sub(hidden);
        }
        Ok(total)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.searcher.total_num_docs()?.saturating_sub(self.count))
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let mut freq = self.searcher.doc_freq(term)?;
        for (reader, docs) in self.searcher.segment_readers().iter().zip(&self.hidden) {
            if docs.is_empty() {
                continue;
            }
            let inverted = reader.inverted_index(term.field())?;
            let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic)? else {
                continue;
            };
            let mut holding = 0;
            for &doc in docs {
                if postings.doc() > doc {
                    continue;
                }
                if postings.seek(doc) == doc {
                    holding += 1;
                }
                if postings.doc() == TERMINATED {
                    break;
                }
            }
            freq = freq.saturating_sub(holding);
        }
        Ok(freq)
    }
}
