//! The journal: its files, their catalog and search index, and the operations on them.
//!
//! Plain files in one folder are the truth (layout in docs/journal-format.md); `journal.db` keeps a
//! catalog of them and `.index/` a tantivy index, both rebuilt from the files whenever they disagree.
//! Every operation that the CLI, the MCP tools or (later) the owner's pages perform on content lives
//! here, once. This module knows nothing of HTTP or MCP, and nothing of who is asking: callers pass the
//! facet and category bounds of the caller's grant.

pub mod author;
pub mod background;
pub mod batch;
pub mod catalog;
pub mod content;
pub mod day;
pub mod demo;
pub mod demo_notes;
pub mod entity;
pub mod facet;
pub mod frontmatter;
pub mod graph;
pub mod import;
pub mod index;
pub mod memory;
pub mod notes;
pub mod parallel;
pub mod preindex;
pub mod prepared;
pub mod proposals;
pub mod signed;
pub mod transcript;

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use crate::db::{self, Pool};
use facet::Facet;
use index::SearchIndex;
use signed::SigningKey;

/// The categories of content a grant can name.
pub const CATEGORIES: [&str; 4] = ["transcripts", "entities", "facets", "notes"];

/// An open journal.
pub struct Journal {
    root: PathBuf,
    pub db: Pool,
    pub index: SearchIndex,
    /// Facets as last read from their files (there are few; read on every catalog change).
    facets: RwLock<Arc<Vec<Facet>>>,
    /// One catalog sync at a time within this process.
    sync_lock: tokio::sync::Mutex<()>,
    /// Content folders and their modification times as of the last sync (None: never synced), so a
    /// quick sync lists only the folders that changed.
    folder_stamps: std::sync::Mutex<Option<std::collections::HashMap<String, i64>>>,
    signing_key: SigningKey,
    /// The owner's notes: the vault folder, and its notes as of the last sync.
    pub notes: notes::Vault,
    /// The index was made anew when this process opened it (a first start, another schema or
    /// another model) and no sync has finished since: searches may miss items.
    building: std::sync::atomic::AtomicBool,
}

