//! Phrases searched as their words, with the phrase itself tested only where it could make the top.
//!
//! tantivy scores a phrase by reading the positions of every document that holds all of its words,
//! with no pruning: a phrase of common words (`"lease renewal"`) cost a search twice what a word
//! does. Here each phrase of the query becomes its words, which the pruned search ranks (block-max
//! WAND skips most of their postings), plus a filter that the phrase is there, which the pruning
//! loop tests only on documents whose score could enter the top (`ranked::FilteredTop`). The same
//! documents match; they are ranked by their words rather than by how often the phrase recurs.

use tantivy::query::{BooleanQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::IndexRecordOption;

use super::ranked::Filter;

/// The query with every required phrase replaced by its words, and a filter per phrase; None when
/// the query has no required phrase (nothing to change).
pub(super) fn split(query: &dyn Query) -> Option<(Box<dyn Query>, Vec<Filter>)> {
    let clauses: Vec<(Occur, Box<dyn Query>)> = match query.as_any().downcast_ref::<BooleanQuery>() {
        Some(boolean) => boolean
            .clauses()
            .iter()
            .map(|(occur, q)| (*occur, q.box_clone()))
            .collect(),
        None => vec![(Occur::Must, query.box_clone())],
    };
    let mut words: Vec<(Occur, Box<dyn Query>)> = Vec::with_capacity(clauses.len());
    let mut filters = Vec::new();
    for (occur, clause) in clauses {
        match clause.as_any().downcast_ref::<PhraseQuery>() {
            // Only a required phrase (the query's text has no slop syntax): an excluded phrase
            // (`-"a b"`) stays as it is.
            Some(phrase) if occur == Occur::Must => {
                for term in phrase.phrase_terms() {
                    let word = TermQuery::new(term, IndexRecordOption::WithFreqs);
                    words.push((Occur::Must, Box::new(word)));
                }
                filters.push(Filter {
                    any_of: vec![clause],
                    negated: false,
                });
            }
            _ => words.push((occur, clause)),
        }
    }
    if filters.is_empty() {
        return None;
    }
    let rewritten: Box<dyn Query> = if words.len() == 1 && words[0].0 == Occur::Must {
        words.remove(0).1
    } else {
        Box::new(BooleanQuery::new(words))
    };
    Some((rewritten, filters))
}
