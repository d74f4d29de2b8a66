//! Text into the model's tokens: BERT's uncased WordPiece, as all-MiniLM-L6-v2 was trained with.
//!
//! First the basic split: control characters dropped, accents stripped (NFD, combining marks
//! removed), lowercased, CJK ideographs and punctuation made words of their own, whitespace between
//! words. Then each word becomes the longest pieces of the vocabulary that spell it from the left,
//! every piece after the first written with a `##` prefix; a word that cannot be spelled, or is
//! longer than 100 characters, is the unknown token.

use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

/// The longest word given pieces: longer ones are the unknown token.
pub const MAX_WORD_CHARS: usize = 100;

/// The vocabulary: each piece's id.
pub struct Vocabulary {
    ids: HashMap<Box<str>, u32>,
    unknown: u32,
}

impl Vocabulary {
    /// Reads one token a line, in id order; None without an `[UNK]` token.
    pub fn parse(text: &str) -> Option<Vocabulary> {
        let ids: HashMap<Box<str>, u32> = text
            .lines()
            .enumerate()
            .map(|(id, token)| (Box::from(token), id as u32))
            .collect();
        let unknown = *ids.get("[UNK]")?;
        Some(Vocabulary { ids, unknown })
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The token ids of `text`, in order, given to `each`.
    pub fn tokens(&self, text: &str, mut each: impl FnMut(u32)) {
        let mut piece = String::new();
        for word in words(text) {
            self.pieces(&word, &mut piece, &mut each);
        }
    }

    /// One word's pieces; `piece` is a buffer kept between words.
    fn pieces(&self, word: &str, piece: &mut String, each: &mut impl FnMut(u32)) {
        if word.chars().count() > MAX_WORD_CHARS {
            each(self.unknown);
            return;
        }
        let mut found = Vec::new();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let mut id = None;
            while end > start {
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                piece.push_str(&word[start..end]);
                if let Some(known) = self.ids.get(piece.as_str()) {
                    id = Some(*known);
                    break;
                }
                // One character back (never inside one).
                end = word[..end].char_indices().next_back().map_or(start, |(at, _)| at);
            }
            match id {
                Some(id) => found.push(id),
                None => {
                    each(self.unknown);
                    return;
                }
            }
            start = end;
        }
        found.into_iter().for_each(each);
    }
}

fn is_punctuation(c: char) -> bool {
    matches!(c as u32, 33..=47 | 58..=64 | 91..=96 | 123..=126)
        || c.general_category_group() == GeneralCategoryGroup::Punctuation
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// The basic split: lowercased words without accents, punctuation and CJK characters each alone.
pub fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, words: &mut Vec<String>| {
        if !word.is_empty() {
            words.push(std::mem::take(word));
        }
    };
    for c in text.nfd() {
        if c.general_category() == unicode_properties::GeneralCategory::NonspacingMark {
            continue;
        }
        if c.is_whitespace() {
            flush(&mut word, &mut words);
        } else if c.is_control() || c == '\u{FFFD}' {
            continue;
        } else if is_punctuation(c) || is_cjk(c) {
            flush(&mut word, &mut words);
            words.push(c.to_string());
        } else {
            word.extend(c.to_lowercase());
        }
    }
    flush(&mut word, &mut words);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocabulary() -> Vocabulary {
        Vocabulary::parse("[PAD]\n[UNK]\nthe\ncafe\nrun\n##ning\n##s\n!\n,\nun\n##believ\n##able\n東\n").unwrap()
    }

    fn ids(text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        vocabulary().tokens(text, |id| out.push(id));
        out
    }

    #[test]
    fn words_are_lowercased_without_accents_and_punctuation_alone() {
        assert_eq!(words("Café, RUNNING!"), ["cafe", ",", "running", "!"]);
        assert_eq!(words("a\u{0}b\tc東d"), ["ab", "c", "東", "d"]);
        assert!(words("  \n ").is_empty());
    }

    #[test]
    fn words_become_the_longest_pieces_from_the_left() {
        assert_eq!(ids("The running, runs!"), [2, 4, 5, 8, 4, 6, 7]);
        assert_eq!(ids("Unbelievable"), [9, 10, 11]);
        // A word that cannot be spelled is one unknown token, not a part of one.
        assert_eq!(ids("runx cafe"), [1, 3]);
        assert_eq!(ids(&"a".repeat(MAX_WORD_CHARS + 1)), [1]);
        assert_eq!(ids("東"), [12]);
    }

    #[test]
    fn a_vocabulary_needs_its_unknown_token() {
        assert!(Vocabulary::parse("a\nb\n").is_none());
    }
}