/// Why a journal operation failed.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Input that was refused; the message says what to change.
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: std::io::Error },
    #[error("the journal database: {0}")]
    Db(#[from] sqlx::Error),
    #[error("the search index: {0}")]
    Index(#[from] tantivy::TantivyError),
    #[error("the journal database could not be updated: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

impl JournalError {
    pub fn io(path: &Path, source: std::io::Error) -> JournalError {
        JournalError::Io {
            path: path.to_path_buf(),
            error: source,
        }
    }
}

impl Journal {
    /// Opens the journal in `root`, creating its folders, database and index when missing, and
    /// brings the catalog up to date with the files.
    pub async fn open(root: &Path) -> Result<Arc<Journal>, JournalError> {
        let journal = Journal::open_unsynced(root).await?;
        journal.sync_to(catalog::Depth::Full).await?;
        Ok(journal)
    }

    /// Opens the journal without bringing the catalog up to date: for the server, whose upkeep
    /// syncs.
    pub async fn open_unsynced(root: &Path) -> Result<Arc<Journal>, JournalError> {
        Journal::open_with(root, true).await
    }

    /// Opens the journal without bringing the catalog up to date and without reading the notes'
    /// catalog into memory (a second for a vault of 100,000 notes): for commands that only touch
    /// access state, and for `reindex`, which rebuilds it. Its first sync reads them.
    pub async fn open_unloaded(root: &Path) -> Result<Arc<Journal>, JournalError> {
        Journal::open_with(root, false).await
    }

    async fn open_with(root: &Path, load_notes: bool) -> Result<Arc<Journal>, JournalError> {
        for sub in ["", "facets", "entities", "transcripts", "memory"] {
            let dir = root.join(sub);
            crate::fsio::create_dir_all_durable(&dir).map_err(|e| JournalError::io(&dir, e))?;
        }
        let root = root.canonicalize().map_err(|e| JournalError::io(root, e))?;
        // An import killed halfway is taken back before anything reads the folders.
        batch::recover(&root).map_err(|e| JournalError::io(&root, e))?;
        let pool = db::open(&root.join("journal.db")).await?;
        let (index, fresh) = SearchIndex::open(&root.join(".index"))?;
        if fresh {
            // A new or wiped index: forget the catalog so every file is indexed again.
            sqlx::query("DELETE FROM items").execute(&pool).await?;
            sqlx::query("DELETE FROM notes").execute(&pool).await?;
        }
        let notes = notes::Vault::open(&root, &pool, load_notes).await?;
        let signing_key = load_signing_key(&pool).await?;
        let journal = Arc::new(Journal {
            root,
            db: pool,
            index,
            facets: RwLock::new(Arc::new(Vec::new())),
            sync_lock: tokio::sync::Mutex::new(()),
            folder_stamps: std::sync::Mutex::new(None),
            signing_key,
            notes,
            building: std::sync::atomic::AtomicBool::new(fresh),
        });
        journal.reload_facets()?;
        // A change to notes a process left half-made is undone before anything reads the notes.
        notes::changes::recover_at_open(&journal)
            .await
            .map_err(|e| JournalError::Invalid(format!("a half-made change to the notes could not be undone: {e}")))?;
        graph::gate::recover_at_open(&journal)
            .await
            .map_err(|e| JournalError::Invalid(format!("a half-made change to the graph could not be undone: {e}")))?;
        Ok(journal)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the index is still being built after it was made anew (a first start, or a new
    /// version of the index or of the model): until the first sync ends, a search may miss items.
    pub fn index_building(&self) -> bool {
        self.building.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn signing_key(&self) -> &SigningKey {
        &self.signing_key
    }

    /// The facets, as of the last catalog sync.
    pub fn facets(&self) -> Arc<Vec<Facet>> {
        self.facets.read().map(|f| Arc::clone(&f)).unwrap_or_default()
    }

    /// Looks a facet up by its id or its name.
    pub fn facet(&self, id_or_name: &str) -> Option<Facet> {
        self.facets()
            .iter()
            .find(|f| f.id == id_or_name || f.name == id_or_name)
            .cloned()
    }

    fn reload_facets(&self) -> Result<(), JournalError> {
        let facets = content::read_facets(&self.root)?;
        if let Ok(mut slot) = self.facets.write() {
            *slot = Arc::new(facets);
        }
        Ok(())
    }

    /// Brings the catalog and index up to date with the files that were added, removed or replaced
    /// (a quick sync; see `catalog`).
    pub async fn sync(self: &Arc<Self>) -> Result<catalog::SyncReport, JournalError> {
        self.sync_to(catalog::Depth::Quick).await
    }

    /// A sync of the given depth.
    pub async fn sync_to(self: &Arc<Self>, depth: catalog::Depth) -> Result<catalog::SyncReport, JournalError> {
        self.sync_with(depth, prepared::Prepared::default()).await
    }

    /// A quick sync right after this process wrote the segments and notes in `prepared`, which are
    /// catalogued from memory rather than read and parsed again (see `prepared`).
    pub async fn sync_written(
        self: &Arc<Self>,
        prepared: prepared::Prepared,
    ) -> Result<catalog::SyncReport, JournalError> {
        self.sync_with(catalog::Depth::Quick, prepared).await
    }

    async fn sync_with(
        self: &Arc<Self>,
        depth: catalog::Depth,
        mut prepared: prepared::Prepared,
    ) -> Result<catalog::SyncReport, JournalError> {
        let _guard = self.sync_lock.lock().await;
        // An import another process began and died in is taken back (a running server sees it here).
        if let Err(error) = batch::recover(&self.root) {
            tracing::warn!(%error, "an interrupted import could not be taken back yet");
        }
        let mut report = catalog::sync(self, depth, &mut prepared).await?;
        if report.facets_changed {
            self.reload_facets()?;
        }
        let notes = notes::sync::sync(self, depth, &mut prepared).await?;
        report.add(notes);
        Ok(report)
    }

    /// Brings this process up to date with the files and with what other processes (the CLI beside a
    /// running server) committed: a catalog sync, a reload of the index reader and of the facets.
    pub async fn refresh(self: &Arc<Self>, depth: catalog::Depth) -> Result<catalog::SyncReport, JournalError> {
        let report = self.sync_to(depth).await?;
        self.index.reload()?;
        // The first sync after an index was made anew indexes every file (its catalog was emptied).
        if !report.deferred {
            self.building.store(false, std::sync::atomic::Ordering::Relaxed);
        }
        if !report.facets_changed {
            self.reload_facets()?;
        }
        Ok(report)
    }

    /// Throws the index away and indexes every file again. Nothing changes when another process
    /// holds the index (the report says it was deferred).
    pub async fn reindex(self: &Arc<Self>) -> Result<catalog::SyncReport, JournalError> {
        let _guard = self.sync_lock.lock().await;
        let writer = match self.index.writer() {
            Ok(writer) => writer,
            Err(tantivy::TantivyError::LockFailure(..)) => {
                return Ok(catalog::SyncReport {
                    deferred: true,
                    ..catalog::SyncReport::default()
                });
            }
            Err(error) => return Err(error.into()),
        };
        // The catalog forgets first: a crash before the index is emptied leaves files the catalog
        // does not know, which the next sync indexes again (never rows naming missing documents).
        let mut tx = db::begin_write(&self.db).await?;
        sqlx::query("DELETE FROM items").execute(&mut *tx).await?;
        sqlx::query("DELETE FROM notes").execute(&mut *tx).await?;
        tx.commit().await?;
        // Every document goes in one commit, which drops the old segments whole: the files are
        // then added to an empty index, with no old copy to look up and nothing old to merge with.
        let worker = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            worker.index.clear(&writer)?;
            worker.index.commit(writer)
        })
        .await
        .map_err(|e| JournalError::Invalid(format!("the indexing task failed: {e}")))??;
        self.notes.start_over();
        let mut report = catalog::sync(self, catalog::Depth::Full, &mut prepared::Prepared::default()).await?;
        self.reload_facets()?;
        report.add(notes::sync::sync(self, catalog::Depth::Full, &mut prepared::Prepared::default()).await?);
        Ok(report)
    }
}

async fn load_signing_key(pool: &Pool) -> Result<SigningKey, JournalError> {
    let mut fresh = [0u8; 32];
    getrandom::fill(&mut fresh).map_err(|e| JournalError::Invalid(format!("no secure random source: {e}")))?;
    // Insert-if-absent, then read: two processes opening a new journal at once agree on one key.
    sqlx::query("INSERT OR IGNORE INTO server_keys (name, value) VALUES ('reference', ?)")
        .bind(fresh.to_vec())
        .execute(pool)
        .await?;
    let stored: Vec<u8> = sqlx::query_scalar("SELECT value FROM server_keys WHERE name = 'reference'")
        .fetch_one(pool)
        .await?;
    let bytes: [u8; 32] = stored.try_into().map_err(|_| {
        JournalError::Invalid("the stored reference key is damaged; delete its row in server_keys".into())
    })?;
    Ok(SigningKey::from_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index made anew says so until the first sync has filled it; one opened as it was does not.
    #[tokio::test]
    async fn a_new_index_is_building_until_the_first_sync_ends() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path()).await.unwrap();
        assert!(journal.index_building());
        journal.refresh(catalog::Depth::Quick).await.unwrap();
        assert!(!journal.index_building());
        drop(journal);
        let again = Journal::open(dir.path()).await.unwrap();
        assert!(!again.index_building(), "the index was kept");
        drop(again);
        std::fs::remove_dir_all(dir.path().join(".index")).unwrap();
        let wiped = Journal::open(dir.path()).await.unwrap();
        assert!(wiped.index_building(), "a wiped index is made anew");
    }
}
