-- Clients identified by a Client ID Metadata Document (an https URL as client_id) are cached in
-- oauth_clients like registered ones, and fetched again when their document's cache lifetime ends.
ALTER TABLE oauth_clients ADD COLUMN kind TEXT NOT NULL DEFAULT 'registered' CHECK (kind IN ('registered', 'metadata'));
ALTER TABLE oauth_clients ADD COLUMN refresh_after INTEGER;
