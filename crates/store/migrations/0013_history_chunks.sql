-- The history keeps each earlier file as content-defined chunks, each chunk stored once whatever
-- number of versions hold it: an append keeps what it added (and the chunk it ended in), not the
-- whole note again. `note_versions.before` stays for the versions recorded before this migration.
CREATE TABLE history_chunks (
    hash  BLOB PRIMARY KEY,                       -- SHA-256 of `bytes`
    bytes BLOB NOT NULL
) WITHOUT ROWID;

CREATE TABLE version_chunks (
    version_id INTEGER NOT NULL REFERENCES note_versions (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,                  -- the chunk's place in the file, from 0
    hash       BLOB NOT NULL REFERENCES history_chunks (hash),
    PRIMARY KEY (version_id, seq)
) WITHOUT ROWID;
-- Unreferenced chunks are found by hash when versions go, and a connection's budget asks whether
-- its own versions already hold a chunk.
CREATE INDEX version_chunks_by_hash ON version_chunks (hash);

-- 1: the file before the change is kept in version_chunks (and `before` is NULL).
ALTER TABLE note_versions ADD COLUMN chunked INTEGER NOT NULL DEFAULT 0;
-- The bytes this version counts against its connection's budget: the chunks it holds that none of
-- that connection's earlier versions held. `size` stays the file's length.
ALTER TABLE note_versions ADD COLUMN charged INTEGER NOT NULL DEFAULT 0;
UPDATE note_versions SET charged = size;
