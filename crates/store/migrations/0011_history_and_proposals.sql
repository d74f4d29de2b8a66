-- The notes' history: every change an agent made to notes (in force mode, or a proposal the owner
-- accepted) and every undo of the owner, one row per change, with one version per note it touched
-- holding the note's file as it was before. Undo restores a version; the trash is the deletions.
CREATE TABLE note_changes (
    id            INTEGER PRIMARY KEY,
    at            INTEGER NOT NULL,              -- Unix seconds
    actor         TEXT NOT NULL,                 -- 'agent:<slug of the label>' or 'owner'
    connection_id TEXT,                          -- the agent's connection; NULL for the owner
    label         TEXT NOT NULL,                 -- the connection's label then ('' for the owner)
    tool          TEXT NOT NULL,                 -- the write tool, or 'revert'
    proposal_id   INTEGER,                       -- the accepted proposal it applied
    reverted      INTEGER                        -- the version an undo restored
);

CREATE TABLE note_versions (
    id          INTEGER PRIMARY KEY,
    change_id   INTEGER NOT NULL REFERENCES note_changes (id) ON DELETE CASCADE,
    path        TEXT NOT NULL,                   -- the note's path before the change (or the new note's)
    new_path    TEXT,                            -- its path after; NULL when the change deleted it
    before      BLOB,                            -- the file before; NULL when the change created it
    before_hash TEXT,
    after_hash  TEXT,                            -- NULL when the change deleted it
    size        INTEGER NOT NULL                 -- bytes of `before`, for the history's space limit
);
CREATE INDEX note_versions_by_path ON note_versions (path, id);
CREATE INDEX note_versions_by_new_path ON note_versions (new_path, id);
CREATE INDEX note_versions_by_change ON note_versions (change_id);

-- Changes agents in propose mode asked for, waiting for (or decided by) the owner. Kept after the
-- decision so that an agent learns the outcome (my_proposals); not tied to the connection's row, so
-- that a removed connection's proposals can still be reviewed.
CREATE TABLE proposals (
    id            INTEGER PRIMARY KEY,
    at            INTEGER NOT NULL,              -- Unix seconds
    connection_id TEXT NOT NULL,
    label         TEXT NOT NULL,                 -- the connection's label then
    tool          TEXT NOT NULL,
    arguments     TEXT NOT NULL,                 -- JSON, as the agent sent them
    change        TEXT NOT NULL,                 -- JSON: the checked change accepting applies
    path          TEXT NOT NULL,
    base_hash     TEXT,                          -- the note's hash when proposed; NULL: no note there
    diff          TEXT NOT NULL,                 -- unified diff of the note then and as proposed
    status        TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected')),
    decided_at    INTEGER,
    reason        TEXT NOT NULL DEFAULT '',      -- the owner's words on a rejection
    result_hash   TEXT                           -- the note's hash after an accepted proposal
);
CREATE INDEX proposals_by_connection ON proposals (connection_id, id);
CREATE INDEX proposals_pending ON proposals (id) WHERE status = 'pending';
