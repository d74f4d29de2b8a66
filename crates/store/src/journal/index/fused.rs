//! Hybrid ranking: the ranking by words and the ranking by meaning fused by reciprocal rank, the
//! words' side weighed by how much of the question a document holds. A document found by both
//! rises above one found by either; a document that holds only an incidental common word of a
//! question counts for little on the words' side, so it does not push down the note the question
//! means; a document that holds every word (a rare name) keeps the words' full weight and, found
//! by meaning too or not, is not outranked by one found by meaning alone.

use std::collections::HashMap;

use tantivy::{DocAddress, Score};

/// The constant of reciprocal rank fusion: a document's share on one side is `1 / (K + rank)`.
/// 60 is the value of the method's paper, and keeps the first places of either side close.
pub const K: f32 = 60.0;

/// The words' side of a document counts `coverage ^ WORDS_POWER`: all of the question keeps its
/// full weight, part of it much less (nine tenths count two thirds, a half a sixteenth), so that an
/// incidental word shared with the question does not outweigh the note the question means. Chosen
/// on the labelled set (1: 12 of 30 first, 2: 15, 3: 16, 4 to 8: 18, as meaning alone) and
/// confirmed on the held-out one (docs/performance.md).
pub const WORDS_POWER: i32 = 4;

/// How close in meaning a document found by meaning alone must be to be shown: a cosine of 0.15.
/// Below it a question of noise ("asdf", "the", "xylophone" in a journal without music) would list
/// the journal's nearest items however far. Chosen on the labelled sets (tests/data/meaning,
/// docs/performance.md): at 0.15 hybrid finds as many notes as without a floor (18 of 30 first, 29
/// in five; 11 and 12 of 12 held out) and 9 of 26 unrelated questions get no hit; at 0.2, 16 of 26
/// get none but 17 and 27 of 30 are found. A document that holds some of the question's words is
/// shown however far its meaning.
pub const MEANING_FLOOR: f32 = 0.15;

/// One document in the fused ranking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fused {
    pub address: DocAddress,
    pub score: Score,
    /// How much of the question's words it holds (rarer words weigh more), when the words found it.
    pub words: Option<f32>,
    /// Its similarity in meaning to the question (a cosine), when meaning found it.
    pub meaning: Option<f32>,
    /// Its place among the words' hits (for ties).
    lexical_rank: usize,
}

/// Fuses `lexical` (best first, each with how much of the question it holds, 0 to 1) and
/// `semantic` (best first, each with its cosine), leaving out what meaning alone found below
/// `MEANING_FLOOR`. Ties go to the better place by words, then the
/// lower address.
pub fn fuse(lexical: &[(DocAddress, f32)], semantic: &[(DocAddress, f32)]) -> Vec<Fused> {
    let mut by_address: HashMap<DocAddress, Fused> = HashMap::with_capacity(lexical.len() + semantic.len());
    let blank = |address: DocAddress| Fused {
        address,
        score: 0.0,
        words: None,
        meaning: None,
        lexical_rank: usize::MAX,
    };
    for (rank, (address, coverage)) in lexical.iter().enumerate() {
        let entry = by_address.entry(*address).or_insert_with(|| blank(*address));
        entry.score += coverage.powi(WORDS_POWER) / (K + rank as f32 + 1.0);
        entry.words = Some(*coverage);
        entry.lexical_rank = rank;
    }
    for (rank, (address, cosine)) in semantic.iter().enumerate() {
        let entry = by_address.entry(*address).or_insert_with(|| blank(*address));
        entry.score += 1.0 / (K + rank as f32 + 1.0);
        entry.meaning = Some(*cosine);
    }
    let mut fused: Vec<Fused> = by_address
        .into_values()
        .filter(|f| f.words.is_some() || f.meaning.is_some_and(|cosine| cosine >= MEANING_FLOOR))
        .collect();
    fused.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.lexical_rank.cmp(&b.lexical_rank))
            .then(a.address.cmp(&b.address))
    });
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(doc: u32) -> DocAddress {
        DocAddress::new(0, doc)
    }

    fn order(fused: &[Fused]) -> Vec<u32> {
        fused.iter().map(|f| f.address.doc_id).collect()
    }

    #[test]
    fn found_by_both_rises_and_an_incidental_word_weighs_little() {
        // 1 holds the whole question; 2 only a common word of it, and is far by meaning; 3 is
        // what it means. (Found by both sides, 2 would rise: that is the fusion.)
        let far: Vec<(DocAddress, f32)> = (10..30).map(|doc| (at(doc), 0.2)).collect();
        let lexical = [(at(2), 0.2), (at(1), 1.0)];
        let semantic: Vec<(DocAddress, f32)> = [(at(3), 0.6), (at(1), 0.5)]
            .into_iter()
            .chain(far)
            .chain([(at(2), 0.1)])
            .collect();
        let fused = fuse(&lexical, &semantic);
        assert_eq!(order(&fused)[..2], [1, 3]);
        assert!(order(&fused).iter().position(|d| *d == 2) > order(&fused).iter().position(|d| *d == 3));
        assert_eq!(fused[0].words, Some(1.0));
        assert_eq!(fused[0].meaning, Some(0.5));
        assert_eq!(fused[1].words, None, "meaning alone found 3");
    }

    #[test]
    fn a_document_holding_every_word_is_not_outranked_by_meaning_alone() {
        // A rare name: first by words, nowhere near by meaning.
        let lexical = [(at(7), 1.0)];
        let semantic = [(at(4), 0.3), (at(5), 0.2)];
        assert_eq!(order(&fuse(&lexical, &semantic))[0], 7, "ties go to the words");
    }

    #[test]
    fn either_side_alone_keeps_its_order() {
        let lexical = [(at(3), 1.0), (at(1), 1.0), (at(2), 0.5)];
        assert_eq!(order(&fuse(&lexical, &[])), [3, 1, 2]);
        let semantic = [(at(9), 0.9), (at(8), 0.8)];
        assert_eq!(order(&fuse(&[], &semantic)), [9, 8]);
        assert!(fuse(&[], &[]).is_empty());
    }

    #[test]
    fn meaning_alone_below_the_floor_is_left_out_and_words_keep_it() {
        let semantic = [
            (at(1), 0.5),
            (at(2), MEANING_FLOOR),
            (at(3), MEANING_FLOOR - 0.01),
            (at(4), -0.3),
        ];
        assert_eq!(order(&fuse(&[], &semantic)), [1, 2], "3 and 4 are too far");
        let lexical = [(at(4), 0.3)];
        let kept = fuse(&lexical, &semantic);
        assert!(order(&kept).contains(&4), "a word of the question keeps it: {kept:?}");
        assert!(!order(&kept).contains(&3));
    }
}
