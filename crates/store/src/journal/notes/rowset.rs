//! A set of the note set's rows as a bitmap, one bit a note.
//!
//! Queries narrow the 100,000 notes of a large vault with these: the rows a reader may see, the
//! rows where a frontmatter key holds a value, and their intersections, unions and complements
//! cost a few microseconds as words of 64 bits, where a scan that tests every note costs
//! milliseconds.

/// Rows `0..len` of a note set, each in the set or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSet {
    words: Vec<u64>,
    len: usize,
}

impl RowSet {
    /// No row of `len`.
    pub fn empty(len: usize) -> RowSet {
        RowSet {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// Every row of `len`.
    #[cfg(test)]
    pub fn full(len: usize) -> RowSet {
        let mut set = RowSet {
            words: vec![u64::MAX; len.div_ceil(64)],
            len,
        };
        set.clear_tail();
        set
    }

    /// The given rows of `len`; rows at or past `len` are left out.
    pub fn from_rows(len: usize, rows: impl IntoIterator<Item = u32>) -> RowSet {
        let mut set = RowSet::empty(len);
        for row in rows {
            set.insert(row as usize);
        }
        set
    }

    pub fn insert(&mut self, row: usize) {
        if row < self.len
            && let Some(word) = self.words.get_mut(row / 64)
        {
            *word |= 1 << (row % 64);
        }
    }

    pub fn contains(&self, row: usize) -> bool {
        row < self.len
            && self
                .words
                .get(row / 64)
                .is_some_and(|word| word & (1 << (row % 64)) != 0)
    }

    /// Keeps the rows that are also in `other`.
    pub fn intersect(&mut self, other: &RowSet) {
        for (word, theirs) in self
            .words
            .iter_mut()
            .zip(other.words.iter().chain(std::iter::repeat(&0)))
        {
            *word &= theirs;
        }
    }

    /// Adds the rows of `other` (within this set's universe).
    pub fn unite(&mut self, other: &RowSet) {
        for (word, theirs) in self.words.iter_mut().zip(&other.words) {
            *word |= theirs;
        }
        self.clear_tail();
    }

    /// Holds exactly the rows it did not.
    pub fn invert(&mut self) {
        for word in &mut self.words {
            *word = !*word;
        }
        self.clear_tail();
    }

    /// How many rows the set holds.
    pub fn count(&self) -> usize {
        self.words.iter().map(|word| word.count_ones() as usize).sum()
    }

    /// The rows it holds, in order.
    pub fn rows(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(at, word)| {
            let mut bits = *word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(at * 64 + bit)
            })
        })
    }

    /// Keeps the rows for which `keep` holds, asking only about the rows it holds.
    pub fn retain(&mut self, mut keep: impl FnMut(usize) -> bool) {
        for (at, word) in self.words.iter_mut().enumerate() {
            let mut bits = *word;
            while bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if !keep(at * 64 + bit) {
                    *word &= !(1 << bit);
                }
            }
        }
    }

    /// Unsets the bits past `len` in the last word, which `full` and `invert` set.
    fn clear_tail(&mut self) {
        let used = self.len % 64;
        if used != 0
            && let Some(last) = self.words.last_mut()
        {
            *last &= (1 << used) - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_combine_as_sets_do() {
        let mut odd = RowSet::from_rows(130, (0..130).filter(|r| r % 2 == 1));
        assert_eq!(odd.count(), 65);
        assert!(odd.contains(129) && !odd.contains(128) && !odd.contains(130));
        let low = RowSet::from_rows(130, 0..10);
        let mut odd_low = odd.clone();
        odd_low.intersect(&low);
        assert_eq!(odd_low.rows().collect::<Vec<_>>(), [1, 3, 5, 7, 9]);
        odd.unite(&low);
        assert_eq!(odd.count(), 70);
        odd.invert();
        assert_eq!(odd.rows().take(2).collect::<Vec<_>>(), [10, 12]);
        assert_eq!(odd.count(), 60, "the complement stays within the universe");
        assert_eq!(RowSet::full(130).count(), 130);
        let mut none = RowSet::full(130);
        none.invert();
        assert_eq!(none, RowSet::empty(130));
        let mut kept = RowSet::full(70);
        kept.retain(|row| row % 7 == 0);
        assert_eq!(kept.rows().collect::<Vec<_>>(), [0, 7, 14, 21, 28, 35, 42, 49, 56, 63]);
        assert_eq!(RowSet::from_rows(3, [5, 1]).rows().collect::<Vec<_>>(), [1]);
    }
}
