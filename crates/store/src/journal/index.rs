//! The full-text index: tantivy, in `.index/` inside the journal.
//!
//! The index is derived data. Every document can be rebuilt from the files (`journal reindex`), so
//! deleting the folder loses nothing. Documents are keyed by the file's relative path: re-adding a file
//! first deletes its old document, which makes indexing idempotent after a crash.
//! Filters (category, facet, day) are indexed fields so BM25 top-k pruning still applies to the text.

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use tantivy::collector::{FilterCollector, TopDocs};
use tantivy::query::{
    AllQuery, Bm25StatisticsProvider, BooleanQuery, ConstScoreQuery, Occur, Query, QueryParser, RangeQuery, TermQuery,
};
use tantivy::schema::{FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TEXT, TantivyDocument, Value};
use tantivy::{DocAddress, DocSet, Index, IndexReader, IndexWriter, ReloadPolicy, Score, Term, doc};

use journal_meaning::Model;
pub use journal_meaning::ModelError;

mod fused;
mod nearest;
pub mod pattern;
mod phrase;
mod ranked;
mod reach;
mod snippet;
mod vectors;

pub use nearest::DIMS;
use nearest::{Nearest, VectorFields};
use ranked::{Filter, FilteredTop};

/// The longest snippet returned with a hit: a passage of at most this many bytes around the searched
/// words, or, when none is in the text, its first this many characters.
pub const SNIPPET_CHARS: usize = 800;

/// One document to index. A file may give several documents (an entity gives one per facet
/// description, so a facet-scoped search never sees text filed under another facet).
#[derive(Debug, Default)]
pub struct IndexDoc {
    /// The file the document comes from; removing the file removes all of its documents.
    pub file: String,
    /// What a hit points at (the file, or the file and a part of it).
    pub path: String,
    pub category: &'static str,
    pub day: Option<u64>,
    pub facets: Vec<String>,
    pub title: String,
    pub body: String,
    /// Words searched but never shown (a note's path and tags).
    pub extra: String,
    /// A note's frontmatter values as words, searched alone with `SearchQuery::metadata`.
    pub metadata: String,
    /// A note's tags, lowercased, each with its parents (`a/b` gives `a` and `a/b`).
    pub tags: Vec<String>,
    /// A note's folder and every folder above it (`a/b` gives `a` and `a/b`).
    pub folders: Vec<String>,
    /// A note's `notes::index_key`, for filters over notes' metadata.
    pub note_key: Option<u64>,
}

/// What to search for, and within which bounds.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    pub text: String,
    /// Only these categories (never empty when called from a tool).
    pub categories: Vec<String>,
    /// Only items filed under one of these facet names; None: no facet restriction.
    pub facets: Option<Vec<String>>,
    pub day_from: Option<u64>,
    pub day_to: Option<u64>,
    /// Only documents with every one of these tags (lowercase), and none of `not_tags`.
    pub tags: Vec<String>,
    pub not_tags: Vec<String>,
    /// Only documents in every one of these folders (or below), and in none of `not_folders`.
    pub folders: Vec<String>,
    pub not_folders: Vec<String>,
    /// Never these files (notes a reader may not see).
    pub not_files: Vec<String>,
    /// Only notes whose `index_key` passes this test (a filter over metadata); None: no such filter.
    pub note_filter: Option<NoteFilter>,
    /// How what passes the filters is ranked: by words, by meaning, or both.
    pub mode: Mode,
    /// Items like the one at this path instead of a question: ranked by meaning, nearest to the
    /// vectors of its documents that pass the filters (an entity's descriptions in the facets
    /// searched), never the item itself. The text should then hold no words.
    pub like: Option<String>,
    /// Only the words of notes' frontmatter values are searched (every word must match, by BM25),
    /// and hits carry no snippet.
    pub metadata: bool,
    pub offset: usize,
    pub limit: usize,
}

/// How a search ranks what passes its filters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// Every word must match, ranked by BM25: what search did before it knew meaning.
    #[default]
    AllWords,
    /// By words: the documents that hold every word first, then those that hold some, those that
    /// hold more of the question (rarer words weigh more) before those that hold less.
    Lexical,
    /// By meaning: nearest to the question first (`journal_meaning`'s model).
    Semantic,
    /// Both, fused (`fused`): a document found by words and by meaning rises above one found by
    /// either, and the words' side weighs by how much of the question a document holds.
    Hybrid,
}

/// What ranks the documents that pass a search's filters, in one ranked pass.
enum Ranking {
    AllWords,
    /// Some but not every word.
    SomeWords,
    /// Nearest in meaning to the question's vector; `every`: weigh every document that passes the
    /// filters, not only the candidates nearest by their first values (`nearest::Nearest`).
    Meaning {
        question: Vec<f32>,
        every: bool,
    },
}

/// How many documents a segment weighs in full in a search by meaning, at least: those nearest by
/// their first values (`vectors::ROUGH_DIMS`). Measured on the 10,000-segment demo journal
/// (docs/performance.md).
const MEANING_CANDIDATES: usize = 400;

/// ... and at least this many times the documents the search wants.
const MEANING_CANDIDATES_PER_WANTED: usize = 4;

/// The pool each side of a fused ranking brings: the page and what precedes it, in hundreds, so
/// that the pages of one search come from one pool (up to the hundredth hit).
fn pool(query: &SearchQuery) -> usize {
    (query.offset + query.limit + 1).div_ceil(100) * 100
}

/// One ranked document: its score and how it matched.
#[derive(Debug, Clone, Copy)]
struct Scored {
    address: DocAddress,
    score: Score,
    words: Option<f32>,
    meaning: Option<f32>,
}

/// A test of a note's `notes::index_key`, which a search's hits must pass.
#[derive(Clone)]
pub struct NoteFilter(pub Arc<dyn Fn(u64) -> bool + Send + Sync>);

impl std::fmt::Debug for NoteFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NoteFilter")
    }
}

/// One ranked hit.
#[derive(Debug, Clone)]
pub struct Hit {
    pub path: String,
    pub category: String,
    pub title: String,
    pub day: Option<u64>,
    pub snippet: String,
    /// The ranking's score (BM25, `1 + cosine`, or the fused score, by the search's mode).
    pub score: Score,
    /// How much of the question's words the hit holds, 0 to 1 (rarer words weigh more), when words found it.
    pub words: Option<f32>,
    /// Its similarity in meaning to the question (a cosine), when meaning found it.
    pub meaning: Option<f32>,
}

#[derive(Clone, Copy)]
struct Fields {
    file: Field,
    path: Field,
    category: Field,
    day: Field,
    facet: Field,
    title: Field,
    body: Field,
    text: Field,
    meta: Field,
    tag: Field,
    folder: Field,
    note: Field,
    vector: VectorFields,
}

/// The size of the stored documents' compressed blocks. Reading a hit's title and text for its
/// snippet decompresses its whole block: at tantivy's default of 16 KB that was a fifth of a search's
/// CPU; a block of 4 KB holds two or three transcript segments or notes (docs/performance.md). An
/// index made with another size is rebuilt when it is opened, as for another schema.
const STORE_BLOCK: usize = 4096;

/// An open index and its reader.
pub struct SearchIndex {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    /// Each segment's vectors as one block, for search by meaning (`vectors`).
    vectors: Arc<vectors::VectorCache>,
    /// The model that embeds documents and questions, or why it could not be loaded: then
    /// documents are indexed without vectors and every search is ranked by words.
    model: Result<&'static Model, ModelError>,
}

impl SearchIndex {
    /// Opens the index in `dir`, creating it when missing. A folder whose schema does not match
    /// (an older layout, or damage) is wiped and recreated: the catalog then re-adds every file.
    pub fn open(dir: &Path) -> tantivy::Result<(SearchIndex, bool)> {
        SearchIndex::open_with_model(dir, Model::builtin())
    }

    /// [`SearchIndex::open`] with `model` as the model of meaning (the tests' way to see what a
    /// journal does when its model cannot be loaded). A model whose vectors are not `DIMS` long
    /// is refused like one that cannot be read.
    pub fn open_with_model(
        dir: &Path,
        model: Result<&'static Model, ModelError>,
    ) -> tantivy::Result<(SearchIndex, bool)> {
        let model = model.and_then(|model| match model.dims() {
            nearest::DIMS => Ok(model),
            dims => Err(ModelError::Dims {
                dims,
                wanted: nearest::DIMS,
            }),
        });
        let schema = schema();
        crate::fsio::create_dir_all_durable(dir)?;
        let (index, fresh) = match Index::open_in_dir(dir) {
            Ok(index) if index.schema() == schema && index.settings().docstore_blocksize == STORE_BLOCK => {
                (index, false)
            }
            Ok(_) | Err(tantivy::TantivyError::OpenDirectoryError(_)) | Err(_) => {
                let _ = std::fs::remove_dir_all(dir);
                crate::fsio::create_dir_all_durable(dir)?;
                let settings = tantivy::IndexSettings {
                    docstore_blocksize: STORE_BLOCK,
                    ..tantivy::IndexSettings::default()
                };
                let index = Index::builder()
                    .schema(schema.clone())
                    .settings(settings)
                    .create_in_dir(dir)?;
                (index, true)
            }
        };
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        let fields = fields(&schema);
        let vectors = Arc::new(vectors::VectorCache::default());
        let index = SearchIndex {
            index,
            reader,
            fields,
            vectors,
            model,
        };
        Ok((index, fresh))
    }

