//! The history's store of earlier files (`history_chunks`, `version_chunks` in `journal.db`): a
//! file is cut into content-defined chunks (FastCDC), and each chunk is stored once, by its
//! SHA-256, whatever number of versions hold it.
//!
//! Content-defined cuts move with the text: after an append, every chunk of the note before it is
//! cut the same way again except the last, so keeping the note as it was after the append costs
//! what was appended and one chunk, not the whole note again; an edit in the middle costs the
//! chunks around it. This is what makes a per-connection budget fair to an agent that appends to
//! a long note, and what keeps churn from filling the disk.
//!
//! What a version *costs* its connection is counted against that connection's own versions only
//! (`charge`): a chunk another author's version already stored is stored once but still charged
//! here, so the budget can never tell an agent whether some text (a hidden note's, say) was ever in
//! the history.

use std::collections::HashSet;

use sha2::{Digest, Sha256};
use sqlx::SqliteConnection;

/// Chunk sizes: notes are mostly a few KiB, so chunks are small enough that an edit costs little,
/// and large enough that a chunk's row is mostly text.
const MIN_CHUNK: usize = 1024;
const AVERAGE_CHUNK: usize = 4096;
const MAX_CHUNK: usize = 16 * 1024;

/// One chunk of a file: its hash and where it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub hash: [u8; 32],
    pub start: usize,
    pub len: usize,
}

/// Cuts a file into its chunks, in order. The empty file has none.
pub fn cut(bytes: &[u8]) -> Vec<Cut> {
    fastcdc::v2020::FastCDC::new(bytes, MIN_CHUNK, AVERAGE_CHUNK, MAX_CHUNK)
        .map(|chunk| Cut {
            hash: Sha256::digest(&bytes[chunk.offset..chunk.offset + chunk.length]).into(),
            start: chunk.offset,
            len: chunk.length,
        })
        .collect()
}

/// Stores a file as the chunks of version `version_id` (in the caller's transaction). Answers the
/// bytes it charges the connection (`None`: the owner, charged nothing): the chunks that none of
/// that connection's versions held before, each counted once.
pub async fn store(
    tx: &mut SqliteConnection,
    version_id: i64,
    bytes: &[u8],
    connection_id: Option<&str>,
    charged_in_change: &mut HashSet<[u8; 32]>,
) -> Result<i64, sqlx::Error> {
    let mut charged = 0;
    for (seq, chunk) in cut(bytes).into_iter().enumerate() {
        if let Some(connection_id) = connection_id
            && charged_in_change.insert(chunk.hash)
            && !held_by(tx, connection_id, &chunk.hash).await?
        {
            charged += chunk.len as i64;
        }
        sqlx::query("INSERT OR IGNORE INTO history_chunks (hash, bytes) VALUES (?, ?)")
            .bind(&chunk.hash[..])
            .bind(&bytes[chunk.start..chunk.start + chunk.len])
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO version_chunks (version_id, seq, hash) VALUES (?, ?, ?)")
            .bind(version_id)
            .bind(seq as i64)
            .bind(&chunk.hash[..])
            .execute(&mut *tx)
            .await?;
    }
    Ok(charged)
}

/// Whether a version of this connection already holds the chunk.
async fn held_by(tx: &mut SqliteConnection, connection_id: &str, hash: &[u8; 32]) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM version_chunks k JOIN note_versions v ON v.id = k.version_id
                        JOIN note_changes c ON c.id = v.change_id
                        WHERE k.hash = ? AND c.connection_id = ?)",
    )
    .bind(&hash[..])
    .bind(connection_id)
    .fetch_one(&mut *tx)
    .await
}

/// The file a version keeps in chunks, put back together and checked against the hash recorded
/// with it, so that a damaged history is an error and never a wrong undo.
pub async fn load(
    db: &mut SqliteConnection,
    version_id: i64,
    expected_hash: Option<&str>,
) -> Result<Vec<u8>, sqlx::Error> {
    let parts: Vec<Vec<u8>> = sqlx::query_scalar(
        "SELECT c.bytes FROM version_chunks k JOIN history_chunks c ON c.hash = k.hash
         WHERE k.version_id = ? ORDER BY k.seq",
    )
    .bind(version_id)
    .fetch_all(&mut *db)
    .await?;
    let bytes = parts.concat();
    if expected_hash.is_some_and(|hash| hash != super::note::hash_hex(&bytes)) {
        return Err(sqlx::Error::Decode(
            format!("version {version_id} in the notes' history is damaged: its file does not match its hash").into(),
        ));
    }
    Ok(bytes)
}

/// Drops the chunks no version holds any more (after versions went).
pub async fn drop_unheld(db: &mut SqliteConnection) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query(
        "DELETE FROM history_chunks WHERE NOT EXISTS (SELECT 1 FROM version_chunks k WHERE k.hash = history_chunks.hash)",
    )
    .execute(db)
    .await?
    .rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(seed: u64, len: usize) -> Vec<u8> {
        // Varied printable bytes, so that cut points fall as they would in prose.
        let mut state = seed;
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                b' ' + ((state >> 33) % 94) as u8
            })
            .collect()
    }

    #[test]
    fn chunks_cover_the_file_in_order() {
        let bytes = text(1, 100_000);
        let cuts = cut(&bytes);
        assert!(cuts.len() > 100_000 / MAX_CHUNK, "{}", cuts.len());
        let mut at = 0;
        for chunk in &cuts {
            assert_eq!(chunk.start, at);
            assert!(chunk.len <= MAX_CHUNK);
            at += chunk.len;
        }
        assert_eq!(at, bytes.len());
        assert!(cut(b"").is_empty());
        assert_eq!(cut(b"short").len(), 1);
    }

    /// After an append, all chunks but the last of the note before are cut again the same way.
    #[test]
    fn an_append_shares_all_but_the_last_chunk() {
        let before = text(2, 60_000);
        let mut after = before.clone();
        after.extend_from_slice(&text(3, 5_000));
        let old: HashSet<_> = cut(&before).into_iter().map(|c| c.hash).collect();
        let new_bytes: usize = cut(&after)
            .iter()
            .filter(|c| !old.contains(&c.hash))
            .map(|c| c.len)
            .sum();
        assert!(new_bytes <= 5_000 + MAX_CHUNK, "{new_bytes}");
        assert!(new_bytes >= 5_000, "{new_bytes}");
    }

    #[test]
    fn an_edit_in_the_middle_costs_the_chunks_around_it() {
        let before = text(4, 80_000);
        let mut after = before.clone();
        after[40_000] = b'#';
        let old: HashSet<_> = cut(&before).into_iter().map(|c| c.hash).collect();
        let new_bytes: usize = cut(&after)
            .iter()
            .filter(|c| !old.contains(&c.hash))
            .map(|c| c.len)
            .sum();
        assert!(new_bytes <= 2 * MAX_CHUNK, "{new_bytes}");
    }
}
