//! The full-text index: tantivy, in `.index/` inside the journal.
//!
//! The index is derived data. Every document can be rebuilt from the files (`journal reindex`), so
//! deleting the folder loses nothing. Documents are keyed by the file's relative path: re-adding a file
//! first deletes its old document, which makes indexing idempotent after a crash.
//! Filters (category, facet, day) are indexed fields so BM25 top-k pruning still applies to the text.

use std::ops::Bound;
use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, QueryParser, RangeQuery, TermSetQuery};
use tantivy::schema::{Field, INDEXED, STORED, STRING, Schema, TEXT, TantivyDocument, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Term, doc};

/// The longest snippet returned with a hit, in characters.
pub const SNIPPET_CHARS: usize = 800;

/// One document to index. A file may give several documents (an entity gives one per facet
/// description, so a facet-scoped search never sees text filed under another facet).
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
    pub offset: usize,
    pub limit: usize,
}

/// One ranked hit.
#[derive(Debug, Clone)]
pub struct Hit {
    pub path: String,
    pub category: String,
    pub title: String,
    pub day: Option<u64>,
    pub snippet: String,
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
}

/// An open index and its reader.
pub struct SearchIndex {
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

impl SearchIndex {
    /// Opens the index in `dir`, creating it when missing. A folder whose schema does not match
    /// (an older layout, or damage) is wiped and recreated: the catalog then re-adds every file.
    pub fn open(dir: &Path) -> tantivy::Result<(SearchIndex, bool)> {
        let schema = schema();
        crate::fsio::create_dir_all_durable(dir)?;
        let (index, fresh) = match Index::open_in_dir(dir) {
            Ok(index) if index.schema() == schema => (index, false),
            Ok(_) | Err(tantivy::TantivyError::OpenDirectoryError(_)) | Err(_) => {
                let _ = std::fs::remove_dir_all(dir);
                crate::fsio::create_dir_all_durable(dir)?;
                (Index::create_in_dir(dir, schema.clone())?, true)
            }
        };
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        let fields = fields(&schema);
        Ok((SearchIndex { index, reader, fields }, fresh))
    }

    /// A writer for one batch of changes. Only one process may hold it at a time; another caller
    /// gets `LockBusy` and should leave the work to the holder.
    pub fn writer(&self) -> tantivy::Result<IndexWriter> {
        self.index.writer_with_num_threads(1, 64_000_000)
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
        if let Some(day) = item.day {
            document.add_u64(f.day, day);
        }
        for facet in &item.facets {
            document.add_text(f.facet, facet);
        }
        writer.add_document(document)?;
        Ok(())
    }

    /// Removes every document of a file.
    pub fn remove(&self, writer: &IndexWriter, file: &str) {
        writer.delete_term(Term::from_field_text(self.fields.file, file));
    }

    /// Commits a batch and makes it visible to searches in this process.
    pub fn commit(&self, mut writer: IndexWriter) -> tantivy::Result<()> {
        writer.commit()?;
        writer.wait_merging_threads()?;
        self.reader.reload()
    }

    /// Picks up commits made by another process.
    pub fn reload(&self) -> tantivy::Result<()> {
        self.reader.reload()
    }

    /// Number of documents visible to searches.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ranked hits with snippets, and whether more hits follow this page.
    pub fn search(&self, query: &SearchQuery) -> tantivy::Result<(Vec<Hit>, bool)> {
        let f = self.fields;
        let searcher = self.reader.searcher();
        let mut parser = QueryParser::for_index(&self.index, vec![f.title, f.body]);
        parser.set_conjunction_by_default();
        parser.set_field_boost(f.title, 2.0);
        // Lenient: an agent's stray quote or colon must not turn into an error or a field lookup.
        let (text_query, _) = parser.parse_query_lenient(&sanitize(&query.text));
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, text_query.box_clone())];
        // A filter that every document passes only slows the search down (the conjunction visits
        // every match instead of skipping by score), so a query that may see every category has none.
        let every_category = super::CATEGORIES
            .iter()
            .all(|c| query.categories.iter().any(|q| q == c));
        if !every_category {
            let categories = query.categories.iter().map(|c| Term::from_field_text(f.category, c));
            clauses.push((Occur::Must, Box::new(TermSetQuery::new(categories))));
        }
        if let Some(facets) = &query.facets {
            let terms = facets.iter().map(|c| Term::from_field_text(f.facet, c));
            clauses.push((Occur::Must, Box::new(TermSetQuery::new(terms))));
        }
        if query.day_from.is_some() || query.day_to.is_some() {
            let bound =
                |day: Option<u64>| day.map_or(Bound::Unbounded, |d| Bound::Included(Term::from_field_u64(f.day, d)));
            clauses.push((
                Occur::Must,
                Box::new(RangeQuery::new(bound(query.day_from), bound(query.day_to))),
            ));
        }
        // Only the top of the ranking is collected: counting every match as well would switch off
        // the top-k pruning that lets a frequent word skip most of its postings.
        let top = TopDocs::with_limit(query.limit + 1)
            .and_offset(query.offset)
            .order_by_score();
        let docs = if clauses.len() == 1 {
            searcher.search(&*text_query, &top)?
        } else {
            searcher.search(&BooleanQuery::new(clauses), &top)?
        };
        let more = docs.len() > query.limit;
        let mut snippets = SnippetGenerator::create(&searcher, &*text_query, f.body)?;
        snippets.set_max_num_chars(SNIPPET_CHARS);
        let mut hits = Vec::with_capacity(query.limit);
        for (_score, address) in docs.into_iter().take(query.limit) {
            let document: TantivyDocument = searcher.doc(address)?;
            let text = |field: Field| {
                document
                    .get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string()
            };
            let mut snippet = snippets.snippet_from_doc(&document).fragment().to_string();
            if snippet.is_empty() {
                snippet = text(f.body).chars().take(SNIPPET_CHARS).collect();
            }
            hits.push(Hit {
                path: text(f.path),
                category: text(f.category),
                title: text(f.title),
                day: document.get_first(f.day).and_then(|v| v.as_u64()),
                snippet: snippet.trim().to_string(),
            });
        }
        Ok((hits, more))
    }
}

fn schema() -> Schema {
    let mut builder = Schema::builder();
    builder.add_text_field("file", STRING);
    builder.add_text_field("path", STRING | STORED);
    builder.add_text_field("category", STRING | STORED);
    builder.add_u64_field("day", INDEXED | STORED);
    builder.add_text_field("facet", STRING);
    builder.add_text_field("title", TEXT | STORED);
    builder.add_text_field("body", TEXT | STORED);
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
    }
}

/// Keeps words, quotes and `-` negation; drops the parser's field syntax so that `path:x` or
/// `title:y` typed by an agent is searched as words, not as a field lookup.
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
        }
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
}
