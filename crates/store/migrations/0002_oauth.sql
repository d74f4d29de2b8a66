-- The OAuth authorization server's state. Every secret (pairing codes, authorization codes, tokens,
-- the consent form's anti-forgery token) is stored only as its SHA-256 digest.

-- Registered clients: dynamic registrations (RFC 7591).
CREATE TABLE oauth_clients (
    client_id     TEXT PRIMARY KEY,
    client_name   TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,              -- JSON array of strings
    source        TEXT NOT NULL,              -- the address that registered it, for quotas
    created_at    INTEGER NOT NULL,
    last_used_at  INTEGER                     -- last authorization or token request; unused clients are pruned
);
CREATE INDEX oauth_clients_by_source ON oauth_clients (source);

-- The open pairing code of each route (one at a time; a new one replaces the old).
CREATE TABLE pairing_codes (
    route      TEXT PRIMARY KEY,
    digest     BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

-- Wrong pairing codes per source address, against the open code of a route.
CREATE TABLE pairing_failures (
    route    TEXT NOT NULL,
    source   TEXT NOT NULL,
    failures INTEGER NOT NULL,
    PRIMARY KEY (route, source)
);

-- Authorization requests waiting for the owner's decision on the consent page.
CREATE TABLE oauth_pending (
    id             TEXT PRIMARY KEY,          -- random; the consent form carries it
    csrf_digest    BLOB NOT NULL,
    client_id      TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    redirect_uri   TEXT NOT NULL,
    state          TEXT,
    code_challenge TEXT NOT NULL,
    resource       TEXT NOT NULL,
    route          TEXT NOT NULL,
    issuer         TEXT NOT NULL,
    source         TEXT NOT NULL,
    failures       INTEGER NOT NULL DEFAULT 0,
    paired         INTEGER NOT NULL DEFAULT 0, -- the pairing code matched (stage two)
    categories     TEXT NOT NULL DEFAULT '',  -- chosen at stage one, kept for stage two
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL
);

-- An OAuth connection's binding: which client, which route, until when.
CREATE TABLE oauth_grants (
    connection_id TEXT PRIMARY KEY REFERENCES connections (id) ON DELETE CASCADE,
    client_id     TEXT NOT NULL,
    route         TEXT NOT NULL,
    resource      TEXT NOT NULL,
    paired_at     INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL            -- 30 days after pairing, however often refreshed
);
CREATE INDEX oauth_grants_by_client ON oauth_grants (client_id);

-- Authorization codes: single use, 5 minutes.
CREATE TABLE oauth_codes (
    digest         BLOB PRIMARY KEY,
    connection_id  TEXT NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    client_id      TEXT NOT NULL,
    redirect_uri   TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    expires_at     INTEGER NOT NULL,
    used_at        INTEGER
);

-- Access and refresh tokens. A rotated refresh token is kept (rotated_at set) to detect its reuse.
CREATE TABLE oauth_tokens (
    digest        BLOB PRIMARY KEY,
    connection_id TEXT NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    kind          TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    rotated_at    INTEGER
);
CREATE INDEX oauth_tokens_by_connection ON oauth_tokens (connection_id, kind, created_at);