    /// A writer for one batch of changes. Only one process may hold it at a time; another caller
    /// gets `LockBusy` and should leave the work to the holder.
    pub fn writer(&self) -> tantivy::Result<IndexWriter> {
        let writer = self.index.writer_with_num_threads(1, 64_000_000)?;
        // A process killed between writing a commit's files and its meta.json leaves files no
        // commit names, among them `<segment>.<opstamp>.del` for the very opstamp the next commit
        // takes: that commit would fail (FileAlreadyExists) and the journal would not open. They are
        // removed before this writer commits (tantivy knows its own files: `.managed.json`).
        writer.garbage_collect_files().wait()?;
        Ok(writer)
    }

    /// Adds a document; call `remove` for its file first when replacing.
    pub fn put(&self, writer: &IndexWriter, item: &IndexDoc) -> tantivy::Result<()> {
        let f = self.fields;
        let mut document = doc!(
            f.file => item.file.as_str(),
            f.path => item.path.as_str(),
            f.category => item.category,
            f.title => item.title.as_str(),
            f.body => item.body.as_str(),
        );
        // Every searched word goes into the one `text` field, so that a word is one posting list
        // and a search of one word one term scorer, which block-max WAND prunes well (a union over
        // a title, a body and a hidden field could skip no block that held a title match). The
        // title goes in twice: a word in the title counts as two more occurrences. Values are kept
        // apart by a position gap, so a phrase never spans two of them.
        for text in [
            item.title.as_str(),
            item.title.as_str(),
            item.body.as_str(),
            item.extra.as_str(),
        ] {
            if !text.is_empty() {
                document.add_text(f.text, text);
            }
        }
        if !item.metadata.is_empty() {
            document.add_text(f.meta, &item.metadata);
        }
        if let Some(day) = item.day {
            document.add_u64(f.day, day);
        }
        for facet in &item.facets {
            document.add_text(f.facet, facet);
        }
        for tag in &item.tags {
            document.add_text(f.tag, tag);
        }
        for folder in &item.folders {
            document.add_text(f.folder, folder);
        }
        if let Some(key) = item.note_key {
            document.add_u64(f.note, key);
        }
        // What the document is about, for a search by meaning: its title and text (the path and
        // tags are names, not meaning).
        if let Some(vector) = self
            .model
            .as_ref()
            .ok()
            .and_then(|m| nearest::embed(m, &item.title, &item.body))
        {
            vector.add_to(&mut document, &f.vector);
        }
        writer.add_document(document)?;
        Ok(())
    }

    /// Removes every document of a file.
    pub fn remove(&self, writer: &IndexWriter, file: &str) {
        writer.delete_term(Term::from_field_text(self.fields.file, file));
    }

    /// Removes every document (a reindex starting over).
    pub fn clear(&self, writer: &IndexWriter) -> tantivy::Result<()> {
        writer.delete_all_documents().map(|_| ())
    }

    /// Removes every document of a category (the notes of a vault the journal no longer serves).
    pub fn remove_category(&self, writer: &IndexWriter, category: &str) {
        writer.delete_term(Term::from_field_text(self.fields.category, category));
    }

    /// Commits a batch and makes it visible to searches in this process.
    pub fn commit(&self, mut writer: IndexWriter) -> tantivy::Result<()> {
        writer.commit()?;
        writer.wait_merging_threads()?;
        self.reload()
    }

    /// Picks up commits made by another process, and forgets the vectors of segments that are no
    /// longer in the index.
    pub fn reload(&self) -> tantivy::Result<()> {
        self.reader.reload()?;
        let searcher = self.reader.searcher();
        let kept: Vec<_> = searcher.segment_readers().iter().map(|r| r.segment_id()).collect();
        self.vectors.keep_only(&kept);
        Ok(())
    }

    /// The memory the vectors read for search by meaning take, in bytes.
    pub fn vector_bytes(&self) -> usize {
        self.vectors.bytes()
    }

    /// Number of documents visible to searches.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ranked hits with snippets, and whether more hits follow this page. A search of filters
    /// only lists what passes them, whatever its mode; one by meaning without a model to ask
    /// (`meaning_ready` says why) is ranked by words.
    pub fn search(&self, query: &SearchQuery) -> tantivy::Result<(Vec<Hit>, bool)> {
        let searcher = self.reader.searcher();
        if let Some(path) = &query.like {
            let Some(question) = self.vector_like(&searcher, query, path)? else {
                return Ok((Vec::new(), false));
            };
            let asked = vectors::Question::new(&question);
            let meaning = Ranking::Meaning { question, every: false };
            let (_, docs) = self.ranked(&searcher, query, &meaning, None)?;
            let scored = docs.into_iter().map(|(score, address)| Scored {
                address,
                score,
                words: None,
                meaning: Some(score - 1.0),
            });
            return self.hits(&searcher, query, &AllQuery, scored.collect(), Some(&asked));
        }
        let filters_only = sanitize(&query.text).trim().is_empty();
        let question = match query.mode {
            Mode::Semantic | Mode::Hybrid if !filters_only => self.question(&query.text),
            _ => None,
        };
        let mode = match (query.mode, &question) {
            (Mode::Semantic | Mode::Hybrid, None) => Mode::Lexical,
            (mode, _) => mode,
        };
        if filters_only || mode == Mode::AllWords || query.metadata {
            let (text_query, docs) = self.ranked(&searcher, query, &Ranking::AllWords, None)?;
            let scored = docs.into_iter().map(|(score, address)| Scored {
                address,
                score,
                words: (!filters_only).then_some(1.0),
                meaning: None,
            });
            return self.hits(&searcher, query, &*text_query, scored.collect(), None);
        }
        let everything = SearchQuery {
            offset: 0,
            limit: pool(query),
            ..query.clone()
        };
        let (words_query, lexical) = match mode {
            Mode::Semantic => (None, Vec::new()),
            _ => {
                let (words_query, lexical) = self.lexical(&searcher, &everything)?;
                (Some(words_query), lexical)
            }
        };
        let asked = question.as_deref().map(vectors::Question::new);
        let semantic = match question {
            Some(question) => {
                let meaning = Ranking::Meaning { question, every: false };
                let (_, docs) = self.ranked(&searcher, &everything, &meaning, None)?;
                docs.into_iter()
                    .map(|(score, address)| (address, score - 1.0))
                    .collect()
            }
            None => Vec::new(),
        };
        let ranked: Vec<Scored> = match mode {
            Mode::Semantic => semantic
                .into_iter()
                .map(|(address, cosine)| Scored {
                    address,
                    score: 1.0 + cosine,
                    words: None,
                    meaning: Some(cosine),
                })
                .collect(),
            Mode::Lexical => lexical,
            _ => {
                let words: Vec<(DocAddress, f32)> = lexical
                    .iter()
                    .map(|hit| (hit.address, hit.words.unwrap_or(0.0)))
                    .collect();
                fused::fuse(&words, &semantic)
                    .into_iter()
                    .map(|fused| Scored {
                        address: fused.address,
                        score: fused.score,
                        words: fused.words,
                        meaning: fused.meaning,
                    })
                    .collect()
            }
        };
        let page: Vec<Scored> = ranked.into_iter().skip(query.offset).take(query.limit + 1).collect();
        let snippets: Box<dyn Query> = words_query.unwrap_or_else(|| Box::new(AllQuery));
        self.hits(&searcher, query, &*snippets, page, asked.as_ref())
    }

    /// The question's vector: the words the query asks for as the parser reads them, so that a
    /// word or phrase excluded with `-` is left out as a search by words leaves it out; None when
    /// the model cannot be loaded or no word is left.
    fn question(&self, text: &str) -> Option<Vec<f32>> {
        let model = self.model.as_ref().ok()?;
        let parser = QueryParser::for_index(&self.index, vec![self.fields.text]);
        let parsed = parser.parse_query_lenient(&sanitize(text)).0;
        let mut terms = Vec::new();
        question_terms(&*parsed, &mut terms);
        let words: Vec<String> = terms
            .iter()
            .filter_map(|term| term.value().as_str().map(str::to_string))
            .collect();
        let vector = model.embed(&words.join(" "));
        vector.iter().any(|v| *v != 0.0).then_some(vector)
    }

