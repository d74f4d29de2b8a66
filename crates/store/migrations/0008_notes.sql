-- The catalog of the owner's notes: one row per markdown file of the vault (the `notes/` folder, or
-- the folder `[notes] dir` names), so that a sync can tell what changed and the server can load
-- every note's metadata at start without reading the files. Derived data: deleting the rows only
-- means the next sync reads every note again.

CREATE TABLE notes (
    path     TEXT PRIMARY KEY,   -- relative to the vault, '/'-separated
    folder   TEXT NOT NULL,      -- the path's folder ('' at the top), for syncing one folder
    mtime_ns INTEGER NOT NULL,
    size     INTEGER NOT NULL,
    meta     TEXT,               -- the parsed note (JSON) without its body; NULL when it could not be read
    error    TEXT                -- why it could not be read
);
CREATE INDEX notes_by_folder ON notes (folder);

-- Small facts about the journal's derived state, by name: `notes_vault` is the vault folder the
-- catalog of notes describes (another folder means reading every note again).
CREATE TABLE journal_state (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
