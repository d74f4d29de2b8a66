-- The write mode chosen on the consent page's first stage, kept for its second (facets).
-- Only 'none' and 'propose' are ever stored here: the consent page never offers 'force'.
ALTER TABLE oauth_pending ADD COLUMN write_mode TEXT NOT NULL DEFAULT 'none';
