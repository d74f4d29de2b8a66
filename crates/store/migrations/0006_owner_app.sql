-- The owner app's second part: an optional owner passphrase (argon2id, as a PHC string; never the
-- passphrase), passphrase tries counted per sign-in link (each taken before the passphrase is
-- checked), and an index for the activity page's filters by day and its chart of calls per day.

CREATE TABLE owner_passphrase (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    phc    TEXT NOT NULL,
    set_at INTEGER NOT NULL
);

ALTER TABLE owner_links ADD COLUMN tries INTEGER NOT NULL DEFAULT 0;

CREATE INDEX audit_by_time ON audit (at);