    /// The direction of the item at `path` as `query`'s filters reach it: the sum of its
    /// documents' vectors (an entity has one a facet), of length one; None when none of them has a
    /// vector or passes.
    fn vector_like(
        &self,
        searcher: &tantivy::Searcher,
        query: &SearchQuery,
        path: &str,
    ) -> tantivy::Result<Option<Vec<f32>>> {
        let f = self.fields;
        let any = |terms: Vec<Box<dyn Query>>| -> Box<dyn Query> {
            Box::new(BooleanQuery::new(
                terms.into_iter().map(|t| (Occur::Should, t)).collect(),
            ))
        };
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, term(f.path, path))];
        clauses.push((
            Occur::Must,
            any(query.categories.iter().map(|c| term(f.category, c)).collect()),
        ));
        if let Some(facets) = &query.facets {
            clauses.push((Occur::Must, any(facets.iter().map(|c| term(f.facet, c)).collect())));
        }
        clauses.extend(query.not_files.iter().map(|file| (Occur::MustNot, term(f.file, file))));
        let found = searcher.search(&BooleanQuery::new(clauses), &tantivy::collector::DocSetCollector)?;
        let mut sum = vec![0.0f32; DIMS];
        for address in found {
            let reader = searcher.segment_reader(address.segment_ord);
            let vectors = self.vectors.segment(reader, nearest::VectorFields::columns)?;
            vectors.add_to(address.doc_id, &mut sum);
        }
        let norm = sum.iter().map(|v| v * v).sum::<f32>().sqrt();
        if norm == 0.0 {
            return Ok(None);
        }
        Ok(Some(sum.into_iter().map(|v| v / norm).collect()))
    }

    /// Whether a search by meaning can be answered: the model loaded (the built-in one is inside
    /// the binary, so only a damaged binary says no), or why not.
    pub fn meaning_ready(&self) -> Result<(), &ModelError> {
        self.model.as_ref().map(|_| ())
    }

    /// The ranking by words: the documents holding every word (best first), then those holding
    /// some, more of the question first; each with how much of the question it holds. Returns the
    /// query of any of the words, for snippets.
    fn lexical(
        &self,
        searcher: &tantivy::Searcher,
        query: &SearchQuery,
    ) -> tantivy::Result<(Box<dyn Query>, Vec<Scored>)> {
        let wanted = query.offset + query.limit + 1;
        let (all_query, every) = self.ranked(searcher, query, &Ranking::AllWords, None)?;
        let mut ranked: Vec<Scored> = every
            .into_iter()
            .map(|(score, address)| Scored {
                address,
                score,
                words: Some(1.0),
                meaning: None,
            })
            .collect();
        let (any_query, some) = if ranked.len() < wanted {
            let rest = SearchQuery {
                limit: wanted - ranked.len(),
                ..query.clone()
            };
            self.ranked(searcher, &rest, &Ranking::SomeWords, None)?
        } else {
            (all_query, Vec::new())
        };
        // Weighed by what the caller may reach: a hidden note's words must not move a weight.
        let reach = if query.not_files.is_empty() {
            None
        } else {
            Some(reach::Reach::new(searcher, self.fields.file, &query.not_files)?).filter(reach::Reach::hides_any)
        };
        let stats: &dyn Bm25StatisticsProvider = match &reach {
            Some(reach) => reach,
            None => searcher,
        };
        let coverage = self.coverage(searcher, stats, &*any_query, &some)?;
        let mut partial: Vec<Scored> = some
            .into_iter()
            .zip(coverage)
            .map(|((score, address), words)| Scored {
                address,
                score,
                words: Some(words),
                meaning: None,
            })
            .collect();
        partial.sort_by(|a, b| {
            b.words
                .unwrap_or(0.0)
                .total_cmp(&a.words.unwrap_or(0.0))
                .then(b.score.total_cmp(&a.score))
                .then(a.address.cmp(&b.address))
        });
        ranked.extend(partial);
        Ok((any_query, ranked))
    }

    /// How much of `words`' terms each document holds: the share of their weight (BM25's IDF, so a
    /// rare word counts for more than a common one) found in the document.
    fn coverage(
        &self,
        searcher: &tantivy::Searcher,
        stats: &dyn Bm25StatisticsProvider,
        words: &dyn Query,
        docs: &[(Score, DocAddress)],
    ) -> tantivy::Result<Vec<f32>> {
        let text = self.fields.text;
        let mut terms: Vec<Term> = Vec::new();
        question_terms(words, &mut terms);
        terms.retain(|term| term.field() == text);
        let total_docs = stats.total_num_docs()? as f32;
        let mut weights = Vec::with_capacity(terms.len());
        for term in &terms {
            let frequency = stats.doc_freq(term)? as f32;
            weights.push((1.0 + (total_docs - frequency + 0.5) / (frequency + 0.5)).ln());
        }
        let total: f32 = weights.iter().sum();
        let mut found = vec![0.0f32; docs.len()];
        if total <= 0.0 {
            return Ok(found);
        }
        // Each segment's postings of each word are read once, its documents sought in order.
        let mut order: Vec<usize> = (0..docs.len()).collect();
        order.sort_by_key(|i| docs[*i].1);
        for (term, weight) in terms.iter().zip(&weights) {
            let mut postings: Option<(u32, tantivy::postings::SegmentPostings)> = None;
            for &i in &order {
                let address = docs[i].1;
                if postings
                    .as_ref()
                    .is_none_or(|(segment, _)| *segment != address.segment_ord)
                {
                    let reader = searcher.segment_reader(address.segment_ord);
                    let read = reader
                        .inverted_index(text)?
                        .read_postings(term, IndexRecordOption::Basic)?;
                    postings = read
                        .map(|p| (address.segment_ord, p))
                        .or(Some((address.segment_ord, tantivy::postings::SegmentPostings::empty())));
                }
                if let Some((_, postings)) = postings.as_mut()
                    && postings.doc() <= address.doc_id
                    && postings.seek(address.doc_id) == address.doc_id
                {
                    found[i] += weight;
                }
            }
        }
        Ok(found.into_iter().map(|weight| weight / total).collect())
    }

    /// The text as a query ranked as `ranking` says, and the page of its best documents that pass
    /// the filters (one more than the page when more follow). `lead` forces which side leads, for tests.
    fn ranked(
        &self,
        searcher: &tantivy::Searcher,
        query: &SearchQuery,
        ranking: &Ranking,
        lead: Option<Lead>,
    ) -> tantivy::Result<Ranked> {
        let f = self.fields;
        // The words are looked for in the searched text, or in frontmatter values alone.
        let searched = if query.metadata { f.meta } else { f.text };
        let mut parser = QueryParser::for_index(&self.index, vec![searched]);
        parser.set_conjunction_by_default();
        // Lenient: an agent's stray quote or colon must not turn into an error or a field lookup.
        let words = sanitize(&query.text);
        let all_words = || parser.parse_query_lenient(&words).0;
        let mut excluded: Vec<Box<dyn Query>> = Vec::new();
        let mut nearest: Option<Nearest> = None;
        let by_meaning = matches!(ranking, Ranking::Meaning { .. });
        let text_query: Box<dyn Query> = if words.trim().is_empty() && !by_meaning {
            // A search of filters only (`tag:x`): every document that passes them.
            Box::new(AllQuery)
        } else {
            match ranking {
                Ranking::AllWords => all_words(),
                Ranking::SomeWords => {
                    // Any of the words (the parser's default), but not every one: those came first.
                    let any = QueryParser::for_index(&self.index, vec![searched]);
                    let some = any.parse_query_lenient(&words).0;
                    Box::new(BooleanQuery::new(vec![
                        (Occur::Must, some),
                        (Occur::MustNot, all_words()),
                    ]))
                }
                Ranking::Meaning { question, every } => {
                    // Words excluded with `-word` are excluded by meaning too.
                    if let Some(boolean) = all_words().as_any().downcast_ref::<BooleanQuery>() {
                        excluded.extend(
                            boolean
                                .clauses()
                                .iter()
                                .filter(|(occur, _)| *occur == Occur::MustNot)
                                .map(|(_, clause)| clause.box_clone()),
                        );
                    }
                    let wanted = query.offset + query.limit + 1;
                    let candidates = (wanted * MEANING_CANDIDATES_PER_WANTED).max(MEANING_CANDIDATES);
                    let near = Nearest::new(
                        question.clone(),
                        Arc::clone(&self.vectors),
                        (!every).then_some(candidates),
                    );
                    nearest = Some(near.clone());
                    Box::new(near)
                }
            }
        };
        let filter = |any_of: Vec<Box<dyn Query>>, negated: bool| Filter { any_of, negated };
        let mut filters: Vec<Filter> = Vec::new();
        // A filter that every document passes only slows the search down, so a query that may see
        // every category has none.
        let every_category = super::CATEGORIES
            .iter()
            .all(|c| query.categories.iter().any(|q| q == c));
        if !every_category {
            filters.push(filter(
                query.categories.iter().map(|c| term(f.category, c)).collect(),
                false,
            ));
        }
        if let Some(facets) = &query.facets {
            filters.push(filter(facets.iter().map(|c| term(f.facet, c)).collect(), false));
        }
        if query.day_from.is_some() || query.day_to.is_some() {
            let bound =
                |day: Option<u64>| day.map_or(Bound::Unbounded, |d| Bound::Included(Term::from_field_u64(f.day, d)));
            let range: Box<dyn Query> = Box::new(RangeQuery::new(bound(query.day_from), bound(query.day_to)));
            filters.push(filter(vec![range], false));
        }
        for tag in &query.tags {
            filters.push(filter(vec![term(f.tag, tag)], false));
        }
        for folder in &query.folders {
            filters.push(filter(vec![term(f.folder, folder)], false));
        }
        for tag in &query.not_tags {
            filters.push(filter(vec![term(f.tag, tag)], true));
        }
        for folder in &query.not_folders {
            filters.push(filter(vec![term(f.folder, folder)], true));
        }
        if !query.not_files.is_empty() {
            filters.push(filter(query.not_files.iter().map(|p| term(f.file, p)).collect(), true));
        }
        if !excluded.is_empty() {
            filters.push(filter(excluded, true));
        }
        if let Some(path) = &query.like {
            // Never the item itself.
            filters.push(filter(vec![term(f.path, path)], true));
        }
        // Only the top of the ranking is collected (counting every match as well would switch off
        // the pruning that lets a frequent word skip most of its postings), one more than the page
        // to tell whether more follow.
        let wanted = query.offset + query.limit + 1;
        let lead = match lead {
            Some(lead) => lead,
            // Every document with a vector is scored: the filters test only what could enter the top.
            None if words.trim().is_empty() && !by_meaning => Lead::Filters,
            None => leader(searcher, &filters)?,
        };
        if let (Lead::Filters, Ranking::Meaning { question, every: false }) = (lead, ranking) {
            // Filters few documents pass lead: those are weighed, every one of them.
            let every = Ranking::Meaning {
                question: question.clone(),
                every: true,
            };
            return self.ranked(searcher, query, &every, Some(Lead::Filters));
        }
        // Scored by what the caller may reach: the notes hidden from it count for no word (`reach`).
        let reach = if query.not_files.is_empty() {
            None
        } else {
            Some(reach::Reach::new(searcher, f.file, &query.not_files)?).filter(reach::Reach::hides_any)
        };
        let docs = if lead == Lead::Text {
            // The text leads and the filters are tested only on what could enter the top; so are
            // its phrases, the words of which are what leads (see `phrase`).
            let scored = match phrase::split(&*text_query) {
                Some((words, phrases)) => {
                    filters.extend(phrases);
                    words
                }
                None => text_query.box_clone(),
            };
            let top = FilteredTop::new(searcher, wanted, &filters, query.note_filter.clone())?;
            let mut docs = match &reach {
                Some(reach) => searcher.search_with_statistics_provider(&*scored, &top, reach)?,
                None => searcher.search(&*scored, &top)?,
            };
            docs.drain(..query.offset.min(docs.len()));
            if let (Some(nearest), Ranking::Meaning { question, .. }) = (&nearest, ranking)
                && docs.len() <= query.limit
                && nearest.narrowed()
            {
                // The filters left fewer of the candidates than the page wants: every document
                // that passes them is weighed.
                let every = Ranking::Meaning {
                    question: question.clone(),
                    every: true,
                };
                return self.ranked(searcher, query, &every, Some(Lead::Text));
            }
            docs
        } else {
            // A filter with few documents leads a conjunction (or every document matches the
            // empty text): each of its documents is checked against the rest.
            let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, text_query.box_clone())];
            for Filter { any_of, negated } in filters {
                if negated {
                    clauses.extend(any_of.into_iter().map(|query| (Occur::MustNot, query)));
                } else {
                    // A filter adds nothing to the score, whichever side leads.
                    let any = BooleanQuery::new(any_of.into_iter().map(|query| (Occur::Should, query)).collect());
                    clauses.push((Occur::Must, Box::new(ConstScoreQuery::new(Box::new(any), 0.0))));
                }
            }
            let top = TopDocs::with_limit(query.limit + 1)
                .and_offset(query.offset)
                .order_by_score();
            let combined: Box<dyn Query> = if clauses.len() == 1 {
                text_query.box_clone()
            } else {
                Box::new(BooleanQuery::new(clauses))
            };
            match (&query.note_filter, &reach) {
                (None, None) => searcher.search(&*combined, &top)?,
                (None, Some(reach)) => searcher.search_with_statistics_provider(&*combined, &top, reach)?,
                (Some(NoteFilter(passes)), reach) => {
                    let passes = Arc::clone(passes);
                    let filtered = FilterCollector::new("note".to_string(), move |key: u64| passes(key), top);
                    match reach {
                        Some(reach) => searcher.search_with_statistics_provider(&*combined, &filtered, reach)?,
                        None => searcher.search(&*combined, &filtered)?,
                    }
                }
            }
        };
        Ok((text_query, docs))
    }

    /// The hits of a page of ranked documents, with their snippets: the passage where the searched
    /// words weigh most; for a document found by meaning alone, the start of its section nearest
    /// the question (`asked`).
    fn hits(
        &self,
        searcher: &tantivy::Searcher,
        query: &SearchQuery,
        text_query: &dyn Query,
        docs: Vec<Scored>,
        asked: Option<&vectors::Question>,
    ) -> tantivy::Result<(Vec<Hit>, bool)> {
        let f = self.fields;
        let more = docs.len() > query.limit;
        let words = self.searched_words(searcher, text_query)?;
        let mut hits = Vec::with_capacity(query.limit);
        for scored in docs.into_iter().take(query.limit) {
            let document: TantivyDocument = searcher.doc(scored.address)?;
            let text = |field: Field| document.get_first(field).and_then(|v| v.as_str()).unwrap_or("");
            let body = text(f.body);
            let mut snippet = words.best(body, SNIPPET_CHARS);
            if query.metadata {
                // A search of frontmatter values shows none of the text.
                snippet = "";
            } else if snippet.is_empty() {
                let start = match asked {
                    Some(asked) if scored.meaning.is_some() => {
                        let reader = searcher.segment_reader(scored.address.segment_ord);
                        let vectors = self.vectors.segment(reader, VectorFields::columns)?;
                        vectors.nearest(scored.address.doc_id, asked).1 as usize
                    }
                    _ => 0,
                };
                let body = body.get(start..).unwrap_or(body);
                snippet = body
                    .char_indices()
                    .nth(SNIPPET_CHARS)
                    .map_or(body, |(at, _)| &body[..at]);
            }
            hits.push(Hit {
                path: text(f.path).to_string(),
                category: text(f.category).to_string(),
                title: text(f.title).to_string(),
                day: document.get_first(f.day).and_then(|v| v.as_u64()),
                snippet: snippet.trim().to_string(),
                score: scored.score,
                words: scored.words,
                meaning: scored.meaning,
            });
        }
        Ok((hits, more))
    }

    /// The words a query searches, each weighed as tantivy's snippets weigh them: rarer words more.
    fn searched_words(&self, searcher: &tantivy::Searcher, text_query: &dyn Query) -> tantivy::Result<snippet::Words> {
        let mut terms: Vec<Term> = Vec::new();
        text_query.query_terms(&mut |term, _| {
            if term.field() == self.fields.text && !terms.contains(term) {
                terms.push(term.clone());
            }
        });
        let mut words = Vec::with_capacity(terms.len());
        for term in terms {
            let doc_freq = searcher.doc_freq(&term)?;
            if let Some(word) = term.value().as_str()
                && doc_freq > 0
            {
                words.push((word.to_string(), 1.0 / (1.0 + doc_freq as Score)));
            }
        }
        Ok(snippet::Words::new(words))
    }
}

