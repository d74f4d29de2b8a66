//! A batch's search documents indexed while its files are written. Writing 10,000 files is mostly
//! waiting on the filesystem in one thread, and indexing them mostly one core's work in tantivy's
//! thread; done one after the other, an import left a core idle for half its time.
//!
//! The documents are made for the names the batch plans to publish under (`Batch::plan`) and fed to
//! an index writer on a thread of their own. They are committed only after the batch is published
//! under exactly those names, so the index never names a file that is not there; otherwise (or if
//! another process holds the index writer) they are dropped and the sync indexes the files as
//! usual. A crash between the commit and the catalog's rows leaves files the catalog does not know,
//! which the next sync indexes again, removing these copies first.

use std::sync::Arc;
use std::thread::JoinHandle;

use tantivy::IndexWriter;

use super::index::IndexDoc;
use super::{Journal, JournalError};

/// How one item is indexed: the index key its old documents are removed by, and its document (None:
/// it has none, a private note).
pub type Document<T> = fn(&T) -> (String, Option<IndexDoc>);

/// Items being indexed on a thread of their own; the writer is held until `finish`.
pub struct Preindex<T: Send + 'static> {
    thread: Option<JoinHandle<(Vec<T>, Option<IndexWriter>)>>,
}

impl<T: Send + 'static> Preindex<T> {
    /// Starts indexing `items`. Fails only when no thread can be started, before anything is written.
    pub fn start(journal: &Arc<Journal>, items: Vec<T>, document: Document<T>) -> Result<Preindex<T>, JournalError> {
        let journal = Arc::clone(journal);
        let thread = std::thread::Builder::new()
            .name("preindex".into())
            .spawn(move || {
                // Below the thread writing the files, which the import waits on first; tantivy's
                // indexing thread, started by this one, inherits the priority.
                super::background::lower_priority();
                let writer = feed(&journal, &items, document);
                (items, writer)
            })
            .map_err(|e| JournalError::Invalid(format!("no thread could be started to index the import: {e}")))?;
        Ok(Preindex { thread: Some(thread) })
    }

    /// Waits for the documents, and commits them if `publish_held` (every file is where its
    /// document says), else drops them. Answers the items and whether they are in the index now
    /// (no items and false if the thread failed: the sync then reads the files).
    pub fn finish(mut self, journal: &Journal, publish_held: bool) -> (Vec<T>, bool) {
        let Some((items, writer)) = self.thread.take().and_then(|thread| thread.join().ok()) else {
            tracing::warn!("an import's indexing thread failed; the sync indexes the files");
            return (Vec::new(), false);
        };
        let indexed = match writer {
            Some(writer) if publish_held => match journal.index.commit(writer) {
                Ok(()) => true,
                Err(error) => {
                    tracing::warn!(%error, "an import's documents could not be committed; the sync indexes them");
                    false
                }
            },
            _ => false,
        };
        (items, indexed)
    }
}

