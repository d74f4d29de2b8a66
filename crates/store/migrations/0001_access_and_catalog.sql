-- Access state, audit log and the catalog of journal files.

-- A connection is one credential holder: a minted key (kind 'key') or, later, an OAuth client grant.
CREATE TABLE connections (
    id            TEXT PRIMARY KEY,           -- UUID; memory folders and references use it
    kind          TEXT NOT NULL CHECK (kind IN ('key', 'oauth')),
    label         TEXT NOT NULL,
    label_key     TEXT NOT NULL,              -- the label folded to lowercase: labels are unique ignoring case
    created_at    INTEGER NOT NULL,           -- Unix seconds
    last_used_at  INTEGER,
    UNIQUE (kind, label_key)
);

-- Minted keys, stored only as the SHA-256 digest of the key text.
CREATE TABLE keys (
    connection_id TEXT PRIMARY KEY REFERENCES connections (id) ON DELETE CASCADE,
    digest        BLOB NOT NULL UNIQUE
);

-- What a connection may see. categories: space-separated category names.
-- whole_journal = 1: every facet; 0: only the facets in grant_facets.
CREATE TABLE grants (
    connection_id TEXT PRIMARY KEY REFERENCES connections (id) ON DELETE CASCADE,
    categories    TEXT NOT NULL DEFAULT '',
    whole_journal INTEGER NOT NULL DEFAULT 1,
    write_mode    TEXT NOT NULL DEFAULT 'none',
    generation    INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE grant_facets (
    connection_id TEXT NOT NULL REFERENCES grants (connection_id) ON DELETE CASCADE,
    facet_id      TEXT NOT NULL,
    PRIMARY KEY (connection_id, facet_id)
);

-- Every tool call, written before its result is released.
CREATE TABLE audit (
    id               INTEGER PRIMARY KEY,
    at               INTEGER NOT NULL,
    connection_id    TEXT NOT NULL,
    connection_label TEXT NOT NULL,
    tool             TEXT NOT NULL,
    arguments_sha256 TEXT NOT NULL,
    outcome          TEXT NOT NULL CHECK (outcome IN ('served', 'empty', 'refused', 'error')),
    detail           TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_by_connection ON audit (connection_id, id);

-- Server secrets that must survive restarts (the key that signs references).
CREATE TABLE server_keys (
    name  TEXT PRIMARY KEY,
    value BLOB NOT NULL
);

-- The catalog: one row per content file the index holds, so a sync can tell what changed.
CREATE TABLE items (
    path       TEXT PRIMARY KEY,              -- relative to the journal folder, '/'-separated
    kind       TEXT NOT NULL CHECK (kind IN ('facet', 'transcript', 'entity')),
    day        INTEGER,                       -- YYYYMMDD, for transcripts
    start      INTEGER,                       -- seconds after midnight, for transcripts
    title      TEXT NOT NULL,
    mtime_ns   INTEGER NOT NULL,
    size       INTEGER NOT NULL,
    error      TEXT                           -- why the file could not be read, when it could not
);
CREATE INDEX items_by_kind_day ON items (kind, day DESC, start DESC);

-- Facet names an item is filed under, as its file names them (a facet's own file: its name).
CREATE TABLE item_facets (
    path  TEXT NOT NULL REFERENCES items (path) ON DELETE CASCADE,
    facet TEXT NOT NULL,
    PRIMARY KEY (path, facet)
);
CREATE INDEX item_facets_by_facet ON item_facets (facet);
