//! The embedding table: one int8 row and one f32 scale per vocabulary token, as
//! `scripts/derive-model` writes it (`b"JEMB"`, u32 version 1, u32 rows, u32 dims, the scales, the
//! rows; little-endian).

/// Why a table could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("the embedding table does not start with JEMB version 1")]
    Header,
    #[error("the embedding table should hold {expected} bytes for {rows} rows of {dims}, and holds {actual}")]
    Length {
        rows: usize,
        dims: usize,
        expected: usize,
        actual: usize,
    },
    #[error("the embedding table has {table} rows and the vocabulary {vocabulary} tokens")]
    Vocabulary { table: usize, vocabulary: usize },
}

/// A parsed table, borrowing the bytes it was read from.
pub struct Table<'a> {
    pub rows: usize,
    pub dims: usize,
    scales: Vec<f32>,
    values: &'a [u8],
}

fn u32_at(bytes: &[u8], at: usize) -> Option<usize> {
    let word: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_le_bytes(word) as usize)
}

impl<'a> Table<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<Table<'a>, TableError> {
        if bytes.get(..4) != Some(b"JEMB".as_slice()) || u32_at(bytes, 4) != Some(1) {
            return Err(TableError::Header);
        }
        let (rows, dims) = u32_at(bytes, 8).zip(u32_at(bytes, 12)).ok_or(TableError::Header)?;
        let expected = rows
            .checked_mul(dims)
            .and_then(|values| values.checked_add(16 + rows * 4))
            .ok_or(TableError::Header)?;
        if bytes.len() != expected || dims == 0 {
            return Err(TableError::Length {
                rows,
                dims,
                expected,
                actual: bytes.len(),
            });
        }
        let scales = bytes[16..16 + rows * 4]
            .chunks_exact(4)
            .map(|word| f32::from_le_bytes([word[0], word[1], word[2], word[3]]))
            .collect();
        Ok(Table {
            rows,
            dims,
            scales,
            values: &bytes[16 + rows * 4..],
        })
    }

    /// Adds token `id`'s row, scaled, to `sum`; false for an id past the table.
    pub fn add(&self, id: u32, sum: &mut [f32]) -> bool {
        let id = id as usize;
        let Some(scale) = self.scales.get(id) else { return false };
        let row = &self.values[id * self.dims..(id + 1) * self.dims];
        for (total, value) in sum.iter_mut().zip(row) {
            *total += *scale * f32::from(*value as i8);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(f32, [i8; 2])]) -> Vec<u8> {
        let mut bytes = b"JEMB".to_vec();
        for word in [1u32, rows.len() as u32, 2] {
            bytes.extend(word.to_le_bytes());
        }
        for (scale, _) in rows {
            bytes.extend(scale.to_le_bytes());
        }
        for (_, row) in rows {
            bytes.extend(row.iter().map(|v| *v as u8));
        }
        bytes
    }

    #[test]
    fn rows_are_added_scaled() {
        let bytes = table(&[(0.5, [2, -4]), (2.0, [1, 127])]);
        let table = Table::parse(&bytes).unwrap();
        let mut sum = [0.0; 2];
        assert!(table.add(0, &mut sum) && table.add(1, &mut sum));
        assert_eq!(sum, [3.0, 252.0]);
        assert!(!table.add(2, &mut sum), "an id past the table adds nothing");
    }

    #[test]
    fn a_damaged_table_is_refused_with_what_is_wrong() {
        let bytes = table(&[(0.5, [2, -4])]);
        assert_eq!(
            Table::parse(&bytes[..bytes.len() - 1]).err().unwrap(),
            TableError::Length {
                rows: 1,
                dims: 2,
                expected: 22,
                actual: 21
            }
        );
        assert_eq!(Table::parse(b"JEMX").err().unwrap(), TableError::Header);
        let mut other = bytes.clone();
        other[4] = 2;
        assert_eq!(Table::parse(&other).err().unwrap(), TableError::Header);
        assert_eq!(Table::parse(&[]).err().unwrap(), TableError::Header);
    }
}