impl<T: Send + 'static> Drop for Preindex<T> {
    fn drop(&mut self) {
        // Dropped before `finish` (the batch failed): the writer is dropped uncommitted once its
        // thread is done, so that the next writer finds the lock free.
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Every item's documents added to a new writer. None: the writer is busy (another process indexes,
/// and the sync leaves the files to it) or a document could not be added.
fn feed<T>(journal: &Journal, items: &[T], document: Document<T>) -> Option<IndexWriter> {
    let writer = match journal.index.writer() {
        Ok(writer) => writer,
        Err(error) => {
            tracing::debug!(%error, "no index writer for an import; the sync indexes it");
            return None;
        }
    };
    for item in items {
        let (key, doc) = document(item);
        // A document left under the same key (a file removed while no sync ran) goes first.
        journal.index.remove(&writer, &key);
        if let Some(doc) = doc
            && let Err(error) = journal.index.put(&writer, &doc)
        {
            tracing::warn!(%error, "an import's document could not be indexed; the sync indexes it");
            return None;
        }
    }
    Some(writer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::content::{ImportOptions, import_transcripts};
    use crate::journal::day::Day;
    use crate::journal::index::SearchQuery;
    use crate::journal::notes::import::import_notes;
    use crate::journal::notes::note;
    use crate::journal::prepared::{Prepared, PreparedNote};
    use crate::journal::transcript::Segment;

    fn search(journal: &Journal, category: &str, text: &str) -> Vec<String> {
        let query = SearchQuery {
            text: text.into(),
            categories: vec![category.into()],
            limit: 50,
            ..SearchQuery::default()
        };
        let hits = journal.index.search(&query).unwrap().0;
        hits.into_iter().map(|hit| hit.path).collect()
    }

    fn doc(word: &String) -> (String, Option<IndexDoc>) {
        let key = format!("test/{word}");
        let doc = IndexDoc {
            file: key.clone(),
            path: key.clone(),
            category: "transcripts",
            body: word.clone(),
            ..IndexDoc::default()
        };
        (key, Some(doc))
    }

    #[tokio::test]
    async fn documents_are_committed_only_when_the_batch_took_its_planned_names() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path()).await.unwrap();
        let before = journal.index.len();
        let words: Vec<String> = vec!["alphaword".into(), "betaword".into()];

        let (items, indexed) = Preindex::start(&journal, words.clone(), doc)
            .unwrap()
            .finish(&journal, false);
        assert_eq!((items, indexed), (words.clone(), false));
        assert_eq!(
            journal.index.len(),
            before,
            "nothing committed when publishing went otherwise"
        );

        // Dropped unfinished (a batch that failed): nothing committed, and the writer is free again.
        drop(Preindex::start(&journal, words.clone(), doc).unwrap());
        assert_eq!(journal.index.len(), before);

        let (items, indexed) = Preindex::start(&journal, words.clone(), doc)
            .unwrap()
            .finish(&journal, true);
        assert_eq!((items, indexed), (words.clone(), true));
        assert_eq!(journal.index.len(), before + 2);
        assert_eq!(search(&journal, "transcripts", "betaword"), ["test/betaword"]);

        // Another process holds the writer: the items come back unindexed, for the sync to read.
        let held = journal.index.writer().unwrap();
        let (items, indexed) = Preindex::start(&journal, words.clone(), doc)
            .unwrap()
            .finish(&journal, true);
        assert_eq!((items, indexed), (words, false));
        drop(held);
        assert_eq!(journal.index.len(), before + 2);
    }

    #[tokio::test]
    async fn an_import_is_searchable_once_under_the_names_it_took() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path()).await.unwrap();
        let input = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for n in 0..5 {
            let path = input.path().join(format!("{n}.txt"));
            std::fs::write(&path, format!("[00:00:0{n}] Ann: said uniqueword{n} today\n")).unwrap();
            files.push(path);
        }
        let day = Day::parse("2026-11-02").unwrap();
        let folder = dir.path().join("transcripts/2026-11-02");
        std::fs::create_dir_all(&folder).unwrap();
        // The owner's file under the first name the import would take.
        std::fs::write(folder.join("093000.md"), "not a segment").unwrap();
        let before = journal.index.len();
        let options = ImportOptions {
            day,
            start: 9 * 3600 + 30 * 60,
            facets: Vec::new(),
        };
        let written = import_transcripts(&journal, &files, &options).await.unwrap();
        assert_eq!(written[0], folder.join("093000-2.md"));
        for (n, path) in written.iter().enumerate() {
            let rel = path.strip_prefix(dir.path()).unwrap().to_string_lossy().into_owned();
            assert_eq!(search(&journal, "transcripts", &format!("uniqueword{n}")), [rel]);
        }
        assert_eq!(journal.index.len(), before + 5, "each segment indexed once");
        let rows: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM items WHERE path LIKE 'transcripts/2026-11-02/%' AND error IS NULL",
        )
        .fetch_one(&journal.db)
        .await
        .unwrap();
        assert_eq!(rows, 5);

        // Notes, one under a name that is taken (its title comes from the name it took), one private.
        let vault = dir.path().join("notes/Inbox");
        std::fs::create_dir_all(&vault).unwrap();
        std::fs::write(vault.join("Idea.md"), "the owner's idea").unwrap();
        std::fs::write(input.path().join("Idea.md"), "an imported notewordone\n").unwrap();
        std::fs::write(input.path().join("Plan.md"), "---\naccess: private\n---\nnotewordtwo\n").unwrap();
        let notes = [input.path().join("Idea.md"), input.path().join("Plan.md")];
        let before = journal.index.len();
        let paths = import_notes(&journal, &notes, "Inbox").await.unwrap();
        assert_eq!(paths, ["Inbox/Idea-2.md", "Inbox/Plan.md"]);
        assert_eq!(search(&journal, "notes", "notewordone"), ["Inbox/Idea-2.md"]);
        assert!(
            search(&journal, "notes", "notewordtwo").is_empty(),
            "a private note is never indexed"
        );
        assert_eq!(
            journal.index.len(),
            before + 2,
            "the owner's note and the imported open one"
        );
        let idea = journal.notes.set().at("Inbox/Idea-2.md").cloned().unwrap();
        assert_eq!(idea.title, "Idea-2");
        assert!(idea.modified_ms > 0, "the file's time, not the time it was prepared at");
    }

    /// A sync trusts a file written as indexed (it indexes it again only when its day turned out
    /// otherwise), and indexes one that was not.
    #[tokio::test]
    async fn a_sync_indexes_what_was_not_indexed_while_written() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path()).await.unwrap();
        let segment_text = Segment::render(
            &crate::journal::transcript::SegmentHead {
                day: "2026-11-03".into(),
                start: "10:00:00".into(),
                duration_seconds: 60,
                facets: Vec::new(),
                title: "A segment".into(),
                source: None,
            },
            &[crate::journal::transcript::Line {
                time: 0,
                speaker: None,
                text: "segmentword".into(),
            }],
        );
        let folder = dir.path().join("transcripts/2026-11-03");
        std::fs::create_dir_all(&folder).unwrap();
        let notes = dir.path().join("notes");
        let mut prepared = Prepared::default();
        for (name, indexed) in [("100000.md", true), ("100000-2.md", false)] {
            std::fs::write(folder.join(name), &segment_text).unwrap();
            let segment = Segment::parse(&segment_text).unwrap();
            prepared.add_segment(
                format!("transcripts/2026-11-03/{name}"),
                segment_text.len(),
                segment,
                indexed,
            );
        }
        let today = crate::journal::notes::sync::day_of(
            &note::read("x.md", b"x", crate::clock::unix_now() * 1000).unwrap().note,
        );
        for (name, indexed, day) in [("a.md", true, today), ("b.md", false, today), ("c.md", true, today + 1)] {
            let bytes: Arc<[u8]> = Arc::from(format!("noteword {name}").as_bytes());
            std::fs::write(notes.join(name), &bytes).unwrap();
            let read = note::read(name, &bytes, 0).unwrap();
            let note = PreparedNote {
                note: read.note,
                bytes: Arc::clone(&bytes),
                body_start: 0,
                day,
            };
            prepared.add_note(name.into(), note, indexed);
        }
        journal.sync_written(prepared).await.unwrap();
        assert_eq!(
            search(&journal, "transcripts", "segmentword"),
            ["transcripts/2026-11-03/100000-2.md"],
            "the one written as indexed is trusted, the other indexed"
        );
        let mut found = search(&journal, "notes", "noteword");
        found.sort();
        assert_eq!(
            found,
            ["b.md", "c.md"],
            "c.md's day was not the one it was indexed under"
        );
        for name in ["a.md", "b.md", "c.md"] {
            assert!(
                journal.notes.set().at(name).is_some(),
                "{name} is catalogued either way"
            );
        }
    }
}
