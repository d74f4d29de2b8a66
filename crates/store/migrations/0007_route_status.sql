-- What each route beyond loopback is doing, as the running server last wrote it, for
-- `journal route list`: whether it serves, where, with which certificate, and the last thing that
-- went wrong (kept after the route recovers, with its time, so the owner can see what happened).

CREATE TABLE route_status (
    route            TEXT PRIMARY KEY,
    serving          INTEGER NOT NULL,
    addresses        TEXT NOT NULL,
    cert_issuer      TEXT,
    cert_not_after   INTEGER,
    cert_fingerprint TEXT,
    error            TEXT,
    error_at         INTEGER,
    updated_at       INTEGER NOT NULL
);