/// A query for the documents holding `text` as a whole term of `field` (a filter's term).
fn term(field: Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(
        Term::from_field_text(field, text),
        IndexRecordOption::Basic,
    ))
}

fn schema() -> Schema {
    let mut builder = Schema::builder();
    builder.add_text_field("file", STRING);
    builder.add_text_field("path", STRING | STORED);
    builder.add_text_field("category", STRING | STORED);
    builder.add_u64_field("day", INDEXED | STORED);
    builder.add_text_field("facet", STRING);
    builder.add_text_field("title", STORED);
    builder.add_text_field("body", STORED);
    builder.add_text_field("text", TEXT);
    builder.add_text_field("meta", TEXT);
    builder.add_text_field("tag", STRING);
    builder.add_text_field("folder", STRING);
    builder.add_u64_field("note", FAST);
    nearest::add_fields(&mut builder);
    builder.build()
}

fn fields(schema: &Schema) -> Fields {
    let get = |name: &str| schema.get_field(name).expect("the schema defines every field it names");
    Fields {
        file: get("file"),
        path: get("path"),
        category: get("category"),
        day: get("day"),
        facet: get("facet"),
        title: get("title"),
        body: get("body"),
        text: get("text"),
        meta: get("meta"),
        tag: get("tag"),
        folder: get("folder"),
        note: get("note"),
        vector: VectorFields::of(schema).expect("the schema defines every field it names"),
    }
}

