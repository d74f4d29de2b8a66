-- The owner's sign-in to the owner app (/app on the local route). Both secrets are stored only as
-- their SHA-256 digest: a sign-in link's token (one use, minutes) and a browser session's cookie.

CREATE TABLE owner_links (
    digest     BLOB PRIMARY KEY,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

CREATE TABLE owner_sessions (
    digest     BLOB PRIMARY KEY,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
