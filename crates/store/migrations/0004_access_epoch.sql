-- The durable access epoch: counted up in the same transaction as every change to access state, so
-- a running server, which keeps verified credentials in memory, notices any change within seconds
-- even when the fast signal (the `.access-epoch` file, written after the commit) was lost.
-- Adding a key or a token needs no count (nothing cached names it yet); everything that can narrow,
-- end or rename access does. Noting when a connection was last used is not an access change.
CREATE TABLE access_epoch (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
);
INSERT INTO access_epoch (id, value) VALUES (1, 0);

CREATE TRIGGER access_epoch_connections_update AFTER UPDATE OF id, kind, label, label_key ON connections
BEGIN UPDATE access_epoch SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER access_epoch_connections_delete AFTER DELETE ON connections
BEGIN UPDATE access_epoch SET value = value + 1 WHERE id = 1; END;

CREATE TRIGGER access_epoch_keys_update AFTER UPDATE ON keys
BEGIN UPDATE access_epoch SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER access_epoch_keys_delete AFTER DELETE ON keys
BEGIN UPDATE access_epoch SET value = value + 1 WHERE id = 1; END;

CREATE TRIGGER access_epoch_grants_update AFTER UPDATE ON grants
BEGIN UPDATE access_epoch SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER access_epoch_grants_delete AFTER DELETE ON grants
BEGIN UPDATE access_epoch SET value = value + 1 WHERE id = 1; END;

CREATE TRIGGER access_epoch_grant_facets_insert AFTER INSERT ON grant_facets
BEGIN UPDATE access_epoch SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER access_epoch_grant_facets_update AFTER UPDATE ON grant_facets
BEGIN UPDATE access_epoch SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER access_epoch_grant_facets_delete AFTER DELETE ON grant_facets
BEGIN UPDATE access_epoch SET value = value + 1 WHERE id = 1; END;

CREATE TRIGGER access_epoch_oauth_grants_update AFTER UPDATE ON oauth_grants
BEGIN UPDATE access_epoch SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER access_epoch_oauth_grants_delete AFTER DELETE ON oauth_grants
BEGIN UPDATE access_epoch SET value = value + 1 WHERE id = 1; END;

CREATE TRIGGER access_epoch_oauth_tokens_update AFTER UPDATE ON oauth_tokens
BEGIN UPDATE access_epoch SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER access_epoch_oauth_tokens_delete AFTER DELETE ON oauth_tokens
BEGIN UPDATE access_epoch SET value = value + 1 WHERE id = 1; END;