/// The text as a query, and the best documents with their scores.
type Ranked = (Box<dyn Query>, Vec<(Score, DocAddress)>);

/// Which side of a filtered search finds the candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lead {
    /// The text, with its pruning; the filters test what could enter the top.
    Text,
    /// A conjunction of the text and the filters, led by the rarest.
    Filters,
}

/// Which side leads a search with words: the filters when one of them holds few documents (an
/// eighth of the index or fewer), since then leading with it costs less. Only filters of terms are
/// counted.
fn leader(searcher: &tantivy::Searcher, filters: &[Filter]) -> tantivy::Result<Lead> {
    // A frontmatter filter (`note_filter`) cannot lead: it is a test of each document, cheapest
    // where the text's pruning leaves the fewest to test.
    let few = searcher.num_docs() / 8;
    for filter in filters.iter().filter(|filter| !filter.negated) {
        let mut count = 0u64;
        for query in &filter.any_of {
            let Some(term) = query.as_any().downcast_ref::<TermQuery>().map(TermQuery::term) else {
                count = u64::MAX;
                break;
            };
            count = count.saturating_add(searcher.doc_freq(term)?);
        }
        if count <= few {
            return Ok(Lead::Filters);
        }
    }
    Ok(Lead::Text)
}

/// Whether a search of `text` is pruned to the few documents that can make the top: it has words
/// (a phrase is searched as its words, see `phrase`). A search of filters alone may read every
/// document that passes them.
pub fn is_pruned(text: &str) -> bool {
    !sanitize(text).trim().is_empty()
}

/// Keeps words, quotes and `-` negation; drops the parser's field syntax so that `path:x` or
/// `title:y` typed by an agent is searched as words, not as a field lookup.
/// The terms a question asks for: every term of the query but those of its excluded clauses
/// (`-word`, and the every-word query a search of some words excludes), each once.
fn question_terms(query: &dyn Query, terms: &mut Vec<Term>) {
    match query.as_any().downcast_ref::<BooleanQuery>() {
        Some(boolean) => {
            for (occur, clause) in boolean.clauses() {
                if *occur != Occur::MustNot {
                    question_terms(&**clause, terms);
                }
            }
        }
        None => query.query_terms(&mut |term, _| {
            if !terms.contains(term) {
                terms.push(term.clone());
            }
        }),
    }
}

fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '"' || c == '-' || c == '\'' {
                c
            } else {
                ' '
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(path: &str, category: &'static str, day: u64, facets: &[&str], body: &str) -> IndexDoc {
        IndexDoc {
            file: path.into(),
            path: path.into(),
            category,
            day: Some(day),
            facets: facets.iter().map(|s| s.to_string()).collect(),
            title: path.into(),
            body: body.into(),
            ..IndexDoc::default()
        }
    }

    /// Search by meaning ranks the note a question is about first, though they share no word, and
    /// runs under the same filters as words: a hidden note or one of another category is never a
    /// neighbour.
    /// A long note is found by what one of its sections is about, and its snippet starts there.
    #[test]
    fn a_long_note_is_found_by_a_section_and_shows_it() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = SearchIndex::open(dir.path()).unwrap();
        let writer = index.writer().unwrap();
        let garden = "Planted tomatoes, basil and lettuce in the raised bed; slugs ate the lettuce. ".repeat(30);
        let books = "Finished the novel about the lighthouse keeper; the ending was quiet and sad. ".repeat(30);
        let car = "The mechanic replaced the brake pads; the clutch needs work before winter.";
        let body = format!("# Garden\n{garden}\n\n# Reading\n{books}\n\n# Car\n{car}\n");
        index
            .put(&writer, &item("week.md", "notes", 20_261_101, &[], &body))
            .unwrap();
        let other = "Booked flights to Lisbon for May and a hotel with a view of the river.";
        index
            .put(&writer, &item("trip.md", "notes", 20_261_101, &[], other))
            .unwrap();
        index.commit(writer).unwrap();
        let query = SearchQuery {
            text: "garage fixed my vehicle".into(),
            categories: vec!["notes".into()],
            mode: Mode::Semantic,
            limit: 2,
            ..SearchQuery::default()
        };
        let (hits, _) = index.search(&query).unwrap();
        assert_eq!(hits[0].path, "week.md", "{hits:?}");
        assert!(hits[0].snippet.starts_with("# Car"), "{:?}", hits[0].snippet);
        assert!(hits[0].meaning.unwrap() > hits[1].meaning.unwrap());
    }

    #[test]
    fn items_like_one_are_its_neighbours_in_meaning_never_itself_nor_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = SearchIndex::open(dir.path()).unwrap();
        let writer = index.writer().unwrap();
        let notes = [
            (
                "sleep.md",
                "Awake again at 3 a.m. staring at the ceiling, fell back asleep around five.",
            ),
            (
                "insomnia.md",
                "Another night without sleep: lay awake for hours and dozed off at dawn.",
            ),
            (
                "bread.md",
                "Fed the starter twice; the loaf came out with a dark crust and an open crumb.",
            ),
            (
                "car.md",
                "The mechanic replaced the brake pads and said the clutch needs work.",
            ),
        ];
        for (file, body) in notes {
            let doc = item(file, "notes", 20_261_101, &["work", "family"], body);
            index.put(&writer, &doc).unwrap();
        }
        // An entity with a description in each of two facets: only the reached one counts.
        let work = IndexDoc {
            file: "e/ada#work".into(),
            ..item(
                "e/ada",
                "entities",
                20_261_101,
                &["work"],
                "Bakes sourdough loaves with a rye starter.",
            )
        };
        let family = IndexDoc {
            file: "e/ada#family".into(),
            ..item(
                "e/ada",
                "entities",
                20_261_101,
                &["family"],
                "Fixes cars and changes brake pads.",
            )
        };
        index.put(&writer, &work).unwrap();
        index.put(&writer, &family).unwrap();
        index.commit(writer).unwrap();
        let like = |path: &str, categories: &[&str], facets: Option<&[&str]>, not_files: &[&str]| {
            let query = SearchQuery {
                like: Some(path.into()),
                categories: categories.iter().map(|c| c.to_string()).collect(),
                facets: facets.map(|f| f.iter().map(|c| c.to_string()).collect()),
                not_files: not_files.iter().map(|f| f.to_string()).collect(),
                limit: 10,
                ..SearchQuery::default()
            };
            let (hits, _) = index.search(&query).unwrap();
            hits.into_iter().map(|hit| hit.path).collect::<Vec<_>>()
        };
        let near = like("sleep.md", &["notes"], None, &[]);
        assert_eq!(near[0], "insomnia.md", "{near:?}");
        assert!(!near.contains(&"sleep.md".to_string()), "never itself: {near:?}");
        let hidden = like("sleep.md", &["notes"], None, &["insomnia.md"]);
        assert!(!hidden.contains(&"insomnia.md".to_string()), "{hidden:?}");
        assert!(
            like("sleep.md", &["notes"], None, &["sleep.md"]).is_empty(),
            "a hidden item has no neighbours"
        );
        let as_baker = like("e/ada", &["entities", "notes"], Some(&["work"]), &[]);
        assert_eq!(as_baker.first().map(String::as_str), Some("bread.md"), "{as_baker:?}");
        let as_mechanic = like("e/ada", &["entities", "notes"], Some(&["family"]), &[]);
        assert_eq!(
            as_mechanic.first().map(String::as_str),
            Some("car.md"),
            "{as_mechanic:?}"
        );
    }

    /// Past `MEANING_CANDIDATES` documents a segment, a search by meaning weighs only the nearest by
    /// their first values; a filter that passes documents far from the question still gets a full page.
    #[test]
    fn filters_that_pass_few_candidates_still_fill_the_page() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = SearchIndex::open(dir.path()).unwrap();
        let writer = index.writer().unwrap();
        let sport = ["marathon", "kilometres", "pace", "tempo run", "long run", "race day"];
        let kitchen = ["sourdough", "starter", "loaf", "crumb", "oven", "flour"];
        let put = |i: usize, facet: &str, words: &[&str]| {
            let body = format!(
                "Entry {i}: the {} and the {} went well today.",
                words[i % words.len()],
                words[(i / words.len()) % words.len()]
            );
            let doc = item(&format!("{facet}/{i}"), "transcripts", 20_261_101, &[facet], &body);
            index.put(&writer, &doc).unwrap();
        };
        for i in 0..1200 {
            put(i, "sport", &sport);
        }
        for i in 0..400 {
            put(i, "kitchen", &kitchen);
        }
        for i in 0..40 {
            put(i, "bakery", &kitchen);
        }
        index.commit(writer).unwrap();
        let search = |facet: &str| {
            let query = SearchQuery {
                text: "training for a marathon".into(),
                categories: vec!["transcripts".into()],
                facets: Some(vec![facet.to_string()]),
                mode: Mode::Semantic,
                limit: 10,
                ..SearchQuery::default()
            };
            index.search(&query).unwrap()
        };
        let (near, _) = search("sport");
        assert_eq!(near.len(), 10);
        // A quarter of the documents, none near the question: the codes' candidates hold few of
        // them, so every document that passes is weighed.
        let (far, more) = search("kitchen");
        assert_eq!(far.len(), 10, "{far:?}");
        assert!(more);
        assert!(far.iter().all(|hit| hit.path.starts_with("kitchen/")), "{far:?}");
        // Few enough documents to lead: each is weighed.
        let (few, more) = search("bakery");
        assert_eq!(few.len(), 10, "{few:?}");
        assert!(more);
        assert!(index.vector_bytes() >= 1640 * 260, "{}", index.vector_bytes());
    }

    #[test]
    fn without_its_model_the_index_ranks_by_words_and_says_why() {
        // A table cut short, as a damaged build would carry it; and a sound one whose vectors
        // are of another length than the index keeps.
        let table = |rows: u32, dims: u32, values: usize| -> &'static [u8] {
            let mut bytes = b"JEMB".to_vec();
            for word in [1, rows, dims] {
                bytes.extend(word.to_le_bytes());
            }
            bytes.extend(std::iter::repeat_n(0, rows as usize * 4 + values));
            Box::leak(bytes.into_boxed_slice())
        };
        let vocabulary = "[UNK]\nsleep\n";
        let cut = Model::parse("cut", vocabulary, table(2, 256, 100)).map(|m| &*Box::leak(Box::new(m)));
        let narrow = Model::parse("narrow", vocabulary, table(2, 2, 4)).map(|m| &*Box::leak(Box::new(m)));
        for (model, why) in [
            (
                cut,
                "the embedding table should hold 536 bytes for 2 rows of 256, and holds 124",
            ),
            (narrow, "the model makes vectors of 2 numbers and the index keeps 256"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let (index, _) = SearchIndex::open_with_model(dir.path(), model).unwrap();
            assert_eq!(index.meaning_ready().unwrap_err().to_string(), why);
            let writer = index.writer().unwrap();
            let sleepless = "Awake again at 3 a.m., fell back asleep around five.";
            index
                .put(&writer, &item("sleep.md", "notes", 20_261_101, &[], sleepless))
                .unwrap();
            index
                .put(&writer, &item("bread.md", "notes", 20_261_101, &[], "Baked bread."))
                .unwrap();
            index.commit(writer).unwrap();
            let like = SearchQuery {
                like: Some("bread.md".into()),
                categories: vec!["notes".into()],
                limit: 10,
                ..SearchQuery::default()
            };
            assert!(
                index.search(&like).unwrap().0.is_empty(),
                "no vector is made without the model"
            );
            for mode in [Mode::Hybrid, Mode::Semantic] {
                let search = |text: &str| {
                    let query = SearchQuery {
                        text: text.into(),
                        categories: vec!["notes".into()],
                        mode,
                        limit: 10,
                        ..SearchQuery::default()
                    };
                    index.search(&query).unwrap().0
                };
                let found = search("fell asleep at night");
                assert_eq!(found.len(), 1, "{mode:?}: the words still find: {found:?}");
                assert_eq!(found[0].path, "sleep.md");
                assert_eq!(found[0].meaning, None, "{mode:?}: nothing was ranked by meaning");
                assert!(found[0].words.is_some());
                assert!(search("insomnia").is_empty(), "{mode:?}: no word, no answer by meaning");
            }
        }
    }

    #[test]
    fn meaning_finds_a_note_in_other_words_within_the_filters() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = SearchIndex::open(dir.path()).unwrap();
        let writer = index.writer().unwrap();
        let notes = [
            (
                "sleep.md",
                "Awake again at 3 a.m. staring at the ceiling, fell back asleep around five.",
            ),
            (
                "bread.md",
                "Fed the starter twice; the loaf came out with a dark crust and an open crumb.",
            ),
            (
                "car.md",
                "The mechanic replaced the brake pads and said the clutch needs work.",
            ),
            (
                "cat.md",
                "Miso would not eat and hid under the bed; the vet gave us pills.",
            ),
        ];
        for (file, body) in notes {
            index.put(&writer, &item(file, "notes", 20_261_101, &[], body)).unwrap();
        }
        let segment = "Could not sleep, lay awake half the night and dozed off at dawn.";
        index
            .put(&writer, &item("t", "transcripts", 20_261_102, &[], segment))
            .unwrap();
        let empty = IndexDoc {
            title: String::new(),
            ..item("empty.md", "notes", 20_261_101, &[], "")
        };
        index.put(&writer, &empty).unwrap();
        index.commit(writer).unwrap();
        let search = |text: &str, categories: &[&str], not_files: &[&str]| {
            let query = SearchQuery {
                text: text.into(),
                categories: categories.iter().map(|c| c.to_string()).collect(),
                not_files: not_files.iter().map(|f| f.to_string()).collect(),
                mode: Mode::Semantic,
                limit: 10,
                ..SearchQuery::default()
            };
            let (hits, _) = index.search(&query).unwrap();
            hits.into_iter().map(|hit| hit.path).collect::<Vec<_>>()
        };
        let question = "trouble sleeping at night";
        let found = search(question, &["notes"], &[]);
        assert_eq!(found[0], "sleep.md", "{found:?}");
        assert_eq!(
            found.len(),
            4,
            "every note with a vector, the empty one has none: {found:?}"
        );
        assert_eq!(search("vehicle repairs", &["notes"], &[])[0], "car.md");
        let hidden = search(question, &["notes"], &["sleep.md"]);
        assert!(!hidden.contains(&"sleep.md".to_string()), "{hidden:?}");
        assert_eq!(hidden.len(), 3);
        let both = search(question, &["notes", "transcripts"], &["sleep.md"]);
        assert_eq!(both[0], "t", "the transcript is next in meaning: {both:?}");
        assert_eq!(search(question, &["transcripts"], &[]), ["t"]);
        // A word excluded with `-` excludes by meaning too.
        let excluded = search(&format!("{question} -ceiling"), &["notes"], &[]);
        assert!(!excluded.contains(&"sleep.md".to_string()), "{excluded:?}");
        assert_eq!(excluded.len(), 3);
    }

    /// Recall on the labelled sets (tests/data/meaning) through the index, in each mode: the first
    /// place and the top five for questions in other words than their note, and for names.
    fn recall(set: &str, mode: Mode) -> [(usize, usize, usize); 2] {
        let read = |set: &str| -> serde_json::Value {
            let path = format!("{}/../../tests/data/meaning/{set}", env!("CARGO_MANIFEST_DIR"));
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
        };
        let mut data = read(set);
        if let Some(from) = data["notes_from"].as_str() {
            data["notes"] = read(from)["notes"].clone();
        }
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = SearchIndex::open(dir.path()).unwrap();
        let writer = index.writer().unwrap();
        for note in data["notes"].as_array().unwrap() {
            let id = note["id"].as_str().unwrap();
            let doc = IndexDoc {
                title: note["title"].as_str().unwrap().into(),
                ..item(id, "notes", 20_261_101, &[], note["text"].as_str().unwrap())
            };
            index.put(&writer, &doc).unwrap();
        }
        index.commit(writer).unwrap();
        let mut found = [(0, 0, 0); 2];
        for question in data["queries"].as_array().unwrap() {
            let query = SearchQuery {
                text: question["q"].as_str().unwrap().into(),
                categories: vec!["notes".into()],
                mode,
                limit: 5,
                ..SearchQuery::default()
            };
            let (hits, _) = index.search(&query).unwrap();
            let place = hits
                .iter()
                .position(|hit| hit.path == question["target"].as_str().unwrap());
            let kind = usize::from(question["kind"] == "name");
            found[kind].0 += usize::from(place == Some(0));
            found[kind].1 += usize::from(place.is_some());
            found[kind].2 += 1;
        }
        found
    }

    #[test]
    fn hybrid_finds_what_words_miss_and_keeps_names_first() {
        // Measured when hybrid ranking was written (docs/performance.md): every word required
        // found none of the 30 questions in other words, any word 1 first and 3 in five; hybrid
        // finds 18 first and 29 in five (as meaning alone), and every name first.
        let words = recall("labelled.json", Mode::AllWords);
        assert_eq!(words[0], (0, 0, 30), "no question shares a word with its note");
        let [meaning, names] = recall("labelled.json", Mode::Hybrid);
        assert!(meaning.0 >= 18 && meaning.1 >= 29, "labelled, hybrid: {meaning:?}");
        assert_eq!(names, (8, 8, 8), "a name ranks its note first");
        let [meaning, names] = recall("held-out.json", Mode::Hybrid);
        assert!(meaning.0 >= 11 && meaning.1 >= 12, "held out, hybrid: {meaning:?}");
        assert_eq!(names, (3, 3, 3));
        let [_, names] = recall("labelled.json", Mode::Lexical);
        assert_eq!(names, (8, 8, 8), "by words alone too");
    }

    /// Questions that share a word or two with their note, and often an incidental one with another
    /// (tests/data/meaning/partial.json): measured when written (docs/performance.md), every word
    /// required finds none, words alone 16 of 20 first, meaning alone 19, hybrid 18; each finds all
    /// 20 in five but the first.
    #[test]
    fn questions_sharing_some_words_are_found_by_the_default() {
        let [every_word, _] = recall("partial.json", Mode::AllWords);
        assert_eq!(every_word, (0, 0, 20));
        let [hybrid, _] = recall("partial.json", Mode::Hybrid);
        assert!(hybrid.0 >= 18 && hybrid.1 == 20, "hybrid: {hybrid:?}");
        let [lexical, _] = recall("partial.json", Mode::Lexical);
        assert!(lexical.0 >= 16 && lexical.1 == 20, "lexical: {lexical:?}");
    }

    /// How much of a question a hit holds is weighed by what the caller may reach: hidden notes
    /// full of one of its words change no hit's share, in any mode.
    #[test]
    fn hidden_notes_move_no_share_of_the_question() {
        let shares = |with_hidden: bool, mode: Mode| {
            let dir = tempfile::tempdir().unwrap();
            let (index, _) = SearchIndex::open(dir.path()).unwrap();
            let writer = index.writer().unwrap();
            let note = |file: &str, body: &str| item(file, "notes", 20_261_101, &[], body);
            index.put(&writer, &note("a.md", "alpha gamma")).unwrap();
            index.put(&writer, &note("b.md", "beta gamma")).unwrap();
            index.put(&writer, &note("c.md", "alpha beta")).unwrap();
            if with_hidden {
                for n in 0..5 {
                    index.put(&writer, &note(&format!("h{n}.md"), "alpha alpha")).unwrap();
                }
            }
            index.commit(writer).unwrap();
            let query = SearchQuery {
                text: "alpha beta delta".into(),
                categories: vec!["notes".into()],
                not_files: (0..5).map(|n| format!("h{n}.md")).collect(),
                mode,
                limit: 10,
                ..SearchQuery::default()
            };
            let (hits, _) = index.search(&query).unwrap();
            hits.into_iter().map(|hit| (hit.path, hit.words)).collect::<Vec<_>>()
        };
        for mode in [Mode::Lexical, Mode::Hybrid] {
            let (without, with) = (shares(false, mode), shares(true, mode));
            assert_eq!(without.len(), 3, "{mode:?}: {without:?}");
            assert_eq!(without, with, "{mode:?}");
        }
    }

    #[test]
    fn lexical_ranks_more_of_the_question_first() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = SearchIndex::open(dir.path()).unwrap();
        let writer = index.writer().unwrap();
        let filler = |n: usize| format!("common words fill note {n}");
        for n in 0..20 {
            index
                .put(&writer, &item(&format!("f{n}"), "notes", 20_261_101, &[], &filler(n)))
                .unwrap();
        }
        index
            .put(&writer, &item("common", "notes", 20_261_101, &[], "common ground"))
            .unwrap();
        index
            .put(&writer, &item("rare", "notes", 20_261_101, &[], "a zeppelin overhead"))
            .unwrap();
        index
            .put(&writer, &item("both", "notes", 20_261_101, &[], "a common zeppelin"))
            .unwrap();
        index.commit(writer).unwrap();
        let query = SearchQuery {
            text: "common zeppelin -ground".into(),
            categories: vec!["notes".into()],
            mode: Mode::Lexical,
            limit: 4,
            ..SearchQuery::default()
        };
        let (hits, more) = index.search(&query).unwrap();
        let order: Vec<&str> = hits.iter().map(|hit| hit.path.as_str()).collect();
        assert_eq!(order[..2], ["both", "rare"], "every word, then the rare one: {order:?}");
        assert!(!order.contains(&"common"), "an excluded word excludes: {order:?}");
        assert_eq!(hits[0].words, Some(1.0));
        let rare = hits[1].words.unwrap();
        assert!(
            rare > 0.5 && rare < 1.0,
            "the rare word is most of the question: {rare}"
        );
        assert!(more, "the common word's notes follow");
        let everything = SearchQuery {
            mode: Mode::AllWords,
            ..query
        };
        let (hits, _) = index.search(&everything).unwrap();
        assert_eq!(hits.len(), 1, "every word required finds one");
    }

    /// The scores of a search in an index holding notes hidden from the caller (by its overrides)
    /// are those of the same search in an index without them: no word of a hidden note weighs on
    /// the ranking.
    #[test]
    fn notes_hidden_from_the_caller_weigh_nothing_in_the_ranking() {
        let scores = |with_hidden: bool, lead: Lead| {
            let dir = tempfile::tempdir().unwrap();
            let (index, _) = SearchIndex::open(dir.path()).unwrap();
            let writer = index.writer().unwrap();
            let note = |file: &str, body: &str| item(file, "notes", 20_261_101, &[], body);
            index.put(&writer, &note("a.md", "alpha alpha beta")).unwrap();
            index.put(&writer, &note("b.md", "alpha beta beta")).unwrap();
            index
                .put(&writer, &item("t", "transcripts", 20_261_101, &[], "beta alpha"))
                .unwrap();
            if with_hidden {
                for n in 0..5 {
                    index
                        .put(&writer, &note(&format!("h{n}.md"), "beta beta beta gamma alpha"))
                        .unwrap();
                }
            }
            index.commit(writer).unwrap();
            let query = SearchQuery {
                text: "alpha beta".into(),
                categories: super::super::CATEGORIES.iter().map(|c| c.to_string()).collect(),
                limit: 10,
                not_files: (0..5).map(|n| format!("h{n}.md")).collect(),
                ..SearchQuery::default()
            };
            let searcher = index.reader.searcher();
            let (_, docs) = index.ranked(&searcher, &query, &Ranking::AllWords, Some(lead)).unwrap();
            docs.iter().map(|(score, _)| *score).collect::<Vec<_>>()
        };
        for lead in [Lead::Text, Lead::Filters] {
            let (without, with) = (scores(false, lead), scores(true, lead));
            assert_eq!(without.len(), 3, "{lead:?}");
            assert_eq!(with.len(), 3, "{lead:?}");
            for (a, b) in without.iter().zip(&with) {
                assert!((a - b).abs() < 1e-5, "{lead:?}: {without:?} against {with:?}");
            }
        }
    }

    #[test]
    fn a_commit_a_killed_process_left_without_its_meta_does_not_stop_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = SearchIndex::open(dir.path()).unwrap();
        let writer = index.writer().unwrap();
        for file in ["a", "b"] {
            index
                .put(&writer, &item(file, "transcripts", 20_261_101, &[], "lease"))
                .unwrap();
        }
        index.commit(writer).unwrap();
        let meta = std::fs::read(dir.path().join("meta.json")).unwrap();
        // A commit with a delete, whose meta.json is then taken back: what a process killed after
        // writing its files and before its meta leaves (the `.del` file, named for the opstamp).
        let writer = index.writer().unwrap();
        index.remove(&writer, "a");
        index.commit(writer).unwrap();
        let orphans = |dir: &Path| {
            std::fs::read_dir(dir)
                .unwrap()
                .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".del"))
                .count()
        };
        assert_eq!(orphans(dir.path()), 1);
        std::fs::write(dir.path().join("meta.json"), &meta).unwrap();
        drop(index);

        let (index, _) = SearchIndex::open(dir.path()).unwrap();
        assert_eq!(index.len(), 2);
        let writer = index.writer().unwrap();
        index.remove(&writer, "a");
        index.commit(writer).unwrap();
        assert_eq!(index.len(), 1);
    }

    #[test]
    fn searches_with_filters_and_replaces_by_path() {
        let dir = tempfile::tempdir().unwrap();
        let (index, fresh) = SearchIndex::open(dir.path()).unwrap();
        assert!(fresh);
        let writer = index.writer().unwrap();
        index
            .put(
                &writer,
                &item("a", "transcripts", 20_261_101, &["work"], "the lease renewal is due"),
            )
            .unwrap();
        index
            .put(
                &writer,
                &item("b", "transcripts", 20_261_105, &["home"], "lease of the flat"),
            )
            .unwrap();
        index
            .put(
                &writer,
                &item("c", "entities", 20_261_105, &["work"], "landlord of the lease"),
            )
            .unwrap();
        index.commit(writer).unwrap();
        let base = SearchQuery {
            text: "lease".into(),
            categories: vec!["transcripts".into()],
            limit: 10,
            ..SearchQuery::default()
        };
        let (hits, more) = index.search(&base).unwrap();
        assert_eq!(hits.len(), 2);
        assert!(!more);
        let scoped = SearchQuery {
            facets: Some(vec!["work".into()]),
            ..base.clone()
        };
        let (hits, _) = index.search(&scoped).unwrap();
        assert_eq!(hits.iter().map(|h| h.path.as_str()).collect::<Vec<_>>(), ["a"]);
        let dated = SearchQuery {
            day_from: Some(20_261_102),
            ..base.clone()
        };
        assert_eq!(index.search(&dated).unwrap().0[0].path, "b");
        let paged = SearchQuery {
            limit: 1,
            ..base.clone()
        };
        assert!(index.search(&paged).unwrap().1);
        assert!(
            index
                .search(&SearchQuery {
                    text: "title:lease path:(".into(),
                    ..base.clone()
                })
                .is_ok()
        );

        let writer = index.writer().unwrap();
        index.remove(&writer, "a");
        index
            .put(
                &writer,
                &item("a", "transcripts", 20_261_101, &["work"], "nothing here"),
            )
            .unwrap();
        index.remove(&writer, "b");
        index.commit(writer).unwrap();
        assert!(index.search(&base).unwrap().0.is_empty());
        assert_eq!(index.len(), 2);
    }

    #[test]
    fn an_index_with_other_store_blocks_is_made_again() {
        let dir = tempfile::tempdir().unwrap();
        Index::create_in_dir(dir.path(), schema()).unwrap();
        let (index, fresh) = SearchIndex::open(dir.path()).unwrap();
        assert!(fresh, "made again, so that the catalog adds every file");
        assert_eq!(index.index.settings().docstore_blocksize, STORE_BLOCK);
        drop(index);
        let (_, fresh) = SearchIndex::open(dir.path()).unwrap();
        assert!(!fresh, "kept once it has the layout");
    }

    #[test]
    fn only_searches_with_words_are_pruned() {
        assert!(is_pruned("lease"));
        assert!(is_pruned("lease -flat"));
        assert!(is_pruned("title:lease"), "field syntax is searched as words");
        assert!(!is_pruned(""));
        assert!(!is_pruned("  :: !? "), "nothing left to search but the filters");
        assert!(is_pruned("\"the lease\""), "a phrase is searched as its words");
    }

    /// A repeatable stream of numbers below `n` (a linear congruential generator).
    fn numbers(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        }
    }

    /// Random documents and searches: letting the text lead (filters tested inside the pruning)
    /// finds the same page as the conjunction of text and filters.
    #[test]
    fn both_leads_find_the_same_page() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = SearchIndex::open(dir.path()).unwrap();
        let mut next = numbers(7);
        const WORDS: [&str; 8] = [
            "lease", "garden", "budget", "river", "coffee", "report", "train", "kitchen",
        ];
        const CATEGORIES: [&str; 3] = ["notes", "transcripts", "entities"];
        let mut note_keys = std::collections::HashSet::new();
        // Two commits make two segments, and the deletions between them an alive bitset.
        for batch in 0..2 {
            let writer = index.writer().unwrap();
            for i in 0..700u64 {
                let length = 3 + next(30);
                let body: Vec<&str> = (0..length).map(|_| WORDS[(next(8) * next(8) / 7) as usize]).collect();
                let path = format!("d{batch}-{i}");
                let note_key = next(1 << 40);
                if next(3) == 0 {
                    note_keys.insert(note_key);
                }
                let doc = IndexDoc {
                    file: path.clone(),
                    path,
                    category: CATEGORIES[next(3) as usize],
                    day: Some(next(10)),
                    facets: vec![format!("f{}", next(3))],
                    title: WORDS[next(8) as usize].into(),
                    body: body.join(" "),
                    tags: (0..next(3)).map(|_| format!("t{}", next(4))).collect(),
                    folders: vec![format!("p{}", next(5))],
                    note_key: Some(note_key),
                    ..IndexDoc::default()
                };
                index.put(&writer, &doc).unwrap();
            }
            if batch == 1 {
                for i in 0..50 {
                    index.remove(&writer, &format!("d0-{}", i * 7));
                }
            }
            index.commit(writer).unwrap();
        }
        let note_filter = NoteFilter(Arc::new(move |key| note_keys.contains(&key)));
        let searcher = index.reader.searcher();
        assert!(searcher.segment_readers().len() >= 2);
        let mut compared = 0;
        for _ in 0..400 {
            let words: Vec<&str> = (0..1 + next(2)).map(|_| WORDS[next(8) as usize]).collect();
            let pick = |n: u64, next: &mut dyn FnMut(u64) -> u64| (next(2) == 0).then(|| next(n));
            let query = SearchQuery {
                text: words.join(" "),
                categories: CATEGORIES
                    .iter()
                    .take(1 + next(3) as usize)
                    .map(|c| c.to_string())
                    .collect(),
                facets: pick(3, &mut next).map(|f| vec![format!("f{f}")]),
                day_from: pick(10, &mut next),
                day_to: pick(10, &mut next).map(|d| d + 3),
                tags: pick(4, &mut next).map(|t| format!("t{t}")).into_iter().collect(),
                not_tags: pick(4, &mut next).map(|t| format!("t{t}")).into_iter().collect(),
                folders: pick(5, &mut next).map(|p| format!("p{p}")).into_iter().collect(),
                not_folders: pick(5, &mut next).map(|p| format!("p{p}")).into_iter().collect(),
                not_files: pick(700, &mut next).map(|i| format!("d1-{i}")).into_iter().collect(),
                note_filter: (next(2) == 0).then(|| note_filter.clone()),
                mode: Mode::AllWords,
                offset: next(4) as usize,
                limit: 1 + next(10) as usize,
                like: None,
                metadata: false,
            };
            let (_, text) = index
                .ranked(&searcher, &query, &Ranking::AllWords, Some(Lead::Text))
                .unwrap();
            let (_, filters) = index
                .ranked(&searcher, &query, &Ranking::AllWords, Some(Lead::Filters))
                .unwrap();
            let scores = |docs: &[(Score, DocAddress)]| docs.iter().map(|(score, _)| *score).collect::<Vec<_>>();
            assert_eq!(scores(&text), scores(&filters), "{query:?}");
            // Documents of equal score may be cut at the page's end in another order; above the
            // last score, the same documents.
            let last = text.last().map(|(score, _)| *score);
            let above = |docs: &[(Score, DocAddress)]| {
                let mut kept: Vec<DocAddress> = docs
                    .iter()
                    .filter(|(score, _)| Some(*score) != last)
                    .map(|(_, doc)| *doc)
                    .collect();
                kept.sort();
                kept
            };
            assert_eq!(above(&text), above(&filters), "{query:?}");
            compared += usize::from(!text.is_empty());
        }
        assert!(compared > 100, "most searches found something: {compared}");
    }

    /// A phrase searched as its words with the phrase as a filter finds exactly the documents that hold
    /// the phrase, and of them the best by the words' score.
    #[test]
    fn a_phrase_finds_its_documents_ranked_by_its_words() {
        use tantivy::collector::DocSetCollector;
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = SearchIndex::open(dir.path()).unwrap();
        let mut next = numbers(11);
        const WORDS: [&str; 5] = ["lease", "garden", "budget", "river", "coffee"];
        for batch in 0..2 {
            let writer = index.writer().unwrap();
            for i in 0..600u64 {
                let body: Vec<&str> = (0..2 + next(20)).map(|_| WORDS[next(5) as usize]).collect();
                let path = format!("d{batch}-{i}");
                let doc = IndexDoc {
                    file: path.clone(),
                    path,
                    category: "transcripts",
                    title: "t".into(),
                    body: body.join(" "),
                    ..IndexDoc::default()
                };
                index.put(&writer, &doc).unwrap();
            }
            index.commit(writer).unwrap();
        }
        let searcher = index.reader.searcher();
        for _ in 0..60 {
            let phrase: Vec<&str> = (0..2 + next(2)).map(|_| WORDS[next(5) as usize]).collect();
            let extra = (next(2) == 0).then(|| WORDS[next(5) as usize]);
            let text = format!("\"{}\" {}", phrase.join(" "), extra.unwrap_or(""));
            let query = |limit: usize| SearchQuery {
                text: text.clone(),
                categories: vec!["transcripts".into(), "notes".into(), "entities".into(), "facets".into()],
                limit,
                ..SearchQuery::default()
            };
            let (text_query, all) = index
                .ranked(&searcher, &query(5000), &Ranking::AllWords, Some(Lead::Text))
                .unwrap();
            let holding = searcher.search(&*text_query, &DocSetCollector).unwrap();
            let found: std::collections::HashSet<DocAddress> = all.iter().map(|(_, doc)| *doc).collect();
            assert_eq!(found, holding, "{text}: exactly the documents with the phrase");
            // The page of five: the five best scores among them, by the words alone.
            let (words, _) = phrase::split(&*text_query).expect("a phrase to split");
            let scored = searcher
                .search(&*words, &TopDocs::with_limit(5000).order_by_score())
                .unwrap();
            let mut best: Vec<Score> = scored
                .iter()
                .filter(|(_, doc)| holding.contains(doc))
                .map(|(score, _)| *score)
                .collect();
            best.truncate(5);
            let (_, page) = index
                .ranked(&searcher, &query(5), &Ranking::AllWords, Some(Lead::Text))
                .unwrap();
            let page: Vec<Score> = page.iter().map(|(score, _)| *score).take(5).collect();
            assert_eq!(page, best, "{text}");
        }
    }
}
