//! Search by meaning: a text into a vector whose direction says what the text is about, so that a
//! question asked in other words than a note's still finds it.
//!
//! The model ships inside the binary: a static table derived from all-MiniLM-L6-v2 by
//! `scripts/derive-model` (every vocabulary token passed through the transformer once, reduced by
//! PCA, weighted against frequent tokens, int8). A text's vector is the normalized sum of its
//! tokens' rows: no transformer runs here, so embedding costs microseconds, needs no download and no
//! native library. A leaf crate: it knows nothing of the journal.

pub mod table;
pub mod tokenize;

use std::sync::OnceLock;

use table::Table;
pub use table::TableError;
use tokenize::Vocabulary;

/// The built-in model's name and version, recorded beside the vectors it made: vectors of another
/// model are made again rather than mixed with these.
pub const BUILTIN: &str = "all-MiniLM-L6-v2 static-256 int8 v1";

static VOCABULARY: &str = include_str!("../model/vocab.txt");
static TABLE: &[u8] = include_bytes!("../model/table.bin");

/// Why a model could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("the model's vocabulary has no [UNK] token")]
    Vocabulary,
    #[error(transparent)]
    Table(#[from] TableError),
    #[error("the model makes vectors of {dims} numbers and the index keeps {wanted}")]
    Dims { dims: usize, wanted: usize },
}

/// A vocabulary and its table.
pub struct Model {
    name: &'static str,
    vocabulary: Vocabulary,
    table: Table<'static>,
}

impl Model {
    /// The model inside the binary, read once.
    pub fn builtin() -> Result<&'static Model, ModelError> {
        static BUILT: OnceLock<Result<Model, ModelError>> = OnceLock::new();
        BUILT
            .get_or_init(|| Model::parse(BUILTIN, VOCABULARY, TABLE))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A model from its vocabulary (one token a line) and table.
    pub fn parse(name: &'static str, vocabulary: &str, table: &'static [u8]) -> Result<Model, ModelError> {
        let vocabulary = Vocabulary::parse(vocabulary).ok_or(ModelError::Vocabulary)?;
        let table = Table::parse(table)?;
        if table.rows != vocabulary.len() {
            return Err(TableError::Vocabulary {
                table: table.rows,
                vocabulary: vocabulary.len(),
            }
            .into());
        }
        Ok(Model {
            name,
            vocabulary,
            table,
        })
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// How many numbers a vector has.
    pub fn dims(&self) -> usize {
        self.table.dims
    }

    /// The vector of `text`, of length one; all zeros for a text without a token.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0.0; self.table.dims];
        self.vocabulary.tokens(text, |id| {
            self.table.add(id, &mut sum);
        });
        let norm = sum.iter().map(|v| v * v).sum::<f32>().sqrt();
        if norm > 0.0 {
            sum.iter_mut().for_each(|v| *v /= norm);
        }
        sum
    }
}

/// The cosine of two vectors of length one.
pub fn similarity(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_model_loads_and_places_related_texts_near() {
        let model = Model::builtin().unwrap();
        assert_eq!(model.name(), BUILTIN);
        let sleep = model.embed("Awake again at 3 a.m., fell back asleep around five.");
        let insomnia = model.embed("insomnia");
        let bread = model.embed("Fed the sourdough starter and baked a loaf.");
        let norm: f32 = similarity(&sleep, &sleep);
        assert!((norm - 1.0).abs() < 1e-4, "vectors have length one: {norm}");
        assert!(
            similarity(&insomnia, &sleep) > similarity(&insomnia, &bread),
            "insomnia is nearer the sleepless night than the bread"
        );
        assert!(model.embed("  ").iter().all(|v| *v == 0.0), "no token, no direction");
    }

    #[test]
    fn the_builtin_files_are_the_ones_the_script_derived() {
        use sha2::{Digest, Sha256};
        let hex = |bytes: &[u8]| format!("{:x}", Sha256::digest(bytes));
        // As `scripts/derive-model` printed them (crates/meaning/model/README.md).
        assert_eq!(
            hex(VOCABULARY.as_bytes()),
            "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
        );
        assert_eq!(
            hex(TABLE),
            "41cca6023832be39c417d20abc1d0da28dc4ccaec33f766db8890913cc831077"
        );
    }

    #[test]
    fn a_table_that_does_not_fit_its_vocabulary_is_refused() {
        let error = Model::parse("test", "[UNK]\nb\n", TABLE).err().unwrap();
        assert!(
            matches!(error, ModelError::Table(TableError::Vocabulary { vocabulary: 2, .. })),
            "{error}"
        );
        assert_eq!(
            Model::parse("test", "a\n", TABLE).err().unwrap(),
            ModelError::Vocabulary
        );
    }
}
